// `npm run bench:pipeline -- --products N --order-lines M [--po-lines P] [--years Y] [--force]`
// A benchmark, not a test. Generates a data set (in a child process, so it does not count towards
// this process's memory), then on the PostgreSQL named by DATABASE_URL times:
//   (a) the floor: raw COPY of the files into plain tables + one query computing per-product
//       units and revenue over 30/90/365 days;
//   (b) our Full Reset through the real job code.
// Prints rows/s per step and, as its LAST line, one JSON object with the figures.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pipeline as streamPipeline } from "node:stream/promises";
import { parseArgs } from "node:util";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { openDatabase } from "../../server/db/database.ts";
import { migrate } from "../../server/db/migrate.ts";
import { DataOps } from "../../server/jobs/data-ops.ts";
import { createProgressBus } from "../../server/jobs/progress-bus.ts";
import { CsvFolderSource } from "../../server/jobs/source.ts";
import { IMPORTED_TABLES } from "../../server/jobs/tables.ts";

const { values } = parseArgs({
  options: {
    products: { type: "string", default: "50000" },
    "order-lines": { type: "string", default: "3000000" },
    "po-lines": { type: "string", default: "150000" },
    years: { type: "string", default: "2" },
    force: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
  },
});

const url = process.env.DATABASE_URL;
if (!url) {
  console.error(
    "Set DATABASE_URL to the PostgreSQL database to benchmark on (it must be empty, or pass --force)",
  );
  process.exit(1);
}
const products = Number(values.products);
const orderLines = Number(values["order-lines"]);
const poLines = Number(values["po-lines"]);
const years = Number(values.years);
for (const [name, v] of Object.entries({ products, orderLines, poLines, years })) {
  if (!Number.isInteger(v) || v <= 0) {
    console.error(`--${name} must be a positive whole number`);
    process.exit(1);
  }
}

const client = new pg.Client({ connectionString: url });
await client.connect();
const { rows: existing } = await client.query<{ n: string }>(
  `SELECT count(*) AS n FROM information_schema.tables
   WHERE table_schema = 'public' AND table_name IN ('products', 'order_lines')`,
);
if (Number(existing[0]!.n) > 0) {
  const { rows } = await client.query<{ n: string }>(
    "SELECT (SELECT count(*) FROM products) + (SELECT count(*) FROM order_lines) AS n",
  );
  if (Number(rows[0]!.n) > 0 && !values.force) {
    console.error(
      "This database already holds data; refusing to replace it. Use an empty database or pass --force.",
    );
    process.exit(1);
  }
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-pipeline-"));
console.log(
  `Generating ${products} products, ${orderLines} order lines, ${poLines} PO lines over ${years} years…`,
);
const gen = spawnSync(
  path.resolve("node_modules/.bin/tsx"),
  [
    "scripts/demo-data.ts",
    "--out",
    dir,
    "--products",
    String(products),
    "--years",
    String(years),
    "--order-lines",
    String(orderLines),
    "--po-lines",
    String(poLines),
    "--today",
    "2026-03-01",
  ],
  { stdio: ["ignore", "ignore", "inherit"] },
);
if (gen.status !== 0) process.exit(gen.status ?? 1);
/** Records (not lines: a description may hold a newline), counted while streaming the file. */
async function recordCount(file: string): Promise<number> {
  let n = 0;
  let inQuote = false;
  for await (const chunk of fs.createReadStream(path.join(dir, file)) as AsyncIterable<Buffer>) {
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i];
      if (c === 34) inQuote = !inQuote;
      else if (c === 10 && !inQuote) n++;
    }
  }
  return n - 1;
}
const rowsOf: Record<string, number> = {};
for (const def of IMPORTED_TABLES) rowsOf[def.table] = await recordCount(def.file);
const totalRows = Object.values(rowsOf).reduce((a, b) => a + b, 0);
const rate = (rows: number, s: number) =>
  `${Math.round(rows / Math.max(s, 1e-6)).toLocaleString("en-US")} rows/s`;

// (a) The floor.
console.log("\n(a) floor: raw COPY into plain tables + one per-product query");
await client.query("DROP SCHEMA IF EXISTS bench_floor CASCADE; CREATE SCHEMA bench_floor");
let floorStart = performance.now();
for (const def of IMPORTED_TABLES) {
  const fd = fs.openSync(path.join(dir, def.file), "r");
  const head = Buffer.alloc(4096);
  fs.readSync(fd, head, 0, head.length, 0);
  fs.closeSync(fd);
  const header = head.toString("utf8").split("\n", 1)[0]!.trim().split(",");
  const types = new Map(def.columns.map((c) => [c.name, c.sql]));
  await client.query(
    `CREATE TABLE bench_floor.${def.table} (${header.map((h) => `"${h}" ${types.get(h) ?? "text"}`).join(", ")})`,
  );
  const t0 = performance.now();
  const stream = client.query(
    copyFrom(`COPY bench_floor.${def.table} FROM STDIN WITH (FORMAT csv, HEADER true)`),
  );
  await streamPipeline(fs.createReadStream(path.join(dir, def.file)), stream);
  const s = (performance.now() - t0) / 1000;
  console.log(
    `  COPY ${def.file.padEnd(28)} ${String(rowsOf[def.table]).padStart(9)} rows  ${s.toFixed(2)} s  ${rate(rowsOf[def.table]!, s)}`,
  );
}
let t0 = performance.now();
await client.query(`CREATE TEMP TABLE floor_result AS
  SELECT pid,
    SUM(quantity) FILTER (WHERE order_date > now() - interval '30 days') AS units_30d,
    SUM(quantity * price - COALESCE(discount, 0)) FILTER (WHERE order_date > now() - interval '30 days') AS revenue_30d,
    SUM(quantity) FILTER (WHERE order_date > now() - interval '90 days') AS units_90d,
    SUM(quantity * price - COALESCE(discount, 0)) FILTER (WHERE order_date > now() - interval '90 days') AS revenue_90d,
    SUM(quantity) FILTER (WHERE order_date > now() - interval '365 days') AS units_365d,
    SUM(quantity * price - COALESCE(discount, 0)) FILTER (WHERE order_date > now() - interval '365 days') AS revenue_365d
  FROM bench_floor.order_lines WHERE status = 'completed' GROUP BY pid`);
console.log(
  `  per-product query                                  ${((performance.now() - t0) / 1000).toFixed(2)} s`,
);
const floorS = (performance.now() - floorStart) / 1000;
await client.query("DROP SCHEMA bench_floor CASCADE");
await client.end();
console.log(`  floor total ${floorS.toFixed(2)} s`);

// (b) Our Full Reset, through the real job code, in this process.
console.log("\n(b) Full Reset through the job code");
const db = await openDatabase({ databaseUrl: url, poolSize: 4 });
await migrate(db);
const bus = await createProgressBus(url);
const ops = new DataOps({ db, bus, source: () => new CsvFolderSource(dir) });
await ops.init();
floorStart = 0;
t0 = performance.now();
const { run_id } = await ops.start("reset", null);
await ops.idle();
const resetS = (performance.now() - t0) / 1000;
const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
const run = await db.prisma.dataRun.findUniqueOrThrow({ where: { id: run_id } });
const history = await db.prisma.importHistory.findFirstOrThrow({ where: { runId: run_id } });
const calc = await db.prisma.calculateHistory.findFirst({ where: { runId: run_id } });
const steps = [
  ...((
    history.additionalInfo as { completed_steps?: { name: string; duration: number; rowsAffected: number }[] }
  )?.completed_steps ?? []),
  ...((
    calc?.additionalInfo as { completed_steps?: { name: string; duration: number; rowsAffected: number }[] }
  )?.completed_steps ?? []),
];
for (const s of steps) {
  console.log(
    `  ${s.name.padEnd(36)} ${String(s.rowsAffected).padStart(9)} rows  ${s.duration.toFixed(2)} s  ${rate(s.rowsAffected, s.duration)}`,
  );
}
console.log(
  `  Full Reset total ${resetS.toFixed(2)} s (${rate(totalRows, resetS)} overall), status ${run.status}`,
);
await ops.close();
await bus.close();
await db.close();
if (!values.keep) fs.rmSync(dir, { recursive: true, force: true });
if (run.status !== "completed") {
  console.error(`Full Reset did not complete: ${run.error}`);
  process.exit(1);
}
console.log(
  JSON.stringify({
    products,
    order_lines: rowsOf.order_lines,
    floor_s: Math.round(floorS * 100) / 100,
    full_reset_s: Math.round(resetS * 100) / 100,
    ratio: Math.round((resetS / floorS) * 100) / 100,
    peak_rss_mb: peakRssMb,
  }),
);
