// `npm run bench:modules -- [--only a,b] [--as-of YYYY-MM-DD] [--repeat N] [--statements [--min-cpu S]]`
// A benchmark, not a test. On a database that already holds imported data (e.g. the one
// `bench:pipeline` leaves), runs every calculation module in order on ONE connection inside one
// transaction that is rolled back (nothing changes), and prints each module's wall time and the CPU
// time of the PostgreSQL backend that ran it (from /proc/<pid>/stat: the server must be on this
// machine). CPU time varies far less with the machine's load than wall time does, so this is the
// figure to compare before and after a change to a module. Parallel workers are switched off so
// every statement's CPU is the backend's own; `app` is this process's own CPU over the module (the
// modules that add lines up in the app, e.g. sales_series, spend it there). `--only` prints only the
// named modules (the others still run: later modules read earlier ones' tables). The last line is a
// JSON object. With --statements, each statement (COPYs in and out too) of the printed modules that
// took 0.1 s of the backend's CPU or more (`--min-cpu S`) is listed under its module.
import fs from "node:fs";
import { parseArgs } from "node:util";
import { openDatabase } from "../../server/db/database.ts";
import { CALC_MODULES } from "../../server/jobs/calculate.ts";
import { dropPlainIndexes, RUN_SESSION_SETTINGS } from "../../server/jobs/data-ops.ts";
import { RunShared } from "../../server/jobs/order-lines-pass.ts";
import { snapshotSettings } from "../../server/jobs/planning/context.ts";

const { values } = parseArgs({
  options: {
    only: { type: "string" },
    "as-of": { type: "string", default: "2026-03-01" },
    repeat: { type: "string", default: "1" },
    statements: { type: "boolean", default: false },
    "min-cpu": { type: "string", default: "0.1" },
  },
});
const url = process.env.DATABASE_URL;
if (!url?.startsWith("postgres")) {
  console.error("Set DATABASE_URL to a PostgreSQL database on this machine that holds imported data");
  process.exit(1);
}
const only = values.only ? new Set(values.only.split(",")) : null;
const asOf = new Date(`${values["as-of"]}T23:59:59Z`);
const minCpu = Number(values["min-cpu"]);
const clockTicks = 100; // USER_HZ on Linux

function cpuOf(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / clockTicks; // utime + stime
}

const db = await openDatabase({ databaseUrl: url });
const raw = await db.connect();
const [backend] = await raw.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
const pid = backend!.pid;
let current = "";
/** --statements: each statement of the printed modules with its CPU time, when over --min-cpu. */
function timed<A extends unknown[], R>(fn: (...a: A) => Promise<R>) {
  return async (...a: A): Promise<R> => {
    const cpu0 = cpuOf(pid);
    const r = await fn(...a);
    const cpu = cpuOf(pid) - cpu0;
    if (values.statements && cpu >= minCpu && (!only || only.has(current)))
      console.log(`    ${cpu.toFixed(2).padStart(6)} s  ${String(a[0]).replace(/\s+/g, " ").slice(0, 150)}`);
    return r;
  };
}
/** A COPY out, timed from its start to its last chunk. */
async function* timedCopyOut(sql: string): AsyncGenerator<Buffer> {
  const cpu0 = cpuOf(pid);
  yield* raw.copyOut(sql);
  const cpu = cpuOf(pid) - cpu0;
  if (values.statements && cpu >= minCpu && (!only || only.has(current)))
    console.log(`    ${cpu.toFixed(2).padStart(6)} s  ${sql.replace(/\s+/g, " ").slice(0, 150)}`);
}
const conn = {
  ...raw,
  query: timed(raw.query.bind(raw)),
  exec: timed(raw.exec.bind(raw)),
  execute: timed(raw.execute.bind(raw)),
  copyOut: timedCopyOut,
  copyOutRows: timed(raw.copyOutRows.bind(raw)),
} as typeof raw;
const timedCopyIn = timed((_label: string, o: Parameters<typeof raw.copyCsv>[0]) => raw.copyCsv(o));
conn.copyCsv = (o) => timedCopyIn(`COPY ${o.table} FROM STDIN${o.binary ? " (FORMAT binary)" : " (csv)"}`, o);
const best: Record<string, { wall: number; cpu: number; app: number }> = {};
const appCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
for (let round = 0; round < Number(values.repeat); round++) {
  await conn.exec("BEGIN");
  try {
    // A run's session (its memory, no JIT): with the default 4MB the sorts and hashes of the larger
    // statements spill to disk, which a run's do not. (Undone by the rollback.)
    await conn.exec(`${RUN_SESSION_SETTINGS}; SET max_parallel_workers_per_gather = 0`);
    // As in a run, the modules' tables lose their plain indexes while they are refilled (a run
    // builds them once at its end; the second connection's modules fill new tables without them).
    await dropPlainIndexes(
      raw,
      CALC_MODULES.flatMap((m) => m.tables),
    );
    await snapshotSettings(conn);
    // As in a run, the modules share one pass over the order lines (the first that reads it, the
    // forecast, streams it: its figures include the pass's).
    const shared = new RunShared();
    for (const m of CALC_MODULES) {
      const cpu0 = cpuOf(pid);
      const app0 = appCpu();
      const t0 = performance.now();
      current = m.name;
      await m.run({ conn, asOf, shared });
      const wall = (performance.now() - t0) / 1000;
      const cpu = cpuOf(pid) - cpu0;
      const app = appCpu() - app0;
      if (!best[m.name] || cpu < best[m.name]!.cpu) best[m.name] = { wall, cpu, app };
      if (!only || only.has(m.name))
        console.log(
          `${m.name.padEnd(22)} wall ${wall.toFixed(2).padStart(6)} s   cpu ${cpu.toFixed(2).padStart(6)} s   app ${app.toFixed(2).padStart(6)} s`,
        );
    }
  } finally {
    await conn.exec("ROLLBACK");
  }
}
const total = Object.values(best).reduce((s, x) => s + x.cpu, 0);
console.log(`all modules: cpu ${total.toFixed(2)} s`);
console.log(
  JSON.stringify({
    cpu_s: Math.round(total * 100) / 100,
    modules: Object.fromEntries(Object.entries(best).map(([k, v]) => [k, Math.round(v.cpu * 100) / 100])),
    app: Object.fromEntries(Object.entries(best).map(([k, v]) => [k, Math.round(v.app * 100) / 100])),
  }),
);
await raw.release();
await db.close();
