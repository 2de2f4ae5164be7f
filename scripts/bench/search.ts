// `npm run bench:search -- [--data DIR] [--products N] [--order-lines M] [--runs R] [--skip-import] [--force]`
// A benchmark, not a test. On the PostgreSQL named by DATABASE_URL: imports a demo data set with a
// Full Reset through the job code (generated unless --data names a folder of CSV exports; skipped
// with --skip-import when the database already holds one), then times the product search of the
// template screen (the service function the REST route and the tRPC procedure both call) over a
// mix of queries drawn from the data, and prints p50/p99 per kind and overall. The last line is
// one JSON object with the figures.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { openDatabase } from "../../server/db/database.ts";
import { migrate } from "../../server/db/migrate.ts";
import { DataOps } from "../../server/jobs/data-ops.ts";
import { createProgressBus } from "../../server/jobs/progress-bus.ts";
import { CsvFolderSource } from "../../server/jobs/source.ts";
import { searchProducts } from "../../server/modules/templates/templates.service.ts";
import { type ProductSearchInput, ProductSearchInputSchema } from "../../shared/templates.ts";

const { values } = parseArgs({
  options: {
    data: { type: "string" },
    products: { type: "string", default: "50000" },
    "order-lines": { type: "string", default: "3000000" },
    years: { type: "string", default: "2" },
    today: { type: "string", default: "2026-03-01" },
    runs: { type: "string", default: "30" },
    "skip-import": { type: "boolean", default: false },
    force: { type: "boolean", default: false },
  },
});

const url = process.env.DATABASE_URL;
if (!url) {
  console.error("Set DATABASE_URL to the PostgreSQL database to benchmark on");
  process.exit(1);
}
const runs = Number(values.runs);

const db = await openDatabase({ databaseUrl: url, poolSize: 4 });
await migrate(db);
const productCount = async () =>
  Number((await db.prisma.$queryRaw<{ n: bigint }[]>`SELECT count(*) AS n FROM products`)[0]!.n);

if (!values["skip-import"]) {
  if ((await productCount()) > 0 && !values.force) {
    console.error(
      "This database already holds products; pass --skip-import to use them or --force to replace them.",
    );
    process.exit(1);
  }
  let dir = values.data;
  let generated = false;
  if (!dir) {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-search-"));
    generated = true;
    console.log(`Generating ${values.products} products, ${values["order-lines"]} order lines…`);
    const gen = spawnSync(
      path.resolve("node_modules/.bin/tsx"),
      [
        "scripts/demo-data.ts",
        "--out",
        dir,
        "--products",
        values.products!,
        "--years",
        values.years!,
        "--order-lines",
        values["order-lines"]!,
        "--today",
        values.today!,
      ],
      { stdio: "inherit" },
    );
    if (gen.status !== 0) process.exit(gen.status ?? 1);
  }
  console.log(`Importing ${dir} with a Full Reset…`);
  const bus = await createProgressBus(url);
  const ops = new DataOps({ db, bus, source: () => new CsvFolderSource(dir) });
  await ops.init();
  const t0 = performance.now();
  const { run_id } = await ops.start("reset", null);
  await ops.idle();
  const run = await db.prisma.dataRun.findUniqueOrThrow({ where: { id: run_id } });
  await ops.close();
  await bus.close();
  if (generated) fs.rmSync(dir, { recursive: true, force: true });
  if (run.status !== "completed") {
    console.error(`Full Reset did not complete: ${run.error}`);
    process.exit(1);
  }
  console.log(`  imported in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
const products = await productCount();
console.log(`${products} products`);

// The query mix, drawn from the data so it finds real products.
const sample = await db.prisma.$queryRaw<
  { pid: number; title: string; sku: string | null; barcode: string | null; brand_id: number | null }[]
>`SELECT pid, title, sku, barcode, brand_id FROM products ORDER BY md5(pid::text) LIMIT 40`;
const words = sample.flatMap((p) => p.title.split(/[\s-]+/).filter((w) => /^[A-Za-z]{4,}$/.test(w)));
const pick = <T>(list: readonly T[], i: number): T => list[i % list.length]!;
const kinds: Record<string, ProductSearchInput[]> = {
  "common word": [0, 1, 2, 3, 4].map((i) => ({ q: pick(words, i * 7) })),
  "two words": [0, 1, 2, 3, 4].map((i) => ({ q: pick(sample, i).title.split(" ").slice(0, 2).join(" ") })),
  "full title": [0, 1, 2, 3, 4].map((i) => ({ q: pick(sample, i + 5).title })),
  "sku prefix": [0, 1, 2, 3, 4].map((i) => ({ q: (pick(sample, i + 10).sku ?? "X").slice(0, 6) })),
  "exact sku": [0, 1, 2, 3, 4].map((i) => ({ q: pick(sample, i + 15).sku ?? "X" })),
  barcode: [0, 1, 2, 3, 4].map((i) => ({ q: pick(sample, i + 20).barcode ?? "0" })),
  pid: [0, 1, 2, 3, 4].map((i) => ({ q: String(pick(sample, i + 25).pid) })),
  "one letter (capped)": [{ q: "a" }, { q: "e" }, { q: "s" }],
  "no match": [{ q: "zzqxv" }, { q: "nothing-like-this" }],
  "word + company": [0, 1, 2].map((i) => ({
    q: pick(words, i * 3),
    company: String(pick(sample, i).brand_id ?? 1),
  })),
  "* + company": [0, 1, 2].map((i) => ({ q: "*", company: String(pick(sample, i + 30).brand_id ?? 1) })),
  "* + last month": [{ q: "*", dateRange: "1month" }],
  "* + last year (capped)": [{ q: "*", dateRange: "1year" }],
  "word + last 6 months": [0, 1].map((i) => ({ q: pick(words, i * 5 + 1), dateRange: "6months" as const })),
};

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;

// Warm-up: one pass of every query.
for (const queries of Object.values(kinds))
  for (const q of queries) await searchProducts(db, ProductSearchInputSchema.parse(q));

const all: number[] = [];
const perKind: Record<string, { p50: number; p99: number; rows: number }> = {};
console.log(`\n${"kind".padEnd(26)} ${"rows".padStart(6)} ${"p50 ms".padStart(8)} ${"p99 ms".padStart(8)}`);
for (const [kind, queries] of Object.entries(kinds)) {
  const times: number[] = [];
  let rows = 0;
  for (let r = 0; r < runs; r++) {
    for (const q of queries) {
      const input = ProductSearchInputSchema.parse(q);
      const t0 = performance.now();
      const found = await searchProducts(db, input);
      times.push(performance.now() - t0);
      rows = Math.max(rows, found.length);
    }
  }
  all.push(...times);
  times.sort((a, b) => a - b);
  perKind[kind] = { p50: percentile(times, 50), p99: percentile(times, 99), rows };
  console.log(
    `${kind.padEnd(26)} ${String(rows).padStart(6)} ${percentile(times, 50).toFixed(1).padStart(8)} ${percentile(times, 99).toFixed(1).padStart(8)}`,
  );
}
all.sort((a, b) => a - b);
const p50 = percentile(all, 50);
const p99 = percentile(all, 99);
console.log(
  `\noverall: ${all.length} searches, p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (target p99 ≤ 50 ms)`,
);
await db.close();
console.log(
  JSON.stringify({
    products,
    searches: all.length,
    p50_ms: Math.round(p50 * 10) / 10,
    p99_ms: Math.round(p99 * 10) / 10,
    kinds: Object.fromEntries(
      Object.entries(perKind).map(([k, v]) => [
        k,
        { rows: v.rows, p50_ms: Math.round(v.p50 * 10) / 10, p99_ms: Math.round(v.p99 * 10) / 10 },
      ]),
    ),
  }),
);
