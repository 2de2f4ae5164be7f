// Module sales_series streams the window's order lines out of the database and adds them up in the
// app (server/jobs/series.ts). Its answer must be exactly what one grouped SQL statement over the
// same lines gives: that statement (the module's earlier implementation, GROUPING SETS over the
// lines) is kept here as the oracle, and both are compared row by row on generated demo data with
// the cases demo data lacks added: a correction (negative completed quantity), returns, a product
// without a cost price, non-merchandise products, a product in no category, and lines outside the
// window. (The hand-worked figures are in dashboard.test.ts and overview.test.ts.)
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateDemoData } from "../../scripts/lib/demo-data.ts";
import type { SqlConnection } from "../../server/db/database.ts";
import { CATEGORY_SETS_SQL, SALES_SERIES_DAYS, salesSeriesModule } from "../../server/jobs/series.ts";
import { isMerchandiseSql } from "../../shared/metrics.ts";
import { createTestDatabase, rolledBack, type TestDatabase, testBackend } from "../helpers/db.ts";
import { type PipelineHarness, pipeline } from "../helpers/pipeline.ts";

const AS_OF = new Date("2026-06-30T23:59:59Z");
const DAY_MS = 86_400_000;

type Row = Record<string, string | number>;

/** Money as text at the column's scale (an oracle's 0 and a stored 0.00 are the same figure). */
const m = (c: string) => `${c}::numeric(14, 2)::text AS ${c}`;
const READ = `SELECT dim, key, to_char(day, 'YYYY-MM-DD') AS day, units, ${m("revenue")}, ${m("takings")},
  ${m("costed_revenue")}, ${m("cogs")}, orders, returned_units, ${m("returned_value")}`;

/** The same figures from one SQL statement over the lines (the oracle). */
async function oracle(tx: SqlConnection, asOf: Date): Promise<Row[]> {
  const start = new Date(
    new Date(`${asOf.toISOString().slice(0, 10)}T00:00:00Z`).getTime() - (SALES_SERIES_DAYS - 1) * DAY_MS,
  );
  await tx.exec(CATEGORY_SETS_SQL("or"));
  await tx.query(
    `CREATE TEMP TABLE or_sales ON COMMIT DROP AS
     SELECT day, brand_id, vendor_id, cs, GROUPING(brand_id, vendor_id, cs) AS g,
       COALESCE(SUM(quantity) FILTER (WHERE done AND merch), 0)::int AS units,
       COALESCE(SUM(amount) FILTER (WHERE done AND merch), 0) AS revenue,
       COALESCE(SUM(amount) FILTER (WHERE done), 0) AS takings,
       COALESCE(SUM(amount) FILTER (WHERE done AND merch AND cost_price IS NOT NULL), 0) AS costed_revenue,
       COALESCE(SUM(quantity * cost_price) FILTER (WHERE done AND merch), 0) AS cogs,
       COALESCE(SUM(quantity) FILTER (WHERE NOT done AND merch), 0)::int AS returned_units,
       COALESCE(SUM(amount) FILTER (WHERE NOT done AND merch), 0) AS returned_value
     FROM (
       SELECT (l.order_date AT TIME ZONE 'UTC')::date AS day, p.brand_id, p.vendor_id, c.cs,
         l.status = 'completed' AS done, l.quantity, l.quantity * l.price - l.discount AS amount,
         p.cost_price, ${isMerchandiseSql("p")} AS merch
       FROM order_lines l
       JOIN products p ON p.pid = l.pid
       LEFT JOIN or_pcs c ON c.pid = l.pid
       WHERE l.status IN ('completed', 'returned') AND l.order_date >= $1 AND l.order_date <= $2
     ) x
     GROUP BY GROUPING SETS ((day), (day, brand_id), (day, vendor_id), (day, cs))`,
    [start, asOf],
  );
  const active = "(units <> 0 OR revenue <> 0 OR returned_units <> 0 OR returned_value <> 0)";
  const cols = "revenue, revenue, costed_revenue, round(cogs, 2), 0, returned_units, returned_value";
  return tx.query<Row>(
    `${READ} FROM (
       SELECT 'total' AS dim, 0 AS key, t.day, t.units, t.revenue, t.takings, t.costed_revenue, round(t.cogs, 2) AS cogs,
         COALESCE(o.n, 0) AS orders, t.returned_units, t.returned_value
       FROM or_sales t LEFT JOIN (
         SELECT day, count(DISTINCT order_number)::int AS n FROM (
           SELECT (order_date AT TIME ZONE 'UTC')::date AS day, order_number FROM order_lines
           WHERE status = 'completed' AND order_date >= $1 AND order_date <= $2) d GROUP BY day
       ) o ON o.day = t.day
       WHERE t.g = 7
       UNION ALL
       SELECT 'brand', brand_id, day, units, ${cols} FROM or_sales WHERE g = 3 AND brand_id IS NOT NULL AND ${active}
       UNION ALL
       SELECT 'vendor', vendor_id, day, units, ${cols} FROM or_sales WHERE g = 5 AND vendor_id IS NOT NULL AND ${active}
       UNION ALL
       SELECT 'category', category_id, day, units, ${cols} FROM (
         SELECT m.category_id, s.day, SUM(s.units)::int AS units, SUM(s.revenue) AS revenue, SUM(s.costed_revenue) AS costed_revenue,
           SUM(s.cogs) AS cogs, SUM(s.returned_units)::int AS returned_units, SUM(s.returned_value) AS returned_value
         FROM or_sales s JOIN or_cs_members m ON m.cs = s.cs WHERE s.g = 6 GROUP BY m.category_id, s.day
       ) c WHERE ${active}
     ) r (dim, key, day, units, revenue, takings, costed_revenue, cogs, orders, returned_units, returned_value)
     ORDER BY dim, key, day`,
    [start, asOf],
  );
}

describe(`sales_series against one grouped SQL statement (${testBackend})`, () => {
  let tdb: TestDatabase;
  let p: PipelineHarness;
  let dir: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "sales-series-"));
    await generateDemoData({
      out: dir,
      products: testBackend === "postgres" ? 600 : 150,
      years: 2,
      orderLines: testBackend === "postgres" ? 60_000 : 12_000,
      seed: 7,
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

  it("stores exactly the oracle's rows, with corrections, returns, products without a cost or category and non-merchandise", async () => {
    const conn = await tdb.db.connect();
    try {
      const { mine, expected } = await rolledBack(conn, async (tx) => {
        const pids = (await tx.query<{ pid: number }>("SELECT pid FROM products ORDER BY pid LIMIT 6")).map(
          (r) => r.pid,
        );
        // A product without a cost price, a fee and a gift card, a product in no category.
        await tx.query("UPDATE products SET cost_price = NULL WHERE pid = $1", [pids[0]]);
        await tx.query("UPDATE products SET kind = 'fee' WHERE pid = $1", [pids[1]]);
        await tx.query("UPDATE products SET kind = 'gift_card' WHERE pid = $1", [pids[2]]);
        await tx.query("DELETE FROM product_categories WHERE pid = $1", [pids[3]]);
        // Corrections (a negative completed quantity), returns, odd cents, a line on the window's
        // first moment and one just before it, one after asOf.
        const id = (await tx.query<{ n: number }>("SELECT max(id)::int AS n FROM order_lines"))[0]!.n;
        const lines: [string, number, string, number, string, string, string][] = [
          ["X1", pids[0]!, "2026-06-29T10:00:00Z", 3, "2.35", "0.10", "completed"],
          ["X1", pids[1]!, "2026-06-29T10:00:00Z", 1, "4.95", "0", "completed"],
          ["X2", pids[2]!, "2026-06-28T09:00:00Z", 1, "25.00", "0", "completed"],
          ["X3", pids[4]!, "2026-06-27T08:00:00Z", -7, "3.33", "0", "completed"],
          ["X4", pids[4]!, "2026-06-27T08:00:00Z", 2, "3.33", "0.01", "returned"],
          ["X5", pids[5]!, "2024-07-01T00:00:00Z", 4, "1.99", "0", "completed"],
          ["X6", pids[5]!, "2024-06-30T23:59:59Z", 5, "1.99", "0", "completed"],
          ["X7", pids[5]!, "2026-07-01T00:00:00Z", 6, "1.99", "0", "completed"],
          ["X8", pids[3]!, "2026-06-30T23:59:59Z", 2, "0.99", "0", "completed"],
        ];
        for (const [i, l] of lines.entries()) {
          await tx.query(
            "INSERT INTO order_lines (id, order_number, pid, order_date, quantity, price, discount, status) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            [id + 1 + i, ...l],
          );
        }
        await salesSeriesModule.run({ conn: tx, asOf: AS_OF });
        const mine = await tx.query<Row>(`${READ} FROM sales_daily ORDER BY dim, key, day`);
        return { mine, expected: await oracle(tx, AS_OF) };
      });
      expect(expected.length).toBeGreaterThan(1000);
      // Every dimension is there, and the window's first and last days.
      expect(new Set(mine.map((r) => r.dim))).toEqual(new Set(["total", "brand", "vendor", "category"]));
      expect(mine.filter((r) => r.dim === "total").map((r) => r.day)).toContain("2024-07-01");
      expect(mine.length).toBe(expected.length);
      expect(mine).toEqual(expected);
    } finally {
      await conn.release();
    }
  }, 120_000);
});
