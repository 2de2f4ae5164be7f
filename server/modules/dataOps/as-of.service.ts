// The "today" of every figure and page (docs/metrics.md §0): the day the last completed Full Update
// or Full Reset calculated as of, stored with that run, and how fresh its data was. Pages built on
// the figures (dashboards, overdue purchase orders, forecast weeks, promotions) read their day here.
import { type DataAsOf, staleDataWarning } from "../../../shared/data-ops.ts";
import type { Database } from "../../db/database.ts";
import { daysBetween } from "../../jobs/planning/as-of.ts";
import { loadGlobalSettingValues } from "../config/planning-parameters.ts";

const day = (d: Date | null | undefined) => (d ? d.toISOString().slice(0, 10) : null);

/** The figures' day and freshness; `now` is the calendar moment (tests fix it). */
export async function getDataAsOf(db: Database, now: Date = new Date()): Promise<DataAsOf> {
  const [run, settings] = await Promise.all([
    db.prisma.dataRun.findFirst({
      where: { status: "completed", type: { in: ["update", "reset"] }, asOfDay: { not: null } },
      orderBy: { id: "desc" },
      select: { id: true, calculationAsOf: true, asOf: true, asOfDay: true, newestDataDay: true },
    }),
    loadGlobalSettingValues(db),
  ]);
  const today = day(now)!;
  const newest = day(run?.newestDataDay);
  const age = newest ? daysBetween(newest, today) : null;
  const staleDays = settings.stale_data_days;
  const base = {
    run_id: run?.id ?? null,
    calculation_as_of: (run?.calculationAsOf as DataAsOf["calculation_as_of"]) ?? null,
    as_of: run?.asOf ? run.asOf.toISOString() : null,
    as_of_day: day(run?.asOfDay) ?? today,
    newest_data_day: newest,
    today,
    data_age_days: age,
    stale_data_days: staleDays,
    stale: age !== null && age > staleDays,
  };
  return { ...base, warning: staleDataWarning(base) };
}

/** The "today" of the figures (YYYY-MM-DD): the last calculation's as-of day, else the calendar date. */
export async function figuresDay(db: Database): Promise<string> {
  return (await getDataAsOf(db)).as_of_day;
}
