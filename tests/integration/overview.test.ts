// The Overview (analytics.overview, GET /api/overview/export) over the small fixture with hand-made
// sales, calculated by a real Full Reset as of 2026-06-30 12:00: the category series rolled up the
// tree, the KPIs and their changes for known periods, the breakdowns with their sparklines, the
// custom range's 400s, and who sees what (links, CSV).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OverviewKpi, OverviewSummary, PeriodInput } from "../../shared/analytics.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { writeSource } from "../helpers/csv-source.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { type PipelineHarness, pipeline } from "../helpers/pipeline.ts";

// 1001: brand 1, vendor 10, cost 0.60, categories 101 (Cardstock) and 100 (Paper, its parent).
// 1002: brand 2, vendor 11, cost 2.00, category 100. 1003: brand 1, vendor 10, cost 1.00, none.
const ORDER_LINES = [
  "line_id,order_number,pid,order_date,quantity,price,discount,status",
  "1,SO-1,1001,2026-06-29T10:00:00Z,3,1.50,0,completed",
  "2,SO-2,1002,2026-06-25T10:00:00Z,2,5.00,1.00,completed",
  "3,SO-3,1001,2026-06-20T10:00:00Z,1,1.50,0,returned",
  "4,SO-4,1001,2026-06-10T10:00:00Z,4,1.50,0,completed",
  "5,SO-5,1002,2026-05-28T10:00:00Z,1,5.00,0,completed",
  "6,SO-6,1001,2026-05-10T10:00:00Z,10,1.50,0,completed",
  "7,SO-7,1003,2025-06-15T10:00:00Z,2,3.00,0,completed",
  "8,SO-8,1002,2026-04-15T10:00:00Z,4,5.00,0,completed",
];

describe("Overview: periods, KPIs, breakdowns and CSV", () => {
  let tdb: TestDatabase;
  let t: TestApp;
  let p: PipelineHarness;
  let admin: string;
  let viewer: string;
  let exporter: string;
  let exportOnly: string;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    t = await startTestApp({ tdb });
    admin = (await t.login("admin")).token;
    await t.createUser("viewer", ["access:overview"]);
    await t.createUser("exporter", ["access:overview", "export:reports", "access:products"]);
    await t.createUser("exportonly", ["export:reports"]);
    viewer = (await t.login("viewer")).token;
    exporter = (await t.login("exporter")).token;
    exportOnly = (await t.login("exportonly")).token;
    p = await pipeline(tdb.db, () => writeSource({ "order_lines.csv": ORDER_LINES }));
  }, 60_000);
  afterAll(async () => {
    await p?.close();
    await t?.close();
  });

  const get = (url: string, token?: string) =>
    t.app.inject({ url, headers: token ? { authorization: `Bearer ${token}` } : {} });
  const trpcUrl = (input: PeriodInput) =>
    `/trpc/analytics.overview?input=${encodeURIComponent(JSON.stringify({ json: input }))}`;
  async function overview(input: PeriodInput, token = admin): Promise<OverviewSummary> {
    const res = await get(trpcUrl(input), token);
    if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`);
    return res.json().result.data.json as OverviewSummary;
  }
  const kpi = (o: OverviewSummary, key: OverviewKpi["key"]) => {
    const k = o.kpis.find((x) => x.key === key)!;
    return [k.current, k.comparison];
  };

  it("says there is no data before any calculation", async () => {
    const o = await overview({ period: "30d" }, viewer);
    expect(o.has_data).toBe(false);
    expect(o.kpis).toEqual([]);
    expect(o.data_management_href).toBeNull();
    expect((await overview({ period: "30d" })).data_management_href).toBe("/settings?tab=data");
  });

  describe("after a Full Reset", () => {
    beforeAll(async () => {
      const end = await p.run("reset");
      expect(end.status, JSON.stringify(end)).toBe("complete");
    }, 60_000);

    it("stores daily sales per product category, rolled up the tree (each product once)", async () => {
      const rows = await tdb.db.prisma.$queryRawUnsafe<Record<string, unknown>[]>(
        `SELECT key, to_char(day, 'YYYY-MM-DD') AS day, units, revenue::float8 AS revenue, cogs::float8 AS cogs,
           returned_units FROM sales_daily WHERE dim = 'category' ORDER BY key, day`,
      );
      const row = (key: number, day: string, units: number, revenue: number, cogs: number, ret = 0) => ({
        key,
        day,
        units,
        revenue,
        cogs,
        returned_units: ret,
      });
      expect(rows).toEqual([
        row(100, "2026-04-15", 4, 20, 8),
        row(100, "2026-05-10", 10, 15, 6),
        row(100, "2026-05-28", 1, 5, 2),
        row(100, "2026-06-10", 4, 6, 2.4),
        row(100, "2026-06-20", 0, 0, 0, 1),
        row(100, "2026-06-25", 2, 9, 4),
        row(100, "2026-06-29", 3, 4.5, 1.8),
        row(101, "2026-05-10", 10, 15, 6),
        row(101, "2026-06-10", 4, 6, 2.4),
        row(101, "2026-06-20", 0, 0, 0, 1),
        row(101, "2026-06-29", 3, 4.5, 1.8),
      ]);
    });

    it("gives the last 30 days' KPIs against the 30 days before", async () => {
      const o = await overview({ period: "30d", compare: "previous" });
      expect(o.period).toMatchObject({
        current: { from: "2026-06-01", to: "2026-06-30" },
        comparison: { from: "2026-05-02", to: "2026-05-31" },
        days: 30,
      });
      expect(kpi(o, "revenue")).toEqual([19.5, 20]);
      expect(kpi(o, "units")).toEqual([9, 11]);
      expect(kpi(o, "gross_margin")).toEqual([11.3, 12]);
      expect(kpi(o, "gross_margin_pct")[0]).toBeCloseTo(11.3 / 19.5, 10);
      expect(kpi(o, "orders")).toEqual([3, 2]);
      expect(kpi(o, "returns")).toEqual([1, 0]);
      expect(kpi(o, "returns_value")).toEqual([1.5, 0]);
      // Stock at D0: 1001 100 × 0.60 + 1002 0 + 1003 5 × 1.00.
      expect(kpi(o, "stock_value")[0]).toBe(65);
      // Week ends in June: 06-30 65; 06-23 103 × 0.6 + 2 × 2 + 5 = 70.8; 06-16 66.8; 06-09 and 06-02 69.2.
      expect(kpi(o, "turnover")[0]).toBeCloseTo(
        (8.2 * (365 / 30)) / ((65 + 70.8 + 66.8 + 69.2 + 69.2) / 5),
        8,
      );
      expect(kpi(o, "sell_through")[0]).toBeCloseTo(9 / (9 + 105), 10);
      expect(kpi(o, "days_of_cover")[0]).toBeCloseTo(65 / (8.2 / 30), 8);
    });

    it("compares with last year, and calendar periods with theirs", async () => {
      expect(kpi(await overview({ period: "30d", compare: "last_year" }), "revenue")).toEqual([19.5, 6]);
      expect(kpi(await overview({ period: "this_month" }), "revenue")).toEqual([19.5, 20]);
      expect(kpi(await overview({ period: "last_month" }), "revenue")).toEqual([20, 20]);
      const year = await overview({ period: "this_year", compare: "last_year" });
      expect(kpi(year, "revenue")).toEqual([59.5, 6]);
      // Rolling periods a year back end on D0 − 364, the oldest stored week end: 1001 at 100 + 17 sold
      // − 50 received since = 67 × 0.60, 1002 below 0 → 0, 1003 5 × 1.00: 45.2. A calendar year back
      // ends a day earlier, where no weekly stock is kept: blank.
      expect(kpi(await overview({ period: "7d", compare: "last_year" }), "stock_value")).toEqual([65, 45.2]);
      const stock = year.kpis.find((k) => k.key === "stock_value")!;
      expect([stock.current, stock.comparison]).toEqual([65, null]);
      const custom = await overview({ period: "custom", from: "2026-06-20", to: "2026-06-25" });
      expect(kpi(custom, "revenue")).toEqual([9, 0]);
      expect(kpi(custom, "days_of_cover")[0]).toBeCloseTo(70.8 / (4 / 6), 8);
      const none = await overview({ period: "custom", from: "2026-06-01", to: "2026-06-05" });
      const cover = none.kpis.find((k) => k.key === "days_of_cover")!;
      expect(cover.current).toBeNull();
      expect(cover.blank_reason).toBe("no sales at cost in the period");
      // The year before the last 365 days is older than the weekly stock values: its blank says so.
      const lastYear = await overview({ period: "365d" });
      const stockValue = lastYear.kpis.find((k) => k.key === "stock_value")!;
      expect(stockValue.current).not.toBeNull();
      expect(stockValue.comparison).toBeNull();
      expect(stockValue.comparison_reason).toContain("weekly stock values are kept for the last 365 days");
      expect(lastYear.kpis.find((k) => k.key === "revenue")!.comparison_reason).toBeNull();
    });

    it("breaks the period down by category (tree), brand and vendor, with changes and 12-week sparklines", async () => {
      const o = await overview({ period: "30d" });
      const pick = (rows: OverviewSummary["breakdowns"]["brand"]) =>
        rows.map((r) => [r.id, r.parent_id, r.revenue, r.units, r.comparison_revenue, r.change]);
      expect(pick(o.breakdowns.category)).toEqual([
        [100, null, 19.5, 9, 20, -0.025],
        [101, 100, 10.5, 7, 15, -0.3],
      ]);
      expect(pick(o.breakdowns.brand)).toEqual([
        [1, null, 10.5, 7, 15, -0.3],
        [2, null, 9, 2, 5, 0.8],
      ]);
      expect(pick(o.breakdowns.vendor)).toEqual([
        [10, null, 10.5, 7, 15, -0.3],
        [11, null, 9, 2, 5, 0.8],
      ]);
      // Weeks ending 2026-06-30, 06-23, … oldest first; the return on 06-20 is not revenue.
      expect(o.breakdowns.brand[0]!.sparkline).toEqual([0, 0, 0, 0, 15, 0, 0, 0, 0, 6, 0, 4.5]);
      expect(o.breakdowns.brand[1]!.sparkline).toEqual([0, 20, 0, 0, 0, 0, 0, 5, 0, 0, 0, 9]);
      expect(o.breakdowns.brand[0]!.href).toBe("/products?brand=1");
      expect(o.breakdowns.category[1]!.href).toBe("/products?category=101");
      expect(o.can_export).toBe(true);
    });

    it("refuses a wrong custom range with a 400 naming the field", async () => {
      const res = await get(trpcUrl({ period: "custom", from: "2026-06-20", to: "2026-07-25" }), admin);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.body).toContain("to: must be on or before the data's day 2026-06-30");
      const bad = await get(trpcUrl({ period: "custom", from: "2026-02-30", to: "2026-06-25" }), admin);
      expect(bad.statusCode).toBe(400);
      expect(bad.body).toContain("from");
      const csv = await get(
        "/api/overview/export?table=brand&period=custom&from=2020-01-01&to=2026-06-01",
        admin,
      );
      expect(csv.statusCode).toBe(400);
      expect(csv.json().message).toContain("from: must be on or after 2025-06-30");
      const table = await get("/api/overview/export?table=colour", admin);
      expect(table.statusCode).toBe(400);
      expect(table.json().message).toContain("table");
    });

    it("shows links and downloads only to those allowed, on the server too", async () => {
      const o = await overview({ period: "30d" }, viewer);
      expect(o.has_data).toBe(true);
      expect(o.can_export).toBe(false);
      expect(o.breakdowns.brand.every((r) => r.href === null)).toBe(true);
      expect((await get("/api/overview/export?table=brand", viewer)).statusCode).toBe(403);
      // export:reports alone does not open the Overview's figures.
      expect((await get("/api/overview/export?table=brand", exportOnly)).statusCode).toBe(403);
      expect((await get(trpcUrl({ period: "30d" }), exportOnly)).statusCode).toBe(403);
      const res = await get("/api/overview/export?table=vendor&period=30d", exporter);
      expect(res.statusCode).toBe(200);
      expect(res.headers["content-type"]).toContain("text/csv");
      expect(res.headers["content-disposition"]).toContain("overview-vendor-2026-06-01-2026-06-30.csv");
      const lines = res.body.trim().split("\n");
      expect(lines[0]).toMatch(/^vendor,id,revenue 2026-06-01\.\.2026-06-30,units,gross_margin,/);
      expect(lines[1]).toMatch(/^Vendor A,10,10.5,7,6.3,0.6,15,-0.3,0,0,0,0,15,0,0,0,0,6,0,4.5$/);
      expect(lines[2]).toMatch(/^"Vendor, B",11,9,2,5,/);
    });
  });
});
