// Module stock_history of the planning engine (docs/metrics.md §2, §3, §10): closing stock
// reconstructed backwards from today's stock, stored as sparse runs in product_stock_history, and
// the per-product figures that follow from it (days in / out of stock, demand d̄ and σd, average
// stock, margin, sell-through, turnover, GMROI), written in one UPDATE of product_metrics.
import type { CalcModule } from "../calculate.ts";
import { utcDay, utcMidnight } from "./context.ts";

const DAY_MS = 86_400_000;

/**
 * A ratio rounded to 4 decimals when it fits its numeric(p, 4) column, else null: a tiny
 * denominator (a few cents of revenue, a hundredth of a unit of average stock) must not overflow
 * the column and fail the whole run.
 */
function bounded(ratio: string, limit: number): string {
  return `CASE WHEN abs(${ratio}) < ${limit} THEN round(${ratio}, 4) END`;
}

export const stockHistoryModule: CalcModule = {
  name: "stock_history",
  tables: ["product_stock_history"],
  async run({ conn, asOf }) {
    const d0 = utcDay(asOf);
    // The first day of the last 365 days, as a date and as the moment it starts.
    const windowStart = new Date(utcMidnight(asOf).getTime() - 364 * DAY_MS);
    const w = utcDay(windowStart);

    await conn.exec("DROP TABLE IF EXISTS sh_life, sh_events, sh_runs");

    // Life start (§2): created, first_received, first sale (product_metrics.first_sold: completed,
    // up to asOf), first receipt up to D0. LEAST skips nulls; created_at is never null.
    await conn.query(
      `CREATE TEMP TABLE sh_life ON COMMIT DROP AS
       SELECT m.pid, m.on_hand,
         LEAST((p.created_at AT TIME ZONE 'UTC')::date, p.first_received, m.first_sold, fr.first_receipt) AS life_start
       FROM product_metrics m
       JOIN products p ON p.pid = m.pid
       LEFT JOIN (
         SELECT l.pid, MIN(r.received_date) AS first_receipt
         FROM receivings r JOIN po_lines l ON l.id = r.po_line_id
         WHERE r.received_date <= $1::date
         GROUP BY l.pid
       ) fr ON fr.pid = m.pid`,
      [d0],
    );

    // Event days in the last 365 days: units sold and received per product and UTC day. Every
    // event is on or after its product's life start (which is the earliest of them), and the
    // closing stock of a day only depends on the events after it, so older events are not needed.
    await conn.query(
      `CREATE TEMP TABLE sh_events ON COMMIT DROP AS
       WITH sales AS (
         SELECT pid, (order_date AT TIME ZONE 'UTC')::date AS day, SUM(quantity)::int AS sold
         FROM order_lines
         WHERE status = 'completed' AND order_date >= $3::timestamptz AND order_date <= $4::timestamptz
         GROUP BY 1, 2
       ),
       received AS (
         SELECT l.pid, r.received_date AS day, SUM(r.qty)::int AS received
         FROM receivings r JOIN po_lines l ON l.id = r.po_line_id
         WHERE r.received_date BETWEEN $1::date AND $2::date
         GROUP BY 1, 2
       )
       SELECT COALESCE(s.pid, r.pid) AS pid, COALESCE(s.day, r.day) AS day,
         COALESCE(s.sold, 0) AS sold, COALESCE(r.received, 0) AS received
       FROM sales s FULL JOIN received r ON r.pid = s.pid AND r.day = s.day`,
      [w, d0, windowStart, asOf],
    );

    // One run per event day: its closing stock is on_hand minus the net change of every later
    // event (a descending running sum), and it lasts until the day before the next event or D0.
    // `earliest` marks each product's first event in the window, for the run before it.
    await conn.query(
      `CREATE TEMP TABLE sh_runs ON COMMIT DROP AS
       SELECT e.pid, e.day AS valid_from,
         COALESCE(LAG(e.day) OVER w - 1, $1::date) AS valid_to,
         l.on_hand - COALESCE(SUM(e.received - e.sold) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS stock,
         e.sold AS sold_first_day,
         e.received - e.sold AS net,
         LEAD(e.day) OVER w IS NULL AS earliest
       FROM sh_events e JOIN sh_life l ON l.pid = e.pid
       WINDOW w AS (PARTITION BY e.pid ORDER BY e.day DESC)`,
      [d0],
    );
    // The run that starts at the window start or the life start, whichever is later, when no event
    // falls on that day: the stock before the earliest event, or on_hand for a product without
    // events in the window (its whole life in the window is one run).
    await conn.query(
      `INSERT INTO sh_runs (pid, valid_from, valid_to, stock, sold_first_day, net, earliest)
       SELECT l.pid, GREATEST(l.life_start, $2::date), COALESCE(r.valid_from - 1, $1::date),
         COALESCE(r.stock - r.net, l.on_hand), 0, 0, false
       FROM sh_life l
       LEFT JOIN sh_runs r ON r.pid = l.pid AND r.earliest
       WHERE GREATEST(l.life_start, $2::date) <= $1::date
         AND (r.pid IS NULL OR r.valid_from > GREATEST(l.life_start, $2::date))`,
      [d0, w],
    );

    await conn.exec("TRUNCATE product_stock_history");
    await conn.exec(
      `INSERT INTO product_stock_history (pid, valid_from, valid_to, stock, sold_first_day)
       SELECT pid, valid_from, valid_to, stock, sold_first_day FROM sh_runs ORDER BY pid, valid_from`,
    );

    // Per product: days out of stock (a run with stock ≤ 0 is out of stock on every day except its
    // first when that day had sales), stock-days, and Σx, Σx² of the daily units of the last 90
    // days. Runs start on or after the life start and the window start, so only the 90-day figures
    // need clipping. The ratios of §10 are taken from the stored (rounded) figures, so an
    // explanation built from them adds up.
    const d90 = "($1::date - 89)";
    const d365 = "($1::date - 364)";
    const days90 = `GREATEST($1::date - GREATEST(l.life_start, ${d90}) + 1, 0)`;
    const days365 = `GREATEST($1::date - GREATEST(l.life_start, ${d365}) + 1, 0)`;
    const cogs = "CASE WHEN p.cost_price IS NOT NULL THEN round(m.units_365d * p.cost_price, 2) END";
    const profit = `(m.revenue_365d - ${cogs})`;
    const avgStock = `COALESCE(round(r.stock_days / NULLIF(${days365}, 0), 2), 0)`;
    const stockCost = `NULLIF(${avgStock} * p.cost_price, 0)`;
    const updated = await conn.execute(
      `WITH r AS (
         SELECT pid,
           COALESCE(SUM(valid_to - valid_from + 1 - CASE WHEN sold_first_day > 0 THEN 1 ELSE 0 END)
             FILTER (WHERE stock <= 0), 0) AS oos365,
           COALESCE(SUM(valid_to - GREATEST(valid_from, ${d90}) + 1
               - CASE WHEN sold_first_day > 0 AND valid_from >= ${d90} THEN 1 ELSE 0 END)
             FILTER (WHERE stock <= 0 AND valid_to >= ${d90}), 0) AS oos90,
           SUM(GREATEST(stock, 0)::numeric * (valid_to - valid_from + 1)) AS stock_days
         FROM sh_runs GROUP BY pid
       ),
       d AS (
         SELECT pid, SUM(sold)::numeric AS sx, SUM(sold::numeric * sold) AS sxx
         FROM sh_events WHERE day >= ${d90} AND sold <> 0 GROUP BY pid
       ),
       f AS (
         SELECT l.pid, l.life_start, ${days90} - COALESCE(r.oos90, 0) AS n,
           COALESCE(r.oos90, 0) AS oos90, COALESCE(r.oos365, 0) AS oos365,
           COALESCE(d.sx, 0) AS sx, COALESCE(d.sxx, 0) AS sxx,
           ${avgStock} AS avg_stock, ${cogs} AS cogs, ${profit} AS profit,
           ${profit} / NULLIF(m.revenue_365d, 0) AS margin,
           m.units_30d::numeric / NULLIF(m.units_30d + m.on_hand, 0) AS sell_through,
           ${cogs} / ${stockCost} AS turnover,
           ${profit} / ${stockCost} AS gmroi
         FROM sh_life l
         JOIN product_metrics m ON m.pid = l.pid
         JOIN products p ON p.pid = l.pid
         LEFT JOIN r ON r.pid = l.pid
         LEFT JOIN d ON d.pid = l.pid
       )
       UPDATE product_metrics m SET
         history_start = f.life_start,
         history_days = GREATEST($1::date - f.life_start + 1, 0),
         is_new = GREATEST($1::date - f.life_start + 1, 0) < 30,
         in_stock_days_90 = f.n,
         out_of_stock_days_90 = f.oos90,
         out_of_stock_days_365 = f.oos365,
         avg_daily_sales = CASE WHEN f.n > 0 THEN round(f.sx / f.n, 4) ELSE 0 END,
         daily_sales_std = CASE WHEN f.n >= 2
           THEN round(sqrt(GREATEST((f.sxx - f.sx * f.sx / f.n) / (f.n - 1), 0)), 4) ELSE 0 END,
         avg_stock_units_365 = f.avg_stock,
         cogs_365d = f.cogs,
         gross_profit_365d = f.profit,
         margin_365d = ${bounded("f.margin", 1e6)},
         sell_through_30d = ${bounded("f.sell_through", 1e6)},
         turnover_365d = ${bounded("f.turnover", 1e8)},
         gmroi_365d = ${bounded("f.gmroi", 1e8)}
       FROM f
       WHERE m.pid = f.pid`,
      [d0],
    );
    await conn.exec("DROP TABLE sh_life, sh_events, sh_runs");
    return updated;
  },
};
