// What real shop exports carry and the demo data does not (docs/data-format.md, docs/metrics.md):
// non-merchandise products (products.csv `kind`), categories that are not product categories
// (warehouse zones, global setting product_category_types), and old data (the run's as-of day,
// calculation_as_of, stale_data_days and the freshness warnings). The fixture
// tests/fixtures/source-real-exports has each case; D0 = 2026-06-30 unless a test says otherwise.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DataOps } from "../../server/jobs/data-ops.ts";
import { createProgressBus, type ProgressBus, type ProgressEvent } from "../../server/jobs/progress-bus.ts";
import { CsvFolderSource } from "../../server/jobs/source.ts";
import { getDataAsOf } from "../../server/modules/dataOps/as-of.service.ts";
import { listProductMetrics } from "../../server/modules/metrics/metrics.service.ts";
import { createTestDatabase, type TestDatabase, testBackend } from "../helpers/db.ts";
import { FIXTURE_AS_OF } from "../helpers/pipeline.ts";

const FIXTURE = path.resolve("tests/fixtures/source-real-exports");

describe(`real shop exports (${testBackend})`, () => {
  let tdb: TestDatabase;
  let bus: ProgressBus;
  let dir = FIXTURE;
  let now = FIXTURE_AS_OF;

  async function run(type: "update" | "reset" = "reset"): Promise<ProgressEvent> {
    const ops = new DataOps({
      db: tdb.db,
      bus,
      source: () => new CsvFolderSource(dir),
      asOf: () => now,
    });
    await ops.init();
    const events: ProgressEvent[] = [];
    const off = ops.onProgress((e) => events.push(e));
    try {
      const { run_id } = await ops.start(type, null);
      await ops.idle();
      const until = Date.now() + 10_000;
      while (Date.now() < until) {
        const last = events.findLast((e) => e.run_id === run_id && e.status !== "running");
        if (last) return last;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`run ${run_id} sent no final event`);
    } finally {
      off();
      await ops.close();
    }
  }

  const setting = (key: string, value: string) =>
    tdb.db.prisma.globalSetting.upsert({
      where: { settingKey: key },
      create: { settingKey: key, settingValue: value },
      update: { settingValue: value },
    });

  const metrics = async (pid: number) =>
    (
      await tdb.db.prisma.$queryRawUnsafe<Record<string, unknown>[]>(
        `SELECT status, abc_class, abc_share_before::float8 AS share, reorder_qty, overstock_qty,
           stock_value_cost::float8 AS value_cost, stock_value_retail::float8 AS value_retail,
           units_30d, revenue_30d::float8 AS revenue_30d, forecast_method
         FROM product_metrics WHERE pid = $1`,
        pid,
      )
    )[0]!;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    bus = await createProgressBus(tdb.db.url);
    expect(await run()).toMatchObject({ status: "complete", error: null });
  }, 120_000);
  afterAll(async () => {
    await bus?.close();
    await tdb?.drop();
  });

  describe("non-merchandise products (kind)", () => {
    it("imports kind, an empty field as merchandise", async () => {
      const kinds = await tdb.db.prisma.product.findMany({
        select: { pid: true, kind: true },
        orderBy: { pid: "asc" },
      });
      expect(kinds).toEqual([
        { pid: 1001, kind: "merchandise" },
        { pid: 1002, kind: "merchandise" },
        { pid: 2001, kind: "fee" },
        { pid: 2002, kind: "gift_card" },
        { pid: 2003, kind: "service" },
        { pid: 3001, kind: "merchandise" },
      ]);
    });

    it("are excluded: no ABC class, reorder, overstock, forecast or stock value; their sales stay", async () => {
      for (const pid of [2001, 2002, 2003]) {
        expect(await metrics(pid)).toMatchObject({
          status: "excluded",
          abc_class: null,
          share: null,
          reorder_qty: 0,
          overstock_qty: 0,
          value_cost: 0,
          value_retail: 0,
          forecast_method: null,
        });
      }
      expect(await tdb.db.prisma.productForecast.count({ where: { pid: { in: [2001, 2002, 2003] } } })).toBe(
        0,
      );
      expect(
        await tdb.db.prisma.productForecastAccuracy.count({ where: { pid: { in: [2001, 2002, 2003] } } }),
      ).toBe(0);
      // Postage sold 30 × 10 at 4.95 in the 30 days: its figures and order lines are kept.
      expect(await metrics(2001)).toMatchObject({ units_30d: 300, revenue_30d: 1485 });
      const lines = await tdb.db.prisma.orderLine.aggregate({
        where: { pid: 2001 },
        _sum: { quantity: true },
      });
      expect(lines._sum.quantity).toBe(300);
    });

    it("are left out of ABC ranking: the merchandise is ranked among itself", async () => {
      // 1001: 120 of revenue, first (postage's 1485 is not ranked); 3001: 8; 1002: 5, share before
      // (120 + 8) ÷ 133.
      expect(await metrics(1001)).toMatchObject({ abc_class: "A", share: 0, revenue_30d: 120 });
      expect(await metrics(1002)).toMatchObject({ abc_class: "C", share: 0.962406 });
    });

    it("are left out of brand, vendor and category figures", async () => {
      const brand = await tdb.db.prisma.brandMetrics.findUnique({ where: { brandId: 1 } });
      const vendor = await tdb.db.prisma.vendorMetrics.findUnique({ where: { vendorId: 10 } });
      const category = await tdb.db.prisma.categoryMetrics.findUnique({ where: { categoryId: 100 } });
      for (const row of [brand, vendor, category]) {
        expect(row).toMatchObject({ productCount: 2, units30d: 61 });
        expect(Number(row!.revenue30d)).toBe(125);
        // 1001: 50 × 1.00, 1002: 20 × 2.00; the gift vouchers' 1000 × 25 are not stock.
        expect(Number(row!.stockValueCost)).toBe(90);
      }
    });

    it("the Products list hides them unless asked to show non-merchandise", async () => {
      const merch = await listProductMetrics(tdb.db, { sort: "title", dir: "asc" });
      expect(merch.rows.map((r) => r.pid)).toEqual([1001, 1002, 3001]);
      expect(merch.total).toBe(3);
      const all = await listProductMetrics(tdb.db, { sort: "title", dir: "asc", nonMerchandise: true });
      expect(all.rows.map((r) => [r.pid, r.kind])).toEqual([
        [1001, "merchandise"],
        [2002, "gift_card"],
        [2003, "service"],
        [1002, "merchandise"],
        [3001, "merchandise"],
        [2001, "fee"],
      ]);
      expect(all.total).toBe(6);
    });

    it("a kind that is not one of the four fails the run, naming file, line, column and value", async () => {
      const bad = fs.mkdtempSync(path.join(os.tmpdir(), "real-exports-"));
      fs.cpSync(FIXTURE, bad, { recursive: true });
      const file = path.join(bad, "products.csv");
      fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace(",fee\n", ",postage\n"));
      dir = bad;
      try {
        const final = await run();
        expect(final.status).toBe("error");
        expect(final.error).toBe(
          'products.csv line 4, column kind: "postage" is not one of merchandise, service, fee, gift_card',
        );
      } finally {
        dir = FIXTURE;
      }
    });
  });

  describe("negative quantities on completed lines (corrections of sales)", () => {
    // 3001: sold 10 on D0−20 and D0−10, corrected −3 on D0−10 and −15 on D0−2 (lost in transit);
    // a returned line of 2 on D0−5. Price 4.00, 30 on hand at D0.
    it("lower their windows' units and revenue, never below zero", async () => {
      const m = await tdb.db.prisma.productMetrics.findUnique({ where: { pid: 3001 } });
      // 7 days: −15 → 0; 30 / 90 / 365 days and lifetime: 10 + 10 − 3 − 15 = 2 units, 8.00.
      expect([m?.units7d, m?.units30d, m?.units90d, m?.units365d, m?.totalSold]).toEqual([0, 2, 2, 2, 2]);
      expect([m?.revenue7d, m?.revenue30d, m?.revenue365d, m?.lifetimeRevenue].map(Number)).toEqual([
        0, 8, 8, 8,
      ]);
      // A correction is not a sale: the last sale is D0−10's.
      expect(m?.firstSold?.toISOString().slice(0, 10)).toBe("2026-06-10");
      expect(m?.dateLastSold?.toISOString().slice(0, 10)).toBe("2026-06-20");
      // d̄ = 2 ÷ 90 in-stock days.
      expect(Number(m?.avgDailySales)).toBe(0.0222);
    });

    it("bring stock back in the stock history like a receipt; returned lines do not move stock", async () => {
      const runs = await tdb.db.prisma.productStockHistory.findMany({
        where: { pid: 3001 },
        orderBy: { validFrom: "asc" },
      });
      // Backwards from 30 on D0: D0−2 took 15 back (S before = 15), D0−10 sold 10 − 3 = 7 (S = 22),
      // D0−20 sold 10 (S = 32); the returned line of D0−5 changes nothing.
      expect(
        runs.map((r) => [
          r.validFrom.toISOString().slice(0, 10),
          r.validTo.toISOString().slice(0, 10),
          r.stock,
          r.soldFirstDay,
        ]),
      ).toEqual([
        ["2025-07-01", "2026-06-09", 32, 0],
        ["2026-06-10", "2026-06-19", 22, 10],
        ["2026-06-20", "2026-06-27", 15, 7],
        ["2026-06-28", "2026-06-30", 30, -15],
      ]);
    });

    it("the run's history counts them", async () => {
      const h = await tdb.db.prisma.importHistory.findFirst({
        where: { status: "completed" },
        orderBy: { id: "desc" },
      });
      const info = h?.additionalInfo as { details: Record<string, Record<string, number>> };
      expect(info.details.sales_corrections).toEqual({ completed_lines_with_negative_quantity: 2 });
    });
  });

  describe("product category types", () => {
    it("only product categories get figures; warehouse zones (type 20) are not rolled up", async () => {
      const ids = (await tdb.db.prisma.categoryMetrics.findMany({ orderBy: { categoryId: "asc" } })).map(
        (r) => r.categoryId,
      );
      expect(ids).toEqual([100, 101]);
    });

    it("the setting product_category_types decides which types count", async () => {
      await setting("product_category_types", "10,11,20");
      try {
        expect(await run()).toMatchObject({ status: "complete" });
        const rows = await tdb.db.prisma.categoryMetrics.findMany({ orderBy: { categoryId: "asc" } });
        expect(rows.map((r) => [r.categoryId, r.productCount])).toEqual([
          [100, 2],
          [101, 1],
          [900, 1],
          [901, 1],
        ]);
      } finally {
        await setting("product_category_types", "10,11,12,13");
        expect(await run()).toMatchObject({ status: "complete" });
      }
    });
  });

  describe("the run's as-of day and old data", () => {
    const lastRun = () =>
      tdb.db.prisma.dataRun.findFirst({ where: { status: "completed" }, orderBy: { id: "desc" } });

    it("a run stores the day it calculated as of and the newest sale's day", async () => {
      const r = await lastRun();
      expect(r?.calculationAsOf).toBe("today");
      expect(r?.asOf?.toISOString()).toBe(FIXTURE_AS_OF.toISOString());
      expect(r?.asOfDay?.toISOString().slice(0, 10)).toBe("2026-06-30");
      expect(r?.newestDataDay?.toISOString().slice(0, 10)).toBe("2026-06-30");
      const a = await getDataAsOf(tdb.db, new Date("2026-07-02T08:00:00Z"));
      expect(a).toMatchObject({
        as_of_day: "2026-06-30",
        newest_data_day: "2026-06-30",
        today: "2026-07-02",
        data_age_days: 2,
        stale_data_days: 3,
        stale: false,
        warning: null,
      });
    });

    it("calculated as of today on old data: empty windows and the warning to change the setting", async () => {
      now = new Date("2026-11-25T09:00:00Z");
      try {
        expect(await run("update")).toMatchObject({ status: "complete" });
        expect(await metrics(1001)).toMatchObject({ units_30d: 0 });
        const r = await lastRun();
        expect(r?.asOfDay?.toISOString().slice(0, 10)).toBe("2026-11-25");
        expect(r?.newestDataDay?.toISOString().slice(0, 10)).toBe("2026-06-30");
        const a = await getDataAsOf(tdb.db, now);
        expect(a).toMatchObject({ as_of_day: "2026-11-25", data_age_days: 148, stale: true });
        expect(a.warning).toBe(
          "The newest sale in the data is from 2026-06-30, 148 days ago: the sales windows may be empty. Set 'Calculate as of' to the latest data in Global Settings, or check the data source.",
        );
        // stale_data_days is the threshold: 148 days old is not stale under 200.
        await setting("stale_data_days", "200");
        expect(await getDataAsOf(tdb.db, now)).toMatchObject({ stale: false, warning: null });
        await setting("stale_data_days", "3");
      } finally {
        now = FIXTURE_AS_OF;
      }
    });

    it("calculated as of the latest data: the newest sale's day is today for every figure", async () => {
      now = new Date("2026-11-25T09:00:00Z");
      await setting("calculation_as_of", "latest_data");
      try {
        for (const type of ["reset", "update"] as const) {
          expect(await run(type)).toMatchObject({ status: "complete" });
          // The same figures as a run on 2026-06-30.
          expect(await metrics(1001)).toMatchObject({ units_30d: 60, revenue_30d: 120, abc_class: "A" });
          const r = await lastRun();
          expect(r?.calculationAsOf).toBe("latest_data");
          expect(r?.asOf?.toISOString()).toBe("2026-06-30T23:59:59.999Z");
          expect(r?.asOfDay?.toISOString().slice(0, 10)).toBe("2026-06-30");
          const pm = await tdb.db.prisma.productMetrics.findUnique({ where: { pid: 1001 } });
          expect(pm?.calculatedAt.toISOString()).toBe("2026-06-30T23:59:59.999Z");
          const a = await getDataAsOf(tdb.db, now);
          expect(a).toMatchObject({ as_of_day: "2026-06-30", calculation_as_of: "latest_data", stale: true });
          expect(a.warning).toBe(
            "Figures are as of 2026-06-30, the newest sale in the data (today is 2026-11-25).",
          );
        }
      } finally {
        now = FIXTURE_AS_OF;
        await setting("calculation_as_of", "today");
      }
    });
  });
});
