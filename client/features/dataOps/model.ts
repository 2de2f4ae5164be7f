// Types and pure helpers of the Data Management screen (spec sections 2, 3 and 4).
import type { AppRouter } from "@client/lib/trpc.ts";
import type { RunType } from "@shared/data-ops.ts";
import type { inferRouterOutputs } from "@trpc/server";

type DataOpsOutputs = inferRouterOutputs<AppRouter>["dataOps"];

export type { RunType };
export type ProgressEvent = NonNullable<DataOpsOutputs["status"]["progress"]>;
export type ImportRecord = DataOpsOutputs["importHistory"][number];
export type CalculationRecord = DataOpsOutputs["calculationHistory"][number];
export type TableStatusEntry = DataOpsOutputs["tableStatus"][number];
export type ModuleStatusEntry = DataOpsOutputs["moduleStatus"][number];
export type TableCounts = DataOpsOutputs["tableCounts"];
export type TableCount = TableCounts["core"][number];

/** The words each run type puts into the spec's texts. */
export const RUN_TEXT = {
  update: {
    noun: "Update",
    title: "Full Update",
    description: "Import latest data and recalculate all metrics",
    button: "Run Full Update",
    busy: "Updating...",
    logTitle: "Running full update...",
    complete: "Full update complete",
    startFailed: "Failed to start update",
  },
  reset: {
    noun: "Reset",
    title: "Full Reset",
    description: "Reset database, reimport all data, and recalculate metrics",
    button: "Full Reset",
    busy: "Resetting...",
    logTitle: "Running full reset...",
    complete: "Full reset complete",
    startFailed: "Failed to start reset",
  },
  chat: {
    noun: "Chat import",
    title: "Import chat archive",
    description: "Read the Rocket.Chat export in the chat source folder into the Chat Archive",
    button: "Import chat archive",
    busy: "Importing...",
    logTitle: "Importing chat archive...",
    complete: "Chat import complete",
    startFailed: "Failed to start chat import",
  },
} as const satisfies Record<RunType, Record<string, string>>;

/** The empty and error messages of spec section 2. */
export const MESSAGES = {
  noImports: "No imports have been performed yet. Run a full update or reset to import data.",
  noCalculations: "No metrics have been calculated yet. Run a full update or reset to calculate metrics.",
  noTableData: "No table data available yet. Run a full update or reset.",
  noImportHistory: "No import history available",
  noCalculationHistory: "No calculation history available",
  failed: (what: string) => `Failed to load ${what}. Please try refreshing.`,
} as const;

/** Spec section 3: the type field, else an operation text containing 'reset' marks a reset. */
export function runTypeOf(event: Pick<ProgressEvent, "type" | "operation">): RunType {
  if (event.type === "update" || event.type === "reset" || event.type === "chat") return event.type;
  return /reset/i.test(event.operation) ? "reset" : "update";
}

/** The status of a message, or of its nested progress object. */
export function eventStatus(event: ProgressEvent): ProgressEvent["status"] {
  return event.status ?? event.progress?.status;
}

/** Spec section 4: a run ends on complete (only with the exact final text), error or cancelled. */
export function isFinalEvent(event: ProgressEvent): boolean {
  const status = eventStatus(event);
  if (status === "error" || status === "cancelled") return true;
  return status === "complete" && event.operation === RUN_TEXT[runTypeOf(event)].complete;
}

/** A history record's duration in ms: duration_minutes × 60000, else end − start; null if unknown. */
export function recordDurationMs(record: {
  start_time: Date | string | null;
  end_time: Date | string | null;
  duration_minutes: number | null;
}): number | null {
  if (record.duration_minutes != null) return record.duration_minutes * 60_000;
  if (!record.start_time || !record.end_time) return null;
  return new Date(record.end_time).getTime() - new Date(record.start_time).getTime();
}

export interface StepResult {
  name: string;
  /** seconds */
  duration: number;
  rowsAffected: number;
  status: string;
}

export interface DetailSection {
  name: string;
  /** Column names in display order (added, updated, deleted, skipped, total first when present). */
  columns: string[];
  rows: { name: string; values: Record<string, number | string> }[];
}

/** Spec section 3 "Run history detail": completed_steps, details and step_timings. */
export interface RunDetail {
  steps: StepResult[];
  details: DetailSection[];
  timings: { name: string; seconds: number }[];
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const asNumber = (v: unknown): number => (typeof v === "number" ? v : Number(v) || 0);
const COUNT_ORDER = ["added", "updated", "deleted", "skipped", "total"];

/** Reads additional_info defensively: it is stored JSON, and older records may lack parts. */
export function parseRunDetail(info: unknown): RunDetail {
  if (!isObject(info)) return { steps: [], details: [], timings: [] };
  const steps = Array.isArray(info.completed_steps)
    ? info.completed_steps.filter(isObject).map((s) => ({
        name: String(s.name ?? ""),
        duration: asNumber(s.duration),
        rowsAffected: asNumber(s.rowsAffected),
        status: String(s.status ?? ""),
      }))
    : [];

  const details: DetailSection[] = [];
  if (isObject(info.details)) {
    for (const [section, value] of Object.entries(info.details)) {
      if (!isObject(value)) continue;
      // A section maps names to count objects ({ products: { added, … } }), or is one count object.
      const entries = Object.values(value).every(isObject)
        ? Object.entries(value as Record<string, Record<string, unknown>>)
        : [[section, value] as [string, Record<string, unknown>]];
      if (entries.length === 0) continue;
      const keys = new Set(entries.flatMap(([, counts]) => Object.keys(counts)));
      const columns = [
        ...COUNT_ORDER.filter((k) => keys.has(k)),
        ...[...keys].filter((k) => !COUNT_ORDER.includes(k)),
      ];
      details.push({
        name: section,
        columns,
        rows: entries.map(([name, counts]) => ({
          name,
          values: Object.fromEntries(
            Object.entries(counts).map(([k, v]) => [k, typeof v === "number" ? v : String(v)]),
          ),
        })),
      });
    }
  }

  const timings = isObject(info.step_timings)
    ? Object.entries(info.step_timings).map(([name, seconds]) => ({ name, seconds: asNumber(seconds) }))
    : [];

  // Stored as jsonb, whose objects lose their key order: put timings and detail rows back in the
  // order the steps ran (a detail row follows the first step naming it), the rest alphabetically.
  const stepOrder = (name: string) => {
    const exact = steps.findIndex((s) => s.name === name);
    if (exact >= 0) return exact;
    const i = steps.findIndex((s) => s.name.split(/\s+/).some((w) => w === name || w === `${name}.csv`));
    return i >= 0 ? i : Number.MAX_SAFE_INTEGER;
  };
  const byStepOrder = (a: string, b: string) => stepOrder(a) - stepOrder(b) || a.localeCompare(b);
  timings.sort((a, b) => byStepOrder(a.name, b.name));
  for (const section of details) section.rows.sort((a, b) => byStepOrder(a.name, b.name));
  return { steps, details, timings };
}

const numberFormat = new Intl.NumberFormat("en-US");
/** Counts with thousands separators. */
export function formatCount(n: number | null | undefined): string {
  return numberFormat.format(n ?? 0);
}

/** Seconds as shown in step timings: '0.153 s', '12.4 s'. */
export function formatSeconds(seconds: number): string {
  return `${seconds < 10 ? seconds.toFixed(3) : seconds.toFixed(1)} s`;
}

export function formatTimestamp(date: Date | string): string {
  return new Date(date).toLocaleString();
}
