// XYZ classes (module xyz, docs/metrics.md §9) on a hand-worked fixture, calculated by a real Full
// Reset as of 2026-06-30 12:00 (D0): weeks of 7 days ending on D0 (week k = D0 − 7k − 6 … D0 − 7k),
// only full weeks since the life start, weeks out of stock on 4 days or more left out; CV = sample
// standard deviation ÷ mean of the weekly units. Then the thresholds from the global settings, and
// the Products list's xyz filter.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SqlConnection } from "../../server/db/database.ts";
import { planningModule } from "../../server/jobs/planning/planning.ts";
import { stockHistoryModule } from "../../server/jobs/planning/stock-history.ts";
import { xyzModule } from "../../server/jobs/planning/xyz.ts";
import type { ProductMetricsPage } from "../../shared/metrics.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { writeSource } from "../helpers/csv-source.ts";
import { createTestDatabase, rolledBack, type TestDatabase } from "../helpers/db.ts";
import { FIXTURE_AS_OF, FIXTURE_DIR, type PipelineHarness, pipeline } from "../helpers/pipeline.ts";

const D0 = Date.parse("2026-06-30T00:00:00Z");
/** The day `back` days before D0, at 10:00 UTC. */
const day = (back: number) => `${new Date(D0 - back * 86_400_000).toISOString().slice(0, 10)}T10:00:00Z`;
const product = (pid: number, title: string, stock: number, created: string) =>
  `${pid},${title},X-${pid},,1,10,,,2.00,,1.00,${stock}${",".repeat(13)},${created}T00:00:00Z,,`;

// 2001 "steady": life from 2026-05-05 (D0 − 56: 57 days, 8 full weeks), plenty of stock; units per
//   week k = 0 … 7: 10 12 8 10 11 9 10 10 → mean 10, Σ(x − 10)² = 10, s = √(10/7) → CV 0.1195: X.
// 2002 "variable": same life, 2 6 2 6 2 6 2 6 → mean 4, Σ(x − 4)² = 32, s = √(32/7) → CV 0.5345: Y.
// 2003 "runs out": same life, 5 units on the first day of weeks 7 … 2 and none after, 0 on hand:
//   from that last sale on it is out of stock, so week 2 (out on its 6 other days) and weeks 1 and 0
//   are left out; weeks 3 … 7 sold 5 each → n = 5, CV 0: X.
// 2004 "young": life from 2026-06-10 (21 days: 3 full weeks), sales each week → fewer than 4: none.
// 2005 "never sold": life from 2026-01-01, stock 10, no sales → 25 weeks, no demand: none.
// 1001 (the fixture's): in stock all year (100 on hand, 50 received on 2026-05-14), a life of over a
//   year: 52 weeks, units 3 (k 0), 2 (k 2), 5 (k 8), 10 (k 30) and 0 else → Σx = 20, Σx² = 138,
//   s² = (138 − 20²/52) / 51 = 2.555053, mean 0.384615 → CV 4.1560: Z.
// 1002 (the fixture's): 0 on hand, 1 sold on 2026-06-29 after 10 were received on 06-20, below 0
//   before: weeks 0 (out 1 day) and 1 (out 3 days) count, every older one is out → n = 2: none.
const lines: string[] = [];
let id = 100;
const sale = (pid: number, back: number, qty: number) =>
  lines.push(`${id++},SO-${id},${pid},${day(back)},${qty},2.00,0,completed`);
for (const [k, q] of [10, 12, 8, 10, 11, 9, 10, 10].entries()) sale(2001, 7 * k + 3, q);
for (const [k, q] of [2, 6, 2, 6, 2, 6, 2, 6].entries()) sale(2002, 7 * k + 3, q);
for (let k = 2; k <= 7; k++) sale(2003, 7 * k + 6, 5);
for (let k = 0; k <= 2; k++) sale(2004, 7 * k + 1, 3 + k);

describe("XYZ classes", () => {
  let tdb: TestDatabase;
  let t: TestApp;
  let p: PipelineHarness;
  let admin: string;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    t = await startTestApp({ tdb });
    admin = (await t.login("admin")).token;
    const read = (f: string) => fs.readFileSync(path.join(FIXTURE_DIR, f), "utf8").trimEnd().split("\n");
    const dir = writeSource({
      "products.csv": [
        ...read("products.csv"),
        product(2001, "Steady", 500, "2026-05-05"),
        product(2002, "Variable", 500, "2026-05-05"),
        product(2003, "Runs out", 0, "2026-05-05"),
        product(2004, "Young", 500, "2026-06-10"),
        product(2005, "Never sold", 10, "2026-01-01"),
      ],
      "order_lines.csv": [...read("order_lines.csv"), ...lines],
    });
    p = await pipeline(tdb.db, () => dir);
    const end = await p.run("reset");
    expect(end.status, JSON.stringify(end)).toBe("complete");
  }, 90_000);
  afterAll(async () => {
    await p?.close();
    await t?.close();
  });

  const stored = () =>
    tdb.db.prisma.$queryRawUnsafe<
      { pid: number; xyz_class: string | null; xyz_cv: number | null; xyz_weeks: number }[]
    >("SELECT pid, xyz_class, xyz_cv::float8 AS xyz_cv, xyz_weeks FROM product_metrics ORDER BY pid");
  const row = (pid: number, xyz_class: string | null, xyz_cv: number | null, xyz_weeks: number) => ({
    pid,
    xyz_class,
    xyz_cv,
    xyz_weeks,
  });
  const cv = (sxx: number, sx: number, n: number) =>
    Math.round((Math.sqrt((sxx - (sx * sx) / n) / (n - 1)) / (sx / n)) * 10_000) / 10_000;

  it("stores each product's class, coefficient and in-stock weeks", async () => {
    expect(await stored()).toEqual([
      row(1001, "Z", cv(138, 20, 52), 52),
      row(1002, null, null, 2),
      // 1003 is discontinued but still merchandise: life since 2024, its one sale 2024-07-01 is older.
      row(1003, null, null, 52),
      row(2001, "X", 0.1195, 8),
      row(2002, "Y", 0.5345, 8),
      row(2003, "X", 0, 5),
      row(2004, null, null, 3),
      row(2005, null, null, 25),
    ]);
    expect(cv(138, 20, 52)).toBe(4.156);
  });

  it("filters the Products list by class", async () => {
    const list = async (input: object) => {
      const res = await t.app.inject({
        url: `/trpc/metrics.products?input=${encodeURIComponent(JSON.stringify({ json: input }))}`,
        headers: { authorization: `Bearer ${admin}` },
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().result.data.json as ProductMetricsPage;
    };
    const x = await list({ xyz: "X", sort: "title", dir: "asc" });
    expect(x.rows.map((r) => [r.pid, r.xyz_class])).toEqual([
      [2003, "X"],
      [2001, "X"],
    ]);
    expect(x.total).toBe(2);
    expect((await list({ xyz: "Z" })).rows.map((r) => r.pid)).toEqual([1001]);
    const bad = await t.app.inject({
      url: `/trpc/metrics.products?input=${encodeURIComponent(JSON.stringify({ json: { xyz: "W" } }))}`,
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain("xyz");
  });

  it("reaches product_metrics through module planning's UPDATE, also without stock_history and by a Full Update", async () => {
    const before = await stored();
    const xyzColumns = (c: SqlConnection) =>
      c.query<{ pid: number; v: string }>(
        "SELECT pid, concat_ws(' ', xyz_class, xyz_cv, xyz_weeks) AS v FROM product_metrics ORDER BY pid",
      );
    const conn = await tdb.db.connect();
    try {
      const expected = await xyzColumns(conn);
      expect(expected.map((r) => r.v)).toContain("Z 4.1560 52");
      // Wrong values first, so only what the modules write shows.
      const spoil = "UPDATE product_metrics SET xyz_class = 'Y', xyz_cv = 9, xyz_weeks = 99";
      const spoilt = expected.map((r) => ({ pid: r.pid, v: "Y 9.0000 99" }));
      const run = (tx: SqlConnection, modules: { run: typeof xyzModule.run }[]) =>
        modules.reduce<Promise<unknown>>(
          (p, m) => p.then(() => m.run({ conn: tx, asOf: FIXTURE_AS_OF })),
          Promise.resolve(),
        );
      // As in CALC_MODULES: the life start from stock_history's figures, written by planning.
      const inOrder = await rolledBack(conn, async (tx) => {
        await tx.exec(spoil);
        await run(tx, [stockHistoryModule, xyzModule]);
        const beforePlanning = await xyzColumns(tx);
        await run(tx, [planningModule]);
        return { beforePlanning, after: await xyzColumns(tx) };
      });
      expect(inOrder.beforePlanning).toEqual(spoilt);
      expect(inOrder.after).toEqual(expected);
      // Without stock_history in the transaction: the life start as stored.
      expect(
        await rolledBack(conn, async (tx) => {
          await tx.exec(spoil);
          await run(tx, [xyzModule, planningModule]);
          return xyzColumns(tx);
        }),
      ).toEqual(expected);
      // Planning alone writes no XYZ figures; products xyz does not figure (not merchandise) keep theirs.
      expect(
        await rolledBack(conn, async (tx) => {
          await tx.exec(spoil);
          await run(tx, [planningModule]);
          return xyzColumns(tx);
        }),
      ).toEqual(spoilt);
      expect(
        await rolledBack(conn, async (tx) => {
          await tx.exec(spoil);
          await tx.exec("UPDATE products SET kind = 'service' WHERE pid = 2001");
          await run(tx, [stockHistoryModule, xyzModule, planningModule]);
          return xyzColumns(tx);
        }),
      ).toEqual(expected.map((r) => (r.pid === 2001 ? { pid: 2001, v: "Y 9.0000 99" } : r)));
    } finally {
      await conn.release();
    }
    const end = await p.run("update");
    expect(end.status, JSON.stringify(end)).toBe("complete");
    expect(await stored()).toEqual(before);
  }, 90_000);

  it("takes the thresholds from the global settings (checked: X ≤ Y)", async () => {
    const put = (values: Record<string, number>) =>
      t.app.inject({
        method: "PUT",
        url: "/config/global",
        headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
        payload: Object.entries(values).map(([setting_key, setting_value]) => ({
          setting_key,
          setting_value,
        })),
      });
    const wrong = await put({ xyz_x_threshold: 2, xyz_y_threshold: 1 });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.body).toContain("X threshold must not exceed Y threshold");
    expect((await put({ xyz_y_threshold: 11 })).statusCode).toBe(400);
    const ok = await put({ xyz_x_threshold: 0.1, xyz_y_threshold: 5 });
    expect(ok.statusCode, ok.body).toBe(200);
    const end = await p.run("reset");
    expect(end.status).toBe("complete");
    const classes = Object.fromEntries((await stored()).map((r) => [r.pid, r.xyz_class]));
    expect(classes).toMatchObject({ 1001: "Y", 2001: "Y", 2002: "Y", 2003: "X" });
  }, 90_000);
});
