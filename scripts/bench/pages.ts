// `npm run bench:pages -- [--runs N] [--cold-runs N]`
// A benchmark, not a test. On the PostgreSQL named by DATABASE_URL, which must hold a calculated data
// set (e.g. the one `npm run bench:pipeline` leaves), times the services behind the dashboards:
// GET /api/dashboard and GET /api/small (the first request after a calculation computes the figures,
// then N requests reuse them); the Overview for the last 30 days and for a 365-day custom range
// (computed: its kept figures forgotten before each of the cold runs; and kept); and every Analytics chart, both computed (its kept result forgotten
// before each of the cold runs) and kept (the N requests after). Prints p50 / p99 in milliseconds
// and a JSON summary last. Budgets (docs/performance.md): /api/dashboard p99 ≤ 50 ms, /api/small
// ≤ 25 ms, every analytics chart ≤ 300 ms, the overview of a 365-day custom range ≤ 300 ms.
import { parseArgs } from "node:util";
import { openDatabase } from "../../server/db/database.ts";
import {
  abcXyz,
  aging,
  clearAnalyticsCache,
  coverDistribution,
  deadStock,
  lostSales,
  movers,
  salesTrend,
  sellThrough,
  stockByCategory,
  stockValue,
  stockValueByCategory,
} from "../../server/modules/analytics/analytics.service.ts";
import { clearOverviewCache, getOverview } from "../../server/modules/analytics/overview.service.ts";
import { getDashboard, loadDataAge } from "../../server/modules/dashboard/dashboard.service.ts";
import { getSmall } from "../../server/modules/dashboard/small.service.ts";
import type { PeriodQuery } from "../../shared/analytics.ts";

const { values } = parseArgs({
  options: { runs: { type: "string", default: "200" }, "cold-runs": { type: "string", default: "20" } },
});
const url = process.env.DATABASE_URL;
if (!url) {
  console.error("Set DATABASE_URL to a PostgreSQL database holding a calculated data set");
  process.exit(1);
}
const runs = Number(values.runs);
const coldRuns = Number(values["cold-runs"]);
const db = await openDatabase({ databaseUrl: url, poolSize: 4 });
const admin = { is_admin: true, permissions: [] };

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

async function time(name: string, fn: () => Promise<unknown>, n = runs, before?: () => void) {
  before?.();
  let t = performance.now();
  await fn();
  const first = performance.now() - t;
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    before?.();
    t = performance.now();
    await fn();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  const row = {
    name,
    first_ms: +first.toFixed(1),
    p50_ms: +quantile(ms, 0.5).toFixed(2),
    p99_ms: +quantile(ms, 0.99).toFixed(2),
  };
  console.log(`${name.padEnd(36)} first ${row.first_ms} ms  p50 ${row.p50_ms} ms  p99 ${row.p99_ms} ms`);
  return row;
}

const dashboard = await time("/api/dashboard", () => getDashboard(db, admin));
const small = await time("/api/small", () => getSmall(db));

const d0 = (await loadDataAge(db)).as_of_day;
if (!d0) {
  console.error("The database holds no calculated data set (no completed run)");
  process.exit(1);
}
const year: PeriodQuery = {
  period: "custom",
  from: new Date(Date.parse(`${d0}T00:00:00Z`) - 364 * 86_400_000).toISOString().slice(0, 10),
  to: d0,
  compare: "last_year",
};
const month: PeriodQuery = { period: "30d", compare: "previous" };
const forget = () => clearOverviewCache(db);
const overview = [
  await time("overview 30 days (computed)", () => getOverview(db, admin, month), coldRuns, forget),
  await time("overview 365-day custom (computed)", () => getOverview(db, admin, year), coldRuns, forget),
  await time("overview 365-day custom (kept)", () => getOverview(db, admin, year)),
];

const charts: [string, () => Promise<unknown>][] = [
  ["salesTrend 365 days", () => salesTrend(db, admin, year)],
  ["movers 365 days (category)", () => movers(db, admin, { ...year, dim: "category" })],
  ["stockByCategory 365 days", () => stockByCategory(db, admin, year)],
  ["stockValue 52 weeks", () => stockValue(db, admin, 52)],
  ["stockValueByCategory 52 weeks", () => stockValueByCategory(db, admin, 52)],
  ["cover", () => coverDistribution(db, admin)],
  ["aging", () => aging(db, admin)],
  ["deadStock 180 days", () => deadStock(db, admin, 180)],
  ["abcXyz", () => abcXyz(db, admin)],
  ["lostSales 365 days (category)", () => lostSales(db, admin, 365, "category")],
  ["sellThrough 24 months", () => sellThrough(db, admin, 24)],
];
const analyticsCold = [];
const analyticsKept = [];
for (const [name, fn] of charts) {
  analyticsCold.push(await time(`${name} (computed)`, fn, coldRuns, () => clearAnalyticsCache(db)));
  analyticsKept.push(await time(`${name} (kept)`, fn));
}
console.log(
  JSON.stringify({ runs, cold_runs: coldRuns, dashboard, small, overview, analyticsCold, analyticsKept }),
);
await db.close();
