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

// ---------------------------------------------------------------------------------------------
// Findings: every problem a run found in the source data (docs/data-format.md "When the data is bad")

/** At most this many findings are stored per run. */
export const MAX_FINDINGS = 1000;

export const FINDING_KINDS = [
  "file",
  "columns",
  "format",
  "type",
  "range",
  "required",
  "enumeration",
  "duplicate",
  "reference",
] as const;
export type FindingKind = (typeof FINDING_KINDS)[number];

/** What each kind means, for the screen and the CSV. */
export const FINDING_KIND_LABELS: Record<FindingKind, string> = {
  file: "file cannot be read",
  columns: "header columns",
  format: "malformed line",
  type: "not of the column's type",
  range: "out of range",
  required: "value required",
  enumeration: "not an allowed value",
  duplicate: "duplicate",
  reference: "unknown reference",
};

export interface Finding {
  file: string;
  /** The file's line (1 = the header) where the record starts */
  line: number;
  /** CSV column name(s); empty for a whole-line or whole-file problem */
  column: string;
  value: string;
  kind: FindingKind;
  message: string;
}

/** additional_info.findings */
export interface FindingsRecord {
  /** Findings stored (at most MAX_FINDINGS) */
  count: number;
  /** More problems exist than were stored */
  truncated: boolean;
  limit: number;
  groups: {
    file: string;
    kind: FindingKind;
    count: number;
    findings: Omit<Finding, "file" | "kind">[];
  }[];
}

/** The columns of GET /csv/history/import/{id}/findings.csv. */
export const FINDINGS_CSV_COLUMNS = ["file", "kind", "line", "column", "value", "message"] as const;

/** additional_info.findings of a failed run, when it has any (null otherwise). */
export function findingsOf(additionalInfo: unknown): FindingsRecord | null {
  const f = (additionalInfo as { findings?: FindingsRecord } | null)?.findings;
  return f && Array.isArray(f.groups) ? f : null;
}
