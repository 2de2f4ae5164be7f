// `npm run demo-data -- --out DIR --products N --years Y [--seed S] [--order-lines M] [--po-lines P] [--today D]`
// Writes a realistic, deterministic demo data set in the CSV source format of docs/data-format.md.
import { parseArgs } from "node:util";
import { DEMO_FILES, generateDemoData } from "./lib/demo-data.ts";

const USAGE =
  "Usage: npm run demo-data -- --out DIR --products N --years Y [--seed S] [--order-lines M] [--po-lines P] [--today YYYY-MM-DD]";

function fail(message: string): never {
  console.error(`demo-data: ${message}\n${USAGE}`);
  process.exit(1);
}

function intArg(name: string, raw: string | undefined, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^-?\d+$/.test(raw.trim())) fail(`--${name} must be an integer, got "${raw}"`);
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min || n > max)
    fail(`--${name} must be between ${min} and ${max}, got ${raw}`);
  return n;
}

function group(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

let values: Record<string, string | boolean | undefined>;
try {
  ({ values } = parseArgs({
    options: {
      out: { type: "string" },
      products: { type: "string" },
      years: { type: "string" },
      seed: { type: "string" },
      "order-lines": { type: "string" },
      "po-lines": { type: "string" },
      today: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
    allowPositionals: false,
  }));
} catch (err) {
  fail((err as Error).message);
}

if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const str = (k: string) => (typeof values[k] === "string" ? (values[k] as string) : undefined);
const out = str("out");
if (!out?.trim()) fail("--out DIR is required");
const products = intArg("products", str("products"), 1, 1_000_000);
const years = intArg("years", str("years"), 1, 20);
if (products === undefined) fail("--products N is required");
if (years === undefined) fail("--years Y is required");
const seed = intArg("seed", str("seed"), 0, 4_294_967_295);
const orderLines = intArg("order-lines", str("order-lines"), 0, 200_000_000);
const poLines = intArg("po-lines", str("po-lines"), 0, 50_000_000);
let today: Date | undefined;
const todayRaw = str("today");
if (todayRaw !== undefined) {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(todayRaw) || Number.isNaN(Date.parse(`${todayRaw}T00:00:00Z`)))
    fail(`--today must be a date YYYY-MM-DD, got "${todayRaw}"`);
  today = new Date(`${todayRaw}T00:00:00Z`);
}

const started = Date.now();
console.log(
  `Writing demo data to ${out}: ${group(products)} products, ${years} year(s)` +
    `${orderLines === undefined ? "" : `, ~${group(orderLines)} order lines`}` +
    `${poLines === undefined ? "" : `, ~${group(poLines)} PO lines`}, seed ${seed ?? 42}`,
);
try {
  const result = await generateDemoData({
    out,
    products,
    years,
    seed,
    orderLines,
    poLines,
    today,
    onProgress: (msg) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${msg}`),
  });
  const width = Math.max(...Object.keys(DEMO_FILES).map((f) => f.length));
  console.log("\nRows per file:");
  let total = 0;
  for (const [file, rows] of Object.entries(result.files)) {
    total += rows;
    console.log(`  ${file.padEnd(width)}  ${group(rows).padStart(12)}`);
  }
  console.log(`  ${"total".padEnd(width)}  ${group(total).padStart(12)}`);
  const rssMb = Math.round(process.resourceUsage().maxRSS / 1024);
  console.log(`\nDone in ${(result.ms / 1000).toFixed(1)} s, peak RSS ${rssMb} MB.`);
} catch (err) {
  console.error(`demo-data: failed: ${(err as Error).message}`);
  process.exit(1);
}
