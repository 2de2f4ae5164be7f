// Re-planning the products a purchase-order action touches, right after it (docs/metrics.md
// "Purchase orders"): their on hand (receipts recorded here), on order, stock-out date, days of
// cover, reorder and overstock quantities and status are recomputed set-based in the action's
// transaction, from the figures the last calculation stored (demand rate, lead time, F(H), safety
// stock, reorder point), with the same rules as module planning (§1, §6, §7). ABC classes, forecasts
// and lead times are left for the next Full Update.

import type { Prisma } from "../../db/generated/client.ts";
import { loadGlobalSettingValues } from "../config/planning-parameters.ts";
import { stoppedReorderSql } from "../discounts/promotion-layer.ts";
import { APP_OPEN_LINES_SQL, APP_PENDING_RECEIPTS_SQL } from "./open-orders.ts";

type Tx = Pick<Prisma.TransactionClient, "$queryRawUnsafe" | "$executeRawUnsafe">;

export async function replanProducts(tx: Tx, pids: readonly number[]): Promise<number> {
  const unique = [...new Set(pids)];
  if (!unique.length) return 0;
  const g = await loadGlobalSettingValues({
    query: <T>(sql: string, params: unknown[] = []) => tx.$queryRawUnsafe<T[]>(sql, ...params),
  });
  const changed = await tx.$executeRawUnsafe(
    `WITH target AS (SELECT DISTINCT unnest($1::int[]) AS pid),
     base0 AS (
       SELECT m.pid, (m.calculated_at AT TIME ZONE 'UTC')::date AS d0, m.status AS old_status,
         m.demand_rate AS d, m.lead_time_days AS lt, m.forecast_horizon_units AS f_h,
         m.safety_stock AS ss, m.reorder_point AS rop, m.reorder_qty AS old_reorder,
         GREATEST(p.stock_quantity, 0) AS stock, GREATEST(p.moq, 1) AS moq, GREATEST(p.case_qty, 1) AS case_qty,
         COALESCE(p.cost_price, 0) AS cost, p.price
       FROM product_metrics m JOIN products p ON p.pid = m.pid
       WHERE m.pid IN (SELECT pid FROM target)
     ),
     imported AS (
       SELECT l.pid, o.date_expected, o.date_ordered,
         l.ordered_qty - COALESCE((SELECT SUM(r.qty) FROM receivings r
                                   WHERE r.po_line_id = l.id AND r.received_date <= b.d0), 0) AS qty
       FROM po_lines l
       JOIN purchase_orders o ON o.id = l.po_id AND o.status IN ('ordered', 'partial')
       JOIN base0 b ON b.pid = l.pid
     ),
     incoming AS (
       SELECT pid, date_expected, date_ordered, qty FROM imported WHERE qty > 0
       UNION ALL
       SELECT pid, date_expected, date_ordered, open_qty FROM (${APP_OPEN_LINES_SQL}) app
       WHERE pid IN (SELECT pid FROM target)
     ),
     oo AS (SELECT pid, SUM(qty) AS qty FROM incoming GROUP BY pid),
     pend AS (SELECT * FROM (${APP_PENDING_RECEIPTS_SQL}) pr WHERE pid IN (SELECT pid FROM target)),
     base AS (
       SELECT b.*, b.stock + COALESCE(pend.qty, 0) AS on_hand, COALESCE(oo.qty, 0) AS on_order
       FROM base0 b LEFT JOIN oo ON oo.pid = b.pid LEFT JOIN pend ON pend.pid = b.pid
     ),
     arrivals AS (
       SELECT i.pid, GREATEST(COALESCE(i.date_expected, i.date_ordered + ceil(b.lt)::int), b.d0 + 1) AS day,
         SUM(i.qty) AS qty
       FROM incoming i JOIN base b ON b.pid = i.pid AND b.on_hand > 0 AND b.d > 0
       GROUP BY 1, 2
     ),
     pts AS (
       SELECT pid, NULL::date AS day, on_hand::bigint AS qty, d, d0 FROM base WHERE on_hand > 0 AND d > 0
       UNION ALL
       SELECT a.pid, a.day, a.qty, b.d, b.d0 FROM arrivals a JOIN base b ON b.pid = a.pid
     ),
     seg AS (
       SELECT pid, day, d0, ceil(SUM(qty) OVER w / d) AS days, LEAD(day) OVER w - d0 AS next_days
       FROM pts WINDOW w AS (PARTITION BY pid ORDER BY day NULLS FIRST)
     ),
     first_out AS (
       SELECT DISTINCT ON (pid) pid, CASE WHEN days <= 2000000000 THEN d0 + days::int END AS out
       FROM seg WHERE next_days IS NULL OR days < next_days
       ORDER BY pid, day NULLS FIRST
     ),
     x AS (
       SELECT b.*,
         b.f_h + b.ss - (b.on_hand + b.on_order) AS need,
         GREATEST(0, b.on_hand - ceil(b.ss + b.d * $2::int)) AS over,
         CASE WHEN b.d IS NULL OR b.d = 0 THEN NULL WHEN b.on_hand = 0 THEN b.d0 ELSE fo.out END AS out
       FROM base b LEFT JOIN first_out fo ON fo.pid = b.pid
     ),
     y AS (
       SELECT x.*,
         CASE WHEN COALESCE(x.old_status, '') IN ('discontinued', 'excluded') THEN 0
              WHEN EXISTS (${stoppedReorderSql("x.d0 + 1", "AND pp.pid = x.pid")}) THEN 0
              WHEN x.need IS NULL THEN x.old_reorder
              WHEN x.need <= 0 THEN 0
              ELSE ceil(GREATEST(ceil(x.need), x.moq)::numeric / x.case_qty) * x.case_qty END AS reorder
       FROM x
     )
     UPDATE product_metrics m SET
       on_hand = y.on_hand, on_order = y.on_order,
       stock_value_cost = round(y.on_hand * y.cost, 2), stock_value_retail = round(y.on_hand * y.price, 2),
       reorder_qty = y.reorder, reorder_value = round(y.reorder * y.cost, 2),
       overstock_qty = COALESCE(y.over, m.overstock_qty), overstock_value = COALESCE(round(y.over * y.cost, 2), m.overstock_value),
       days_of_cover = CASE WHEN y.d > 0 AND y.on_hand / y.d < 99999999999 THEN round(y.on_hand / y.d, 1) END,
       stockout_date = y.out,
       status = CASE WHEN y.old_status IS NULL OR y.old_status IN ('discontinued', 'excluded', 'new') THEN y.old_status
                     WHEN y.d > 0 AND y.out < y.d0 + $3::int THEN 'critical'
                     WHEN y.rop > 0 AND y.on_hand + y.on_order <= y.rop THEN 'reorder'
                     WHEN y.over > 0 THEN 'overstocked'
                     ELSE 'healthy' END
     FROM y WHERE y.pid = m.pid`,
    unique,
    g.overstock_days,
    g.low_stock_days,
  );
  // The planning timestamp is the version of the figures pages keep per calculation (the products
  // list, the forecasting grid's group rows): renewed so that every instance reads them again.
  await tx.$executeRawUnsafe(BUMP_PLANNING_VERSION_SQL);
  return changed;
}

/**
 * SQL: renews the planning timestamp in calculate_status, the version of the figures pages keep
 * (max over its rows). Strictly after every timestamp there, so the version moves even when the
 * clock is behind the last run's timestamp (skew) or in its millisecond: GREATEST(now(), newest + 1 ms).
 */
export const BUMP_PLANNING_VERSION_SQL = `INSERT INTO calculate_status (module_name, last_calculation_timestamp)
  SELECT 'planning', GREATEST(now(), (SELECT max(last_calculation_timestamp) FROM calculate_status) + interval '1 millisecond')
  ON CONFLICT (module_name) DO UPDATE SET last_calculation_timestamp = EXCLUDED.last_calculation_timestamp`;
