// Module sales_series streams the window's order lines out of the database and adds them up in the
// app (server/jobs/series.ts). Its answer must be exactly what one grouped SQL statement over the
// same lines gives: that statement (the module's earlier implementation, GROUPING SETS over the
// lines) is kept here as the oracle, and both are compared row by row on generated demo data with
// the cases demo data lacks added: a correction (negative completed quantity), returns, a product
// without a cost price, non-merchandise products, a product in no category, and lines outside the
// window. (The hand-worked figures are in dashboard.test.ts and overview.test.ts.)
// Its weekly series per product (product_sales_weekly, the Forecasting page's product detail) is
// compared the same way with the order lines grouped by calendar week, and the detail must show the
// same figures whether it reads the stored row or sums the lines.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateDemoData } from "../../scripts/lib/demo-data.ts";
import type { SqlConnection } from "../../server/db/database.ts";
import {
  CATEGORY_SETS_SQL,
  SALES_SERIES_DAYS,
  salesSeriesModule,
  WEEKLY_MIN_LINES,
} from "../../server/jobs/series.ts";
import { forecastProduct } from "../../server/modules/forecasting/forecasting.service.ts";
import { detailSeriesStart, mondayOf } from "../../shared/forecasting.ts";
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

  it("stores each busy product's units per calendar week, exactly the order lines' sums over the detail's 156 weeks", async () => {
    const weeksFrom = detailSeriesStart(mondayOf(AS_OF.toISOString().slice(0, 10)));
    const asOfWeek = mondayOf(AS_OF.toISOString().slice(0, 10));
    const conn = await tdb.db.connect();
    try {
      const { mine, expected, busy } = await rolledBack(conn, async (tx) => {
        // The product with the most completed lines: lines at the edges of the weeks, a week whose
        // lines sum to 0, a correction, a return and a cancelled line (neither a sale).
        const [top] = await tx.query<{ pid: number }>(
          "SELECT pid FROM order_lines WHERE status = 'completed' GROUP BY pid ORDER BY count(*) DESC, pid LIMIT 1",
        );
        const pid = top!.pid;
        const id = (await tx.query<{ n: number }>("SELECT max(id)::int AS n FROM order_lines"))[0]!.n;
        const lines: [string, string, number, string][] = [
          ["W1", `${weeksFrom}T00:00:00Z`, 4, "completed"], // week 0's first moment
          ["W2", `${weeksFrom}T00:00:00Z`, -1, "completed"],
          ["W3", "2023-07-02T23:59:59Z", 9, "completed"], // the Sunday before: not in the weeks
          ["W4", "2023-07-12T10:00:00Z", 5, "completed"], // a week summing to 0
          ["W5", "2023-07-14T10:00:00Z", -5, "completed"],
          ["W6", "2024-01-10T10:00:00Z", 3, "returned"],
          ["W7", "2024-01-10T10:00:00Z", 3, "cancelled"],
          ["W8", `${asOfWeek}T00:00:00Z`, 2, "completed"], // the as-of day's week: not in the weeks
          ["W9", "2026-06-28T23:59:59Z", 6, "completed"], // the last week's last moment
        ];
        for (const [i, [order, at, qty, status]] of lines.entries()) {
          await tx.query(
            "INSERT INTO order_lines (id, order_number, pid, order_date, quantity, price, discount, status) VALUES ($1, $2, $3, $4, $5, 1.00, 0, $6)",
            [id + 1 + i, order, pid, at, qty, status],
          );
        }
        await salesSeriesModule.run({ conn: tx, asOf: AS_OF });
        const mine = await tx.query<{ pid: number; week: string; units: number }>(
          `SELECT s.pid, to_char(s.first_week + 7 * w.week, 'YYYY-MM-DD') AS week, w.units
           FROM product_sales_weekly s, unnest(s.weeks, s.units) AS w(week, units)
           ORDER BY 1, 2`,
        );
        const firstWeeks = await tx.query<{ d: string }>(
          "SELECT DISTINCT to_char(first_week, 'YYYY-MM-DD') AS d FROM product_sales_weekly",
        );
        expect(firstWeeks.map((r) => r.d)).toEqual([weeksFrom]);
        // The oracle: completed lines grouped by product and calendar week (as the detail sums
        // them), for the products with at least WEEKLY_MIN_LINES lines in those weeks.
        const expected = await tx.query<{ pid: number; week: string; units: number }>(
          `WITH w AS (
             SELECT pid, date_trunc('week', order_date AT TIME ZONE 'UTC')::date AS week, sum(quantity)::int AS units,
               count(*) AS lines
             FROM order_lines
             WHERE status = 'completed' AND order_date >= $1::date::timestamp AT TIME ZONE 'UTC'
               AND order_date < $2::date::timestamp AT TIME ZONE 'UTC'
             GROUP BY 1, 2
           )
           SELECT pid, to_char(week, 'YYYY-MM-DD') AS week, units FROM w
           WHERE pid IN (SELECT pid FROM w GROUP BY pid HAVING sum(lines) >= $3)
           ORDER BY 1, 2`,
          [weeksFrom, asOfWeek, WEEKLY_MIN_LINES],
        );
        const busy = await tx.query<{ pid: number; week: string; units: number }>(
          `SELECT pid, to_char(s.first_week + 7 * w.week, 'YYYY-MM-DD') AS week, w.units
           FROM product_sales_weekly s, unnest(s.weeks, s.units) AS w(week, units) WHERE s.pid = $1 ORDER BY 2`,
          [pid],
        );
        return { mine, expected, busy };
      });
      // Both kinds of product are there: with a stored series, and with too few lines for one.
      const stored = new Set(mine.map((r) => r.pid));
      expect(stored.size).toBeGreaterThan(0);
      expect(stored.size).toBeLessThan(
        (
          await tdb.db.prisma.$queryRawUnsafe<{ n: number }[]>(
            "SELECT count(DISTINCT pid)::int AS n FROM order_lines",
          )
        )[0]!.n,
      );
      expect(mine).toEqual(expected);
      const week = (w: string) => busy.find((r) => r.week === w)?.units;
      expect(busy[0]!.week).toBe(weeksFrom);
      expect(week(weeksFrom)).toBe(3);
      expect(week("2023-07-10")).toBe(0);
      expect(week("2026-06-22")).toBeGreaterThanOrEqual(6);
      expect(busy.at(-1)!.week).toBe("2026-06-22");
    } finally {
      await conn.release();
    }
  }, 120_000);

  it("the product detail shows the same figures from the stored series as from the order lines", async () => {
    const q = <T>(sql: string) => tdb.db.prisma.$queryRawUnsafe<T[]>(sql);
    const pids = (
      await q<{ pid: number }>(
        "SELECT s.pid FROM product_sales_weekly s JOIN product_forecasts f ON f.pid = s.pid ORDER BY f.total_91d DESC, s.pid LIMIT 3",
      )
    ).map((r) => r.pid);
    expect(pids.length).toBeGreaterThan(0);
    const fromStored = await Promise.all(pids.map((pid) => forecastProduct(tdb.db, pid)));
    expect(fromStored[0]!.history.some((h) => h.units > 0)).toBe(true);
    const saved = await q<{ pid: number; first_week: string; weeks: string; units: string }>(
      "SELECT pid, first_week::text, weeks::text, units::text FROM product_sales_weekly",
    );
    // The stored rows are for the detail's weeks (so it reads them), then they are taken away.
    expect(saved.find((r) => r.pid === pids[0])!.first_week).toBe(
      detailSeriesStart(mondayOf(fromStored[0]!.weeks.as_of)),
    );
    await tdb.db.prisma.$executeRawUnsafe("DELETE FROM product_sales_weekly");
    try {
      const fromLines = await Promise.all(pids.map((pid) => forecastProduct(tdb.db, pid)));
      expect(fromStored).toEqual(fromLines);
    } finally {
      await tdb.db.prisma.$executeRawUnsafe(
        `INSERT INTO product_sales_weekly (pid, first_week, weeks, units)
         SELECT pid, first_week::date, weeks::int2[], units::int4[]
         FROM json_to_recordset($1::json) AS x(pid int, first_week text, weeks text, units text)`,
        JSON.stringify(saved),
      );
    }
  }, 120_000);
});
