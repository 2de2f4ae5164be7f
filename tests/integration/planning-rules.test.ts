// The planning rules of docs/metrics.md §5–§7, §9 and §11, one focused case at a time. A Full Reset
// imports a small catalogue (written below); each case then sets the inputs the earlier modules
// would have computed (product_metrics columns, product_forecasts rows, settings) inside a
// transaction, runs only the planning / aggregates module there, reads the result and rolls back.
// Every expected value is worked out by hand in the comment beside it.
// D0 = 2026-06-30; global defaults unless a case says otherwise: service level 0.95
// (z = 1.6448536), days of stock 30, safety stock days 7, low stock 14 days, overstock 180 days,
// ABC on revenue_30d with thresholds 0.8 / 0.95.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SqlConnection } from "../../server/db/database.ts";
import { aggregatesModule } from "../../server/jobs/planning/aggregates.ts";
import { leadTimesModule } from "../../server/jobs/planning/lead-times.ts";
import { planningModule } from "../../server/jobs/planning/planning.ts";
import { stockHistoryModule } from "../../server/jobs/planning/stock-history.ts";
import { createTestDatabase, rolledBack, type TestDatabase, testBackend } from "../helpers/db.ts";
import { FIXTURE_AS_OF, type PipelineHarness, pipeline } from "../helpers/pipeline.ts";

const asOf = FIXTURE_AS_OF;

// --- The catalogue -------------------------------------------------------------------------------

interface ProductRow {
  pid: number;
  brand?: number;
  vendor?: number;
  cost?: string;
  moq?: number;
  caseQty?: number;
  replenishable?: boolean;
  discontinued?: boolean;
}

const PRODUCTS: ProductRow[] = [
  // §5 safety stock
  { pid: 1 }, // statistical
  { pid: 2 }, // days (short history)
  { pid: 3 }, // fixed (product setting)
  // §6 reorder quantity
  { pid: 4, cost: "2.50", moq: 40, caseQty: 12 },
  { pid: 5 },
  { pid: 6 },
  { pid: 7 },
  // §6 stock-out date
  { pid: 8 },
  { pid: 9 },
  { pid: 10 },
  { pid: 11 },
  { pid: 12 },
  // §7 status
  { pid: 20, replenishable: false, discontinued: true },
  { pid: 21 },
  { pid: 22, replenishable: false },
  { pid: 23 },
  { pid: 24 },
  { pid: 25 },
  { pid: 26, cost: "1.20" },
  { pid: 27 },
  { pid: 28 },
  { pid: 29 },
  // §9 ABC
  ...[40, 41, 42, 43, 44, 45, 46].map((pid) => ({ pid })),
  // §5 category profile
  { pid: 50 },
  { pid: 51 },
  { pid: 52, discontinued: true },
  ...[53, 54, 55, 56, 57, 58].map((pid) => ({ pid })),
  // §6 F(H) of a new product planned from its own history
  { pid: 59 },
  { pid: 60 },
  // §5 category profile up a three-level tree
  { pid: 61 },
  { pid: 62 },
  { pid: 63 },
  { pid: 64 },
  { pid: 65, discontinued: true },
  // §11 aggregates: brand 3, vendor 12
  { pid: 301, brand: 3, vendor: 12, cost: "2.00" },
  { pid: 302, brand: 3, vendor: 12, cost: "1.50", discontinued: true },
  { pid: 303, brand: 4, vendor: 12 },
];

const CSV: Record<string, string> = {
  "brands.csv": "brand_id,name\n1,Planning Brand\n3,Aggregate Brand\n4,No Cost Brand\n",
  "vendors.csv": "vendor_id,name,lead_time_days\n10,Vendor A,14\n12,Vendor Agg,21\n13,Vendor Idle,\n",
  // Two-level tree: 101 and 102 under 100; 200 and 300 ← 301 are separate trees. Three levels:
  // 400 ⊃ 401 ⊃ 402 and 403 (siblings).
  "categories.csv": [
    "category_id,parent_id,name,type,level",
    "100,,Paper,10,1",
    "101,100,Cardstock,11,2",
    "102,100,Vellum,11,2",
    "200,,Internal,20,1",
    "300,,Agg Root,10,1",
    "301,300,Agg Child,11,2",
    "400,,Tree Root,10,1",
    "401,400,Tree Branch,11,2",
    "402,401,Tree Leaf,12,3",
    "403,401,Tree Sibling,12,3",
    "",
  ].join("\n"),
  "tax_categories.csv": "code,label\n0,Not Specifically Set\n",
  "sizes.csv": "code,label\n",
  "shipping_restrictions.csv": "code,label\n0,None\n",
  "products.csv": [
    "pid,title,brand_id,vendor_id,price,cost_price,stock_quantity,moq,case_qty,replenishable,discontinued,created_at",
    ...PRODUCTS.map((p) =>
      [
        p.pid,
        `Product ${p.pid}`,
        p.brand ?? 1,
        p.vendor ?? 10,
        "5.00",
        p.cost ?? (p.pid === 303 ? "" : "1.00"),
        0,
        p.moq ?? 1,
        p.caseQty ?? 1,
        p.replenishable ?? true,
        p.discontinued ?? false,
        "2025-01-01T00:00:00Z",
      ].join(","),
    ),
    "",
  ].join("\n"),
  "product_categories.csv": [
    "pid,category_id",
    "50,101",
    "51,101",
    "52,101",
    "53,101",
    "54,100",
    "55,102",
    "56,100",
    "56,101",
    "56,102",
    "57,100",
    "57,102",
    "58,200",
    "61,400",
    "62,401",
    "63,402",
    "64,403",
    "65,401",
    "301,300",
    "301,301",
    "302,301",
    "303,300",
    "",
  ].join("\n"),
  "order_lines.csv": "line_id,order_number,pid,order_date,quantity,price,discount,status\n",
  // Incoming stock for the stock-out cases (§6).
  "purchase_orders.csv": [
    "po_id,vendor_id,status,date_ordered,date_expected",
    "900,10,ordered,2026-06-20,2026-07-05", // pid 8: 20 arrive 07-05
    "901,10,partial,2026-06-25,2026-08-15", // pid 8: 50 − 10 received = 40 arrive 08-15
    "902,10,ordered,2026-06-01,2026-06-20", // pid 9: overdue, counts as D0 + 1 = 07-01
    "903,10,ordered,2026-06-24,", // pid 10: no expected date → 06-24 + ⌈L⌉
    "904,10,draft,2026-06-29,2026-07-02", // pid 8: a draft is not incoming
    "905,10,ordered,2026-06-26,2026-07-05", // pid 11: arrives on the stock-out day
    "906,10,received,2026-06-01,2026-06-28", // pid 8: closed with 50 missing: not incoming
    "",
  ].join("\n"),
  "po_lines.csv": [
    "po_line_id,po_id,pid,ordered_qty,cost_each",
    "9000,900,8,20,1.00",
    "9010,901,8,50,1.00",
    "9020,902,9,10,1.00",
    "9030,903,10,4,1.00",
    "9040,904,8,100,1.00",
    "9050,905,11,5,1.00",
    "9060,906,8,100,1.00",
    "",
  ].join("\n"),
  "receivings.csv": [
    "receiving_id,po_line_id,received_date,qty,cost_each",
    "1,9010,2026-06-28,10,1.00",
    "2,9060,2026-06-27,50,1.00",
    // Dated after D0: not received yet (§1), so PO 900's 20 are all still incoming.
    "3,9000,2026-07-02,5,1.00",
    "",
  ].join("\n"),
};

// --- Helpers -------------------------------------------------------------------------------------

/** product_metrics inputs a case sets (the columns stock_history, lead_times and product_metrics fill). */
interface Inputs {
  is_new?: boolean;
  in_stock_days_90?: number;
  avg_daily_sales?: number;
  daily_sales_std?: number;
  lead_time_days?: number;
  lead_time_measured_std?: number | null;
  on_hand?: number;
  on_order?: number;
  units_30d?: number;
  revenue_30d?: number;
}

interface PlanRow {
  pid: number;
  demand_rate: number;
  demand_source: string;
  days_of_stock: number;
  horizon_days: number;
  forecast_horizon_units: number;
  service_level: number;
  z_score: number;
  safety_stock: number;
  safety_stock_method: string;
  lead_time_demand: number;
  reorder_point: number;
  reorder_qty: number;
  reorder_value: number;
  overstock_qty: number;
  overstock_value: number;
  days_of_cover: number | null;
  stockout_date: string | null;
  status: string;
  abc_class: string;
  abc_basis_value: number;
  abc_share_before: number | null;
}

describe(`planning rules (${testBackend})`, () => {
  let tdb: TestDatabase;
  let p: PipelineHarness;
  let conn: SqlConnection;
  let dir: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "planning-rules-"));
    for (const [file, text] of Object.entries(CSV)) fs.writeFileSync(path.join(dir, file), text);
    tdb = await createTestDatabase();
    p = await pipeline(tdb.db, () => dir);
    const final = await p.run("reset");
    expect(final).toMatchObject({ status: "complete", error: null });
    conn = await tdb.db.connect();
  });
  afterAll(async () => {
    await conn?.release();
    await p?.close();
    await tdb?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function setGlobal(tx: SqlConnection, key: string, value: string) {
    await tx.query(
      `INSERT INTO settings_global (setting_key, setting_value) VALUES ($1, $2)
       ON CONFLICT (setting_key) DO UPDATE SET setting_value = EXCLUDED.setting_value`,
      [key, value],
    );
  }

  async function setInputs(tx: SqlConnection, pid: number, inputs: Inputs) {
    const cols = Object.keys(inputs);
    await tx.query(
      `UPDATE product_metrics SET ${cols.map((c, i) => `${c} = $${i + 2}`).join(", ")} WHERE pid = $1`,
      [pid, ...Object.values(inputs)],
    );
  }

  async function setForecast(tx: SqlConnection, pid: number, weekly: number[]) {
    await tx.query(
      `INSERT INTO product_forecasts (pid, method, requested_method, week_start, weekly, total_91d)
       VALUES ($1, 'standard', 'standard', '2026-07-01', $2::float8[], $3)
       ON CONFLICT (pid) DO UPDATE SET weekly = EXCLUDED.weekly, total_91d = EXCLUDED.total_91d`,
      [pid, weekly, weekly.reduce((a, b) => a + b, 0)],
    );
  }

  /**
   * A neutral start for every product, whatever the other modules computed: established, 90 days
   * in stock, no demand, L = 14, no measured deviation, nothing on hand or on order, no sales, no
   * forecasts, no product settings. Then `setup`, then the planning module; answers `pids`' rows.
   */
  async function plan(
    setup: (tx: SqlConnection) => Promise<void>,
    pids: number[],
  ): Promise<Map<number, PlanRow>> {
    return rolledBack(conn, async (tx) => {
      await tx.exec(`
        UPDATE product_metrics SET is_new = false, in_stock_days_90 = 90, avg_daily_sales = 0,
          daily_sales_std = 0, lead_time_days = 14, lead_time_measured_std = NULL, on_hand = 0,
          on_order = 0, units_30d = 0, revenue_30d = 0, lifetime_revenue = 0;
        DELETE FROM product_forecasts;
        DELETE FROM settings_product;`);
      await setup(tx);
      await planningModule.run({ conn: tx, asOf });
      const rows = await tx.query<PlanRow>(
        `SELECT pid, demand_rate::float8 AS demand_rate, demand_source, days_of_stock,
           horizon_days::float8 AS horizon_days, forecast_horizon_units::float8 AS forecast_horizon_units,
           service_level::float8 AS service_level, z_score::float8 AS z_score, safety_stock,
           safety_stock_method, lead_time_demand::float8 AS lead_time_demand, reorder_point, reorder_qty,
           reorder_value::float8 AS reorder_value, overstock_qty, overstock_value::float8 AS overstock_value,
           days_of_cover::float8 AS days_of_cover, stockout_date::text AS stockout_date, status, abc_class,
           abc_basis_value::float8 AS abc_basis_value, abc_share_before::float8 AS abc_share_before
         FROM product_metrics WHERE pid = ANY($1::int[])`,
        [pids],
      );
      return new Map(rows.map((r) => [r.pid, r]));
    });
  }

  // --- §5 Safety stock --------------------------------------------------------------------------

  it("statistical safety stock: ⌈z·√(L·σd² + d̄²·σL²)⌉, and the reorder point on top of d × L", async () => {
    const r = await plan(
      async (tx) => {
        // d̄ = 2, σd = 1.5, L = 9, σL = 2, 60 days in stock (≥ 30, established).
        const inputs = { in_stock_days_90: 60, avg_daily_sales: 2, daily_sales_std: 1.5, lead_time_days: 9 };
        await setInputs(tx, 1, { ...inputs, lead_time_measured_std: 2 });
        // Same as pid 1 with a fixed safety stock of 25 units (product setting).
        await setInputs(tx, 3, { ...inputs, lead_time_measured_std: 2 });
        await tx.exec("INSERT INTO settings_product (pid, safety_stock) VALUES (3, 25)");
        // Only 20 days in stock: too short for the statistical method → days: ⌈7 × 1.5⌉.
        await setInputs(tx, 2, { in_stock_days_90: 20, avg_daily_sales: 1.5, daily_sales_std: 3 });
      },
      [1, 2, 3],
    );

    // pid 1: √(9·1.5² + 2²·2²) = √(20.25 + 16) = √36.25 = 6.02080; × 1.64485 = 9.9033 → 10.
    expect(r.get(1)).toMatchObject({
      demand_rate: 2,
      demand_source: "history",
      service_level: 0.95,
      z_score: 1.6449,
      safety_stock: 10,
      safety_stock_method: "statistical",
      // d × L = 2 × 9 = 18; ROP = ⌈18 + 10⌉ = 28.
      lead_time_demand: 18,
      reorder_point: 28,
    });
    // pid 2: ⌈7 × 1.5⌉ = ⌈10.5⌉ = 11; ROP = ⌈1.5 × 14 + 11⌉ = 32.
    expect(r.get(2)).toMatchObject({ safety_stock: 11, safety_stock_method: "days", reorder_point: 32 });
    // pid 3: the setting wins over the statistical method: SS = 25; ROP = ⌈18 + 25⌉ = 43.
    expect(r.get(3)).toMatchObject({ safety_stock: 25, safety_stock_method: "fixed", reorder_point: 43 });
  });

  it("z follows the global service level; σL is 0 without a measurement", async () => {
    const r = await plan(
      async (tx) => {
        await setGlobal(tx, "default_service_level", "0.9");
        await setInputs(tx, 1, {
          in_stock_days_90: 60,
          avg_daily_sales: 2,
          daily_sales_std: 1.5,
          lead_time_days: 9,
        });
        await setInputs(tx, 2, {
          in_stock_days_90: 60,
          avg_daily_sales: 2,
          daily_sales_std: 1.5,
          lead_time_days: 9,
          lead_time_measured_std: 2,
        });
      },
      [1, 2],
    );
    // z(0.9) = 1.28155. pid 1, σL = 0: √(9 · 2.25) = 4.5; × 1.28155 = 5.767 → 6.
    expect(r.get(1)).toMatchObject({ service_level: 0.9, z_score: 1.2816, safety_stock: 6 });
    // pid 2: √36.25 × 1.28155 = 7.716 → 8.
    expect(r.get(2)).toMatchObject({ safety_stock: 8, reorder_point: 26 });
  });

  // --- §6 Reorder quantity ----------------------------------------------------------------------

  it("reorder quantity: the horizon's forecast with its fractional week, MOQ and case rounding, never negative", async () => {
    const r = await plan(
      async (tx) => {
        // L = 10, days of stock 30 → H = 40 days = 5 weeks + 5/7 of week 6. 10 days in stock → days
        // method: SS = ⌈7 × 1⌉ = 7.
        const base = {
          in_stock_days_90: 10,
          avg_daily_sales: 1,
          lead_time_days: 10,
          on_hand: 10,
          on_order: 5,
        };
        await setInputs(tx, 4, base);
        await setForecast(tx, 4, [7, 7, 7, 7, 7, 14, 7, 7, 7, 7, 7, 7, 7]);
        await setInputs(tx, 5, base);
        await setForecast(tx, 5, [7, 7, 7, 7, 7, 10, 7, 7, 7, 7, 7, 7, 7]);
        // L = 70 → H = 100 days = 14 weeks + 2/7: weeks beyond 13 repeat week 13.
        await setInputs(tx, 6, { in_stock_days_90: 10, avg_daily_sales: 1, lead_time_days: 70 });
        await setForecast(tx, 6, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
        // Plenty on hand, no forecast row → F(H) = d × H = 1 × 44 = 44; need = 44 + 7 − 500 < 0.
        await setInputs(tx, 7, { in_stock_days_90: 10, avg_daily_sales: 1, on_hand: 500 });
      },
      [4, 5, 6, 7],
    );

    // pid 4: F(40) = 5 × 7 + 5/7 × 14 = 45; need = 45 + 7 − (10 + 5) = 37; max(37, MOQ 40) = 40;
    // cases of 12: ⌈40 / 12⌉ × 12 = 48; value 48 × 2.50 = 120.
    expect(r.get(4)).toMatchObject({
      horizon_days: 40,
      days_of_stock: 30,
      forecast_horizon_units: 45,
      safety_stock: 7,
      reorder_point: 17, // ⌈1 × 10 + 7⌉
      reorder_qty: 48,
      reorder_value: 120,
    });
    // pid 5: F(40) = 35 + 5/7 × 10 = 42.142857 → 42.14; need = 42.14 + 7 − 15 = 34.14 → 35 (MOQ 1, case 1).
    expect(r.get(5)).toMatchObject({ forecast_horizon_units: 42.14, reorder_qty: 35, reorder_value: 35 });
    // pid 6: F(100) = (1 + … + 13) + 13 + 2/7 × 13 = 91 + 13 + 3.714 = 107.71; need = 107.71 + 7 = 114.71 → 115.
    expect(r.get(6)).toMatchObject({ horizon_days: 100, forecast_horizon_units: 107.71, reorder_qty: 115 });
    expect(r.get(7)).toMatchObject({ forecast_horizon_units: 44, reorder_qty: 0, reorder_value: 0 });
  });

  // --- §6 Stock-out date ------------------------------------------------------------------------

  it("stock-out date counts open purchase orders arriving before the stock runs out", async () => {
    const r = await plan(
      async (tx) => {
        await setInputs(tx, 8, { avg_daily_sales: 1, on_hand: 10 });
        await setInputs(tx, 9, { avg_daily_sales: 1, on_hand: 2 });
        await setInputs(tx, 10, { avg_daily_sales: 0.5, on_hand: 2, lead_time_days: 10.4 });
        await setInputs(tx, 11, { avg_daily_sales: 1, on_hand: 5 });
        await setInputs(tx, 12, { avg_daily_sales: 1, on_hand: 0 });
        await setInputs(tx, 29, { avg_daily_sales: 0, on_hand: 7 });
      },
      [8, 9, 10, 11, 12, 29],
    );

    // pid 8: 10 on hand run out on D0 + 10 = 07-10, after PO 900's 20 arrive on 07-05 → C₁ = 30 →
    // D0 + 30 = 07-30, before PO 901's 40 arrive on 08-15. The draft PO 904 (07-02) and the closed
    // PO 906 are not incoming (either would have moved the date). PO 900's receipt of 5 is dated
    // 07-02, after D0: not received yet (counted, only 15 would arrive: C₁ = 25 → 07-25).
    expect(r.get(8)).toMatchObject({ stockout_date: "2026-07-30", days_of_cover: 10 });
    // pid 9: PO 902 was due 06-20: overdue → arrives D0 + 1 = 07-01, before the 2 units run out
    // (07-02) → C₁ = 12 → D0 + 12 = 07-12.
    expect(r.get(9)?.stockout_date).toBe("2026-07-12");
    // pid 10: no expected date → 06-24 + ⌈10.4⌉ = 07-05; 2 ÷ 0.5 = 4 days → 07-04, before it.
    expect(r.get(10)).toMatchObject({ stockout_date: "2026-07-04", days_of_cover: 4 });
    // pid 11: 5 units run out on 07-05, the day PO 905's 5 arrive: not before it → C₁ = 10 → 07-10.
    expect(r.get(11)?.stockout_date).toBe("2026-07-10");
    // pid 12: nothing on hand → D0.
    expect(r.get(12)).toMatchObject({ stockout_date: "2026-06-30", days_of_cover: 0 });
    // pid 29: no demand → no date, no cover.
    expect(r.get(29)).toMatchObject({ stockout_date: null, days_of_cover: null });
  });

  // --- §7 Status --------------------------------------------------------------------------------

  it("status: the first matching rule wins", async () => {
    const r = await plan(
      async (tx) => {
        // 20 days in stock everywhere below → SS = ⌈7 × d⌉ (days method); L = 14.
        const at = (pid: number, inputs: Inputs) => setInputs(tx, pid, { in_stock_days_90: 20, ...inputs });
        // Discontinued, not replenishable, new and about to run out: discontinued.
        await at(20, { is_new: true, avg_daily_sales: 1, on_hand: 1 });
        // Excluded by its setting, new, about to run out: excluded (and nothing to reorder).
        await at(21, { is_new: true, avg_daily_sales: 1, on_hand: 1 });
        await tx.exec("INSERT INTO settings_product (pid, exclude_from_forecast) VALUES (21, true)");
        // Not replenishable, new: excluded.
        await at(22, { is_new: true, avg_daily_sales: 1, on_hand: 1 });
        // New and about to run out (no category: planned from its own d̄ = 1): new.
        await at(23, { is_new: true, avg_daily_sales: 1, on_hand: 1 });
        // d = 1, 10 on hand → runs out 07-10, 10 days < 14: critical (it is below its ROP too).
        await at(24, { avg_daily_sales: 1, on_hand: 10 });
        // 14 on hand → 07-14, 14 days is not fewer than 14; SS 7, ROP = ⌈14 + 7⌉ = 21 ≥ 14: reorder.
        await at(25, { avg_daily_sales: 1, on_hand: 14 });
        // d = 0.1, 100 on hand: SS = ⌈0.7⌉ = 1, ROP = ⌈1.4 + 1⌉ = 3;
        // overstock = 100 − ⌈1 + 0.1 × 180⌉ = 100 − 19 = 81: overstocked.
        await at(26, { avg_daily_sales: 0.1, on_hand: 100 });
        // d = 1, 50 on hand: ROP 21 < 50, overstock 50 − ⌈7 + 180⌉ < 0, runs out in 50 days: healthy.
        await at(27, { avg_daily_sales: 1, on_hand: 50 });
        // L = 200: ROP = ⌈200 + 7⌉ = 207 ≥ 190, and overstock = 190 − ⌈7 + 180⌉ = 3: reorder wins.
        await at(28, { avg_daily_sales: 1, on_hand: 190, lead_time_days: 200 });
        // No demand, nothing on hand: SS 0, ROP 0, no overstock, no stock-out date: healthy.
        await at(29, { avg_daily_sales: 0, on_hand: 0 });
      },
      [20, 21, 22, 23, 24, 25, 26, 27, 28, 29],
    );

    const status = Object.fromEntries([...r].map(([pid, row]) => [pid, row.status]));
    expect(status).toEqual({
      20: "discontinued",
      21: "excluded",
      22: "excluded",
      23: "new",
      24: "critical",
      25: "reorder",
      26: "overstocked",
      27: "healthy",
      28: "reorder",
      29: "healthy",
    });
    // Discontinued and excluded products order nothing although they need stock
    // (need = 1 × 44 + 7 − 1 = 50); the new one does: max(⌈50⌉, 1) = 50.
    expect([20, 21, 22, 23].map((pid) => r.get(pid)?.reorder_qty)).toEqual([0, 0, 0, 50]);
    expect(r.get(24)).toMatchObject({ stockout_date: "2026-07-10", reorder_point: 21 });
    expect(r.get(25)).toMatchObject({ stockout_date: "2026-07-14", reorder_point: 21 });
    // 81 × cost 1.20 = 97.20.
    expect(r.get(26)).toMatchObject({
      safety_stock: 1,
      reorder_point: 3,
      overstock_qty: 81,
      overstock_value: 97.2,
    });
    expect(r.get(27)).toMatchObject({ overstock_qty: 0, reorder_point: 21 });
    expect(r.get(28)).toMatchObject({ overstock_qty: 3, reorder_point: 207 });
    expect(r.get(29)).toMatchObject({ safety_stock: 0, reorder_point: 0, stockout_date: null });
  });

  // --- §9 ABC -----------------------------------------------------------------------------------

  it("ABC: share of the basis ranked before against 0.8 / 0.95; the crossing product takes the higher class", async () => {
    const r = await plan(
      async (tx) => {
        // Revenue 30 days; every other product has 0. Total = 450 + 400 + 100 + 25 + 25 = 1000.
        for (const [pid, revenue] of [
          [40, 25],
          [41, 450],
          [42, 100],
          [43, 25],
          [44, 400],
        ] as const) {
          await setInputs(tx, pid, { revenue_30d: revenue, units_30d: 1 });
        }
      },
      [40, 41, 42, 43, 44, 45],
    );

    const abc = (pid: number) => {
      const row = r.get(pid)!;
      return [row.abc_basis_value, row.abc_share_before, row.abc_class];
    };
    expect(abc(41)).toEqual([450, 0, "A"]); // ranked first
    expect(abc(44)).toEqual([400, 0.45, "A"]); // 0.45 → 0.85 crosses 0.8: A
    expect(abc(42)).toEqual([100, 0.85, "B"]); // 0.85 → 0.95 crosses 0.95: B
    expect(abc(40)).toEqual([25, 0.95, "C"]); // tie at 25: the smaller pid first; 0.95 is not < 0.95
    expect(abc(43)).toEqual([25, 0.975, "C"]);
    expect(abc(45)).toEqual([0, 1, "C"]); // no sales: C
  });

  it("ABC on units (sales_30d), and all C without any sales", async () => {
    const units = await plan(
      async (tx) => {
        await setGlobal(tx, "abc_calculation_basis", "sales_30d");
        await setInputs(tx, 41, { revenue_30d: 450 });
        await setInputs(tx, 45, { units_30d: 3 });
        await setInputs(tx, 46, { units_30d: 1 });
      },
      [41, 45, 46],
    );
    // Units: 45 has 3 of 4 (share before 0 → A), 46 has 1 (share before 0.75 → A); 41 sold 0 units.
    expect([41, 45, 46].map((pid) => units.get(pid)?.abc_class)).toEqual(["C", "A", "A"]);
    expect(units.get(46)).toMatchObject({ abc_basis_value: 1, abc_share_before: 0.75 });

    const none = await plan(async () => {}, [41, 45]);
    // Total basis 0: the share is undefined (null), every product is C.
    expect(none.get(41)).toMatchObject({ abc_class: "C", abc_basis_value: 0, abc_share_before: null });
  });

  // --- §5 New product from its category profile -------------------------------------------------

  it("a new product is planned from its primary category's profile", async () => {
    const r = await plan(
      async (tx) => {
        // Category 101 (level 2): 50 (d̄ 2) and 51 (d̄ 1) are established; 52 is discontinued and 53
        // new, so they do not count: profile(101) = (2 + 1) ÷ 2 = 1.5.
        await setInputs(tx, 50, { avg_daily_sales: 2 });
        await setInputs(tx, 51, { avg_daily_sales: 1 });
        await setInputs(tx, 52, { avg_daily_sales: 10 });
        await setInputs(tx, 53, { avg_daily_sales: 5, is_new: true, in_stock_days_90: 10 });
        // 54 is linked to 100 only: profile(100) = 9 (the new 56 and 57 do not count).
        await setInputs(tx, 54, { avg_daily_sales: 9 });
        // profile(102) = 4.
        await setInputs(tx, 55, { avg_daily_sales: 4 });
        // 56: linked to 100 (level 1), 101 and 102 (level 2): primary = 101 (highest level, smaller id).
        await setInputs(tx, 56, { is_new: true, in_stock_days_90: 10, avg_daily_sales: 0.2 });
        await setForecast(tx, 56, Array(13).fill(100)); // ignored: planned from the profile
        // 57: linked to 100 and 102: primary = 102.
        await setInputs(tx, 57, { is_new: true, in_stock_days_90: 10, avg_daily_sales: 0.2 });
        // 58: linked to 200, which has no established products: no profile → its own d̄.
        await setInputs(tx, 58, { is_new: true, in_stock_days_90: 10, avg_daily_sales: 0.5 });
      },
      [53, 56, 57, 58],
    );

    // 56: d = 1.5; H = 14 + 30 = 44; F(H) = 1.5 × 44 = 66; SS (days) = ⌈7 × 1.5⌉ = 11;
    // ROP = ⌈1.5 × 14 + 11⌉ = 32; need = 66 + 11 − 0 = 77.
    expect(r.get(56)).toMatchObject({
      demand_rate: 1.5,
      demand_source: "category",
      forecast_horizon_units: 66,
      safety_stock: 11,
      safety_stock_method: "days",
      reorder_point: 32,
      reorder_qty: 77,
      status: "new",
    });
    // 57: d = 4; SS = 28; ROP = ⌈56 + 28⌉ = 84.
    expect(r.get(57)).toMatchObject({
      demand_rate: 4,
      demand_source: "category",
      safety_stock: 28,
      reorder_point: 84,
    });
    // 58: d = 0.5 (history), no forecast row → F = 0.5 × 44 = 22.
    expect(r.get(58)).toMatchObject({
      demand_rate: 0.5,
      demand_source: "history",
      forecast_horizon_units: 22,
    });
    // 53 is linked to 101 too: d = 1.5 from the profile, not its own 5.
    expect(r.get(53)).toMatchObject({ demand_rate: 1.5, demand_source: "category" });
  });

  it("a new product without a category profile up its tree: the nearest ancestor's profile", async () => {
    // Tree 400 ⊃ 401 ⊃ 402, 403. 63 is new and linked to 402 only: 402 has no established products.
    // 61 (d̄ 3) is linked to 400 directly; 64 (d̄ 50) to 403, a sibling of 402, not an ancestor; 65
    // (d̄ 20, linked to 401) is discontinued.
    const setup = async (tx: SqlConnection) => {
      await setInputs(tx, 61, { avg_daily_sales: 3 });
      await setInputs(tx, 64, { avg_daily_sales: 50 });
      await setInputs(tx, 65, { avg_daily_sales: 20 });
      await setInputs(tx, 63, { is_new: true, in_stock_days_90: 5, avg_daily_sales: 0.4 });
    };
    // 62 (linked to 401, the parent) is new too: 401 has no established products either, so the
    // grandparent 400 profiles: mean of 61 = 3. H = 44: F(H) = 3 × 44 = 132; SS (days) = ⌈7 × 3⌉ =
    // 21; ROP = ⌈3 × 14 + 21⌉ = 63.
    const grand = await plan(
      async (tx) => {
        await setup(tx);
        await setInputs(tx, 62, { is_new: true, in_stock_days_90: 5, avg_daily_sales: 8 });
      },
      [63],
    );
    expect(grand.get(63)).toMatchObject({
      demand_rate: 3,
      demand_source: "category",
      forecast_horizon_units: 132,
      safety_stock: 21,
      reorder_point: 63,
    });
    // 62 established (d̄ 6): the parent 401 is the nearest ancestor with a profile: 6 (65 is
    // discontinued, so not (6 + 20) ÷ 2). F(H) = 6 × 44 = 264; SS = 42; ROP = ⌈84 + 42⌉ = 126.
    const parent = await plan(
      async (tx) => {
        await setup(tx);
        await setInputs(tx, 62, { avg_daily_sales: 6 });
      },
      [63],
    );
    expect(parent.get(63)).toMatchObject({
      demand_rate: 6,
      demand_source: "category",
      forecast_horizon_units: 264,
      safety_stock: 42,
      reorder_point: 126,
    });
  });

  it("a new product planned from its own history: F(H) = d × H, not its forecast", async () => {
    const r = await plan(
      async (tx) => {
        // 59: created D0−5 (6 days), sold 4 a day on 5 of them: d̄ = 20 ÷ 6 = 3.3333; no category.
        // Under 7 days old, n = 0: the forecast module stores 13 weeks of 0.
        await setInputs(tx, 59, { is_new: true, in_stock_days_90: 6, avg_daily_sales: 3.3333, on_hand: 10 });
        await setForecast(tx, 59, Array(13).fill(0));
        // 60: new, d̄ = 2, with a forecast of 20 a week from its first weeks.
        await setInputs(tx, 60, { is_new: true, in_stock_days_90: 20, avg_daily_sales: 2 });
        await setForecast(tx, 60, Array(13).fill(20));
      },
      [59, 60],
    );
    // 59: H = 14 + 30 = 44; F(H) = 3.3333 × 44 = 146.6652 → 146.67; SS (days) = ⌈7 × 3.3333⌉ =
    // ⌈23.3331⌉ = 24; need = 146.67 + 24 − 10 = 160.67 → 161 (the forecast's 0 would give 24 − 10 = 14).
    expect(r.get(59)).toMatchObject({
      demand_rate: 3.3333,
      demand_source: "history",
      horizon_days: 44,
      forecast_horizon_units: 146.67,
      safety_stock: 24,
      reorder_qty: 161,
      status: "new",
    });
    // 60: F(H) = 2 × 44 = 88 (the forecast would give 6 × 20 + 2/7 × 20 = 125.71); SS = 14;
    // need = 88 + 14 − 0 = 102.
    expect(r.get(60)).toMatchObject({
      demand_source: "history",
      forecast_horizon_units: 88,
      safety_stock: 14,
      reorder_qty: 102,
    });
  });

  it("on order counts only receipts dated up to D0", async () => {
    // From the Full Reset: pid 8's open lines are PO 900 (20, its receipt of 5 is dated 07-02,
    // after D0: not received yet) and PO 901 (50 − 10 = 40); the draft PO 904 and the received
    // PO 906 are not open. 20 + 40 = 60.
    const [row] = await conn.query<{ on_order: number }>(
      "SELECT on_order FROM product_metrics WHERE pid = 8",
    );
    expect(row?.on_order).toBe(60);
  });

  // --- JIT ---------------------------------------------------------------------------------------

  it("stock_history and lead_times run their statements with JIT off, and put the setting back", async () => {
    for (const module of [stockHistoryModule, leadTimesModule]) {
      const { seen, after } = await rolledBack(conn, async (tx) => {
        await tx.exec("SELECT set_config('jit', 'on', true)");
        // The real connection, asked for the session's jit before each statement of the module
        // (except the module's own reads and writes of that setting).
        const seen: { sql: string; jit: string }[] = [];
        const check = async (sql: string) => {
          if (/\bjit\b/.test(sql)) return;
          const [row] = await tx.query<{ jit: string }>("SELECT current_setting('jit') AS jit");
          seen.push({ sql: sql.trim().slice(0, 60), jit: row!.jit });
        };
        const spy: SqlConnection = {
          query: async <T>(sql: string, params?: unknown[]) => {
            await check(sql);
            return tx.query<T>(sql, params);
          },
          exec: async (sql) => {
            await check(sql);
            return tx.exec(sql);
          },
          execute: async (sql, params) => {
            await check(sql);
            return tx.execute(sql, params);
          },
          transaction: (fn) => tx.transaction(fn),
          copyCsv: (opts) => tx.copyCsv(opts),
          copyOut: (sql) => tx.copyOut(sql),
          copyOutRows: (sql, fields, onRow) => tx.copyOutRows(sql, fields, onRow),
          release: (destroy) => tx.release(destroy),
        };
        await module.run({ conn: spy, asOf });
        const [row] = await tx.query<{ jit: string }>("SELECT current_setting('jit') AS jit");
        return { seen, after: row!.jit };
      });
      expect(seen.length, module.name).toBeGreaterThan(3);
      expect(
        seen.filter((s) => s.jit !== "off"),
        module.name,
      ).toEqual([]);
      expect(after, module.name).toBe("on");
    }
  });

  // --- §11 Aggregates ---------------------------------------------------------------------------

  it("aggregates: brand, vendor and a two-level category tree, each product once", async () => {
    const rows = await rolledBack(conn, async (tx) => {
      const set = (pid: number, values: Record<string, unknown>) =>
        tx.query(
          `UPDATE product_metrics SET ${Object.keys(values)
            .map((c, i) => `${c} = $${i + 2}`)
            .join(", ")} WHERE pid = $1`,
          [pid, ...Object.values(values)],
        );
      // 301: categories 300 and 301 (the child), brand 3.
      await set(301, {
        on_hand: 10,
        stock_value_cost: 20,
        stock_value_retail: 50,
        units_7d: 1,
        units_30d: 2,
        units_90d: 3,
        units_365d: 4,
        revenue_7d: 10,
        revenue_30d: 20,
        revenue_90d: 30,
        revenue_365d: 100,
        lifetime_revenue: 150,
        gross_profit_365d: 40,
        reorder_value: 12,
        overstock_value: 0,
        status: "reorder",
        abc_class: "A",
      });
      // 302: category 301, brand 3, discontinued.
      await set(302, {
        on_hand: 5,
        stock_value_cost: 7.5,
        stock_value_retail: 20,
        units_7d: 0,
        units_30d: 1,
        units_90d: 1,
        units_365d: 2,
        revenue_7d: 0,
        revenue_30d: 5,
        revenue_90d: 5,
        revenue_365d: 50,
        lifetime_revenue: 60,
        gross_profit_365d: 10,
        reorder_value: 0,
        overstock_value: 3,
        status: "overstocked",
        abc_class: "B",
      });
      // 303: category 300, brand 4, no cost (gross profit null).
      await set(303, {
        on_hand: 0,
        stock_value_cost: 0,
        stock_value_retail: 0,
        units_7d: 0,
        units_30d: 0,
        units_90d: 0,
        units_365d: 1,
        revenue_7d: 0,
        revenue_30d: 0,
        revenue_90d: 0,
        revenue_365d: 30,
        lifetime_revenue: 30,
        gross_profit_365d: null,
        reorder_value: 24,
        overstock_value: 0,
        status: "critical",
        abc_class: "C",
      });
      await tx.exec(`DELETE FROM vendor_lead_times;
        INSERT INTO vendor_lead_times (vendor_id, samples, mean_days, std_days, on_time_rate, fill_rate)
        VALUES (12, 4, 18.5, 2.25, 0.75, 0.9);`);
      await aggregatesModule.run({ conn: tx, asOf });
      const numeric = `product_count, active_product_count, stock_units,
        stock_value_cost::float8, stock_value_retail::float8, units_7d, units_30d, units_90d, units_365d,
        revenue_7d::float8, revenue_30d::float8, revenue_90d::float8, revenue_365d::float8,
        lifetime_revenue::float8, gross_profit_365d::float8, margin_365d::float8,
        reorder_value::float8, overstock_value::float8, status_counts, abc_counts`;
      return {
        categories: await tx.query(
          `SELECT category_id AS id, ${numeric} FROM category_metrics WHERE category_id IN (300, 301) ORDER BY 1`,
        ),
        brands: await tx.query(
          `SELECT brand_id AS id, ${numeric} FROM brand_metrics WHERE brand_id IN (3, 4) ORDER BY 1`,
        ),
        vendors: await tx.query(
          `SELECT vendor_id AS id, ${numeric}, lead_time_samples, lead_time_mean::float8, lead_time_std::float8,
             on_time_rate::float8, fill_rate::float8
           FROM vendor_metrics WHERE vendor_id IN (12, 13) ORDER BY 1`,
        ),
      };
    });

    const statuses = (counts: Record<string, number>) => ({
      critical: 0,
      reorder: 0,
      healthy: 0,
      overstocked: 0,
      new: 0,
      discontinued: 0,
      excluded: 0,
      ...counts,
    });
    // 301 + 302 + 303.
    const all = {
      product_count: 3,
      active_product_count: 2, // 302 is discontinued
      stock_units: 15,
      stock_value_cost: 27.5,
      stock_value_retail: 70,
      units_7d: 1,
      units_30d: 3,
      units_90d: 4,
      units_365d: 7,
      revenue_7d: 10,
      revenue_30d: 25,
      revenue_90d: 35,
      revenue_365d: 180,
      lifetime_revenue: 240,
      gross_profit_365d: 50, // 40 + 10 + (303 has no cost: 0)
      margin_365d: 0.3333, // 50 ÷ (100 + 50): 303's revenue has no cost, so it is left out
      reorder_value: 36,
      overstock_value: 3,
      status_counts: statuses({ critical: 1, reorder: 1, overstocked: 1 }),
      abc_counts: { A: 1, B: 1, C: 1 },
    };
    // 301 + 302.
    const pair = {
      ...all,
      product_count: 2,
      active_product_count: 1,
      stock_value_cost: 27.5,
      units_365d: 6,
      revenue_365d: 150,
      lifetime_revenue: 210,
      margin_365d: 0.3333, // 50 ÷ 150
      reorder_value: 12,
      status_counts: statuses({ reorder: 1, overstocked: 1 }),
      abc_counts: { A: 1, B: 1, C: 0 },
    };
    // 303 alone.
    const single = {
      product_count: 1,
      active_product_count: 1,
      stock_units: 0,
      stock_value_cost: 0,
      stock_value_retail: 0,
      units_7d: 0,
      units_30d: 0,
      units_90d: 0,
      units_365d: 1,
      revenue_7d: 0,
      revenue_30d: 0,
      revenue_90d: 0,
      revenue_365d: 30,
      lifetime_revenue: 30,
      gross_profit_365d: 0,
      margin_365d: null, // no product with a cost
      reorder_value: 24,
      overstock_value: 0,
      status_counts: statuses({ critical: 1 }),
      abc_counts: { A: 0, B: 0, C: 1 },
    };
    const empty = {
      ...single,
      product_count: 0,
      active_product_count: 0,
      units_365d: 0,
      revenue_365d: 0,
      lifetime_revenue: 0,
      reorder_value: 0,
      status_counts: statuses({}),
      abc_counts: { A: 0, B: 0, C: 0 },
    };

    // Category 300 holds 301 (linked to 300 and to its child 301: once), 302 (through the child)
    // and 303; category 301 holds 301 and 302.
    expect(rows.categories).toEqual([
      { id: 300, ...all },
      { id: 301, ...pair },
    ]);
    expect(rows.brands).toEqual([
      { id: 3, ...pair },
      { id: 4, ...single },
    ]);
    expect(rows.vendors).toEqual([
      {
        id: 12,
        ...all,
        lead_time_samples: 4,
        lead_time_mean: 18.5,
        lead_time_std: 2.25,
        on_time_rate: 0.75,
        fill_rate: 0.9,
      },
      {
        id: 13,
        ...empty,
        lead_time_samples: 0,
        lead_time_mean: null,
        lead_time_std: null,
        on_time_rate: null,
        fill_rate: null,
      },
    ]);
  });
});
