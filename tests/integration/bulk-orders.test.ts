// Lumpy wholesale orders (issue 13 point 4, docs/metrics.md §3): a one-off bulk order — at least 20
// sale lines in the last 90 days, the line more than 10 × the median line and above the 99th
// percentile — stays in the sales figures and d̄ but is left out of the demand deviation σd that
// safety stock uses, and the explanation says so. The fixture: the small source plus product 1004
// (a line of 10–14 units a day for 89 days and one order of 990), 1005 (the same big order among
// only 15 lines: not a bulk order by the rule) and 1006 (two orders of 990 among 40 lines: the 99th
// percentile is 990 itself, so neither is above it — a repeated pattern, not a one-off).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { explainProductMetrics } from "../../server/modules/metrics/metrics.service.ts";
import { createTestDatabase, type TestDatabase, testBackend } from "../helpers/db.ts";
import { copyFixture, editFile, type PipelineHarness, pipeline } from "../helpers/pipeline.ts";

const DAY = 86_400_000;
const D0 = Date.UTC(2026, 5, 30);
const day = (back: number) => new Date(D0 - back * DAY).toISOString().slice(0, 10);
const BULK_DAY = day(27); // 2026-06-03

/** Daily units of a product over the 90 days D0−89 … D0 (index = days back). */
function lines(pid: number, count: number, firstId: number) {
  const rows: string[] = [];
  const daily = new Array(90).fill(0) as number[];
  for (let back = 1; back <= count; back++) {
    const q = 10 + (back % 5);
    rows.push(`${firstId + back},W-${pid}-${back},${pid},${day(back)}T10:00:00Z,${q},2.00,,completed`);
    daily[back]! += q;
  }
  rows.push(`${firstId + 500},W-${pid}-BULK,${pid},${BULK_DAY}T11:00:00Z,990,1.80,,completed`);
  daily[27]! += 990;
  return { rows, daily };
}

/**
 * σd as §3 takes it: the units of the 13 weeks of 7 days ending on D0 (week k = days back 7k …
 * 7k + 6; the products are older than that and never out of stock), σd = σ_week ÷ √7.
 */
const sigma = (daily: number[]) => {
  const xs = new Array(13).fill(0) as number[];
  daily.forEach((x, back) => {
    xs[Math.floor(back / 7)]! += x;
  });
  const n = xs.length;
  const sx = xs.reduce((a, b) => a + b, 0);
  const sxx = xs.reduce((a, b) => a + b * b, 0);
  return Math.sqrt((sxx - (sx * sx) / n) / (n - 1)) / Math.sqrt(7);
};

describe(`bulk orders are left out of the demand deviation (${testBackend})`, () => {
  let tdb: TestDatabase;
  let p: PipelineHarness;
  const bulky = lines(1004, 89, 10_000);
  const few = lines(1005, 15, 20_000);
  const twice = lines(1006, 38, 30_000);
  twice.rows.push(`30999,W-1006-BULK2,1006,${day(50)}T11:00:00Z,990,1.80,,completed`);
  twice.daily[50]! += 990;

  beforeAll(async () => {
    const dir = copyFixture();
    editFile(
      dir,
      "products.csv",
      (t) =>
        `${t}1004,Wholesale Cardstock,SKU-W1,,1,10,,,2.00,,1.00,2000,,,,,,,,,,,,,,2025-01-01T00:00:00Z,,\n` +
        "1005,Occasional Cardstock,SKU-W2,,1,10,,,2.00,,1.00,2000,,,,,,,,,,,,,,2025-01-01T00:00:00Z,,\n" +
        "1006,Twice Cardstock,SKU-W3,,1,10,,,2.00,,1.00,2000,,,,,,,,,,,,,,2025-01-01T00:00:00Z,,\n",
    );
    editFile(
      dir,
      "order_lines.csv",
      (t) => `${t}${[...bulky.rows, ...few.rows, ...twice.rows].join("\n")}\n`,
    );
    tdb = await createTestDatabase();
    p = await pipeline(tdb.db, () => dir);
    expect((await p.run("reset")).status).toBe("complete");
  }, 120_000);
  afterAll(async () => {
    await p.close();
    await tdb.drop();
  });

  const metrics = async (pid: number) =>
    (
      await tdb.db.prisma.$queryRawUnsafe<Record<string, unknown>[]>(
        `SELECT units_90d, avg_daily_sales::float8 AS dbar, daily_sales_std::float8 AS sd, safety_stock,
           safety_stock_method, demand_variability FROM product_metrics WHERE pid = $1`,
        pid,
      )
    )[0]!;

  it("keeps the bulk order in the sales and d̄, leaves it out of σd, and lists it", async () => {
    const m = await metrics(1004);
    const units = bulky.daily.reduce((a, b) => a + b, 0);
    expect(m.units_90d).toBe(units);
    expect(m.dbar).toBeCloseTo(units / 90, 4);
    const without = [...bulky.daily];
    without[27]! -= 990;
    expect(m.sd).toBeCloseTo(sigma(without), 4);
    expect(m.sd).toBeLessThan(2);
    expect(m.demand_variability).toEqual({ bulk: [{ day: BULK_DAY, units: 990 }] });
    // Safety stock stays below a week of sales (with the order in σd: σd ≈ 103.9, weeks of sales).
    expect(m.safety_stock_method).toBe("statistical");
    expect(Number(m.safety_stock)).toBeLessThan(7 * Number(m.dbar));
  });

  it("the explanation says which order was not used for safety stock", async () => {
    const why = await explainProductMetrics(tdb.db, 1004);
    const sd = why.figures.find((f) => f.key === "daily_sales_std")!;
    expect(sd.note).toContain(`1 bulk order of 990 units on ${BULK_DAY} not used for safety stock.`);
    // The recomputation agrees with the stored figure (no "changed since" note).
    expect(sd.note).not.toContain("changed since");
  });

  it("with fewer than 20 sale lines the big order is ordinary demand", async () => {
    const m = await metrics(1005);
    expect(m.demand_variability).toBeNull();
    expect(m.sd).toBeCloseTo(sigma(few.daily), 4);
    expect(m.sd).toBeGreaterThan(100);
  });

  it("two big orders at the 99th percentile are demand, not one-off bulk orders", async () => {
    const m = await metrics(1006);
    expect(m.demand_variability).toBeNull();
    expect(m.sd).toBeCloseTo(sigma(twice.daily), 4);
    expect(m.sd).toBeGreaterThan(100);
  });
});
