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
import { StockRuns, type StockWalkFigures, walkStock } from "./stock-walk.ts";

const DAY_MS = 86_400_000;
const WORK_MEM = "128MB";

/**
 * The temp table of every product's stock-history figures, named as the product_metrics columns
 * they fill (STOCK_FIGURE_COLUMNS); module planning reads and writes them.
 */
export const STOCK_FIGURES_TABLE = "sh_product";

/**
 * The temp table of the walk's per-product sums (stock-walk.ts, StockWalkFigures), which the
 * figures below and module xyz read (ON COMMIT DROP).
 */
export const STOCK_WALK_TABLE = "sh_walk";
const STOCK_WALK_COLUMNS = [
  "pid",
  "oos365",
  "oos90",
  "stock_days",
  "sx90",
  "out13",
  "sw13",
  "sww13",
  "min13",
  "out52",
  "sx52",
  "sxx52",
] as const;

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
  return { d0: utcDay(asOf), w: utcDay(windowStart) };
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
 * Bulk orders (§3), (pid, pass day, units) for sh_bulk: of the products that may have one
 * (calc_bulk_candidates, left by module product_metrics), the sale lines (completed, quantity > 0)
 * of the last 90 days more than 10 × the product's median line and above its 99th percentile
 * (percentile_cont over those lines), when it has at least 20 of them. The lines come from the run's
 * pass over the order lines; without candidates (the module run without product_metrics) there are
 * none.
 */
async function bulkOrders(ctx: CalcContext): Promise<{ pid: number; day: number; units: number }[]> {
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
  const rows: { pid: number; day: number; units: number }[] = [];
  for (const [k, c] of candidates.entries()) {
    const q = units[k]!;
    if (q.length < 20) continue;
    const sorted = Int32Array.from(q).sort();
    const median = percentileCont(sorted, 0.5);
    const p99 = percentileCont(sorted, 0.99);
    for (let j = 0; j < q.length; j++)
      if (q[j]! > 10 * median && q[j]! > p99) rows.push({ pid: c.pid, day: days[k]![j]!, units: q[j]! });
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
    const { d0, w } = windowOf(asOf);

    // Sorting the million runs for the primary key wants more than the default 4MB: give this
    // module's statements more memory. JIT off, as in the other modules: temp tables have no
    // statistics and row guesses in the millions would make PostgreSQL compile the expressions.
    // Both are put back at the end.
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

    // The runs and the per-product sums of the walk (stock-walk.ts, §2), worked out in the app from
    // the run's pass over the order lines: the statement that grouped a year of lines by product
    // and day and walked them with a window cost the database ≈ 3.6 s of CPU on the 50k set, and
    // the figures below read its million runs twice more (≈ 1.3 s, and module xyz ≈ 2 s).
    //
    // The primary key is dropped before the runs are copied in and added back after: one build of
    // the index (≈ 0.3 s for 1M runs, which come in its order) instead of an index insert per row.
    // The table is locked by the TRUNCATE until the run commits either way, so no reader sees it
    // without.
    await conn.exec("TRUNCATE product_stock_history");
    await conn.exec("ALTER TABLE product_stock_history DROP CONSTRAINT product_stock_history_pkey");
    const bulk = await bulkOrders(ctx);
    const products = await conn.query<{ pid: number; onHand: number; lifeStart: number | null }>(
      `SELECT pid, on_hand AS "onHand", life_start - '1970-01-01'::date AS "lifeStart" FROM sh_life ORDER BY pid`,
    );
    const receipts = await conn.query<{ pid: number; day: number; units: number }>(
      `SELECT (key >> 12)::int AS pid, $1::date - '1970-01-01'::date + ((key & 4095) >> 2)::int AS day, -v AS units
       FROM sh_receipts ORDER BY key`,
      [w],
    );
    const figures: StockWalkFigures[] = [];
    const walk = {
      d0: passDay(asOf),
      lines: await orderLinesOf(ctx),
      products,
      receipts,
      bulk,
    };
    // In a run, the runs are kept for module stock_series too (RunShared.keepStockRuns).
    const keep = ctx.shared ? new StockRuns() : undefined;
    await conn.copyCsv({
      table: "product_stock_history",
      columns: ["pid", "valid_from", "valid_to", "stock", "sold_first_day"],
      source: walkStock(walk, figures, keep),
      header: false,
      binary: true,
    });
    if (keep) ctx.shared!.keepStockRuns(asOf, keep);
    await conn.exec(
      "ALTER TABLE product_stock_history ADD CONSTRAINT product_stock_history_pkey PRIMARY KEY (pid, valid_from)",
    );
    await conn.exec(
      `DROP TABLE IF EXISTS ${STOCK_WALK_TABLE};
       CREATE TEMP TABLE ${STOCK_WALK_TABLE} (
         pid int PRIMARY KEY, oos365 int8, oos90 int8, stock_days int8, sx90 int8,
         out13 int, sw13 int8, sww13 int8, min13 int8, out52 int, sx52 int8, sxx52 int8
       ) ON COMMIT DROP`,
    );
    const nul = (v: number | null) => (v === null ? "" : v);
    await conn.copyCsv({
      table: STOCK_WALK_TABLE,
      columns: STOCK_WALK_COLUMNS,
      source: lineChunks(
        (function* () {
          for (const f of figures)
            yield `${f.pid},${nul(f.oos365)},${nul(f.oos90)},${nul(f.stockDays)},${nul(f.sx90)},${f.out13},${f.sw13},${f.sww13},${nul(f.min13)},${f.out52},${f.sx52},${f.sxx52}\n`;
        })(),
      ),
      header: false,
    });
    await conn.exec(`ANALYZE ${STOCK_WALK_TABLE}`);

    // Per product: days out of stock (a run with stock ≤ 0 is out of stock on every day except its
    // first when that day had sales), stock-days, Σx of the daily units of the last 90 days (d̄),
    // and σd from the weekly units of the last 13 weeks: the walk's sums (sh_walk). The ratios of
    // §10 are taken from the stored (rounded) figures, so an explanation built from them adds up.
    // Bulk orders (§3): of the products that may have one (calc_bulk_candidates, from module
    // product_metrics' pass), the sale lines of the last 90 days more than 10 × the product's median
    // line and above its 99th percentile, when it has at least 20 such lines (bulkOrders: only their
    // lines are kept, from the run's pass over the order lines). They stay in the sales figures and
    // d̄ but are left out of σd (of their week's units); sh_bulk lists them for the explanation.
    await conn.exec(
      "DROP TABLE IF EXISTS sh_bulk; CREATE TEMP TABLE sh_bulk (pid int, day date, units int) ON COMMIT DROP",
    );
    if (bulk.length)
      await conn.copyCsv({
        table: "sh_bulk",
        columns: ["pid", "day", "units"],
        source: lineChunks(bulk.map((b) => `${b.pid},${passDayText(b.day)},${b.units}\n`)),
        header: false,
      });
    const d90 = "($1::date - 89)";
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
         SELECT pid, oos365, oos90, stock_days, sx90 AS sx, out13, sw13, sww13, min13 FROM ${STOCK_WALK_TABLE}
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
       -- The bulk orders listed, for the explanation.
       bk AS (
         SELECT pid, jsonb_agg(jsonb_build_object('day', to_char(day, 'YYYY-MM-DD'), 'units', units) ORDER BY day, units DESC) AS orders
         FROM sh_bulk GROUP BY pid
       ),
       -- σd² = σ_week² ÷ 7 over the n in-stock weeks (§3); 0 when n < 2. Σw² is a numeric of the
       -- scale PostgreSQL gives a sum of squares of whole numbers (numeric ^ 2): the scale of its
       -- smallest term's square, so the quotients below carry the same digits.
       v AS (
         SELECT l.pid,
           CASE WHEN s.n >= 2 THEN GREATEST((s.sww - s.sw ^ 2 / s.n) / (s.n - 1), 0) / 7 ELSE 0 END AS var_d,
           CASE WHEN bk.pid IS NOT NULL THEN jsonb_build_object('bulk', bk.orders) END AS variability
         FROM sh_life l
         LEFT JOIN r ON r.pid = l.pid
         LEFT JOIN bk ON bk.pid = l.pid,
         LATERAL (SELECT ${weeksOfLife} - COALESCE(r.out13, 0) AS n,
           COALESCE(r.sw13, 0)::numeric AS sw,
           CASE WHEN r.min13 IS NULL THEN 0 ELSE r.sww13::numeric + 0 * r.min13::numeric ^ 2 END AS sww) s
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
