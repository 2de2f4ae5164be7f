// Module planning of the planning engine (docs/metrics.md §5–§7, §9): demand rate, safety stock,
// reorder point and quantity, overstock, days of cover, the stock-out date counting incoming
// purchase orders, status and ABC class of every product. Set-based: a few temp tables, then ONE
// UPDATE of product_metrics. Reads what stock_history, lead_times and forecast stored before it.
import { normalQuantile } from "../../../shared/stats.ts";
import {
  type GlobalSettingValues,
  loadGlobalSettingValues,
} from "../../modules/config/planning-parameters.ts";
import type { CalcModule } from "../calculate.ts";
import { createParametersTable, utcDay } from "./context.ts";

/** The product_metrics column each ABC basis ranks by (§9); a fixed list, never user text. */
const ABC_BASIS_COLUMN: Record<GlobalSettingValues["abc_calculation_basis"], string> = {
  revenue_30d: "revenue_30d",
  sales_30d: "units_30d",
  lifetime_revenue: "lifetime_revenue",
};

const TEMP_TABLES = [
  "calc_plan_base",
  "calc_plan_arrivals",
  "calc_plan_stockout",
  "calc_plan_abc",
  "calc_plan",
];

export const planningModule: CalcModule = {
  name: "planning",
  tables: [],
  async run({ conn, asOf }) {
    const d0 = utcDay(asOf);
    const g = await loadGlobalSettingValues(conn);
    // z once per run, in JS (PostgreSQL has no normal quantile); passed as exact decimal text.
    const z = normalQuantile(g.default_service_level);
    const basis = ABC_BASIS_COLUMN[g.abc_calculation_basis] ?? "revenue_30d";

    await createParametersTable(conn);
    await conn.exec(TEMP_TABLES.map((t) => `DROP TABLE IF EXISTS ${t};`).join("\n"));

    // Inputs per product: d (§5: d̄, or the category profile for a new product), L, σL, settings.
    // Primary category = the linked category with the highest level (ties: smallest id); its
    // profile = mean d̄ of the established (not new, not discontinued) products linked directly to it.
    await conn.exec(
      `CREATE TEMP TABLE calc_plan_base ON COMMIT DROP AS
       WITH prim AS (
         SELECT DISTINCT ON (pc.pid) pc.pid, pc.category_id
         FROM product_categories pc
         JOIN categories c ON c.id = pc.category_id
         JOIN product_metrics m ON m.pid = pc.pid AND m.is_new
         ORDER BY pc.pid, c.level DESC, c.id
       ),
       profile AS (
         SELECT pc.category_id, round(avg(m.avg_daily_sales), 4) AS d
         FROM product_categories pc
         JOIN product_metrics m ON m.pid = pc.pid AND NOT m.is_new
         JOIN products p ON p.pid = pc.pid AND NOT p.discontinued
         WHERE pc.category_id IN (SELECT category_id FROM prim)
         GROUP BY pc.category_id
       )
       SELECT m.pid, m.on_hand, m.on_order, m.is_new, m.in_stock_days_90,
         m.avg_daily_sales AS dbar, m.daily_sales_std AS sd,
         COALESCE(m.lead_time_days, cp.lead_time_days)::numeric AS lt,
         COALESCE(m.lead_time_measured_std, 0)::numeric AS slt,
         CASE WHEN m.is_new AND pf.d IS NOT NULL THEN pf.d ELSE m.avg_daily_sales END AS d,
         CASE WHEN m.is_new AND pf.d IS NOT NULL THEN 'category' ELSE 'history' END AS demand_source,
         cp.days_of_stock, cp.safety_stock AS ss_setting, cp.safety_stock_days,
         (cp.excluded OR NOT p.replenishable) AS excluded, p.discontinued,
         GREATEST(p.moq, 1) AS moq, GREATEST(p.case_qty, 1) AS case_qty,
         COALESCE(p.cost_price, 0) AS cost
       FROM product_metrics m
       JOIN products p ON p.pid = m.pid
       JOIN calc_params cp ON cp.pid = m.pid
       LEFT JOIN prim ON prim.pid = m.pid
       LEFT JOIN profile pf ON pf.category_id = prim.category_id`,
    );
    await conn.exec("ALTER TABLE calc_plan_base ADD PRIMARY KEY (pid)");

    // Incoming stock per product and arrival day (§6): open lines' remaining quantity on
    // date_expected, else date_ordered + ⌈L⌉; overdue arrivals count as D0 + 1. Only products
    // whose stock-out date depends on them (on hand > 0, d > 0).
    await conn.query(
      `CREATE TEMP TABLE calc_plan_arrivals ON COMMIT DROP AS
       WITH received AS (SELECT po_line_id, SUM(qty) AS qty FROM receivings GROUP BY po_line_id)
       SELECT l.pid,
         GREATEST(COALESCE(o.date_expected, o.date_ordered + ceil(b.lt)::int), $1::date + 1) AS day,
         SUM(l.ordered_qty - COALESCE(r.qty, 0)) AS qty
       FROM po_lines l
       JOIN purchase_orders o ON o.id = l.po_id AND o.status IN ('ordered', 'partial')
       JOIN calc_plan_base b ON b.pid = l.pid AND b.on_hand > 0 AND b.d > 0
       LEFT JOIN received r ON r.po_line_id = l.id
       WHERE l.ordered_qty > COALESCE(r.qty, 0)
       GROUP BY 1, 2`,
      [d0],
    );

    // Stock-out date: segment i holds Cᵢ = on hand + the first i arrivals and runs out on
    // D0 + ⌈Cᵢ ÷ d⌉; the first segment that runs out before the next arrival (or the last) wins.
    await conn.query(
      `CREATE TEMP TABLE calc_plan_stockout ON COMMIT DROP AS
       WITH pts AS (
         SELECT pid, NULL::date AS day, on_hand::bigint AS qty, d FROM calc_plan_base WHERE on_hand > 0 AND d > 0
         UNION ALL
         SELECT a.pid, a.day, a.qty, b.d FROM calc_plan_arrivals a JOIN calc_plan_base b ON b.pid = a.pid
       ),
       seg AS (
         SELECT pid, day,
           ceil(SUM(qty) OVER w / d) AS days,
           LEAD(day) OVER w - $1::date AS next_days
         FROM pts
         WINDOW w AS (PARTITION BY pid ORDER BY day NULLS FIRST)
       ),
       first_out AS (
         SELECT DISTINCT ON (pid) pid, days
         FROM seg
         WHERE next_days IS NULL OR days < next_days
         ORDER BY pid, day NULLS FIRST
       )
       -- A date millions of years ahead (a tiny d) is left null rather than failing the run.
       SELECT pid, CASE WHEN days <= 2000000000 THEN $1::date + days::int END AS stockout_date
       FROM first_out`,
      [d0],
    );

    // ABC (§9): rank by the basis, highest first, ties by pid; share_before over the positive bases.
    await conn.query(
      `CREATE TEMP TABLE calc_plan_abc ON COMMIT DROP AS
       WITH b AS (SELECT pid, ${basis}::numeric AS basis FROM product_metrics),
       r AS (
         SELECT pid, basis,
           COALESCE(SUM(GREATEST(basis, 0)) OVER (ORDER BY basis DESC, pid
             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before,
           SUM(GREATEST(basis, 0)) OVER () AS total
         FROM b
       )
       SELECT pid, basis,
         CASE WHEN total > 0 THEN round(before / total, 6) END AS share_before,
         CASE WHEN basis > 0 AND before < $1::numeric * total THEN 'A'
              WHEN basis > 0 AND before < $2::numeric * total THEN 'B'
              ELSE 'C' END AS abc_class
       FROM r`,
      [g.abc_a_threshold, g.abc_b_threshold],
    );

    // Safety stock, horizon, F(H) (§5, §6). F(H) is kept to 2 decimals, as stored, and the
    // reorder quantity is computed from that figure.
    await conn.query(
      `CREATE TEMP TABLE calc_plan ON COMMIT DROP AS
       WITH s AS (
         SELECT b.*,
           CASE WHEN b.ss_setting > 0 THEN 'fixed'
                WHEN NOT b.is_new AND b.in_stock_days_90 >= 30 THEN 'statistical'
                ELSE 'days' END AS ss_method,
           CASE WHEN b.ss_setting > 0 THEN b.ss_setting
                WHEN NOT b.is_new AND b.in_stock_days_90 >= 30
                  THEN GREATEST(ceil($2::numeric * sqrt(b.lt * b.sd * b.sd + b.dbar * b.dbar * b.slt * b.slt)), 0)
                ELSE GREATEST(ceil(b.safety_stock_days * b.d), 0) END::int AS ss,
           b.lt + b.days_of_stock AS h,
           floor((b.lt + b.days_of_stock) / 7)::int AS fw,
           f.weekly
         FROM calc_plan_base b
         LEFT JOIN product_forecasts f ON f.pid = b.pid
       ),
       fh AS (
         SELECT s.*,
           CASE WHEN s.demand_source = 'category' OR s.weekly IS NULL THEN round(s.d * s.h, 2)
             ELSE round((
               COALESCE((SELECT SUM(x) FROM unnest(s.weekly[1:LEAST(s.fw, 13)]) AS x), 0)
               + GREATEST(s.fw - 13, 0) * s.weekly[13]
               + (s.h / 7 - s.fw)::float8 * s.weekly[LEAST(s.fw + 1, 13)]
             )::numeric, 2) END AS f_h
         FROM s
       ),
       q AS (
         SELECT fh.*,
           fh.f_h + fh.ss - (fh.on_hand + fh.on_order) AS need,
           ceil(fh.d * fh.lt + fh.ss)::int AS rop,
           GREATEST(0, fh.on_hand - ceil(fh.ss + fh.d * $3::int))::int AS overstock_qty,
           so.stockout_date AS so_date
         FROM fh
         LEFT JOIN calc_plan_stockout so ON so.pid = fh.pid
       ),
       r AS (
         SELECT q.*,
           CASE WHEN q.discontinued OR q.excluded OR q.need <= 0 THEN 0
                ELSE (ceil(GREATEST(ceil(q.need), q.moq)::numeric / q.case_qty) * q.case_qty)::int END AS reorder_qty,
           CASE WHEN q.d = 0 THEN NULL
                WHEN q.on_hand = 0 THEN $1::date
                ELSE q.so_date END AS stockout_date
         FROM q
       )
       SELECT r.pid, r.d AS demand_rate, r.demand_source, r.days_of_stock, r.h AS horizon_days,
         r.f_h AS forecast_horizon_units, r.ss AS safety_stock, r.ss_method AS safety_stock_method,
         round(r.d * r.lt, 2) AS lead_time_demand, r.rop AS reorder_point,
         r.reorder_qty, round(r.reorder_qty * r.cost, 2) AS reorder_value,
         r.overstock_qty, round(r.overstock_qty * r.cost, 2) AS overstock_value,
         CASE WHEN r.d > 0 AND r.on_hand / r.d < 99999999999 THEN round(r.on_hand / r.d, 1) END AS days_of_cover,
         r.stockout_date,
         CASE WHEN r.discontinued THEN 'discontinued'
              WHEN r.excluded THEN 'excluded'
              WHEN r.is_new THEN 'new'
              WHEN r.d > 0 AND r.stockout_date < $1::date + $4::int THEN 'critical'
              WHEN r.rop > 0 AND r.on_hand + r.on_order <= r.rop THEN 'reorder'
              WHEN r.overstock_qty > 0 THEN 'overstocked'
              ELSE 'healthy' END AS status,
         a.abc_class, a.basis AS abc_basis_value, a.share_before AS abc_share_before
       FROM r
       JOIN calc_plan_abc a ON a.pid = r.pid`,
      [d0, String(z), g.overstock_days, g.low_stock_days],
    );

    const rows = await conn.execute(
      `UPDATE product_metrics m SET
         demand_rate = c.demand_rate, demand_source = c.demand_source, days_of_stock = c.days_of_stock,
         horizon_days = c.horizon_days, forecast_horizon_units = c.forecast_horizon_units,
         service_level = $1::numeric, z_score = round($2::numeric, 4),
         safety_stock = c.safety_stock, safety_stock_method = c.safety_stock_method,
         lead_time_demand = c.lead_time_demand, reorder_point = c.reorder_point,
         reorder_qty = c.reorder_qty, reorder_value = c.reorder_value,
         overstock_qty = c.overstock_qty, overstock_value = c.overstock_value,
         days_of_cover = c.days_of_cover, stockout_date = c.stockout_date, status = c.status,
         abc_class = c.abc_class, abc_basis_value = c.abc_basis_value, abc_share_before = c.abc_share_before
       FROM calc_plan c
       WHERE c.pid = m.pid`,
      [g.default_service_level, String(z)],
    );
    await conn.exec(TEMP_TABLES.map((t) => `DROP TABLE ${t};`).join("\n"));
    return rows;
  },
};
