// `DATABASE_URL=… npm run bench:forecasting [-- --rounds N]`
// A benchmark, not a test. Over a database that holds a calculated data set (e.g. the one
// `npm run bench:pipeline` leaves behind), times the Forecasting page's service calls as the page and
// scripts make them: the grid (50 rows) under several filters and sorts, p50 and p99; a product's
// detail; the preview of a category override spread to its products (the category whose product
// count is nearest 5,000); the accuracy table; each exceptions list. Prints one JSON object as its
// last line.
import { performance } from "node:perf_hooks";
import { openDatabase } from "../../server/db/database.ts";
import { migrate } from "../../server/db/migrate.ts";
import {
  clearForecastCaches,
  forecastAccuracy,
  forecastCalendar,
  forecastExceptions,
  forecastProduct,
  listForecastRows,
  previewOverride,
} from "../../server/modules/forecasting/forecasting.service.ts";
import { EXCEPTION_KINDS, type ForecastListInput } from "../../shared/forecasting.ts";

const url = process.env.DATABASE_URL;
if (!url) throw new Error("DATABASE_URL is required");
const roundsArg = process.argv.indexOf("--rounds");
const rounds = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 20;

const db = await openDatabase({ databaseUrl: url, poolSize: 4 });
await migrate(db);
const q = <T>(sql: string) => db.prisma.$queryRawUnsafe<T[]>(sql);

async function time(
  fn: () => Promise<unknown>,
  n = rounds,
): Promise<{ p50: number; p99: number; max: number }> {
  await fn(); // warm
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  const at = (p: number) => Math.round(ms[Math.min(ms.length - 1, Math.floor(p * ms.length))]! * 10) / 10;
  return { p50: at(0.5), p99: at(0.99), max: at(1) };
}

const cal = await forecastCalendar(db);
if (!cal) throw new Error("No forecast in this database: run a Full Reset first");
const [vendor] = await q<{ id: number }>(
  "SELECT vendor_id AS id FROM products WHERE vendor_id IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC LIMIT 1",
);
const [brand] = await q<{ id: number }>(
  "SELECT brand_id AS id FROM products WHERE brand_id IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC LIMIT 1",
);
// The category whose tree (it and every category under it, as the grid's filter and an override's
// scope read it) holds the number of forecast products nearest 5,000: the spread target.
const [category] = await q<{ id: number; n: number }>(
  `WITH RECURSIVE walk AS (
     SELECT id AS category_id, id AS ancestor, 0 AS depth FROM categories
     UNION ALL
     SELECT w.category_id, c.parent_id, w.depth + 1 FROM walk w JOIN categories c ON c.id = w.ancestor
     WHERE c.parent_id IS NOT NULL AND w.depth < 100
   )
   SELECT walk.ancestor AS id, count(DISTINCT pc.pid)::int AS n
   FROM product_categories pc JOIN walk ON walk.category_id = pc.category_id JOIN product_forecasts f ON f.pid = pc.pid
   GROUP BY 1 ORDER BY abs(count(DISTINCT pc.pid) - 5000), 1 LIMIT 1`,
);
const pids = (
  await q<{ pid: number }>("SELECT pid FROM product_forecasts ORDER BY total_91d DESC LIMIT 20")
).map((r) => r.pid);

const grids: [string, ForecastListInput][] = [
  ["default", {}],
  ["vendor", { vendorId: vendor?.id }],
  ["brand + abc A", { brandId: brand?.id, abc: "A" }],
  ["category", { categoryId: category?.id }],
  ["search", { search: "blue" }],
  ["big error, by error", { bigError: true, sort: "error" }],
  ["by error, ascending", { sort: "error", dir: "asc" }],
  ["by bias", { sort: "bias" }],
  ["by units, ascending", { sort: "forecast_units", dir: "asc" }],
  ["status reorder, method seasonal", { status: "reorder", method: "seasonal" }],
  ["has override", { hasOverride: true }],
  ["page 100", { page: 100 }],
  ["sort by change", { sort: "change" }],
  ["categories", { level: "category" }],
  ["vendors", { level: "vendor" }],
];
const out: Record<string, unknown> = { as_of: cal.d0 };
for (const [name, input] of grids) {
  // Pages are kept per calculation: the first request after one is timed on its own (cache cleared).
  clearForecastCaches(db);
  const t0 = performance.now();
  await listForecastRows(db, { pageSize: 50, ...input });
  const first = Math.round((performance.now() - t0) * 10) / 10;
  const r = await time(() => listForecastRows(db, { pageSize: 50, ...input }));
  console.log(
    `grid ${name}: p50 ${r.p50} ms, p99 ${r.p99} ms (first request after a calculation ${first} ms)`,
  );
  out[`grid ${name}`] = { ...r, first };
}
// Group rows are kept per calculation: time their first computation after one too (the same budget).
for (const level of ["category", "brand", "vendor"] as const) {
  const ms: number[] = [];
  for (let k = 0; k < 5; k++) {
    clearForecastCaches(db);
    const t0 = performance.now();
    await listForecastRows(db, { pageSize: 50, level });
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  const r = { p50: Math.round(ms[2]! * 10) / 10, max: Math.round(ms[4]! * 10) / 10 };
  console.log(`grid ${level} rows, first computation after a calculation: p50 ${r.p50} ms, max ${r.max} ms`);
  out[`grid ${level} rows, first computation`] = r;
}
let i = 0;
const detail = await time(() => forecastProduct(db, pids[i++ % pids.length]!));
console.log(`product detail: p50 ${detail.p50} ms, p99 ${detail.p99} ms`);
out.detail = detail;
// Many products, each read once (its first request): every 250th by forecast volume, top sellers
// to products without sales, so products with a stored weekly series and products summed from their
// order lines both count.
const sampled = (
  await q<{ pid: number }>(
    "SELECT pid FROM (SELECT pid, row_number() OVER (ORDER BY total_91d DESC, pid) AS r FROM product_forecasts) x WHERE r % 250 = 1",
  )
).map((r) => r.pid);
let k = 0;
const detailMany = await time(() => forecastProduct(db, sampled[k++ % sampled.length]!), sampled.length - 1);
console.log(
  `product detail, ${sampled.length} products each once: p50 ${detailMany.p50} ms, p99 ${detailMany.p99} ms`,
);
out.detail_many = { products: sampled.length, ...detailMany };
if (category) {
  const spread = await time(
    () =>
      previewOverride(db, {
        scope: { category_id: category.id },
        weeks: cal.weeks.map((week_start) => ({ week_start, pct: 20 })),
        reason: "bench",
      }),
    5,
  );
  console.log(
    `category override spread to ${category.n} products (category ${category.id} and its tree; preview): p50 ${spread.p50} ms, max ${spread.max} ms`,
  );
  out.spread = { products: category.n, ...spread };
}
const accuracy = await time(() => forecastAccuracy(db, { group: "category" }));
console.log(`accuracy table: p50 ${accuracy.p50} ms, p99 ${accuracy.p99} ms`);
out.accuracy = accuracy;
for (const kind of EXCEPTION_KINDS) {
  // Kept per calculation as the grid's pages: the first request after one is timed on its own, and
  // a later page (page 3, not kept yet) as well.
  clearForecastCaches(db);
  const t0 = performance.now();
  await forecastExceptions(db, { kind });
  const first = Math.round((performance.now() - t0) * 10) / 10;
  const t1 = performance.now();
  await forecastExceptions(db, { kind, page: 3 });
  const page3 = Math.round((performance.now() - t1) * 10) / 10;
  const r = await time(() => forecastExceptions(db, { kind }));
  console.log(
    `exceptions ${kind}: p50 ${r.p50} ms, p99 ${r.p99} ms (first request after a calculation ${first} ms, then page 3 ${page3} ms)`,
  );
  out[`exceptions ${kind}`] = { ...r, first, page3 };
}
await db.close();
console.log(JSON.stringify(out));
