// Module stock_series streams the stock runs (product_stock_history) out of the database and adds
// their changes up per week in the app (server/jobs/series.ts). Its answer must be exactly what one
// grouped SQL statement over the same runs gives: that statement (the module's earlier
// implementation, GROUPING SETS over the runs' changes) is kept here as the oracle, and both are
// compared row by row on generated demo data with the cases demo data lacks added: a product
// without a cost price, non-merchandise products, a product in no category, a product of class A
// with stock at 0, and a value large enough that its sums leave the doubles' exact integers.
// In a run, stock_series reads the runs module stock_history kept in memory (RunShared) instead of
// the table: the second case checks that those give the oracle's rows too.
// (The hand-worked figures are in dashboard.test.ts and analytics.test.ts.)
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateDemoData } from "../../scripts/lib/demo-data.ts";
import type { SqlConnection } from "../../server/db/database.ts";
import { RunShared } from "../../server/jobs/order-lines-pass.ts";
import { stockHistoryModule } from "../../server/jobs/planning/stock-history.ts";
import { ROOT_SETS_SQL, stockSeriesModule } from "../../server/jobs/series.ts";
import { isMerchandiseSql } from "../../shared/metrics.ts";
import { createTestDatabase, rolledBack, type TestDatabase, testBackend } from "../helpers/db.ts";
import { type PipelineHarness, pipeline } from "../helpers/pipeline.ts";

const AS_OF = new Date("2026-06-30T23:59:59Z");
const D0 = "2026-06-30";

type Row = Record<string, string | number>;

const READ = `SELECT dim, key, to_char(week_end, 'YYYY-MM-DD') AS week_end, value_cost::text AS value_cost,
  units, in_stock_a, a_products`;

/** The same rows from the module's earlier grouped SQL statement (the oracle). */
async function oracle(tx: SqlConnection): Promise<Row[]> {
  const week = (day: string) => `GREATEST((${day} - ($1::date - 364) + 6) / 7, 0)`;
  // The products' top-level category sets, as the module makes them (unchanged by its rewrite).
  await tx.exec(ROOT_SETS_SQL("or"));
  return tx.query<Row>(
    `WITH changes AS (
       SELECT h.pid, ${week("h.valid_from")} AS w, GREATEST(h.stock, 0) AS units, (h.stock > 0)::int AS in_stock, 1 AS alive
       FROM product_stock_history h
       UNION ALL
       SELECT h.pid, ${week("(h.valid_to + 1)")}, -GREATEST(h.stock, 0), -(h.stock > 0)::int, -1
       FROM product_stock_history h WHERE h.valid_to < $1::date
     ),
     grouped AS (
       SELECT c.w, r.rs, GROUPING(r.rs) AS g, SUM(c.units) AS units, COALESCE(SUM(c.units * p.cost_m), 0) AS value_m,
         COALESCE(SUM(c.in_stock) FILTER (WHERE m.abc_class = 'A'), 0) AS in_stock_a,
         COALESCE(SUM(c.alive) FILTER (WHERE m.abc_class = 'A'), 0) AS a_products
       FROM changes c
       JOIN (SELECT pid, kind, (cost_price * 10000)::int8 AS cost_m FROM products) p ON p.pid = c.pid
       LEFT JOIN product_metrics m ON m.pid = c.pid
       LEFT JOIN or_proots r ON r.pid = c.pid
       WHERE c.w <= 52 AND ${isMerchandiseSql("p")}
       GROUP BY GROUPING SETS ((c.w), (c.w, r.rs))
     ),
     per_week AS (
       SELECT 'total' AS dim, 0 AS key, w, units, value_m, in_stock_a, a_products FROM grouped WHERE g = 1
       UNION ALL
       SELECT 'category', mb.root_id, x.w, SUM(x.units), SUM(x.value_m), 0, 0
       FROM grouped x JOIN or_members mb ON mb.rs = x.rs
       WHERE x.g = 0
       GROUP BY mb.root_id, x.w
     ),
     keys AS (SELECT 'total' AS dim, 0 AS key UNION SELECT dim, key FROM per_week),
     series (dim, key, week_end, value_cost, units, in_stock_a, a_products) AS (
       SELECT k.dim, k.key, $1::date - 7 * (52 - g.w),
         round((SUM(COALESCE(x.value_m, 0)) OVER run)::numeric / 10000, 2)::numeric(16, 2), (SUM(COALESCE(x.units, 0)) OVER run)::int,
         (SUM(COALESCE(x.in_stock_a, 0)) OVER run)::int, (SUM(COALESCE(x.a_products, 0)) OVER run)::int
       FROM keys k CROSS JOIN generate_series(0, 52) AS g(w)
       LEFT JOIN per_week x ON x.dim = k.dim AND x.key = k.key AND x.w = g.w
       WINDOW run AS (PARTITION BY k.dim, k.key ORDER BY g.w)
     )
     ${READ} FROM series ORDER BY dim, key, week_end`,
    [D0],
  );
}

describe(`stock_series against one grouped SQL statement (${testBackend})`, () => {
  let tdb: TestDatabase;
  let p: PipelineHarness;
  let dir: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "stock-series-"));
    await generateDemoData({
      out: dir,
      products: testBackend === "postgres" ? 600 : 150,
      years: 2,
      orderLines: testBackend === "postgres" ? 60_000 : 12_000,
      seed: 11,
      today: new Date("2026-07-01T00:00:00Z"),
    });
    tdb = await createTestDatabase();
    p = await pipeline(tdb.db, () => dir);
    expect((await p.run("reset")).status).toBe("complete");
  }, 300_000);
  afterAll(async () => {
    await p?.close();
    await tdb?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("stores exactly the oracle's rows, with products without a cost or category, non-merchandise and huge values", async () => {
    const conn = await tdb.db.connect();
    try {
      const { mine, expected } = await rolledBack(conn, async (tx) => {
        const pids = (
          await tx.query<{ pid: number }>(
            "SELECT pid FROM products WHERE pid IN (SELECT pid FROM product_stock_history) ORDER BY pid LIMIT 6",
          )
        ).map((r) => r.pid);
        await tx.query("UPDATE products SET cost_price = NULL WHERE pid = $1", [pids[0]]);
        await tx.query("UPDATE products SET kind = 'fee' WHERE pid = $1", [pids[1]]);
        await tx.query("DELETE FROM product_categories WHERE pid = $1", [pids[2]]);
        // A product of class A out of stock on some runs and in stock on others.
        await tx.query("UPDATE product_metrics SET abc_class = 'A' WHERE pid = $1", [pids[3]]);
        await tx.query(
          "UPDATE product_stock_history SET stock = CASE WHEN extract(day FROM valid_from)::int % 2 = 0 THEN 0 ELSE 3 END WHERE pid = $1",
          [pids[3]],
        );
        // 10,000 units at the largest cost price: 10^16 in 1/10,000, beyond 2^53.
        await tx.query("UPDATE products SET cost_price = 99999999.9999 WHERE pid = $1", [pids[4]]);
        await tx.query("UPDATE product_stock_history SET stock = 10000 WHERE pid = $1", [pids[4]]);
        await stockSeriesModule.run({ conn: tx, asOf: AS_OF });
        const mine = await tx.query<Row>(`${READ} FROM stock_value_weekly ORDER BY dim, key, week_end`);
        return { mine, expected: await oracle(tx) };
      });
      expect(new Set(mine.map((r) => r.dim))).toEqual(new Set(["total", "category"]));
      expect(mine.filter((r) => r.dim === "total")).toHaveLength(53);
      expect(mine.some((r) => Number(r.a_products) > 0 && Number(r.in_stock_a) < Number(r.a_products))).toBe(
        true,
      );
      expect(mine.some((r) => Number(r.value_cost) > 2 ** 53 / 10_000)).toBe(true);
      expect(mine.length).toBe(expected.length);
      expect(mine).toEqual(expected);
    } finally {
      await conn.release();
    }
  }, 120_000);

  it("in a run, gives the oracle's rows from the runs stock_history kept in memory", async () => {
    const conn = await tdb.db.connect();
    try {
      const { mine, expected, left } = await rolledBack(conn, async (tx) => {
        const shared = new RunShared();
        await stockHistoryModule.run({ conn: tx, asOf: AS_OF, shared });
        await stockSeriesModule.run({ conn: tx, asOf: AS_OF, shared });
        const mine = await tx.query<Row>(`${READ} FROM stock_value_weekly ORDER BY dim, key, week_end`);
        // The oracle reads the runs stock_history stored.
        return { mine, expected: await oracle(tx), left: shared.takeStockRuns(AS_OF) };
      });
      // stock_series took the kept runs (they are handed over once).
      expect(left).toBeNull();
      expect(mine.filter((r) => r.dim === "total")).toHaveLength(53);
      expect(mine.some((r) => Number(r.value_cost) > 0)).toBe(true);
      expect(mine).toEqual(expected);
    } finally {
      await conn.release();
    }
  }, 120_000);
});
