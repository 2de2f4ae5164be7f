// The pages that keep figures per calculation are computed right after a run completes
// (server/modules/warm-pages.ts), so the first request reads kept figures; what the warm-up keeps
// is never served for a newer calculation, and every page equals a fresh computation.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../server/db/database.ts";
import { getDashboard } from "../../server/modules/dashboard/dashboard.service.ts";
import {
  clearForecastCaches,
  forecastExceptions,
  listForecastRows,
} from "../../server/modules/forecasting/forecasting.service.ts";
import {
  clearPurchasingCaches,
  listPurchaseOrders,
  listReplenishment,
  replenishmentPageKept,
} from "../../server/modules/purchasing/purchasing.service.ts";
import { pageWarmUpSettled, warmPageCaches, warmPageCachesOnce } from "../../server/modules/warm-pages.ts";
import { EXCEPTION_KINDS } from "../../shared/forecasting.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { testBackend } from "../helpers/db.ts";
import { copyFixture, editFile } from "../helpers/pipeline.ts";

const everything = { is_admin: true, permissions: [] as string[] };

/** Each exceptions list's first page. */
async function exceptionPages(db: Database) {
  const out = [];
  for (const kind of EXCEPTION_KINDS) out.push(await forecastExceptions(db, { kind, page: 1, pageSize: 50 }));
  return out;
}

/** The default pages as a request reads them now (kept or computed). */
async function pages(db: Database) {
  const dashboard = await getDashboard(db, everything);
  return {
    tiles: dashboard.tiles,
    purchase_orders: dashboard.purchase_orders,
    categories: await listForecastRows(db, { level: "category", pageSize: 50 }),
    vendors: await listForecastRows(db, { level: "vendor", pageSize: 50 }),
    products: await listForecastRows(db, { pageSize: 50 }),
    exceptions: await exceptionPages(db),
    workspace: await listReplenishment(db, { pageSize: 250 }),
    orders: await listPurchaseOrders(db, { pageSize: 50, late_for_stockout: true }),
  };
}

/** The same pages computed afresh (kept pages forgotten). */
async function freshPages(db: Database) {
  clearForecastCaches(db);
  clearPurchasingCaches(db);
  return pages(db);
}

describe(`warming the pages after a calculation (${testBackend})`, () => {
  let t: TestApp;
  let source: string;
  const db = () => t.tdb.db;
  const reset = async () => {
    await t.app.services.dataOps.start("reset", null);
    await t.app.services.dataOps.idle();
  };

  beforeAll(async () => {
    source = copyFixture();
    t = await startTestApp({ env: { SOURCE_DIR: source } });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it("after a run the default pages are already kept (PostgreSQL) and equal a fresh computation", async () => {
    await reset();
    await pageWarmUpSettled(db());
    // The embedded database is not warmed: its one connection would make requests wait.
    expect(await replenishmentPageKept(db(), { pageSize: 250 })).toBe(testBackend === "postgres");
    const served = await pages(db());
    expect(served.categories.items.length).toBeGreaterThan(0);
    expect(served).toEqual(await freshPages(db()));
  }, 120_000);

  it("a warm-up running when a newer calculation arrives keeps nothing that is served for the newer one", async () => {
    await reset();
    await pageWarmUpSettled(db());
    const older = await pages(db());
    // The newer calculation reads other data (product 1001's stock 100 → 0: it becomes critical,
    // the stock value falls), so a page kept from the older one would differ from a fresh one.
    editFile(source, "products.csv", (text) => text.replace("1.50,2.00,0.60,100,", "1.50,2.00,0.60,0,"));
    const warming = warmPageCaches(db());
    await reset();
    await warming;
    await pageWarmUpSettled(db());
    const served = await pages(db());
    expect(served).not.toEqual(older);
    expect(served).toEqual(await freshPages(db()));
    // Another warm-up over the same calculation serves the same pages.
    await warmPageCaches(db());
    expect(await replenishmentPageKept(db(), { pageSize: 250 })).toBe(true);
    expect(await pages(db())).toEqual(served);
  }, 120_000);

  it.skipIf(testBackend !== "postgres")(
    "a progress event of the run just completed arriving late over the bus does not stop its warm-up",
    async () => {
      await reset();
      // The warm-up the run's completion started; a "running" event of that same run delivered now
      // (as LISTEN/NOTIFY may under load, after the run has ended) must leave it to finish.
      const settled = pageWarmUpSettled(db());
      const last = t.app.services.dataOps.latestEvent("reset");
      expect(last?.status).toBe("complete");
      await t.app.services.bus.publish({ ...last!, status: "running", operation: "Calculating" });
      await settled;
      expect(pageWarmUpSettled(db())).toBe(settled);
      expect(await replenishmentPageKept(db(), { pageSize: 250 })).toBe(true);
    },
    120_000,
  );

  it.skipIf(testBackend !== "postgres")(
    "the run's completion arriving on the progress bus while its warm-up starts does not start another",
    async () => {
      await reset();
      await pageWarmUpSettled(db());
      clearForecastCaches(db());
      clearPurchasingCaches(db());
      // The run's own warm-up (the after-import hook), then its completion as the bus delivers it
      // on this instance, many times at once: each reads the calculation's version on a connection
      // of its own, some before the warm-up has read it.
      const warm = warmPageCaches(db());
      const settled = pageWarmUpSettled(db());
      await Promise.all(Array.from({ length: 20 }, () => warmPageCachesOnce(db())));
      // Still the one warm-up: whoever waits for it (closing, this test) waits for every page.
      expect(pageWarmUpSettled(db())).toBe(settled);
      await warm;
      expect(await replenishmentPageKept(db(), { pageSize: 250 })).toBe(true);
    },
    120_000,
  );

  it.skipIf(testBackend !== "postgres")(
    "another instance on the database warms its own pages when the run completes",
    async () => {
      // A second instance with its own connection pool (so its own kept pages), as behind a load
      // balancer; the run is done by the first.
      const other = await startTestApp({ tdb: { ...t.tdb, db: await t.tdb.openAnother() } });
      try {
        const otherDb = other.tdb.db;
        await pageWarmUpSettled(otherDb);
        await reset();
        // The completion reaches the other instance over LISTEN/NOTIFY: its warm-up starts then.
        for (let i = 0; i < 100 && !(await replenishmentPageKept(otherDb, { pageSize: 250 })); i++) {
          await pageWarmUpSettled(otherDb);
          await new Promise((r) => setTimeout(r, 50));
        }
        expect(await replenishmentPageKept(otherDb, { pageSize: 250 })).toBe(true);
        expect(await pages(otherDb)).toEqual(await pages(db()));
      } finally {
        await other.app.close();
      }
    },
    120_000,
  );
});
