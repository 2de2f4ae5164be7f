// The metrics API: the product list (paging, sorting, search, filters, status counts),
// one product's figures explained through tRPC and REST, the detail (weekly history, forecast,
// backtest, stock runs) and the aggregates. A Full Reset of a small CSV folder fills the tables;
// the figures the assertions depend on are then set by hand, so the expected texts are worked out
// here and not taken from the calculation modules. Last, the explanation of every product of the
// worked fixture (tests/fixtures/source-planning) after a real Full Reset: its recomputations agree
// with what the calculation modules stored.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedGlobalSettings } from "../../server/modules/config/config.service.ts";
import { explainProductMetrics } from "../../server/modules/metrics/metrics.service.ts";
import {
  type AggregatePage,
  EXPLAINED_FIGURE_KEYS,
  type MetricsExplanation,
  type ProductMetricsDetail,
  type ProductMetricsPage,
  type ProductStatus,
} from "../../shared/metrics.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createTestDatabase, type TestDatabase, testBackend } from "../helpers/db.ts";
import { copyFixture, editFile, type PipelineHarness, pipeline } from "../helpers/pipeline.ts";

const D0 = "2026-06-30"; // FIXTURE_AS_OF's UTC date

function addDays(day: string, n: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}

// ---------------------------------------------------------------------------------------------
// The source: the small fixture plus product 2001 (the one explained) and 24 bulk products.

interface P {
  pid: number;
  title: string;
  sku: string;
  vendor: number;
  brand: number;
}
const BULK: P[] = Array.from({ length: 24 }, (_, i) => {
  const pid = 2002 + i;
  const nn = String(pid - 2000).padStart(2, "0");
  return {
    pid,
    title: `Bulk Item ${nn}`,
    sku: `BK-${nn}`,
    vendor: pid % 2 === 0 ? 11 : 10,
    brand: pid % 3 === 0 ? 2 : 1,
  };
});
const PRODUCTS: P[] = [
  { pid: 1001, title: "Cardstock 12x12 - Blue", sku: "CS-1", vendor: 10, brand: 1 },
  { pid: 1002, title: "Ink Pad Black", sku: "IP-1", vendor: 11, brand: 2 },
  { pid: 1003, title: "Discontinued Glue", sku: "GL-1", vendor: 10, brand: 1 },
  { pid: 2001, title: "Explained Widget", sku: "EW-1", vendor: 10, brand: 1 },
  ...BULK,
];

/** The hand-set list figures (after the run). */
const statusOf = (pid: number): ProductStatus =>
  pid === 2001
    ? "critical"
    : pid === 1003
      ? "discontinued"
      : (["reorder", "healthy", "overstocked"] as const)[pid % 3]!;
const reorderValueOf = (pid: number) => (pid === 2001 ? 36 : (pid % 5) * 10.5);
const abcOf = (pid: number) => (pid === 2001 ? "A" : pid % 4 === 0 ? "A" : pid % 4 === 1 ? "B" : "C");
const coverOf = (pid: number) => (pid === 2001 ? 10 : pid % 2 === 0 ? null : pid % 7);

/**
 * 2001 sells 2 units on each of the last 54 days (at 10:00), 5 units on 2025-09-15; one cancelled
 * line, and one on D0 after asOf (12:00), which is not a sale yet.
 */
const SALES_2001: { day: string; time?: string; qty: number; status: string; afterAsOf?: boolean }[] = [
  ...Array.from({ length: 54 }, (_, k) => ({ day: addDays(D0, -k), qty: 2, status: "completed" })),
  { day: "2025-09-15", qty: 5, status: "completed" },
  { day: "2026-06-20", qty: 40, status: "cancelled" },
  { day: D0, time: "18:00:00", qty: 100, status: "completed", afterAsOf: true },
];

function sourceDir(): string {
  const dir = copyFixture();
  const productRows = [
    "2001,Explained Widget,EW-1,4000000000001,1,10,,,3.00,,0.60,12,24,12,,,,,,0,,0,true,true,false,2025-01-01T00:00:00Z,2025-01-05,",
    ...BULK.map(
      (p) =>
        `${p.pid},${p.title},${p.sku},5000000000${p.sku.slice(3)},${p.brand},${p.vendor},,,2.00,,1.00,${p.pid % 9},1,1,,,,,,0,,0,true,true,false,2025-03-01T00:00:00Z,,`,
    ),
  ];
  editFile(dir, "products.csv", (t) => `${t.trimEnd()}\n${productRows.join("\n")}\n`);
  const lines = SALES_2001.map(
    (s, i) => `${10_000 + i},SO-W${i},2001,${s.day}T${s.time ?? "10:00:00"}Z,${s.qty},3.00,0,${s.status}`,
  );
  editFile(dir, "order_lines.csv", (t) => `${t.trimEnd()}\n${lines.join("\n")}\n`);
  // Vendor A's (10) lead-time samples: PO 500 of the fixture (2026-05-01 → 05-14, 13 days) and
  // PO 510 (2001's own, 17 days), 511 (first of two receipts, 18 days), 512 (18 days). Not samples:
  // PO 513 (ordered 2025-06-01, before D0 − 364 = 2025-07-01), PO 514 (its only receipt is after D0).
  const pos = [
    "510,10,received,2026-01-10,2026-01-27",
    "511,10,received,2026-02-02,",
    "512,10,received,2026-03-03,",
    "513,10,received,2025-06-01,",
    "514,10,received,2026-06-20,",
  ];
  const poLines = [
    "5100,510,2001,20,0.60",
    "5110,511,2003,10,1.00",
    "5120,512,2005,10,1.00",
    "5130,513,2001,5,0.60",
    "5140,514,2003,8,1.00",
  ];
  const receipts = [
    "100,5100,2026-01-27,20,0.60",
    "101,5110,2026-02-20,6,1.00",
    "102,5110,2026-02-25,4,1.00",
    "103,5120,2026-03-21,10,1.00",
    "104,5130,2025-06-11,5,0.60",
    "105,5140,2026-07-02,8,1.00",
  ];
  editFile(dir, "purchase_orders.csv", (t) => `${t.trimEnd()}\n${pos.join("\n")}\n`);
  editFile(dir, "po_lines.csv", (t) => `${t.trimEnd()}\n${poLines.join("\n")}\n`);
  editFile(dir, "receivings.csv", (t) => `${t.trimEnd()}\n${receipts.join("\n")}\n`);
  return dir;
}

// ---------------------------------------------------------------------------------------------
// 2001's forecast working and backtest, by hand (docs/metrics.md §8). n = ⌊546 ÷ 7⌋ = 78 weeks;
// counting weeks back from D0 (k = 0 ends on D0, t = 78 − k): x = 14 for k = 0 … 6 (2 a day), 10
// for k = 7 (its days D0−55 … D0−49 hold 5 of the 54 selling days), 5 for k = 41 (2025-09-15 is
// D0 − 288, ⌊288 ÷ 7⌋ = 41), else 0.
//   ℓ = Σ 0.8^k·x_k ÷ Σ_{k=0…77} 0.8^k = (14 × 5(1 − 0.8⁷) + 10 × 0.8⁷ + 5 × 0.8⁴¹) ÷ 5(1 − 0.8⁷⁸)
//     = (55.319936 + 2.097152 + 0.000532) ÷ 5.0000 = 57.417620 ÷ 5 = 11.483524
//   b over the last 26 weeks (k = 0 … 25, t̄ ↔ k̄ = 12.5, Σ(t − t̄)² = 26 × (26² − 1) ÷ 12 = 1462.5):
//     Σ(t − t̄)·x = Σ(12.5 − k)·x_k = 14 × (12.5 + 11.5 + … + 6.5) + 10 × 5.5 = 14 × 66.5 + 55 = 986
//     b = 986 ÷ 1462.5 = 0.674188
//   F₁ = max(0, ℓ + 0.8 b) = 11.483524 + 0.539350 = 12.022875
const L_2001 = (14 * 5 * (1 - 0.8 ** 7) + 10 * 0.8 ** 7 + 5 * 0.8 ** 41) / (5 * (1 - 0.8 ** 78));
const F1_2001 = L_2001 + 0.8 * (986 / 1462.5);
// Backtest, weeks t = 71 … 78 (k = 7 … 0; A = 10, then 14 × 7; ΣA = 108). Standard forecasts week
// k = j − 1 from the weeks k ≥ j only (j = 8 … 1): ℓ = Σ_{k≥j} 0.8^(k−j)·x_k ÷ 5(1 − 0.8^(78−j)),
// b = Σ_{k=j…j+25} (j + 12.5 − k)·x_k ÷ 1462.5, F = max(0, ℓ + 0.8 b). j = 8: ℓ = 5 × 0.8³³ ÷ 5 =
// 0.000634, b = 0 → F = 0.000634; j = 7: ℓ = (10 + 5 × 0.8³⁴) ÷ 5 = 2.000507, b = 10 × 12.5 ÷
// 1462.5 = 0.085470 → F = 2.000507 + 0.068376 = 2.068883; j = 6 … 1 likewise: F = 4.559039, 6.561556,
// 8.172431, 9.468461, 10.511084, 11.349448. Every F is below its A: Σ|A − F| = 108 − ΣF = 108 −
// 52.691535 = 55.308465 = −Σ(F − A); WAPE = 55.308465 ÷ 108 = 0.512115 = −bias; MAPE = (|10 −
// 0.000634| ÷ 10 + Σ over the 14s of (14 − F) ÷ 14) ÷ 8 = 0.529538. Seasonal (t − 1 ≥ 70 ≥ 53
// weeks before each): F = mean of x at t − 53 … t − 51 = weeks k + 51 … k + 53, all 0 (the only
// older sale is at k = 41): Σ|A − F| = 108, WAPE = MAPE = 1, bias = −1.
const STANDARD_F_2001 = [
  0.000633825404410375, 2.068883391963673, 4.559038590241403, 6.561555820270759, 8.172431084524753,
  9.468461173190004, 10.511083510869069, 11.349448032414074,
];
const ACTUAL_2001 = [10, 14, 14, 14, 14, 14, 14, 14];
const ABS_2001 = ACTUAL_2001.reduce((s, a, i) => s + Math.abs(a - STANDARD_F_2001[i]!), 0);
const MAPE_2001 = ACTUAL_2001.reduce((s, a, i) => s + Math.abs(a - STANDARD_F_2001[i]!) / a, 0) / 8;

// ---------------------------------------------------------------------------------------------

describe(`metrics API (${testBackend})`, () => {
  let t: TestApp;
  let harness: PipelineHarness;
  let token: string;
  let brandsOnly: string;

  const trpc = async <T>(path: string, input: unknown, tok = token) => {
    const res = await t.app.inject({
      url: `/trpc/${path}?input=${encodeURIComponent(JSON.stringify({ json: input }))}`,
      headers: { authorization: `Bearer ${tok}` },
    });
    const body = res.json();
    return {
      status: res.statusCode,
      data: body.result?.data?.json as T,
      error: body.error?.json as { message: string; data: { code: string } } | undefined,
    };
  };
  const list = async (input: Record<string, unknown>) => {
    const r = await trpc<ProductMetricsPage>("metrics.products", input);
    expect(r.error).toBeUndefined();
    return r.data;
  };
  const sql = (text: string, ...params: unknown[]) => t.tdb.db.prisma.$executeRawUnsafe(text, ...params);

  beforeAll(async () => {
    t = await startTestApp();
    const dir = sourceDir();
    harness = await pipeline(t.tdb.db, () => dir);
    const last = await harness.run("reset");
    expect(last.status, JSON.stringify(last)).toBe("complete");

    // List figures by hand, then product 2001's whole row.
    await sql(
      `UPDATE product_metrics SET
         status = CASE WHEN pid = 1003 THEN 'discontinued'
                       ELSE (ARRAY['reorder','healthy','overstocked'])[pid % 3 + 1] END,
         reorder_value = (pid % 5) * 10.5,
         abc_class = CASE pid % 4 WHEN 0 THEN 'A' WHEN 1 THEN 'B' ELSE 'C' END,
         days_of_cover = CASE WHEN pid % 2 = 0 THEN NULL ELSE pid % 7 END`,
    );
    await sql(
      `UPDATE product_metrics SET
         on_hand = 12, on_order = 0, units_30d = 60, units_90d = 108, units_365d = 113,
         revenue_30d = 180, revenue_365d = 339, history_start = '2025-01-01', history_days = 546,
         is_new = false, in_stock_days_90 = 90, out_of_stock_days_90 = 0, out_of_stock_days_365 = 3,
         avg_daily_sales = 1.2, daily_sales_std = 0.9493, avg_stock_units_365 = 20,
         cogs_365d = 67.80, gross_profit_365d = 271.20, margin_365d = 0.8, sell_through_30d = 0.8333,
         turnover_365d = 5.65, gmroi_365d = 22.6,
         stock_value_cost = 7.20, stock_value_retail = 36.00, units_7d = 14, revenue_7d = 42,
         revenue_90d = 324, total_sold = 113, lifetime_revenue = 339,
         lead_time_configured = 14, lead_time_configured_source = 'vendor_quoted',
         lead_time_measured = 16.5, lead_time_measured_std = 2.38, lead_time_measured_samples = 4,
         lead_time_measured_level = 'vendor', lead_time_days = 14, lead_time_source = 'configured',
         forecast_method = 'standard', demand_rate = 1.2, demand_source = 'history', days_of_stock = 30,
         horizon_days = 44, forecast_horizon_units = 56.42, service_level = 0.95, z_score = 1.6449,
         safety_stock = 8, safety_stock_method = 'statistical', lead_time_demand = 16.8,
         reorder_point = 25, reorder_qty = 60, reorder_value = 36, overstock_qty = 0, overstock_value = 0,
         days_of_cover = 10, stockout_date = '2026-07-10', status = 'critical', abc_class = 'A',
         abc_basis_value = 90, abc_share_before = 0.25
       WHERE pid = 2001`,
    );
    // Week 1 as worked out above (weeks 2 … 13 set to 8.4 by hand).
    await sql(
      `INSERT INTO product_forecasts (pid, method, requested_method, week_start, weekly, total_91d)
       VALUES (2001, 'standard', 'standard', '2026-07-01',
         ARRAY[$1::float8] || array_fill(8.4::float8, ARRAY[12]), $1::float8 + 100.8)
       ON CONFLICT (pid) DO UPDATE SET method = EXCLUDED.method, requested_method = EXCLUDED.requested_method,
         week_start = EXCLUDED.week_start, weekly = EXCLUDED.weekly, total_91d = EXCLUDED.total_91d`,
      F1_2001,
    );
    await sql("DELETE FROM product_forecast_accuracy WHERE pid = 2001");
    await sql(
      `INSERT INTO product_forecast_accuracy (pid, method, weeks, actual, wape, mape, bias)
       VALUES (2001, 'standard', 8, 108, $1, $2, $3), (2001, 'seasonal', 8, 108, 1, 1, -1)`,
      ABS_2001 / 108,
      MAPE_2001,
      -ABS_2001 / 108,
    );
    await sql("DELETE FROM product_stock_history WHERE pid = 2001");
    // The last 365 days (2025-07-01 … D0): 76 days of 20; sold out on 2025-09-15 (in stock that
    // day) and out of stock for the 3 days after; 224 days of 22, 60 of 14, D0 with 12. Σ = 20 × 76
    // + 22 × 224 + 14 × 60 + 12 = 7300 = 20 × 365. σd's weeks (§3): 9 units on 05-01 (week 8) and
    // 2 on D0 (week 0), the other 11 of the 13 weeks 0, all in stock.
    await sql(
      `INSERT INTO product_stock_history (pid, valid_from, valid_to, stock, sold_first_day) VALUES
         (2001, '2025-07-01', '2025-09-14', 20, 0), (2001, '2025-09-15', '2025-09-18', 0, 5),
         (2001, '2025-09-19', '2026-04-30', 22, 0), (2001, '2026-05-01', '2026-06-29', 14, 9),
         (2001, '2026-06-30', '2026-06-30', 12, 2)`,
    );
    // A product imported after the last calculation: no metrics row.
    await sql(
      `INSERT INTO products (pid, title, price, stock_quantity, created_at) VALUES (3001, 'Brand New', 1, 0, now())`,
    );

    await t.createUser("planner", ["access:products"]);
    token = (await t.login("planner")).token;
    await t.createUser("brandviewer", ["access:brands"]);
    brandsOnly = (await t.login("brandviewer")).token;
  }, 180_000);
  afterAll(async () => {
    await harness?.close();
    await t?.close();
  });

  // --- list

  const byReorderValueDesc = [...PRODUCTS].sort(
    (a, b) => reorderValueOf(b.pid) - reorderValueOf(a.pid) || a.pid - b.pid,
  );

  it("pages through every product with metrics, by reorder value (ties by pid)", async () => {
    const first = await list({ pageSize: 10 });
    expect(first.total).toBe(28);
    expect(first.page).toBe(1);
    expect(first.pageSize).toBe(10);
    expect(first.rows.map((r) => r.pid)).toEqual(byReorderValueDesc.slice(0, 10).map((p) => p.pid));
    const third = await list({ pageSize: 10, page: 3 });
    expect(third.rows.map((r) => r.pid)).toEqual(byReorderValueDesc.slice(20).map((p) => p.pid));
    expect(third.total).toBe(28);
    const past = await list({ pageSize: 10, page: 4 });
    expect(past.rows).toEqual([]);
    expect(past.total).toBe(28);
  });

  it("answers rows with names and plain numbers", async () => {
    const { rows } = await list({ search: "EW-1" });
    expect(rows).toEqual([
      {
        pid: 2001,
        title: "Explained Widget",
        sku: "EW-1",
        vendor: "Vendor A",
        brand: "Paper Co",
        on_hand: 12,
        on_order: 0,
        units_30d: 60,
        revenue_30d: 180,
        revenue_365d: 339,
        avg_daily_sales: 1.2,
        demand_rate: 1.2,
        days_of_cover: 10,
        safety_stock: 8,
        reorder_point: 25,
        reorder_qty: 60,
        reorder_value: 36,
        overstock_qty: 0,
        overstock_value: 0,
        stockout_date: "2026-07-10",
        margin_365d: 0.8,
        abc_class: "A",
        // The calculated class of its demand (the test overwrites other figures, not this one).
        xyz_class: "Z",
        status: "critical",
        forecast_method: "standard",
        kind: "merchandise",
      },
    ]);
  });

  it("sorts by a whitelisted column either way, nulls last", async () => {
    const titles = [...PRODUCTS].sort((a, b) => (a.title.toLowerCase() < b.title.toLowerCase() ? -1 : 1));
    const asc = await list({ sort: "title", dir: "asc", pageSize: 50 });
    expect(asc.rows.map((r) => r.title)).toEqual(titles.map((p) => p.title));

    const cover = await list({ sort: "days_of_cover", dir: "asc", pageSize: 50 });
    const withCover = PRODUCTS.filter((p) => coverOf(p.pid) !== null).sort(
      (a, b) => coverOf(a.pid)! - coverOf(b.pid)! || a.pid - b.pid,
    );
    const withoutCover = PRODUCTS.filter((p) => coverOf(p.pid) === null).sort((a, b) => a.pid - b.pid);
    expect(cover.rows.map((r) => r.pid)).toEqual([...withCover, ...withoutCover].map((p) => p.pid));
    const coverDesc = await list({ sort: "days_of_cover", dir: "desc", pageSize: 50 });
    expect(coverDesc.rows.slice(-withoutCover.length).map((r) => r.days_of_cover)).toEqual(
      withoutCover.map(() => null),
    );

    const status = await list({ sort: "status", dir: "asc", pageSize: 50 });
    const order = ["critical", "reorder", "healthy", "overstocked", "new", "discontinued", "excluded"];
    expect(status.rows.map((r) => r.pid)).toEqual(
      [...PRODUCTS]
        .sort((a, b) => order.indexOf(statusOf(a.pid)) - order.indexOf(statusOf(b.pid)) || a.pid - b.pid)
        .map((p) => p.pid),
    );
  });

  it("refuses sort keys outside the whitelist and out-of-range page sizes", async () => {
    const bad = await trpc("metrics.products", { sort: "pid; DROP TABLE products" });
    expect(bad.error?.data.code).toBe("BAD_REQUEST");
    expect(bad.error?.message).toMatch(/^sort: /);
    const small = await trpc("metrics.products", { pageSize: 5 });
    expect(small.error?.data.code).toBe("BAD_REQUEST");
    expect(small.error?.message).toMatch(/^pageSize: /);
  });

  it("searches title, SKU and barcode (any case, wildcards literal) and a number as the pid", async () => {
    const pids = async (search: string) => (await list({ search, pageSize: 50 })).rows.map((r) => r.pid);
    expect((await pids("item 1")).sort()).toEqual(
      BULK.filter((p) => /Item 1/.test(p.title)).map((p) => p.pid),
    );
    expect((await pids("bk-2")).sort()).toEqual([2020, 2021, 2022, 2023, 2024, 2025]);
    expect(await pids("4000000000001")).toEqual([2001]);
    expect(await pids("2001")).toEqual([2001]);
    expect(await pids("%")).toEqual([]);
    expect((await list({ search: "_" })).total).toBe(0);
  });

  it("filters by status, ABC class, vendor and brand; status counts ignore the status filter", async () => {
    const countsOf = (ps: P[]) => {
      const counts = {
        critical: 0,
        reorder: 0,
        healthy: 0,
        overstocked: 0,
        new: 0,
        discontinued: 0,
        excluded: 0,
      };
      for (const p of ps) counts[statusOf(p.pid)]++;
      return counts;
    };
    const all = await list({ status: "reorder", pageSize: 50 });
    const reorder = PRODUCTS.filter((p) => statusOf(p.pid) === "reorder");
    expect(all.total).toBe(reorder.length);
    expect(all.rows.every((r) => r.status === "reorder")).toBe(true);
    expect(all.status_counts).toEqual(countsOf(PRODUCTS));

    const vendorB = PRODUCTS.filter((p) => p.vendor === 11);
    const v = await list({ vendorId: 11, status: "healthy", pageSize: 50 });
    expect(v.rows.map((r) => r.pid).sort()).toEqual(
      vendorB.filter((p) => statusOf(p.pid) === "healthy").map((p) => p.pid),
    );
    expect(v.status_counts).toEqual(countsOf(vendorB));
    expect(v.rows.every((r) => r.vendor === "Vendor, B")).toBe(true);
    // The filter's name comes with the page (for its chip), even when no row matches.
    expect(v.vendor_name).toBe("Vendor, B");
    expect(v).not.toHaveProperty("brand_name");
    const none = await list({ vendorId: 11, brandId: 2, search: "no such product" });
    expect(none).toMatchObject({ total: 0, vendor_name: "Vendor, B", brand_name: "Ink Works" });
    expect((await list({ vendorId: 999 })).vendor_name).toBeNull();
    expect(await list({})).not.toHaveProperty("vendor_name");

    const abcA = await list({ abc: "A", brandId: 2, pageSize: 50 });
    expect(abcA.rows.map((r) => r.pid).sort()).toEqual(
      PRODUCTS.filter((p) => p.brand === 2 && abcOf(p.pid) === "A").map((p) => p.pid),
    );
  });

  it("answers from the new calculation at once after it commits (no kept page, ordering or count)", async () => {
    // Pages, orderings and status counts the list keeps of the current calculation.
    const pageOf = (input: Record<string, unknown>) => list({ pageSize: 10, ...input });
    const before = await pageOf({ page: 2 });
    await pageOf({ page: 1 });
    await pageOf({ status: "healthy" });
    expect(before.rows.map((r) => r.pid)).toEqual(byReorderValueDesc.slice(10, 20).map((p) => p.pid));
    const last = byReorderValueDesc.at(-1)!.pid;
    const moved = before.rows[0]!.pid;
    const values = await t.tdb.db.prisma.$queryRawUnsafe<
      { pid: number; reorder_value: number; status: string }[]
    >(
      "SELECT pid, reorder_value::float8 AS reorder_value, status FROM product_metrics WHERE pid IN ($1, $2)",
      last,
      moved,
    );
    // A calculation commits (its figures and its timestamp in one transaction): the last product
    // comes first, page 2's first product becomes healthy and moves to the end.
    const commit = (sqls: [string, ...unknown[]][]) =>
      t.tdb.db.prisma.$transaction(async (tx) => {
        for (const [text, ...params] of sqls) await tx.$executeRawUnsafe(text, ...params);
        await tx.$executeRawUnsafe(
          `UPDATE calculate_status SET last_calculation_timestamp = last_calculation_timestamp + interval '1 second'`,
        );
      });
    try {
      await commit([
        ["UPDATE product_metrics SET reorder_value = 1000 WHERE pid = $1", last],
        ["UPDATE product_metrics SET reorder_value = -1, status = 'healthy' WHERE pid = $1", moved],
      ]);
      const expected = [
        last,
        ...byReorderValueDesc.map((p) => p.pid).filter((pid) => pid !== last && pid !== moved),
        moved,
      ];
      const after = await pageOf({ page: 2 });
      expect(after.rows.map((r) => r.pid)).toEqual(expected.slice(10, 20));
      expect((await pageOf({ page: 1 })).rows[0]).toMatchObject({
        pid: last,
        reorder_value: 1000,
      });
      const healthy = await pageOf({ status: "healthy", pageSize: 50 });
      const wasHealthy = values.find((v) => v.pid === moved)!.status === "healthy";
      expect(healthy.total).toBe(before.status_counts.healthy + (wasHealthy ? 0 : 1));
      expect(healthy.rows.at(-1)).toMatchObject({
        pid: moved,
        status: "healthy",
        reorder_value: -1,
      });
    } finally {
      await commit(
        values.map((v) => [
          "UPDATE product_metrics SET reorder_value = $2, status = $3 WHERE pid = $1",
          v.pid,
          v.reorder_value,
          v.status,
        ]),
      );
    }
    expect((await pageOf({ page: 2 })).rows.map((r) => r.pid)).toEqual(
      byReorderValueDesc.slice(10, 20).map((p) => p.pid),
    );
  });

  // --- explain

  const expectedSubstituted: Record<string, string> = {
    on_hand: "max(12, 0) = 12",
    on_order: "no open purchase-order lines = 0",
    stock_value_cost: "12 × $0.60 = $7.20",
    stock_value_retail: "12 × $3.00 = $36.00",
    // 2 a day over the last 54 days (D0's line at 10:00 is before asOf, its 18:00 one after), 5 on
    // 2025-09-15; at 3.00 each.
    sales_units:
      "7 days (2026-06-24 … 2026-06-30) = 14; 30 days (2026-06-01 … 2026-06-30) = 60; 90 days (2026-04-02 … 2026-06-30) = 108; 365 days (2025-07-01 … 2026-06-30) = 113; lifetime (first sale 2025-09-15) = 113",
    sales_revenue:
      "7 days (2026-06-24 … 2026-06-30) = $42.00; 30 days (2026-06-01 … 2026-06-30) = $180.00; 90 days (2026-04-02 … 2026-06-30) = $324.00; 365 days (2025-07-01 … 2026-06-30) = $339.00; lifetime (first sale 2025-09-15) = $339.00",
    days_in_stock_90:
      "life start 2025-01-01 → days of the last 90 in its life: 2026-04-02 … 2026-06-30 = 90; out of stock: none → in stock 90 − 0 = 90",
    // The run of stock 0 from 2025-09-15 sold on its first day: out of stock 09-16 … 09-18.
    days_in_stock_365:
      "life start 2025-01-01 → days of the last 365 in its life: 2025-07-01 … 2026-06-30 = 365; out of stock: 2025-09-16 … 2025-09-18 (3) = 3 → in stock 365 − 3 = 362",
    avg_daily_sales: "108 ÷ 90 = 1.2/day",
    // The hand-made runs' weeks (above): Σw = 9 + 2 = 11, Σw² = 81 + 4 = 85 over n = 13 in-stock
    // weeks: σ_week = √((85 − 121/13) ÷ 12) = √6.307692 = 2.511512; σd = 2.511512 ÷ √7 = 0.949262
    daily_sales_std: "σ_week = √((85 − 11²/13) ÷ 12) = 2.5115; σd = 2.5115 ÷ √7 = 0.9493/day",
    demand_rate: "d = d̄ = 1.2/day",
    // Samples 17, 18, 18, 13: Σ = 66, Σ² = 289 + 324 + 324 + 169 = 1106; s² = (1106 − 1089) ÷ 3 = 17/3
    lead_time_measured:
      "own samples: 1 (< 3): PO 510 (ordered 2026-01-10, first receipt 2026-01-27) 17 days; vendor Vendor A's samples: 4 (≥ 3): PO 510 (ordered 2026-01-10, first receipt 2026-01-27) 17 days, PO 511 (ordered 2026-02-02, first receipt 2026-02-20) 18 days, PO 512 (ordered 2026-03-03, first receipt 2026-03-21) 18 days, PO 500 (ordered 2026-05-01, first receipt 2026-05-14) 13 days → mean = 66 ÷ 4 = 16.5 days, s = √((1106 − 66²/4) ÷ 3) = 2.38 days",
    lead_time:
      "lead_time_source = configured → L = 14 days (vendor's quoted lead time); measured: 16.5 days from 4 vendor samples",
    lead_time_std: "measured over 4 samples → σL = 2.38 days",
    // 14 × 0.90117049 + 1.44 × 5.6644 = 20.77312286; √ = 4.557754; × z(0.95) = 1.644854 → 7.4968
    safety_stock: "⌈1.6449 × √(14 × 0.9493² + 1.2² × 2.38²)⌉ = ⌈7.4968⌉ = 8",
    lead_time_demand: "1.2/day × 14 days = 16.8",
    reorder_point: "⌈1.2/day × 14 days + 8⌉ = ⌈24.8⌉ = 25",
    // 12.022875 + 5 × 8.4 + 2/7 × 8.4 = 56.422875
    forecast_horizon_units:
      "H = L + days of stock = 14 + 30 = 44 days; F(44) = (12.02 + 8.4 + 8.4 + 8.4 + 8.4 + 8.4) + 2/7 × 8.4 = 56.42",
    reorder_qty:
      "need = F(H) + SS − (on hand + on order) = 56.42 + 8 − (12 + 0) = 52.42 → ⌈52.42⌉ = 53, MOQ 24 → 53, case 12 → 60",
    reorder_value: "60 × $0.60 = $36.00",
    overstock_qty: "max(0, 12 − ⌈8 + 1.2/day × 180 days⌉) = max(0, 12 − 224) = 0",
    overstock_value: "0 × $0.60 = $0.00",
    days_of_cover: "12 ÷ 1.2/day = 10 days",
    stockout_date: "D0 + ⌈12 ÷ 1.2/day⌉ = 2026-06-30 + 10 days = 2026-07-10",
    status:
      "not discontinued; not excluded; not new (history 546 days ≥ 30); d = 1.2/day > 0 and the stock-out date 2026-07-10 is 10 days after D0 (< 14) → critical",
    abc_class: "basis revenue_30d = 90 > 0; share before = 0.25 < 0.8 → A",
    margin_365d: "cogs = 113 × $0.60 = $67.80; ($339.00 − $67.80) ÷ $339.00 = $271.20 ÷ $339.00 = 0.8",
    sell_through_30d: "60 ÷ (60 + 12) = 0.8333",
    avg_stock_units_365:
      "Σ max(S(d), 0) over 2025-07-01 … 2026-06-30 = 20 × 76 + 0 × 4 + 22 × 224 + 14 × 60 + 12 × 1 = 7300; 7300 ÷ 365 = 20",
    turnover_365d: "$67.80 ÷ (20 × $0.60) = 5.65",
    gmroi_365d: "$271.20 ÷ (20 × $0.60) = 22.6",
    // Worked out above the test (L_2001, F1_2001); Σ_{k=0…77} 0.8^k = 4.99999986 prints as 5.
    forecast_week_1:
      "n = ⌊546 ÷ 7⌋ = 78 weeks; ℓ = Σ 0.8^(n−t)·xₜ ÷ Σ 0.8^(n−t) = 57.4176 ÷ 5 = 11.4835; b = Σ(t − t̄)·xₜ ÷ Σ(t − t̄)² over the last 26 weeks = 986 ÷ 1462.5 = 0.6742; F₁ = max(0, 11.4835 + 0.6742 × 0.8) = 12.0229",
    forecast: `standard: 12.02 + ${Array(12).fill("8.4").join(" + ")} = 112.82`,
    backtest:
      "standard: Σ|A − F| = 55.3085, ΣA = 108 → WAPE = 55.3085 ÷ 108 = 0.5121; MAPE = 0.5295 (over the 8 weeks with A > 0); bias = Σ(F − A) ÷ ΣA = -55.3085 ÷ 108 = -0.5121; seasonal: Σ|A − F| = 108, ΣA = 108 → WAPE = 108 ÷ 108 = 1; MAPE = 1; bias = Σ(F − A) ÷ ΣA = -108 ÷ 108 = -1 → standard fits better (WAPE 0.5121 < 1)",
  };
  const FIGURES = Object.keys(expectedSubstituted).length;

  it("explains every figure of a product with the stored inputs filled in (tRPC)", async () => {
    const { data, error } = await trpc<MetricsExplanation>("metrics.explain", { pid: 2001 });
    expect(error).toBeUndefined();
    expect(data).toMatchObject({
      pid: 2001,
      title: "Explained Widget",
      sku: "EW-1",
      status: "critical",
      d0: D0,
    });
    expect(Number.isNaN(Date.parse(data.as_of))).toBe(false);
    expect(data.figures.map((f) => f.key)).toEqual(Object.keys(expectedSubstituted));
    expect(Object.keys(expectedSubstituted)).toEqual([...EXPLAINED_FIGURE_KEYS]);
    for (const f of data.figures) {
      expect(f.substituted, f.key).toBe(expectedSubstituted[f.key]);
      expect(f.section, f.key).toMatch(/^§\d+$/);
      expect(f.formula.length, f.key).toBeGreaterThan(0);
      // The arithmetic on the stored inputs gives the stored figures: no "changed since" notes.
      expect(f.note ?? "", f.key).not.toMatch(/changed since/);
    }
    const fig = (key: string) => data.figures.find((f) => f.key === key)!;
    expect(fig("reorder_qty")).toMatchObject({
      value: 60,
      unit: "units",
      formula:
        "need = F(H) + SS − (on hand + on order); 0 when need ≤ 0, else max(⌈need⌉, MOQ) rounded up to whole cases",
      inputs: {
        forecast_horizon_units: 56.42,
        safety_stock: 8,
        on_hand: 12,
        on_order: 0,
        moq: 24,
        case_qty: 12,
      },
      section: "§6",
    });
    expect(fig("reorder_point")).toMatchObject({ value: 25, formula: "ROP = ⌈d × L + SS⌉" });
    expect(fig("safety_stock")).toMatchObject({
      value: 8,
      inputs: { method: "statistical", z_score: 1.6449 },
    });
    expect(fig("safety_stock").inputs.z).toBeCloseTo(1.644854, 6);
    expect(fig("stockout_date").value).toBe("2026-07-10");
    expect(fig("lead_time").inputs).toMatchObject({
      configured: 14,
      configured_source: "vendor_quoted",
      measured: 16.5,
    });
    expect(fig("forecast")).toMatchObject({
      value: 112.82,
      inputs: { method: "standard", requested_method: "standard" },
    });
    // The new figures' values: stored figures, the windows as one text each, the better method.
    expect(
      Object.fromEntries(
        [
          "stock_value_cost",
          "stock_value_retail",
          "sales_units",
          "sales_revenue",
          "days_in_stock_90",
          "days_in_stock_365",
          "lead_time_measured",
          "reorder_value",
          "overstock_value",
          "avg_stock_units_365",
          "backtest",
        ].map((k) => [k, fig(k).value]),
      ),
    ).toEqual({
      stock_value_cost: 7.2,
      stock_value_retail: 36,
      sales_units: "14 / 60 / 108 / 113 / 113",
      sales_revenue: "$42.00 / $180.00 / $324.00 / $339.00 / $339.00",
      days_in_stock_90: 90,
      days_in_stock_365: 362,
      lead_time_measured: 16.5,
      reorder_value: 36,
      overstock_value: 0,
      avg_stock_units_365: 20,
      backtest: "standard",
    });
    expect(fig("forecast_week_1").value).toBeCloseTo(12.022875, 6);
    expect(fig("forecast_week_1").inputs).toMatchObject({ method: "standard", n: 78 });
    expect(fig("forecast_week_1").inputs.level).toBeCloseTo(L_2001, 9);
    expect(fig("forecast_week_1").inputs.recomputed_f1).toBeCloseTo(F1_2001, 9);
    expect(fig("lead_time_measured").inputs).toMatchObject({ own_samples: 1, vendor_samples: 4 });
    // The backtest's weeks, each with its actual and standard's forecast (seasonal's, smoothed with
    // the category's index, are not recomputed: its stored row is shown, and the note says so).
    expect(fig("backtest").inputs).toMatchObject({
      "week 2026-05-06 … 2026-05-12": "A 10, standard 0.0006",
      "week 2026-06-24 … 2026-06-30": "A 14, standard 11.3494",
      seasonal_weeks: 8,
    });
    expect(fig("backtest").note).toBe(
      "Seasonal's one-step forecasts are smoothed with the category's index (§8), which is not recomputed here: its stored figures are shown.",
    );
  });

  it("answers the same explanation over REST, with the cookie or the bearer token", async () => {
    const viaTrpc = (await trpc<MetricsExplanation>("metrics.explain", { pid: 2001 })).data;
    const bearer = await t.app.inject({
      url: "/api/products/2001/metrics/explain",
      headers: { authorization: `Bearer ${token}` },
    });
    expect(bearer.statusCode).toBe(200);
    expect(bearer.json()).toEqual(viaTrpc);
    const { cookie } = await t.login("planner");
    const viaCookie = await t.app.inject({ url: "/api/products/2001/metrics/explain", headers: { cookie } });
    expect(viaCookie.statusCode).toBe(200);
    expect(viaCookie.json().figures).toHaveLength(FIGURES);
  });

  it("404 for an unknown product and for one without metrics; 400 naming a bad pid", async () => {
    const get = (pid: string) =>
      t.app.inject({
        url: `/api/products/${pid}/metrics/explain`,
        headers: { authorization: `Bearer ${token}` },
      });
    const unknown = await get("999999");
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({
      error: "Product 999999 not found",
      message: "Product 999999 not found",
    });
    const fresh = await get("3001");
    expect(fresh.statusCode).toBe(404);
    expect(fresh.json().error).toBe(
      "No metrics have been calculated for product 3001 yet. Run a full update.",
    );
    const bad = await get("abc");
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatch(/^pid: /);

    const viaTrpc = await trpc("metrics.explain", { pid: 999999 });
    expect(viaTrpc.error).toMatchObject({ message: "Product 999999 not found", data: { code: "NOT_FOUND" } });
    const detail = await trpc("metrics.product", { pid: 3001 });
    expect(detail.error?.data.code).toBe("NOT_FOUND");
    expect((await trpc("metrics.explain", { pid: 0 })).error?.data.code).toBe("BAD_REQUEST");
  });

  it("needs access:products", async () => {
    const rest = await t.app.inject({
      url: "/api/products/2001/metrics/explain",
      headers: { authorization: `Bearer ${brandsOnly}` },
    });
    expect(rest.statusCode).toBe(403);
    expect((await trpc("metrics.explain", { pid: 2001 }, brandsOnly)).error?.data.code).toBe("FORBIDDEN");
    expect((await t.app.inject({ url: "/api/products/2001/metrics/explain" })).statusCode).toBe(401);
  });

  // --- detail

  it("detail: 104 weeks of history summing to the product's sales, forecast, backtest, stock runs", async () => {
    const { data, error } = await trpc<ProductMetricsDetail>("metrics.product", { pid: 2001 });
    expect(error).toBeUndefined();
    expect(data.explanation.figures).toHaveLength(FIGURES);
    const { history } = data;
    expect(history).toHaveLength(104);
    expect(history[0]!.week_start).toBe(addDays(D0, -727));
    expect(history.at(-1)).toEqual({ week_start: "2026-06-24", units: 14 });
    for (let i = 1; i < history.length; i++)
      expect(history[i]!.week_start).toBe(addDays(history[i - 1]!.week_start, 7));
    const completed = SALES_2001.filter((s) => s.status === "completed" && !s.afterAsOf);
    expect(history.reduce((s, w) => s + w.units, 0)).toBe(completed.reduce((s, l) => s + l.qty, 0));
    const september = history.find(
      (w) => w.week_start <= "2025-09-15" && "2025-09-15" < addDays(w.week_start, 7),
    );
    expect(september?.units).toBe(5);
    // The week of the cancelled line holds only the completed ones (2 a day).
    const june20 = history.find(
      (w) => w.week_start <= "2026-06-20" && "2026-06-20" < addDays(w.week_start, 7),
    );
    expect(june20?.units).toBe(14);
    // Same total as the calculation's lifetime units (module product_metrics).
    const [row] = await t.tdb.db.prisma.$queryRawUnsafe<{ total_sold: number }[]>(
      "SELECT total_sold FROM product_metrics WHERE pid = 2001",
    );
    expect(row!.total_sold).toBe(113);

    expect(data.forecast).toHaveLength(13);
    expect(data.forecast[0]).toMatchObject({ week_start: "2026-07-01" });
    expect(data.forecast[0]!.units).toBeCloseTo(F1_2001, 9);
    expect(data.forecast[12]).toEqual({ week_start: "2026-09-23", units: 8.4 });
    expect(data.forecast_method).toBe("standard");
    expect(data.accuracy).toEqual([
      { method: "seasonal", weeks: 8, wape: 1, mape: 1, bias: -1 },
      { method: "standard", weeks: 8, wape: ABS_2001 / 108, mape: MAPE_2001, bias: -ABS_2001 / 108 },
    ]);
    expect(data.stock).toEqual([
      { date: "2025-07-01", stock: 20 },
      { date: "2025-09-15", stock: 0 },
      { date: "2025-09-19", stock: 22 },
      { date: "2026-05-01", stock: 14 },
      { date: "2026-06-30", stock: 12 },
    ]);
  });

  it("an explanation notes a figure whose stored inputs changed since the calculation", async () => {
    await sql("UPDATE products SET stock_quantity = 5 WHERE pid = 2001");
    try {
      const { data } = await trpc<MetricsExplanation>("metrics.explain", { pid: 2001 });
      const onHand = data.figures.find((f) => f.key === "on_hand")!;
      expect(onHand.value).toBe(12);
      expect(onHand.substituted).toBe("max(5, 0) = 5");
      expect(onHand.note).toMatch(/give 5 but the calculation stored 12/);
    } finally {
      await sql("UPDATE products SET stock_quantity = 12 WHERE pid = 2001");
    }
  });

  it("a reorder quantity the 2-decimal F(H) would round the other way is not a change", async () => {
    // F(H) stored as 56.00 from an exact 56.003: need = 56.003 + 8 − 12 = 52.003 → 53, where the
    // stored 56.00 gives exactly 52.
    await sql("UPDATE products SET moq = 1, case_qty = 1 WHERE pid = 2001");
    await sql("UPDATE product_metrics SET forecast_horizon_units = 56.00, reorder_qty = 53 WHERE pid = 2001");
    try {
      const reorder = async () =>
        (await trpc<MetricsExplanation>("metrics.explain", { pid: 2001 })).data.figures.find(
          (f) => f.key === "reorder_qty",
        )!;
      const r = await reorder();
      expect(r.substituted).toBe(
        "need = F(H) + SS − (on hand + on order) = 56 + 8 − (12 + 0) = 52 → ⌈52⌉ = 52, MOQ 1 → 52, case 1 → 52",
      );
      expect(r.note ?? "").not.toMatch(/changed since/);
      // Two units off is a change.
      await sql("UPDATE product_metrics SET reorder_qty = 54 WHERE pid = 2001");
      expect((await reorder()).note).toMatch(/changed since/);
    } finally {
      await sql("UPDATE products SET moq = 24, case_qty = 12 WHERE pid = 2001");
      await sql(
        "UPDATE product_metrics SET forecast_horizon_units = 56.42, reorder_qty = 60 WHERE pid = 2001",
      );
    }
  });

  it("safety stock uses the exact z: a ceiling the 4-decimal z would move is not a change", async () => {
    // L = 7, σL = 0, σd = 1.1489: z(0.95) = 1.6448536 gives 1.6448536 × 1.1489 × √7 = 4.99987 → 5;
    // the stored z 1.6449 would give 5.000009 → 6.
    await sql(
      `UPDATE product_metrics SET safety_stock_method = 'statistical', service_level = 0.95, z_score = 1.6449,
         lead_time_days = 7, lead_time_measured = NULL, lead_time_measured_std = NULL,
         daily_sales_std = 1.1489, avg_daily_sales = 1.2, is_new = false, in_stock_days_90 = 90,
         safety_stock = 5
       WHERE pid = 2002`,
    );
    const { data } = await trpc<MetricsExplanation>("metrics.explain", { pid: 2002 });
    const ss = data.figures.find((f) => f.key === "safety_stock")!;
    expect(ss.value).toBe(5);
    expect(ss.substituted).toBe("⌈1.6449 × √(7 × 1.1489² + 1.2² × 0²)⌉ = ⌈4.9999⌉ = 5");
    expect(ss.note ?? "").not.toMatch(/changed since/);
  });

  it("a figure stored rounded half away from zero matches its recomputation on an exact tie", async () => {
    // (4000 − 7143) ÷ 4000 = −0.78575 exactly: PostgreSQL's round() stores −0.7858 (half away from
    // zero), where toFixed would give −0.7857.
    const [tie] = await t.tdb.db.prisma.$queryRawUnsafe<{ r: number }[]>(
      "SELECT round(-3143.00 / 4000.00, 4)::float8 AS r",
    );
    expect(tie?.r).toBe(-0.7858);
    await sql(
      `UPDATE product_metrics SET revenue_365d = 4000, units_365d = 7143, cogs_365d = 7143,
         gross_profit_365d = -3143, margin_365d = round(-3143.00 / 4000.00, 4)
       WHERE pid = 2004`,
    );
    const { data } = await trpc<MetricsExplanation>("metrics.explain", { pid: 2004 });
    const margin = data.figures.find((f) => f.key === "margin_365d")!;
    expect(margin.value).toBe(-0.7858);
    expect(margin.substituted).toBe(
      "cogs = 7143 × $1.00 = $7,143.00; ($4,000.00 − $7,143.00) ÷ $4,000.00 = -$3,143.00 ÷ $4,000.00 = -0.7858",
    );
    expect(margin.note).toBeUndefined();
  });

  it("says so instead of showing the forecast working or backtest when they no longer follow from the history", async () => {
    await sql("UPDATE product_forecasts SET weekly[1] = 9.5 WHERE pid = 2001");
    await sql("UPDATE product_forecast_accuracy SET wape = 0.3 WHERE pid = 2001 AND method = 'standard'");
    try {
      const { data } = await trpc<MetricsExplanation>("metrics.explain", { pid: 2001 });
      const week1 = data.figures.find((f) => f.key === "forecast_week_1")!;
      expect(week1.value).toBe(9.5);
      expect(week1.substituted).toBe("F₁ = 9.5 as stored (the working is left out: see the note)");
      expect(week1.note).toBe(
        "Recomputed from the weekly sales history, week 1 comes to 12.0229 but the calculation stored 9.5: data or settings changed since it ran; the next full update recalculates it.",
      );
      // The backtest: the stored rows are shown, with a note on what the history gives.
      const backtest = data.figures.find((f) => f.key === "backtest")!;
      expect(backtest.substituted).toBe(
        "standard: Σ|A − F| = 32.4, ΣA = 108 → WAPE = 32.4 ÷ 108 = 0.3; MAPE = 0.5295; bias = Σ(F − A) ÷ ΣA = -55.3085 ÷ 108 = -0.5121; seasonal: Σ|A − F| = 108, ΣA = 108 → WAPE = 108 ÷ 108 = 1; MAPE = 1; bias = Σ(F − A) ÷ ΣA = -108 ÷ 108 = -1 → standard fits better (WAPE 0.3 < 1)",
      );
      expect(backtest.note).toBe(
        "Seasonal's one-step forecasts are smoothed with the category's index (§8), which is not recomputed here: its stored figures are shown. Recomputed from the weekly sales history, the backtest gives standard: ΣA 108, WAPE 0.5121, MAPE 0.5295, bias -0.5121 but the calculation stored standard: ΣA 108, WAPE 0.3, MAPE 0.5295, bias -0.5121: data or settings changed since it ran; the next full update recalculates it. The stored figures are shown (Σ|A − F| = WAPE × ΣA, Σ(F − A) = bias × ΣA).",
      );
    } finally {
      await sql("UPDATE product_forecasts SET weekly[1] = $1::float8 WHERE pid = 2001", F1_2001);
      await sql(
        "UPDATE product_forecast_accuracy SET wape = $1 WHERE pid = 2001 AND method = 'standard'",
        ABS_2001 / 108,
      );
    }
  });

  it("reads a d stored with 4 decimals as any d it may have been rounded from: no 'changed' note for that", async () => {
    const [before] = await t.tdb.db.prisma.$queryRawUnsafe<
      { demand_source: string; demand_rate: number; days_of_cover: number | null; on_hand: number }[]
    >(
      "SELECT demand_source, demand_rate::float8, days_of_cover::float8, on_hand FROM product_metrics WHERE pid = 2001",
    );
    try {
      // A category profile's d of 1/18 a day is stored as 0.0556; the days of cover came from 1/18.
      await sql(
        "UPDATE product_metrics SET demand_source = 'category', demand_rate = 0.0556, days_of_cover = round(on_hand * 18.0, 1) WHERE pid = 2001",
      );
      let { data } = await trpc<MetricsExplanation>("metrics.explain", { pid: 2001 });
      let cover = data.figures.find((f) => f.key === "days_of_cover")!;
      expect(cover.value).toBe(Math.round(before!.on_hand * 180) / 10);
      expect(cover.note).toBeUndefined();
      // Further off than the rounding of d explains: the note stays.
      await sql("UPDATE product_metrics SET days_of_cover = days_of_cover + 1 WHERE pid = 2001");
      ({ data } = await trpc<MetricsExplanation>("metrics.explain", { pid: 2001 }));
      cover = data.figures.find((f) => f.key === "days_of_cover")!;
      expect(cover.note).toContain("changed since it ran");
    } finally {
      await sql(
        "UPDATE product_metrics SET demand_source = $1, demand_rate = $2, days_of_cover = $3 WHERE pid = 2001",
        before!.demand_source,
        before!.demand_rate,
        before!.days_of_cover,
      );
    }
  });

  // --- aggregates

  it("lists aggregates per kind with paging, sort and search, each behind its page's permission", async () => {
    const cols = `product_count, active_product_count, stock_units, stock_value_cost, stock_value_retail,
      units_7d, units_30d, units_90d, units_365d, revenue_7d, revenue_30d, revenue_90d, revenue_365d,
      lifetime_revenue, gross_profit_365d, margin_365d, reorder_value, overstock_value, status_counts, abc_counts`;
    const vals = (n: number, rev: number) =>
      `${n}, ${n}, ${n * 10}, ${n * 5}, ${n * 9}, 1, 2, 3, 4, 1, ${rev}, 3, 4, 5, 6, 0.25, 7, 8,
       '{"critical": ${n}, "healthy": 1}'::jsonb, '{"A": 1, "B": 0, "C": ${n}}'::jsonb`;
    await sql("DELETE FROM brand_metrics");
    await sql(
      `INSERT INTO brand_metrics (brand_id, ${cols}) VALUES (1, ${vals(3, 100.5)}), (2, ${vals(2, 200)})`,
    );
    await sql("DELETE FROM vendor_metrics");
    await sql(
      `INSERT INTO vendor_metrics (vendor_id, ${cols}, lead_time_samples, lead_time_mean, lead_time_std, on_time_rate, fill_rate)
       VALUES (10, ${vals(3, 50)}, 4, 16.5, 2.5, 0.75, 0.9)`,
    );
    await sql("DELETE FROM category_metrics");
    await sql(
      `INSERT INTO category_metrics (category_id, ${cols}) VALUES (100, ${vals(1, 5)}), (101, ${vals(1, 10)})`,
    );

    const admin = (await t.login("admin")).token;
    const brands = await trpc<AggregatePage>("metrics.aggregates", { kind: "brand", pageSize: 10 }, admin);
    expect(brands.data.total).toBe(2);
    expect(brands.data.rows.map((r) => r.name)).toEqual(["Ink Works", "Paper Co"]); // revenue_30d desc
    expect(brands.data.rows[1]).toMatchObject({
      id: 1,
      product_count: 3,
      stock_value_cost: 15,
      revenue_30d: 100.5,
      margin_365d: 0.25,
      status_counts: {
        critical: 3,
        reorder: 0,
        healthy: 1,
        overstocked: 0,
        new: 0,
        discontinued: 0,
        excluded: 0,
      },
      abc_counts: { A: 1, B: 0, C: 3 },
    });
    const byName = await trpc<AggregatePage>(
      "metrics.aggregates",
      { kind: "brand", sort: "name", dir: "asc", search: "paper" },
      brandsOnly,
    );
    expect(byName.data).toMatchObject({ total: 1, rows: [{ id: 1, name: "Paper Co" }] });
    const vendors = await trpc<AggregatePage>("metrics.aggregates", { kind: "vendor" }, admin);
    expect(vendors.data.rows).toEqual([
      expect.objectContaining({
        id: 10,
        name: "Vendor A",
        lead_time_samples: 4,
        lead_time_mean: 16.5,
        fill_rate: 0.9,
      }),
    ]);
    const categories = await trpc<AggregatePage>("metrics.aggregates", { kind: "category" }, admin);
    expect(categories.data.rows).toEqual([
      expect.objectContaining({ id: 101, name: "Cardstock", parent_id: 100, parent_name: "Paper", level: 2 }),
      expect.objectContaining({ id: 100, name: "Paper", parent_id: null, parent_name: null, level: 1 }),
    ]);
    // Categories of one level (the top ones for a chart that does not count a product twice).
    const top = await trpc<AggregatePage>("metrics.aggregates", { kind: "category", level: 1 }, admin);
    expect(top.data).toMatchObject({ total: 1, rows: [{ id: 100 }] });
    const level2 = await trpc<AggregatePage>(
      "metrics.aggregates",
      { kind: "category", level: 2, search: "paper" },
      admin,
    );
    expect(level2.data).toMatchObject({ total: 0, rows: [] });
    expect((await trpc("metrics.aggregates", { kind: "brand", level: 1 }, admin)).status).toBe(400);
    // The tree: each parent before its children, siblings by name (Z→A with desc, parents still first).
    await sql(`INSERT INTO category_metrics (category_id, ${cols}) VALUES (200, ${vals(1, 1)})`);
    const treeIds = async (dir: string, search?: string) =>
      (
        await trpc<AggregatePage>(
          "metrics.aggregates",
          { kind: "category", sort: "tree", dir, search },
          admin,
        )
      ).data.rows.map((r) => r.id);
    // 200 (Internal) is of type 20, not a product category: not listed, even with a row of figures.
    // 300 (Albums) is a second product root.
    await sql(
      `INSERT INTO categories (id, parent_id, name, type, level) VALUES (300, NULL, 'Albums', 10, 1)`,
    );
    await sql(`INSERT INTO category_metrics (category_id, ${cols}) VALUES (300, ${vals(1, 1)})`);
    expect(await treeIds("asc")).toEqual([300, 100, 101]); // Albums, Paper, Paper › Cardstock
    expect(await treeIds("desc")).toEqual([100, 101, 300]);
    expect(await treeIds("asc", "a")).toEqual([300, 100, 101]);
    expect(await treeIds("asc", "card")).toEqual([101]);
    await sql("DELETE FROM category_metrics WHERE category_id = 300");
    await sql("DELETE FROM categories WHERE id = 300");
    expect((await trpc("metrics.aggregates", { kind: "vendor", sort: "tree" }, admin)).status).toBe(400);
    // Vendors also sort by their delivery performance (nulls last either way); the others do not.
    await sql(
      `INSERT INTO vendor_metrics (vendor_id, ${cols}, lead_time_samples, lead_time_mean, lead_time_std, on_time_rate, fill_rate)
       VALUES (11, ${vals(1, 20)}, 0, NULL, NULL, NULL, 0.95)`,
    );
    const vendorIds = async (sort: string, dir: string) =>
      (await trpc<AggregatePage>("metrics.aggregates", { kind: "vendor", sort, dir }, admin)).data.rows.map(
        (r) => r.id,
      );
    expect(await vendorIds("fill_rate", "asc")).toEqual([10, 11]);
    expect(await vendorIds("fill_rate", "desc")).toEqual([11, 10]);
    expect(await vendorIds("on_time_rate", "asc")).toEqual([10, 11]);
    expect(await vendorIds("on_time_rate", "desc")).toEqual([10, 11]);
    expect(await vendorIds("lead_time_mean", "desc")).toEqual([10, 11]);
    const wrongKind = await trpc("metrics.aggregates", { kind: "brand", sort: "fill_rate" }, admin);
    expect(wrongKind.status).toBe(400);
    // access:brands alone opens brands, not vendors.
    const denied = await trpc("metrics.aggregates", { kind: "vendor" }, brandsOnly);
    expect(denied.error?.data.code).toBe("FORBIDDEN");
  });
});

// ---------------------------------------------------------------------------------------------
// The explanation over the real calculation modules: the worked fixture of docs/metrics.md §12.

describe(`metrics.explain over a Full Reset of the worked fixture (${testBackend})`, () => {
  let tdb: TestDatabase;
  let p: PipelineHarness;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    const { prisma } = tdb.db;
    // §12.1, as tests/integration/planning.test.ts sets it up.
    await seedGlobalSettings(tdb.db);
    await prisma.$executeRawUnsafe(
      "UPDATE settings_global SET setting_value = 'measured' WHERE setting_key = 'lead_time_source'",
    );
    await prisma.$executeRawUnsafe(
      `INSERT INTO settings_product (pid, lead_time_days, safety_stock, forecast_method, exclude_from_forecast) VALUES
         (1002, NULL, 0, 'seasonal', false),
         (1006, 10, 0, NULL, false),
         (1007, NULL, 0, NULL, true),
         (1008, NULL, 20, NULL, false)`,
    );
    await prisma.$executeRawUnsafe(
      `INSERT INTO settings_vendor (vendor, default_lead_time_days, default_days_of_stock) VALUES
         ('Northwind Paper', NULL, 28),
         ('Local Goods', 7, 20)`,
    );
    p = await pipeline(tdb.db, () => path.resolve("tests/fixtures/source-planning"));
    expect(await p.run("reset")).toMatchObject({ status: "complete", error: null });
  }, 120_000);
  afterAll(async () => {
    await p?.close();
    await tdb?.drop();
  });

  it("recomputes every figure of every product as the modules stored it", async () => {
    const pids = (
      await tdb.db.prisma.$queryRawUnsafe<{ pid: number }[]>("SELECT pid FROM products ORDER BY pid")
    ).map((r) => r.pid);
    expect(pids).toHaveLength(16);
    for (const pid of pids) {
      const e = await explainProductMetrics(tdb.db, pid);
      expect(e.d0).toBe("2026-06-30");
      expect(e.figures.map((f) => f.key)).toEqual([...EXPLAINED_FIGURE_KEYS]);
      for (const f of e.figures) expect.soft(f.note ?? "", `${pid} ${f.key}`).not.toMatch(/changed since/);
      const week1 = e.figures.find((f) => f.key === "forecast_week_1")!;
      if (pid === 1007 || pid === 1015) {
        // Excluded by its setting (1007) or not merchandise (1015, postage): no forecast, no backtest.
        expect(week1).toMatchObject({ value: null, substituted: "excluded → no forecast" });
        continue;
      }
      const { recomputed_f1: recomputed, stored_f1: stored } = week1.inputs as Record<string, number>;
      expect.soft(Math.abs(recomputed! - stored!), `${pid} F₁`).toBeLessThanOrEqual(1e-6);
      expect.soft(week1.value, `${pid} F₁`).toBe(stored);
      expect.soft(week1.substituted, `${pid} F₁`).toMatch(/^n = /);
    }
  });

  it("works out §12's figures: 1002's seasonal week 1, 1009's vendor samples, 1003's days out of stock", async () => {
    const fig = async (pid: number, key: string) =>
      (await explainProductMetrics(tdb.db, pid)).figures.find((f) => f.key === key)!;
    // §12.7: base₁ = mean of weeks k = 52, 51, 50 (10 each), g = 720 ÷ 600 = 1.2 → 12.
    expect((await fig(1002, "forecast_week_1")).substituted).toBe(
      "n = ⌊728 ÷ 7⌋ = 104 weeks; base₁ = mean of the weeks 2025-06-25 … 2025-07-01 (10), 2025-07-02 … 2025-07-08 (10), 2025-07-09 … 2025-07-15 (10) = (10 + 10 + 10) ÷ 3 = 10; g = Σ of the last 52 weeks ÷ Σ of the 52 before = 720 ÷ 600 = 1.2; F₁ = base₁ × g = 10 × 1.2 = 12",
    );
    // §12.3: 1009 has one sample (PO 206), vendor 20 has five: 10, 14, 18, 22, 16.
    expect((await fig(1009, "lead_time_measured")).substituted).toBe(
      "own samples: 1 (< 3): PO 206 (ordered 2026-06-10, first receipt 2026-06-26) 16 days; vendor Variable Freight's samples: 5 (≥ 3): PO 201 (ordered 2025-09-03, first receipt 2025-09-13) 10 days, PO 202 (ordered 2025-12-12, first receipt 2025-12-26) 14 days, PO 203 (ordered 2026-03-22, first receipt 2026-04-09) 18 days, PO 204 (ordered 2026-05-01, first receipt 2026-05-23) 22 days, PO 206 (ordered 2026-06-10, first receipt 2026-06-26) 16 days → mean = 80 ÷ 5 = 16 days, s = √((1360 − 80²/5) ÷ 4) = 4.47 days",
    );
    // §12.5: out of stock D0−48 … D0−39 (05-13 … 05-22).
    expect((await fig(1003, "days_in_stock_90")).substituted).toBe(
      "life start 2026-04-02 → days of the last 90 in its life: 2026-04-02 … 2026-06-30 = 90; out of stock: 2026-05-13 … 2026-05-22 (10) = 10 → in stock 90 − 10 = 80",
    );
    // §12.10: 1015 (postage, kind fee) has 50 on hand at 3.20 but no stock value, and the
    // explanation says why instead of "50 × 3.20 = 160.00 … changed since".
    expect(await fig(1015, "stock_value_cost")).toMatchObject({
      value: 0,
      substituted: "not merchandise (fee) → 0",
    });
    expect((await fig(1015, "stock_value_retail")).note).toBeUndefined();
    // §12.7: 1002's backtest, over the same 8 weeks: standard 0.000498 against seasonal 0.016642.
    const b1002 = await fig(1002, "backtest");
    expect(b1002.value).toBe("standard");
    expect(b1002.substituted).toContain("→ standard fits better (WAPE 0.0005 < 0.0166)");
    // 1003 (n = 12): seasonal ran at none of its backtest weeks, so its row is blank and the two are
    // not compared; the explanation says why.
    const b1003 = await fig(1003, "backtest");
    expect(b1003.value).toBeNull();
    expect(b1003.substituted).toContain(
      "seasonal: ran at none of the 8 weeks (each had fewer than 53 weeks before it) → WAPE, MAPE and bias are —",
    );
    expect(b1003.substituted).toContain("→ seasonal ran at none of the 8 weeks (n = 12 ≤ 53): not compared");
    expect(b1003.inputs).toMatchObject({ seasonal_weeks: 0, seasonal_wape: null, standard_weeks: 8 });
    // 1005 (n = 57): seasonal ran at the 4 latest weeks only, which sold nothing.
    const b1005 = await fig(1005, "backtest");
    expect(b1005.value).toBeNull();
    expect(b1005.substituted).toContain(
      "seasonal (over the 4 weeks where it ran): ΣA = 0 → WAPE, MAPE and bias are —",
    );
    expect(b1005.substituted).toContain(
      "→ not compared: nothing was sold in the weeks where both ran (ΣA = 0)",
    );
    expect(b1005.note).toContain("for 4 of the 8 weeks it had fewer, so it has no error there");
  });
});
