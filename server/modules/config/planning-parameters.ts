// A product's effective planning parameters: its own override, else its vendor's default, else the
// global default (spec sections 2 "Product-/Vendor-Specific Settings" and 3). One set-based query,
// so the planning engine can resolve every product at once and the screens one page of them.

import { echo } from "../../../shared/input.ts";
import {
  type ForecastMethod,
  GLOBAL_SETTINGS,
  globalSettingDefinition,
  globalSettingRange,
  type ParameterSource,
  storedGlobalSettingProblems,
} from "../../../shared/settings.ts";
import type { Database, SqlConnection } from "../../db/database.ts";

/** Anything that runs a parameterised query: the app's Database, or a pipeline connection/transaction. */
export type SqlSource = Database | Pick<SqlConnection, "query">;

function runner(source: SqlSource): Pick<SqlConnection, "query"> {
  if ("prisma" in source) {
    const { prisma } = source;
    return { query: <T>(sql: string, params: unknown[] = []) => prisma.$queryRawUnsafe<T[]>(sql, ...params) };
  }
  return source;
}

export interface PlanningParameters {
  pid: number;
  /** The product's vendor (name), if any. */
  vendor: string | null;
  /** Product → vendor setting → the vendor's quoted lead time (imported) → global default. */
  lead_time_days: number;
  /** Product → vendor setting → global default. */
  days_of_stock: number;
  /** Units; 0 means "computed" from safety_stock_days and service_level. */
  safety_stock: number;
  /** Global: days of average demand held as safety stock when it is computed. */
  safety_stock_days: number;
  /** Global: target probability of not running out during the lead time. */
  service_level: number;
  forecast_method: ForecastMethod;
  /** The product is left out of forecasts and purchase suggestions. */
  excluded: boolean;
  /** The level each value came from. */
  sources: {
    lead_time_days: ParameterSource;
    days_of_stock: ParameterSource;
    safety_stock: "product" | "global";
    forecast_method: "product" | "global";
    excluded: "product" | "global";
  };
  /** What would apply without the product's own values (shown as the fallback of a blank field). */
  inherited: {
    lead_time_days: number;
    lead_time_source: ParameterSource;
    days_of_stock: number;
    days_of_stock_source: ParameterSource;
    forecast_method: ForecastMethod;
  };
}

interface Row {
  pid: number;
  vendor: string | null;
  lead_time_days: number;
  lead_time_source: ParameterSource;
  inherited_lead_time_days: number;
  inherited_lead_time_source: ParameterSource;
  days_of_stock: number;
  days_of_stock_source: ParameterSource;
  inherited_days_of_stock: number;
  inherited_days_of_stock_source: ParameterSource;
  safety_stock: number;
  safety_stock_source: "product" | "global";
  safety_stock_days: number;
  service_level: number;
  forecast_method: ForecastMethod;
  forecast_method_source: "product" | "global";
  inherited_forecast_method: ForecastMethod;
  excluded: boolean;
  excluded_source: "product" | "global";
}

const fallback = (key: string) => globalSettingDefinition(key)!.defaultValue;

/**
 * A numeric global setting as SQL: the stored text when it is a number within the setting's range,
 * else the catalogue default (parameter `param`). A value stored out of range (from before ranges
 * were checked) so cannot break the screens that read it; a run refuses to start on it
 * (assertRunnableSettings).
 */
function settingSql(key: string, param: string, type: "int" | "float8"): string {
  const def = globalSettingDefinition(key)!;
  const r = globalSettingRange(def)!;
  const x = `max(setting_value) FILTER (WHERE setting_key = '${key}')`;
  const inRange = r.exclusive ? `x > ${r.min} AND x < ${r.max}` : `x BETWEEN ${r.min} AND ${r.max}`;
  const value = type === "int" ? "round(x)::int" : "x::float8";
  const fromText = type === "int" ? `round(${param}::numeric)::int` : `${param}::float8`;
  return `COALESCE((SELECT CASE WHEN ${inRange} THEN ${value} END
      FROM (SELECT CASE WHEN ${x} ~ '^\\s*([0-9]{1,9}(\\.[0-9]*)?|\\.[0-9]+)\\s*$' THEN (${x})::numeric END AS x) v), ${fromText})`;
}

// Global values come from settings_global, falling back to the catalogue's defaults ($1–$5) for a
// key not seeded yet. A vendor quote of 0 days counts as no quote.
export const PLANNING_PARAMETERS_SQL = `
WITH g AS (
  SELECT
    ${settingSql("default_lead_time_days", "$1", "int")} AS lead_time_days,
    ${settingSql("default_days_of_stock", "$2", "int")} AS days_of_stock,
    ${settingSql("default_safety_stock_days", "$3", "int")} AS safety_stock_days,
    ${settingSql("default_service_level", "$4", "float8")} AS service_level,
    COALESCE(max(setting_value) FILTER (WHERE setting_key = 'default_forecast_method'), $5) AS forecast_method
  FROM settings_global
),
base AS (
  SELECT p.pid, v.name AS vendor, sp.pid IS NOT NULL AS has_product_row,
    sp.lead_time_days AS p_lead, sp.days_of_stock AS p_days, sp.safety_stock AS p_safety,
    sp.forecast_method AS p_method, sp.exclude_from_forecast AS p_excluded,
    sv.default_lead_time_days AS v_lead, sv.default_days_of_stock AS v_days,
    CASE WHEN v.lead_time_days > 0 THEN v.lead_time_days END AS q_lead,
    g.lead_time_days AS g_lead, g.days_of_stock AS g_days, g.safety_stock_days, g.service_level,
    g.forecast_method AS g_method
  FROM products p
  CROSS JOIN g
  LEFT JOIN settings_product sp ON sp.pid = p.pid
  LEFT JOIN vendors v ON v.id = p.vendor_id
  LEFT JOIN settings_vendor sv ON sv.vendor = v.name
  -- The pids as one array (evaluated once) so a page of them is an index lookup, not a scan of
  -- every product joined to a set-returning function.
  WHERE $6::jsonb IS NULL OR p.pid = ANY (ARRAY(SELECT jsonb_array_elements_text($6::jsonb)::int))
)
SELECT pid, vendor,
  COALESCE(p_lead, v_lead, q_lead, g_lead) AS lead_time_days,
  CASE WHEN p_lead IS NOT NULL THEN 'product' WHEN v_lead IS NOT NULL THEN 'vendor'
       WHEN q_lead IS NOT NULL THEN 'vendor_quoted' ELSE 'global' END AS lead_time_source,
  COALESCE(v_lead, q_lead, g_lead) AS inherited_lead_time_days,
  CASE WHEN v_lead IS NOT NULL THEN 'vendor' WHEN q_lead IS NOT NULL THEN 'vendor_quoted'
       ELSE 'global' END AS inherited_lead_time_source,
  COALESCE(p_days, v_days, g_days) AS days_of_stock,
  CASE WHEN p_days IS NOT NULL THEN 'product' WHEN v_days IS NOT NULL THEN 'vendor'
       ELSE 'global' END AS days_of_stock_source,
  COALESCE(v_days, g_days) AS inherited_days_of_stock,
  CASE WHEN v_days IS NOT NULL THEN 'vendor' ELSE 'global' END AS inherited_days_of_stock_source,
  COALESCE(p_safety, 0) AS safety_stock,
  CASE WHEN p_safety > 0 THEN 'product' ELSE 'global' END AS safety_stock_source,
  safety_stock_days, service_level,
  COALESCE(p_method, g_method) AS forecast_method,
  CASE WHEN p_method IS NOT NULL THEN 'product' ELSE 'global' END AS forecast_method_source,
  g_method AS inherited_forecast_method,
  COALESCE(p_excluded, false) AS excluded,
  CASE WHEN has_product_row THEN 'product' ELSE 'global' END AS excluded_source
FROM base
ORDER BY pid`;

/** The parameters of PLANNING_PARAMETERS_SQL: catalogue defaults, then the pids filter (null = all). */
export function planningParameterArgs(pids?: readonly number[]): unknown[] {
  return [
    fallback("default_lead_time_days"),
    fallback("default_days_of_stock"),
    fallback("default_safety_stock_days"),
    fallback("default_service_level"),
    fallback("default_forecast_method"),
    pids ? JSON.stringify(pids) : null,
  ];
}

/**
 * The effective parameters of the given products (all products when `pids` is omitted), ordered
 * by pid; unknown pids are left out. Accepts the app's Database or a pipeline connection, so a
 * calculation module can resolve inside its own transaction.
 *
 * Lead times here are the configured ones; when the global lead_time_source is "measured", the
 * planning engine prefers what it measures from receipts and falls back to these.
 */
export async function resolvePlanningParameters(
  source: SqlSource,
  pids?: readonly number[],
): Promise<PlanningParameters[]> {
  if (pids && pids.length === 0) return [];
  const rows = await runner(source).query<Row>(PLANNING_PARAMETERS_SQL, planningParameterArgs(pids));
  return rows.map((r) => ({
    pid: r.pid,
    vendor: r.vendor,
    lead_time_days: r.lead_time_days,
    days_of_stock: r.days_of_stock,
    safety_stock: r.safety_stock,
    safety_stock_days: r.safety_stock_days,
    service_level: r.service_level,
    forecast_method: r.forecast_method,
    excluded: r.excluded,
    sources: {
      lead_time_days: r.lead_time_source,
      days_of_stock: r.days_of_stock_source,
      safety_stock: r.safety_stock_source,
      forecast_method: r.forecast_method_source,
      excluded: r.excluded_source,
    },
    inherited: {
      lead_time_days: r.inherited_lead_time_days,
      lead_time_source: r.inherited_lead_time_source,
      days_of_stock: r.inherited_days_of_stock,
      days_of_stock_source: r.inherited_days_of_stock_source,
      forecast_method: r.inherited_forecast_method,
    },
  }));
}

/** The global settings as typed values (catalogue defaults for keys not stored yet). */
export interface GlobalSettingValues {
  abc_calculation_basis: "revenue_30d" | "sales_30d" | "lifetime_revenue";
  abc_a_threshold: number;
  abc_b_threshold: number;
  xyz_x_threshold: number;
  xyz_y_threshold: number;
  default_forecast_method: ForecastMethod;
  default_lead_time_days: number;
  default_days_of_stock: number;
  default_safety_stock_days: number;
  default_service_level: number;
  lead_time_source: "configured" | "measured";
  low_stock_days: number;
  overstock_days: number;
  calculation_as_of: "today" | "latest_data";
  stale_data_days: number;
  /** Text as stored ("10,11,12,13"); parseCategoryTypes gives the numbers. */
  product_category_types: string;
}

export async function loadGlobalSettingValues(source: SqlSource): Promise<GlobalSettingValues> {
  const rows = await runner(source).query<{ setting_key: string; setting_value: string }>(
    "SELECT setting_key, setting_value FROM settings_global",
  );
  const stored = new Map(rows.map((r) => [r.setting_key, r.setting_value]));
  const values: Record<string, string | number> = {};
  for (const def of GLOBAL_SETTINGS) {
    const text = stored.get(def.key) ?? def.defaultValue;
    values[def.key] = def.kind === "choice" || def.kind === "int_list" ? text : Number(text);
  }
  return values as unknown as GlobalSettingValues;
}

/**
 * Refuses a run whose global settings break their rules (a value stored before ranges were
 * checked): the run fails before it changes anything, naming the key and what it must be.
 */
export async function assertRunnableSettings(source: SqlSource): Promise<void> {
  const rows = await runner(source).query<{ setting_key: string; setting_value: string }>(
    "SELECT setting_key, setting_value FROM settings_global",
  );
  const [first] = storedGlobalSettingProblems(
    Object.fromEntries(rows.map((r) => [r.setting_key, r.setting_value])),
  );
  if (first)
    throw new Error(
      `Global setting ${first.key} is ${echo(first.value)}: it ${first.message}. ` +
        "Fix it under Settings → Global Settings, then run again.",
    );
}
