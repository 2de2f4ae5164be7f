// The Overview (/overview) and Analytics (/analytics) pages: the contract between
// server/modules/analytics and the pages, and the period maths both sides share (docs/metrics.md §18).
// Money in the shop's currency as plain numbers; days "YYYY-MM-DD" (UTC).

import { z } from "zod";
import type { DataAge, DayRange } from "./dashboard.ts";

export { AGING_BUCKETS, COVER_BUCKETS } from "./metrics.ts";

export const PERIOD_KEYS = [
  "7d",
  "30d",
  "90d",
  "365d",
  "this_month",
  "last_month",
  "this_year",
  "custom",
] as const;
export type PeriodKey = (typeof PERIOD_KEYS)[number];
export const PERIOD_LABELS: Record<PeriodKey, string> = {
  "7d": "Last 7 days",
  "30d": "Last 30 days",
  "90d": "Last 90 days",
  "365d": "Last 365 days",
  this_month: "This month",
  last_month: "Last month",
  this_year: "This year",
  custom: "Custom range",
};

export const COMPARE_KEYS = ["previous", "last_year"] as const;
export type CompareKey = (typeof COMPARE_KEYS)[number];
export const COMPARE_LABELS: Record<CompareKey, string> = {
  previous: "Previous period",
  last_year: "Last year",
};

/** The longest custom range, in days. */
export const MAX_RANGE_DAYS = 366;
/**
 * How far back a period may start: the stored daily series holds 731 days (D0 − 730 … D0), and a
 * period's comparison must fit in them too, so a period starts at most 365 days before D0.
 */
export const MAX_PERIOD_AGE_DAYS = 365;

const dayText = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, "must be a date YYYY-MM-DD")
  .refine((v) => !Number.isNaN(Date.parse(`${v}T00:00:00Z`)) && isoDay(Date.parse(`${v}T00:00:00Z`)) === v, {
    message: "must be a real date YYYY-MM-DD",
  });

export const periodInput = z.object({
  period: z.enum(PERIOD_KEYS).default("30d"),
  /** The custom range (period = custom): first and last day, both included */
  from: dayText.optional(),
  to: dayText.optional(),
  compare: z.enum(COMPARE_KEYS).default("previous"),
});
export type PeriodInput = z.input<typeof periodInput>;
export type PeriodQuery = z.output<typeof periodInput>;

const DAY_MS = 86_400_000;
function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
const ms = (day: string) => Date.parse(`${day}T00:00:00Z`);
export function addDays(day: string, n: number): string {
  return isoDay(ms(day) + n * DAY_MS);
}
/** Days from a to b, both included. */
export function daysIn(r: DayRange): number {
  return Math.round((ms(r.to) - ms(r.from)) / DAY_MS) + 1;
}
/** Days a rolling period is shifted by for "last year": 52 weeks, so weekdays line up (as the Dashboard). */
export const LAST_YEAR_DAYS = 364;

function monthStart(day: string, monthsBack = 0): string {
  const d = new Date(ms(day));
  return isoDay(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - monthsBack, 1));
}
function monthEnd(day: string, monthsBack = 0): string {
  const d = new Date(ms(day));
  return isoDay(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - monthsBack + 1, 0));
}
/** The same calendar day a year earlier (29 February → 28 February). */
export function sameDayLastYear(day: string): string {
  const [y, m, d] = day.split("-").map(Number) as [number, number, number];
  const last = new Date(Date.UTC(y - 1, m, 0)).getUTCDate();
  return isoDay(Date.UTC(y - 1, m - 1, Math.min(d, last)));
}
/** The same day of the month a month earlier, clipped to that month's end. */
function sameDayLastMonth(day: string): string {
  const [y, m, d] = day.split("-").map(Number) as [number, number, number];
  const last = new Date(Date.UTC(y, m - 1, 0)).getUTCDate();
  return isoDay(Date.UTC(y, m - 2, Math.min(d, last)));
}

export interface ResolvedPeriod {
  key: PeriodKey;
  compare: CompareKey;
  current: DayRange;
  comparison: DayRange;
  days: number;
}

export class PeriodError extends Error {}

/**
 * A period of the picker for the as-of day D0, and its comparison:
 * - last N days: D0 − N + 1 … D0; previous: the N days before; last year: shifted 364 days.
 * - this month: the 1st … D0; previous: the month before, 1st … the same day; last year: the same dates a year earlier.
 * - last month: the whole month before D0's; previous: the whole month before that; last year: that month a year earlier.
 * - this year: 1 January … D0; previous and last year: 1 January … the same day a year earlier.
 * - custom: from … to (to ≤ D0, at most 366 days, from ≥ D0 − 365); previous: as many days just
 *   before; last year: shifted 364 days.
 * Throws PeriodError (a 400) with a message naming the field when the custom range is wrong.
 */
export function resolvePeriod(d0: string, input: PeriodQuery): ResolvedPeriod {
  let current: DayRange;
  let previous: DayRange;
  let lastYear: DayRange;
  const rolling = (n: number) => {
    current = { from: addDays(d0, -(n - 1)), to: d0 };
    previous = { from: addDays(d0, -(2 * n - 1)), to: addDays(d0, -n) };
    lastYear = { from: addDays(current.from, -LAST_YEAR_DAYS), to: addDays(d0, -LAST_YEAR_DAYS) };
  };
  switch (input.period) {
    case "7d":
      rolling(7);
      break;
    case "30d":
      rolling(30);
      break;
    case "90d":
      rolling(90);
      break;
    case "365d":
      rolling(365);
      break;
    case "this_month":
      current = { from: monthStart(d0), to: d0 };
      previous = { from: monthStart(d0, 1), to: sameDayLastMonth(d0) };
      lastYear = { from: sameDayLastYear(current.from), to: sameDayLastYear(d0) };
      break;
    case "last_month":
      current = { from: monthStart(d0, 1), to: monthEnd(d0, 1) };
      previous = { from: monthStart(d0, 2), to: monthEnd(d0, 2) };
      lastYear = { from: monthStart(d0, 13), to: monthEnd(d0, 13) };
      break;
    case "this_year":
      current = { from: `${d0.slice(0, 4)}-01-01`, to: d0 };
      previous = { from: sameDayLastYear(current.from), to: sameDayLastYear(d0) };
      lastYear = previous;
      break;
    case "custom": {
      if (!input.from) throw new PeriodError("from: a custom range needs its first day");
      if (!input.to) throw new PeriodError("to: a custom range needs its last day");
      if (input.from > input.to) throw new PeriodError("from: must be on or before to");
      if (input.to > d0) throw new PeriodError(`to: must be on or before the data's day ${d0}`);
      const earliest = addDays(d0, -MAX_PERIOD_AGE_DAYS);
      if (input.from < earliest)
        throw new PeriodError(`from: must be on or after ${earliest} (the stored series hold two years)`);
      current = { from: input.from, to: input.to };
      const n = daysIn(current);
      if (n > MAX_RANGE_DAYS) throw new PeriodError(`to: a custom range is at most ${MAX_RANGE_DAYS} days`);
      previous = { from: addDays(current.from, -n), to: addDays(current.from, -1) };
      lastYear = { from: addDays(current.from, -LAST_YEAR_DAYS), to: addDays(current.to, -LAST_YEAR_DAYS) };
      break;
    }
  }
  const comparison = input.compare === "last_year" ? lastYear! : previous!;
  const cur = current!;
  return { key: input.period, compare: input.compare, current: cur, comparison, days: daysIn(cur) };
}

// ---------------------------------------------------------------------------------------------
// Overview

export const OVERVIEW_KPI_KEYS = [
  "revenue",
  "gross_margin",
  "gross_margin_pct",
  "units",
  "orders",
  "returns",
  "returns_value",
  "stock_value",
  "turnover",
  "sell_through",
  "days_of_cover",
] as const;
export type OverviewKpiKey = (typeof OVERVIEW_KPI_KEYS)[number];

export interface OverviewKpi {
  key: OverviewKpiKey;
  label: string;
  unit: "money" | "count" | "percent" | "ratio" | "days";
  better: "up" | "down";
  current: number | null;
  comparison: number | null;
  /** Why current is blank, when it is */
  blank_reason: string | null;
  /** Why comparison is blank, when it is */
  comparison_reason: string | null;
  how: string;
}

export const BREAKDOWN_DIMS = ["category", "brand", "vendor"] as const;
export type BreakdownDim = (typeof BREAKDOWN_DIMS)[number];

export interface BreakdownRow {
  id: number;
  name: string;
  /** Categories: the parent category (null at the top) and the level, for the tree */
  parent_id: number | null;
  level: number;
  revenue: number;
  units: number;
  gross_margin: number;
  /** null when none of its revenue has a cost price */
  gross_margin_pct: number | null;
  comparison_revenue: number;
  /** (revenue − comparison) ÷ comparison; null when the comparison is 0 */
  change: number | null;
  /** Revenue of the 12 weeks ending on the period's last day, oldest first */
  sparkline: number[];
  /** The filtered Products page; null when the caller may not open it */
  href: string | null;
}

export interface OverviewSummary {
  data: DataAge;
  has_data: boolean;
  data_management_href: string | null;
  period: ResolvedPeriod | null;
  kpis: OverviewKpi[];
  breakdowns: Record<BreakdownDim, BreakdownRow[]>;
  /** The caller may download CSV (export:reports) */
  can_export: boolean;
}

export const overviewExportInput = periodInput.extend({ table: z.enum(BREAKDOWN_DIMS) });

// ---------------------------------------------------------------------------------------------
// Analytics

export const ANALYTICS_CHARTS = [
  "sales_trend",
  "movers",
  "stock_by_category",
  "stock_value",
  "stock_value_by_category",
  "cover",
  "aging",
  "dead_stock",
  "abc_xyz",
  "lost_sales",
  "sell_through",
] as const;
export type AnalyticsChart = (typeof ANALYTICS_CHARTS)[number];

export const analyticsPeriodInput = periodInput;
export const moversInput = periodInput.extend({ dim: z.enum(BREAKDOWN_DIMS).default("category") });
export const stockValueInput = z.object({
  weeks: z.union([z.literal(13), z.literal(26), z.literal(52)]).default(52),
});
export const deadStockInput = z.object({ days: z.coerce.number().int().min(1).max(3650).default(180) });
export const lostSalesInput = z.object({
  days: z.union([z.literal(90), z.literal(365)]).default(90),
  dim: z.enum(["category", "vendor"]).default("category"),
});
export const sellThroughInput = z.object({
  months: z.union([z.literal(6), z.literal(12), z.literal(24)]).default(12),
});

export const analyticsExportInput = z.object({
  chart: z.enum(ANALYTICS_CHARTS),
  period: z.enum(PERIOD_KEYS).default("30d"),
  from: dayText.optional(),
  to: dayText.optional(),
  compare: z.enum(COMPARE_KEYS).default("previous"),
  dim: z.enum(BREAKDOWN_DIMS).default("category"),
  weeks: z.coerce
    .number()
    .pipe(z.union([z.literal(13), z.literal(26), z.literal(52)]))
    .default(52),
  days: z.coerce.number().int().min(1).max(3650).optional(),
  months: z.coerce
    .number()
    .pipe(z.union([z.literal(6), z.literal(12), z.literal(24)]))
    .default(12),
});

/** A chart's data as a table: the CSV export writes exactly these columns and rows. */
export interface ChartTable {
  columns: string[];
  rows: (string | number | null)[][];
}

export interface SalesTrendPoint {
  week_end: string;
  days: number;
  revenue: number;
  units: number;
  gross_margin: number;
  ly_revenue: number;
  ly_units: number;
  ly_gross_margin: number;
}
export interface Mover {
  id: number;
  name: string;
  revenue: number;
  comparison_revenue: number;
  delta: number;
  change: number | null;
  href: string | null;
}
export interface StockCategoryRow {
  id: number;
  name: string;
  stock_value: number;
  cogs: number;
  turnover: number | null;
  href: string | null;
}
export interface Bucket {
  key: string;
  label: string;
  products: number;
  units: number;
  value: number;
  href: string | null;
}
export interface AbcXyzCell {
  abc: string;
  xyz: string;
  products: number;
  value: number;
  href: string | null;
}
export interface LostSalesRow {
  id: number;
  name: string;
  lost_revenue: number;
  out_of_stock_days: number;
  products: number;
  href: string | null;
}
export interface SellThroughRow {
  month: string;
  received: number;
  sold: number;
  on_hand: number;
  sell_through: number | null;
  /** Products received in the month (the Products page's `received_month` list has as many) */
  products: number;
  href: string | null;
}

export interface AnalyticsData<T> {
  has_data: boolean;
  as_of_day: string | null;
  data_management_href: string | null;
  can_export: boolean;
  period: ResolvedPeriod | null;
  rows: T[];
  /** Totals or extra figures of the chart */
  extra?: Record<string, number | null>;
}
