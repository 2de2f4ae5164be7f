// Module elasticity (docs/metrics.md §15) through a real Full Reset of hand-made sources: the
// hand-worked product of §15.6, and the fallback chain product → category → global.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase, testBackend } from "../helpers/db.ts";
import {
  discountSource,
  FLAT,
  HAND_WORKED,
  type SourceProduct,
  weeksWith,
} from "../helpers/discount-source.ts";
import { type PipelineHarness, pipeline } from "../helpers/pipeline.ts";

interface Row {
  pid: number;
  source: string;
  elasticity: number;
  category_id: number | null;
  fitted: number | null;
  fitted_se: number | null;
  ci_low: number;
  ci_high: number;
  price_changes: number;
  weeks: number;
  discounted_weeks: number;
}

/** 100 a week at 10.00, 140 a week at 8.00 in the given weeks (a 20% cut lifting units by 1.4). */
const promoted = (pid: number, categories: number[], promoWeeks: number[]): SourceProduct => ({
  pid,
  title: `Promoted ${pid}`,
  price: 10,
  cost: 5,
  stock: 100_000,
  categories,
  weeks: weeksWith(100, 10, [{ weeks: promoWeeks, units: 140, price: 8 }]),
});

describe(`price elasticity fit (${testBackend})`, () => {
  let tdb: TestDatabase;
  let p: PipelineHarness;
  let dir = "";
  beforeAll(async () => {
    tdb = await createTestDatabase();
    p = await pipeline(tdb.db, () => dir);
  });
  afterAll(async () => {
    await p.close();
    await tdb.drop();
  });

  const rows = async () =>
    tdb.db.prisma.$queryRawUnsafe<Row[]>("SELECT * FROM product_elasticities ORDER BY pid");

  it("fits the hand-worked product of docs/metrics.md §15.6", async () => {
    dir = discountSource([HAND_WORKED, FLAT]);
    expect((await p.run("reset")).status).toBe("complete");
    const [one, ...others] = await rows();
    // Levels: regular U = 4,800 over E = 336 days, 20% off U = 560 over E = 28 days; weights U + ½.
    // ε = −(ln(560.5/28) − ln(4800.5/336)) ÷ ln 0.8.
    const e = -(Math.log(560.5 / 28) - Math.log(4800.5 / 336)) / Math.log(0.8);
    const cxx = 560.5 * Math.log(0.8) ** 2 * (1 - 560.5 / 5361);
    const se = 1 / Math.sqrt(cxx);
    expect(one).toMatchObject({
      pid: 1,
      source: "product",
      category_id: null,
      price_changes: 4,
      weeks: 52,
      discounted_weeks: 4,
    });
    expect(one!.elasticity).toBeCloseTo(e, 9);
    expect(one!.elasticity).toBeCloseTo(1.5114, 4);
    expect(one!.fitted_se).toBeCloseTo(se, 9);
    expect(one!.fitted_se).toBeCloseTo(0.2, 4);
    expect(one!.ci_low).toBeCloseTo(e - 1.96 * se, 9);
    expect(one!.ci_high).toBeCloseTo(e + 1.96 * se, 9);
    // Product 2 never changed price: no fit, no category with evidence → no row (global setting).
    expect(others).toEqual([]);
    const cats = await tdb.db.prisma.$queryRawUnsafe<
      { category_id: number; products: number; trusted: boolean }[]
    >("SELECT category_id, products, trusted FROM category_elasticities ORDER BY category_id");
    // Category 301 and its parent 300 pool product 1 alone: too few products to stand in.
    expect(cats).toEqual([
      { category_id: 300, products: 1, trusted: false },
      { category_id: 301, products: 1, trusted: false },
    ]);
  });

  it("reads the shelf price: a coupon (a line discount) is not a price change", async () => {
    // Product 3 sells as product 1 does, but its 20% is taken off each line of weeks 10–11 and 30–31
    // as a discount at the full shelf price: no price change, so no fit of its own.
    const coupon: SourceProduct = {
      ...HAND_WORKED,
      pid: 3,
      title: "Coupon Card",
      weeks: HAND_WORKED.weeks.map(([units, price], k) =>
        [10, 11, 30, 31].includes(k) ? [units, 10, units * (10 - price)] : [units, price],
      ),
    };
    dir = discountSource([HAND_WORKED, FLAT, coupon]);
    expect((await p.run("reset")).status).toBe("complete");
    const byPid = new Map((await rows()).map((r) => [r.pid, r]));
    expect(byPid.get(1)).toMatchObject({ source: "product", price_changes: 4, discounted_weeks: 4 });
    expect(byPid.get(3)?.source).not.toBe("product");
    // Its lines did count as sales at the shelf price less the coupon.
    const [sales] = await tdb.db.prisma.$queryRawUnsafe<{ revenue: string }[]>(
      "SELECT revenue_365d::text AS revenue FROM product_metrics WHERE pid = 3",
    );
    const [one] = await tdb.db.prisma.$queryRawUnsafe<{ revenue: string }[]>(
      "SELECT revenue_365d::text AS revenue FROM product_metrics WHERE pid = 1",
    );
    expect(sales!.revenue).toBe(one!.revenue);
  });

  it("falls back from the product to its deepest category with evidence, then to the global setting", async () => {
    const thin: SourceProduct = {
      pid: 14,
      title: "Thin evidence",
      price: 10,
      cost: 5,
      stock: 100_000,
      categories: [301],
      weeks: weeksWith(5, 10, [{ weeks: [20], units: 7, price: 8 }]),
    };
    const wrap: SourceProduct = { ...FLAT, pid: 15, title: "Wrap without price change", categories: [302] };
    const loose: SourceProduct = { ...FLAT, pid: 16, title: "No category", categories: [] };
    dir = discountSource([
      promoted(11, [301], [5, 6, 40, 41]),
      promoted(12, [301], [12, 13, 45, 46]),
      promoted(13, [301], [25, 26, 33, 34]),
      thin,
      wrap,
      loose,
    ]);
    expect((await p.run("reset")).status).toBe("complete");
    const byPid = new Map((await rows()).map((r) => [r.pid, r]));
    for (const pid of [11, 12, 13]) {
      const r = byPid.get(pid)!;
      expect(r.source).toBe("product");
      expect(r.elasticity).toBeGreaterThan(1.35);
      expect(r.elasticity).toBeLessThan(1.65);
    }
    const [c300, c301] = await tdb.db.prisma.$queryRawUnsafe<
      {
        category_id: number;
        elasticity: number;
        products: number;
        trusted: boolean;
      }[]
    >("SELECT category_id, elasticity, products, trusted FROM category_elasticities ORDER BY category_id");
    expect(c301).toMatchObject({ category_id: 301, products: 4, trusted: true });
    expect(c300).toMatchObject({ category_id: 300, products: 4, trusted: true });
    // Product 14 has one week at 20% off (2 price changes, 7 units): its own fit is too uncertain.
    const t = byPid.get(14)!;
    expect(t.source).toBe("category");
    expect(t.category_id).toBe(301);
    expect(t.fitted).not.toBeNull();
    expect(t.fitted_se!).toBeGreaterThan(0.5);
    expect(t.price_changes).toBe(2);
    expect(t.elasticity).toBeCloseTo(c301!.elasticity, 12);
    // Product 15 sits in 302, which has no fit: its parent 300 stands in.
    expect(byPid.get(15)).toMatchObject({
      source: "category",
      category_id: 300,
      fitted: null,
      price_changes: 0,
    });
    // Product 16 has no category: no row, so the global setting applies.
    expect(byPid.has(16)).toBe(false);
  });
});
