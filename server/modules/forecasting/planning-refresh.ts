// Overrides reach the reorder figures at once, through the one mechanism purchase-order actions use
// (server/modules/purchasing/replan.ts): in the override's own transaction, the edited products'
// F(H) (forecast_horizon_units) is recomputed from their stored forecast and horizon with the
// overrides now in force — the same expressions as module planning — and replanProducts then
// recomputes their reorder quantity, stock-out date and status from it. The planning timestamp in
// calculate_status is renewed, so every instance's cached product pages are read again. Saved
// promotions (their forecast layer, server/modules/discounts/promotion-layer.ts) count in F(H) the
// same way, and a promotion saved, edited or cancelled refreshes its products here too.

import { addDaysIso } from "../../../shared/forecasting.ts";
import type { Prisma } from "../../db/generated/client.ts";
import { HORIZON_FORECAST, OVERRIDE_ADJUSTMENT } from "../../jobs/planning/planning.ts";
import { promotionAdjustmentSql } from "../discounts/promotion-layer.ts";
import { BUMP_PLANNING_VERSION_SQL, replanProducts } from "../purchasing/replan.ts";
import { activeOverridesSql, type CalendarWeeks, forecastFiguresSql } from "./forecast-weeks.ts";

type Tx = Pick<Prisma.TransactionClient, "$queryRawUnsafe" | "$executeRawUnsafe">;

/** Recomputes F(H) and the planning rows of `pids` in the caller's transaction. */
export async function refreshPlanningRows(
  tx: Tx,
  cal: CalendarWeeks,
  pids: readonly number[],
): Promise<void> {
  const unique = [...new Set(pids)];
  if (unique.length === 0) return;
  await refreshForecastFigures(tx, cal, unique);
  await tx.$executeRawUnsafe(
    `WITH ov AS (
       SELECT pid, array_agg(${cal.r} + 7 * (j - 1)) AS s, array_agg(final - system) AS delta
       FROM (${activeOverridesSql("$2::date", `${cal.r}`, "AND o.pid = ANY($1::int[])")}) a
       WHERE final <> system
       GROUP BY pid
     ),
     dm AS MATERIALIZED (
       SELECT pid, horizon_days AS h, (horizon_days / 7)::float8 AS hw, demand_rate AS d, is_new
       FROM product_metrics WHERE pid = ANY($1::int[]) AND horizon_days IS NOT NULL
     ),
     pa AS (${promotionAdjustmentSql("$3::date", "dm", "AND pp.pid = ANY($1::int[])")})
     UPDATE product_metrics m SET forecast_horizon_units = x.f_h
     FROM (
       SELECT dm.pid,
         GREATEST(0, round((GREATEST(0, round((CASE WHEN dm.is_new OR f.weekly IS NULL THEN round(COALESCE(dm.d, 0) * dm.h, 2)
                                 ELSE round((${HORIZON_FORECAST})::numeric, 2) END
                           + (${OVERRIDE_ADJUSTMENT})::numeric), 2)) + COALESCE(pa.adj, 0))::numeric, 2)) AS f_h
       FROM dm
       LEFT JOIN product_forecasts f ON f.pid = dm.pid
       LEFT JOIN ov ON ov.pid = dm.pid
       LEFT JOIN pa ON pa.pid = dm.pid
     ) x
     WHERE m.pid = x.pid`,
    unique,
    cal.weeks[0],
    cal.d0,
  );
  await replanProducts(tx, unique);
  await tx.$executeRawUnsafe(BUMP_PLANNING_VERSION_SQL);
}

/** Recomputes the grid's stored figures (final units and value, has_override, change) of `pids`. */
export async function refreshForecastFigures(
  tx: Tx,
  cal: CalendarWeeks,
  pids: readonly number[],
): Promise<void> {
  const unique = [...new Set(pids)];
  if (unique.length === 0) return;
  await tx.$executeRawUnsafe(
    forecastFiguresSql("$1::date", "$2::int", "$3::date", "f.pid = ANY($4::int[])"),
    cal.weeks[0],
    cal.r,
    addDaysIso(cal.asOfWeek, -7),
    unique,
  );
}
