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
 * Creates the temp table `calc_params`: every product's effective planning parameters
 * (product → vendor → vendor quote → global), columns as in resolvePlanningParameters' query:
 * pid, vendor, lead_time_days, lead_time_source, days_of_stock, days_of_stock_source, safety_stock,
 * safety_stock_source, safety_stock_days, service_level, forecast_method, forecast_method_source,
 * excluded, excluded_source, … Runs inside the caller's transaction; dropped at commit.
 *
 * Built once per transaction: when this session already has the table it is this transaction's
 * (ON COMMIT DROP: a committed or rolled-back transaction leaves none behind) and is reused as it
 * is. The settings it reads are the run's copy (snapshotSettings, copySettingsFresh), so a Full
 * Reset's forecast, built in a transaction of its own on the second connection, resolves the same
 * parameters.
 */
export async function createParametersTable(conn: SqlConnection): Promise<void> {
  const [found] = await conn.query<{ exists: boolean }>(
    "SELECT to_regclass('pg_temp.calc_params') IS NOT NULL AS exists",
  );
  if (found?.exists) return;
  await conn.query(
    `CREATE TEMP TABLE calc_params ON COMMIT DROP AS ${PLANNING_PARAMETERS_SQL}`,
    planningParameterArgs(),
  );
  await conn.exec("ALTER TABLE calc_params ADD PRIMARY KEY (pid)");
}

/**
 * Changes settings for the rest of the transaction (set_config(…, true), so a failure rolls them
 * back) and answers a function that puts the previous values back. The planning modules switch JIT
 * off with it: their temp tables carry no statistics, so the planner's row guesses run into the
 * millions and PostgreSQL would spend seconds compiling expressions for a sub-second statement.
 */
export async function setLocal(
  conn: SqlConnection,
  settings: Record<string, string>,
): Promise<() => Promise<void>> {
  // The names are written into the statements (they are code's constants, checked here), so a
  // statement's text says which settings it reads or changes.
  const names = Object.keys(settings);
  for (const n of names) if (!/^[a-z_]+$/.test(n)) throw new Error(`setLocal: bad setting name ${n}`);
  const setAll = (values: Record<string, string>) =>
    conn.query(
      `SELECT ${names.map((n, i) => `set_config('${n}', $${i + 1}, true)`).join(", ")}`,
      names.map((n) => values[n]),
    );
  const [before] = await conn.query<Record<string, string>>(
    `SELECT ${names.map((n, i) => `current_setting('${n}') AS s${i}`).join(", ")}`,
  );
  const previous = Object.fromEntries(names.map((n, i) => [n, before![`s${i}`]!]));
  await setAll(settings);
  return async () => {
    await setAll(previous);
  };
}

/** The forecasting settings' tables: every planning module reads these. */
export const SETTINGS_TABLES = ["settings_global", "settings_product", "settings_vendor"] as const;

/**
 * Freezes the forecasting settings for the rest of the caller's transaction (a Full Update's
 * calculations), so every module reads the same values even when staff save a setting meanwhile
 * (it applies from the next run): temp copies, ON COMMIT DROP. A session's temp tables come before
 * every schema of the search path. (A Full Reset by swap copies them into its swap schema instead,
 * for both its connections: reset-swap.ts, copySettingsFresh.)
 */
export async function snapshotSettings(tx: SqlConnection): Promise<void> {
  for (const t of SETTINGS_TABLES) {
    await tx.exec(`CREATE TEMP TABLE ${t} ON COMMIT DROP AS SELECT * FROM ${t}`);
  }
}

/**
 * Records, in the temp table `marker` (ON COMMIT DROP), that a module's prepare step left its temp
 * tables for asOf's D0 in this transaction; preparedFor tells run() whether it may use them.
 */
export async function markPrepared(conn: SqlConnection, marker: string, asOf: Date): Promise<void> {
  await conn.exec(`DROP TABLE IF EXISTS ${marker}`);
  await conn.query(`CREATE TEMP TABLE ${marker} ON COMMIT DROP AS SELECT $1::date AS d0`, [utcDay(asOf)]);
}

/** Whether markPrepared(conn, marker, …) ran in this transaction for asOf's D0. */
export async function preparedFor(conn: SqlConnection, marker: string, asOf: Date): Promise<boolean> {
  const [found] = await conn.query<{ ready: boolean }>(
    `SELECT to_regclass('pg_temp.${marker}') IS NOT NULL AS ready`,
  );
  if (!found?.ready) return false;
  const [row] = await conn.query<{ ready: boolean }>(`SELECT d0 = $1::date AS ready FROM ${marker}`, [
    utcDay(asOf),
  ]);
  return row?.ready === true;
}
