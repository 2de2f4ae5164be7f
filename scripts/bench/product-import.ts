// `npm run bench:import -- [--rows N] [--catalogue P] [--rounds R]`
// A benchmark, not a test. On the PostgreSQL named by DATABASE_URL (an empty database): writes a
// demo data set of P products (default 50,000) and imports it with a Full Reset, then writes a
// supplier's CSV of N rows (default 50,000) from the demo catalogue's vendors, brands and
// categories with some bad rows (bad check digits, duplicate SKUs, missing prices, SKUs already in
// the catalogue), and through the real server over HTTP: uploads it (upload + parse + check), re-checks
// it with a company chosen, reads R grid pages of 100 rows and makes R cell edits (p50/p99 each),
// then submits it. The server is `server/main.ts` in a process of its own, so its peak RSS (the
// kernel's high-water mark, VmHWM, read after the upload) is the server's alone, not this script's
// demo catalogue and CSV. The last line is one JSON object with the figures.
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { buildApp } from "../../server/app.ts";
import { loadConfig } from "../../server/config.ts";
import { openDatabase } from "../../server/db/database.ts";
import { migrate } from "../../server/db/migrate.ts";
import { ensureAdminUser, syncPermissionCatalogue } from "../../server/modules/auth/auth.service.ts";
import { generateDemoData } from "../lib/demo-data.ts";

/** The kernel's figures for a process, in MB: resident now (VmRSS) and its peak (VmHWM). */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0);
  return { rss: Math.round(kb("VmRSS") / 1024), peak: Math.round(kb("VmHWM") / 1024) };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const a = srv.address();
      srv.close(() => resolve(typeof a === "object" && a ? a.port : 0));
    });
  });
}

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "50000" },
    catalogue: { type: "string", default: "50000" },
    rounds: { type: "string", default: "200" },
  },
});
const url = process.env.DATABASE_URL;
if (!url) {
  console.error("Set DATABASE_URL to an empty PostgreSQL database to benchmark on");
  process.exit(1);
}
const ROWS = Number(values.rows);
const CATALOGUE = Number(values.catalogue);
const ROUNDS = Number(values.rounds);
console.log(
  `Load average at the start: ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(", ")} (2 cores shared: figures are noisy)`,
);
const PASSWORD = "bench-password";

function pct(list: number[], p: number): number {
  const s = [...list].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? 0;
}
const ms = (n: number) => Math.round(n * 10) / 10;

const sourceDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-import-source-"));
const imageDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-import-images-"));
console.log(`Demo catalogue of ${CATALOGUE.toLocaleString("en-US")} products…`);
await generateDemoData({ out: sourceDir, products: CATALOGUE, years: 1, seed: 5 });
const db = await openDatabase({ databaseUrl: url, poolSize: 6 });
await migrate(db);
await syncPermissionCatalogue(db);
const config = loadConfig({
  DATABASE_URL: url,
  SOURCE_DIR: sourceDir,
  IMAGE_DIR: imageDir,
  LOG_LEVEL: "silent",
  ADMIN_USERNAME: "admin",
  ADMIN_PASSWORD: PASSWORD,
  DEMO_DATA: "0",
  CLIENT_DIST: "/nonexistent",
});
await ensureAdminUser(db, config);
const app = await buildApp({ config, db, logger: false });
await app.services.dataOps.start("reset", null);
await app.services.dataOps.idle();
await app.close();

// The server under test: its own process, on the same database.
const port = await freePort();
const server = spawn(process.execPath, ["--import", "tsx", "server/main.ts"], {
  env: {
    ...process.env,
    DATABASE_URL: url,
    SOURCE_DIR: sourceDir,
    IMAGE_DIR: imageDir,
    LOG_LEVEL: "warn",
    ADMIN_USERNAME: "admin",
    ADMIN_PASSWORD: PASSWORD,
    DEMO_DATA: "0",
    CLIENT_DIST: "/nonexistent",
    PORT: String(port),
    HOST: "127.0.0.1",
  },
  cwd: path.resolve(import.meta.dirname, "../.."),
  stdio: ["ignore", "inherit", "inherit"],
});
const base = `http://127.0.0.1:${port}`;
for (let i = 0; ; i++) {
  if (server.exitCode !== null) throw new Error(`the server exited with ${server.exitCode}`);
  const up = await fetch(`${base}/healthz`).then(
    (r) => r.ok,
    () => false,
  );
  if (up) break;
  if (i > 600) throw new Error("the server did not start within 60 s");
  await new Promise((r) => setTimeout(r, 100));
}
const serverStart = memoryOf(server.pid!);
console.log(`Server (pid ${server.pid}) up: RSS ${serverStart.rss} MB`);
const login = await fetch(`${base}/auth-inv/login`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ username: "admin", password: PASSWORD }),
});
const { token } = (await login.json()) as { token: string };
const auth = { authorization: `Bearer ${token}` };

// --- the supplier's file
const vendors = await db.prisma.vendor.findMany({ select: { name: true } });
const brands = await db.prisma.brand.findMany({ select: { id: true }, take: 1 });
const categories = await db.prisma.category.findMany({ where: { type: 10 }, select: { name: true } });
const existingSkus = await db.prisma.product.findMany({
  where: { sku: { not: null } },
  select: { sku: true },
  take: 200,
});
const checkDigit = (b: string) => {
  let s = 0;
  for (let i = 0; i < b.length; i++) s += Number(b[b.length - 1 - i]) * (i % 2 === 0 ? 3 : 1);
  return (10 - (s % 10)) % 10;
};
const q = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
const lines = ["Item #,Product Name,UPC,Wholesale,Retail,MSRP,Case Pack,Weight (oz),Vendor,Category,Notes"];
let bad = 0;
for (let i = 0; i < ROWS; i++) {
  const body = `9${String(i).padStart(10, "0")}`;
  let upc = body + checkDigit(body);
  let sku = `BX-${String(i).padStart(6, "0")}`;
  let price = (1 + (i % 50) / 10).toFixed(2);
  const r = i % 200;
  if (r === 1) upc = body + ((checkDigit(body) + 1) % 10); // bad check digit
  if (r === 2) sku = `BX-${String(i - 1).padStart(6, "0")}`; // duplicate SKU
  if (r === 3) price = ""; // missing price
  if (r === 4 && existingSkus.length) sku = existingSkus[i % existingSkus.length]!.sku!; // already in the catalogue
  if (r >= 1 && r <= 4) bad++;
  lines.push(
    [
      sku,
      `Bench Product ${i}`,
      upc,
      (Number(price || "2") / 2).toFixed(2),
      price,
      (Number(price || "2") * 1.3).toFixed(2),
      String(6 + (i % 4) * 6),
      (0.2 + (i % 30) / 10).toFixed(1),
      vendors[i % vendors.length]!.name,
      categories[i % categories.length]!.name,
      i % 10 === 0 ? "A <b>bold</b> note" : "",
    ]
      .map(q)
      .join(","),
  );
}
const csv = Buffer.from(`${lines.join("\n")}\n`);
console.log(
  `Supplier file: ${ROWS.toLocaleString("en-US")} rows, ${(csv.length / 1e6).toFixed(1)} MB, ${bad} bad rows`,
);

// --- upload + parse + check
const fd = new FormData();
fd.append("company", String(brands[0]!.id));
fd.append("file", new Blob([csv]), "bench.csv");
let t0 = performance.now();
const up = await fetch(`${base}/api/product-imports`, { method: "POST", headers: auth, body: fd });
const uploadMs = performance.now() - t0;
const peak = memoryOf(server.pid!).peak;
const imp = (await up.json()) as {
  id: number;
  counts: { rows: number; error_rows: number };
  message?: string;
};
if (up.status !== 201) throw new Error(`upload failed: ${up.status} ${imp.message}`);
console.log(
  `Upload + parse + check: ${(uploadMs / 1000).toFixed(2)} s (${imp.counts.rows} rows, ${imp.counts.error_rows} with errors), server peak RSS ${peak} MB (target ≤ 512 MB)`,
);

t0 = performance.now();
const put = await fetch(`${base}/api/product-imports/${imp.id}`, {
  method: "PUT",
  headers: { ...auth, "content-type": "application/json" },
  body: JSON.stringify({ product_type: "Bench", mapping: { Vendor: "supplier" } }),
});
if (put.status !== 200) throw new Error(`settings failed: ${put.status} ${await put.text()}`);
const recheckMs = performance.now() - t0;
console.log(`Settings saved, every row re-checked: ${(recheckMs / 1000).toFixed(2)} s`);

// --- grid pages and cell edits
const pages: number[] = [];
const pageCount = Math.ceil(ROWS / 100);
for (let i = 0; i < ROUNDS; i++) {
  const page = 1 + ((i * 7919) % pageCount);
  const s = performance.now();
  const res = await fetch(`${base}/api/product-imports/${imp.id}/rows?page=${page}&pageSize=100`, {
    headers: auth,
  });
  await res.arrayBuffer();
  pages.push(performance.now() - s);
}
const edits: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  const rowId = 1 + ((i * 104729) % ROWS);
  const s = performance.now();
  const res = await fetch(`${base}/api/product-imports/${imp.id}/rows/${rowId}`, {
    method: "PATCH",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ values: { title: `Edited title ${i}` } }),
  });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`edit failed: ${res.status}`);
  edits.push(performance.now() - s);
}
console.log(
  `Grid page of 100: p50 ${ms(pct(pages, 50))} ms, p99 ${ms(pct(pages, 99))} ms (target p99 ≤ 50 ms)`,
);
console.log(
  `Cell edit + row re-check: p50 ${ms(pct(edits, 50))} ms, p99 ${ms(pct(edits, 99))} ms (target p99 ≤ 50 ms)`,
);

// --- submit
t0 = performance.now();
const sub = await fetch(`${base}/api/product-imports/${imp.id}/submit`, { method: "POST", headers: auth });
const submitMs = performance.now() - t0;
const submitted = (await sub.json()) as { summary?: { would_create: number }; message?: string };
if (sub.status !== 200) throw new Error(`submit failed: ${sub.status} ${submitted.message}`);
console.log(
  `Submit of ${submitted.summary!.would_create.toLocaleString("en-US")} rows: ${(submitMs / 1000).toFixed(2)} s (target ≤ 10 s)`,
);

server.kill("SIGTERM");
await new Promise((r) => server.once("exit", r));
await db.close();
fs.rmSync(sourceDir, { recursive: true, force: true });
fs.rmSync(imageDir, { recursive: true, force: true });
console.log(
  JSON.stringify({
    rows: ROWS,
    catalogue: CATALOGUE,
    upload_check_s: ms(uploadMs / 1000),
    server_start_rss_mb: serverStart.rss,
    peak_rss_mb: peak,
    recheck_s: ms(recheckMs / 1000),
    page_p50_ms: ms(pct(pages, 50)),
    page_p99_ms: ms(pct(pages, 99)),
    edit_p50_ms: ms(pct(edits, 50)),
    edit_p99_ms: ms(pct(edits, 99)),
    submit_s: ms(submitMs / 1000),
    created: submitted.summary!.would_create,
    load: os.loadavg().map((l) => Math.round(l * 10) / 10),
  }),
);
