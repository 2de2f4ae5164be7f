// Calendar weeks over the planning engine's forecast (docs/metrics.md "Forecasting page").
//
// The engine forecasts 13 weeks of 7 days from the day after the as-of day D0 (its week i covers
// D0 + 7(i − 1) + 1 … D0 + 7i), at an even rate within each week. Staff see, override and measure
// calendar weeks, Monday to Sunday, keyed by their Monday: the 13 weeks after D0's week. With
// r = days from D0 + 1 to the first of those Mondays (0 … 6), calendar week j (1 … 13) holds the
// last 7 − r days of engine week j and the first r days of engine week j + 1 (week 13 repeats
// beyond the horizon, as planning reads it):
//   system_j = (w_j · (7 − r) + w_{min(j+1,13)} · r) ÷ 7,   Σ_j system_j = Σ w + r (w_13 − w_1) ÷ 7.
// Planning reads an override as the change it makes to a week (final − system), spread evenly over
// the week's days and counted for the days of the week that fall within the product's horizon H
// (lead time + days of stock, from D0 + 1): overlap_j = min(max(H − (r + 7(j − 1)), 0), 7).
import { addDaysIso, FORECAST_WEEKS, mondayOf } from "../../../shared/forecasting.ts";
import { promotionWeeksSql } from "../discounts/promotion-layer.ts";

export interface CalendarWeeks {
  /** D0, the as-of day */
  d0: string;
  /** Monday of D0's week */
  asOfWeek: string;
  /** Mondays of the 13 forecast weeks */
  weeks: string[];
  /** Days from D0 + 1 to the first forecast Monday */
  r: number;
}

export function calendarWeeks(d0: string): CalendarWeeks {
  const asOfWeek = mondayOf(d0);
  const first = addDaysIso(asOfWeek, 7);
  const r = Math.round((Date.parse(first) - Date.parse(addDaysIso(d0, 1))) / 86_400_000);
  return {
    d0,
    asOfWeek,
    weeks: Array.from({ length: FORECAST_WEEKS }, (_, i) => addDaysIso(first, 7 * i)),
    r,
  };
}

/** The engine's weekly forecast (13 values) as calendar weeks. */
export function toCalendar(weekly: readonly number[], r: number): number[] {
  const w = (i: number) => weekly[Math.min(i, FORECAST_WEEKS) - 1] ?? 0;
  return Array.from({ length: FORECAST_WEEKS }, (_, i) => (w(i + 1) * (7 - r) + w(i + 2) * r) / 7);
}

/** SQL: calendar week j's system forecast from a float8[] of the engine's weeks and r (an SQL int). */
export function calendarWeekSql(weekly: string, j: number | string, r: string): string {
  const next =
    typeof j === "number" ? String(Math.min(j + 1, FORECAST_WEEKS)) : `LEAST(${j} + 1, ${FORECAST_WEEKS})`;
  return `((${weekly}[${j}] * (7 - ${r}) + ${weekly}[${next}] * ${r}) / 7.0)`;
}

/** An override's final figure for a week, from the week's system forecast. */
export function finalOf(system: number, o: { units: number | null; pct: number | null }): number {
  if (o.units !== null && o.units !== undefined) return o.units;
  return Math.max(0, system * (1 + (o.pct ?? 0) / 100));
}

/**
 * SQL: the overrides in force for the 13 forecast weeks, one row per product and week (the newest
 * group wins; a group whose expiry date is before the week's Monday no longer applies), with the
 * week's system forecast and final figure: (pid, week_start, j, units, pct, system, final).
 * `first` is an SQL date (the first forecast Monday), `r` an SQL int. Products without a forecast
 * row (excluded since) drop out.
 */
export function activeOverridesSql(first: string, r: string, pidFilter = ""): string {
  return `SELECT a.pid, a.week_start, a.j, a.units, a.pct, x.system,
      CASE WHEN a.units IS NOT NULL THEN a.units ELSE GREATEST(0, x.system * (1 + a.pct / 100)) END AS final
    FROM (
      SELECT DISTINCT ON (o.pid, o.week_start) o.pid, o.week_start, o.units, o.pct,
        ((o.week_start - ${first}) / 7 + 1)::int AS j
      FROM forecast_overrides o
      JOIN forecast_override_groups g ON g.id = o.group_id
      WHERE o.week_start >= ${first} AND o.week_start <= ${first} + ${7 * (FORECAST_WEEKS - 1)}
        AND (g.expires_on IS NULL OR g.expires_on >= o.week_start) ${pidFilter}
      ORDER BY o.pid, o.week_start, o.group_id DESC
    ) a
    JOIN product_forecasts f ON f.pid = a.pid,
    LATERAL (SELECT ${calendarWeekSql("f.weekly", "a.j", r)} AS system) x`;
}

/**
 * SQL: the grid's stored figures of product_forecasts that depend on the overrides in force and the
 * saved promotions' layer — final_units (the 13 calendar weeks with overrides, plus the promotions'
 * change), final_value (at cost), has_override, change
 * (final units of the weeks last week's snapshot also forecast, against that snapshot's) — for the
 * products matching `where` (an SQL condition on f.pid). Module forecast writes every product's
 * figures without overrides and runs this for the overridden ones; saving or removing an override
 * runs it for the edited products, so the grid pages an indexed table instead of computing them.
 * `first` is an SQL date (the first forecast Monday), `r` an SQL int, `lastSnapshot` an SQL date
 * (the Monday of the week before the as-of week).
 */
export function forecastFiguresSql(first: string, r: string, lastSnapshot: string, where: string): string {
  return `WITH od AS (
      SELECT pid, sum(final - system) AS delta
      FROM (${activeOverridesSql(first, r, `AND ${where.replaceAll("f.pid", "o.pid")}`)}) a
      GROUP BY pid
    ),
    pw AS (
      SELECT pid, sum(delta) AS delta
      FROM (${promotionWeeksSql(`(${first} - ${r} - 1)`, r, `AND ${where.replaceAll("f.pid", "pp.pid")}`)}) a
      GROUP BY pid
    ),
    x AS (
      SELECT f.pid, f.system_units + COALESCE(od.delta, 0) + COALESCE(pw.delta, 0) AS units,
        od.pid IS NOT NULL AS has_override,
        COALESCE(p.cost_price, 0)::float8 AS cost, ${calendarWeekSql("f.weekly", FORECAST_WEEKS, r)} AS last_week,
        (SELECT sum(v) FROM unnest(s.final[2:${FORECAST_WEEKS}]) v) AS before
      FROM product_forecasts f
      JOIN products p ON p.pid = f.pid
      LEFT JOIN od ON od.pid = f.pid
      LEFT JOIN pw ON pw.pid = f.pid
      LEFT JOIN forecast_snapshots s ON s.snapshot_week = ${lastSnapshot} AND s.pid = f.pid
      WHERE ${where}
    )
    UPDATE product_forecasts f SET final_units = x.units, final_value = x.units * x.cost,
      has_override = x.has_override, change = (x.units - x.last_week) / NULLIF(x.before, 0) - 1
    FROM x WHERE x.pid = f.pid`;
}
