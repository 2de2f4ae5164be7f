// The demo data generator lifts a product's demand during a promotion by 1 + 2 × the discount share
// (not a constant elasticity): 1.4× at 20% off. Fitted on generated data, every category with
// enough promotions must predict a 20% cut's uplift, 0.8^(−ε), within ± 25% of that 1.4.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateDemoData } from "../../scripts/lib/demo-data.ts";
import { createTestDatabase, type TestDatabase, testBackend } from "../helpers/db.ts";
import { type PipelineHarness, pipeline } from "../helpers/pipeline.ts";

/**
 * Enough promotions: a pooled fit over at least this many products that changed price, with a
 * standard error of at most MAX_SE (the rule for standing in for products asks 0.35).
 */
const MIN_PRODUCTS = 40;
const MAX_SE = 0.3;

// A Full Reset of 3,000 products takes minutes on the embedded database: the fit is the same SQL on both,
// so this runs on PostgreSQL (CI runs the suite on both backends).
describe.skipIf(testBackend !== "postgres")(`elasticity fitted on the demo data (${testBackend})`, () => {
  let tdb: TestDatabase;
  let p: PipelineHarness;
  let dir: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "demo-elasticity-"));
    // Data up to the pipeline helper's asOf (2026-06-30).
    await generateDemoData({
      out: dir,
      products: 3000,
      years: 2,
      seed: 19,
      today: new Date("2026-07-01T00:00:00Z"),
    });
    tdb = await createTestDatabase();
    p = await pipeline(tdb.db, () => dir);
    expect((await p.run("reset")).status).toBe("complete");
  }, 240_000);
  afterAll(async () => {
    await p?.close();
    await tdb?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("predicts a 20% discount's uplift within ± 25% of the generator's 1.4× in every category with enough promotions", async () => {
    const cats = await tdb.db.prisma.$queryRawUnsafe<
      {
        category_id: number;
        name: string;
        elasticity: number;
        se: number;
        products: number;
        price_changes: number;
      }[]
    >(
      `SELECT ce.category_id, c.name, ce.elasticity, ce.se, ce.products, ce.price_changes
       FROM category_elasticities ce JOIN categories c ON c.id = ce.category_id
       WHERE ce.trusted AND ce.products >= $1 AND ce.se <= $2 ORDER BY ce.category_id`,
      MIN_PRODUCTS,
      MAX_SE,
    );
    expect(cats.length).toBeGreaterThanOrEqual(4);
    const off = cats
      .map((c) => ({ ...c, uplift: 0.8 ** -c.elasticity }))
      .filter((c) => Math.abs(c.uplift - 1.4) > 0.25 * 1.4);
    expect(off).toEqual([]);
  });
});
