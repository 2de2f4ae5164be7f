// Module stock_history (docs/metrics.md §2, §3, §10) through a real Full Reset of a hand-made
// source. asOf = 2026-06-30T12:00Z, so D0 = 2026-06-30, the last 90 days are 2026-04-02 … 06-30
// and the last 365 days 2025-07-01 … 2026-06-30. Every expected figure is worked out next to it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SqlConnection } from "../../server/db/database.ts";
import { planningModule } from "../../server/jobs/planning/planning.ts";
import { stockHistoryModule } from "../../server/jobs/planning/stock-history.ts";
import { writeSource } from "../helpers/csv-source.ts";
import { createTestDatabase, rolledBack, type TestDatabase, testBackend } from "../helpers/db.ts";
import { FIXTURE_AS_OF, type PipelineHarness, pipeline } from "../helpers/pipeline.ts";

const SOURCE = {
  "products.csv": [
    "pid,title,vendor_id,price,cost_price,stock_quantity,created_at,first_received",
    // sold out on 05-31, out of stock 06-01 … 06-10, restocked 06-11
    "101,Out of stock ten days,10,5.00,2.00,20,2025-01-01T00:00:00Z,",
    // sold its last 2 units on 06-25
    "102,Last units sold,10,4.00,1.00,0,2025-01-01T00:00:00Z,",
    // created 20 days before D0, first receipt two days later
    "103,New product,10,3.00,1.50,6,2026-06-10T15:00:00Z,",
    // five days old, sells 0, 0, 2, 4, 6
    "104,Small series,10,2.00,1.00,100,2026-06-26T08:00:00Z,",
    // no sales, no receipts (a receipt dated after D0 does not count), no cost
    "105,Idle in stock,10,9.00,,7,2025-03-01T00:00:00Z,",
    // no sales, no receipts, nothing on hand
    "106,Idle empty,10,9.00,3.00,0,2026-05-01T00:00:00Z,",
  ],
  "product_categories.csv": ["pid,category_id"],
  "order_lines.csv": [
    "line_id,order_number,pid,order_date,quantity,price,discount,status",
    "1,SO-1,101,2026-05-20T10:00:00Z,4,5.00,0,completed",
    "2,SO-2,101,2026-05-31T18:00:00Z,6,5.00,0,completed",
    "3,SO-3,101,2026-06-15T09:00:00Z,10,5.00,1.00,completed",
    "4,SO-4,101,2026-06-05T09:00:00Z,3,5.00,0,cancelled",
    "5,SO-5,101,2025-03-01T10:00:00Z,2,5.00,0,completed",
    "6,SO-6,102,2026-06-25T11:00:00Z,2,4.00,0,completed",
    "7,SO-7,103,2026-06-20T10:00:00Z,4,3.00,0,completed",
    "8,SO-8,104,2026-06-28T00:30:00Z,1,2.00,0,completed",
    "9,SO-9,104,2026-06-28T23:30:00Z,1,2.00,0,completed",
    "10,SO-10,104,2026-06-29T12:00:00Z,4,2.00,0,completed",
    "11,SO-11,104,2026-06-30T09:00:00Z,6,2.00,0,completed",
    "12,SO-12,104,2026-06-30T13:00:00Z,5,2.00,0,completed",
    "13,SO-13,104,2026-06-29T15:00:00Z,2,2.00,0,returned",
  ],
  "purchase_orders.csv": [
    "po_id,vendor_id,status,date_ordered,date_expected",
    "600,10,received,2026-06-01,2026-06-10",
    "601,10,received,2026-06-05,",
    "602,10,partial,2026-06-25,",
  ],
  "po_lines.csv": [
    "po_line_id,po_id,pid,ordered_qty,cost_each",
    "6000,600,101,30,2.00",
    "6001,601,103,10,1.50",
    "6002,602,105,5,9.00",
  ],
  "receivings.csv": [
    "receiving_id,po_line_id,received_date,qty,cost_each",
    "1,6000,2026-06-11,30,2.00",
    "2,6001,2026-06-12,10,1.50",
    "3,6002,2026-07-02,5,9.00",
  ],
};

describe(`stock history, demand and margins (${testBackend})`, () => {
  let tdb: TestDatabase;
  let p: PipelineHarness;
  const dir = writeSource(SOURCE);

  beforeAll(async () => {
    tdb = await createTestDatabase();
    p = await pipeline(tdb.db, () => dir);
    expect(await p.run("reset")).toMatchObject({ status: "complete", error: null });
  });
  afterAll(async () => {
    await p.close();
    await tdb.drop();
  });

  async function metrics(pid: number) {
    const m = await tdb.db.prisma.productMetrics.findUniqueOrThrow({ where: { pid } });
    const n = (v: unknown) => (v === null ? null : Number(v));
    return {
      historyStart: m.historyStart?.toISOString().slice(0, 10) ?? null,
      historyDays: m.historyDays,
      isNew: m.isNew,
      inStock90: m.inStockDays90,
      outOfStock90: m.outOfStockDays90,
      outOfStock365: m.outOfStockDays365,
      avgDailySales: n(m.avgDailySales),
      dailySalesStd: n(m.dailySalesStd),
      avgStock365: n(m.avgStockUnits365),
      cogs: n(m.cogs365d),
      grossProfit: n(m.grossProfit365d),
      margin: n(m.margin365d),
      sellThrough: n(m.sellThrough30d),
      turnover: n(m.turnover365d),
      gmroi: n(m.gmroi365d),
    };
  }

  async function runs(pid: number) {
    const rows = await tdb.db.prisma.productStockHistory.findMany({
      where: { pid },
      orderBy: { validFrom: "asc" },
    });
    return rows.map((r) => [
      r.validFrom.toISOString().slice(0, 10),
      r.validTo.toISOString().slice(0, 10),
      r.stock,
      r.soldFirstDay,
    ]);
  }

  it("stores the runs of closing stock, reconstructed backwards from today's stock", async () => {
    // S(06-30) = 20 (on hand). Going back: 06-15 sold 10 → S(06-14) = 30; 06-11 received 30 →
    // S(06-10) = 0; 05-31 sold 6 → S(05-30) = 6; 05-20 sold 4 → S(05-19) = 10, back to the window
    // start 2025-07-01 (the 2025-03-01 sale is before the window; the cancelled line moves nothing).
    expect(await runs(101)).toEqual([
      ["2025-07-01", "2026-05-19", 10, 0],
      ["2026-05-20", "2026-05-30", 6, 4],
      ["2026-05-31", "2026-06-10", 0, 6],
      ["2026-06-11", "2026-06-14", 30, 0],
      ["2026-06-15", "2026-06-30", 20, 10],
    ]);
    // One event day per UTC day: 06-28 (1 + 1 at 00:30 and 23:30), 06-29 (4; the returned line
    // is no sale), 06-30 (6; the 13:00 line is after asOf). 100 + 6 = 106, + 4 = 110, + 2 = 112
    // from the life start 06-26.
    expect(await runs(104)).toEqual([
      ["2026-06-26", "2026-06-27", 112, 0],
      ["2026-06-28", "2026-06-28", 110, 2],
      ["2026-06-29", "2026-06-29", 106, 4],
      ["2026-06-30", "2026-06-30", 100, 6],
    ]);
    // No events: one run over its life in the window (the receipt dated 07-02 is after D0).
    expect(await runs(105)).toEqual([["2025-07-01", "2026-06-30", 7, 0]]);
    expect(await runs(106)).toEqual([["2026-05-01", "2026-06-30", 0, 0]]);
  });

  it("counts 10 days out of stock and leaves them out of the average daily sales", async () => {
    expect(await metrics(101)).toMatchObject({
      historyStart: "2025-01-01", // created_at; no earlier sale or receipt
      historyDays: 546, // 2025-01-01 … 2026-06-30: 365 + 180 + 1
      isNew: false,
      // The run 05-31 … 06-10 has stock 0: 11 days, minus 05-31 which sold 6 → 06-01 … 06-10
      outOfStock90: 10,
      outOfStock365: 10,
      inStock90: 80, // 90 − 10
      avgDailySales: 0.25, // (4 + 6 + 10) ÷ 80 in-stock days (÷ 90 would be 0.2222)
      // σd on weeks ending on D0 (§3): the 13 weeks 03-31 … 06-30; week 06-03 … 06-09 was out of
      // stock on all 7 days and is left out (06-01, 06-02 and 06-10 fall in weeks out on fewer than
      // 4 days). n = 12 in-stock weeks with 4 (05-20 … 05-26), 6 (05-27 … 06-02), 10 (06-10 …
      // 06-16) and 0: σ_week = √((152 − 20²/12) ÷ 11) = √10.787879 = 3.284491; σd = 3.284491 ÷ √7
      // = 1.241421
      dailySalesStd: 1.2414,
    });
  });

  it("counts the day the last unit sold as in stock", async () => {
    // Runs: 2025-07-01 … 06-24 at 2, then 06-25 … 06-30 at 0 with 2 sold on 06-25: 6 − 1 = 5 days
    // out (06-26 … 06-30).
    expect(await runs(102)).toEqual([
      ["2025-07-01", "2026-06-24", 2, 0],
      ["2026-06-25", "2026-06-30", 0, 2],
    ]);
    expect(await metrics(102)).toMatchObject({
      outOfStock90: 5,
      outOfStock365: 5,
      inStock90: 85,
      avgDailySales: 0.0235, // 2 ÷ 85 = 0.023529
      // Its one sale is in week 06-24 … 06-30, out of stock on 5 days: left out of σd (§3), whose
      // 12 other weeks sold nothing → 0
      dailySalesStd: 0,
    });
  });

  it("starts a new product's history at its creation and counts only the days of its life", async () => {
    // Life start = min(created 06-10, first receipt 06-12, first sale 06-20) = 06-10.
    // S(06-30) = 6; 06-20 sold 4 → 10; 06-12 received 10 → S(06-11) = 0 (06-10, 06-11 out of stock).
    expect(await runs(103)).toEqual([
      ["2026-06-10", "2026-06-11", 0, 0],
      ["2026-06-12", "2026-06-19", 10, 0],
      ["2026-06-20", "2026-06-30", 6, 4],
    ]);
    expect(await metrics(103)).toMatchObject({
      historyStart: "2026-06-10",
      historyDays: 21, // 06-10 … 06-30
      isNew: true, // 21 < 30
      outOfStock90: 2, // the 69 days of the 90 before 06-10 are not counted at all
      outOfStock365: 2,
      inStock90: 19, // 21 − 2
      avgDailySales: 0.2105, // 4 ÷ 19 = 0.210526
      avgStock365: 6.95, // (0 × 2 + 10 × 8 + 6 × 11) ÷ 21 = 146 ÷ 21 = 6.952
      // σd: 3 full weeks (06-10 … 06-30), the first out of stock on 2 days only: 0, 4, 0 →
      // σ_week = √((16 − 16/3) ÷ 2) = 2.309401, σd = 2.309401 ÷ √7 = 0.872872
      dailySalesStd: 0.8729,
    });
  });

  it("takes σd on full weeks only: under two weeks of life it is 0, while d̄ counts its days", async () => {
    expect(await metrics(104)).toMatchObject({
      historyStart: "2026-06-26",
      historyDays: 5,
      isNew: true,
      inStock90: 5,
      outOfStock90: 0,
      avgDailySales: 2.4, // x = 0, 0, 2, 4, 6: 12 ÷ 5
      // 5 days of life: no full week (σd on weekly buckets, §3) → 0 (on days it would be 2.6077)
      dailySalesStd: 0,
    });
  });

  it("computes margin, sell-through, turnover and GMROI", async () => {
    expect(await metrics(101)).toMatchObject({
      // Stock-days over the 365 days: 10 × 323 (2025-07-01 … 2026-05-19) + 6 × 11 + 0 × 11
      // + 30 × 4 + 20 × 16 = 3230 + 66 + 120 + 320 = 3736; ÷ 365 = 10.2356
      avgStock365: 10.24,
      cogs: 40, // units_365d 20 × cost 2.00 (the 2025-03-01 sale is older)
      grossProfit: 59, // revenue 4 × 5 + 6 × 5 + (10 × 5 − 1.00) = 99, − 40
      margin: 0.596, // 59 ÷ 99 = 0.59596
      sellThrough: 0.3333, // units_30d 10 ÷ (10 + on hand 20)
      turnover: 1.9531, // 40 ÷ (10.24 × 2.00) = 40 ÷ 20.48 = 1.953125
      gmroi: 2.8809, // 59 ÷ 20.48 = 2.880859
    });
  });

  it("gives a product without sales or receipts its whole life in stock or out of it", async () => {
    expect(await metrics(105)).toEqual({
      historyStart: "2025-03-01",
      historyDays: 487, // 2025-03-01 … 2026-06-30: 365 + 121 + 1
      isNew: false,
      inStock90: 90,
      outOfStock90: 0,
      outOfStock365: 0,
      avgDailySales: 0,
      dailySalesStd: 0,
      avgStock365: 7,
      cogs: null, // no cost price
      grossProfit: null,
      margin: null, // no revenue
      sellThrough: 0, // 0 ÷ (0 + 7)
      turnover: null,
      gmroi: null,
    });
    expect(await metrics(106)).toEqual({
      historyStart: "2026-05-01",
      historyDays: 61, // 05-01 … 06-30
      isNew: false,
      inStock90: 0,
      outOfStock90: 61, // every day of its life, none before it
      outOfStock365: 61,
      avgDailySales: 0, // no in-stock days
      dailySalesStd: 0,
      avgStock365: 0,
      cogs: 0, // 0 units × 3.00
      grossProfit: 0,
      margin: null, // ÷ revenue 0
      sellThrough: null, // 0 ÷ (0 + 0)
      turnover: null, // ÷ (0 × 3.00)
      gmroi: null,
    });
  });

  it("leaves a receipt dated after D0 out of stock and out of what was received: its line stays on order", async () => {
    // 105: PO 602 (partial) ordered 5; its receipt of 5 is dated 07-02, after D0. Not in the stock
    // runs (above) and not received yet either, so the 5 are still on order (§1).
    const m = await tdb.db.prisma.productMetrics.findUniqueOrThrow({ where: { pid: 105 } });
    expect([m.onHand, m.onOrder]).toEqual([7, 5]);
  });

  it("plans a product under 7 days old from d × H, although its forecast (n = 0 weeks) is all 0", async () => {
    // 104: new (5 days), no category → d = its own d̄ = 2.4. L = vendor 10's quote 14 (2 lead-time
    // samples: no measurement), days of stock 30 → H = 44; F(H) = 2.4 × 44 = 105.6; SS (days) =
    // ⌈7 × 2.4⌉ = ⌈16.8⌉ = 17; need = 105.6 + 17 − 100 on hand = 22.6 → 23. The forecast's zeros
    // would give F(H) = 0 and nothing to reorder.
    const f = await tdb.db.prisma.productForecast.findUniqueOrThrow({ where: { pid: 104 } });
    expect(f.weekly).toEqual(Array(13).fill(0));
    const m = await tdb.db.prisma.productMetrics.findUniqueOrThrow({ where: { pid: 104 } });
    expect({
      demandRate: Number(m.demandRate),
      demandSource: m.demandSource,
      horizon: Number(m.horizonDays),
      fh: Number(m.forecastHorizonUnits),
      ss: m.safetyStock,
      reorderQty: m.reorderQty,
      status: m.status,
    }).toEqual({
      demandRate: 2.4,
      demandSource: "history",
      horizon: 44,
      fh: 105.6,
      ss: 17,
      reorderQty: 23,
      status: "new",
    });
  });

  it("writes the same runs and figures whether or not prepare() ran first, and for its own D0 only", async () => {
    // Everything the module writes, as text (numerics exactly as stored).
    const written = (c: SqlConnection) =>
      c.query(
        `SELECT 'h' AS t, pid, concat_ws(' ', valid_from, valid_to, stock, sold_first_day) AS v
         FROM product_stock_history
         UNION ALL
         SELECT 'm', pid, concat_ws(' ', history_start, history_days, is_new, in_stock_days_90,
           out_of_stock_days_90, out_of_stock_days_365, avg_daily_sales, daily_sales_std,
           avg_stock_units_365, cogs_365d, gross_profit_365d, margin_365d, sell_through_30d,
           turnover_365d, gmroi_365d)
         FROM product_metrics
         UNION ALL
         SELECT 'p', pid, concat_ws(' ', demand_rate, demand_source, safety_stock, safety_stock_method,
           reorder_qty, status)
         FROM product_metrics
         ORDER BY 1, 2, 3`,
      );
    const conn = await tdb.db.connect();
    try {
      const stored = await written(conn);
      expect(stored.length).toBeGreaterThan(6);
      const dayBefore = new Date(FIXTURE_AS_OF.getTime() - 86_400_000);
      // Run alone (a Full Update); prepared first (a Full Reset, while the order lines load);
      // prepared for another D0 (not used: its window and receipts are another day's). The
      // per-product figures reach product_metrics through module planning's UPDATE (the module
      // leaves them in a temp table), so planning runs after it, as in CALC_MODULES, and plans from
      // those figures, not from the stored ones (overwritten here with wrong values first).
      for (const prepareAsOf of [null, FIXTURE_AS_OF, dayBefore]) {
        const rows = await rolledBack(conn, async (tx) => {
          await tx.exec(
            `UPDATE product_metrics SET history_start = NULL, out_of_stock_days_365 = -1, is_new = NOT is_new,
               in_stock_days_90 = 90 - in_stock_days_90, avg_daily_sales = 7, daily_sales_std = 3`,
          );
          if (prepareAsOf) await stockHistoryModule.prepare!.run({ conn: tx, asOf: prepareAsOf });
          await stockHistoryModule.run({ conn: tx, asOf: FIXTURE_AS_OF });
          await planningModule.run({ conn: tx, asOf: FIXTURE_AS_OF });
          return written(tx);
        });
        expect(rows).toEqual(stored);
      }
    } finally {
      await conn.release();
    }
  });

  it("reports every product as updated", async () => {
    const calc = await tdb.db.prisma.calculateHistory.findFirstOrThrow({ orderBy: { id: "desc" } });
    const steps = (calc.additionalInfo as { completed_steps: { name: string; rowsAffected: number }[] })
      .completed_steps;
    expect(steps.find((s) => s.name === "Calculate stock_history")?.rowsAffected).toBe(6);
  });
});
