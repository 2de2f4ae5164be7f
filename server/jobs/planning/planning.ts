// Module planning of the planning engine (docs/metrics.md §5–§7, §9): demand rate, safety stock,
// reorder point and quantity, overstock, days of cover, the stock-out date counting incoming
// purchase orders, status and ABC class of every product. Set-based: a few temp tables, then ONE
// UPDATE of product_metrics (forecast_method included, from product_forecasts). Reads what forecast
// stored before it, and stock_history's and lead_times' per-product figures from their temp tables,
// which this UPDATE also writes into product_metrics, with xyz's XYZ figures (three full UPDATEs of
// the wide rows less). Run on its own in a later transaction (no such tables), it reads the figures
// stored in product_metrics instead, and writes only its own.
import { normalQuantile } from "../../../shared/stats.ts";
import { isProductCategorySql } from "../../modules/config/category-types.ts";
import {
  type GlobalSettingValues,
  loadGlobalSettingValues,
} from "../../modules/config/planning-parameters.ts";
import {
  anyPromotionSql,
  promotionAdjustmentSql,
  stoppedReorderSql,
} from "../../modules/discounts/promotion-layer.ts";
import { activeOverridesSql, calendarWeeks } from "../../modules/forecasting/forecast-weeks.ts";
import { APP_OPEN_LINES_SQL } from "../../modules/purchasing/open-orders.ts";
import type { CalcModule } from "../calculate.ts";
import { createParametersTable, setLocal, utcDay } from "./context.ts";
import { LEAD_TIMES_TABLE } from "./lead-times.ts";
import { STOCK_FIGURE_COLUMNS, STOCK_FIGURES_TABLE } from "./stock-history.ts";
import { XYZ_COLUMNS, XYZ_TABLE } from "./xyz.ts";

/** The columns of lead_times' temp table, which are product_metrics' columns of the same names. */
const LEAD_TIME_COLUMNS = [
  "lead_time_configured",
  "lead_time_configured_source",
  "lead_time_measured",
  "lead_time_measured_std",
  "lead_time_measured_samples",
  "lead_time_measured_level",
  "lead_time_days",
  "lead_time_source",
] as const;

/** The product_metrics column each ABC basis ranks by (§9); a fixed list, never user text. */
const ABC_BASIS_COLUMN: Record<GlobalSettingValues["abc_calculation_basis"], string> = {
  revenue_30d: "revenue_30d",
  sales_30d: "units_30d",
  lifetime_revenue: "lifetime_revenue",
};

/**
 * F(H) from the weekly forecast `f.weekly` and `dm.hw` = H ÷ 7 (§6): week i (1…13) counts with the weight
 * min(max(hw − (i − 1), 0), 1) (whole weeks 1, the week H ends in its fraction, later weeks 0), and
 * week 13 repeats for the max(hw − 13, 0) weeks beyond it. One expression, no per-row subquery.
 */
export const HORIZON_FORECAST = [
  ...Array.from({ length: 13 }, (_, i) => `f.weekly[${i + 1}] * LEAST(GREATEST(dm.hw - ${i}, 0), 1)`),
  "f.weekly[13] * GREATEST(dm.hw - 13, 0)",
].join("\n               + ");

/**
 * ⌈x⌉ of a figure computed from exact values (docs/metrics.md §5 "Rounding"): d̄ = units ÷ days and
 * the measured lead time are kept at full numeric precision (16 or more significant digits, never
 * rounded to their stored 4 or 2 decimals), and the result is taken to 9 decimals just before the
 * ceiling, so a whole number reached through a division (101 ÷ 7 × 7 = 100.99999999999999998 or
 * 101.00000000000000002) stays that whole number. tests/unit/rounding.test.ts checks these
 * expressions against exact rational arithmetic.
 */
export const ceilExact = (x: string) => `ceil(round((${x})::numeric, 9))`;
/** ROP = ⌈d × L + SS⌉ (§6) */
export const reorderPointSql = (d: string, lt: string, ss: string) => ceilExact(`${d} * ${lt} + ${ss}`);
/** Statistical SS = ⌈z × √(L × σd² + d̄² × σL²)⌉, never below 0 (§5); `variance` is σd². */
export const statisticalSafetyStockSql = (
  z: string,
  lt: string,
  variance: string,
  dbar: string,
  slt: string,
) => `GREATEST(${ceilExact(`${z} * sqrt(${lt} * ${variance} + ${dbar} * ${dbar} * ${slt} * ${slt})`)}, 0)`;
/** Days SS = ⌈safety-stock days × d⌉, never below 0 (§5) */
export const daysSafetyStockSql = (days: string, d: string) => `GREATEST(${ceilExact(`${days} * ${d}`)}, 0)`;
/** Overstock = on hand − ⌈SS + d × overstock days⌉, never below 0 (§7) */
export const overstockSql = (onHand: string, ss: string, d: string, days: string) =>
  `GREATEST(0, ${onHand} - ${ceilExact(`${ss} + ${d} * ${days}`)})`;
/** Reorder quantity for a need > 0 (§6): ⌈need⌉, at least the MOQ, rounded up to whole cases. */
export const reorderQtySql = (need: string, moq: string, caseQty: string) =>
  `ceil(GREATEST(${ceilExact(need)}, ${moq})::numeric / ${caseQty}) * ${caseQty}`;

const TEMP_TABLES = ["calc_plan_base", "calc_plan_arrivals", "calc_plan_stockout", "calc_plan_overrides"];
/** Made only when a promotion reaches past D0 (the products whose reordering one stops). */
const PROMOTION_STOP_TABLE = "calc_plan_promotion_stop";

/**
 * F(H)'s change from the forecast overrides in force (docs/metrics.md "Forecasting page"): each
 * overridden calendar week adds (final − system) × the share of its 7 days inside the horizon
 * (days D0 + 1 … D0 + H; the week starts s days after D0 + 1).
 */
export const OVERRIDE_ADJUSTMENT = `COALESCE((SELECT sum(u.delta * LEAST(GREATEST(dm.h - u.s, 0), 7) / 7.0)
  FROM unnest(ov.s, ov.delta) AS u(s, delta)), 0)`;

export const planningModule: CalcModule = {
  name: "planning",
  tables: [],
  async run({ conn, asOf }) {
    const d0 = utcDay(asOf);
    const g = await loadGlobalSettingValues(conn);
    // z once per run, in JS (PostgreSQL has no normal quantile); passed as exact decimal text.
    const z = normalQuantile(g.default_service_level);
    const basis = ABC_BASIS_COLUMN[g.abc_calculation_basis] ?? "revenue_30d";

    const restore = await setLocal(conn, { jit: "off" });

    await createParametersTable(conn);
    await conn.exec(
      [...TEMP_TABLES, PROMOTION_STOP_TABLE].map((t) => `DROP TABLE IF EXISTS ${t};`).join("\n"),
    );
    // Modules stock_history and lead_times ran in this transaction: their figures are in their temp
    // tables (ON COMMIT DROP), not yet in product_metrics. Each is read from there when present (sh,
    // lt), else as stored (pm). Module xyz's figures too (xz), which this module only writes.
    const [found] = await conn.query<{ sh: boolean; lt: boolean; xz: boolean }>(
      `SELECT to_regclass('pg_temp.${STOCK_FIGURES_TABLE}') IS NOT NULL AS sh,
         to_regclass('pg_temp.${LEAD_TIMES_TABLE}') IS NOT NULL AS lt,
         to_regclass('pg_temp.${XYZ_TABLE}') IS NOT NULL AS xz`,
    );
    const sh = found?.sh ? "sh" : "pm";
    const lt = found?.lt ? "lt" : "pm";
    const xz = found?.xz === true;
    // Their row counts (and pid's statistics) for the planner: unanalyzed, each was taken for half
    // its 50k rows, and the UPDATE below hashed the wide side of every join (0.35 s of the
    // database's CPU more on the 50k set than with the ≈ 0.04 s these take).
    const analyzed = [
      found?.sh && STOCK_FIGURES_TABLE,
      found?.lt && LEAD_TIMES_TABLE,
      xz && XYZ_TABLE,
    ].filter(Boolean);
    if (analyzed.length) await conn.exec(`ANALYZE ${analyzed.map((t) => `${t} (pid)`).join(", ")}`);

    // The forecast overrides in force, per product: each overridden week's start (days after D0 + 1)
    // and change. Only when there are any: without overrides F(H) is the forecast's alone.
    const cal = calendarWeeks(d0);
    await conn.query(
      `CREATE TEMP TABLE calc_plan_overrides ON COMMIT DROP AS
       SELECT pid, array_agg(${cal.r} + 7 * (j - 1)) AS s, array_agg(final - system) AS delta
       FROM (${activeOverridesSql("$1::date", `${cal.r}`)}) a
       WHERE final <> system
       GROUP BY pid`,
      [cal.weeks[0]],
    );
    const [ovCount] = await conn.query<{ n: number }>("SELECT count(*)::int AS n FROM calc_plan_overrides");
    const overrides = (ovCount?.n ?? 0) > 0;

    // One row per product with everything the rules need, each costly figure computed once:
    // - d (§5): d̄, or for a new product its category profile. Primary category = the linked
    //   category with the highest level (ties: smallest id); its profile = mean d̄ of the
    //   established (not new, not discontinued) products linked directly to it; without such
    //   products, the profile of the nearest ancestor (parent, grandparent, …) that has them.
    // - SS and its method (§5), H and F(H) (§6: d × H for every new product and for a product
    //   without a forecast row; kept to 2 decimals, as stored: the reorder quantity is computed
    //   from that figure), the ABC rank (§9, over the positive bases).
    // product_metrics is read once (m), the rest works from that copy.
    // F(H) exact (the reorder quantity's need is computed from it); stored to 2 decimals.
    const fhBase = `CASE WHEN dm.is_new OR f.weekly IS NULL THEN dm.d * dm.h ELSE (${HORIZON_FORECAST})::numeric END`;
    const fhExact = overrides ? `GREATEST(0, ${fhBase} + (${OVERRIDE_ADJUSTMENT})::numeric)` : fhBase;
    await conn.query(
      `CREATE TEMP TABLE calc_plan_base ON COMMIT DROP AS
       WITH m AS MATERIALIZED (
         SELECT pm.pid, pm.on_hand, pm.on_order, ${sh}.is_new, ${sh}.in_stock_days_90,
           -- Exact values (ceilExact): d̄ and σd² unrounded, the measured lead time and its
           -- deviation unrounded; the stored (rounded) figures only when the modules did not run.
           ${sh === "sh" ? "sh.demand_exact" : "pm.avg_daily_sales"} AS dbar,
           ${sh === "sh" ? "sh.variance_exact" : "pm.daily_sales_std * pm.daily_sales_std"} AS var_d,
           COALESCE(${lt === "lt" ? "lt.lead_time_exact" : "pm.lead_time_days"}, cp.lead_time_days)::numeric AS lt,
           COALESCE(${lt === "lt" ? "lt.lead_time_std_exact" : "pm.lead_time_measured_std"}, 0)::numeric AS slt,
           cp.days_of_stock, cp.safety_stock AS ss_setting, cp.safety_stock_days,
           (cp.excluded OR NOT p.replenishable OR p.kind <> 'merchandise') AS excluded, p.discontinued,
           p.kind = 'merchandise' AS merch,
           GREATEST(p.moq, 1) AS moq, GREATEST(p.case_qty, 1) AS case_qty,
           COALESCE(p.cost_price, 0) AS cost,
           CASE WHEN p.kind = 'merchandise' THEN pm.${basis}::numeric END AS basis
         FROM product_metrics pm
         JOIN products p ON p.pid = pm.pid
         JOIN calc_params cp ON cp.pid = pm.pid
         ${sh === "sh" ? `LEFT JOIN ${STOCK_FIGURES_TABLE} sh ON sh.pid = pm.pid` : ""}
         ${lt === "lt" ? `LEFT JOIN ${LEAD_TIMES_TABLE} lt ON lt.pid = pm.pid` : ""}
       ),
       prim AS (
         SELECT DISTINCT ON (pc.pid) pc.pid, pc.category_id
         FROM product_categories pc
         JOIN categories c ON c.id = pc.category_id AND ${isProductCategorySql("c")}
         WHERE pc.pid IN (SELECT pid FROM m WHERE is_new)
         ORDER BY pc.pid, c.level DESC, c.id
       ),
       -- The primary categories and their ancestors, depth 0 = the category itself. The depth cap
       -- stops a cycle in the tree (a category that is its own ancestor).
       up AS MATERIALIZED (
         WITH RECURSIVE walk AS (
           SELECT DISTINCT category_id AS start, category_id, 0 AS depth FROM prim
           UNION ALL
           SELECT w.start, c.parent_id, w.depth + 1
           FROM walk w JOIN categories c ON c.id = w.category_id
           JOIN categories parent ON parent.id = c.parent_id AND ${isProductCategorySql("parent")}
           WHERE w.depth < 100
         )
         SELECT * FROM walk
       ),
       profile AS (
         SELECT pc.category_id, avg(m.dbar) AS d
         FROM product_categories pc
         JOIN m ON m.pid = pc.pid AND NOT m.is_new AND NOT m.discontinued AND m.merch
         WHERE pc.category_id IN (SELECT category_id FROM up)
         GROUP BY pc.category_id
       ),
       -- Per primary category: the profile of the nearest category up its tree that has one.
       nearest AS (
         SELECT DISTINCT ON (up.start) up.start AS category_id, pf.d
         FROM up JOIN profile pf ON pf.category_id = up.category_id
         ORDER BY up.start, up.depth
       ),
       dm AS MATERIALIZED (
         SELECT m.*,
           CASE WHEN m.is_new AND pf.d IS NOT NULL THEN pf.d ELSE m.dbar END AS d,
           CASE WHEN m.is_new AND pf.d IS NOT NULL THEN 'category' ELSE 'history' END AS demand_source,
           m.lt + m.days_of_stock AS h,
           ((m.lt + m.days_of_stock) / 7)::float8 AS hw
         FROM m
         LEFT JOIN prim ON prim.pid = m.pid
         LEFT JOIN nearest pf ON pf.category_id = prim.category_id
       )
       SELECT dm.pid, dm.on_hand, dm.on_order, dm.is_new, dm.lt, dm.days_of_stock, dm.excluded, dm.merch,
         dm.discontinued, dm.moq, dm.case_qty, dm.cost, dm.d, dm.demand_source, dm.h,
         CASE WHEN dm.ss_setting > 0 THEN 'fixed'
              WHEN NOT dm.is_new AND dm.in_stock_days_90 >= 30 THEN 'statistical'
              ELSE 'days' END AS ss_method,
         CASE WHEN dm.ss_setting > 0 THEN dm.ss_setting
              WHEN NOT dm.is_new AND dm.in_stock_days_90 >= 30
                THEN ${statisticalSafetyStockSql("$1::numeric", "dm.lt", "dm.var_d", "dm.dbar", "dm.slt")}
              ELSE ${daysSafetyStockSql("dm.safety_stock_days", "dm.d")} END::int AS ss,
         round(${fhExact}, 2) AS f_h,
         ${fhExact} AS f_h_exact,
         f.method AS forecast_method,
         dm.basis,
         COALESCE(SUM(GREATEST(dm.basis, 0)) OVER (ORDER BY dm.basis DESC NULLS LAST, dm.pid
           ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS abc_before,
         SUM(GREATEST(dm.basis, 0)) OVER () AS abc_total
       FROM dm
       LEFT JOIN product_forecasts f ON f.pid = dm.pid
       ${overrides ? "LEFT JOIN calc_plan_overrides ov ON ov.pid = dm.pid" : ""}`,
      [String(z)],
    );
    await conn.exec("ALTER TABLE calc_plan_base ADD PRIMARY KEY (pid)");

    // Saved promotions (docs/metrics.md §16): F(H) gains the promotion layer's change, and the
    // products of a stop_reordering promotion running on D0 + 1 get no reorder quantity. Only when a
    // promotion reaches past D0: otherwise nothing is read or joined.
    const [promo] = await conn.query<{ any: boolean }>(`SELECT ${anyPromotionSql("$1::date")} AS any`, [d0]);
    const promotions = promo?.any ?? false;
    if (promotions) {
      await conn.query(
        `UPDATE calc_plan_base b SET f_h = round(GREATEST(0, b.f_h_exact + a.adj::numeric), 2),
           f_h_exact = GREATEST(0, b.f_h_exact + a.adj::numeric)
         FROM (${promotionAdjustmentSql("$1::date", "calc_plan_base")}) a
         WHERE a.pid = b.pid AND a.adj <> 0`,
        [d0],
      );
      await conn.query(
        `CREATE TEMP TABLE ${PROMOTION_STOP_TABLE} ON COMMIT DROP AS ${stoppedReorderSql("$1::date + 1")}`,
        [d0],
      );
    }

    // Incoming stock per product and arrival day (§6): open lines' remaining quantity (receipts
    // dated up to D0 count as received, §1) on date_expected, else date_ordered + ⌈L⌉; overdue
    // arrivals count as D0 + 1. Only products whose stock-out date depends on them (on hand > 0, d > 0).
    // Only the open lines' receipts are summed (most receipts are of closed orders).
    await conn.query(
      `CREATE TEMP TABLE calc_plan_arrivals ON COMMIT DROP AS
       WITH open_lines AS (
         SELECT l.id, l.pid, l.ordered_qty, o.date_expected, o.date_ordered
         FROM po_lines l
         JOIN purchase_orders o ON o.id = l.po_id AND o.status IN ('ordered', 'partial')
       ),
       received AS (
         SELECT po_line_id, SUM(qty) AS qty FROM receivings
         WHERE received_date <= $1::date AND po_line_id IN (SELECT id FROM open_lines)
         GROUP BY po_line_id
       ),
       -- Imported open lines, then the open lines of app POs that count (open-orders.ts).
       incoming AS (
         SELECT l.pid, l.date_expected, l.date_ordered, l.ordered_qty - COALESCE(r.qty, 0) AS qty
         FROM open_lines l
         LEFT JOIN received r ON r.po_line_id = l.id
         WHERE l.ordered_qty > COALESCE(r.qty, 0)
         UNION ALL
         SELECT pid, date_expected, date_ordered, open_qty FROM (${APP_OPEN_LINES_SQL}) app
       )
       SELECT l.pid,
         GREATEST(COALESCE(l.date_expected, l.date_ordered + ceil(b.lt)::int), $1::date + 1) AS day,
         SUM(l.qty) AS qty
       FROM incoming l
       JOIN calc_plan_base b ON b.pid = l.pid AND b.on_hand > 0 AND b.d > 0
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
           ${ceilExact("SUM(qty) OVER w / d")} AS days,
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

    // The one UPDATE: reorder point and quantity, overstock, cover, stock-out date, status (§6, §7)
    // and ABC class (§9) from the rows above, and stock_history's and lead_times' figures when they
    // left them (every product here has its row in both: calc_plan_base comes from product_metrics,
    // products and calc_params, sh_product from product_metrics and products, lt_product from
    // products and calc_params, and calc_params has every product). xyz's figures likewise, but
    // xyz_product holds only the products it figured (merchandise with a life start): the others
    // keep their XYZ columns as they are. The
    // figures used more than once (need, reorder point, overstock, stock-out date, reorder
    // quantity) are computed once per row in the derived tables below: OFFSET 0 keeps the planner
    // from merging them into the UPDATE, which would copy each expression into every use.
    // (is_new is calc_plan_base's own column already, read from sh_product above.)
    const shColumns = sh === "sh" ? STOCK_FIGURE_COLUMNS : [];
    const ltColumns = lt === "lt" ? LEAD_TIME_COLUMNS : [];
    const carried = [
      ...shColumns.filter((c) => c !== "is_new").map((c) => `, sh.${c}`),
      ...ltColumns.map((c) => `, lt.${c}`),
      ...(xz ? [", xz.pid IS NOT NULL AS xyz_figured", ...XYZ_COLUMNS.map((c) => `, xz.${c}`)] : []),
    ];
    const xyzSet = xz
      ? XYZ_COLUMNS.map((c) => `, ${c} = CASE WHEN x.xyz_figured THEN x.${c} ELSE m.${c} END`).join("")
      : "";
    const rows = await conn.execute(
      `UPDATE product_metrics m SET
         demand_rate = x.d, demand_source = x.demand_source, days_of_stock = x.days_of_stock,
         horizon_days = x.h, forecast_horizon_units = x.f_h, forecast_method = x.forecast_method,
         service_level = $4::numeric, z_score = round($5::numeric, 4),
         safety_stock = x.ss, safety_stock_method = x.ss_method,
         lead_time_demand = round(x.d * x.lt, 2), reorder_point = x.rop,
         reorder_qty = x.reorder, reorder_value = round(x.reorder * x.cost, 2),
         overstock_qty = x.over, overstock_value = round(x.over * x.cost, 2),
         days_of_cover = CASE WHEN x.merch AND x.d > 0 AND x.on_hand / x.d < 99999999999 THEN round(x.on_hand / x.d, 1) END,
         stockout_date = x.out,
         status = CASE WHEN x.discontinued THEN 'discontinued'
                       WHEN x.excluded THEN 'excluded'
                       WHEN x.is_new THEN 'new'
                       WHEN x.d > 0 AND x.out < $1::date + $3::int THEN 'critical'
                       WHEN x.rop > 0 AND x.on_hand + x.on_order <= x.rop THEN 'reorder'
                       WHEN x.over > 0 THEN 'overstocked'
                       ELSE 'healthy' END,
         abc_class = CASE WHEN NOT x.merch THEN NULL
                          WHEN x.basis > 0 AND x.abc_before < $6::numeric * x.abc_total THEN 'A'
                          WHEN x.basis > 0 AND x.abc_before < $7::numeric * x.abc_total THEN 'B'
                          ELSE 'C' END,
         abc_basis_value = x.basis,
         abc_share_before = CASE WHEN x.merch AND x.abc_total > 0 THEN round(x.abc_before / x.abc_total, 6) END
         ${[...shColumns, ...ltColumns].map((c) => `, ${c} = x.${c}`).join("")}${xyzSet}
       FROM (
         SELECT y.*,
           CASE WHEN y.discontinued OR y.excluded OR y.need <= 0 THEN 0
                ${promotions ? "WHEN y.stopped THEN 0" : ""}
                ELSE ${reorderQtySql("y.need", "y.moq", "y.case_qty")} END AS reorder
         FROM (
           SELECT b.*,
             b.f_h_exact + b.ss - (b.on_hand + b.on_order) AS need,
             ${reorderPointSql("b.d", "b.lt", "b.ss")} AS rop,
             CASE WHEN b.merch THEN ${overstockSql("b.on_hand", "b.ss", "b.d", "$2::int")} ELSE 0 END AS over,
             CASE WHEN b.d = 0 OR NOT b.merch THEN NULL WHEN b.on_hand = 0 THEN $1::date ELSE so.stockout_date END AS out
             ${carried.join("")}
             ${promotions ? ", st.pid IS NOT NULL AS stopped" : ""}
           FROM calc_plan_base b
           LEFT JOIN calc_plan_stockout so ON so.pid = b.pid
           ${promotions ? `LEFT JOIN ${PROMOTION_STOP_TABLE} st ON st.pid = b.pid` : ""}
           ${sh === "sh" ? `LEFT JOIN ${STOCK_FIGURES_TABLE} sh ON sh.pid = b.pid` : ""}
           ${lt === "lt" ? `LEFT JOIN ${LEAD_TIMES_TABLE} lt ON lt.pid = b.pid` : ""}
           ${xz ? `LEFT JOIN ${XYZ_TABLE} xz ON xz.pid = b.pid` : ""}
           OFFSET 0
         ) y
         OFFSET 0
       ) x
       WHERE x.pid = m.pid`,
      [
        d0,
        g.overstock_days,
        g.low_stock_days,
        g.default_service_level,
        String(z),
        g.abc_a_threshold,
        g.abc_b_threshold,
      ],
    );
    await conn.exec(
      [...TEMP_TABLES.map((t) => `DROP TABLE ${t};`), `DROP TABLE IF EXISTS ${PROMOTION_STOP_TABLE};`].join(
        "\n",
      ),
    );
    await restore();
    return rows;
  },
};
