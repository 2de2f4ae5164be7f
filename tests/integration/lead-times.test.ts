// Module lead_times (docs/metrics.md §4, §11) through real Full Resets of a hand-made source.
// asOf = 2026-06-30T12:00Z: D0 = 2026-06-30, purchase orders count when ordered 2025-07-01 … 2026-06-30.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SqlConnection } from "../../server/db/database.ts";
import { leadTimesModule } from "../../server/jobs/planning/lead-times.ts";
import { planningModule } from "../../server/jobs/planning/planning.ts";
import { writeSource } from "../helpers/csv-source.ts";
import { createTestDatabase, rolledBack, type TestDatabase, testBackend } from "../helpers/db.ts";
import { FIXTURE_AS_OF, type PipelineHarness, pipeline } from "../helpers/pipeline.ts";

const SOURCE = {
  "vendors.csv": [
    "vendor_id,name,lead_time_days",
    "10,Vendor A,14",
    "11,Vendor B,21",
    "12,Vendor C,", // quotes nothing: the global default applies
    "13,Vendor D,30", // no purchase orders
  ],
  "products.csv": [
    "pid,title,vendor_id,price,cost_price,stock_quantity,created_at",
    "201,Three samples,10,1.00,0.50,10,2025-01-01T00:00:00Z",
    "202,One sample,10,1.00,0.50,10,2025-01-01T00:00:00Z",
    "203,Two samples,11,1.00,0.50,10,2025-01-01T00:00:00Z",
    "204,Unreceived,12,1.00,0.50,10,2025-01-01T00:00:00Z",
    "205,Never ordered,13,1.00,0.50,10,2025-01-01T00:00:00Z",
  ],
  "product_categories.csv": ["pid,category_id"],
  "order_lines.csv": ["line_id,order_number,pid,order_date,quantity,price,discount,status"],
  "purchase_orders.csv": [
    "po_id,vendor_id,status,date_ordered,date_expected",
    "700,10,received,2026-01-10,2026-01-22",
    "701,10,received,2026-03-01,2026-03-10",
    "702,10,received,2026-05-01,",
    "703,10,partial,2026-02-01,2026-02-23",
    "704,10,cancelled,2026-04-01,",
    "705,10,ordered,2026-06-20,2026-07-05",
    "706,11,received,2026-03-01,2026-03-25",
    "707,11,received,2026-04-01,",
    "708,11,received,2025-06-15,2025-07-01",
    "709,12,received,2026-06-01,",
  ],
  "po_lines.csv": [
    "po_line_id,po_id,pid,ordered_qty,cost_each",
    "7000,700,201,10,0.50",
    "7001,701,201,20,0.50",
    "7002,702,201,10,0.50",
    "7003,703,202,10,0.50",
    "7004,704,202,10,0.50",
    "7005,705,201,10,0.50",
    "7006,706,203,5,0.50",
    "7007,707,203,5,0.50",
    "7008,708,203,5,0.50",
    "7009,709,204,8,0.50",
  ],
  "receivings.csv": [
    "receiving_id,po_line_id,received_date,qty,cost_each",
    "1,7000,2026-01-20,6,0.50", // 10 days after ordering, on time (expected 01-22)
    "2,7000,2026-01-25,4,0.50", // a later receipt of the same line does not change its lead time
    "3,7001,2026-03-13,15,0.50", // 12 days, late (expected 03-10)
    "4,7002,2026-05-15,10,0.50", // 14 days, no expected date
    "5,7003,2026-02-23,5,0.50", // 22 days, on time (on the expected day)
    "6,7004,2026-04-03,10,0.50", // cancelled purchase order: no sample
    "7,7006,2026-03-22,5,0.50", // 21 days, on time
    "8,7007,2026-04-20,4,0.50", // 19 days
    "9,7008,2025-07-10,5,0.50", // ordered before the 365 days: no sample
  ],
};

describe(`lead times (${testBackend})`, () => {
  let tdb: TestDatabase;
  let p: PipelineHarness;
  const dir = writeSource(SOURCE);

  beforeAll(async () => {
    tdb = await createTestDatabase();
    p = await pipeline(tdb.db, () => dir);
    // The product setting wins over the vendor's quote for the configured lead time.
    await tdb.db.prisma.$executeRawUnsafe(
      "INSERT INTO settings_product (pid, lead_time_days) VALUES (201, 5)",
    );
  });
  afterAll(async () => {
    await p.close();
    await tdb.drop();
  });

  async function setLeadTimeSource(value: "configured" | "measured") {
    await tdb.db.prisma.$executeRawUnsafe(
      `INSERT INTO settings_global (setting_key, setting_value) VALUES ('lead_time_source', $1)
       ON CONFLICT (setting_key) DO UPDATE SET setting_value = EXCLUDED.setting_value`,
      value,
    );
  }

  async function leadTimes() {
    const rows = await tdb.db.prisma.productMetrics.findMany({ orderBy: { pid: "asc" } });
    const n = (v: unknown) => (v === null ? null : Number(v));
    return Object.fromEntries(
      rows.map((m) => [
        m.pid,
        {
          configured: m.leadTimeConfigured,
          configuredSource: m.leadTimeConfiguredSource,
          measured: n(m.leadTimeMeasured),
          measuredStd: n(m.leadTimeMeasuredStd),
          samples: m.leadTimeMeasuredSamples,
          level: m.leadTimeMeasuredLevel,
          days: n(m.leadTimeDays),
          source: m.leadTimeSource,
        },
      ]),
    );
  }

  it("measures per product with 3 samples, else per vendor, and plans with the configured lead time by default", async () => {
    await setLeadTimeSource("configured");
    expect(await p.run("reset")).toMatchObject({ status: "complete", error: null });
    expect(await leadTimes()).toEqual({
      // Own samples 10, 12, 14 (the open PO 705 has no receipt): mean 12,
      // s = √((4 + 0 + 4) ÷ 2) = 2. Configured: the product setting, 5.
      201: {
        configured: 5,
        configuredSource: "product",
        measured: 12,
        measuredStd: 2,
        samples: 3,
        level: "product",
        days: 5,
        source: "configured",
      },
      // One own sample (22; the cancelled PO 704 is none), so Vendor A's: 10, 12, 14, 22 → mean 14.5,
      // s = √((4.5² + 2.5² + 0.5² + 7.5²) ÷ 3) = √(83 ÷ 3) = 5.2599. Configured: the vendor's quote.
      202: {
        configured: 14,
        configuredSource: "vendor_quoted",
        measured: 14.5,
        measuredStd: 5.26,
        samples: 4,
        level: "vendor",
        days: 14,
        source: "configured",
      },
      // Two own samples (21, 19; PO 708 was ordered before the 365 days), and Vendor B has only
      // those two: no measurement.
      203: {
        configured: 21,
        configuredSource: "vendor_quoted",
        measured: null,
        measuredStd: null,
        samples: 0,
        level: null,
        days: 21,
        source: "configured",
      },
      // Vendor C quotes nothing: the global default_lead_time_days, 14.
      204: {
        configured: 14,
        configuredSource: "global",
        measured: null,
        measuredStd: null,
        samples: 0,
        level: null,
        days: 14,
        source: "configured",
      },
      205: {
        configured: 30,
        configuredSource: "vendor_quoted",
        measured: null,
        measuredStd: null,
        samples: 0,
        level: null,
        days: 30,
        source: "configured",
      },
    });
  });

  it("records each vendor's samples, on-time rate and fill rate", async () => {
    const rows = await tdb.db.prisma.vendorLeadTime.findMany({ orderBy: { vendorId: "asc" } });
    const n = (v: unknown) => (v === null ? null : Number(v));
    expect(
      rows.map((r) => [r.vendorId, r.samples, n(r.meanDays), n(r.stdDays), n(r.onTimeRate), n(r.fillRate)]),
    ).toEqual([
      // Samples 10, 12, 14, 22. With an expected date: 700 (01-20 ≤ 01-22), 701 (03-13 > 03-10),
      // 703 (02-23 ≤ 02-23) → 2 ÷ 3. Fill: received POs 700, 701, 702 → (10 + 15 + 10) ÷ (10 + 20 + 10)
      // = 35 ÷ 40 (the partial 703 and the cancelled 704 are not closed).
      [10, 4, 14.5, 5.26, 0.6667, 0.875],
      // Samples 21, 19: mean 20, s = √2 = 1.414. On time: 706 of the one with an expected date.
      // Fill: 706, 707 → 9 ÷ 10 (708 is older than 365 days).
      [11, 2, 20, 1.41, 1, 0.9],
      // A closed PO without receipts: no samples, fill 0 ÷ 8.
      [12, 0, null, null, null, 0],
      // Vendor D has neither samples nor closed POs: no row.
    ]);
  });

  it("writes the same figures whether or not prepare() ran first, and for its own D0 only", async () => {
    // Everything the module's figures reach, as text: its vendors' rows, and the products' lead
    // times, which module planning writes into product_metrics (lead_times hands them over).
    const written = (c: SqlConnection) =>
      c.query(
        `SELECT 'v' AS t, vendor_id AS id, concat_ws(' ', samples, mean_days, std_days, on_time_rate, fill_rate) AS v
         FROM vendor_lead_times
         UNION ALL
         SELECT 'p', pid, concat_ws(' ', lead_time_configured, lead_time_configured_source, lead_time_measured,
           lead_time_measured_std, lead_time_measured_samples, lead_time_measured_level, lead_time_days,
           lead_time_source, reorder_point)
         FROM product_metrics
         ORDER BY 1, 2, 3`,
      );
    const conn = await tdb.db.connect();
    try {
      const stored = await written(conn);
      expect(stored.length).toBe(8); // 3 vendors, 5 products
      // 200 days earlier the 365 days hold other purchase orders: that D0's figures differ.
      const otherDay = new Date(FIXTURE_AS_OF.getTime() - 200 * 86_400_000);
      for (const prepareAsOf of [null, FIXTURE_AS_OF, otherDay]) {
        const rows = await rolledBack(conn, async (tx) => {
          if (prepareAsOf) await leadTimesModule.prepare!.run({ conn: tx, asOf: prepareAsOf });
          await leadTimesModule.run({ conn: tx, asOf: FIXTURE_AS_OF });
          await planningModule.run({ conn: tx, asOf: FIXTURE_AS_OF });
          return written(tx);
        });
        expect(rows, `prepared for ${prepareAsOf?.toISOString() ?? "nothing"}`).toEqual(stored);
      }
    } finally {
      await conn.release();
    }
  });

  it("plans with the measured lead time when the global setting says so and there is one", async () => {
    await setLeadTimeSource("measured");
    expect(await p.run("reset")).toMatchObject({ status: "complete", error: null });
    const lt = await leadTimes();
    expect([lt[201]!.days, lt[201]!.source]).toEqual([12, "measured"]); // own mean, not the setting 5
    expect([lt[202]!.days, lt[202]!.source]).toEqual([14.5, "measured"]); // Vendor A's mean
    expect([lt[203]!.days, lt[203]!.source]).toEqual([21, "configured"]); // nothing measured
    expect([lt[204]!.days, lt[204]!.source]).toEqual([14, "configured"]);
    // The configured lead time is kept beside the measured one.
    expect(lt[201]).toMatchObject({ configured: 5, configuredSource: "product", measured: 12 });
  });
});
