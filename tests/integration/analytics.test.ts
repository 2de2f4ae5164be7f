// The Analytics charts (analytics.*, GET /api/analytics/export) over the small fixture with hand-made
// sales and one more receipt, calculated by a real Full Reset as of 2026-06-30 12:00 (D0): aging of
// stock by receipt, first in first out, worked by hand; sell-through by receipt month; weekly sales
// against last year; movers; dead stock; the ABC × XYZ matrix; who may see and download.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type {
  AnalyticsData,
  Bucket,
  Mover,
  SalesTrendPoint,
  SellThroughRow,
} from "../../shared/analytics.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { writeSource } from "../helpers/csv-source.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { FIXTURE_DIR, type PipelineHarness, pipeline } from "../helpers/pipeline.ts";

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

describe("Analytics charts", () => {
  let tdb: TestDatabase;
  let t: TestApp;
  let p: PipelineHarness;
  let admin: string;
  let viewer: string;
  let overviewOnly: string;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    t = await startTestApp({ tdb });
    admin = (await t.login("admin")).token;
    await t.createUser("viewer", ["access:analytics"]);
    await t.createUser("overview", ["access:overview", "export:reports"]);
    viewer = (await t.login("viewer")).token;
    overviewOnly = (await t.login("overview")).token;
    const receipts = fs.readFileSync(path.join(FIXTURE_DIR, "receivings.csv"), "utf8").trimEnd().split("\n");
    // One more receipt of 1001: 30 units on 2026-02-01 (149 days before D0).
    const dir = writeSource({
      "order_lines.csv": ORDER_LINES,
      "receivings.csv": [...receipts, "3,5000,2026-02-01,30,0.60"],
    });
    p = await pipeline(tdb.db, () => dir);
    const end = await p.run("reset");
    expect(end.status, JSON.stringify(end)).toBe("complete");
  }, 90_000);
  afterAll(async () => {
    await p?.close();
    await t?.close();
  });

  const get = (url: string, token = admin) =>
    t.app.inject({ url, headers: { authorization: `Bearer ${token}` } });
  async function call<T>(procedure: string, input?: object, token = admin): Promise<AnalyticsData<T>> {
    const q = input ? `?input=${encodeURIComponent(JSON.stringify({ json: input }))}` : "";
    const res = await get(`/trpc/analytics.${procedure}${q}`, token);
    if (res.statusCode !== 200) throw new Error(`${procedure}: ${res.statusCode} ${res.body}`);
    return res.json().result.data.json as AnalyticsData<T>;
  }
  const pick = (b: Bucket[]) => b.map((x) => [x.key, x.products, x.units, x.value]);

  it("ages the stock on hand by its receipts, first in first out", async () => {
    // 1001: 100 on hand = the 50 received 2026-05-14 (47 days: 0–90) + the 30 of 2026-02-01
    // (149 days: 91–180) + 20 the receipts do not explain, dated to its first receipt 2025-01-05
    // (541 days); at $0.60. 1003: 5 on hand, no receipt, first received 2024-06-10: over 365, at
    // $1.00. 1002: nothing on hand (its 10 received on 06-20 have sold or gone).
    const a = await call<Bucket>("aging");
    expect(pick(a.rows)).toEqual([
      ["0_90", 1, 50, 30],
      ["91_180", 1, 30, 18],
      ["181_365", 0, 0, 0],
      ["over_365", 2, 25, 17],
    ]);
  });

  it("gives sell-through by receipt month", async () => {
    const s = await call<SellThroughRow>("sellThrough", { months: 12 });
    expect(s.rows.map((r) => [r.month, r.received, r.sold, r.sell_through, r.products])).toEqual([
      ["2026-02", 30, 0, 0, 1],
      ["2026-05", 50, 0, 0, 1],
      ["2026-06", 10, 10, 1, 1],
    ]);
  });

  it("gives weekly sales against the same weeks last year, and the movers", async () => {
    const s = await call<SalesTrendPoint>("salesTrend", { period: "30d" });
    expect(s.rows.map((r) => [r.week_end, r.days, r.revenue, r.ly_revenue])).toEqual([
      ["2026-06-02", 2, 0, 0],
      ["2026-06-09", 7, 0, 0],
      // 2025-06-15 + 364 days = 2026-06-14.
      ["2026-06-16", 7, 6, 6],
      ["2026-06-23", 7, 0, 0],
      ["2026-06-30", 7, 13.5, 0],
    ]);
    const m = await call<Mover>("movers", { period: "30d", dim: "brand" });
    expect(m.rows.map((r) => [r.id, r.delta, r.href])).toEqual([
      [2, 4, "/products?brand=2"],
      [1, -4.5, "/products?brand=1"],
    ]);
  });

  it("counts dead stock for the N days asked, and the ABC × XYZ matrix", async () => {
    // 1003 last sold 2025-06-15, 5 on hand at $1.00; 1001 sold on 06-29.
    expect(pick((await call<Bucket>("deadStock", { days: 180 })).rows)).toEqual([["dead", 1, 5, 5]]);
    expect(pick((await call<Bucket>("deadStock", { days: 1 })).rows)).toEqual([["dead", 2, 105, 65]]);
    const matrix = await call<{ abc: string; xyz: string; products: number; href: string | null }>("abcXyz");
    expect(matrix.rows).toHaveLength(12);
    expect(matrix.rows.reduce((n, c) => n + c.products, 0)).toBe(3);
    expect(matrix.rows.find((c) => c.abc === "A" && c.xyz === "X")!.href).toBe("/products?abc=A&xyz=X");
  });

  it("stores the weekly stock value per top-level product category", async () => {
    const rows = await tdb.db.prisma.$queryRawUnsafe<
      { dim: string; key: number; n: number; d0: number; first: number }[]
    >(
      `SELECT dim, key, count(*)::int AS n,
         (array_agg(value_cost::float8 ORDER BY week_end DESC))[1] AS d0,
         (array_agg(value_cost::float8 ORDER BY week_end))[1] AS first
       FROM stock_value_weekly GROUP BY dim, key ORDER BY dim, key`,
    );
    // Paper (100) holds 1001 and 1002 (Cardstock, 101, is below it): at D0 100 × 0.60 + 0; a year
    // earlier (2025-07-01) 1001 at 100 + 17 sold − 80 received since = 37 × 0.60, 1002 below 0.
    // The total adds 1003 (5 × 1.00), which has no category.
    expect(rows).toEqual([
      { dim: "category", key: 100, n: 53, d0: 60, first: 22.2 },
      { dim: "total", key: 0, n: 53, d0: 65, first: 27.2 },
    ]);
    const byCategory = await call<{ id: number; points: { week_end: string; value_cost: number }[] }>(
      "stockValueByCategory",
      {
        weeks: 13,
      },
    );
    expect(byCategory.rows.map((r) => [r.id, r.points.length, r.points.at(-1)!.value_cost])).toEqual([
      [100, 14, 60],
    ]);
  });

  it("answers the other charts", async () => {
    expect((await call<{ week_end: string }>("stockValue", { weeks: 13 })).rows).toHaveLength(14);
    const cover = await call<Bucket>("cover");
    expect(cover.rows.reduce((n, b) => n + b.products, 0)).toBe(2); // 1003 is discontinued
    const stock = await call<{ id: number; stock_value: number; cogs: number }>("stockByCategory", {
      period: "30d",
    });
    expect(stock.rows.map((r) => [r.id, r.stock_value, r.cogs])).toEqual([[100, 60, 8.2]]);
    const lost = await call<{ id: number }>("lostSales", { days: 365, dim: "vendor" });
    expect(Array.isArray(lost.rows)).toBe(true);
  });

  /** The Products list (metrics.products) of a chart link's URL parameters, as the page sends it. */
  async function listOf(href: string): Promise<{ total: number; pids: number[] }> {
    const url = new URL(href, "http://x");
    expect(url.pathname).toBe("/products");
    const q = Object.fromEntries(url.searchParams);
    const input = {
      page: 1,
      pageSize: 100,
      ...(q.cover ? { cover: q.cover } : {}),
      ...(q.aging ? { aging: q.aging } : {}),
      ...(q.received_month ? { receivedMonth: q.received_month } : {}),
    };
    expect(
      Object.keys(q).every((k) => ["cover", "aging", "received_month"].includes(k)),
      href,
    ).toBe(true);
    const res = await get(
      `/trpc/metrics.products?input=${encodeURIComponent(JSON.stringify({ json: input }))}`,
    );
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json().result.data.json as { total: number; rows: { pid: number }[] };
    return { total: page.total, pids: page.rows.map((r) => r.pid).sort() };
  }

  it("opens each days-of-cover, aging and receipt-month bucket as a Products list of as many products", async () => {
    const cover = await call<Bucket>("cover");
    const aging = await call<Bucket>("aging");
    const months = await call<SellThroughRow>("sellThrough", { months: 24 });
    const buckets = [...cover.rows, ...aging.rows, ...months.rows];
    expect(buckets.every((b) => b.href)).toBe(true);
    for (const b of buckets) {
      const list = await listOf(b.href!);
      expect(list.total, b.href!).toBe(b.products);
    }
    // The very products: 1001 holds stock of 47 and 149 days and 20 units dated 2025-01-05; 1003
    // (discontinued) 5 units first received 2024-06-10; 1002 was received in June.
    expect((await listOf("/products?aging=0_90")).pids).toEqual([1001]);
    expect((await listOf("/products?aging=91_180")).pids).toEqual([1001]);
    expect((await listOf("/products?aging=over_365")).pids).toEqual([1001, 1003]);
    expect((await listOf("/products?received_month=2026-06")).pids).toEqual([1002]);
    expect((await listOf("/products?received_month=2026-02")).pids).toEqual([1001]);
    expect(months.rows.map((r) => [r.month, r.products, r.href])).toContainEqual([
      "2026-05",
      1,
      "/products?received_month=2026-05",
    ]);
    expect(cover.rows.find((b) => b.key === "out")!.href).toBe("/products?cover=out");
    // A bad month names the field (400, not 500).
    const bad = await get(
      `/trpc/metrics.products?input=${encodeURIComponent(JSON.stringify({ json: { receivedMonth: "2026-13" } }))}`,
    );
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain("receivedMonth");
  });

  it("stores lost sales per vendor, product category (rolled up) and in total as the products' sums", async () => {
    for (const days of [90, 365] as const) {
      const oos = `m.out_of_stock_days_${days}`;
      const [expected] = await tdb.db.prisma.$queryRawUnsafe<{ total: number; n: number }[]>(
        `SELECT COALESCE(SUM(m.avg_daily_sales * ${oos} * p.price), 0)::float8 AS total, count(*)::int AS n
         FROM product_metrics m JOIN products p ON p.pid = m.pid
         WHERE p.kind = 'merchandise' AND ${oos} > 0 AND m.avg_daily_sales > 0`,
      );
      const vendor = await call<{ id: number; lost_revenue: number; products: number }>("lostSales", {
        days,
        dim: "vendor",
      });
      expect(vendor.extra?.total).toBe(Math.round(expected!.total * 100) / 100);
      expect(vendor.rows.reduce((n, r) => n + r.products, 0)).toBe(expected!.n);
      const category = await call<{ id: number; products: number }>("lostSales", { days, dim: "category" });
      // Paper (100) holds every product in a category (Cardstock, 101, rolls up into it).
      const paper = category.rows.find((r) => r.id === 100);
      const [inPaper] = await tdb.db.prisma.$queryRawUnsafe<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM product_metrics m JOIN products p ON p.pid = m.pid
         WHERE p.kind = 'merchandise' AND ${oos} > 0 AND m.avg_daily_sales > 0
           AND m.pid IN (SELECT pid FROM product_categories WHERE category_id IN (100, 101))`,
      );
      expect(paper?.products ?? 0).toBe(inPaper!.n);
    }
  });

  it("lets only users of the page see it, and only those with export:reports download it", async () => {
    const aging = await call<Bucket>("aging", undefined, viewer);
    expect(aging.can_export).toBe(false);
    const dead = await call<Bucket>("deadStock", { days: 180 }, viewer);
    expect(dead.rows[0]!.href).toBeNull();
    expect((await get("/api/analytics/export?chart=aging", viewer)).statusCode).toBe(403);
    expect((await get("/trpc/analytics.aging", overviewOnly)).statusCode).toBe(403);
    expect((await get("/api/analytics/export?chart=aging", overviewOnly)).statusCode).toBe(403);
    const csv = await get("/api/analytics/export?chart=aging");
    expect(csv.statusCode).toBe(200);
    expect(csv.body.trim().split("\n")).toEqual([
      "age_since_receipt,products,units,stock_value_cost",
      "0–90 days,1,50,30",
      "91–180 days,1,30,18",
      "181–365 days,0,0,0",
      "Over 365 days,2,25,17",
    ]);
    const bad = await get("/api/analytics/export?chart=pie");
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain("chart");
  });
});
