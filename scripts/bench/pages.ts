// `npm run bench:pages -- [--runs N]`
// A benchmark, not a test. On the PostgreSQL named by DATABASE_URL, which must hold a calculated data
// set (e.g. the one `npm run bench:pipeline` leaves), times the services behind GET /api/dashboard
// and GET /api/small: the first request after a calculation (which computes the figures) and then N
// requests (which reuse them), printing p50 / p99 in milliseconds and a JSON summary last.
import { parseArgs } from "node:util";
import { openDatabase } from "../../server/db/database.ts";
import { getDashboard } from "../../server/modules/dashboard/dashboard.service.ts";
import { getSmall } from "../../server/modules/dashboard/small.service.ts";

const { values } = parseArgs({ options: { runs: { type: "string", default: "200" } } });
const url = process.env.DATABASE_URL;
if (!url) {
  console.error("Set DATABASE_URL to a PostgreSQL database holding a calculated data set");
  process.exit(1);
}
const runs = Number(values.runs);
const db = await openDatabase({ databaseUrl: url, poolSize: 4 });
const admin = { is_admin: true, permissions: [] };

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

async function time(name: string, fn: () => Promise<unknown>) {
  let t = performance.now();
  await fn();
  const first = performance.now() - t;
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    t = performance.now();
    await fn();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  const row = {
    name,
    first_ms: +first.toFixed(1),
    p50_ms: +quantile(ms, 0.5).toFixed(2),
    p99_ms: +quantile(ms, 0.99).toFixed(2),
  };
  console.log(`${name.padEnd(16)} first ${row.first_ms} ms  p50 ${row.p50_ms} ms  p99 ${row.p99_ms} ms`);
  return row;
}

const dashboard = await time("/api/dashboard", () => getDashboard(db, admin));
const small = await time("/api/small", () => getSmall(db));
console.log(JSON.stringify({ runs, dashboard, small }));
await db.close();
