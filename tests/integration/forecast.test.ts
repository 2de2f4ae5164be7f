// Module forecast (docs/metrics.md §8) through a real Full Reset of a hand-made source.
// asOf = 2026-06-30T12:00Z, so D0 = 2026-06-30: week k (counted back from D0) is the 7 days
// D0−7k−6 … D0−7k (week 0 = 06-24 … 06-30, week 1 = 06-17 … 06-23, …), and in a product with n
// full weeks the spec's t = n − k. A product created on D0 − 7n + 1 has history_days = 7n, so n
// full weeks. Each week's units are sold in one line in the middle of the week (D0 − 7k − 3).
// The forecast weeks start on D0 + 1 = 2026-07-01.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forecastProduct } from "../../server/modules/forecasting/forecasting.service.ts";
import { writeSource } from "../helpers/csv-source.ts";
import { createTestDatabase, type TestDatabase, testBackend } from "../helpers/db.ts";
import { type PipelineHarness, pipeline } from "../helpers/pipeline.ts";

const DAY = 86_400_000;
const D0 = Date.parse("2026-06-30T00:00:00Z");
const day = (offset: number) => new Date(D0 + offset * DAY).toISOString().slice(0, 10);
/** created_at giving exactly n full weeks of life. */
const createdFor = (n: number) => `${day(-7 * n + 1)}T00:00:00Z`;

/** Park–Miller generator: the same "noise" on every run. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 16807) % 2147483647;
    return s / 2147483647;
  };
}

/** A 52-week cycle peaking at Christmas: week 26 is 2025-12-24 … 12-30. u = weeks since the peak;
 * units fall from 100 to 20 over 27 weeks (to the start of July), then rise to 100 over 25 weeks. */
function christmas(k: number): number {
  const u = (((26 - k) % 52) + 52) % 52;
  return u <= 27 ? 100 - (80 * u) / 27 : 20 + (80 * (u - 27)) / 25;
}

const THREE_YEARS = 156;
const FLAT = Array.from({ length: 40 }, (_, i) => 200 + i);

interface Product {
  pid: number;
  title: string;
  created: string;
  /** Units per week k (index = k); zeros get no line. */
  weeks: number[];
}

/** weeks[k] for a series given oldest first (t = 1 … n). */
const byT = (xs: number[]) => [...xs].reverse();

const PRODUCTS: Product[] = [
  // 60 weeks of 10, seasonal asked for (product setting)
  { pid: 1, title: "Constant seasonal", created: createdFor(60), weeks: Array(60).fill(10) },
  // 60 weeks of 10, standard; weeks 0 and 1 are sold at their edges, and 100 units in the 3 days
  // of life before its 60 full weeks (lines below). Created 2025-05-04: history_days = 423, n = 60.
  {
    pid: 2,
    title: "Constant standard",
    created: `${day(-7 * 60 - 2)}T00:00:00Z`,
    weeks: [0, 0, ...Array(58).fill(10)],
  },
  // x_t = 2t for t = 1 … 10
  {
    pid: 3,
    title: "Linear trend",
    created: createdFor(10),
    weeks: byT(Array.from({ length: 10 }, (_, i) => 2 * (i + 1))),
  },
  // x_t = t for t = 1 … 60, seasonal from the global default
  {
    pid: 4,
    title: "Sixty weeks",
    created: createdFor(60),
    weeks: byT(Array.from({ length: 60 }, (_, i) => i + 1)),
  },
  // 30 weeks, seasonal asked for, and a twin asking for standard
  {
    pid: 5,
    title: "Thirty weeks seasonal",
    created: createdFor(30),
    weeks: byT(Array.from({ length: 30 }, (_, i) => 3 + (i % 4))),
  },
  {
    pid: 6,
    title: "Thirty weeks standard",
    created: createdFor(30),
    weeks: byT(Array.from({ length: 30 }, (_, i) => 3 + (i % 4))),
  },
  // excluded from forecasts (product setting)
  { pid: 7, title: "Excluded", created: createdFor(60), weeks: Array(60).fill(10) },
  // 25 full weeks (created 2026-01-01: 181 days), never sold
  { pid: 8, title: "Never sold", created: "2026-01-01T09:00:00Z", weeks: [] },
  // created two days before D0 (n = 0), one sale
  { pid: 9, title: "Two days old", created: "2026-06-28T09:00:00Z", weeks: [3] },
  // three years of the Christmas cycle with ±3 units of noise
  {
    pid: 10,
    title: "Christmas",
    created: createdFor(THREE_YEARS),
    weeks: (() => {
      const r = random(7);
      return Array.from({ length: THREE_YEARS }, (_, k) => Math.round(christmas(k) + 6 * r() - 3));
    })(),
  },
  // Two years at different levels, seasonal from the global default (growth, see its test). 11 also
  // sold 1000 a week in the year before its last 104 weeks: older than the 104 weeks, left out.
  {
    pid: 11,
    title: "Growth",
    created: createdFor(THREE_YEARS),
    weeks: [...Array(52).fill(15), ...Array(52).fill(10), ...Array(52).fill(1000)],
  },
  {
    pid: 12,
    title: "Growth clamped",
    created: createdFor(THREE_YEARS),
    weeks: [...Array(52).fill(40), ...Array(52).fill(10)],
  },
  { pid: 13, title: "No prior sales", created: createdFor(THREE_YEARS), weeks: Array(52).fill(12) },
  // 60 weeks of 98 with one big week a year ago (485 in week k = 51, the week a year before next
  // week), seasonal from the global default; its category (60) has one other product, 15, that
  // sells 50 every week for three years (standard, its own setting)
  {
    pid: 14,
    title: "One big week a year ago",
    created: createdFor(60),
    weeks: Array.from({ length: 60 }, (_, k) => (k === 51 ? 485 : 98)),
  },
  {
    pid: 15,
    title: "Steady neighbour",
    created: createdFor(THREE_YEARS),
    weeks: Array(THREE_YEARS).fill(50),
  },
  // 16 is 14's twin in category 61, whose other product, 17, sold 100 instead of 50 in weeks
  // k = 50, 51, 52 (a peak a year before the forecast's first weeks)
  {
    pid: 16,
    title: "Big week in a seasonal category",
    created: createdFor(60),
    weeks: Array.from({ length: 60 }, (_, k) => (k === 51 ? 485 : 98)),
  },
  {
    pid: 17,
    title: "Neighbour with a peak",
    created: createdFor(THREE_YEARS),
    weeks: Array.from({ length: THREE_YEARS }, (_, k) => (k >= 50 && k <= 52 ? 100 : 50)),
  },
  // flat around 20 with bell-shaped noise (sum of three uniforms, sd ≈ 5), three years; seed = pid
  ...FLAT.map((pid) => {
    const r = random(pid);
    return {
      pid,
      title: `Flat ${pid}`,
      created: createdFor(THREE_YEARS),
      weeks: Array.from({ length: THREE_YEARS }, () =>
        Math.max(0, Math.round(20 + 10 * (r() + r() + r() - 1.5))),
      ),
    };
  }),
];

/** A backtest row without figures: ΣA = 0, or (weeks 0) a method that ran at none of the 8 weeks. */
const NO_BACKTEST = {
  weeks: 0,
  actual: 0,
  wape: null,
  mape: null,
  bias: null,
  mase: null,
  naiveWape: null,
  seasonalNaiveWape: null,
  seasonalNaiveMase: null,
};

function orderLines(): string[] {
  const lines = ["line_id,order_number,pid,order_date,quantity,price,discount,status"];
  let id = 0;
  const line = (pid: number, at: string, qty: number, status = "completed") =>
    lines.push(`${++id},SO-${id},${pid},${at},${qty},1.00,0,${status}`);
  for (const p of PRODUCTS) {
    p.weeks.forEach((qty, k) => {
      if (qty > 0) line(p.pid, `${day(-7 * k - 3)}T10:00:00Z`, qty);
    });
  }
  // Product 2's weeks 0 and 1, sold at their edges: week 0 begins 06-24 00:00 and ends at asOf,
  // week 1 ends 06-23 23:59:59. The line after asOf, the cancelled and the returned ones are no
  // sales. Sorted into the wrong week, its series would not be constant.
  line(2, "2026-06-24T00:00:00Z", 4);
  line(2, "2026-06-30T11:59:59Z", 6);
  line(2, "2026-06-30T12:00:01Z", 7);
  line(2, "2026-06-27T10:00:00Z", 5, "cancelled");
  line(2, "2026-06-26T10:00:00Z", 3, "returned");
  line(2, "2026-06-23T23:59:59Z", 10);
  // Week 60 (2025-04-30 … 05-06) is not a full week of its life (from 05-04): left out.
  line(2, "2025-05-05T10:00:00Z", 100);
  return lines;
}

const SOURCE = {
  "products.csv": [
    "pid,title,price,stock_quantity,created_at",
    ...PRODUCTS.map((p) => `${p.pid},${p.title},1.00,5,${p.created}`),
  ],
  "categories.csv": ["category_id,parent_id,name,type,level", "60,,Garden,10,1", "61,,Outdoor,10,1"],
  "product_categories.csv": ["pid,category_id", "14,60", "15,60", "16,61", "17,61"],
  "order_lines.csv": orderLines(),
  "purchase_orders.csv": ["po_id,vendor_id,status,date_ordered,date_expected"],
  "po_lines.csv": ["po_line_id,po_id,pid,ordered_qty,cost_each"],
  "receivings.csv": ["receiving_id,po_line_id,received_date,qty,cost_each"],
};

describe(`forecast and backtest (${testBackend})`, () => {
  let tdb: TestDatabase;
  let p: PipelineHarness;
  const dir = writeSource(SOURCE);

  beforeAll(async () => {
    tdb = await createTestDatabase();
    p = await pipeline(tdb.db, () => dir);
    // Settings survive the reset. The global default is seasonal; products 2, 3 and 6 ask for
    // standard, 1 and 5 for seasonal, 7 is excluded. auto_forecast_method is off until its own
    // test (the last), so the methods' tests see the method asked for.
    await tdb.db.prisma.$executeRawUnsafe(
      `INSERT INTO settings_global (setting_key, setting_value) VALUES ('default_forecast_method', 'seasonal'),
         ('auto_forecast_method', 'false')
       ON CONFLICT (setting_key) DO UPDATE SET setting_value = EXCLUDED.setting_value`,
    );
    await tdb.db.prisma.$executeRawUnsafe(
      `INSERT INTO settings_product (pid, forecast_method, exclude_from_forecast) VALUES
         (1, 'seasonal', false), (2, 'standard', false), (3, 'standard', false),
         (5, 'seasonal', false), (6, 'standard', false), (7, NULL, true), (15, 'standard', false),
         (17, 'standard', false)`,
    );
    for (const f of FLAT) {
      await tdb.db.prisma.$executeRawUnsafe(
        "INSERT INTO settings_product (pid, forecast_method) VALUES ($1, 'standard')",
        f,
      );
    }
    expect(await p.run("reset")).toMatchObject({ status: "complete", error: null });
  });
  afterAll(async () => {
    await p.close();
    await tdb.drop();
  });

  async function forecast(pid: number) {
    const f = await tdb.db.prisma.productForecast.findUnique({ where: { pid } });
    const m = await tdb.db.prisma.productMetrics.findUniqueOrThrow({ where: { pid } });
    if (!f) return null;
    return {
      method: f.method,
      requested: f.requestedMethod,
      metricsMethod: m.forecastMethod,
      weekStart: f.weekStart.toISOString().slice(0, 10),
      weekly: f.weekly,
      total: f.total91d,
    };
  }

  async function accuracy(pid: number) {
    const rows = await tdb.db.prisma.productForecastAccuracy.findMany({ where: { pid } });
    return Object.fromEntries(
      rows.map((r) => [r.method, { ...r, pid: undefined, method: undefined }]),
    ) as Record<
      string,
      {
        weeks: number;
        actual: number;
        wape: number | null;
        mape: number | null;
        bias: number | null;
        mase: number | null;
        naiveWape: number | null;
        seasonalNaiveWape: number | null;
        seasonalNaiveMase: number | null;
      }
    >;
  }

  function expectClose(actual: readonly number[], expected: readonly number[]) {
    expect(actual).toHaveLength(expected.length);
    actual.forEach((v, i) => {
      expect(v, `week ${i + 1}`).toBeCloseTo(expected[i]!, 9);
    });
  }

  it("forecasts a constant series as the constant with both methods; its backtest is exact", async () => {
    // Standard: ℓ = Σ 0.8^(n−t)·10 ÷ Σ 0.8^(n−t) = 10; the slope of a constant is 0, so Fₕ = 10.
    // Seasonal (53 ≤ n = 60 < 104, smoothed): B₅ = 10, the year's mean Ȳ = 10, no category (C = 1):
    // Fₕ = w × 10 + (1 − w) × 10 × 1 = 10.
    for (const pid of [1, 2]) {
      const f = await forecast(pid);
      expect(f).toMatchObject({
        method: pid === 1 ? "seasonal" : "standard",
        requested: pid === 1 ? "seasonal" : "standard",
        metricsMethod: pid === 1 ? "seasonal" : "standard",
        weekStart: "2026-07-01",
      });
      expectClose(f!.weekly, Array(13).fill(10));
      expect(f!.total).toBeCloseTo(130, 9);
      // Every one-step forecast of the last 8 weeks is 10 = the actual: WAPE, MAPE and bias 0, for
      // standard over the 8 weeks (ΣA = 80) and seasonal over the 7 where it ran (origins 53 … 59;
      // at origin 52 it would fall back to standard: not scored, ΣA = 70).
      const acc = await accuracy(pid);
      expect(acc.standard).toMatchObject({ weeks: 8, actual: 80 });
      expect(acc.seasonal).toMatchObject({ weeks: 7, actual: 70 });
      for (const method of ["standard", "seasonal"]) {
        expect(acc[method]!.wape).toBeCloseTo(0, 9);
        expect(acc[method]!.mape).toBeCloseTo(0, 9);
        expect(acc[method]!.bias).toBeCloseTo(0, 9);
      }
    }
  });

  it("fits level and trend of a short linear series as worked out by hand", async () => {
    // x_t = 2t, n = 10. With j = n − t: x = 20 − 2j, weights 0.8^j, j = 0 … 9.
    //   Σ 0.8^j = (1 − 0.8^10) ÷ 0.2 = 5 × (1 − 0.1073741824) = 4.463129088
    //   Σ j·0.8^j = 0.8 × (1 − 10 × 0.8^9 + 9 × 0.8^10) ÷ 0.2² = 0.8 × 0.6241903616 ÷ 0.04 = 12.483807232
    //   ℓ = (20 × 4.463129088 − 2 × 12.483807232) ÷ 4.463129088 = 64.294967296 ÷ 4.463129088 = 14.405804992
    // n ≥ 8, so the trend is the least-squares slope over the last min(10, 26) = 10 weeks: b = 2.
    //   F₁ = ℓ + b·0.8 = 16.005804992; F₂ − F₁ = b·0.8² = 1.28;
    //   F₁₃ = ℓ + 2 × 4 × (1 − 0.8^13) = 14.405804992 + 7.560195349 = 21.966000341.
    const f = await forecast(3);
    expect(f).toMatchObject({ method: "standard", requested: "standard" });
    const [f1, f2] = f!.weekly as [number, number];
    const b = (f2 - f1) / 0.64;
    expect(b).toBeCloseTo(2, 9);
    expect(f1 - 0.8 * b).toBeCloseTo(14.405804992, 8);
    expect(f1).toBeCloseTo(16.005804992, 8);
    expect(f!.weekly[12]).toBeCloseTo(21.966000341, 8);
    // Backtest, weeks t = 3 … 10 (A = 6, 8, …, 20; ΣA = 104). Origins 2 … 7 have fewer than 8
    // weeks: no trend, F = ℓ only, e.g. origin 2: (0.8 × 2 + 4) ÷ (0.8 + 1) = 3.111111; origins 8
    // and 9 add b·0.8 = 1.6. The level lags the rising series, so every forecast is below its
    // actual: F = 3.111111, 4.295082, 5.550136, 6.873870, 8.263336, 9.715133, 12.825504, 14.390446;
    // Σ|A − F| = 104 − 64.975133 = 38.975367 → WAPE = 0.374763 = −bias. Seasonal would fall back
    // to standard at every origin (fewer than 53 weeks): it ran at none, so its row is empty.
    const acc = await accuracy(3);
    expect(acc.standard).toMatchObject({ weeks: 8, actual: 104 });
    expect(acc.standard!.wape).toBeCloseTo(0.3747633, 6);
    expect(acc.standard!.bias).toBeCloseTo(-0.3747633, 6);
    expect(acc.standard!.mape).toBeCloseTo(0.3984095, 6);
    expect(acc.seasonal).toEqual(NO_BACKTEST);
  });

  it("runs seasonal with 60 weeks: last year's same weeks, smoothed toward the year's mean", async () => {
    // x_t = t, n = 60, seasonal from the global default, no category (C = 1). Under two years the
    // index is smoothed: Fₕ = w·B₅ + (1 − w)·Ȳ·C with w = n ÷ 104 = 15/26; B₅ = the mean of x at
    // t = n+h−54 … n+h−50 = h + 8; Ȳ = the mean of the last 52 weeks (t = 9 … 60) = 34.5. So
    // Fₕ = (15(h + 8) + 11 × 34.5) ÷ 26 = (499.5 + 15h) ÷ 26: F₁ = 19.788462, rising 15/26 a
    // week; total (13 × 499.5 + 15 × 91) ÷ 26 = 302.25. (Unsmoothed it was h + 8: 9 … 21.)
    const f = await forecast(4);
    expect(f).toMatchObject({ method: "seasonal", requested: "seasonal", metricsMethod: "seasonal" });
    expectClose(
      f!.weekly,
      Array.from({ length: 13 }, (_, i) => (499.5 + 15 * (i + 1)) / 26),
    );
    expect(f!.total).toBeCloseTo(302.25, 9);
    // Backtest t = 53 … 60, ΣA = 53 + … + 60 = 452.
    // Standard at origin T = t − 1 (weeks 1 … T): ℓ = T − Σj·0.8^j ÷ Σ0.8^j (j = 0 … T−1)
    //   = T − 3.99952 (at T = 52: 19.997442 ÷ 4.999954), b = 1 (the slope of x_t = t), so
    //   F = T + 0.8 − 3.9995 and every week is missed by about 4.1995: Σ ≈ 33.60 → WAPE 0.0743317.
    // Seasonal at origin T (n' = T weeks, t = T + 1): at T = 52 it would fall back to standard, so
    //   it is not scored there (null, not standard's figure); from T = 53 on, w = T ÷ 104, B₅ = the
    //   mean of x at t − 54 … t − 50 within the life (t ≥ 1) = t − 52 (at t = 54 the weeks 1 … 4:
    //   2.5), Ȳ = the mean of x at T − 51 … T = T − 25.5: F = 19.033654 (t = 60), 18.278846,
    //   17.524038, 16.769231, 16.014423, 15.259615, 14.759615 (t = 54). ΣA = 60 + … + 54 = 399,
    //   ΣF = 12234.5 ÷ 104 = 117.639423, all under: Σ|A − F| = 281.360577 → WAPE = 0.705164 =
    //   −bias; MAPE = mean of (A − F) ÷ A = 0.705697.
    const acc = await accuracy(4);
    expect(acc.standard).toMatchObject({ weeks: 8, actual: 452 });
    expect(acc.seasonal).toMatchObject({ weeks: 7, actual: 399 });
    expect(acc.seasonal!.wape!).toBeCloseTo(0.7051644, 6);
    expect(acc.seasonal!.bias!).toBeCloseTo(-0.7051644, 6);
    expect(acc.seasonal!.mape!).toBeCloseTo(0.7056972, 6);
    expect(acc.standard!.wape!).toBeCloseTo(0.0743317, 6);
  });

  it("smooths one big week a year ago instead of copying it (one year of history)", async () => {
    // 14: n = 60 weeks of 98, except 485 in week k = 51, the week a year before next week. Standard
    // forecasts ≈ 98: ℓ = 98 + 387 × 0.8⁵¹ ÷ (5 × (1 − 0.8⁶⁰)) = 98.000884, no trend.
    // Unsmoothed, seasonal would copy the big week: F₁ = (98 + 485 + 98) ÷ 3 = 227.
    // Smoothed (53 ≤ n < 104): B₅ = (4 × 98 + 485) ÷ 5 = 175.4, Ȳ = (51 × 98 + 485) ÷ 52 =
    // 105.442308, and the category's index C = 1 (its other product, 15, sold 50 each of the 5 weeks
    // and each of the year's 52: 50 ÷ 50). w = 60 ÷ 104: F₁ = 0.576923 × 175.4 + 0.423077 ×
    // 105.442308 = 145.802515; the same for h = 2, 3 (their 5 weeks hold the big week too); from
    // h = 4 on B₅ = 98: 0.576923 × 98 + 0.423077 × 105.442308 = 101.148669.
    const f = await forecast(14);
    expect(f).toMatchObject({ method: "seasonal", requested: "seasonal" });
    const first = (60 * 175.4 + 44 * (5483 / 52)) / 104;
    const rest = (60 * 98 + 44 * (5483 / 52)) / 104;
    expectClose(f!.weekly, [first, first, first, ...Array(10).fill(rest)]);
    // Near the standard forecast, not the copy: the big week's excess over standard is cut from 129
    // to under 48 units (and to 3 units in the weeks its 5 weeks do not reach).
    const standardF1 = 98.000884;
    expect(f!.weekly[0]! - standardF1).toBeLessThan(48);
    expect(f!.weekly[0]!).toBeLessThan(227 - 80);
    expect(f!.weekly[5]! - standardF1).toBeLessThan(3.2);
  });

  it("pulls the smoothed index toward the category's profile", async () => {
    // 16 has 14's weeks; its category's other product, 17, sold 100 in k = 50, 51, 52 and 50 in
    // every other week. The category index for F₁ (the 5 weeks k = 49 … 53 against the year
    // k = 0 … 51) is ((50 + 3 × 100 + 50) ÷ 5) ÷ ((50 × 50 + 2 × 100) ÷ 52) = 80 ÷ 51.923077 =
    // 1.540741 (14's is 1), so F₁ = (60 × 175.4 + 44 × 105.442308 × 1.540741) ÷ 104 = 169.138: the
    // category's peak lifts it. In week h = 5 (k = 45 … 49, all 50) the index is 50 ÷ 51.923077 =
    // 0.962963, a little under 14's.
    const [f14, f16] = [await forecast(14), await forecast(16)];
    const year = 5483 / 52;
    const catYear = (50 * 50 + 2 * 100) / 52;
    expect(f16!.weekly[0]!).toBeCloseTo((60 * 175.4 + 44 * year * (80 / catYear)) / 104, 9);
    expect(f16!.weekly[4]!).toBeCloseTo((60 * 98 + 44 * year * (50 / catYear)) / 104, 9);
    expect(f16!.weekly[0]!).toBeGreaterThan(f14!.weekly[0]!);
    expect(f16!.weekly[4]!).toBeLessThan(f14!.weekly[4]!);
  });

  it("applies the year-on-year growth to seasonal with 104 weeks, clamped to 0.5 … 2", async () => {
    // n = 104 (capped). baseₕ = mean of x at t = 51+h, 52+h, 53+h: for h = 1 the weeks t = 52, 53, 54
    // (the last week of the prior year and two of the last), for h ≥ 2 weeks of the last year only.
    // 11: last 52 weeks 15, the 52 before 10: g = 780 ÷ 520 = 1.5; F₁ = (10 + 15 + 15) ÷ 3 × 1.5 = 20,
    //     F₂ … F₁₃ = 15 × 1.5 = 22.5 (the 1000s before the 104 weeks count nowhere).
    // 12: 40 against 10: 2080 ÷ 520 = 4, clamped to 2; F₁ = (10 + 40 + 40) ÷ 3 × 2 = 60, then 80.
    // 13: nothing sold in the prior year: g = 1; F₁ = (0 + 12 + 12) ÷ 3 = 8, then 12.
    const expected: Record<number, [number, number]> = { 11: [20, 22.5], 12: [60, 80], 13: [8, 12] };
    for (const [pid, [first, rest]] of Object.entries(expected)) {
      const f = await forecast(Number(pid));
      expect(f).toMatchObject({ method: "seasonal", requested: "seasonal" });
      expectClose(f!.weekly, [first, ...Array(12).fill(rest)]);
      expect(f!.total).toBeCloseTo(first + 12 * rest, 9);
    }
  });

  it("falls back to standard with 30 weeks when seasonal is asked for", async () => {
    const [asked, twin] = [await forecast(5), await forecast(6)];
    expect(asked).toMatchObject({ method: "standard", requested: "seasonal", metricsMethod: "standard" });
    expect(twin).toMatchObject({ method: "standard", requested: "standard" });
    // Same series, so the same standard forecast.
    expectClose(asked!.weekly, twin!.weekly);
    expect(asked!.weekly[0]).toBeGreaterThan(0);
    // In the backtest every origin has fewer than 53 weeks: seasonal ran at none of them, so its
    // row has no weeks and no figures (not a copy of standard's).
    const acc = await accuracy(5);
    expect(acc.seasonal).toEqual(NO_BACKTEST);
    expect(acc.standard!.wape!).toBeGreaterThan(0);
    expect(acc.standard!.actual).toBe(36); // x at t = 23 … 30: 5, 6, 3, 4, 5, 6, 3, 4
  });

  it("stores nothing for an excluded product", async () => {
    expect(await forecast(7)).toBeNull();
    expect(await accuracy(7)).toEqual({});
    const m = await tdb.db.prisma.productMetrics.findUniqueOrThrow({ where: { pid: 7 } });
    expect(m.forecastMethod).toBeNull();
  });

  it("forecasts 0 without history, and backtests only with at least 9 weeks", async () => {
    // Never sold, 25 weeks: zeros, and a backtest with nothing to divide by.
    const never = await forecast(8);
    expect(never).toMatchObject({ method: "standard", requested: "seasonal", total: 0 });
    expect(never!.weekly).toEqual(Array(13).fill(0));
    const acc = await accuracy(8);
    expect(acc.standard).toEqual({ ...NO_BACKTEST, weeks: 8 });
    expect(acc.seasonal).toEqual(NO_BACKTEST);
    // Two days old: n = 0, so Fₕ = 0 although it sold, and no backtest.
    const young = await forecast(9);
    expect(young).toMatchObject({ method: "standard", total: 0 });
    expect(young!.weekly).toEqual(Array(13).fill(0));
    expect(await accuracy(9)).toEqual({});
    // …but the Forecasting grid's history shows its sale (D0 − 3 = 2026-06-27, in the calendar week
    // before D0's, the last of the 12), though it has no fit; 8 sold nothing: twelve zeros.
    const stored = async (pid: number) =>
      (await tdb.db.prisma.productForecast.findUniqueOrThrow({ where: { pid } })).history;
    expect(await stored(9)).toEqual([...Array(11).fill(0), 3]);
    expect(await stored(8)).toEqual(Array(12).fill(0));
  });

  it("seasonal beats standard on a strongly seasonal series whose backtest weeks fall with the season", async () => {
    // The last 8 weeks (May–June) are on the falling side of the Christmas cycle (actuals 45, 40,
    // 38, 36, 30, 28, 28, 20): the standard level lags the fall by about 4 weeks' worth, while last
    // year's same weeks match (smoothed a little toward the year's mean: each origin has under 104
    // weeks). Here: seasonal WAPE 0.0503, standard 0.3990 (bias +0.3990).
    const acc = await accuracy(10);
    expect(acc.standard!.actual).toBe(acc.seasonal!.actual);
    expect(acc.seasonal!.wape!).toBeLessThan(acc.standard!.wape!);
    expect(acc.seasonal!.wape!).toBeLessThan(0.15);
    expect(acc.standard!.wape!).toBeGreaterThan(0.3);
    expect(acc.standard!.bias!).toBeGreaterThan(0.3); // standard over-forecasts the fall
    // The forecast (July–September) climbs from the summer low towards Christmas.
    const f = await forecast(10);
    expect(f).toMatchObject({ method: "seasonal", requested: "seasonal" });
    expect(f!.weekly[0]).toBeLessThan(30);
    expect(f!.weekly[12]).toBeGreaterThan(50);
  });

  it("standard is at least as good as seasonal on flat noisy series", async () => {
    // Standard's level averages about 9 weeks (α = 0.2: Σw² ÷ (Σw)² = 1/9), seasonal's base only 3,
    // so on white noise standard's expected error is about 8% smaller. One 8-week backtest is close
    // to a coin flip (standard wins ~63% of single series), so the comparison pools 40 flat series:
    // Σ|A − F| ÷ ΣA over all of them. The data is fixed; over random draws a 40-series pool favours
    // standard ~98% of the time (the 20 series of seeds 200–219 alone are one of the exceptions:
    // 0.2229 against 0.2193). Here: standard 0.2187, seasonal 0.2266.
    const rows = await tdb.db.prisma.productForecastAccuracy.findMany({ where: { pid: { in: FLAT } } });
    expect(rows).toHaveLength(2 * FLAT.length);
    const pooled = (method: string) => {
      const r = rows.filter((x) => x.method === method);
      return r.reduce((s, x) => s + x.wape! * x.actual, 0) / r.reduce((s, x) => s + x.actual, 0);
    };
    expect(pooled("standard")).toBeLessThanOrEqual(pooled("seasonal"));
  });
  it("states every backtest against the naive and seasonal-naive baselines (MASE)", async () => {
    // Product 3, x_t = 2t, backtest t = 3 … 10 (ΣA = 104). Naive: F = x_{t−1} = 2(t − 1), a miss
    // of 2 every week: Σ|A − naive| = 16, naive WAPE = 16 ÷ 104 = 0.153846. Standard's Σ|A − F| =
    // 38.975367 (its test above), so MASE = 38.975367 ÷ 16 = 2.435960: worse than naive. Seasonal
    // naive needs 52 weeks before the week (t − 1 ≥ 52): none here, so it is the naive (MASE 1).
    const three = await accuracy(3);
    expect(three.standard!.naiveWape).toBeCloseTo(0.1538462, 6);
    expect(three.standard!.mase).toBeCloseTo(2.43596, 5);
    expect(three.standard!.seasonalNaiveWape).toBeCloseTo(0.1538462, 6);
    expect(three.standard!.seasonalNaiveMase).toBeCloseTo(1, 9);
    // Seasonal ran at none of its weeks: no baselines on its row either.
    expect(three.seasonal).toEqual(NO_BACKTEST);
    // Product 4, x_t = t, t = 53 … 60 (ΣA = 452): naive misses 1 a week (Σ 8, WAPE 0.017699);
    // seasonal naive F = x_{t−52} = t − 52 misses 52 a week (Σ 416, WAPE 0.920354, MASE 52).
    // Standard Σ|A − F| = 0.0743317 × 452 = 33.598 → MASE 4.19977. Seasonal's row is over its 7
    // weeks (t = 54 … 60, ΣA = 399): naive Σ 7, seasonal naive Σ 364, its own 281.360577 → MASE
    // 40.194368.
    const four = await accuracy(4);
    expect(four.standard!.naiveWape).toBeCloseTo(8 / 452, 9);
    expect(four.standard!.seasonalNaiveWape).toBeCloseTo(416 / 452, 9);
    expect(four.standard!.seasonalNaiveMase).toBeCloseTo(52, 9);
    expect(four.standard!.mase).toBeCloseTo((0.0743317 * 452) / 8, 4);
    expect(four.seasonal!.naiveWape).toBeCloseTo(7 / 399, 9);
    expect(four.seasonal!.seasonalNaiveWape).toBeCloseTo(364 / 399, 9);
    expect(four.seasonal!.mase).toBeCloseTo(281.3605769 / 7, 6);
    // A constant series: the naive forecast is exact, so MASE has nothing to divide by.
    expect((await accuracy(1)).standard).toMatchObject({ naiveWape: 0, mase: null, seasonalNaiveMase: null });
  });

  it("auto_forecast_method: products on the default take the method with the lower backtest error", async () => {
    await tdb.db.prisma.$executeRawUnsafe(
      "UPDATE settings_global SET setting_value = 'true' WHERE setting_key = 'auto_forecast_method'",
    );
    expect(await p.run("reset")).toMatchObject({ status: "complete", error: null });
    const chosen = async (pid: number) =>
      (await tdb.db.prisma.productForecast.findUnique({ where: { pid } }))?.chosenByBacktest;
    // 4 (default seasonal): over the 7 weeks where both ran, standard's Σ|A − F| ≈ 7 × 4.1995 <
    // seasonal's 281.36 → standard, and its forecast is standard's: the level and trend of x_t = t
    // (F₁ = 60 + 0.8 − 3.9995 … as in its test).
    const four = await forecast(4);
    expect(four).toMatchObject({ method: "standard", requested: "seasonal", metricsMethod: "standard" });
    expect(await chosen(4)).toBe(true);
    expect(four!.weekly[0]).toBeCloseTo(60 - 3.99952 + 0.8, 3);
    // 10 (default seasonal): seasonal's WAPE 0.0503 < standard's 0.3990 → seasonal, by backtest.
    expect(await forecast(10)).toMatchObject({ method: "seasonal", requested: "seasonal" });
    expect(await chosen(10)).toBe(true);
    const detail = await forecastProduct(tdb.db, 10);
    expect(detail.method_label).toBe("seasonal (chosen by backtest)");
    // 11 (default seasonal, the last 8 weeks all 15): standard is exact, seasonal's base is last
    // year's 10s → standard.
    expect(await forecast(11)).toMatchObject({ method: "standard", requested: "seasonal" });
    // 1 sets its own method (seasonal): auto leaves it; so does a product where seasonal ran at no
    // backtest week (3, 8: nothing to compare) and a product without a backtest (9).
    expect(await forecast(1)).toMatchObject({ method: "seasonal" });
    expect(await chosen(1)).toBe(false);
    expect(await forecast(8)).toMatchObject({ method: "standard", requested: "seasonal" });
    expect(await chosen(8)).toBe(false);
    expect((await forecastProduct(tdb.db, 8)).method_label).toBe(
      "standard (too little history for seasonal)",
    );
  });
});
