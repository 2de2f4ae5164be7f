// Number, money and date formats of the planning screens. A missing figure shows as "—"
// (docs/metrics.md §0: ratios with a zero denominator are null, never 0 or infinity).
import { formatCurrency } from "@shared/format.ts";

export const DASH = "—";

const intFormat = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
const decFormats = new Map<number, Intl.NumberFormat>();

/** Whole numbers grouped; fractions with up to `digits` decimals (trailing zeros dropped). */
export function formatNumber(value: number | null | undefined, digits = 2): string {
  if (value == null || !Number.isFinite(value)) return DASH;
  if (Number.isInteger(value)) return intFormat.format(value);
  let fmt = decFormats.get(digits);
  if (!fmt) {
    fmt = new Intl.NumberFormat("en-US", { maximumFractionDigits: digits });
    decFormats.set(digits, fmt);
  }
  return fmt.format(value);
}

/** Units: whole numbers as they are, fractions with one decimal (e.g. 12.4 units in a week). */
export function formatUnits(value: number | null | undefined): string {
  return formatNumber(value, 1);
}

/** A rate per day: small rates keep more precision (0.035/day is not 0.04/day). */
export function formatRate(value: number | null | undefined): string {
  if (value == null || !Number.isFinite(value)) return DASH;
  const abs = Math.abs(value);
  return formatNumber(value, abs === 0 || abs >= 10 ? 1 : abs >= 1 ? 2 : 3);
}

export function formatMoney(value: number | null | undefined): string {
  return value == null ? DASH : formatCurrency(value);
}

/** A whole-dollar amount for dense columns ($1,235); cents under $10. */
export function formatMoneyShort(value: number | null | undefined): string {
  if (value == null || !Number.isFinite(value)) return DASH;
  if (Math.abs(value) < 10) return formatCurrency(value);
  return `${value < 0 ? "-" : ""}$${intFormat.format(Math.abs(Math.round(value)))}`;
}

/** A ratio (0.356) as a percentage (35.6%). */
export function formatPercent(value: number | null | undefined, digits = 1): string {
  if (value == null || !Number.isFinite(value)) return DASH;
  return `${(value * 100).toFixed(digits)}%`;
}

const dayFormat = new Intl.DateTimeFormat("en-US", {
  month: "short",
  day: "numeric",
  year: "numeric",
  timeZone: "UTC",
});
const shortDayFormat = new Intl.DateTimeFormat("en-US", { month: "short", day: "numeric", timeZone: "UTC" });
const monthOnlyFormat = new Intl.DateTimeFormat("en-US", { month: "short", timeZone: "UTC" });

/** "YYYY-MM-DD" (a UTC day) → milliseconds at its UTC midnight. */
export function dayMs(day: string): number {
  return Date.parse(`${day.slice(0, 10)}T00:00:00Z`);
}

/** "Mar 4, 2027" */
export function formatDay(day: string | null | undefined): string {
  if (!day) return DASH;
  const ms = dayMs(day);
  return Number.isNaN(ms) ? day : dayFormat.format(ms);
}

/** "Mar 4" in the current year, "Mar 4 '27" in another: for dense columns (the full date in a title). */
export function formatDayCompact(day: string | null | undefined, now = new Date()): string {
  if (!day) return DASH;
  const ms = dayMs(day);
  if (Number.isNaN(ms)) return day;
  const year = new Date(ms).getUTCFullYear();
  const short = shortDayFormat.format(ms);
  return year === now.getUTCFullYear() ? short : `${short} '${String(year).slice(2)}`;
}

/** "Mar 4" */
export function formatShortDay(ms: number): string {
  return shortDayFormat.format(ms);
}

/** "Mar '27" (month and 2-digit year; "Mar 27" would read as a day), for chart axes spanning years. */
export function formatMonth(ms: number): string {
  return `${monthOnlyFormat.format(ms)} '${String(new Date(ms).getUTCFullYear()).slice(2)}`;
}

/** Whole UTC days from `from` to `to` ("YYYY-MM-DD" or ISO timestamps). */
export function daysBetween(from: string, to: string): number {
  return Math.round((dayMs(to) - dayMs(from)) / 86_400_000);
}

const timestampFormat = new Intl.DateTimeFormat("en-US", {
  dateStyle: "medium",
  timeStyle: "short",
});

export function formatTimestamp(iso: string): string {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : timestampFormat.format(ms);
}
