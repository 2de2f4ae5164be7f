import { z } from "zod";

export const RunTypeSchema = z.enum(["update", "reset", "chat"]);
export type RunType = z.infer<typeof RunTypeSchema>;

export const CancelInputSchema = z.object({ type: RunTypeSchema.optional() });
export const HistoryInputSchema = z
  .object({ limit: z.coerce.number().int().min(1).max(100).default(20) })
  .default({ limit: 20 });

/** Spec section 9: history lists show at most 20 rows; reload every 60 s; reconnect after 3 s. */
export const HISTORY_LIMIT = 20;
export const HISTORY_REFRESH_MS = 60_000;
export const STREAM_RECONNECT_MS = 3_000;

/**
 * The day the figures are as of (the last completed Full Update / Full Reset), how fresh the data
 * is, and the warning pages show when its newest sale is more than stale_data_days old.
 * `as_of_day` is the "today" of every figure and page: the run's day, or the calendar date before
 * any run has calculated.
 */
export interface DataAsOf {
  run_id: number | null;
  /** The run's calculation_as_of (null before any run): today | latest_data. */
  calculation_as_of: "today" | "latest_data" | null;
  /** The moment the figures are calculated as of (ISO), null before any run. */
  as_of: string | null;
  as_of_day: string;
  /** UTC day of the newest sale in the data when the run ran; null without sales or run. */
  newest_data_day: string | null;
  /** The calendar date (UTC) now. */
  today: string;
  /** Days from newest_data_day to today. */
  data_age_days: number | null;
  stale_data_days: number;
  stale: boolean;
  /** The warning text when stale, else null. */
  warning: string | null;
}

/** The freshness warning of a stale data set (null when it is fresh). */
export function staleDataWarning(a: {
  calculation_as_of: "today" | "latest_data" | null;
  as_of_day: string;
  newest_data_day: string | null;
  today: string;
  data_age_days: number | null;
  stale: boolean;
}): string | null {
  if (!a.stale || !a.newest_data_day) return null;
  if (a.calculation_as_of === "latest_data")
    return `Figures are as of ${a.as_of_day}, the newest sale in the data (today is ${a.today}).`;
  return `The newest sale in the data is from ${a.newest_data_day}, ${a.data_age_days} days ago: the sales windows may be empty. Set 'Calculate as of' to the latest data in Global Settings, or check the data source.`;
}
