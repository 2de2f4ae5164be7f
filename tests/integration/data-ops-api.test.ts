// The data operations through the app: legacy REST/SSE shapes of spec sections 3 and 7, the tRPC
// router, and (on PostgreSQL) two app instances sharing progress through LISTEN/NOTIFY.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { testBackend } from "../helpers/db.ts";
import { FIXTURE_DIR } from "../helpers/pipeline.ts";

/** The Metrics Tables group, in the order the calculation modules fill them. */
const METRICS_TABLES = [
  "product_metrics",
  "product_stock_history",
  "vendor_lead_times",
  "product_elasticities",
  "category_elasticities",
  "product_forecasts",
  "product_forecast_accuracy",
  "brand_metrics",
  "vendor_metrics",
  "category_metrics",
  "stock_value_weekly",
  "stock_aging",
  "receipt_months",
  "lost_sales",
  "sales_daily",
  "product_sales_weekly",
  "product_search",
  "product_search_rows",
  "product_search_keys",
];

/** Reads server-sent events with fetch (Node 20 has no EventSource) until `until` says stop. */
async function readEvents(
  url: string,
  headers: Record<string, string>,
  until: (events: Record<string, unknown>[]) => boolean,
  timeoutMs = 15_000,
): Promise<{ events: Record<string, unknown>[]; contentType: string | null }> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), timeoutMs);
  const res = await fetch(url, { headers, signal: ac.signal });
  const events: Record<string, unknown>[] = [];
  let buffer = "";
  try {
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let idx = buffer.indexOf("\n\n");
      while (idx >= 0) {
        const block = buffer.slice(0, idx);
        buffer = buffer.slice(idx + 2);
        const data = block
          .split("\n")
          .filter((l) => l.startsWith("data: "))
          .map((l) => l.slice(6))
          .join("\n");
        if (data) events.push(JSON.parse(data));
        idx = buffer.indexOf("\n\n");
      }
      if (until(events)) break;
    }
  } catch (err) {
    if (!ac.signal.aborted) throw err;
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
  return { events, contentType: res.headers.get("content-type") };
}

describe(`data management REST and SSE (${testBackend})`, () => {
  let t: TestApp;
  let auth: Record<string, string>;
  beforeAll(async () => {
    t = await startTestApp({ env: { SOURCE_DIR: FIXTURE_DIR } });
    await t.createUser("operator", ["access:settings", "settings:data_management"]);
    auth = { authorization: `Bearer ${(await t.login("operator")).token}` };
  });
  afterAll(() => t.close());

  const get = async (path: string) => {
    const res = await fetch(`${t.url}${path}`, { headers: auth });
    expect(res.status, path).toBe(200);
    return res.json();
  };

  it("before any run: empty histories and zero counts in three groups", async () => {
    expect(await get("/csv/status")).toEqual({ active: false, progress: null });
    expect(await get("/csv/history/import")).toEqual([]);
    expect(await get("/csv/history/calculate")).toEqual([]);
    expect(await get("/csv/status/tables")).toEqual([]);
    expect(await get("/csv/status/modules")).toEqual([]);
    const counts = await get("/csv/status/table-counts");
    expect(Object.keys(counts)).toEqual(["core", "metrics", "config"]);
    expect(counts.core.map((c: { table_name: string }) => c.table_name)).toContain("products");
    expect(counts.metrics.map((c: { table_name: string }) => c.table_name)).toEqual(METRICS_TABLES);
    expect(counts.metrics.every((c: { count: number }) => c.count === 0)).toBe(true);
    expect(counts.config.find((c: { table_name: string }) => c.table_name === "users").count).toBe(2);
  });

  it("POST /csv/full-update streams progress over SSE and fills history", async () => {
    const stream = readEvents(`${t.url}/csv/update/progress`, auth, (ev) =>
      ev.some((e) => e.status === "complete"),
    );
    await new Promise((r) => setTimeout(r, 200));
    const start = await fetch(`${t.url}/csv/full-update`, { method: "POST", headers: auth });
    expect(start.status).toBe(200);
    expect(await start.json()).toMatchObject({ success: true, run_id: expect.any(Number) });
    const { events, contentType } = await stream;
    expect(contentType).toMatch(/text\/event-stream/);
    const running = events.find(
      (e) => e.status === "running" && String(e.operation).startsWith("Load products.csv"),
    );
    expect(running).toMatchObject({
      type: "update",
      error: null,
      progress: { status: "running", type: "update" },
    });
    const last = events.at(-1)!;
    expect(last).toMatchObject({
      status: "complete",
      operation: "Full update complete",
      type: "update",
      error: null,
      progress: { status: "complete", operation: "Full update complete" },
    });

    const imports = await get("/csv/history/import");
    expect(imports).toHaveLength(1);
    expect(imports[0]).toMatchObject({
      status: "completed",
      records_added: 38,
      records_updated: 0,
      records_deleted: 0,
      records_skipped: 0,
      total_processed: 38,
      error_message: null,
      duration_minutes: expect.any(Number),
      start_time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      end_time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const detail = imports[0].additional_info;
    expect(detail.completed_steps[0]).toEqual({
      name: "Load brands.csv",
      duration: expect.any(Number),
      rowsAffected: 2,
      status: "completed",
    });
    expect(detail.details.tables.products).toEqual({
      added: 3,
      updated: 0,
      deleted: 0,
      skipped: 0,
      total: 3,
    });
    expect(typeof detail.step_timings["Load brands.csv"]).toBe("number");
    const calcs = await get("/csv/history/calculate");
    expect(calcs[0]).toMatchObject({
      status: "completed",
      processed_products: 3,
      total_products: 3,
      total_orders: 8,
    });
    expect((await get("/csv/status/tables")).map((r: { table_name: string }) => r.table_name)).toContain(
      "products",
    );
    expect((await get("/csv/status/modules")).map((m: { module_name: string }) => m.module_name)).toEqual([
      "aggregates",
      "analytics_figures",
      "elasticity",
      "forecast",
      "forecast_snapshots",
      "lead_times",
      "planning",
      "product_metrics",
      "product_search",
      "sales_series",
      "stock_history",
      "stock_series",
      "xyz",
    ]);
    const counts = await get("/csv/status/table-counts");
    expect(counts.core.find((c: { table_name: string }) => c.table_name === "order_lines")).toEqual({
      table_name: "order_lines",
      count: 8,
    });
    expect(await get("/csv/status")).toMatchObject({
      active: false,
      progress: { status: "complete", type: "update" },
    });
  });

  it("a new SSE subscriber first receives the current state; /api/csv/* serves the same", async () => {
    const { events } = await readEvents(`${t.url}/api/csv/update/progress`, auth, (ev) => ev.length > 0);
    expect(events[0]).toMatchObject({ status: "complete", operation: "Full update complete" });
    expect(await get("/api/csv/history/import")).toHaveLength(1);
  });

  it("cancel with nothing running answers 409; a bad type answers 400 naming it", async () => {
    const none = await fetch(`${t.url}/csv/cancel?type=reset`, { method: "POST", headers: auth });
    expect(none.status).toBe(409);
    expect(await none.json()).toEqual({
      error: "No full reset is running",
      message: "No full reset is running",
    });
    const bad = await fetch(`${t.url}/csv/cancel?type=everything`, { method: "POST", headers: auth });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatch(/^type: /);
  });

  it("the tRPC router answers the same figures", async () => {
    const res = await fetch(`${t.url}/trpc/dataOps.tableCounts`, { headers: auth });
    const counts = (await res.json()).result.data.json;
    expect(counts.metrics.map((c: { table_name: string }) => c.table_name)).toEqual(METRICS_TABLES);
    const count = (name: string) =>
      counts.metrics.find((c: { table_name: string }) => c.table_name === name).count;
    expect(count("product_metrics")).toBe(3);
    expect(count("product_search")).toBe(3);
    expect(count("product_search_rows")).toBe(3);
    expect(count("product_search_keys")).toBe(0);
  });
});

describe("two concurrent starts through the API", () => {
  it("one starts, the other answers 409", async () => {
    const t = await startTestApp({ env: { SOURCE_DIR: FIXTURE_DIR, PIPELINE_STEP_DELAY_MS: "200" } });
    try {
      const headers = { authorization: `Bearer ${(await t.login("admin")).token}` };
      const [a, b] = await Promise.all([
        fetch(`${t.url}/csv/full-update`, { method: "POST", headers }),
        fetch(`${t.url}/csv/full-reset`, { method: "POST", headers }),
      ]);
      expect([a.status, b.status].sort()).toEqual([200, 409]);
      const refused = a.status === 409 ? a : b;
      expect((await refused.json()).error).toMatch(/already running/);
      await fetch(`${t.url}/csv/cancel`, { method: "POST", headers });
      await t.app.services.dataOps.idle();
    } finally {
      await t.close();
    }
  });
});

describe.runIf(testBackend === "postgres")("two app instances on one PostgreSQL", () => {
  it("a run started on one is seen, and can be cancelled, from the other", async () => {
    const a = await startTestApp({ env: { SOURCE_DIR: FIXTURE_DIR, PIPELINE_STEP_DELAY_MS: "250" } });
    const otherDb = await a.tdb.openAnother();
    const b = await startTestApp({ env: { SOURCE_DIR: FIXTURE_DIR }, tdb: { ...a.tdb, db: otherDb } });
    try {
      const headers = { authorization: `Bearer ${(await a.login("admin")).token}` };
      const seen = readEvents(`${b.url}/csv/reset/progress`, headers, (ev) =>
        ev.some((e) => e.status === "cancelled"),
      );
      await new Promise((r) => setTimeout(r, 200));
      expect((await fetch(`${a.url}/csv/full-reset`, { method: "POST", headers })).status).toBe(200);
      // B sees the run as active and refuses a second one.
      await new Promise((r) => setTimeout(r, 400));
      expect(await (await fetch(`${b.url}/csv/status`, { headers })).json()).toMatchObject({
        active: true,
        progress: { type: "reset", status: "running" },
      });
      expect((await fetch(`${b.url}/csv/full-update`, { method: "POST", headers })).status).toBe(409);
      // Cancelling on B stops the run on A.
      expect((await fetch(`${b.url}/csv/cancel?type=reset`, { method: "POST", headers })).status).toBe(200);
      const { events } = await seen;
      expect(events.some((e) => e.status === "running")).toBe(true);
      expect(events.at(-1)).toMatchObject({ status: "cancelled", operation: "Full reset cancelled" });
      await a.app.services.dataOps.idle();
    } finally {
      await b.app.close();
      await a.close();
    }
  });
});
