// `npm run bench:load -- [--products N] [--order-lines M] [--po-lines P] [--years Y] [--data DIR]
//   [--keep] [--force] [--duration S] [--connections C] [--rate R] [--users U]`
//
// Reads while an import runs. Starts the server (`server/main.ts`, its own process) on loopback over
// the PostgreSQL at DATABASE_URL (an empty database, or --force), imports the demo set (default the
// large one: 50,000 products, 3M order lines) with a Full Reset, signs in U users (default 50), and
// sends the list pages' mix — the products list (tRPC metrics.products, varied pages and sorts),
// product settings (GET /config/products), templates (GET /api/templates) and GET /csv/status — with
// autocannon from this process, in two phases:
//   1. idle: C connections (default 50) back to back for S seconds (default 30);
//   2. during back-to-back Full Resets: a fixed R requests/s (default 50) over C connections, for at
//      least S seconds and until the last reset started has ended;
// and a Full Reset alone between them. Prints requests/s, p50 and p99 per phase, each reset's time,
// and a JSON summary as its last line. Targets: idle ≥ 400 req/s and p99 ≤ 250 ms; during the
// resets p99 ≤ 1 s, and a reset under load ≤ 1.25 × the reset alone.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import pg from "pg";

const { values } = parseArgs({
  options: {
    products: { type: "string", default: "50000" },
    "order-lines": { type: "string", default: "3000000" },
    "po-lines": { type: "string", default: "150000" },
    years: { type: "string", default: "2" },
    data: { type: "string" },
    keep: { type: "boolean", default: false },
    force: { type: "boolean", default: false },
    duration: { type: "string", default: "30" },
    connections: { type: "string", default: "50" },
    rate: { type: "string", default: "50" },
    users: { type: "string", default: "50" },
  },
});

const num = (name: keyof typeof values) => {
  const v = Number(values[name]);
  if (!Number.isInteger(v) || v <= 0) {
    console.error(`--${name} must be a positive whole number`);
    process.exit(1);
  }
  return v;
};
const products = num("products");
const orderLines = num("order-lines");
const poLines = num("po-lines");
const years = num("years");
const duration = num("duration");
const connections = num("connections");
const rate = num("rate");
const userCount = num("users");

const url = process.env.DATABASE_URL;
if (!url) {
  console.error(
    "Set DATABASE_URL to the PostgreSQL database to benchmark on (it must be empty, or pass --force)",
  );
  process.exit(1);
}
const DATA_TODAY = "2026-03-01";
const ADMIN_PASSWORD = "bench-admin-password";
const USER_PASSWORD = "bench-user-password";

const db = new pg.Client({ connectionString: url, application_name: "bench-load" });
await db.connect();
{
  const { rows } = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = 'public' AND table_name = 'products'`,
  );
  if (Number(rows[0]!.n) > 0) {
    const { rows: p } = await db.query<{ n: string }>("SELECT count(*) AS n FROM products");
    if (Number(p[0]!.n) > 0 && !values.force) {
      console.error(
        "This database already holds data; refusing to replace it. Use an empty database or pass --force.",
      );
      process.exit(1);
    }
  }
}

const dir = values.data ? path.resolve(values.data) : fs.mkdtempSync(path.join(os.tmpdir(), "bench-load-"));
if (values.data) console.log(`Using the data set in ${dir}`);
else {
  console.log(
    `Generating ${products} products, ${orderLines} order lines, ${poLines} PO lines over ${years} years…`,
  );
  const gen = spawnSync(
    path.resolve("node_modules/.bin/tsx"),
    [
      "scripts/demo-data.ts",
      ...["--out", dir, "--products", String(products), "--years", String(years)],
      ...["--order-lines", String(orderLines), "--po-lines", String(poLines), "--today", DATA_TODAY],
    ],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  if (gen.status !== 0) process.exit(gen.status ?? 1);
}

// ---------------------------------------------------------------------------------------------
// The server, in its own process, on loopback

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const server: ChildProcess = spawn(path.resolve("node_modules/.bin/tsx"), ["server/main.ts"], {
  env: {
    ...process.env,
    PORT: String(port),
    HOST: "127.0.0.1",
    DATABASE_URL: url,
    SOURCE_DIR: dir,
    DEMO_DATA: "0",
    ADMIN_USERNAME: "admin",
    ADMIN_PASSWORD,
    LOG_LEVEL: "warn",
    CLIENT_DIST: "/nonexistent",
    NODE_ENV: "production",
  },
  stdio: ["ignore", "inherit", "inherit"],
});
let stopping = false;
server.once("exit", (code) => {
  if (!stopping) {
    console.error(`The server exited (${code})`);
    process.exit(1);
  }
});
async function finish(code: number) {
  stopping = true;
  server.kill("SIGTERM");
  await new Promise((r) => server.once("exit", r));
  await db.end();
  if (!values.data && !values.keep) fs.rmSync(dir, { recursive: true, force: true });
  else if (values.keep) console.log(`Kept the data set in ${dir}`);
  process.exit(code);
}

for (let i = 0; ; i++) {
  try {
    if ((await fetch(`${base}/readyz`)).ok) break;
  } catch {}
  if (i > 600) {
    console.error("The server did not come up");
    await finish(1);
  }
  await new Promise((r) => setTimeout(r, 200));
}

async function api<T>(
  method: string,
  p: string,
  token?: string,
  body?: unknown,
): Promise<{ status: number; json: T }> {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as T };
}

const admin = (
  await api<{ token: string }>("POST", "/auth-inv/login", undefined, {
    username: "admin",
    password: ADMIN_PASSWORD,
  })
).json.token;

/** Starts a Full Reset and waits for its end; answers its time in seconds, as the run recorded it. */
async function fullReset(): Promise<number> {
  const started = await api<{ run_id: number }>("POST", "/csv/full-reset", admin);
  if (started.status !== 200) throw new Error(`Full Reset refused: ${JSON.stringify(started.json)}`);
  const id = started.json.run_id;
  for (;;) {
    const { rows } = await db.query<{ status: string; error: string | null; s: number }>(
      "SELECT status, error, extract(epoch FROM ended_at - started_at)::float8 AS s FROM data_runs WHERE id = $1",
      [id],
    );
    const run = rows[0]!;
    if (run.status === "completed") return run.s;
    if (run.status !== "running") throw new Error(`Full Reset ${id} ${run.status}: ${run.error}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

console.log("Importing the data set (Full Reset)…");
const first = await fullReset();
console.log(`  first import: ${first.toFixed(2)} s`);

// ---------------------------------------------------------------------------------------------
// Users and the request mix

const PERMISSIONS = [
  "access:products",
  "access:settings",
  "settings:products",
  "settings:templates",
  "settings:data_management",
];
const tokens: string[] = [];
for (let i = 0; i < userCount; i++) {
  const username = `bench_reader_${i}`;
  const created = await api("POST", "/auth-inv/users", admin, {
    username,
    password: USER_PASSWORD,
    permissions: PERMISSIONS,
  });
  if (created.status !== 201 && created.status !== 409)
    throw new Error(`creating ${username}: ${created.status}`);
  const login = await api<{ token: string }>("POST", "/auth-inv/login", undefined, {
    username,
    password: USER_PASSWORD,
  });
  if (login.status !== 200) throw new Error(`signing in ${username}: ${login.status}`);
  tokens.push(login.json.token);
}
console.log(`${tokens.length} users signed in`);

const SORTS = ["reorder_value", "revenue_30d", "title", "on_hand", "days_of_cover", "status"];
const { rows: countRows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM products");
const productPages = Math.max(1, Math.floor(countRows[0]!.n / 50));
let n = 0;
/** The next request of the mix, as one of the signed-in users. */
function nextPath(): string {
  const i = n++;
  const page = 1 + ((i * 7919) % Math.min(productPages, 200));
  switch (i % 4) {
    case 0: {
      const input = {
        json: { page, pageSize: 50, sort: SORTS[i % SORTS.length], dir: i % 3 ? "desc" : "asc" },
      };
      return `/trpc/metrics.products?input=${encodeURIComponent(JSON.stringify(input))}`;
    }
    case 1:
      return `/config/products?page=${page}&pageSize=50`;
    case 2:
      return "/api/templates";
    default:
      return "/csv/status";
  }
}
const requests: autocannon.Request[] = [
  {
    setupRequest(req) {
      const p = nextPath();
      return {
        ...req,
        method: "GET",
        path: p,
        headers: { ...req.headers, authorization: `Bearer ${tokens[n % tokens.length]}` },
      };
    },
  },
];

interface Phase {
  requests_per_s: number;
  p50_ms: number;
  p99_ms: number;
  requests: number;
  non_2xx: number;
  errors: number;
  seconds: number;
}

function runLoad(opts: { overallRate?: number; until: () => boolean }): Promise<Phase> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const instance = autocannon(
      {
        url: base,
        connections,
        duration: 3600,
        requests,
        ...(opts.overallRate ? { overallRate: opts.overallRate } : {}),
      },
      (err, result) => {
        clearInterval(check);
        if (err) return reject(err);
        const seconds = (Date.now() - started) / 1000;
        resolve({
          requests_per_s: Math.round((result.requests.total / seconds) * 10) / 10,
          p50_ms: result.latency.p50,
          p99_ms: result.latency.p99,
          requests: result.requests.total,
          non_2xx: result.non2xx,
          errors: result.errors,
          seconds: Math.round(seconds * 10) / 10,
        });
      },
    );
    const check = setInterval(() => {
      if (opts.until()) instance.stop();
    }, 100);
  });
}

const show = (name: string, p: Phase) =>
  console.log(
    `${name}: ${p.requests_per_s} req/s, p50 ${p.p50_ms} ms, p99 ${p.p99_ms} ms ` +
      `(${p.requests} requests in ${p.seconds} s, ${p.non_2xx} not 2xx, ${p.errors} errors)`,
  );

// ---------------------------------------------------------------------------------------------
// Phases

console.log(`\nPhase 1: idle, ${connections} connections back to back, ${duration} s…`);
const t0 = Date.now();
const idle = await runLoad({ until: () => Date.now() - t0 >= duration * 1000 });
show("idle", idle);

console.log("\nFull Reset alone…");
const alone = await fullReset();
console.log(`  ${alone.toFixed(2)} s`);

console.log(`\nPhase 2: ${rate} requests/s over ${connections} connections during back-to-back Full Resets…`);
const underLoad: number[] = [];
let resetsDone = false;
const t1 = Date.now();
const resets = (async () => {
  // Back to back while the phase lasts; the last one started runs to its end under load.
  while (Date.now() - t1 < duration * 1000) underLoad.push(await fullReset());
  resetsDone = true;
})();
const during = await runLoad({ overallRate: rate, until: () => resetsDone });
await resets;
show("during Full Resets", during);
const meanUnderLoad = underLoad.reduce((a, b) => a + b, 0) / underLoad.length;
console.log(
  `  Full Resets under load: ${underLoad.map((s) => s.toFixed(2)).join(", ")} s ` +
    `(mean ${meanUnderLoad.toFixed(2)} s = ${(meanUnderLoad / alone).toFixed(2)} × alone)`,
);

const targets = {
  idle_rps: idle.requests_per_s >= 400,
  idle_p99: idle.p99_ms <= 250,
  during_p99: during.p99_ms <= 1000,
  reset_ratio: meanUnderLoad / alone <= 1.25,
};
console.log(
  `\nTargets: idle ≥ 400 req/s ${targets.idle_rps ? "met" : "NOT met"}; idle p99 ≤ 250 ms ${targets.idle_p99 ? "met" : "NOT met"}; ` +
    `p99 during resets ≤ 1 s ${targets.during_p99 ? "met" : "NOT met"}; reset under load ≤ 1.25 × alone ${targets.reset_ratio ? "met" : "NOT met"}`,
);
console.log(
  JSON.stringify({
    products: countRows[0]!.n,
    connections,
    users: tokens.length,
    idle,
    during: { ...during, rate },
    full_reset_alone_s: Math.round(alone * 100) / 100,
    full_resets_under_load_s: underLoad.map((s) => Math.round(s * 100) / 100),
    reset_ratio: Math.round((meanUnderLoad / alone) * 100) / 100,
    targets,
  }),
);
await finish(0);
