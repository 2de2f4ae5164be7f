// Global settings have ranges (docs/api.md "Forecasting configuration"). A value stored out of range
// before the ranges were checked stays readable so it can be fixed, the screens that read it keep
// working, and a run refuses to start on it, naming the key and its range, without changing anything.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { testBackend } from "../helpers/db.ts";
import { FIXTURE_DIR, type PipelineHarness, pipeline } from "../helpers/pipeline.ts";

describe(`a global setting stored out of range (${testBackend})`, () => {
  let t: TestApp;
  let p: PipelineHarness;
  let auth: Record<string, string>;
  beforeAll(async () => {
    t = await startTestApp();
    auth = { authorization: `Bearer ${(await t.login("admin")).token}` };
    p = await pipeline(t.tdb.db, () => FIXTURE_DIR);
    expect((await p.run("reset")).status).toBe("complete");
  });
  afterAll(async () => {
    await p.close();
    await t.close();
  });

  const get = (url: string) => t.app.inject({ method: "GET", url, headers: auth });

  it("is refused by PUT /config/global with the key and its range", async () => {
    for (const value of [2147483648, 1e308, "1e308"]) {
      const res = await t.app.inject({
        method: "PUT",
        url: "/config/global",
        headers: auth,
        payload: [{ setting_key: "default_lead_time_days", setting_value: value }],
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toBe(
        "default_lead_time_days: must be a whole number of days from 1 to 3650",
      );
    }
  });

  it("stays readable, keeps the screens working, and stops a run before it changes anything", async () => {
    // As a database written before ranges were checked would hold it.
    await t.tdb.db.prisma.$executeRaw`
      INSERT INTO settings_global (setting_key, setting_value) VALUES ('default_lead_time_days', '2147483648')
      ON CONFLICT (setting_key) DO UPDATE SET setting_value = EXCLUDED.setting_value`;
    const global = await get("/config/global");
    expect(global.statusCode).toBe(200);
    expect(global.json()).toContainEqual(
      expect.objectContaining({ setting_key: "default_lead_time_days", setting_value: "2147483648" }),
    );
    const products = await get("/config/products?pageSize=5");
    expect(products.statusCode).toBe(200);
    const explain = await get(`/api/products/${products.json().items[0].pid}/metrics/explain`);
    expect(explain.statusCode).toBe(200);

    const metricsBefore = await t.tdb.db.prisma.productMetrics.findMany({
      select: { pid: true, calculatedAt: true },
      orderBy: { pid: "asc" },
    });
    const end = await p.run("update");
    expect(end.status).toBe("error");
    expect(end.error).toBe(
      'Global setting default_lead_time_days is "2147483648": it must be a whole number of days from 1 to 3650. ' +
        "Fix it under Settings → Global Settings, then run again.",
    );
    expect(
      await t.tdb.db.prisma.productMetrics.findMany({
        select: { pid: true, calculatedAt: true },
        orderBy: { pid: "asc" },
      }),
    ).toEqual(metricsBefore);

    // Fixed through the API, the next run works.
    const fixed = await t.app.inject({
      method: "PUT",
      url: "/config/global",
      headers: auth,
      payload: [{ setting_key: "default_lead_time_days", setting_value: 21 }],
    });
    expect(fixed.statusCode).toBe(200);
    expect((await p.run("update")).status).toBe("complete");
  });
});
