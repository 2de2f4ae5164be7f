// A saved promotion as a layer of the forecast (docs/metrics.md §16 "Promotions in the forecast"):
// saving one lifts its products' forecast on its days (final = system × uplift, its own line on the
// Forecasting page) and their F(H) and reorder quantity at once; a calculation keeps it; cancelling
// it takes it away. A stop_reordering promotion running on the planning day takes its products out
// of the reorder suggestions and the purchasing workspace. The source is calculated as of today
// (promotions may not start in the past), so every date here counts from today.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Promotion } from "../../shared/discounts.ts";
import type { ForecastGridPage, ForecastProductDetail } from "../../shared/forecasting.ts";
import type { ReplenishmentPage } from "../../shared/purchasing.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { testBackend } from "../helpers/db.ts";
import { discountSource, type SourceProduct, weeksWith } from "../helpers/discount-source.ts";
import { type PipelineHarness, pipeline } from "../helpers/pipeline.ts";

const DAY = 86_400_000;
const TODAY = new Date().toISOString().slice(0, 10);
const addDays = (day: string, n: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY).toISOString().slice(0, 10);

/** 70 a week (10 a day) at 10.00 in category 303. */
const steady = (pid: number, title: string, stock: number): SourceProduct => ({
  pid,
  title,
  price: 10,
  cost: 4,
  stock,
  categories: [303],
  weeks: weeksWith(70, 10),
});

describe(`promotions as a forecast layer (${testBackend})`, () => {
  let t: TestApp;
  let p: PipelineHarness;
  let admin: Record<string, string>;
  const dir = discountSource([steady(4, "Low stock", 150), steady(5, "Plenty", 5000)], [], TODAY);

  beforeAll(async () => {
    t = await startTestApp();
    admin = { authorization: `Bearer ${(await t.login("admin")).token}` };
    p = await pipeline(t.tdb.db, () => dir, { asOf: new Date(`${TODAY}T12:00:00Z`) });
    expect((await p.run("reset")).status).toBe("complete");
  }, 120_000);
  afterAll(async () => {
    await p?.close();
    await t?.close();
  });

  const call = async (method: "GET" | "POST" | "DELETE", url: string, payload?: unknown) => {
    const res = await t.app.inject({ method, url, payload: payload as object, headers: admin });
    return { status: res.statusCode, body: res.body ? res.json() : undefined };
  };
  const detail = async (pid: number) => {
    const r = await call("GET", `/api/forecasting/products/${pid}`);
    expect(r.status).toBe(200);
    return r.body as ForecastProductDetail;
  };
  const gridRow = async (pid: number) => {
    const r = await call("GET", `/api/forecasting/products?search=${pid}`);
    expect(r.status).toBe(200);
    return (r.body as ForecastGridPage).items.find((x) => x.id === pid)!;
  };
  const plan = async (pid: number) =>
    (
      await t.tdb.db.prisma.$queryRawUnsafe<
        { f_h: number; reorder_qty: number; h: number; ss: number; on_hand: number; on_order: number }[]
      >(
        `SELECT forecast_horizon_units::float8 AS f_h, reorder_qty, horizon_days::float8 AS h,
           safety_stock AS ss, on_hand, on_order FROM product_metrics WHERE pid = $1`,
        pid,
      )
    )[0]!;
  const engineWeeks = async (pid: number) =>
    (
      await t.tdb.db.prisma.$queryRawUnsafe<{ weekly: number[] }[]>(
        "SELECT weekly FROM product_forecasts WHERE pid = $1",
        pid,
      )
    )[0]!.weekly.map(Number);
  const figure = async (pid: number, key: string) => {
    const r = await call("GET", `/api/products/${pid}/metrics/explain`);
    expect(r.status).toBe(200);
    return (r.body.figures as { key: string; substituted: string; note?: string | null }[]).find(
      (f) => f.key === key,
    )!;
  };
  const suggested = async () =>
    ((await call("GET", "/api/replenishment?pageSize=100")).body as ReplenishmentPage).items.map(
      (x) => x.pid,
    );

  it("lifts the forecast weeks and the reorder figures at once, keeps them through a calculation, and drops them on cancel", async () => {
    const before = await detail(4);
    const planBefore = await plan(4);
    const weeks = before.weeks.forecast;
    expect(before.forecast.every((w) => w.promotion === null)).toBe(true);
    expect(planBefore.reorder_qty).toBeGreaterThan(0);

    // 20 % off product 4 for the first two calendar forecast weeks.
    const saved = await call("POST", "/api/promotions", {
      name: "Two-week sale",
      scope: { pids: [4] },
      discount_pct: 20,
      starts_on: weeks[0],
      ends_on: addDays(weeks[0]!, 13),
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    const promo = saved.body as Promotion;
    const uplift = promo.products![0]!.uplift;
    expect(uplift).toBeGreaterThan(1.3); // 7.99 ÷ 10.00 at the global elasticity 1.5: 1.40

    // The Forecasting page: final = system × uplift in the promoted weeks, its own line.
    const after = await detail(4);
    for (const [i, w] of after.forecast.entries()) {
      const sys = before.forecast[i]!.system;
      expect(w.system).toBe(sys);
      if (i < 2) {
        expect(w.promotion).toBeCloseTo(sys * (uplift - 1), 1);
        expect(w.final).toBeCloseTo(sys * uplift, 1);
      } else {
        expect(w.promotion).toBeNull();
        expect(w.final).toBe(sys);
      }
    }
    expect(after.promotions).toEqual([
      expect.objectContaining({ id: promo.id, name: "Two-week sale", uplift, stop_reordering: false }),
    ]);
    const row = await gridRow(4);
    expect(row.promotion.slice(0, 3).map((x) => x !== null)).toEqual([true, true, false]);
    expect(row.final[0]).toBeCloseTo(row.system[0]! * uplift, 1);
    expect(row.forecast_units).toBeCloseTo(
      row.final.reduce((a, b) => a + b, 0),
      0,
    );

    // F(H) gains (uplift − 1) × the day's system figure for each promotion day inside the horizon;
    // the reorder quantity follows (MOQ and case 1: ⌈F(H) + SS − on hand − on order⌉).
    const w = await engineWeeks(4);
    const k0 = Math.round((Date.parse(weeks[0]!) - Date.parse(addDays(TODAY, 1))) / DAY);
    let extra = 0;
    for (let k = k0; k < k0 + 14; k++)
      extra +=
        (uplift - 1) * Math.min(Math.max(planBefore.h - k, 0), 1) * (w[Math.min(Math.floor(k / 7), 12)]! / 7);
    expect(extra).toBeGreaterThan(1);
    const planAfter = await plan(4);
    expect(planAfter.f_h).toBeCloseTo(planBefore.f_h + extra, 1);
    expect(planAfter.reorder_qty).toBe(
      Math.ceil(planAfter.f_h + planAfter.ss - planAfter.on_hand - planAfter.on_order),
    );
    expect(planAfter.reorder_qty).toBeGreaterThan(planBefore.reorder_qty);
    // The product's explanation adds the promotions to F(H) and agrees with the stored figures.
    const fh = await figure(4, "forecast_horizon_units");
    expect(fh.substituted).toMatch(/; \+ promotions [\d.,]+ → [\d.,]+$/);
    expect(fh.note ?? "").not.toMatch(/give/);
    expect((await figure(4, "reorder_qty")).note ?? "").not.toMatch(/give/);
    // The other product is untouched.
    expect((await detail(5)).forecast.every((x) => x.promotion === null)).toBe(true);

    // Every calculation applies the layer the same way, and the week's forecast snapshot (taken
    // again here for this product) keeps the final figure with the promotion.
    await t.tdb.db.prisma.$executeRawUnsafe("DELETE FROM forecast_snapshots WHERE pid = 4");
    expect((await p.run("update")).status).toBe("complete");
    const [snap] = await t.tdb.db.prisma.$queryRawUnsafe<{ system: number[]; final: number[] }[]>(
      "SELECT system::float8[] AS system, final::float8[] AS final FROM forecast_snapshots WHERE pid = 4",
    );
    expect(snap!.final[0]).toBeCloseTo(snap!.system[0]! * uplift, 1);
    expect(snap!.final[2]).toBeCloseTo(snap!.system[2]!, 3);
    const planRecalc = await plan(4);
    expect(planRecalc.f_h).toBeCloseTo(planAfter.f_h, 1);
    expect(planRecalc.reorder_qty).toBe(planAfter.reorder_qty);

    // Cancelled: the layer and its change to the reorder figures are gone at once.
    expect((await call("DELETE", `/api/promotions/${promo.id}`)).status).toBe(200);
    const back = await detail(4);
    expect(back.forecast.map((x) => x.final)).toEqual(before.forecast.map((x) => x.final));
    expect(back.forecast.every((x) => x.promotion === null)).toBe(true);
    expect(back.promotions).toEqual([]);
    const planBack = await plan(4);
    expect(planBack.f_h).toBeCloseTo(planBefore.f_h, 2);
    expect(planBack.reorder_qty).toBe(planBefore.reorder_qty);
  });

  it("counts a promotion beside an override: override's figure + the promotion's units", async () => {
    const before = await detail(5);
    const week = before.weeks.forecast[1]!;
    const ov = await call("POST", "/api/forecasting/overrides", {
      scope: { pid: 5 },
      weeks: [{ week_start: week, units: 100 }],
      reason: "Fair",
    });
    expect(ov.status, JSON.stringify(ov.body)).toBe(201);
    const saved = await call("POST", "/api/promotions", {
      name: "Week two",
      scope: { pids: [5] },
      discount_pct: 20,
      starts_on: week,
      ends_on: addDays(week, 6),
    });
    expect(saved.status).toBe(201);
    const uplift = (saved.body as Promotion).products![0]!.uplift;
    const d = await detail(5);
    const w2 = d.forecast[1]!;
    expect(w2.override).toBe(100);
    expect(w2.promotion).toBeCloseTo(w2.system * (uplift - 1), 1);
    expect(w2.final).toBeCloseTo(100 + w2.system * (uplift - 1), 1);
    // Two promotions on the same days: the newest counts, they do not add up.
    const deeper = await call("POST", "/api/promotions", {
      name: "Week two, deeper",
      scope: { pids: [5] },
      discount_pct: 30,
      starts_on: week,
      ends_on: addDays(week, 6),
    });
    expect(deeper.status).toBe(201);
    const uplift30 = (deeper.body as Promotion).products![0]!.uplift;
    expect(uplift30).toBeGreaterThan(uplift);
    expect((await detail(5)).forecast[1]!.promotion).toBeCloseTo(w2.system * (uplift30 - 1), 1);
    expect((await call("DELETE", `/api/promotions/${(deeper.body as Promotion).id}`)).status).toBe(200);
    expect((await detail(5)).forecast[1]!.promotion).toBeCloseTo(w2.system * (uplift - 1), 1);
    expect((await call("DELETE", `/api/promotions/${(saved.body as Promotion).id}`)).status).toBe(200);
    expect((await call("DELETE", `/api/forecasting/overrides/${ov.body.id}`)).status).toBe(200);
  });

  it("turns a Products-page filter into a scope of product IDs (discounts.filterScope)", async () => {
    const get = async (input: unknown, headers = admin) => {
      const res = await t.app.inject({
        url: `/trpc/discounts.filterScope?input=${encodeURIComponent(JSON.stringify({ json: input }))}`,
        headers,
      });
      return { status: res.statusCode, body: res.json() };
    };
    // "Plenty" (5,000 in stock, 10 a day) is overstocked; "Low stock" is not.
    const over = await get({ status: "overstocked" });
    expect(over.status).toBe(200);
    expect(over.body.result.data.json).toEqual({ pids: [5], total: 1, capped: false });
    expect((await get({ search: "stock" })).body.result.data.json).toMatchObject({ pids: [4], total: 1 });
    expect((await get({})).body.result.data.json).toMatchObject({ pids: [4, 5], total: 2 });
    expect((await get({ noSalesDays: 0 })).status).toBe(400);
    await t.createUser("buyer-only", ["access:products"]);
    const buyer = { authorization: `Bearer ${(await t.login("buyer-only")).token}` };
    expect((await get({}, buyer)).status).toBe(403);
  });

  it("stop_reordering: no reorder suggestion while the promotion runs, back when it is cancelled", async () => {
    const before = await plan(4);
    expect(before.reorder_qty).toBeGreaterThan(0);
    expect(await suggested()).toContain(4);
    // Starting on the first planning day (D0 + 1), it runs: the product is no suggestion at once.
    const saved = await call("POST", "/api/promotions", {
      name: "Clear it",
      scope: { pids: [4] },
      discount_pct: 30,
      starts_on: addDays(TODAY, 1),
      ends_on: addDays(TODAY, 20),
      stop_reordering: true,
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    const id = (saved.body as Promotion).id;
    expect((await plan(4)).reorder_qty).toBe(0);
    expect(await suggested()).not.toContain(4);
    expect((await figure(4, "reorder_qty")).substituted).toBe(
      'the promotion "Clear it" stops reordering while it runs (§16.1) → 0',
    );
    // Its forecast still shows the promotion (this is not exclude_from_forecast).
    expect((await detail(4)).forecast[0]!.promotion).toBeGreaterThan(0);
    // Drafts from suggestions do not pick it.
    const draft = await call("POST", "/api/purchase-orders/from-suggestions", { pids: [4] });
    expect(draft.status, JSON.stringify(draft.body)).toBe(201);
    expect(draft.body.created).toEqual([]);
    // A calculation keeps it out.
    expect((await p.run("update")).status).toBe("complete");
    expect((await plan(4)).reorder_qty).toBe(0);
    expect(await suggested()).not.toContain(4);

    // One that starts later does not stop it yet.
    const later = await call("POST", "/api/promotions", {
      name: "Later clearance",
      scope: { pids: [5] },
      discount_pct: 30,
      starts_on: addDays(TODAY, 30),
      ends_on: addDays(TODAY, 40),
      stop_reordering: true,
    });
    expect(later.status).toBe(201);

    expect((await call("DELETE", `/api/promotions/${id}`)).status).toBe(200);
    expect((await plan(4)).reorder_qty).toBe(before.reorder_qty);
    expect(await suggested()).toContain(4);
  });
});
