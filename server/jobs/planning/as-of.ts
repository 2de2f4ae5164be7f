// The day a run calculates as of (docs/metrics.md §0): the run's start (global setting
// calculation_as_of = today) or the end of the newest sale's UTC day (latest_data), never later than
// the run's start. Stored with the run (data_runs.as_of, as_of_day, newest_data_day), it is the
// "today" of every figure and page built on the run (server/modules/dataOps/as-of.service.ts).
import type { CalculationAsOfMode } from "../../../shared/settings.ts";
import type { SqlConnection } from "../../db/database.ts";

const DAY_MS = 86_400_000;

/** The UTC day (YYYY-MM-DD) of the newest completed order line up to `until`; null without one. */
export async function newestSaleDay(conn: SqlConnection, until: Date): Promise<string | null> {
  const [row] = await conn.query<{ day: string | null }>(
    `SELECT to_char((max(order_date) AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS day
     FROM order_lines WHERE status = 'completed' AND order_date <= $1::timestamptz`,
    [until],
  );
  return row?.day ?? null;
}

/**
 * The moment a run calculates as of. `today`: its start. `latest_data`: the last millisecond of the
 * newest sale's UTC day, or the run's start when that is earlier (the newest sale is from today) or
 * when there are no sales at all. Reads order_lines as the connection's search path finds them (a
 * Full Reset's new table during the run).
 */
export async function resolveAsOf(
  conn: SqlConnection,
  mode: CalculationAsOfMode,
  runStart: Date,
): Promise<Date> {
  if (mode !== "latest_data") return runStart;
  const day = await newestSaleDay(conn, runStart);
  if (!day) return runStart;
  const end = new Date(new Date(`${day}T00:00:00Z`).getTime() + DAY_MS - 1);
  return end < runStart ? end : runStart;
}

/** Whole UTC days from `day` to `today` (both YYYY-MM-DD). */
export function daysBetween(day: string, today: string): number {
  return Math.round((Date.parse(`${today}T00:00:00Z`) - Date.parse(`${day}T00:00:00Z`)) / DAY_MS);
}
