// `npm run bench:pipeline -- --products N --order-lines M [--po-lines P] [--years Y] [--force]
//   [--data DIR] [--keep] [--core] [--repeat N]`
// A benchmark, not a test. Generates a data set (in a child process, so it does not count towards
// this process's memory; --data reuses a folder written before, e.g. with --keep; both the floor and
// the run calculate as of the data's last day, 2026-03-01, the day the bench generates for), then on the
// PostgreSQL named by DATABASE_URL times:
//   (a) the floor: raw COPY of the files into plain tables + one query computing per-product
//       units and revenue over 30/90/365 days;
//   (b) our Full Reset through the real job code (--core: with only the core modules,
//       product_metrics and product_search, not the planning engine's).
// Prints rows/s per step, each calculation module's time and, as its LAST line, one JSON object:
//   products, order_lines, floor_s, full_reset_s, ratio (full_reset_s / floor_s), peak_rss_mb,
//   calc_s (the calculation phase: the modules' steps together), modules ({name: seconds}),
//   ratio_core ((full_reset_s − the planning modules' seconds) / floor_s: the import and its core modules),
//   and on Linux floor_cpu_s, full_reset_cpu_s (the machine's busy CPU seconds over each, the least
//   over the rounds: steadier than wall time on a shared machine) and cpu_ratio.
// --repeat N times (a) and (b) N times each in turns and reports the fastest of each, adding
//   floor_range_s and full_reset_range_s: on a shared machine the fastest is the least disturbed.
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
import { CALC_MODULES } from "../../server/jobs/calculate.ts";
import { DataOps } from "../../server/jobs/data-ops.ts";
import { PLANNING_MODULES } from "../../server/jobs/planning/index.ts";
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
    data: { type: "string" },
    core: { type: "boolean", default: false },
    repeat: { type: "string", default: "1" },
  },
});

/**
 * The generated data's last day, and the moment both the floor and our run calculate for: the end of
 * that day, so the 30/90/365-day windows hold the data's most recent sales as they would live.
 */
const DATA_TODAY = "2026-03-01";
const AS_OF = new Date(`${DATA_TODAY}T23:59:59Z`);

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
const repeat = Number(values.repeat);
for (const [name, v] of Object.entries({ products, orderLines, poLines, years, repeat })) {
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

const dir = values.data
  ? path.resolve(values.data)
  : fs.mkdtempSync(path.join(os.tmpdir(), "bench-pipeline-"));
if (values.data) console.log(`Using the data set in ${dir}`);
else {
  console.log(
    `Generating ${products} products, ${orderLines} order lines, ${poLines} PO lines over ${years} years…`,
  );
  generate();
}
function generate() {
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
      DATA_TODAY,
    ],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  if (gen.status !== 0) process.exit(gen.status ?? 1);
}
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
const round2 = (n: number) => Math.round(n * 100) / 100;

/**
 * The machine's busy CPU seconds so far (user, nice, system, irq, softirq of every core, from
 * /proc/stat): over a phase, the CPU it took in this process and the database's backends together,
 * which varies far less with other work on the machine than its wall time. Null off Linux.
 */
function machineCpuS(): number | null {
  try {
    const [user, nice, system, , , irq, softirq] = fs
      .readFileSync("/proc/stat", "utf8")
      .split("\n", 1)[0]!
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    return (user! + nice! + system! + irq! + softirq!) / 100; // USER_HZ
  } catch {
    return null;
  }
}
const cpuSince = (c0: number | null) => {
  const c = machineCpuS();
  return c0 === null || c === null ? null : c - c0;
};
const rate = (rows: number, s: number) =>
  `${Math.round(rows / Math.max(s, 1e-6)).toLocaleString("en-US")} rows/s`;

// (a) The floor.
async function runFloor(): Promise<{ s: number; cpuS: number | null }> {
  console.log("\n(a) floor: raw COPY into plain tables + one per-product query");
  await client.query("DROP SCHEMA IF EXISTS bench_floor CASCADE; CREATE SCHEMA bench_floor");
  const floorStart = performance.now();
  const cpu0 = machineCpuS();
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
  const t0 = performance.now();
  // Window starts as parameters (the data's day, like our run's asOf): no per-row date arithmetic.
  const since = (days: number) => new Date(AS_OF.getTime() - days * 86_400_000);
  await client.query(
    `CREATE TEMP TABLE floor_result AS
    SELECT pid,
      SUM(quantity) FILTER (WHERE order_date > $1) AS units_30d,
      SUM(quantity * price - COALESCE(discount, 0)) FILTER (WHERE order_date > $1) AS revenue_30d,
      SUM(quantity) FILTER (WHERE order_date > $2) AS units_90d,
      SUM(quantity * price - COALESCE(discount, 0)) FILTER (WHERE order_date > $2) AS revenue_90d,
      SUM(quantity) FILTER (WHERE order_date > $3) AS units_365d,
      SUM(quantity * price - COALESCE(discount, 0)) FILTER (WHERE order_date > $3) AS revenue_365d
    FROM bench_floor.order_lines WHERE status = 'completed' AND order_date <= $4 GROUP BY pid`,
    [since(30), since(90), since(365), AS_OF],
  );
  console.log(
    `  per-product query                                  ${((performance.now() - t0) / 1000).toFixed(2)} s`,
  );
  const floorS = (performance.now() - floorStart) / 1000;
  const cpuS = cpuSince(cpu0);
  await client.query("DROP SCHEMA bench_floor CASCADE; DROP TABLE floor_result");
  console.log(
    `  floor total ${floorS.toFixed(2)} s${cpuS === null ? "" : `, machine CPU ${cpuS.toFixed(2)} s`}`,
  );
  return { s: floorS, cpuS };
}

// (b) Our Full Reset, through the real job code, in this process.
const db = await openDatabase({ databaseUrl: url, poolSize: 4 });
await migrate(db);
const bus = await createProgressBus(url);
// --core: the core calculation modules only (CALC_MODULES without the planning engine's and the
// dashboards' series).
const planningNames = new Set([...PLANNING_MODULES.map((m) => m.name), "stock_series", "sales_series"]);
const modules = values.core ? CALC_MODULES.filter((m) => !planningNames.has(m.name)) : CALC_MODULES;
const ops = new DataOps({ db, bus, source: () => new CsvFolderSource(dir), modules, asOf: () => AS_OF });
await ops.init();

interface ResetResult {
  resetS: number;
  /** The machine's busy CPU seconds over the Full Reset (null off Linux). */
  cpuS: number | null;
  moduleSeconds: Record<string, number>;
  calcS: number;
  planningS: number;
}

async function runReset(): Promise<ResetResult> {
  console.log(`\n(b) Full Reset through the job code${values.core ? " (--core: core modules only)" : ""}`);
  const t0 = performance.now();
  const cpu0 = machineCpuS();
  const { run_id } = await ops.start("reset", null);
  await ops.idle();
  const resetS = (performance.now() - t0) / 1000;
  const cpuS = cpuSince(cpu0);
  const run = await db.prisma.dataRun.findUniqueOrThrow({ where: { id: run_id } });
  const history = await db.prisma.importHistory.findFirstOrThrow({ where: { runId: run_id } });
  const calc = await db.prisma.calculateHistory.findFirst({ where: { runId: run_id } });
  type Step = { name: string; duration: number; rowsAffected: number };
  const importSteps = (history.additionalInfo as { completed_steps?: Step[] })?.completed_steps ?? [];
  const calcSteps = (calc?.additionalInfo as { completed_steps?: Step[] })?.completed_steps ?? [];
  for (const s of [...importSteps, ...calcSteps]) {
    console.log(
      `  ${s.name.padEnd(36)} ${String(s.rowsAffected).padStart(9)} rows  ${s.duration.toFixed(2)} s  ${rate(s.rowsAffected, s.duration)}`,
    );
  }
  const beside = (
    history.additionalInfo as {
      details?: {
        beside?: {
          table: string;
          load_s: number;
          references_s: number;
          index_s: number;
          modules_s?: Record<string, number>;
        };
      };
    }
  )?.details?.beside;
  if (beside) {
    console.log(
      `  (beside the run, on a second connection: ${beside.table} loaded in ${beside.load_s.toFixed(2)} s, its references checked in ${beside.references_s.toFixed(2)} s, its indexes built in ${beside.index_s.toFixed(2)} s)`,
    );
    for (const [name, s] of Object.entries(beside.modules_s ?? {}))
      console.log(`  (beside the run, on the second connection: module ${name} in ${s.toFixed(2)} s)`);
  }
  console.log(
    `  Full Reset total ${resetS.toFixed(2)} s (${rate(totalRows, resetS)} overall)${cpuS === null ? "" : `, machine CPU ${cpuS.toFixed(2)} s`}, status ${run.status}`,
  );
  if (run.status !== "completed") {
    console.error(`Full Reset did not complete: ${run.error}`);
    process.exit(1);
  }
  // The calculation phase (the run's calculation steps: its wall time on the run's connection) and
  // each module's part of it. A module run beside (on the second connection) counts with the time
  // it took there; its step on the run's connection is the wait for it.
  const stepSeconds: Record<string, number> = {};
  for (const s of calcSteps) {
    const name = /^Calculate (.+)$/.exec(s.name)?.[1];
    if (name) stepSeconds[name] = Math.round(((stepSeconds[name] ?? 0) + s.duration) * 1000) / 1000;
  }
  const moduleSeconds = { ...stepSeconds, ...beside?.modules_s };
  const calcS = calcSteps.reduce((a, s) => a + s.duration, 0);
  const planningS = Object.entries(stepSeconds)
    .filter(([name]) => planningNames.has(name))
    .reduce((a, [, s]) => a + s, 0);
  console.log("  Calculation modules:");
  for (const [name, s] of Object.entries(moduleSeconds)) {
    const away = beside?.modules_s?.[name] !== undefined;
    console.log(
      `    ${name.padEnd(34)} ${s.toFixed(2)} s${planningNames.has(name) ? "  (planning)" : ""}${away ? `  (beside; the run waited ${stepSeconds[name]?.toFixed(2)} s for it)` : ""}`,
    );
  }
  for (const s of calcSteps.filter((c) => !c.name.startsWith("Calculate ")))
    console.log(`    ${`(${s.name})`.padEnd(34)} ${s.duration.toFixed(2)} s`);
  console.log(
    `    calculation phase ${calcS.toFixed(2)} s, of which planning modules ${planningS.toFixed(2)} s`,
  );
  return { resetS, cpuS, moduleSeconds, calcS, planningS };
}

// --repeat N: floor and Full Reset N times each, in turns; the figures are the fastest of each
// (the least disturbed by other work on the machine), with the ranges beside them.
const floorRuns: { s: number; cpuS: number | null }[] = [];
const resets: ResetResult[] = [];
for (let i = 0; i < repeat; i++) {
  if (repeat > 1) console.log(`\n=== round ${i + 1} of ${repeat}`);
  floorRuns.push(await runFloor());
  resets.push(await runReset());
}
await client.end();
const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
await ops.close();
await bus.close();
await db.close();
if (!values.keep && !values.data) fs.rmSync(dir, { recursive: true, force: true });
const floors = floorRuns.map((f) => f.s);
const floorS = Math.min(...floors);
// The least CPU each took over the rounds (the steadier comparison on a shared machine).
const leastCpu = (xs: (number | null)[]) =>
  xs.every((x) => x !== null) ? round2(Math.min(...(xs as number[]))) : null;
const floorCpuS = leastCpu(floorRuns.map((f) => f.cpuS));
const resetCpuS = leastCpu(resets.map((r) => r.cpuS));
const best = resets.reduce((a, b) => (b.resetS < a.resetS ? b : a));
const resetS = best.resetS;
const range = (xs: number[]) => [round2(Math.min(...xs)), round2(Math.max(...xs))];
if (repeat > 1) {
  console.log(
    `\nfastest of ${repeat}: floor ${floorS.toFixed(2)} s (${range(floors).join("–")}), Full Reset ${resetS.toFixed(2)} s (${range(resets.map((r) => r.resetS)).join("–")})`,
  );
}
console.log(
  JSON.stringify({
    products: values.data ? rowsOf.products : products,
    order_lines: rowsOf.order_lines,
    floor_s: round2(floorS),
    full_reset_s: round2(resetS),
    ratio: round2(resetS / floorS),
    peak_rss_mb: peakRssMb,
    calc_s: round2(best.calcS),
    modules: Object.fromEntries(Object.entries(best.moduleSeconds).map(([n, s]) => [n, round2(s)])),
    ratio_core: round2((resetS - best.planningS) / floorS),
    ...(floorCpuS !== null && resetCpuS !== null
      ? { floor_cpu_s: floorCpuS, full_reset_cpu_s: resetCpuS, cpu_ratio: round2(resetCpuS / floorCpuS) }
      : {}),
    ...(repeat > 1
      ? { floor_range_s: range(floors), full_reset_range_s: range(resets.map((r) => r.resetS)) }
      : {}),
  }),
);
