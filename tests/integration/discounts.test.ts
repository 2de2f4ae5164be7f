// The Discount Simulator's REST and tRPC doors over a hand-made source (docs/metrics.md §16):
// projections, break-even, price endings, the fallback to the global elasticity, stock-outs before
// the next PO, the clearance search, promotions (create, edit until they start, cancel, predicted
// against actual in units and revenue, kept by a Full Reset) and who may do what.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PromotionDetail } from "../../server/modules/discounts/discounts.service.ts";
import type { ClearanceResult, Promotion, SimulationResult } from "../../shared/discounts.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { testBackend } from "../helpers/db.ts";
import {
  discountSource,
  FLAT,
  HAND_WORKED,
  type SourceProduct,
  weeksWith,
} from "../helpers/discount-source.ts";
import { type PipelineHarness, pipeline } from "../helpers/pipeline.ts";

/** 70 a week (10 a day) at 10.00 in category 303. */
const steady = (pid: number, title: string, cost: number, stock: number): SourceProduct => ({
  pid,
  title,
  price: 10,
  cost,
  stock,
  categories: [303],
  weeks: weeksWith(70, 10),
});

const PRODUCTS = [
  HAND_WORKED,
  FLAT,
  steady(4, "Low stock", 4, 150),
  steady(5, "Clearance line", 3, 1000),
  steady(6, "Thin margin", 9, 5000),
  // Already marked down: regular 14.99, sold at 11.29 (20 % off the regular would be 11.99).
  { ...steady(7, "Marked down", 5, 300), price: 11.29, regularPrice: 14.99, categories: [] },
];

describe(`Discount Simulator API (${testBackend})`, () => {
  let t: TestApp;
  let p: PipelineHarness;
  let admin: Record<string, string>;
  const dir = discountSource(PRODUCTS, [{ pid: 4, qty: 500, expected: "2026-07-20" }]);

  beforeAll(async () => {
    t = await startTestApp();
    admin = { authorization: `Bearer ${(await t.login("admin")).token}` };
    p = await pipeline(t.tdb.db, () => dir);
    expect((await p.run("reset")).status).toBe("complete");
  });
  afterAll(async () => {
    await p.close();
    await t.close();
  });

  const post = (url: string, payload: unknown, headers = admin) =>
    t.app.inject({ method: "POST", url, payload: payload as object, headers });
  const simulate = async (payload: unknown) => {
    const res = await post("/api/discount-simulations", payload);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as SimulationResult;
  };
  const setSettings = async (values: Record<string, string>) => {
    const res = await t.app.inject({
      method: "PUT",
      url: "/config/global",
      headers: admin,
      payload: Object.entries(values).map(([setting_key, setting_value]) => ({ setting_key, setting_value })),
    });
    expect(res.statusCode, res.body).toBe(200);
  };

  it("projects 20% off a category: units, revenue, margin, break-even, below cost, stock-out before the PO", async () => {
    const r = await simulate({
      scope: { category_id: 303 },
      discount_pct: 20,
      starts_on: "2026-07-01",
      ends_on: "2026-07-14",
    });
    expect(r.as_of).toBe("2026-06-30");
    expect(r.products.map((x) => x.pid)).toEqual([4, 5, 6]);
    const [low, clear, thin] = r.products as [
      SimulationResult["products"][0],
      SimulationResult["products"][0],
      SimulationResult["products"][0],
    ];
    // 10.00 − 20% = 8.00, rounded down to the .x9 ending (the default): 7.99; global elasticity 1.5.
    const uplift = 0.799 ** -1.5;
    expect(clear).toMatchObject({
      scenario_price: 7.99,
      elasticity: 1.5,
      elasticity_source: "global",
      elasticity_range: null,
      below_cost: false,
    });
    expect(clear.uplift).toBeCloseTo(uplift, 4);
    expect(clear.baseline.units).toBeCloseTo(140, 0);
    expect(clear.scenario.units).toBeCloseTo(140 * uplift, 0);
    expect(clear.baseline.revenue).toBeCloseTo(1400, -1);
    expect(clear.scenario.revenue).toBeCloseTo(140 * uplift * 7.99, -1);
    expect(clear.scenario.margin).toBeCloseTo(140 * uplift * (7.99 - 3), -1);
    expect(clear.scenario.margin_pct).toBeCloseTo((7.99 - 3) / 7.99, 3);
    // m = (10 − 3) ÷ 10 = 0.7, d = 1 − 7.99 ÷ 10 = 0.201: units must rise by d ÷ (m − d).
    expect(clear.margin_share).toBe(0.7);
    expect(clear.discount_share).toBe(0.201);
    expect(clear.break_even_uplift).toBeCloseTo(0.201 / 0.499, 4);
    expect(clear.stockout_risk).toBe(false);
    // Cost 9.00: 7.99 is below cost, and d ≥ m (0.201 ≥ 0.1): no break-even.
    expect(thin).toMatchObject({ below_cost: true, break_even_uplift: null, margin_share: 0.1 });
    expect(thin.scenario.margin!).toBeLessThan(0);
    // 150 in stock, 10 a day: the baseline lasts to 07-15, the scenario's ≈ 14 a day runs out on
    // 07-11, before the PO of 07-20: 150 sold, the rest of the demand lost.
    expect(low.next_po_date).toBe("2026-07-20");
    expect(low.baseline.units).toBeCloseTo(140, 0);
    expect(low.baseline.stock_end).toBeCloseTo(10, 0);
    expect(low.scenario.units).toBeCloseTo(150, 6);
    expect(low.scenario.stock_end).toBe(0);
    expect(low.scenario.weeks_of_cover).toBe(0);
    expect(low.scenario.lost_units).toBeCloseTo(140 * uplift - 150, 0);
    expect(low.scenario_stockout).toBe("2026-07-11");
    expect(low.stockout_risk).toBe(true);
    // Totals add the products up; the chart's weeks run from the first forecast day to 4 weeks after the end.
    expect(r.totals.scenario.units).toBeCloseTo(
      low.scenario.units + clear.scenario.units + thin.scenario.units,
      1,
    );
    expect(r.totals.baseline.revenue).toBeCloseTo(
      low.baseline.revenue + clear.baseline.revenue + thin.baseline.revenue,
      1,
    );
    expect(r.weekly[0]).toMatchObject({ week_start: "2026-07-01" });
    expect(r.weekly.at(-1)!.week_start).toBe("2026-08-05");
    expect(r.weekly[0]!.scenario_units).toBeGreaterThan(r.weekly[0]!.baseline_units);
    expect(r.cannibalisation).toBeNull();
  });

  it("uses the product's own elasticity with its range, and a target price for one product", async () => {
    const r = await simulate({
      scope: { pids: [1] },
      target_price: 8,
      starts_on: "2026-07-01",
      ends_on: "2026-07-07",
    });
    const [one] = r.products;
    expect(one).toMatchObject({
      pid: 1,
      scenario_price: 7.99,
      elasticity_source: "product",
      price_changes: 4,
    });
    expect(one!.elasticity).toBeCloseTo(1.511, 3);
    expect(one!.elasticity_range![0]).toBeCloseTo(1.511 - 1.96 * 0.2, 2);
    expect(one!.uplift).toBeCloseTo(0.799 ** -one!.elasticity, 3);
    const two = await post("/api/discount-simulations", {
      scope: { pids: [1, 2] },
      target_price: 8,
      starts_on: "2026-07-01",
      ends_on: "2026-07-07",
    });
    expect(two.statusCode).toBe(400);
    expect(two.json().message).toBe("target_price: is for one product only (scope.pids with one pid)");
    // A target above today's price runs, and says it is a price rise.
    const rise = await simulate({
      scope: { pids: [1] },
      target_price: 99,
      starts_on: "2026-07-01",
      ends_on: "2026-07-07",
    });
    expect(rise.products[0]!.notes.join(" ")).toMatch(
      /The target price 98\.99 is above today's \d+\.\d\d: a price rise/,
    );
    expect(one!.notes.join(" ")).not.toMatch(/price rise/);
  });

  it("follows the settings: price ending, default elasticity, cannibalisation", async () => {
    await setSettings({ price_ending: "none", default_price_elasticity: "2", cannibalisation_share: "0.25" });
    try {
      const r = await simulate({
        scope: { pids: [2] },
        discount_pct: 20,
        starts_on: "2026-07-01",
        ends_on: "2026-07-14",
      });
      const [flat] = r.products;
      expect(flat).toMatchObject({ scenario_price: 4, elasticity: 2, elasticity_source: "global" });
      expect(flat!.uplift).toBeCloseTo(1.5625, 6);
      // 200 units at 5.00 become 312.5 at 4.00; a quarter of the 112.5 extra come from the category.
      expect(flat!.scenario.units).toBeCloseTo(312.5, 0);
      expect(r.cannibalisation).toMatchObject({ share: 0.25 });
      expect(r.cannibalisation!.units).toBeCloseTo(112.5 / 4, 0);
      expect(r.settings).toEqual({
        default_price_elasticity: 2,
        cannibalisation_share: 0.25,
        price_ending: "none",
      });
    } finally {
      await setSettings({ price_ending: ".x9", default_price_elasticity: "1.5", cannibalisation_share: "0" });
    }
  });

  it("never raises a price: a product already below the discount off its regular price keeps today's", async () => {
    await setSettings({ price_ending: "none" });
    try {
      const r = await simulate({
        scope: { pids: [7] },
        discount_pct: 20,
        starts_on: "2026-07-01",
        ends_on: "2026-07-14",
      });
      const [p7] = r.products;
      expect(p7).toMatchObject({ price: 11.29, regular_price: 14.99, scenario_price: 11.29, uplift: 1 });
      expect(p7!.notes.join(" ")).toContain("Already sold at 11.29, below 20% off the regular 14.99");
      // Nothing to break even: the price does not change (its markdown from the regular is old news).
      expect(p7!.break_even_uplift).toBeNull();
      // 30 % off goes below today's price: 14.99 × 0.7 = 10.493 → 10.49.
      const deeper = await simulate({
        scope: { pids: [7] },
        discount_pct: 30,
        starts_on: "2026-07-01",
        ends_on: "2026-07-14",
      });
      expect(deeper.products[0]!.scenario_price).toBe(10.49);
      expect(deeper.products[0]!.uplift).toBeGreaterThan(1);
    } finally {
      await setSettings({ price_ending: ".x9" });
    }
  });

  it("answers bad input with a 400 naming it", async () => {
    const base = { scope: { pids: [5] }, discount_pct: 10, starts_on: "2026-07-01", ends_on: "2026-07-14" };
    const cases: [unknown, string][] = [
      [{ ...base, ends_on: "2026-06-30" }, "ends_on: must not be before starts_on"],
      [{ ...base, discount_pct: 0 }, "discount_pct: must be a number above 0 and below 100"],
      [{ ...base, discount_pct: 100 }, "discount_pct: must be a number above 0 and below 100"],
      [{ ...base, scope: {} }, "scope: must name products (pids), a category_id, a brand_id or a vendor_id"],
      [
        { ...base, scope: { pids: [] } },
        "scope: must name products (pids), a category_id, a brand_id or a vendor_id",
      ],
      [{ ...base, starts_on: "2026-02-30" }, "starts_on: must be a date (YYYY-MM-DD)"],
      // A blank date is named once, and not compared with the other.
      [{ ...base, ends_on: "" }, "ends_on: must be a date (YYYY-MM-DD)"],
      [
        { ...base, starts_on: "2026-06-01" },
        "starts_on: must not be before 2026-07-01, the first day of the forecast",
      ],
      [{ ...base, scope: { pids: [999] } }, "scope: no product with a price matches it"],
      [{ ...base, discount_pct: undefined }, "discount_pct: give either discount_pct or target_price"],
    ];
    for (const [payload, message] of cases) {
      const res = await post("/api/discount-simulations", payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().message).toBe(message);
    }
  });

  it("searches the smallest discount that clears the stock by a date, and says when none up to the cap does", async () => {
    const body = { scope: { pids: [5] }, starts_on: "2026-07-01", ends_on: "2026-08-31", target_units: 0 };
    const res = await post("/api/discount-simulations/clearance", body);
    expect(res.statusCode, res.body).toBe(200);
    const c = res.json() as ClearanceResult;
    // 1,000 in stock, 10 a day for 62 days sells 620: about 1.6× is needed.
    expect(c.stock_without).toBeCloseTo(380, -1);
    expect(c.discount_pct).toBeGreaterThan(20);
    expect(c.discount_pct).toBeLessThan(40);
    expect(c.simulation.totals.scenario.stock_end).toBeLessThanOrEqual(0);
    const just = await simulate({ ...body, target_units: undefined, discount_pct: c.discount_pct! - 1 });
    expect(just.totals.scenario.stock_end).toBeGreaterThan(0);
    expect(c.message).toBe(`${c.discount_pct}% off from 2026-07-01 leaves 0 units on 2026-08-31 (target 0).`);

    const capped = (
      await post("/api/discount-simulations/clearance", { ...body, max_discount_pct: 10 })
    ).json() as ClearanceResult;
    expect(capped.discount_pct).toBeNull();
    expect(capped.message).toMatch(
      /^No discount up to 10% reaches 0 units by 2026-08-31: at 10% off, [\d,.]+ units are left\.$/,
    );
  });

  describe("promotions", () => {
    const future = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
    const scenario = {
      scope: { category_id: 303 },
      discount_pct: 25,
      starts_on: future(10),
      ends_on: future(23),
    };

    it("saves a scenario as a planned promotion, lists it, edits it until it starts, cancels it", async () => {
      const res = await post("/api/promotions", {
        ...scenario,
        name: "Autumn clearance",
        stop_reordering: true,
      });
      expect(res.statusCode, res.body).toBe(201);
      const created = res.json() as Promotion;
      expect(created).toMatchObject({
        name: "Autumn clearance",
        status: "planned",
        editable: true,
        stop_reordering: true,
        product_count: 3,
        discount_pct: 25,
        created_by: "admin",
        actual: null,
      });
      expect(created.products!.map((x) => x.pid)).toEqual([4, 5, 6]);
      expect(created.totals.scenario.units).toBeGreaterThan(created.totals.baseline.units);
      // Predicted in money from its stored rows, for a planned promotion too: 10.00 − 25 % = 7.50,
      // rounded down to the .x9 ending: 7.49 on each of the three, so the promotional revenue is
      // 7.49 × the predicted units and the baseline 10.00 × the baseline units.
      const detail = created as PromotionDetail;
      expect(created.products!.map((x) => [x.price, x.base_price])).toEqual([
        [7.49, 10],
        [7.49, 10],
        [7.49, 10],
      ]);
      const units = (f: "predicted_units" | "baseline_units") =>
        created.products!.reduce((a, x) => a + x[f], 0);
      expect(detail.predicted_revenue).toBeCloseTo(7.49 * units("predicted_units"), 2);
      expect(detail.baseline_revenue).toBeCloseTo(10 * units("baseline_units"), 2);
      expect(detail.predicted_revenue).toBeGreaterThan(detail.baseline_revenue!);

      const list = (await t.app.inject({ url: "/api/promotions", headers: admin })).json() as Promotion[];
      expect(list.map((x) => x.id)).toContain(created.id);

      const put = await t.app.inject({
        method: "PUT",
        url: `/api/promotions/${created.id}`,
        headers: admin,
        payload: { ...scenario, scope: { pids: [5] }, name: "Clearance, one line" },
      });
      expect(put.statusCode, put.body).toBe(200);
      expect(put.json()).toMatchObject({
        name: "Clearance, one line",
        product_count: 1,
        stop_reordering: false,
      });

      // A promotion may not be saved for the past.
      const past = await post("/api/promotions", {
        ...scenario,
        name: "Too late",
        starts_on: "2026-07-01",
        ends_on: "2026-07-14",
      });
      expect(past.statusCode).toBe(400);
      expect(past.json().message).toMatch(
        /^starts_on: must not be in the past \(today is \d{4}-\d{2}-\d{2}\)$/,
      );
      expect((await post("/api/promotions", { ...scenario, name: " " })).json().message).toBe(
        "name: name is required",
      );

      const del = await t.app.inject({
        method: "DELETE",
        url: `/api/promotions/${created.id}`,
        headers: admin,
      });
      expect(del.statusCode).toBe(200);
      expect(del.json()).toMatchObject({ status: "cancelled", editable: false });
      const again = await t.app.inject({
        method: "PUT",
        url: `/api/promotions/${created.id}`,
        headers: admin,
        payload: { ...scenario, name: "Revived" },
      });
      expect(again.statusCode).toBe(409);
      expect(again.json().message).toBe(
        `Promotion ${created.id} is cancelled: only a planned promotion can be edited`,
      );
      expect(
        (await t.app.inject({ method: "DELETE", url: "/api/promotions/99999", headers: admin })).statusCode,
      ).toBe(404);
    });

    it("compares a finished promotion's predicted and actual uplift, and a Full Reset keeps promotions", async () => {
      // Product 1 sold 140 a week at 8.00 in weeks 10–11 (lines on 2026-04-11 and 04-18).
      const [row] = await t.tdb.db.prisma.$queryRawUnsafe<{ id: number }[]>(
        `INSERT INTO promotions (name, scope, discount_pct, starts_on, ends_on, totals)
         VALUES ('Spring cards', '{"pids":[1]}', 20, '2026-04-11', '2026-04-24', '{}') RETURNING id`,
      );
      const id = row!.id;
      await t.tdb.db.prisma.$executeRawUnsafe(
        `INSERT INTO promotion_products (promotion_id, pid, price, base_price, baseline_units, predicted_units, uplift, elasticity, elasticity_source)
         VALUES ($1, 1, 8, 10, 200, 280, 1.4, 1.5, 'product')`,
        id,
      );
      expect((await p.run("reset")).status).toBe("complete");
      const res = await t.app.inject({ url: `/api/promotions/${id}`, headers: admin });
      expect(res.statusCode).toBe(200);
      const promo = res.json() as PromotionDetail;
      expect(promo.status).toBe("finished");
      expect(promo.products![0]).toMatchObject({
        pid: 1,
        baseline_units: 200,
        predicted_units: 280,
        actual_units: 280,
        actual_uplift: 1.4,
      });
      // Revenue: 8.00 × 280 predicted, 10.00 × 200 baseline; sold 2 × 140 at 8.00 without a line
      // discount, so 2,240.00 actual.
      expect(promo.actual).toEqual({
        baseline_units: 200,
        predicted_units: 280,
        actual_units: 280,
        predicted_uplift: 1.4,
        actual_uplift: 1.4,
        actual_revenue: 2240,
      });
      expect(promo).toMatchObject({ predicted_revenue: 2240, baseline_revenue: 2000 });
      const cancelFinished = await t.app.inject({
        method: "DELETE",
        url: `/api/promotions/${id}`,
        headers: admin,
      });
      expect(cancelFinished.statusCode).toBe(409);
      // The cancelled one of the test before is still there too.
      expect(
        (
          (
            await t.app.inject({ url: "/api/promotions?status=cancelled", headers: admin })
          ).json() as Promotion[]
        ).length,
      ).toBe(1);
    });

    it("answers a planned promotion's predicted and baseline revenue to the cent, on both doors, and null without products", async () => {
      const starts = future(30);
      const ends = future(43);
      const [row] = await t.tdb.db.prisma.$queryRawUnsafe<{ id: number }[]>(
        `INSERT INTO promotions (name, scope, discount_pct, starts_on, ends_on, totals)
         VALUES ('Odd cents', '{"pids":[4,5]}', 20, $1::date, $2::date, '{}') RETURNING id`,
        starts,
        ends,
      );
      const id = row!.id;
      await t.tdb.db.prisma.$executeRawUnsafe(
        `INSERT INTO promotion_products (promotion_id, pid, price, base_price, baseline_units, predicted_units, uplift, elasticity, elasticity_source)
         VALUES ($1, 4, 7.99, 10, 140, 196.5, 1.4036, 1.5, 'global'),
                ($1, 5, 7.49, 9.99, 70.25, 101.333, 1.4425, 1.5, 'global')`,
        id,
      );
      // Predicted: 7.99 × 196.5 = 1,570.035 plus 7.49 × 101.333 = 758.98417 → 2,329.01917 → 2,329.02.
      // Baseline: 10 × 140 = 1,400 plus 9.99 × 70.25 = 701.7975 → 2,101.7975 → 2,101.80.
      const rest = await t.app.inject({ url: `/api/promotions/${id}`, headers: admin });
      expect(rest.statusCode, rest.body).toBe(200);
      expect(rest.json()).toMatchObject({
        status: "planned",
        predicted_revenue: 2329.02,
        baseline_revenue: 2101.8,
        actual: null,
      });
      const trpc = await t.app.inject({
        url: `/trpc/discounts.promotion?input=${encodeURIComponent(JSON.stringify({ json: { id } }))}`,
        headers: admin,
      });
      expect(trpc.statusCode, trpc.body).toBe(200);
      expect(trpc.json().result.data.json).toMatchObject({
        predicted_revenue: 2329.02,
        baseline_revenue: 2101.8,
      });

      // Nothing stored to sum: null, not $0.00.
      const [empty] = await t.tdb.db.prisma.$queryRawUnsafe<{ id: number }[]>(
        `INSERT INTO promotions (name, scope, discount_pct, starts_on, ends_on, totals)
         VALUES ('No rows', '{"pids":[4]}', 20, $1::date, $2::date, '{}') RETURNING id`,
        starts,
        ends,
      );
      const none = await t.app.inject({ url: `/api/promotions/${empty!.id}`, headers: admin });
      expect(none.json()).toMatchObject({ predicted_revenue: null, baseline_revenue: null });
      // Taken out again: the tests after count promotions.
      await t.tdb.db.prisma.$executeRawUnsafe("DELETE FROM promotions WHERE id = ANY($1::int[])", [
        id,
        empty!.id,
      ]);
    });
  });

  it("lets the page's permission simulate and list, and only create:promotions save, edit and cancel", async () => {
    await t.createUser("planner", ["access:discount_simulator"]);
    await t.createUser("promoter", ["access:discount_simulator", "create:promotions"]);
    const planner = { authorization: `Bearer ${(await t.login("planner")).token}` };
    const promoter = { authorization: `Bearer ${(await t.login("promoter")).token}` };
    const body = { scope: { pids: [5] }, discount_pct: 10, starts_on: "2026-07-01", ends_on: "2026-07-14" };
    expect((await post("/api/discount-simulations", body, planner)).statusCode).toBe(200);
    expect((await t.app.inject({ url: "/api/promotions", headers: planner })).statusCode).toBe(200);
    const future = new Date(Date.now() + 5 * 86_400_000).toISOString().slice(0, 10);
    const promo = { ...body, name: "Ten off", starts_on: future, ends_on: future };
    const refused = await post("/api/promotions", promo, planner);
    expect(refused.statusCode).toBe(403);
    expect((await post("/api/promotions", promo, promoter)).statusCode).toBe(201);
    // tRPC: the same rule.
    const trpc = await t.app.inject({
      method: "POST",
      url: "/trpc/discounts.createPromotion",
      headers: { ...planner, "content-type": "application/json" },
      payload: { json: promo },
    });
    expect(trpc.statusCode).toBe(403);
  });
});
