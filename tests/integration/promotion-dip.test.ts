// The dip after a promotion (docs/metrics.md §16.2): measured per category from the products' own
// past promotions (a discounted week as module elasticity defines it) and the weeks after them; the
// simulation lowers the projected units after the end date by it, and a saved promotion carries it
// into the forecast layer and F(H). Category 301 (Cards) has 12 past promotions each followed by two
// weeks at half the usual units: a dip of 50 % for 2 weeks. Category 302 (Wrap) has 12 without a
// dip; their parent 300 (Gifts) pools both (25 % for 2 weeks); 303 (Paper) has one promotion, too
// few to count. The source is calculated as of today (promotions may not start in the past).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { refreshPromotionDips } from "../../server/modules/discounts/promotion-dip.ts";
import type { Promotion, SimulationResult } from "../../shared/discounts.ts";
import type { ForecastProductDetail } from "../../shared/forecasting.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { testBackend } from "../helpers/db.ts";
import { discountSource, type SourceProduct, weeksWith } from "../helpers/discount-source.ts";
import { type PipelineHarness, pipeline } from "../helpers/pipeline.ts";

const DAY = 86_400_000;
const TODAY = new Date().toISOString().slice(0, 10);
const addDays = (day: string, n: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY).toISOString().slice(0, 10);

/** 70 a week at 10.00; 140 a week at 8.00 in weeks 40–39, 26–25 and 12–11 (k counts back from D0). */
const promoted = (pid: number, category: number, afterUnits: number | null): SourceProduct => {
  const weeks = weeksWith(70, 10, [{ weeks: [40, 39, 26, 25, 12, 11], units: 140, price: 8 }]);
  // The two weeks after each promotion (k_last − 1, k_last − 2) sell `afterUnits` instead of 70.
  if (afterUnits !== null) for (const k of [38, 37, 24, 23, 10, 9]) weeks[k] = [afterUnits, 10];
  return { pid, title: `P${pid}`, price: 10, cost: 4, stock: 100_000, categories: [category], weeks };
};

const PRODUCTS: SourceProduct[] = [
  // The seasonal reference (every product's, as no category has 10): so large and flat that the
  // promoted products' own weeks barely move it.
  {
    pid: 40,
    title: "Reference",
    price: 2,
    cost: 1,
    stock: 10_000_000,
    categories: [303],
    weeks: weeksWith(100_000, 2),
  },
  ...[11, 12, 13, 14].map((pid) => promoted(pid, 301, 35)),
  ...[21, 22, 23, 24].map((pid) => promoted(pid, 302, null)),
  {
    pid: 31,
    title: "One promotion",
    price: 10,
    cost: 4,
    stock: 100_000,
    categories: [303],
    weeks: (() => {
      const w = weeksWith(70, 10, [{ weeks: [20, 19], units: 140, price: 8 }]);
      w[18] = [20, 10];
      w[17] = [20, 10];
      return w;
    })(),
  },
];

describe(`the dip after a promotion (${testBackend})`, () => {
  let t: TestApp;
  let p: PipelineHarness;
  let admin: Record<string, string>;
  const dir = discountSource(PRODUCTS, [], TODAY);

  beforeAll(async () => {
    t = await startTestApp();
    admin = { authorization: `Bearer ${(await t.login("admin")).token}` };
    p = await pipeline(t.tdb.db, () => dir, { asOf: new Date(`${TODAY}T12:00:00Z`) });
    expect((await p.run("reset")).status).toBe("complete");
    // The server measures the dips in the background after each run (services.ts); this harness
    // runs the pipeline without the server's hooks, so it starts the measurement itself.
    await refreshPromotionDips(t.tdb.db, (err) => {
      throw err;
    });
  }, 120_000);
  afterAll(async () => {
    await p?.close();
    await t?.close();
  });

  const call = async (method: "GET" | "POST" | "DELETE", url: string, payload?: unknown) => {
    const res = await t.app.inject({ method, url, payload: payload as object, headers: admin });
    return { status: res.statusCode, body: res.body ? res.json() : undefined };
  };
  const first = addDays(TODAY, 1);
  const simulate = async (category_id: number) => {
    const r = await call("POST", "/api/discount-simulations", {
      scope: { category_id },
      discount_pct: 20,
      starts_on: addDays(first, 7),
      ends_on: addDays(first, 20),
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body as SimulationResult;
  };

  it("measures each category's dip from its products' past promotions (in the background after a calculation)", async () => {
    await simulate(303);
    const rows = await t.tdb.db.prisma.$queryRawUnsafe<
      {
        category_id: number;
        promotions: number;
        expected_units: number[];
        after_units: number[];
        dip: number;
        weeks: number;
      }[]
    >("SELECT * FROM category_promotion_dips ORDER BY category_id");
    const by = new Map(rows.map((r) => [r.category_id, r]));
    // 4 products × 3 promotions; regular rate 70 a week (34 clean weeks of 70, a seasonal index of
    // ≈ 1 every week); weeks after: 35, 35, 70, 70 against ≈ 70 expected.
    const cards = by.get(301)!;
    expect(cards).toMatchObject({ promotions: 12, weeks: 2 });
    expect(cards.dip).toBeCloseTo(0.5, 2);
    for (const e of cards.expected_units) expect(Number(e)).toBeCloseTo(12 * 70, -1);
    expect(cards.after_units.map(Number)).toEqual([420, 420, 840, 840]);
    expect(by.get(302)).toMatchObject({ promotions: 12, weeks: 0, dip: 0 });
    // The parent pools both: (420 + 840) ÷ 1,680 = 0.75 in each of the two weeks.
    expect(by.get(300)).toMatchObject({ promotions: 24, weeks: 2 });
    expect(by.get(300)!.dip).toBeCloseTo(0.25, 2);
    // One promotion: too few for a figure, whatever the weeks after it sold.
    expect(by.get(303)).toMatchObject({ promotions: 1, weeks: 0, dip: 0 });
  });

  it("lowers the projected units in the weeks after the end date by the category's dip", async () => {
    const r = await simulate(301);
    const share = r.dip!.share;
    expect(share).toBeCloseTo(0.5, 2);
    expect(r.dip).toEqual({ share, weeks: 2, promotions: 12 });
    for (const x of r.products) expect(x.dip).toEqual({ share, weeks: 2, promotions: 12, category: "Cards" });
    // Chart weeks from the first forecast day: 0 before, 1–2 the promotion, 3–4 the dip, 5–6 after it.
    const w = r.weekly;
    const uplift = r.products[0]!.uplift;
    expect(uplift).toBeGreaterThan(1.05);
    for (const i of [1, 2]) expect(w[i]!.scenario_units).toBeCloseTo(w[i]!.baseline_units * uplift, 0);
    for (const i of [3, 4]) expect(w[i]!.scenario_units).toBeCloseTo(w[i]!.baseline_units * (1 - share), 1);
    for (const i of [0, 5, 6]) expect(w[i]!.scenario_units).toBeCloseTo(w[i]!.baseline_units, 1);
    expect(w[3]!.baseline_units).toBeGreaterThan(0);

    // No dip in Wrap's history, and too few promotions in Paper's: the weeks after are the baseline.
    for (const cat of [302, 303]) {
      const n = await simulate(cat);
      expect(n.dip).toBeNull();
      expect(n.products.every((x) => x.dip === null)).toBe(true);
      for (const x of n.weekly.slice(3)) expect(x.scenario_units).toBeCloseTo(x.baseline_units, 1);
    }
  });

  it("carries the dip into the forecast layer and F(H) of a saved promotion, and drops it on cancel", async () => {
    const detail = async (pid: number) => {
      const d = await call("GET", `/api/forecasting/products/${pid}`);
      expect(d.status).toBe(200);
      return d.body as ForecastProductDetail;
    };
    const fh = async (pid: number) =>
      (
        await t.tdb.db.prisma.$queryRawUnsafe<{ f_h: number; h: number }[]>(
          "SELECT forecast_horizon_units::float8 AS f_h, horizon_days::float8 AS h FROM product_metrics WHERE pid = $1",
          pid,
        )
      )[0]!;
    const before = await detail(11);
    const planBefore = await fh(11);
    const weeks = before.weeks.forecast;
    const saved = await call("POST", "/api/promotions", {
      name: "Card sale",
      scope: { pids: [11] },
      discount_pct: 20,
      starts_on: weeks[0],
      ends_on: addDays(weeks[0]!, 13),
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    const promo = saved.body as Promotion;
    const uplift = promo.products![0]!.uplift;
    const [stored] = await t.tdb.db.prisma.$queryRawUnsafe<{ dip: number; dip_weeks: number }[]>(
      "SELECT dip, dip_weeks FROM promotion_products WHERE promotion_id = $1",
      promo.id,
    );
    expect(stored!.dip_weeks).toBe(2);
    const dip = stored!.dip;
    expect(dip).toBeCloseTo(0.5, 2);

    // Calendar weeks 1–2: × uplift; 3–4 (the 14 days after its end): × (1 − dip); then the system figure.
    const after = await detail(11);
    for (const [i, w] of after.forecast.entries()) {
      const sys = before.forecast[i]!.system;
      if (i < 2) expect(w.final).toBeCloseTo(sys * uplift, 1);
      else if (i < 4) {
        expect(w.promotion).toBeCloseTo(-dip * sys, 1);
        expect(w.final).toBeCloseTo(sys * (1 - dip), 1);
      } else expect(w.final).toBe(sys);
    }
    expect(after.promotions).toEqual([expect.objectContaining({ id: promo.id, dip, dip_weeks: 2 })]);

    // F(H): (uplift − 1) × the day's system figure on the promotion's days, −dip × it on the dip's.
    const [fc] = await t.tdb.db.prisma.$queryRawUnsafe<{ weekly: number[] }[]>(
      "SELECT weekly FROM product_forecasts WHERE pid = 11",
    );
    const weekly = fc!.weekly;
    const k0 = Math.round((Date.parse(weeks[0]!) - Date.parse(first)) / DAY);
    let change = 0;
    for (let k = k0; k < k0 + 28; k++)
      change +=
        (k < k0 + 14 ? uplift - 1 : -dip) *
        Math.min(Math.max(planBefore.h - k, 0), 1) *
        (Number(weekly[Math.min(Math.floor(k / 7), 12)]) / 7);
    expect((await fh(11)).f_h).toBeCloseTo(planBefore.f_h + change, 1);

    expect((await call("DELETE", `/api/promotions/${promo.id}`)).status).toBe(200);
    const back = await detail(11);
    expect(back.forecast.map((x) => x.final)).toEqual(before.forecast.map((x) => x.final));
    expect((await fh(11)).f_h).toBeCloseTo(planBefore.f_h, 2);
  });
});
