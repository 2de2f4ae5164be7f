// Module elasticity of the planning engine (docs/metrics.md §15): how strongly each product's sales
// respond to its price, fitted from its own last 52 weeks of sales, with its category's pooled
// figure where its own history has too little evidence. The Discount Simulator reads the result.
//
// One grouped pass over the last year's order lines gives each product's weekly units and shelf
// price (≈ 15 weeks with sales per product on the large demo set) and the stock history's
// out-of-stock runs its days in stock per week; both stream into the app (binary COPY), which
// works out each product's price levels (writeLevels) and writes them back; the fit is then a
// weighted least-squares line per product computed from six sums per product, in SQL.
import { copyOutDecoded } from "../../db/binary-copy.ts";
import { pacer } from "../../db/pace.ts";
import type { CalcContext, CalcModule } from "../calculate.ts";
import { CHUNK_BITS, orderLinesOf, passDay } from "../order-lines-pass.ts";
import { setLocal, utcDay, utcMidnight } from "./context.ts";

const DAY_MS = 86_400_000;
/** Weeks of history the fit reads (the stock history's year). */
export const ELASTICITY_WEEKS = 52;
/** A week's regular price is the highest weekly price within this many weeks either side. */
export const REGULAR_PRICE_WEEKS = 6;
/** Price levels are ratios to the regular price rounded to this step (a ratio ≥ 0.975 is regular). */
export const LEVEL_STEP = 0.05;
/** A category needs this many categories' worth of products to be a product's seasonal reference. */
export const HOME_CATEGORY_MIN_PRODUCTS = 10;

/** When a product's own fit is used (docs/metrics.md §15.3). */
export const OWN_FIT_RULE = { minPriceChanges: 2, minDiscountedUnits: 5, maxSe: 0.5, max: 10 } as const;
/** When a category's pooled fit stands in for its products. */
export const CATEGORY_FIT_RULE = { minProducts: 3, maxSe: 0.35, max: 10 } as const;

/** The last week k a product's life covers (0 … 51): its weeks since it was created or first received. */
const ksSql = (d0Param: string) => `LEAST(${ELASTICITY_WEEKS - 1}, GREATEST(0,
  (${d0Param}::date - LEAST((p.created_at AT TIME ZONE 'UTC')::date, p.first_received)) / 7))`;

/** The typed array `a` copied into a new one of `length`. */
function resized<T extends Int32Array | Float64Array>(a: T, length: number): T {
  const b = new (a.constructor as new (n: number) => T)(length);
  b.set(a);
  return b;
}

/**
 * Index of a pid in `pids` (−1: none): an array over the pids' range when that is not much wider
 * than their number, else a Map.
 */
function pidLookup(pids: Int32Array): (pid: number) => number {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const p of pids) {
    if (p < lo) lo = p;
    if (p > hi) hi = p;
  }
  if (pids.length > 0 && hi - lo < 8 * pids.length + 65_536) {
    const at = new Int32Array(hi - lo + 1).fill(-1);
    for (let i = 0; i < pids.length; i++) at[pids[i]! - lo] = i;
    return (pid) => (pid >= lo && pid <= hi ? at[pid - lo]! : -1);
  }
  const map = new Map<number, number>();
  for (let i = 0; i < pids.length; i++) map.set(pids[i]!, i);
  return (pid) => map.get(pid) ?? -1;
}

/** C's rint() (PostgreSQL's round(float8)): to the nearest integer, halves to the even one. */
function rint(v: number): number {
  const r = Math.round(v);
  return r - v === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/**
 * Rows grouped by product (a counting sort: the database need not sort them): product i's rows
 * go to positions start[i] … start[i + 1] − 1, in their arrival order; `at` is each row's position
 * (−1: no product).
 */
function groupRows(productOf: Int32Array, n: number, products: number) {
  const start = new Int32Array(products + 1);
  for (let r = 0; r < n; r++) if (productOf[r]! >= 0) start[productOf[r]! + 1]!++;
  for (let i = 0; i < products; i++) start[i + 1]! += start[i]!;
  const fill = start.slice(0, products);
  const at = new Int32Array(n);
  for (let r = 0; r < n; r++) {
    const i = productOf[r]!;
    at[r] = i >= 0 ? fill[i]!++ : -1;
  }
  return { start, at };
}

/** `values` (n rows) moved to their positions `at` (groupRows): a product's rows side by side. */
function placed<T extends Int32Array | Float64Array>(values: T, at: Int32Array, n: number, size: number): T {
  const out = new (values.constructor as new (n: number) => T)(size);
  for (let r = 0; r < n; r++) if (at[r]! >= 0) out[at[r]!] = values[r]!;
  return out;
}

/**
 * Creates the temp table el_levels (pid, level, u, e, x, weeks, changes): per product and price
 * level its units U, exposure E and units-weighted mean log ratio X (below). The weeks' units and
 * shelf prices are summed from the run's pass over the order lines (order-lines-pass.ts), the days
 * out of stock by a grouped pass over the stock history streamed out with binary COPY; the
 * per-product work (the weeks' regular prices, levels, seasonal index and exposure), which as
 * window functions and joins over ≈ 500k product-weeks cost the database ≈ 5 s, is done here in the
 * same float8 operations in the same order (sums in week order), and written back.
 * What can differ from the statements this replaced is last bits: Math.log against the C library's
 * log, the order a product's discounted levels' exposures are summed in, (el_fit) the order of a
 * product's levels, which was the hash aggregate's, and the week's price, now the correctly rounded
 * quotient of two whole numbers where the statement rounded a numeric quotient to 16 or more digits
 * and converted that. On the large set every figure agrees to 9e-14 relative (5e-12 for 4 standard
 * errors of 3-level fits before, whose residual is a difference of nearly equal sums); no source,
 * trust or fallback changed.
 */
async function writeLevels(ctx: CalcContext, d0: string, from: Date): Promise<void> {
  const { conn, asOf } = ctx;
  // The products fitted (merchandise, not discontinued): regular price today and last week k of
  // their life (ksSql). Then every linked product's home category: its linked category with the
  // fewest products among those with at least HOME_CATEGORY_MIN_PRODUCTS (ties: the lower id);
  // 0 (the products without one, together) when it has none.
  const products = await conn.query<{ pid: number; regular: number; ks: number }>(
    `SELECT p.pid, COALESCE(p.regular_price, p.price)::float8 AS regular, ${ksSql("$1")}::int AS ks
     FROM products p WHERE NOT p.discontinued AND p.kind = 'merchandise'`,
    [d0],
  );
  const picks = await conn.query<{ pid: number; home: number }>(
    `WITH sizes AS (
       SELECT category_id, count(*) AS n FROM product_categories GROUP BY 1 HAVING count(*) >= $1
     )
     SELECT DISTINCT ON (pc.pid) pc.pid, pc.category_id AS home
     FROM product_categories pc JOIN sizes s USING (category_id)
     ORDER BY pc.pid, s.n, pc.category_id`,
    [HOME_CATEGORY_MIN_PRODUCTS],
  );
  const nP = products.length;
  const pidOf = new Int32Array(nP);
  const regular = new Float64Array(nP);
  const ks = new Int32Array(nP);
  for (const [i, p] of products.entries()) {
    pidOf[i] = p.pid;
    regular[i] = p.regular;
    ks[i] = p.ks;
  }
  const indexOf = pidLookup(pidOf);
  const homeOfPid = new Map<number, number>();
  for (const p of picks) homeOfPid.set(p.pid, p.home);
  const homeIndex = new Map<number, number>();
  const homeIndexOf = (pid: number) => {
    const home = homeOfPid.get(pid) ?? 0;
    let h = homeIndex.get(home);
    if (h === undefined) {
      h = homeIndex.size;
      homeIndex.set(home, h);
    }
    return h;
  };
  const homeOfProduct = new Int32Array(nP);
  for (let i = 0; i < nP; i++) homeOfProduct[i] = homeIndexOf(pidOf[i]!);

  // Weekly units and shelf price (order_lines.price, before line discounts: coupons and bulk
  // discounts are not the product's price) per product, week k = 0 … 51 counted back from D0: the
  // week's units and its takings at the shelf price (Σ price × quantity, whole cents), over the
  // completed lines with a quantity and a price above 0. From the run's pass over the order lines
  // (order-lines-pass.ts), where a line's shelf price × quantity is its amount plus its discount.
  // Discontinued products are left out: their clearance goes with the end of the line's life
  // (demand fading, then cleared), so it says little about what a price cut does to a live product.
  // So are non-merchandise products (postage, fees, gift cards: products.kind).
  // The week's price is its takings ÷ its units, in cents ÷ 100 (one correctly rounded float8
  // division of two whole numbers, exact below 2^53 cents).
  // A product's home category's weekly units (every product with sales, even one the fit leaves
  // out, counts in its home's) and its own units are summed: whole numbers, exact.
  const pass = await orderLinesOf(ctx);
  const W = ELASTICITY_WEEKS;
  // The pass's product index → the fitted product's index (−1: not fitted).
  const fitted = new Int32Array(pass.pids.length).fill(-1);
  for (let i = 0; i < nP; i++) {
    const j = pass.indexOf.get(pidOf[i]!);
    if (j !== undefined) fitted[j] = i;
  }
  const d0Day = passDay(asOf);
  const fromDay = passDay(from);
  // Two loops: the first marks each product's weeks with a sale (52 bits a product, in two
  // words), which gives every product-week its row (in product and week order: the product's first
  // row plus the marked weeks before it); the second sums the units and takings into the rows.
  const low = new Int32Array(nP); // weeks 0 … 31
  const high = new Int32Array(nP); // weeks 32 … 51
  const pace = pacer();
  const eachLine = async (
    visit: (i: number, k: number, q: number, takings: number) => void,
  ): Promise<void> => {
    const { line: discountLine, cents: discountCents, n: discounted } = pass.discounts;
    let next = 0;
    for (const [ci, c] of pass.chunks.entries()) {
      await pace();
      const base = ci << CHUNK_BITS;
      const { product, day, done, quantity, amountC } = c;
      for (let r = 0; r < c.n; r++) {
        let discount = 0;
        if (next < discounted && discountLine[next] === base + r) discount = discountCents[next++]!;
        const q = quantity[r]!;
        if (!done[r] || q <= 0) continue;
        const i = fitted[product[r]!]!;
        const d = day[r]!;
        if (i < 0 || d < fromDay || d > d0Day) continue;
        const takings = amountC[r]! + discount;
        if (takings <= 0) continue; // price 0
        visit(i, Math.floor((d0Day - d) / 7), q, takings);
      }
    }
  };
  await eachLine((i, k) => {
    if (k < 32) low[i]! |= 1 << k;
    else high[i]! |= 1 << (k - 32);
  });
  const popcount = (x: number) => {
    let v = x - ((x >>> 1) & 0x55555555);
    v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
    return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
  };
  const first = new Int32Array(nP + 1);
  for (let i = 0; i < nP; i++) first[i + 1] = first[i]! + popcount(low[i]!) + popcount(high[i]!);
  const n = first[nP]!;
  /** The row of product i's week k (a week with a sale). */
  const rowOf = (i: number, k: number) =>
    first[i]! +
    (k < 32
      ? popcount(low[i]! & ((2 ** k - 1) | 0))
      : popcount(low[i]!) + popcount(high[i]! & ((2 ** (k - 32) - 1) | 0)));
  const rowProduct = new Int32Array(n);
  const rowK = new Int32Array(n);
  const rowU = new Float64Array(n);
  // The week's takings in cents first, then its price (below).
  const rowP = new Float64Array(n);
  for (let i = 0; i < nP; i++) {
    let r = first[i]!;
    for (let k = 0; k < W; k++) {
      const marked = k < 32 ? (low[i]! >>> k) & 1 : (high[i]! >>> (k - 32)) & 1;
      if (!marked) continue;
      rowProduct[r] = i;
      rowK[r++] = k;
    }
  }
  await eachLine((i, k, q, takings) => {
    const r = rowOf(i, k);
    rowU[r] = rowU[r]! + q;
    rowP[r] = rowP[r]! + takings;
  });
  const homeWeeks = new Float64Array(homeIndex.size * W);
  const ownU = new Float64Array(nP);
  const ownInRange = new Float64Array(nP);
  for (let r = 0; r < n; r++) {
    const i = rowProduct[r]!;
    const k = rowK[r]!;
    const u = rowU[r]!;
    if (!Number.isSafeInteger(rowP[r]!))
      throw new Error(`A week's sales of product ${pidOf[i]} come to more than 2^53 cents`);
    rowP[r] = rowP[r]! / (100 * u);
    ownU[i] = ownU[i]! + u;
    if (k <= ks[i]!) ownInRange[i] = ownInRange[i]! + u;
    const h = homeOfProduct[i]!;
    homeWeeks[h * W + k] = homeWeeks[h * W + k]! + u;
  }
  // Each home's units over the 52 weeks and their running sums over k.
  const homes = homeWeeks.length / ELASTICITY_WEEKS;
  const homeTotal = new Float64Array(homes);
  const homeCum = new Float64Array(homes * ELASTICITY_WEEKS);
  for (let h = 0; h < homes; h++) {
    let cum = 0;
    for (let k = 0; k < ELASTICITY_WEEKS; k++) {
      cum += homeWeeks[h * ELASTICITY_WEEKS + k]!;
      homeCum[h * ELASTICITY_WEEKS + k] = cum;
    }
    homeTotal[h] = cum;
  }

  // Days out of stock per product and week: a run of the stock history with stock ≤ 0 is out of
  // stock on each of its days except its first when that day had sales (§2).
  let m = 0;
  let oosRows = 1 << 14;
  let oosProduct = new Int32Array(oosRows);
  let oosK = new Int32Array(oosRows);
  let oosDays = new Int32Array(oosRows);
  await copyOutDecoded(
    conn,
    `COPY (
       SELECT h.pid, wk.k::int4,
         SUM(LEAST(h.valid_to, DATE '${d0}' - 7 * wk.k) - GREATEST(h.valid_from, DATE '${d0}' - 7 * wk.k - 6) + 1
           - CASE WHEN h.sold_first_day > 0 AND h.valid_from >= DATE '${d0}' - 7 * wk.k - 6 THEN 1 ELSE 0 END)::int4
       FROM product_stock_history h,
         LATERAL generate_series(GREATEST((DATE '${d0}' - h.valid_to) / 7, 0),
           LEAST((DATE '${d0}' - h.valid_from) / 7, ${ELASTICITY_WEEKS - 1})) AS wk(k)
       WHERE h.stock <= 0 AND h.valid_to >= DATE '${d0}' - ${ELASTICITY_WEEKS * 7 - 1}
         AND h.pid IN (SELECT pid FROM products WHERE NOT discontinued AND kind = 'merchandise')
       GROUP BY 1, 2
     ) TO STDOUT (FORMAT binary)`,
    ["int4", "int4", "int4"],
    (row) => {
      const i = indexOf(row[0] as number);
      if (i < 0 || ownU[i] === 0) return; // no sales: not fitted
      if (m === oosRows) {
        oosRows *= 2;
        oosProduct = resized(oosProduct, oosRows);
        oosK = resized(oosK, oosRows);
        oosDays = resized(oosDays, oosRows);
      }
      oosProduct[m] = i;
      oosK[m] = row[1] as number;
      oosDays[m] = row[2] as number;
      m++;
    },
  );

  const lines = levelLines({
    products: { pid: pidOf, regular, ks, home: homeOfProduct, ownU, ownInRange },
    weeks: { n, product: rowProduct, k: rowK, u: rowU, p: rowP },
    oos: { n: m, product: oosProduct, k: oosK, days: oosDays },
    homes: { weeks: homeWeeks, total: homeTotal, cum: homeCum },
  });
  await conn.exec(
    `CREATE TEMP TABLE el_levels (pid int NOT NULL, level float8, u float8, e float8, x float8,
       weeks int, changes int) ON COMMIT DROP`,
  );
  await conn.copyCsv({
    table: "el_levels",
    columns: ["pid", "level", "u", "e", "x", "weeks", "changes"],
    // (Made as they are copied: in chunks of 10,000 lines.)
    source: (async function* () {
      let chunk: string[] = [];
      for (const line of lines) {
        chunk.push(line);
        if (chunk.length === 10_000) {
          yield Buffer.from(chunk.join(""));
          chunk = [];
        }
      }
      if (chunk.length) yield Buffer.from(chunk.join(""));
    })(),
    header: false,
  });
}

interface LevelInput {
  /** Per product fitted (index i): pid, regular price today, last week of its life, home (index), own units in all and in its life's weeks. */
  products: {
    pid: Int32Array;
    regular: Float64Array;
    ks: Int32Array;
    home: Int32Array;
    ownU: Float64Array;
    ownInRange: Float64Array;
  };
  /** The product-weeks with sales (product −1: not fitted), in any order. */
  weeks: { n: number; product: Int32Array; k: Int32Array; u: Float64Array; p: Float64Array };
  /** Days out of stock per product and week, in any order. */
  oos: { n: number; product: Int32Array; k: Int32Array; days: Int32Array };
  /** Per home × week: units, and per home the total and per home × week the running sum over k. */
  homes: { weeks: Float64Array; total: Float64Array; cum: Float64Array };
}

/** The CSV lines of el_levels (pid, level, u, e, x, weeks, changes) from the weeks with sales. */
function* levelLines({ products, weeks, oos, homes }: LevelInput): Generator<string> {
  const { pid: pidOf, regular, ks, home: homeOfProduct, ownU, ownInRange } = products;
  const { weeks: homeWeeks, total: homeTotal, cum: homeCum } = homes;
  const nP = pidOf.length;
  // Per product and week with sales: its days in stock (at least 1: it sold), the ratio of its
  // price to the regular price, the level, and the week's seasonal index (its home category's
  // units that week without its own, × 52 ÷ the same over the 52 weeks; 1 when the others sold
  // nothing all year). A week's regular price is the lower of the highest prices in the
  // REGULAR_PRICE_WEEKS weeks before it and in those after it (each including the week itself; the
  // product's regular price today counts as "after" for the latest weeks): a promotion is a price
  // below the price on both sides of it, while after a permanent price rise the weeks before it
  // keep their old price as regular.
  //
  // Then per product and level: units U, exposure E = Σ days in stock × seasonal index, and the
  // units-weighted mean log ratio X. The regular level's exposure is every in-stock day of the
  // product's weeks (from its life start, at most 52 weeks) less the discounted weeks' exposure,
  // so weeks in stock without a sale count at the regular price (their price is not seen; most
  // are regular), and a slow seller's regular rate is not taken from its weeks with sales alone.
  const W = ELASTICITY_WEEKS;
  // The rows in product order: read where they arrived (in the database's hash order), each
  // would be a cache miss.
  const weeksOf = groupRows(weeks.product, weeks.n, nP);
  const size = weeksOf.start[nP]!;
  // (Rows already in product order, as writeLevels makes them, are read where they are.)
  const inOrder = size === weeks.n && weeksOf.at.every((at, r) => at === r);
  const rowK = inOrder ? weeks.k : placed(weeks.k, weeksOf.at, weeks.n, size);
  const rowU = inOrder ? weeks.u : placed(weeks.u, weeksOf.at, weeks.n, size);
  const rowP = inOrder ? weeks.p : placed(weeks.p, weeksOf.at, weeks.n, size);
  const oosOf = groupRows(oos.product, oos.n, nP);
  const oosK = placed(oos.k, oosOf.at, oos.n, oosOf.start[nP]!);
  const oosDays = placed(oos.days, oosOf.at, oos.n, oosOf.start[nP]!);
  const weekAt = new Int32Array(W).fill(-1); // the product's row of week k
  const daysOut = new Int32Array(W);
  const wk = new Int32Array(W);
  const lv = new Float64Array(W);
  // Per level of the product (at most one per week): level, U, E, Σ u × ln ratio, weeks, changes.
  const gLevel = new Float64Array(W);
  const gU = new Float64Array(W);
  const gE = new Float64Array(W);
  const gXU = new Float64Array(W);
  const gWeeks = new Int32Array(W);
  const gChanges = new Int32Array(W);
  for (let i = 0; i < nP; i++) {
    const a = weeksOf.start[i]!;
    const b = weeksOf.start[i + 1]!;
    if (a === b) continue;
    // The weeks in k order.
    let c = 0;
    for (let j = a; j < b; j++) weekAt[rowK[j]!] = j;
    for (let k = 0; k < W; k++) if (weekAt[k]! >= 0) wk[c++] = k;
    for (let j = oosOf.start[i]!; j < oosOf.start[i + 1]!; j++) daysOut[oosK[j]!] = oosDays[j]!;
    const h = homeOfProduct[i]!;
    const others = homeTotal[h]! - ownU[i]!;
    const season = (k: number, u: number) =>
      others > 0 ? ((homeWeeks[h * W + k]! - u) * ELASTICITY_WEEKS) / others : 1;
    let groups = 0;
    for (let q = 0; q < c; q++) {
      const k = wk[q]!;
      const r = weekAt[k]!;
      const p = rowP[r]!;
      const u = rowU[r]!;
      let after = -Infinity;
      let before = -Infinity;
      for (let t = q; t < c && wk[t]! <= k + REGULAR_PRICE_WEEKS; t++)
        after = Math.max(after, rowP[weekAt[wk[t]!]!]!);
      for (let t = q; t >= 0 && wk[t]! >= k - REGULAR_PRICE_WEEKS; t--)
        before = Math.max(before, rowP[weekAt[wk[t]!]!]!);
      if (k < REGULAR_PRICE_WEEKS && regular[i]! > before) before = regular[i]!;
      const ratio = p / (after < before ? after : before);
      const level = Math.min(1, rint(ratio / LEVEL_STEP) * LEVEL_STEP);
      lv[q] = level;
      let g = 0;
      while (g < groups && gLevel[g] !== level) g++;
      if (g === groups) {
        groups++;
        gLevel[g] = level;
        gU[g] = u;
        gE[g] = Math.max(7 - daysOut[k]!, 1) * season(k, u);
        gXU[g] = u * Math.log(ratio);
        gWeeks[g] = 1;
        gChanges[g] = 0;
      } else {
        gU[g]! += u;
        gE[g]! += Math.max(7 - daysOut[k]!, 1) * season(k, u);
        gXU[g]! += u * Math.log(ratio);
        gWeeks[g]!++;
      }
      if (q > 0 && lv[q - 1] !== level) gChanges[g]!++;
    }
    // The regular level's exposure: the in-stock days of the life's weeks, by seasonal index.
    let oosE = 0;
    for (let k = 0; k <= ks[i]!; k++) {
      if (daysOut[k] === 0) continue;
      const r = weekAt[k]!;
      oosE += daysOut[k]! * season(k, r >= 0 ? rowU[r]! : 0);
    }
    const lifeE =
      7 *
        (others > 0
          ? ((homeCum[h * W + ks[i]!]! - ownInRange[i]!) * ELASTICITY_WEEKS) / others
          : ks[i]! + 1) -
      oosE;
    let discountedE = 0;
    let anyDiscounted = false;
    for (let g = 0; g < groups; g++)
      if (gLevel[g]! < 1) {
        discountedE = anyDiscounted ? discountedE + gE[g]! : gE[g]!;
        anyDiscounted = true;
      }
    for (let g = 0; g < groups; g++) {
      const e = gLevel[g]! < 1 ? gE[g]! : Math.max(lifeE - discountedE, gE[g]!);
      yield `${pidOf[i]},${gLevel[g]},${gU[g]},${e},${gXU[g]! / gU[g]!},${gWeeks[g]},${gChanges[g]}\n`;
    }
    for (let q = 0; q < c; q++) weekAt[wk[q]!] = -1;
    for (let j = oosOf.start[i]!; j < oosOf.start[i + 1]!; j++) daysOut[oosK[j]!] = 0;
  }
}

export const elasticityModule: CalcModule = {
  name: "elasticity",
  readsOrderLines: true,
  tables: ["product_elasticities", "category_elasticities"],
  async run(ctx) {
    const { conn, asOf } = ctx;
    const d0 = utcDay(asOf);
    const from = new Date(utcMidnight(asOf).getTime() - (ELASTICITY_WEEKS * 7 - 1) * DAY_MS);
    // Temp tables have no statistics until analyzed: without them the planner guesses a few hundred
    // rows for tables of 50k–500k and picks nested loops; and the window sorts over ≈ 500k weeks
    // spill to disk with the default work_mem.
    const restore = await setLocal(conn, { jit: "off", work_mem: "128MB" });
    await conn.exec(`TRUNCATE product_elasticities, category_elasticities;
      DROP TABLE IF EXISTS el_levels, el_fit`);
    await writeLevels(ctx, d0, from);

    // Per product: the weighted least-squares line of y = ln((U + ½) ÷ E) on X over its levels,
    // weights U + ½ (about the inverse variance of ln U for a Poisson count; the ½ takes away most of
    // the downward bias of the log of a small count, which would otherwise shrink the uplift of the
    // few units a slow seller sells on offer), from centred sums; slope b, elasticity −b,
    // standard error √(max(1, φ) ÷ Sxx) with φ the residual variance per degree of freedom when
    // there are more than two levels.
    await conn.exec(`
      CREATE TEMP TABLE el_fit ON COMMIT DROP AS
      WITH s AS (
        SELECT pid, count(*)::int AS levels, SUM(weeks)::int AS weeks, SUM(changes)::int AS changes,
          COALESCE(SUM(weeks) FILTER (WHERE level < 1), 0)::int AS discounted_weeks,
          COALESCE(SUM(u) FILTER (WHERE level < 1), 0) AS discounted_units,
          SUM(u + 0.5) AS w, SUM((u + 0.5) * x) AS sx, SUM((u + 0.5) * ln((u + 0.5) / e)) AS sy,
          SUM((u + 0.5) * x * x) AS sxx, SUM((u + 0.5) * x * ln((u + 0.5) / e)) AS sxy,
          SUM((u + 0.5) * ln((u + 0.5) / e) * ln((u + 0.5) / e)) AS syy
        FROM el_levels WHERE e > 0 GROUP BY 1
      ),
      c AS (
        SELECT *, sxx - sx * sx / w AS cxx, sxy - sx * sy / w AS cxy, syy - sy * sy / w AS cyy FROM s
      )
      SELECT pid, levels, weeks, changes, discounted_weeks, discounted_units, cxx, cxy, cyy,
        CASE WHEN cxx > 1e-9 THEN -cxy / cxx END AS elasticity,
        CASE WHEN cxx > 1e-9 THEN sqrt(GREATEST(1, CASE WHEN levels > 2
          THEN GREATEST(cyy - cxy * cxy / cxx, 0) / (levels - 2) ELSE 1 END) / cxx) END AS se
      FROM c;
      ALTER TABLE el_fit ADD PRIMARY KEY (pid);`);

    // Per category (its products and its descendants' products, each once): the within-product
    // pooled line, Σ of the products' centred sums, over the products with at least two levels.
    await conn.query(
      `INSERT INTO category_elasticities (category_id, elasticity, se, ci_low, ci_high, products, price_changes, trusted)
       WITH RECURSIVE up(category_id, ancestor_id) AS (
         SELECT id, id FROM categories
         UNION
         SELECT up.category_id, c.parent_id FROM up JOIN categories c ON c.id = up.ancestor_id
         WHERE c.parent_id IS NOT NULL
       ),
       members AS (
         SELECT DISTINCT up.ancestor_id AS category_id, f.pid
         FROM el_fit f
         JOIN product_categories pc ON pc.pid = f.pid
         JOIN up ON up.category_id = pc.category_id
         WHERE f.cxx > 1e-9
       ),
       pooled AS (
         SELECT m.category_id, count(*)::int AS products, SUM(f.changes)::int AS changes,
           SUM(f.levels) AS levels, SUM(f.cxx) AS cxx, SUM(f.cxy) AS cxy, SUM(f.cyy) AS cyy
         FROM members m JOIN el_fit f ON f.pid = m.pid
         GROUP BY 1
       ),
       fit AS (
         SELECT *, -cxy / cxx AS elasticity,
           sqrt(GREATEST(1, CASE WHEN levels - products - 1 > 0
             THEN GREATEST(cyy - cxy * cxy / cxx, 0) / (levels - products - 1) ELSE 1 END) / cxx) AS se
         FROM pooled
       )
       SELECT category_id, elasticity, se, elasticity - 1.96 * se, elasticity + 1.96 * se, products, changes,
         products >= $1 AND se <= $2 AND elasticity >= 0 AND elasticity <= $3
       FROM fit`,
      [CATEGORY_FIT_RULE.minProducts, CATEGORY_FIT_RULE.maxSe, CATEGORY_FIT_RULE.max],
    );

    // Per product: its own fit when trusted, else the deepest trusted category among its linked
    // categories and their ancestors (the narrower the category, the closer its products; ties:
    // the smaller standard error). Products with neither get no row: the global setting applies.
    // The chain is walked per category (a few hundred rows), each linked category's best trusted
    // ancestor-or-self picked, then the best of a product's linked categories: the same choice as
    // walking every product link (≈ 114k) up to the root.
    const rows = await conn.query(
      `WITH RECURSIVE up(category_id, ancestor_id) AS (
         SELECT id, id FROM categories
         UNION
         SELECT up.category_id, c.parent_id FROM up JOIN categories c ON c.id = up.ancestor_id
         WHERE c.parent_id IS NOT NULL
       ),
       linked_best AS (
         SELECT DISTINCT ON (up.category_id) up.category_id AS linked, ce.category_id, ce.elasticity,
           ce.ci_low, ce.ci_high, ce.se, c.level
         FROM up
         JOIN category_elasticities ce ON ce.category_id = up.ancestor_id AND ce.trusted
         JOIN categories c ON c.id = up.ancestor_id
         ORDER BY up.category_id, c.level DESC, ce.se, ce.category_id
       ),
       best AS (
         SELECT DISTINCT ON (pc.pid) pc.pid, b.category_id, b.elasticity, b.ci_low, b.ci_high
         FROM product_categories pc
         JOIN linked_best b ON b.linked = pc.category_id
         ORDER BY pc.pid, b.level DESC, b.se, b.category_id
       ),
       own AS (
         SELECT f.*, f.changes >= $1 AND f.discounted_units >= $2 AND f.se <= $3
           AND f.elasticity >= 0 AND f.elasticity <= $4 AS trusted
         FROM el_fit f
       ),
       ins AS (
         INSERT INTO product_elasticities (pid, source, elasticity, category_id, fitted, fitted_se, ci_low, ci_high,
           price_changes, weeks, discounted_weeks)
         SELECT p.pid,
           CASE WHEN o.trusted THEN 'product' ELSE 'category' END,
           CASE WHEN o.trusted THEN o.elasticity ELSE b.elasticity END,
           CASE WHEN o.trusted THEN NULL ELSE b.category_id END,
           o.elasticity, o.se,
           CASE WHEN o.trusted THEN o.elasticity - 1.96 * o.se ELSE b.ci_low END,
           CASE WHEN o.trusted THEN o.elasticity + 1.96 * o.se ELSE b.ci_high END,
           COALESCE(o.changes, 0), COALESCE(o.weeks, 0), COALESCE(o.discounted_weeks, 0)
         FROM products p
         LEFT JOIN own o ON o.pid = p.pid
         LEFT JOIN best b ON b.pid = p.pid
         WHERE o.trusted OR b.pid IS NOT NULL
         RETURNING 1
       )
       SELECT count(*)::int AS n FROM ins`,
      [OWN_FIT_RULE.minPriceChanges, OWN_FIT_RULE.minDiscountedUnits, OWN_FIT_RULE.maxSe, OWN_FIT_RULE.max],
    );
    await conn.exec("DROP TABLE el_levels, el_fit");
    await restore();
    return (rows[0] as { n: number } | undefined)?.n ?? 0;
  },
};
