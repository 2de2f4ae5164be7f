// The pages that keep figures per calculation (the dashboards, the Forecasting grid's group rows
// and first page and its exceptions lists, the purchasing workspace and the PO list) compute them on their first request
// after a calculation: up to 1.6 s on the large demo set. Right after a run completes, this computes
// them in the background instead, so the first person to open a page reads kept figures.
//
// - Started by the run's after-import hook (server/services.ts) without being awaited: the run's
//   completion and its progress events never wait for it.
// - Bounded: one page at a time, in the order below, a fixed list (the default views the pages
//   open on).
// - Cancelled when a newer calculation arrives: a newer warm-up, a run about to swap its tables in
//   (cancelPageWarmUp, from the beforeSwap hook) or a changed calculation version stops it before
//   its next page. A page it computed is kept under the version it read, so it is never served for
//   a newer one.
// - A user's request for a page the warm-up is computing waits for that computation (the caches
//   keep one computation per page and version, server/modules/kept-pages.ts, and the dashboards
//   keep the pending figures), so it never waits longer than computing them itself would take.
import { EXCEPTION_KINDS } from "../../shared/forecasting.ts";
import type { Database } from "../db/database.ts";
import { getDashboard } from "./dashboard/dashboard.service.ts";
import { getSmall } from "./dashboard/small.service.ts";
import { forecastExceptions, listForecastRows } from "./forecasting/forecasting.service.ts";
import { listPurchaseOrders, listReplenishment } from "./purchasing/purchasing.service.ts";

const everything = { is_admin: true, permissions: [] as string[] };

/**
 * The pages warmed, in order: the inputs the pages send for their default views (the page sizes of
 * client/features/forecasting/search.ts and client/features/purchasing/search.ts).
 */
export const WARM_PAGES: { name: string; run: (db: Database) => Promise<unknown> }[] = [
  { name: "dashboard", run: (db) => getDashboard(db, everything) },
  { name: "small", run: (db) => getSmall(db) },
  { name: "forecasting categories", run: (db) => listForecastRows(db, { level: "category", pageSize: 50 }) },
  { name: "forecasting vendors", run: (db) => listForecastRows(db, { level: "vendor", pageSize: 50 }) },
  { name: "forecasting brands", run: (db) => listForecastRows(db, { level: "brand", pageSize: 50 }) },
  { name: "forecasting products", run: (db) => listForecastRows(db, { pageSize: 50 }) },
  // Each exceptions list's first page (the tabs of the Forecasting page's exceptions view).
  ...EXCEPTION_KINDS.map((kind) => ({
    name: `forecasting exceptions ${kind}`,
    run: (db: Database) => forecastExceptions(db, { kind, page: 1, pageSize: 50 }),
  })),
  { name: "workspace", run: (db) => listReplenishment(db, { pageSize: 250 }) },
  { name: "purchase orders", run: (db) => listPurchaseOrders(db, { pageSize: 50 }) },
  {
    name: "purchase orders late for stock-out",
    run: (db) => listPurchaseOrders(db, { pageSize: 50, late_for_stockout: true }),
  },
  {
    name: "purchase orders by expected date",
    run: (db) => listPurchaseOrders(db, { pageSize: 50, sort: "date_expected" }),
  },
];

const generations = new WeakMap<Database, number>();
const pending = new WeakMap<Database, Promise<void>>();
/**
 * The latest warm-up's generation and the calculation it is for, as a promise: it is recorded the
 * moment the warm-up starts, before its version is read, so a completion arriving on the progress
 * bus meanwhile finds it (and does not start a second warm-up that would stop the first).
 */
const warming = new WeakMap<Database, { version: Promise<string | null>; generation: number }>();

async function calculationVersion(db: Database): Promise<string> {
  const [row] = await db.prisma.$queryRawUnsafe<{ v: string | null }[]>(
    "SELECT max(last_calculation_timestamp)::text AS v FROM calculate_status",
  );
  return row?.v ?? "";
}

/** The calculation version, or null after reporting a failure to read it. */
async function versionOrReport(
  db: Database,
  onError?: (err: unknown, page: string) => void,
): Promise<string | null> {
  try {
    return await calculationVersion(db);
  } catch (err) {
    onError?.(err, "version");
    return null;
  }
}

/** Stops the running warm-up (if any) before its next page. */
export function cancelPageWarmUp(db: Database): void {
  generations.set(db, (generations.get(db) ?? 0) + 1);
}

/**
 * Computes the pages of WARM_PAGES for the calculation now in force, one after another, in the
 * background; a newer call (or cancelPageWarmUp) stops an older one. Never rejects: a page that
 * fails is reported to `onError` and the next one is warmed.
 */
export function warmPageCaches(db: Database, onError?: (err: unknown, page: string) => void): Promise<void> {
  cancelPageWarmUp(db);
  const generation = generations.get(db)!;
  const versionRead = versionOrReport(db, onError);
  warming.set(db, { version: versionRead, generation });
  const run = (async () => {
    const version = await versionRead;
    if (version === null) return;
    for (const page of WARM_PAGES) {
      if (generations.get(db) !== generation) return;
      try {
        if ((await calculationVersion(db)) !== version) return;
        await page.run(db);
      } catch (err) {
        if (generations.get(db) === generation) onError?.(err, page.name);
      }
    }
  })();
  pending.set(db, run);
  return run;
}

/**
 * warmPageCaches, unless a warm-up for the calculation now in force was started and not stopped
 * (it runs, or ran to its end): another instance's run completing arrives on the progress bus on
 * the instance that ran it too, which has started its warm-up already.
 */
export async function warmPageCachesOnce(
  db: Database,
  onError?: (err: unknown, page: string) => void,
): Promise<void> {
  const latest = warming.get(db);
  const [version, latestVersion] = await Promise.all([versionOrReport(db, onError), latest?.version]);
  if (version === null) return;
  // (A newer warm-up since would have moved the generation on: warmPageCaches cancels first.)
  if (latest && latestVersion === version && latest.generation === generations.get(db))
    return pageWarmUpSettled(db);
  return warmPageCaches(db, onError);
}

/** The last warm-up started for the database (closing waits for it). */
export function pageWarmUpSettled(db: Database): Promise<void> {
  return pending.get(db) ?? Promise.resolve();
}
