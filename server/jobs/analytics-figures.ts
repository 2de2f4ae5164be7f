// Module analytics_figures (docs/metrics.md §19): the few figures of the Analytics page that would
// otherwise walk every receipt (aging, sell-through by receipt month) or expand every product into
// its categories (lost sales) on the first request after a calculation. It stores a few hundred
// rows (stock_aging, receipt_months, lost_sales) from tables the calculation already has:
// receivings × po_lines (grouped while a Full Reset still loads the order lines: prepare), and
// product_metrics' on hand, d̄ and out-of-stock days. It runs after the planning modules (it reads
// their avg_daily_sales and out_of_stock_days_*) and the aggregates module (whose category ×
// product temp table it reuses when the run has it).
import { AGING_BUCKETS } from "../../shared/metrics.ts";
import { isProductCategorySql } from "../modules/config/category-types.ts";
import type { CalcModule } from "./calculate.ts";
import { setLocal, utcDay } from "./planning/context.ts";

/**
 * The receipts of merchandise products per product and day, every day (D0 is known only once the
 * order lines are loaded), with `newer` (the units received after that day) and `first_in_month`
 * (the product's first receipt day of that month).
 */
const RECEIPTS_SQL = `
  DROP TABLE IF EXISTS calc_af_receipts;
  CREATE TEMP TABLE calc_af_receipts ON COMMIT DROP AS
    SELECT pid, day, qty,
      (SUM(qty) OVER w - qty)::int AS newer,
      date_trunc('month', (lead(day) OVER w)::timestamp) IS DISTINCT FROM date_trunc('month', day::timestamp)
        AS first_in_month
    FROM (
      SELECT l.pid, r.received_date AS day, SUM(r.qty)::int AS qty
      FROM receivings r JOIN po_lines l ON l.id = r.po_line_id
      JOIN products p ON p.pid = l.pid AND p.kind = 'merchandise'
      WHERE r.qty > 0
      GROUP BY l.pid, r.received_date
    ) rec
    -- One order for both (one sort): newest first, so the next row is the receipt day before.
    WINDOW w AS (PARTITION BY pid ORDER BY day DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW);
  ANALYZE calc_af_receipts;`;

const AGE_BUCKET_SQL = `CASE ${AGING_BUCKETS.map(
  (b) => `WHEN $1::date - day BETWEEN ${b.lo} AND ${b.hi} THEN '${b.key}'`,
).join(" ")} END`;

/** Sums of lost sales over the products of a group (lp), for both windows. */
const LOST_SUMS = `COALESCE(SUM(lost_90) FILTER (WHERE oos_90 > 0), 0) AS lost_90,
  COALESCE(SUM(oos_90), 0) AS oos_90, count(*) FILTER (WHERE oos_90 > 0) AS n_90,
  SUM(lost_365) AS lost_365, SUM(oos_365) AS oos_365, count(*) AS n_365`;

export const analyticsFiguresModule: CalcModule = {
  name: "analytics_figures",
  tables: ["stock_aging", "receipt_months", "lost_sales"],
  prepare: {
    reads: ["products", "po_lines", "receivings"],
    async run({ conn }) {
      const restore = await setLocal(conn, { jit: "off", work_mem: "64MB" });
      await conn.exec(RECEIPTS_SQL);
      await restore();
    },
  },
  async run({ conn, asOf }) {
    const restore = await setLocal(conn, { jit: "off", work_mem: "64MB" });
    const d0 = utcDay(asOf);
    const [ready] = await conn.query<{ receipts: boolean; categories: boolean }>(
      `SELECT to_regclass('pg_temp.calc_af_receipts') IS NOT NULL AS receipts,
         to_regclass('pg_temp.calc_agg_category_products') IS NOT NULL AS categories`,
    );
    if (!ready?.receipts) await conn.exec(RECEIPTS_SQL);
    // Each product once under its categories and every product category above them.
    const categoryProducts = ready?.categories
      ? "SELECT category_id, pid FROM calc_agg_category_products"
      : `WITH RECURSIVE pcat AS (SELECT id, parent_id FROM categories c WHERE ${isProductCategorySql("c")}),
         up(category_id, ancestor_id) AS (
           SELECT id, id FROM pcat
           UNION SELECT up.category_id, c.parent_id FROM up JOIN pcat c ON c.id = up.ancestor_id
           WHERE c.parent_id IN (SELECT id FROM pcat)
         )
         SELECT DISTINCT up.ancestor_id AS category_id, pc.pid
         FROM product_categories pc JOIN up ON up.category_id = pc.category_id`;
    await conn.exec("TRUNCATE stock_aging, receipt_months, lost_sales");
    // One statement, one pass over product_metrics; each data-modifying CTE runs whole.
    const rows = await conn.execute(
      `WITH prod AS MATERIALIZED (
         SELECT m.pid, m.on_hand, COALESCE(p.cost_price, 0) AS cost, p.price, p.vendor_id,
           COALESCE(p.first_received, (p.created_at AT TIME ZONE 'UTC')::date) AS since,
           m.avg_daily_sales, m.out_of_stock_days_90, m.out_of_stock_days_365
         FROM product_metrics m JOIN products p ON p.pid = m.pid
         WHERE p.kind = 'merchandise'
       ),
       later AS (SELECT pid, SUM(qty) AS qty FROM calc_af_receipts WHERE day > $1::date GROUP BY pid),
       -- First in, first out: today's stock is made of the newest receipts up to D0, so a receipt
       -- keeps min(its units, on hand − the units received after it up to D0): here the receipts
       -- that keep some.
       alloc AS MATERIALIZED (
         SELECT r.pid, r.day, s.cost,
           LEAST(r.qty, s.on_hand - (r.newer - COALESCE(a.qty, 0)))::int AS left_units
         FROM calc_af_receipts r
         JOIN prod s ON s.pid = r.pid
         LEFT JOIN later a ON a.pid = r.pid
         WHERE r.day <= $1::date AND r.newer - COALESCE(a.qty, 0) < s.on_hand
       ),
       -- Stock the receipts on record do not explain is dated to the first receipt, else creation.
       lots AS (
         SELECT pid, day, left_units AS units, cost FROM alloc
         UNION ALL
         SELECT s.pid, LEAST(s.since, $1::date), (s.on_hand - COALESCE(t.n, 0))::int, s.cost
         FROM prod s
         LEFT JOIN (SELECT pid, SUM(left_units) AS n FROM alloc GROUP BY pid) t ON t.pid = s.pid
         WHERE s.on_hand - COALESCE(t.n, 0) > 0
       ),
       aging_in AS (
         INSERT INTO stock_aging (bucket, products, units, value_cost, pids)
         SELECT bucket, count(DISTINCT pid), SUM(units), round(SUM(units * cost), 4), array_agg(DISTINCT pid)
         FROM (SELECT pid, units, cost, ${AGE_BUCKET_SQL} AS bucket FROM lots) x
         GROUP BY bucket
         RETURNING 1
       ),
       months_in AS (
         INSERT INTO receipt_months (month, received, on_hand, products, pids)
         SELECT r.month, r.received, COALESCE(l.n, 0), r.products, r.pids
         FROM (
           SELECT date_trunc('month', day)::date AS month, SUM(qty) AS received,
             count(*) FILTER (WHERE first_in_month) AS products,
             array_agg(pid) FILTER (WHERE first_in_month) AS pids
           FROM calc_af_receipts WHERE day <= $1::date GROUP BY 1
         ) r
         LEFT JOIN (SELECT date_trunc('month', day)::date AS month, SUM(left_units) AS n FROM alloc GROUP BY 1) l
           ON l.month = r.month
         RETURNING 1
       ),
       -- Lost sales: per product d̄ × days out of stock × price, over the last 90 and 365 days.
       lp AS MATERIALIZED (
         SELECT pid, vendor_id,
           avg_daily_sales * out_of_stock_days_90 * price AS lost_90, out_of_stock_days_90 AS oos_90,
           avg_daily_sales * out_of_stock_days_365 * price AS lost_365, out_of_stock_days_365 AS oos_365
         FROM prod
         WHERE avg_daily_sales > 0 AND out_of_stock_days_365 > 0
       ),
       sums AS (
         SELECT 'total' AS dim, 0 AS key, ${LOST_SUMS} FROM lp
         UNION ALL
         SELECT 'vendor', lp.vendor_id, ${LOST_SUMS} FROM lp JOIN vendors v ON v.id = lp.vendor_id GROUP BY lp.vendor_id
         UNION ALL
         SELECT 'category', cp.category_id, ${LOST_SUMS}
         FROM (${categoryProducts}) cp JOIN lp ON lp.pid = cp.pid GROUP BY cp.category_id
       )
       INSERT INTO lost_sales (days, dim, key, lost_revenue, out_of_stock_days, products)
       SELECT d.days, s.dim, s.key, round(d.lost, 4), d.oos, d.n
       FROM sums s CROSS JOIN LATERAL (VALUES (90, s.lost_90, s.oos_90, s.n_90), (365, s.lost_365, s.oos_365, s.n_365)) d(days, lost, oos, n)
       WHERE d.n > 0`,
      [d0],
    );
    await restore();
    return rows;
  },
};
