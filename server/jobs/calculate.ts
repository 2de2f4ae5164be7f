// Calculation phase: each module recomputes one metrics table from the imported data with
// set-based SQL, inside the run's transaction. The planning engine adds its modules to this list.
import type { SqlConnection } from "../db/database.ts";
import { pacer } from "../db/pace.ts";
import { APP_OPEN_LINES_SQL, APP_PENDING_RECEIPTS_SQL } from "../modules/purchasing/open-orders.ts";
import { analyticsFiguresModule } from "./analytics-figures.ts";
import { orderLinesOf, passDay, passDayText, type RunShared } from "./order-lines-pass.ts";
import { utcDay, utcMidnight } from "./planning/context.ts";
import { PLANNING_MODULES } from "./planning/index.ts";
import { productSearchModule } from "./product-search.ts";
import { lineChunks, salesSeriesModule, scaledToDecimal, stockSeriesModule } from "./series.ts";

export interface CalcContext {
  conn: SqlConnection;
  /** The moment the figures are "as of" (windows like 30 days end here). */
  asOf: Date;
  /**
   * What the run's modules share in memory (the pass over the order lines, order-lines-pass.ts);
   * absent when a module runs on its own, which then does that work itself.
   */
  shared?: RunShared;
}

export interface CalcModule {
  /** Shown in "Last Calculation Times" */
  name: string;
  /** Metrics tables it fills, for the table counts */
  tables: readonly string[];
  run(ctx: CalcContext): Promise<number>;
  /**
   * Optional: work that reads only the imported tables named in `reads`, done in the run's
   * transaction before the modules run, as soon as those tables are loaded (a Full Reset may still
   * be loading its largest file then). It leaves temp tables (ON COMMIT DROP) for run(), which
   * must give the same results whether or not prepare ran.
   */
  prepare?: { reads: readonly string[]; run(ctx: CalcContext): Promise<void> };
  /**
   * Set when the module reads only imported tables and settings (no other module's table) and
   * writes only its `tables`: a Full Reset on PostgreSQL then runs it on the second connection, in
   * a transaction of its own, into new copies of its tables, while the run's connection goes on
   * with the modules before it; at the module's place in the order the run waits for it, and its
   * new tables are swapped in with the run's others at the commit (reset-swap.ts, BesideLoader).
   * Elsewhere it runs in order like the others.
   */
  beside?: boolean;
  /**
   * Set when the module leaves per-product figures in a temp table for a later module to write
   * (one UPDATE of product_metrics instead of two): that module's name. A module list must have
   * it after this one (checkModuleOrder).
   */
  handsOverTo?: string;
  /**
   * Set when the module may read the run's pass over the order lines (order-lines-pass.ts): the
   * pass is kept until every such module of the run has ended.
   */
  readsOrderLines?: boolean;
}

/** Refuses a module list where a module's figures would never be written (CalcModule.handsOverTo). */
export function checkModuleOrder(modules: readonly CalcModule[]): void {
  const names = modules.map((m) => m.name);
  for (const [i, m] of modules.entries()) {
    if (m.handsOverTo && !names.slice(i + 1).includes(m.handsOverTo)) {
      throw new Error(
        `Calculation module ${m.name} leaves its figures for module ${m.handsOverTo} to write: list ${m.handsOverTo} after it`,
      );
    }
  }
}

const DAY_MS = 86_400_000;

/** The columns of calc_sales, the per-product sales figures product_metrics is built from. */
const SALES_COLUMNS = [
  "pid",
  "units_7d",
  "units_30d",
  "units_90d",
  "units_365d",
  "revenue_7d",
  "revenue_30d",
  "revenue_90d",
  "revenue_365d",
  "total_sold",
  "lifetime_revenue",
  "first_sold",
  "last_sold",
  "corrections",
  "lines_90d",
  "min_line_90d",
  "max_line_90d",
] as const;

/**
 * calc_sales by one grouped statement over the order lines: what salesFigures does when the module
 * runs without a run (no pass over the order lines to share).
 */
async function salesFiguresSql(conn: SqlConnection, asOf: Date): Promise<void> {
  // The sales aggregate goes into a temp table first: CREATE TABLE AS may use a parallel plan,
  // while the SELECT of an INSERT never does. One pass over the order lines sums each product's
  // lines per window band (the last 7 days, days 8–30, 31–90, 91–365, older: w = 0 … 4; the CASE
  // tests the oldest band first, where most lines are) and unit price: a line only adds
  // its quantity (and its discount, when it has one) to its group, and the group's revenue is
  // price × units − discounts, which is Σ (quantity × price − discount) exactly (numeric) with
  // one multiplication per group instead of per line. The nested windows are sums of bands.
  await conn.exec("DROP TABLE IF EXISTS calc_sales");
  await conn.query(
    `CREATE TEMP TABLE calc_sales AS
       SELECT pid,
         GREATEST(SUM(units) FILTER (WHERE w <= 0), 0) AS units_7d,
         GREATEST(SUM(units) FILTER (WHERE w <= 1), 0) AS units_30d,
         GREATEST(SUM(units) FILTER (WHERE w <= 2), 0) AS units_90d,
         GREATEST(SUM(units) FILTER (WHERE w <= 3), 0) AS units_365d,
         GREATEST(SUM(revenue) FILTER (WHERE w <= 0), 0) AS revenue_7d,
         GREATEST(SUM(revenue) FILTER (WHERE w <= 1), 0) AS revenue_30d,
         GREATEST(SUM(revenue) FILTER (WHERE w <= 2), 0) AS revenue_90d,
         GREATEST(SUM(revenue) FILTER (WHERE w <= 3), 0) AS revenue_365d,
         GREATEST(SUM(units), 0) AS total_sold,
         GREATEST(SUM(revenue), 0) AS lifetime_revenue,
         (MIN(first_sold) AT TIME ZONE 'UTC')::date AS first_sold,
         (MAX(last_sold) AT TIME ZONE 'UTC')::date AS last_sold,
         SUM(corrections) AS corrections,
         -- The last 90 days' sale lines: how many, the smallest and the largest (bulk orders, §3).
         SUM(lines) FILTER (WHERE w <= 2) AS lines_90d,
         MIN(min_line) FILTER (WHERE w <= 2) AS min_line_90d,
         MAX(max_line) FILTER (WHERE w <= 2) AS max_line_90d
       FROM (
         SELECT pid, w, units, price * units - COALESCE(discount, 0) AS revenue, first_sold, last_sold,
           corrections, lines, min_line, max_line
         FROM (
           SELECT pid,
             CASE WHEN order_date < $5::timestamptz THEN 4
                  WHEN order_date < $4::timestamptz THEN 3
                  WHEN order_date < $3::timestamptz THEN 2
                  WHEN order_date < $2::timestamptz THEN 1
                  ELSE 0 END AS w,
             price,
             SUM(quantity) AS units,
             SUM(discount) FILTER (WHERE discount <> 0) AS discount,
             MIN(order_date) FILTER (WHERE quantity > 0) AS first_sold,
             MAX(order_date) FILTER (WHERE quantity > 0) AS last_sold,
             count(*) FILTER (WHERE quantity < 0) AS corrections,
             count(*) FILTER (WHERE quantity > 0) AS lines,
             MIN(quantity) FILTER (WHERE quantity > 0) AS min_line,
             MAX(quantity) AS max_line
           FROM order_lines
           WHERE status = 'completed' AND order_date <= $1::timestamptz
           GROUP BY 1, 2, 3
         ) by_price
       ) bands
       GROUP BY pid`,
    // The window starts as values: "timestamptz − interval" is not a constant to the planner,
    // and computing it four times per line cost more than the rest of the aggregate.
    [asOf, ...[6, 29, 89, 364].map((days) => new Date(utcMidnight(asOf).getTime() - days * DAY_MS))],
  );
}

/**
 * The temp table calc_sales: per product with a completed line up to asOf, its units and revenue of
 * the last 7, 30, 90 and 365 days and in all (each at least 0), its first and last sale day (lines
 * with a positive quantity), its corrections (negative lines), and the last 90 days' sale lines: how
 * many, the smallest positive and the largest quantity (bulk orders, §3). Summed in one loop over
 * the run's pass over the order lines (order-lines-pass.ts) and written with one COPY: grouping the
 * lines in a statement cost the database ≈ 2 s of the 50k set's run.
 */
async function salesFigures(ctx: CalcContext): Promise<void> {
  const { conn, asOf } = ctx;
  if (!ctx.shared) return salesFiguresSql(conn, asOf);
  const lines = await orderLinesOf(ctx);
  const n = lines.pids.length;
  const d0 = passDay(asOf);
  const [s7, s30, s90, s365] = [d0 - 6, d0 - 29, d0 - 89, d0 - 364];
  // Units and revenue (whole cents) of the last 7, 30, 90 and 365 days and in all.
  const sums = () => new Float64Array(n);
  const [u7, u30, u90, u365, uAll] = [sums(), sums(), sums(), sums(), sums()];
  const [c7, c30, c90, c365, cAll] = [sums(), sums(), sums(), sums(), sums()];
  const sold = new Uint8Array(n);
  const first = new Int32Array(n).fill(2 ** 31 - 1);
  const last = new Int32Array(n).fill(-(2 ** 31));
  const corrections = new Int32Array(n);
  const lines90 = new Int32Array(n);
  const min90 = new Int32Array(n).fill(2 ** 31 - 1);
  const max90 = new Int32Array(n).fill(-(2 ** 31));
  const any90 = new Uint8Array(n);
  const pace = pacer();
  for (const c of lines.chunks) {
    await pace();
    const { product, day, done, quantity, amountC } = c;
    for (let i = 0; i < c.n; i++) {
      if (!done[i]) continue;
      const p = product[i]!;
      const d = day[i]!;
      const q = quantity[i]!;
      const a = amountC[i]!;
      sold[p] = 1;
      uAll[p] = uAll[p]! + q;
      cAll[p] = cAll[p]! + a;
      if (q > 0) {
        if (d < first[p]!) first[p] = d;
        if (d > last[p]!) last[p] = d;
      } else if (q < 0) corrections[p] = corrections[p]! + 1;
      if (d < s365) continue;
      u365[p] = u365[p]! + q;
      c365[p] = c365[p]! + a;
      if (d < s90) continue;
      u90[p] = u90[p]! + q;
      c90[p] = c90[p]! + a;
      any90[p] = 1;
      if (q > 0) {
        lines90[p] = lines90[p]! + 1;
        if (q < min90[p]!) min90[p] = q;
      }
      if (q > max90[p]!) max90[p] = q;
      if (d < s30) continue;
      u30[p] = u30[p]! + q;
      c30[p] = c30[p]! + a;
      if (d < s7) continue;
      u7[p] = u7[p]! + q;
      c7[p] = c7[p]! + a;
    }
  }
  const rows: string[] = [];
  for (let p = 0; p < n; p++) {
    if (!sold[p]) continue;
    for (const sum of [u7, u30, u90, u365, uAll, c7, c30, c90, c365, cAll])
      if (!Number.isSafeInteger(sum[p]!))
        throw new Error(`The sales of product ${lines.pids[p]} come to more than 2^53 units or cents`);
    rows.push(
      [
        lines.pids[p],
        ...[u7, u30, u90, u365].map((u) => Math.max(u[p]!, 0)),
        ...[c7, c30, c90, c365].map((c) => scaledToDecimal(Math.max(c[p]!, 0), 100, 2)),
        Math.max(uAll[p]!, 0),
        scaledToDecimal(Math.max(cAll[p]!, 0), 100, 2),
        first[p]! <= last[p]! ? passDayText(first[p]!) : "",
        first[p]! <= last[p]! ? passDayText(last[p]!) : "",
        corrections[p],
        any90[p] ? lines90[p] : "",
        lines90[p]! > 0 ? min90[p] : "",
        any90[p] ? max90[p] : "",
      ].join(",") + "\n",
    );
  }
  await conn.exec(
    `DROP TABLE IF EXISTS calc_sales;
     CREATE TEMP TABLE calc_sales (
       pid int PRIMARY KEY,
       units_7d int8, units_30d int8, units_90d int8, units_365d int8,
       revenue_7d numeric, revenue_30d numeric, revenue_90d numeric, revenue_365d numeric,
       total_sold int8, lifetime_revenue numeric,
       first_sold date, last_sold date,
       corrections int8, lines_90d int8, min_line_90d int4, max_line_90d int4
     ) ON COMMIT DROP`,
  );
  await conn.copyCsv({
    table: "calc_sales",
    columns: SALES_COLUMNS,
    source: lineChunks(rows),
    header: false,
  });
}

/**
 * Per-product sales and stock figures (docs/metrics.md §1). Sales are completed order lines
 * (cancelled and returned lines are not sales); revenue is quantity × unit price − line discount.
 * A completed line with a negative quantity is a correction: it lowers its window's units and
 * revenue, but no window goes below zero, and it is neither a first nor a last sale.
 * "The last N days" are the N UTC days ending on asOf's date, cut at asOf.
 */
export const productMetricsModule: CalcModule = {
  name: "product_metrics",
  tables: ["product_metrics"],
  readsOrderLines: true,
  async run(ctx) {
    const { conn, asOf } = ctx;
    await conn.exec("TRUNCATE product_metrics");
    await salesFigures(ctx);
    const rows = await conn.execute(
      `WITH sales AS (SELECT * FROM calc_sales),
       open_lines AS (
         SELECT l.id, l.pid, l.ordered_qty
         FROM po_lines l
         JOIN purchase_orders o ON o.id = l.po_id AND o.status IN ('ordered', 'partial')
       ),
       -- Only the open lines' receipts are summed (most receipts are of closed orders).
       received AS (
         SELECT po_line_id, SUM(qty) AS qty FROM receivings
         WHERE received_date <= $1::date AND po_line_id IN (SELECT id FROM open_lines)
         GROUP BY po_line_id
       ),
       -- Imported open lines plus the open lines of app POs that count (open-orders.ts).
       on_order AS (
         SELECT pid, SUM(qty) AS qty FROM (
           SELECT l.pid, GREATEST(l.ordered_qty - COALESCE(r.qty, 0), 0) AS qty
           FROM open_lines l
           LEFT JOIN received r ON r.po_line_id = l.id
           UNION ALL
           SELECT pid, open_qty FROM (${APP_OPEN_LINES_SQL}) app
         ) u
         GROUP BY pid
       ),
       pending AS (${APP_PENDING_RECEIPTS_SQL})
       INSERT INTO product_metrics (
         pid, on_hand, on_order, stock_value_cost, stock_value_retail,
         units_7d, units_30d, units_90d, units_365d,
         revenue_7d, revenue_30d, revenue_90d, revenue_365d,
         total_sold, lifetime_revenue, first_sold, date_last_sold, calculated_at)
       SELECT p.pid,
         GREATEST(p.stock_quantity, 0) + COALESCE(pr.qty, 0),
         COALESCE(oo.qty, 0),
         CASE WHEN p.kind = 'merchandise' THEN round((GREATEST(p.stock_quantity, 0) + COALESCE(pr.qty, 0)) * COALESCE(p.cost_price, 0), 2) ELSE 0 END,
         CASE WHEN p.kind = 'merchandise' THEN round((GREATEST(p.stock_quantity, 0) + COALESCE(pr.qty, 0)) * p.price, 2) ELSE 0 END,
         COALESCE(s.units_7d, 0), COALESCE(s.units_30d, 0), COALESCE(s.units_90d, 0), COALESCE(s.units_365d, 0),
         COALESCE(s.revenue_7d, 0), COALESCE(s.revenue_30d, 0), COALESCE(s.revenue_90d, 0), COALESCE(s.revenue_365d, 0),
         COALESCE(s.total_sold, 0), COALESCE(s.lifetime_revenue, 0),
         s.first_sold, s.last_sold,
         $2::timestamptz
       FROM products p
       LEFT JOIN sales s ON s.pid = p.pid
       LEFT JOIN on_order oo ON oo.pid = p.pid
       LEFT JOIN pending pr ON pr.pid = p.pid`,
      // Receipts dated after D0 are not received yet (§1); calculated_at is the moment the figures
      // are for (asOf), so D0 = its UTC date.
      [utcDay(asOf), asOf],
    );
    // The run's history counts the corrections (completed lines with a negative quantity).
    await conn.exec(
      `DROP TABLE IF EXISTS calc_sales_corrections;
       CREATE TEMP TABLE calc_sales_corrections ON COMMIT DROP AS
         SELECT COALESCE(SUM(corrections), 0)::int AS lines FROM calc_sales;
       -- Products that may have a one-off bulk order (§3): at least 20 sale lines in the last 90
       -- days and a line more than 10 × the smallest (so possibly more than 10 × the median).
       -- Module stock_history looks at only their lines.
       DROP TABLE IF EXISTS calc_bulk_candidates;
       CREATE TEMP TABLE calc_bulk_candidates ON COMMIT DROP AS
         SELECT pid FROM calc_sales WHERE lines_90d >= 20 AND max_line_90d > 10 * min_line_90d;
       DROP TABLE calc_sales`,
    );
    return rows;
  },
};

/**
 * In this order on one connection. On a Full Reset's second connection (CalcModule.beside) forecast,
 * sales_series and product_search run in this order too. Nothing the run computes reads
 * sales_series' or product_search's tables, so they come last: the run's connection does all of
 * its own work (analytics_figures, its indexes) before it waits for them, building the order lines'
 * indexes meanwhile, rather than wait for sales_series in the middle of its chain.
 */
export const CALC_MODULES: readonly CalcModule[] = [
  productMetricsModule,
  ...PLANNING_MODULES,
  stockSeriesModule,
  analyticsFiguresModule,
  salesSeriesModule,
  productSearchModule,
];

export async function recordCalculation(
  conn: SqlConnection,
  modules: readonly string[],
  at: Date,
): Promise<void> {
  await conn.query(
    `INSERT INTO calculate_status (module_name, last_calculation_timestamp) SELECT unnest($1::text[]), $2
     ON CONFLICT (module_name) DO UPDATE SET last_calculation_timestamp = EXCLUDED.last_calculation_timestamp`,
    [modules, at],
  );
}
