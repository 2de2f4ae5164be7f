// `npm run bench:discounts -- [--data DIR] [--runs R] [--skip-import] [--force] [--target N]`
// A benchmark, not a test. On the PostgreSQL named by DATABASE_URL: imports a data set with a Full
// Reset through the job code (--data: a folder of CSV exports, e.g. one kept by `bench:pipeline
// --keep`; --skip-import: the database already holds one, e.g. after `bench:pipeline`), then times
// the Discount Simulator's services (what the tRPC procedures and REST routes call) on the category
// whose products (with its sub-categories) number closest to --target (5,000):
//   - a simulation of 25% off for 14 days, R times (after 3 warm-ups): p50, p99, max;
//   - the clearance search (stock to 0 within 8 weeks, cap 50%), R ÷ 3 times: p50, max;
//   - saving the scenario as a promotion (with the promotion layer's refresh of the category's
//     planning rows) and cancelling it, R ÷ 3 times each: p50, max (the bench's promotions are
//     deleted afterwards).
// The last line is one JSON object with the figures.

import { parseArgs } from "node:util";
import { openDatabase } from "../../server/db/database.ts";
import { migrate } from "../../server/db/migrate.ts";
import { DataOps } from "../../server/jobs/data-ops.ts";
import { createProgressBus } from "../../server/jobs/progress-bus.ts";
import { CsvFolderSource } from "../../server/jobs/source.ts";
import {
  cancelPromotion,
  createPromotion,
  searchClearance,
  simulateDiscount,
} from "../../server/modules/discounts/discounts.service.ts";
import { refreshPromotionDips } from "../../server/modules/discounts/promotion-dip.ts";
import { addDays } from "../../shared/discounts.ts";

const { values } = parseArgs({
  options: {
    data: { type: "string" },
    runs: { type: "string", default: "30" },
    target: { type: "string", default: "5000" },
    "skip-import": { type: "boolean", default: false },
    force: { type: "boolean", default: false },
  },
});

const url = process.env.DATABASE_URL;
if (!url) {
  console.error("Set DATABASE_URL to the PostgreSQL database to benchmark on");
  process.exit(1);
}
const runs = Math.max(3, Number(values.runs));
const db = await openDatabase({ databaseUrl: url, poolSize: 4 });
await migrate(db);

if (!values["skip-import"]) {
  if (!values.data) {
    console.error("Pass --data DIR (CSV exports) or --skip-import (the database holds a data set already)");
    process.exit(1);
  }
  const [count] = await db.prisma.$queryRawUnsafe<{ n: number }[]>("SELECT count(*)::int AS n FROM products");
  if ((count?.n ?? 0) > 0 && !values.force) {
    console.error(
      "This database already holds products; pass --skip-import to use them or --force to replace them.",
    );
    process.exit(1);
  }
  const bus = await createProgressBus(db.url);
  const dir = values.data;
  const ops = new DataOps({ db, bus, source: () => new CsvFolderSource(dir) });
  await ops.init();
  const t0 = performance.now();
  await ops.start("reset", null);
  await ops.idle();
  console.log(`Full Reset: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  await ops.close();
  await bus.close();
}

const target = Number(values.target);
const [cat] = await db.prisma.$queryRawUnsafe<{ id: number; name: string; products: number }[]>(
  `WITH RECURSIVE up(category_id, ancestor_id) AS (
     SELECT id, id FROM categories
     UNION
     SELECT up.category_id, c.parent_id FROM up JOIN categories c ON c.id = up.ancestor_id WHERE c.parent_id IS NOT NULL
   )
   SELECT c.id, c.name, count(DISTINCT pc.pid)::int AS products
   FROM categories c JOIN up ON up.ancestor_id = c.id JOIN product_categories pc ON pc.category_id = up.category_id
   GROUP BY c.id, c.name ORDER BY abs(count(DISTINCT pc.pid) - $1), c.id LIMIT 1`,
  target,
);
if (!cat) {
  console.error("No category with products: import a data set first");
  process.exit(1);
}
const [fc] = await db.prisma.$queryRawUnsafe<{ first: string }[]>(
  "SELECT to_char(min(week_start), 'YYYY-MM-DD') AS first FROM product_forecasts",
);
const first = fc!.first;
console.log(`Category ${cat.id} "${cat.name}": ${cat.products} products; forecast from ${first}`);

const scenario = {
  scope: { category_id: cat.id },
  discount_pct: 25,
  starts_on: addDays(first, 7),
  ends_on: addDays(first, 20),
};
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
};
const ms = (n: number) => Math.round(n * 10) / 10;

// The dips after past promotions are measured in the background after each calculation (the
// server starts it when a run completes); here, before the timings, once, and timed on their own.
{
  const t0 = performance.now();
  await refreshPromotionDips(db, (err) => {
    throw err;
  });
  console.log(
    `promotion dips measured in ${((performance.now() - t0) / 1000).toFixed(1)} s (background work after a calculation)`,
  );
}
for (let i = 0; i < 3; i++) await simulateDiscount(db, scenario);
const sims: number[] = [];
let simulated = 0;
for (let i = 0; i < runs; i++) {
  const t0 = performance.now();
  const r = await simulateDiscount(db, scenario);
  sims.push(performance.now() - t0);
  simulated = r.products.length;
}
console.log(
  `simulate 25% off, ${simulated} products: p50 ${ms(quantile(sims, 0.5))} ms, p99 ${ms(quantile(sims, 0.99))} ms, max ${ms(Math.max(...sims))} ms (target p99 ≤ 500 ms)`,
);

const clearance = {
  scope: { category_id: cat.id },
  starts_on: first,
  ends_on: addDays(first, 55),
  target_units: 0,
  max_discount_pct: 50,
};
const clears: number[] = [];
let found: number | null = null;
for (let i = 0; i < Math.max(3, Math.round(runs / 3)); i++) {
  const t0 = performance.now();
  const r = await searchClearance(db, clearance);
  clears.push(performance.now() - t0);
  found = r.discount_pct;
}
console.log(
  `clearance search: p50 ${ms(quantile(clears, 0.5))} ms, max ${ms(Math.max(...clears))} ms (target ≤ 2 s); answer ${found === null ? "none up to 50%" : `${found}%`}`,
);

// Saving the scenario as a promotion (a simulation, the rows, and the promotion layer's refresh of
// the category's planning rows: F(H), reorder quantity, status) and cancelling it (the refresh
// again), R ÷ 3 times each. Promotions may not start in the past: from today at the earliest.
const today = new Date().toISOString().slice(0, 10);
const promoStart = scenario.starts_on > today ? scenario.starts_on : today;
const saves: number[] = [];
const cancels: number[] = [];
for (let i = 0; i < Math.max(3, Math.round(runs / 3)); i++) {
  const t0 = performance.now();
  const created = await createPromotion(
    db,
    {
      ...scenario,
      starts_on: promoStart,
      ends_on: addDays(promoStart, 13),
      name: `bench ${i}`,
      stop_reordering: false,
    },
    null,
  );
  saves.push(performance.now() - t0);
  const t1 = performance.now();
  await cancelPromotion(db, created.id);
  cancels.push(performance.now() - t1);
}
// The bench's promotions are removed again (they were cancelled, so they changed no figure).
await db.prisma.$executeRawUnsafe(
  "DELETE FROM promotions WHERE name LIKE 'bench %' AND cancelled_at IS NOT NULL",
);
console.log(
  `save as a promotion (with the planning refresh of ${simulated} products): p50 ${ms(quantile(saves, 0.5))} ms, max ${ms(Math.max(...saves))} ms; cancel: p50 ${ms(quantile(cancels, 0.5))} ms, max ${ms(Math.max(...cancels))} ms (no target in the issue)`,
);

await db.close();
console.log(
  JSON.stringify({
    promotion_save_p50_ms: ms(quantile(saves, 0.5)),
    promotion_save_max_ms: ms(Math.max(...saves)),
    promotion_cancel_p50_ms: ms(quantile(cancels, 0.5)),
    category_id: cat.id,
    products: simulated,
    simulate_p50_ms: ms(quantile(sims, 0.5)),
    simulate_p99_ms: ms(quantile(sims, 0.99)),
    simulate_max_ms: ms(Math.max(...sims)),
    clearance_p50_ms: ms(quantile(clears, 0.5)),
    clearance_max_ms: ms(Math.max(...clears)),
    clearance_pct: found,
  }),
);
