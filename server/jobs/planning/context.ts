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
 * is. The settings it reads are the run's snapshot (snapshotSettings), so a Full Reset's forecast,
 * built in a transaction of its own on the second connection, resolves the same parameters.
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

/** The forecasting settings' tables (settings issue): every planning module reads these. */
export const SETTINGS_TABLES = ["settings_global", "settings_product", "settings_vendor"] as const;

/**
 * Freezes the forecasting settings for one run, so every module of it reads the same values even
 * when staff save a setting while it runs (the change applies from the next run):
 * - `{ schema }`: committed copies in that schema, taken together in one REPEATABLE READ
 *   transaction. A Full Reset by swap puts them in its swap schema, which comes first in the
 *   search path of both its connections while they calculate; they go when that schema is dropped.
 *   Call it outside a transaction, with the live tables first in the search path.
 * - `"transaction"`: temp copies (ON COMMIT DROP) in the caller's transaction; a session's temp
 *   tables come before every schema of the search path, so the rest of the transaction reads them.
 */
export async function snapshotSettings(
  conn: SqlConnection,
  into: { schema: string } | "transaction",
): Promise<void> {
  const q = (name: string) => `"${name.replace(/"/g, '""')}"`;
  if (into === "transaction") {
    for (const t of SETTINGS_TABLES) {
      await conn.exec(`CREATE TEMP TABLE ${t} ON COMMIT DROP AS SELECT * FROM ${t}`);
    }
    return;
  }
  await conn.transaction(async (tx) => {
    await tx.exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    for (const t of SETTINGS_TABLES) {
      await tx.exec(`CREATE TABLE ${q(into.schema)}.${t} AS SELECT * FROM ${t}`);
    }
  });
}
