// Module forecast_snapshots of the planning engine (docs/metrics.md "Forecasting page"): keeps what
// the forecast said, to measure it once the weeks have happened.
// 1. Snapshot: the first calculation of a calendar week stores, per product with a forecast, the
//    system and final (overrides and saved promotions applied) units of the 13 calendar weeks after the as-of week
//    (forecast_snapshots, app-owned: kept across Full Updates and Full Resets, never rewritten;
//    snapshots older than two years are dropped).
// 2. Measured accuracy: per product and completed calendar week of the last 26, the snapshot made
//    ℓ weeks before it, ℓ = the product's lead time in weeks (⌈days ÷ 7⌉, 1 … 13), gives the forecast
//    at the lead-time lag: its system and final figure for that week, the week's actual sales, and
//    the naive forecast at the same lag (the sales of the last complete week before the snapshot's
//    week). forecast_measured is rebuilt each run from the snapshots and the sales.
import { addDaysIso, FORECAST_WEEKS } from "../../../shared/forecasting.ts";
import { promotionWeeksSql } from "../../modules/discounts/promotion-layer.ts";
import {
  activeOverridesSql,
  calendarWeekSql,
  calendarWeeks,
} from "../../modules/forecasting/forecast-weeks.ts";
import type { CalcModule } from "../calculate.ts";
import { utcDay } from "./context.ts";

/** Completed weeks measured. */
export const MEASURED_WEEKS = 26;

export const forecastSnapshotsModule: CalcModule = {
  name: "forecast_snapshots",
  tables: [],
  async run({ conn, asOf }) {
    const d0 = utcDay(asOf);
    const cal = calendarWeeks(d0);
    const weeks = Array.from({ length: FORECAST_WEEKS }, (_, i) => i + 1);

    // 1. This week's snapshot, for the products that have none yet this week.
    const stored = await conn.execute(
      `WITH ov AS (
         SELECT pid, array_agg(final ORDER BY j) AS finals, array_agg(j ORDER BY j) AS js
         FROM (${activeOverridesSql("$2::date", `${cal.r}`)}) a GROUP BY pid
       ),
       -- The promotion layer (docs/metrics.md §16.1): final = the override's figure (or the
       -- system's) + the saved promotions' units, as the Forecasting page shows it.
       pw AS (
         SELECT pid, array_agg(delta ORDER BY j) AS d, array_agg(j ORDER BY j) AS js
         FROM (${promotionWeeksSql("$3::date", `${cal.r}`)}) a GROUP BY pid
       )
       INSERT INTO forecast_snapshots (snapshot_week, pid, system, final, method)
       SELECT $1::date, f.pid,
         ARRAY[${weeks.map((j) => calendarWeekSql("f.weekly", j, `${cal.r}`)).join(", ")}]::real[],
         ARRAY[${weeks
           .map(
             (j) =>
               `COALESCE(ov.finals[array_position(ov.js, ${j})], ${calendarWeekSql("f.weekly", j, `${cal.r}`)}) + COALESCE(pw.d[array_position(pw.js, ${j})], 0)`,
           )
           .join(", ")}]::real[],
         f.method
       FROM product_forecasts f
       LEFT JOIN ov ON ov.pid = f.pid
       LEFT JOIN pw ON pw.pid = f.pid
       WHERE NOT EXISTS (SELECT 1 FROM forecast_snapshots s WHERE s.snapshot_week = $1::date AND s.pid = f.pid)`,
      [cal.asOfWeek, cal.weeks[0], d0],
    );

    // Two years of snapshots are kept (104 weeks before this one); older ones measure nothing the
    // page shows.
    await conn.query("DELETE FROM forecast_snapshots WHERE snapshot_week < $1::date - 7 * 104", [
      cal.asOfWeek,
    ]);

    // 2. Measured accuracy. A week is complete when its Sunday is D0 or earlier.
    await conn.exec("DELETE FROM forecast_measured");
    const lastWeek = addDaysIso(d0, -6) >= cal.asOfWeek ? cal.asOfWeek : addDaysIso(cal.asOfWeek, -7);
    const firstWeek = addDaysIso(lastWeek, -7 * (MEASURED_WEEKS - 1));
    await conn.exec("DROP TABLE IF EXISTS fm_targets");
    await conn.query(
      `CREATE TEMP TABLE fm_targets ON COMMIT DROP AS
       SELECT s.pid, s.snapshot_week + 7 * l.lag AS week_start, l.lag, s.snapshot_week,
         s.system[l.lag]::float8 AS system, s.final[l.lag]::float8 AS final, s.method
       FROM forecast_snapshots s
       JOIN (
         SELECT pid, LEAST(${FORECAST_WEEKS}, GREATEST(1, ceil(COALESCE(lead_time_days, 7) / 7.0)))::int AS lag
         FROM product_metrics
       ) l ON l.pid = s.pid
       WHERE s.snapshot_week >= $1::date - 7 * ${FORECAST_WEEKS} AND s.snapshot_week <= $2::date - 7
         AND s.snapshot_week + 7 * l.lag BETWEEN $1::date AND $2::date`,
      [firstWeek, lastWeek],
    );
    const [targets] = await conn.query<{ n: number; first: string | null }>(
      "SELECT count(*)::int AS n, to_char(min(snapshot_week) - 7, 'YYYY-MM-DD') AS first FROM fm_targets",
    );
    let measured = 0;
    if (targets && targets.n > 0) {
      // Weekly sales of the products measured, from the naive forecast's week to the last week.
      measured = await conn.execute(
        `WITH sales AS (
           SELECT pid, date_trunc('week', order_date AT TIME ZONE 'UTC')::date AS week, sum(quantity)::float8 AS units
           FROM order_lines
           WHERE status = 'completed' AND pid IN (SELECT pid FROM fm_targets)
             AND order_date >= $1::date::timestamp AT TIME ZONE 'UTC'
             AND order_date < ($2::date + 7)::timestamp AT TIME ZONE 'UTC' AND order_date <= $3::timestamptz
           GROUP BY 1, 2
         )
         INSERT INTO forecast_measured (pid, week_start, lag, actual, system, final, naive, method)
         SELECT t.pid, t.week_start, t.lag, COALESCE(a.units, 0), t.system, t.final, COALESCE(n.units, 0), t.method
         FROM fm_targets t
         LEFT JOIN sales a ON a.pid = t.pid AND a.week = t.week_start
         LEFT JOIN sales n ON n.pid = t.pid AND n.week = t.snapshot_week - 7`,
        [targets.first, lastWeek, asOf],
      );
    }
    await conn.exec("DROP TABLE fm_targets");
    return stored + measured;
  },
};
