// Helpers shared by the planning engine's calculation modules (docs/metrics.md §0).
import type { SqlConnection } from "../../db/database.ts";
import { PLANNING_PARAMETERS_SQL, planningParameterArgs } from "../../modules/config/planning-parameters.ts";

/** asOf's UTC date as YYYY-MM-DD: D0 of docs/metrics.md. */
export function utcDay(asOf: Date): string {
  return asOf.toISOString().slice(0, 10);
}

/** Midnight UTC at the start of asOf's date. */
export function utcMidnight(asOf: Date): Date {
  return new Date(`${utcDay(asOf)}T00:00:00Z`);
}

/**
 * Creates (or replaces) the temp table `calc_params`: every product's effective planning parameters
 * (product → vendor → vendor quote → global), columns as in resolvePlanningParameters' query:
 * pid, vendor, lead_time_days, lead_time_source, days_of_stock, days_of_stock_source, safety_stock,
 * safety_stock_source, safety_stock_days, service_level, forecast_method, forecast_method_source,
 * excluded, excluded_source, … Runs inside the caller's transaction; dropped at commit.
 */
export async function createParametersTable(conn: SqlConnection): Promise<void> {
  await conn.exec("DROP TABLE IF EXISTS calc_params");
  await conn.query(
    `CREATE TEMP TABLE calc_params ON COMMIT DROP AS ${PLANNING_PARAMETERS_SQL}`,
    planningParameterArgs(),
  );
  await conn.exec("ALTER TABLE calc_params ADD PRIMARY KEY (pid)");
}
