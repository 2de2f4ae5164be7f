// Module stock_history of the planning engine (docs/metrics.md §2, §3, §10): closing stock
// reconstructed backwards from today's stock, stored as sparse runs in product_stock_history, and
// the per-product figures that follow from it (days in / out of stock, demand d̄ and σd, average
// stock, margin, sell-through, turnover, GMROI). Those go into the temp table sh_product (ON COMMIT
// DROP), which module planning reads and writes into product_metrics with its one UPDATE, as it does
// lead_times' lt_product: a full UPDATE of the wide product_metrics rows costs 0.3–0.8 s of its own
// (50k products).
import type { SqlConnection } from "../../db/database.ts";
import type { CalcContext, CalcModule } from "../calculate.ts";
import { orderLinesOf, passDay, passDayText } from "../order-lines-pass.ts";
import { lineChunks } from "../series.ts";
import { markPrepared, preparedFor, setLocal, utcDay, utcMidnight } from "./context.ts";

const DAY_MS = 86_400_000;
const WORK_MEM = "128MB";

/**
 * The temp table of every product's stock-history figures, named as the product_metrics columns
 * they fill (STOCK_FIGURE_COLUMNS); module planning reads and writes them.
 */
export const STOCK_FIGURES_TABLE = "sh_product";

/** The columns of STOCK_FIGURES_TABLE (besides pid), product_metrics' columns of the same names. */
export const STOCK_FIGURE_COLUMNS = [
  "history_start",
  "history_days",
  "is_new",
  "in_stock_days_90",
  "out_of_stock_days_90",
  "out_of_stock_days_365",
  "avg_daily_sales",
  "daily_sales_std",
  "demand_variability",
  "avg_stock_units_365",
  "cogs_365d",
  "gross_profit_365d",
  "margin_365d",
  "sell_through_30d",
  "turnover_365d",
  "gmroi_365d",
] as const;

/**
 * A ratio rounded to 4 decimals when it fits its numeric(p, 4) column, else null: a tiny
 * denominator (a few cents of revenue, a hundredth of a unit of average stock) must not overflow
 * the column and fail the whole run.
 */
function bounded(ratio: string, limit: number): string {
  return `CASE WHEN abs(${ratio}) < ${limit} THEN round(${ratio}, 4) END`;
}

/** D0 and the first day of the last 365 days (YYYY-MM-DD), and the moment that day starts. */
function windowOf(asOf: Date) {
  const windowStart = new Date(utcMidnight(asOf).getTime() - 364 * DAY_MS);
  return { d0: utcDay(asOf), w: utcDay(windowStart), windowStart };
}

/**
 * What the module takes from products and receipts alone, in temp tables (ON COMMIT DROP):
 * sh_base, per product its cost price and the part of the life start (§2) that is not a sale
 * (created, first_received, first receipt up to D0); sh_receipts, the receipts of the last 365
 * days per product and day as rows of the walk below (key, v); sh_prepared, the D0 they are for.
 * No sales: a Full Reset builds them while the order lines still load (prepare), else run() does.
 */
async function prepareBase(conn: SqlConnection, asOf: Date): Promise<void> {
  const { d0, w } = windowOf(asOf);
  await conn.exec("DROP TABLE IF EXISTS sh_base, sh_receipts");
  await conn.query(
    `CREATE TEMP TABLE sh_base ON COMMIT DROP AS
     SELECT p.pid, p.cost_price,
       LEAST((p.created_at AT TIME ZONE 'UTC')::date, p.first_received, fr.first_receipt) AS life_start
     FROM products p
     LEFT JOIN (
       SELECT l.pid, MIN(r.received_date) AS first_receipt
       FROM receivings r JOIN po_lines l ON l.id = r.po_line_id
       WHERE r.received_date <= $1::date
       GROUP BY l.pid
     ) fr ON fr.pid = p.pid`,
    [d0],
  );
  await conn.query(
    `CREATE TEMP TABLE sh_receipts ON COMMIT DROP AS
     SELECT l.pid::int8 << 12 | ((r.received_date - $1::date) << 2 | 1) AS key, -SUM(r.qty)::int AS v
     FROM receivings r JOIN po_lines l ON l.id = r.po_line_id
     WHERE r.received_date BETWEEN $1::date AND $2::date
     GROUP BY 1`,
    [w, d0],
  );
  await markPrepared(conn, "sh_prepared", asOf);
}

/** PostgreSQL's percentile_cont over sorted values (float8, the same operations). */
function percentileCont(sorted: Int32Array, fraction: number): number {
  const pos = fraction * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  if (lo === hi) return sorted[lo]!;
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/**
 * Bulk orders (§3), as CSV rows (pid, day, units) for sh_bulk: of the products that may have one
 * (calc_bulk_candidates, left by module product_metrics), the sale lines (completed, quantity > 0)
 * of the last 90 days more than 10 × the product's median line and above its 99th percentile
 * (percentile_cont over those lines), when it has at least 20 of them. The lines come from the run's
 * pass over the order lines; without candidates (the module run without product_metrics) there are
 * none.
 */
async function bulkOrders(ctx: CalcContext): Promise<string[]> {
  const { conn, asOf } = ctx;
  const [found] = await conn.query<{ found: boolean }>(
    "SELECT to_regclass('pg_temp.calc_bulk_candidates') IS NOT NULL AS found",
  );
  if (!found?.found) return [];
  const candidates = await conn.query<{ pid: number }>("SELECT pid FROM calc_bulk_candidates");
  if (!candidates.length) return [];
  const lines = await orderLinesOf(ctx);
  const slot = new Int32Array(lines.pids.length).fill(-1);
  for (const [k, c] of candidates.entries()) {
    const i = lines.indexOf.get(c.pid);
    if (i !== undefined) slot[i] = k;
  }
  const from = passDay(asOf) - 89;
  const days: number[][] = candidates.map(() => []);
  const units: number[][] = candidates.map(() => []);
  for (const c of lines.chunks) {
    const { product, day, done, quantity } = c;
    for (let i = 0; i < c.n; i++) {
      const k = slot[product[i]!]!;
      if (k < 0 || !done[i] || quantity[i]! <= 0 || day[i]! < from) continue;
      days[k]!.push(day[i]!);
      units[k]!.push(quantity[i]!);
    }
  }
  const rows: string[] = [];
  for (const [k, c] of candidates.entries()) {
    const q = units[k]!;
    if (q.length < 20) continue;
    const sorted = Int32Array.from(q).sort();
    const median = percentileCont(sorted, 0.5);
    const p99 = percentileCont(sorted, 0.99);
    for (let j = 0; j < q.length; j++)
      if (q[j]! > 10 * median && q[j]! > p99) rows.push(`${c.pid},${passDayText(days[k]![j]!)},${q[j]}\n`);
  }
  return rows;
}

export const stockHistoryModule: CalcModule = {
  name: "stock_history",
  readsOrderLines: true,
  tables: ["product_stock_history"],
  // Its per-product figures (sh_product) reach product_metrics through planning's one UPDATE.
  handsOverTo: "planning",
  prepare: {
    reads: ["products", "receivings", "po_lines"],
    run: ({ conn, asOf }) => prepareBase(conn, asOf),
  },
  async run(ctx) {
    const { conn, asOf } = ctx;
    const { d0, w, windowStart } = windowOf(asOf);

    // Grouping a year of order lines by product and day, and sorting the events for the window,
    // spill to disk with the default 4MB: give this module's statements more memory. JIT off, as in
    // the other modules: temp tables have no statistics and row guesses in the millions would make
    // PostgreSQL compile the expressions. Both are put back at the end.
    const restore = await setLocal(conn, { jit: "off", work_mem: WORK_MEM });
    await conn.exec("DROP TABLE IF EXISTS sh_life");

    // Per product: life start (§2: created, first_received, first receipt up to D0 from sh_base,
    // and the first sale, product_metrics.first_sold: completed, up to asOf; LEAST skips nulls,
    // created_at is never null) and the figures §10 needs, so the figures below join nothing else.
    if (!(await preparedFor(conn, "sh_prepared", asOf))) await prepareBase(conn, asOf);
    await conn.exec(
      `CREATE TEMP TABLE sh_life ON COMMIT DROP AS
       SELECT m.pid, m.on_hand, m.units_30d, m.units_365d, m.revenue_365d, b.cost_price,
         LEAST(b.life_start, m.first_sold) AS life_start
       FROM product_metrics m
       JOIN sh_base b ON b.pid = m.pid`,
    );
    // (Not analyzed: the planner's guess from its size, one row per product, is close; without the
    // 0.05 s ANALYZE the INSERT below plans the same and the figures the same hash joins.)

    // The runs, walking each product's rows in day order. Rows: units sold (kind 2) and received
    // (kind 1, from sh_receipts) per product and UTC day over the last 365 days; a start row (kind 0) on the window
    // start or the life start, whichever is later; and an end row (kind 3) on D0 + 1 carrying
    // on_hand. Every event is on or after its product's life start (the earliest of them), and a
    // day's closing stock only depends on the events after it, so older events are not needed:
    // closing stock = on_hand + sold − received over the rows after this one (v is +sold,
    // −received, or on_hand for the end row), and the run lasts until the day before the next row.
    // Of the rows of one day only the last (sales, else receipts, else the start row) keeps a run;
    // the others, and the end row, are followed by a row of the same day or of another product and
    // are left out.
    //
    // Each row is one bigint key, pid << 12 | day offset from the window start << 2 | kind: the
    // offsets (0 … 365) and kinds take 11 bits, so a product's keys lie within 2,047 of each other
    // and 4,096 apart from the next product's. Key order is (pid, day, kind) order, and sorting on
    // one bigint is about half the cost of sorting on (pid, day, kind); the window needs no
    // PARTITION BY: "the rows after this one" are the keys 1 … 2,047 above it (RANGE), which never
    // reach another product. Grouping the order lines by sorting them on the key (hash aggregation
    // off for this statement) leaves each input in key order, so the rows merge into the window
    // without another sort. (On the 50k-product set: 2.3 → 1.9 s of CPU for this SELECT.)
    //
    // The primary key is dropped before the insert and added back after it: one sort and build of
    // the index (≈ 0.2 s for 1M runs) instead of an index insert per row (≈ 0.55 s). The table
    // is locked by the TRUNCATE until the run commits either way, so no reader sees it without.
    await conn.exec("TRUNCATE product_stock_history");
    await conn.exec("ALTER TABLE product_stock_history DROP CONSTRAINT product_stock_history_pkey");
    const restoreAgg = await setLocal(conn, { enable_hashagg: "off" });
    await conn.query(
      `INSERT INTO product_stock_history (pid, valid_from, valid_to, stock, sold_first_day)
       WITH events AS (
         SELECT pid::int8 << 12 | (((order_date AT TIME ZONE 'UTC')::date - $1::date) << 2 | 2) AS key,
           SUM(quantity)::int AS v
         FROM order_lines
         WHERE status = 'completed' AND order_date >= $3::timestamptz AND order_date <= $4::timestamptz
         GROUP BY 1
         UNION ALL
         SELECT key, v FROM sh_receipts
         UNION ALL
         SELECT pid::int8 << 12 | (GREATEST(life_start - $1::date, 0) << 2), 0
         FROM sh_life WHERE life_start <= $2::date
         UNION ALL
         SELECT pid::int8 << 12 | (($2::date + 1 - $1::date) << 2 | 3), on_hand FROM sh_life
       ),
       walk AS (
         SELECT key, v, LEAD(key) OVER w AS next, SUM(v) OVER w AS stock
         FROM events
         WINDOW w AS (ORDER BY key RANGE BETWEEN 1 FOLLOWING AND 2047 FOLLOWING)
       )
       SELECT (key >> 12)::int, $1::date + ((key & 4095) >> 2)::int, $1::date + ((next & 4095) >> 2)::int - 1,
         stock, CASE WHEN key & 3 = 2 THEN v ELSE 0 END
       FROM walk
       WHERE next >> 12 = key >> 12 AND next >> 2 > key >> 2`,
      [w, d0, windowStart, asOf],
    );
    await restoreAgg();
    await conn.exec(
      "ALTER TABLE product_stock_history ADD CONSTRAINT product_stock_history_pkey PRIMARY KEY (pid, valid_from)",
    );

    // Per product: days out of stock (a run with stock ≤ 0 is out of stock on every day except its
    // first when that day had sales), stock-days, Σx of the daily units of the last 90 days (d̄),
    // and σd from the weekly units of the last 13 weeks (CTEs wk … v below). Runs start on or after the life start and the window start, so only the 90-day figures
    // need clipping. The ratios of §10 are taken from the stored (rounded) figures, so an
    // explanation built from them adds up.
    // Bulk orders (§3): of the products that may have one (calc_bulk_candidates, from module
    // product_metrics' pass), the sale lines of the last 90 days more than 10 × the product's median
    // line and above its 99th percentile, when it has at least 20 such lines (bulkOrders: only their
    // lines are kept, from the run's pass over the order lines). They stay in the sales figures and
    // d̄ but are left out of σd (of their week's units).
    await conn.exec(
      "DROP TABLE IF EXISTS sh_bulk; CREATE TEMP TABLE sh_bulk (pid int, day date, units int) ON COMMIT DROP",
    );
    const bulk = await bulkOrders(ctx);
    if (bulk.length)
      await conn.copyCsv({
        table: "sh_bulk",
        columns: ["pid", "day", "units"],
        source: lineChunks(bulk),
        header: false,
      });
    const d90 = "($1::date - 89)";
    // σd's 13 weeks (§3): D0 − 90 … D0; a product's full weeks since its life start, at most 13.
    const d91 = "($1::date - 90)";
    const weeksOfLife = "LEAST(13, GREATEST(0, ($1::date - l.life_start + 1) / 7))";
    const d365 = "($1::date - 364)";
    const days90 = `GREATEST($1::date - GREATEST(l.life_start, ${d90}) + 1, 0)`;
    const days365 = `GREATEST($1::date - GREATEST(l.life_start, ${d365}) + 1, 0)`;
    const cogs = "CASE WHEN l.cost_price IS NOT NULL THEN round(l.units_365d * l.cost_price, 2) END";
    const profit = `(l.revenue_365d - ${cogs})`;
    const avgStock = `COALESCE(round(r.stock_days::numeric / NULLIF(${days365}, 0), 2), 0)`;
    const stockCost = `NULLIF(${avgStock} * l.cost_price, 0)`;
    // The columns carry product_metrics' types (the casts an UPDATE would make), so planning reads
    // and stores the very same values. Planning must run later in the same transaction
    // (CALC_MODULES' order): it writes them.
    await conn.exec(`DROP TABLE IF EXISTS ${STOCK_FIGURES_TABLE}`);
    await conn.query(
      `CREATE TEMP TABLE ${STOCK_FIGURES_TABLE} ON COMMIT DROP AS
       WITH r AS (
         SELECT pid,
           SUM(valid_to - valid_from + 1 - (sold_first_day > 0)::int) FILTER (WHERE stock <= 0) AS oos365,
           SUM(valid_to - GREATEST(valid_from, ${d90}) + 1 - (sold_first_day > 0 AND valid_from >= ${d90})::int)
             FILTER (WHERE stock <= 0 AND valid_to >= ${d90}) AS oos90,
           SUM(GREATEST(stock, 0)::int8 * (valid_to - valid_from + 1)) AS stock_days,
           SUM(sold_first_day) FILTER (WHERE valid_from >= ${d90}) AS sx
         FROM product_stock_history GROUP BY pid
       ),
       f AS (
         SELECT l.pid, l.life_start, ${days90} - COALESCE(r.oos90, 0) AS n,
           COALESCE(r.oos90, 0) AS oos90, COALESCE(r.oos365, 0) AS oos365,
           COALESCE(r.sx, 0)::numeric AS sx,
           ${avgStock} AS avg_stock, ${cogs} AS cogs, ${profit} AS profit,
           ${profit} / NULLIF(l.revenue_365d, 0) AS margin,
           l.units_30d::numeric / NULLIF(l.units_30d + l.on_hand, 0) AS sell_through,
           ${cogs} / ${stockCost} AS turnover,
           ${profit} / ${stockCost} AS gmroi
         FROM sh_life l
         LEFT JOIN r ON r.pid = l.pid
       ),
       -- σd on weekly buckets (§3): the 13 weeks of 7 days ending on D0 (k = 0 is D0 − 6 … D0; the
       -- 13 reach back to D0 − 90), only the full weeks since the life start (nf of them). Per
       -- product and week: the units sold (on the runs' first days) and the days out of stock (the
       -- runs with stock ≤ 0 cut to each week, §2's rule, as module xyz counts them). Only runs
       -- that sold something in the 13 weeks or were out of stock in them are read; a run out of
       -- stock over several weeks gives a row per week.
       wk AS (
         SELECT h.pid, k.k,
           SUM(h.sold_first_day) FILTER (WHERE h.valid_from >= $1::date - 7 * k.k - 6) AS x,
           SUM(LEAST(h.valid_to, $1::date - 7 * k.k) - GREATEST(h.valid_from, $1::date - 7 * k.k - 6) + 1
               - (h.sold_first_day > 0 AND h.valid_from >= $1::date - 7 * k.k - 6)::int)
             FILTER (WHERE h.stock <= 0) AS oos
         FROM product_stock_history h
         CROSS JOIN LATERAL generate_series(
           ($1::date - CASE WHEN h.stock <= 0 THEN h.valid_to ELSE h.valid_from END) / 7,
           ($1::date - GREATEST(h.valid_from, ${d91})) / 7) AS k(k)
         WHERE h.valid_to >= ${d91}
           AND (h.stock <= 0 OR (h.sold_first_day <> 0 AND h.valid_from >= ${d91}))
         GROUP BY h.pid, k.k
       ),
       -- The bulk orders' units per product and week: left out of their week's units.
       bw AS (
         SELECT pid, ($1::date - day) / 7 AS k, SUM(units) AS b FROM sh_bulk GROUP BY 1, 2
       ),
       -- Per product: the weeks of its nf that were out of stock (4 days or more), and Σw, Σw² of
       -- the in-stock weeks' units (bulk orders left out; a week below 0, from corrections, counts
       -- 0). Weeks without a row sold nothing and were in stock: they add 0 to both sums.
       ws AS (
         SELECT w.pid, count(*) FILTER (WHERE w.oos >= 4) AS out_weeks,
           COALESCE(SUM(GREATEST(COALESCE(w.x, 0) - COALESCE(bw.b, 0), 0)) FILTER (WHERE COALESCE(w.oos, 0) < 4), 0)::numeric AS sw,
           COALESCE(SUM(GREATEST(COALESCE(w.x, 0) - COALESCE(bw.b, 0), 0)::numeric ^ 2) FILTER (WHERE COALESCE(w.oos, 0) < 4), 0) AS sww
         FROM wk w
         JOIN sh_life l ON l.pid = w.pid
         LEFT JOIN bw ON bw.pid = w.pid AND bw.k = w.k
         WHERE w.k < ${weeksOfLife}
         GROUP BY w.pid
       ),
       -- The bulk orders listed, for the explanation.
       bk AS (
         SELECT pid, jsonb_agg(jsonb_build_object('day', to_char(day, 'YYYY-MM-DD'), 'units', units) ORDER BY day, units DESC) AS orders
         FROM sh_bulk GROUP BY pid
       ),
       -- σd² = σ_week² ÷ 7 over the n in-stock weeks (§3); 0 when n < 2.
       v AS (
         SELECT l.pid,
           CASE WHEN s.n >= 2 THEN GREATEST((s.sww - s.sw ^ 2 / s.n) / (s.n - 1), 0) / 7 ELSE 0 END AS var_d,
           CASE WHEN bk.pid IS NOT NULL THEN jsonb_build_object('bulk', bk.orders) END AS variability
         FROM sh_life l
         LEFT JOIN ws ON ws.pid = l.pid
         LEFT JOIN bk ON bk.pid = l.pid,
         LATERAL (SELECT ${weeksOfLife} - COALESCE(ws.out_weeks, 0) AS n,
           COALESCE(ws.sw, 0) AS sw, COALESCE(ws.sww, 0) AS sww) s
       )
       SELECT f.pid,
         f.life_start AS history_start,
         GREATEST($1::date - f.life_start + 1, 0)::int AS history_days,
         GREATEST($1::date - f.life_start + 1, 0) < 30 AS is_new,
         f.n::int AS in_stock_days_90,
         f.oos90::int AS out_of_stock_days_90,
         f.oos365::int AS out_of_stock_days_365,
         (CASE WHEN f.n > 0 THEN round(GREATEST(f.sx, 0) / f.n, 4) ELSE 0 END)::numeric(12, 4) AS avg_daily_sales,
         round(sqrt(v.var_d), 4)::numeric(12, 4) AS daily_sales_std,
         v.variability AS demand_variability,
         -- Unrounded, for planning's ceilings (docs/metrics.md §5 "Rounding"); not stored.
         CASE WHEN f.n > 0 THEN GREATEST(f.sx, 0) / f.n ELSE 0 END AS demand_exact,
         v.var_d AS variance_exact,
         f.avg_stock::numeric(14, 2) AS avg_stock_units_365,
         f.cogs::numeric(14, 2) AS cogs_365d,
         f.profit::numeric(14, 2) AS gross_profit_365d,
         (${bounded("f.margin", 1e6)})::numeric(10, 4) AS margin_365d,
         (${bounded("f.sell_through", 1e6)})::numeric(10, 4) AS sell_through_30d,
         (${bounded("f.turnover", 1e8)})::numeric(12, 4) AS turnover_365d,
         (${bounded("f.gmroi", 1e8)})::numeric(12, 4) AS gmroi_365d
       FROM f JOIN v ON v.pid = f.pid`,
      [d0],
    );
    await conn.exec("DROP TABLE sh_life, sh_base, sh_receipts, sh_prepared, sh_bulk");
    // Its rows are the products this module figured (CREATE TABLE AS reports no count on PGlite).
    const [count] = await conn.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${STOCK_FIGURES_TABLE}`);
    await restore();
    return count?.n ?? 0;
  },
};
