// The stored series the dashboards read (docs/metrics.md §14): daily sales in total and per brand and
// vendor (module sales_series), and the weekly stock value at cost with the in-stock count of A
// products (module stock_series). Pages read these tables and never aggregate order lines themselves.
// The tables are keyed by a dimension (dim, key) so that further breakdowns add rows, not tables.
// Module sales_series also keeps, from the same pass over the lines, each product's units per
// calendar week for the Forecasting page's product detail (product_sales_weekly).
import { DETAIL_SERIES_WEEKS, detailSeriesStart, mondayOf } from "../../shared/forecasting.ts";
import { isMerchandiseSql } from "../../shared/metrics.ts";
import { BinaryRowWriter, copyOutDecoded, wholeQuotient } from "../db/binary-copy.ts";
import type { SqlConnection } from "../db/database.ts";
import { pacer } from "../db/pace.ts";
import { productCategoryAncestorsCte } from "../modules/config/category-types.ts";
import type { CalcModule } from "./calculate.ts";
import { orderLinesOf } from "./order-lines-pass.ts";
import { setLocal, utcDay, utcMidnight } from "./planning/context.ts";

const DAY_MS = 86_400_000;
/** Days of daily sales kept: two years and a day, so a 365-day range compares with the year before. */
export const SALES_SERIES_DAYS = 731;
/** Week ends of the stock-value series: D0, D0 − 7, … (53 of them, a year and a week). */
export const STOCK_SERIES_WEEKS = 53;

/** The moment the daily series starts: its first day's UTC midnight. */
function salesStart(asOf: Date): Date {
  return new Date(utcMidnight(asOf).getTime() - (SALES_SERIES_DAYS - 1) * DAY_MS);
}

/**
 * Temp tables <p>_pcs (pid, cs: the product's category set) and <p>_cs_members (cs, category_id):
 * every merchandise product linked to a product category gets the id of the set of those categories
 * and all their ancestors (product categories only, as in the aggregates, §11); products with the
 * same set share the id. Reads only categories, product_categories, products and settings.
 */
export const CATEGORY_SETS_SQL = (p: string) => `
  DROP TABLE IF EXISTS ${p}_up, ${p}_pcats, ${p}_pcs, ${p}_cs_members;
  CREATE TEMP TABLE ${p}_up ON COMMIT DROP AS
    ${productCategoryAncestorsCte()}
    SELECT category_id, ancestor_id FROM up;
  CREATE TEMP TABLE ${p}_pcats ON COMMIT DROP AS
    SELECT pc.pid, array_agg(DISTINCT up.ancestor_id ORDER BY up.ancestor_id) AS cats
    FROM product_categories pc
    JOIN ${p}_up up ON up.category_id = pc.category_id
    JOIN products pr ON pr.pid = pc.pid AND ${isMerchandiseSql("pr")}
    GROUP BY pc.pid;
  CREATE TEMP TABLE ${p}_sets ON COMMIT DROP AS
    SELECT cats, (row_number() OVER ())::int AS cs FROM (SELECT DISTINCT cats FROM ${p}_pcats) x;
  CREATE TEMP TABLE ${p}_pcs ON COMMIT DROP AS
    SELECT pc.pid, s.cs FROM ${p}_pcats pc JOIN ${p}_sets s ON s.cats = pc.cats;
  ALTER TABLE ${p}_pcs ADD PRIMARY KEY (pid);
  CREATE TEMP TABLE ${p}_cs_members ON COMMIT DROP AS
    SELECT cs, unnest(cats) AS category_id FROM ${p}_sets;
  ANALYZE ${p}_pcs;
  DROP TABLE ${p}_up, ${p}_pcats, ${p}_sets;`;

/**
 * Money in whole units of 1/`scale` (integers) as a whole number of units of 10^−`places`, rounded
 * half away from zero (−0 answered as 0).
 */
export function scaledToUnits(value: number, scale: number, places: number): number {
  const unit = scale / 10 ** places; // e.g. cogs in 1/10,000 shown in cents: 100
  const a = Math.abs(value);
  let q = wholeQuotient(a, unit);
  const r = a - q * unit;
  if (2 * r >= unit && unit > 1) q += 1;
  return value < 0 && q !== 0 ? -q : q;
}

/** Money in whole units of 1/`scale` (integers) as a decimal text with `places` places, rounded half away from zero. */
export function scaledToDecimal(value: number, scale: number, places: number): string {
  const q = Math.abs(scaledToUnits(value, scale, places));
  const div = 10 ** places;
  const whole = Math.floor(q / div);
  const frac = q - whole * div;
  const text = places > 0 ? `${whole}.${String(frac).padStart(places, "0")}` : String(whole);
  return value < 0 && q !== 0 ? `-${text}` : text;
}

/**
 * Products with at least this many completed lines in the product detail's weeks get a stored
 * weekly series (product_sales_weekly); the detail sums a product with fewer from its order lines
 * per request, which reads at most that many heap pages.
 */
export const WEEKLY_MIN_LINES = 128;

/** Bytes of a chunk of COPY input (lineChunks). */
const CHUNK_BYTES = 1 << 20;

/**
 * CSV lines as COPY input, in chunks of about 1 MB. Each line is written into the chunk's buffer as
 * it comes, so it is garbage at once: lines kept in a list until the chunk is joined (hundreds of
 * thousands of them for the daily series) outlive the young generation's collections and pile up
 * as old garbage, tens of MB of the run's peak memory.
 */
export async function* lineChunks(lines: Iterable<string>): AsyncGenerator<Buffer> {
  let chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  let used = 0;
  for (const line of lines) {
    // (A UTF-16 unit is at most 3 bytes of UTF-8: most lines need no count.)
    const room = CHUNK_BYTES - used;
    if (line.length * 3 > room && Buffer.byteLength(line) > room) {
      if (used > 0) yield chunk.subarray(0, used);
      chunk = Buffer.allocUnsafe(CHUNK_BYTES);
      used = 0;
      if (Buffer.byteLength(line) > CHUNK_BYTES) {
        yield Buffer.from(line);
        continue;
      }
    }
    used += chunk.write(line, used);
  }
  if (used > 0) yield chunk.subarray(0, used);
}

/** The measures of a dimension's day cell (sales_daily's columns, money in integers). */
const UNITS = 0;
const REVENUE_C = 1;
const COSTED_C = 2;
const COGS_M = 3;
const RET_UNITS = 4;
const RET_C = 5;
const MEASURES = 6;

export const salesSeriesModule: CalcModule = {
  name: "sales_series",
  readsOrderLines: true,
  tables: ["sales_daily", "product_sales_weekly"],
  // Reads only imported tables: a Full Reset on PostgreSQL runs it on its second connection.
  beside: true,
  async run(ctx) {
    const { conn, asOf } = ctx;
    await conn.exec("TRUNCATE sales_daily, product_sales_weekly");
    const start = salesStart(asOf);
    const days = SALES_SERIES_DAYS;
    // The product detail's weekly series: the DETAIL_SERIES_WEEKS calendar weeks (Monday to Sunday,
    // UTC) before the as-of day's week. They reach further back than the daily window (three years
    // against two); a line's week is (its day − the first Monday) ÷ 7, its day counted from the
    // daily window's first (`shift` days after that Monday).
    const weeksFrom = detailSeriesStart(mondayOf(utcDay(asOf)));
    const weeksStart = new Date(`${weeksFrom}T00:00:00Z`);
    const shift = Math.round((start.getTime() - weeksStart.getTime()) / DAY_MS);
    // Every merchandise product linked to a product category gets its category set (the linked
    // categories and their ancestors, product categories only, §11): a line adds to each category of
    // its product's set once, so a category counts each product once however many of its
    // sub-categories the product is in.
    await conn.exec(CATEGORY_SETS_SQL("ss"));
    // Per product: brand, vendor, category set, cost in 1/10,000 (the cost price's scale, exact in a
    // double), merchandise or not.
    const products = await conn.query<{
      pid: number;
      brand_id: number | null;
      vendor_id: number | null;
      cs: number | null;
      cost_m: number | null;
      merch: boolean;
    }>(
      `SELECT p.pid, p.brand_id, p.vendor_id, c.cs, (p.cost_price * 10000)::int8::float8 AS cost_m,
         ${isMerchandiseSql("p")} AS merch
       FROM products p LEFT JOIN ss_pcs c ON c.pid = p.pid`,
    );
    const members = await conn.query<{ cs: number; category_id: number }>(
      "SELECT cs, category_id FROM ss_cs_members ORDER BY cs, category_id",
    );
    await conn.exec("DROP TABLE ss_pcs, ss_cs_members");

    // Dense indexes: products, brands, vendors, categories; each category set as a list of
    // category indexes.
    const dense = () => {
      const ids: number[] = [];
      const index = new Map<number, number>();
      const of = (id: number) => {
        let i = index.get(id);
        if (i === undefined) {
          i = ids.length;
          index.set(id, i);
          ids.push(id);
        }
        return i;
      };
      return { ids, of };
    };
    const brands = dense();
    const vendors = dense();
    const categories = dense();
    const sets = new Map<number, number[]>();
    for (const m of members) {
      const list = sets.get(m.cs) ?? [];
      if (list.length === 0) sets.set(m.cs, list);
      list.push(categories.of(m.category_id));
    }
    const productIndex = new Map<number, number>();
    const n = products.length;
    const brandOf = new Int32Array(n);
    const vendorOf = new Int32Array(n);
    const costOf = new Float64Array(n);
    const merchOf = new Uint8Array(n);
    const setOf: (number[] | undefined)[] = new Array(n);
    products.forEach((p, i) => {
      productIndex.set(p.pid, i);
      brandOf[i] = p.brand_id === null ? -1 : brands.of(p.brand_id);
      vendorOf[i] = p.vendor_id === null ? -1 : vendors.of(p.vendor_id);
      costOf[i] = p.cost_m === null ? Number.NaN : Number(p.cost_m);
      merchOf[i] = p.merch ? 1 : 0;
      setOf[i] = p.cs === null ? undefined : sets.get(p.cs);
    });

    const nBrands = brands.ids.length;
    const nVendors = vendors.ids.length;
    const nCategories = categories.ids.length;
    // Cells: [day × keys + key index] × MEASURES (day-major: the lines come about in date order, so
    // one day's cells of every key are written together and stay in the cache). The total also keeps takings (every completed
    // line, merchandise or not), its orders, and whether the day had any line at all.
    const brandCells = new Float64Array(brands.ids.length * days * MEASURES);
    const vendorCells = new Float64Array(vendors.ids.length * days * MEASURES);
    const categoryCells = new Float64Array(categories.ids.length * days * MEASURES);
    const totalCells = new Float64Array(days * MEASURES);
    const takings = new Float64Array(days);
    const hasLine = new Uint8Array(days);
    const W = DETAIL_SERIES_WEEKS;
    const add = (cells: Float64Array, at: number, done: boolean, q: number, amount: number, cost: number) => {
      if (done) {
        cells[at + UNITS] = cells[at + UNITS]! + q;
        cells[at + REVENUE_C] = cells[at + REVENUE_C]! + amount;
        if (!Number.isNaN(cost)) {
          cells[at + COSTED_C] = cells[at + COSTED_C]! + amount;
          cells[at + COGS_M] = cells[at + COGS_M]! + q * cost;
        }
      } else {
        cells[at + RET_UNITS] = cells[at + RET_UNITS]! + q;
        cells[at + RET_C] = cells[at + RET_C]! + amount;
      }
    };

    // The window's completed and returned lines, from the run's one pass over the order lines
    // (order-lines-pass.ts): product, UTC day, completed or not, quantity and amount in cents
    // (quantity × price − discount, §1: exact, the prices have two decimals).
    // Each line is added to its day in total, and in its brand, vendor and categories when the
    // product is merchandise. (Grouping these in SQL took four hashed or sorted passes over the
    // 3M lines of the large demo set and about 20 s of CPU.)
    // A completed line also adds to its product's week (any product, as the detail reads them).
    const pass = await orderLinesOf(ctx);
    const localOf = new Int32Array(pass.pids.length).fill(-1);
    for (let p = 0; p < pass.pids.length; p++) {
      const i = productIndex.get(pass.pids[p]!);
      if (i !== undefined) localOf[p] = i;
    }
    // Each product's category set as a run of a flat array: setFlat[setFrom[i] … setFrom[i + 1]).
    const setFrom = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) setFrom[i + 1] = setFrom[i]! + (setOf[i]?.length ?? 0);
    const setFlat = new Int32Array(setFrom[n]!);
    for (let i = 0; i < n; i++) setFlat.set(setOf[i] ?? [], setFrom[i]!);
    const firstDay = Math.round(start.getTime() / DAY_MS);
    // Each product's completed lines in the detail's weeks, then a slot for each product with at
    // least WEEKLY_MIN_LINES of them (the only ones stored: a few thousand of 50k).
    const weekLines = new Int32Array(n);
    const pace = pacer();
    for (const chunk of pass.chunks) {
      await pace();
      const { product, day, done } = chunk;
      for (let j = 0; j < chunk.n; j++) {
        const i = localOf[product[j]!]!;
        if (i < 0 || !done[j]) continue;
        const w = Math.floor((day[j]! - firstDay + shift) / 7);
        if (w >= 0 && w < W) weekLines[i] = weekLines[i]! + 1;
      }
    }
    const weekSlot = new Int32Array(n).fill(-1);
    let slots = 0;
    for (let i = 0; i < n; i++) if (weekLines[i]! >= WEEKLY_MIN_LINES) weekSlot[i] = slots++;
    // Per week and slot (week-major: the lines come in date order, so one week's cells are written
    // together), 2 × the completed units + 1 once the week has a completed line, 0 while it has
    // none (a week whose lines sum to 0 is stored with 0 units, a week without lines not at all, as
    // grouping the lines gives them).
    const weekCells = new Int32Array(W * slots);
    for (const chunk of pass.chunks) {
      await pace();
      const { product, day, done: doneOf, quantity, amountC } = chunk;
      for (let j = 0; j < chunk.n; j++) {
        const i = localOf[product[j]!]!;
        if (i < 0) continue;
        const d = day[j]! - firstDay;
        const done = doneOf[j] === 1;
        const q = quantity[j]!;
        const slot = weekSlot[i]!;
        if (done && slot >= 0) {
          const w = Math.floor((d + shift) / 7);
          if (w >= 0 && w < W) {
            const at = w * slots + slot;
            weekCells[at] = (weekCells[at]! || 1) + 2 * q;
          }
        }
        if (d < 0 || d >= days) continue;
        const amount = amountC[j]!;
        hasLine[d] = 1;
        if (done) takings[d] = takings[d]! + amount;
        if (!merchOf[i]) continue;
        const cost = costOf[i]!;
        add(totalCells, d * MEASURES, done, q, amount, cost);
        const b = brandOf[i]!;
        if (b >= 0) add(brandCells, (d * nBrands + b) * MEASURES, done, q, amount, cost);
        const v = vendorOf[i]!;
        if (v >= 0) add(vendorCells, (d * nVendors + v) * MEASURES, done, q, amount, cost);
        for (let s = setFrom[i]!, to = setFrom[i + 1]!; s < to; s++)
          add(categoryCells, (d * nCategories + setFlat[s]!) * MEASURES, done, q, amount, cost);
      }
    }
    // Orders per day: distinct order numbers with a completed line (an order's lines share its
    // day), counted by the pass as it read them.
    const orders = new Int32Array(days);
    for (let d = 0; d < days; d++) orders[d] = pass.ordersByDay.get(firstDay + d) ?? 0;

    // The rows, as binary COPY input (no number formatted here nor parsed by the database): a total
    // row for every day with a line, and a row per brand, vendor and category for each day it sold or
    // had a return (merchandise). Money in cents (cogs from 1/10,000, rounded half away from zero).
    const active = (cells: Float64Array, at: number) =>
      cells[at + UNITS] !== 0 ||
      cells[at + REVENUE_C] !== 0 ||
      cells[at + RET_UNITS] !== 0 ||
      cells[at + RET_C] !== 0;
    function* rows(): Generator<Buffer> {
      const out = new BinaryRowWriter();
      const row = (
        dim: string,
        key: number,
        d: number,
        cells: Float64Array,
        at: number,
        takingsC: number,
        orderCount: number,
      ) => {
        out.row(11);
        out.text(dim);
        out.int4(key);
        out.date(firstDay + d);
        out.int4(cells[at + UNITS]!);
        out.numeric(cells[at + REVENUE_C]!, 2);
        out.numeric(takingsC, 2);
        out.numeric(cells[at + COSTED_C]!, 2);
        out.numeric(scaledToUnits(cells[at + COGS_M]!, 10_000, 2), 2);
        out.int4(orderCount);
        out.int4(cells[at + RET_UNITS]!);
        out.numeric(cells[at + RET_C]!, 2);
      };
      // In the order of the table's key (dim, key, day), so that building its index finds the rows
      // sorted already (half the time of sorting them).
      function* dimRows(dim: string, cells: Float64Array, ids: readonly number[]): Generator<Buffer> {
        const order = ids.map((_, k) => k).sort((a, b) => ids[a]! - ids[b]!);
        for (const k of order) {
          for (let d = 0; d < days; d++) {
            const at = (d * ids.length + k) * MEASURES;
            if (active(cells, at)) row(dim, ids[k]!, d, cells, at, cells[at + REVENUE_C]!, 0);
            if (out.full) yield out.take();
          }
        }
      }
      yield* dimRows("brand", brandCells, brands.ids);
      yield* dimRows("category", categoryCells, categories.ids);
      for (let d = 0; d < days; d++) {
        if (hasLine[d]) row("total", 0, d, totalCells, d * MEASURES, takings[d]!, orders[d]!);
        if (out.full) yield out.take();
      }
      yield* dimRows("vendor", vendorCells, vendors.ids);
      yield out.end();
    }
    const daily = await conn.copyCsv({
      table: "sales_daily",
      columns: [
        "dim",
        "key",
        "day",
        "units",
        "revenue",
        "takings",
        "costed_revenue",
        "cogs",
        "orders",
        "returned_units",
        "returned_value",
      ],
      source: rows(),
      header: false,
      binary: true,
    });

    // The weeks with a completed line of every product with at least WEEKLY_MIN_LINES completed
    // lines in them, as two arrays: the week (0 = the Monday weeksFrom, … DETAIL_SERIES_WEEKS − 1 =
    // the week before the as-of day's) and its units. A product with fewer lines has no row: the
    // detail sums its few lines (as many heap pages at most) per request.
    function* weekRows(): Generator<string> {
      const weeks: number[] = [];
      const units: number[] = [];
      for (const [pid, i] of productIndex) {
        const slot = weekSlot[i]!;
        if (slot < 0) continue;
        weeks.length = 0;
        units.length = 0;
        for (let w = 0, at = slot; w < W; w++, at += slots) {
          const cell = weekCells[at]!;
          if (cell !== 0) {
            weeks.push(w);
            units.push((cell - 1) / 2);
          }
        }
        yield `${pid},${weeksFrom},"{${weeks.join(",")}}","{${units.join(",")}}"\n`;
      }
    }
    const weekly = await conn.copyCsv({
      table: "product_sales_weekly",
      columns: ["pid", "first_week", "weeks", "units"],
      source: lineChunks(weekRows()),
      header: false,
    });
    return daily + weekly;
  },
};

/**
 * Temp tables <p>_up (category_id, root_id), <p>_proots (pid, roots, rs), <p>_sets (roots, rs) and
 * <p>_members (rs, root_id): every product linked to a product category gets the set of top-level
 * product categories above its linked ones (its roots), and products with the same roots share the
 * set's id rs. Reads only categories, product_categories and settings.
 */
export const ROOT_SETS_SQL = (p: string) => `
    DROP TABLE IF EXISTS ${p}_up, ${p}_proots, ${p}_sets, ${p}_members;
    CREATE TEMP TABLE ${p}_up ON COMMIT DROP AS
      ${productCategoryAncestorsCte()}
      SELECT up.category_id, up.ancestor_id AS root_id FROM up
      JOIN pcat r ON r.id = up.ancestor_id
      WHERE r.parent_id IS NULL OR r.parent_id NOT IN (SELECT id FROM pcat);
    CREATE TEMP TABLE ${p}_proots ON COMMIT DROP AS
      SELECT pc.pid, array_agg(DISTINCT up.root_id ORDER BY up.root_id) AS roots
      FROM product_categories pc JOIN ${p}_up up ON up.category_id = pc.category_id
      GROUP BY pc.pid;
    CREATE TEMP TABLE ${p}_sets ON COMMIT DROP AS
      SELECT roots, (row_number() OVER ())::int AS rs FROM (SELECT DISTINCT roots FROM ${p}_proots) x;
    CREATE TEMP TABLE ${p}_members ON COMMIT DROP AS SELECT rs, unnest(roots) AS root_id FROM ${p}_sets;
    ALTER TABLE ${p}_proots ADD COLUMN rs int;
    UPDATE ${p}_proots p SET rs = s.rs FROM ${p}_sets s WHERE s.roots = p.roots;
    ANALYZE ${p}_proots;`;

/**
 * Stock value at cost at each week end from the reconstructed stock (product_stock_history, §2),
 * and how many of today's A products were in stock then. A product's stock on a day is the run
 * covering it. Each run adds stock × cost from its first day
 * and takes it away after its last; those changes, summed per week end they precede and running
 * total over the weeks, give the value at each week end without expanding runs into days.
 */
export const stockSeriesModule: CalcModule = {
  name: "stock_series",
  tables: ["stock_value_weekly"],
  async run(ctx) {
    const { conn, asOf } = ctx;
    const restore = await setLocal(conn, { jit: "off", work_mem: "64MB" });
    await conn.exec("TRUNCATE stock_value_weekly");
    const d0 = utcDay(asOf);
    // Each merchandise product's set of top-level product categories (the roots above its linked
    // ones): the value per top-level category is summed per (week, root set) and each set's weeks
    // added to its roots. Products have one or two roots, so there are few sets.
    await conn.exec(ROOT_SETS_SQL("st"));
    const { products, sets, members } = await stockSeriesProducts(conn);
    const weeks = STOCK_SERIES_WEEKS;
    const last = weeks - 1;
    // Per week (w: 0 = the oldest week end, D0 − 7 × 52; 52 = D0): the change of stock units and
    // value (in 1/10,000 of the currency: the cost price's scale, so units × cost add up as
    // integers, exactly), in total and per root set (row rs × weeks + w), and of today's A products
    // that are in stock (0/1) and alive (0/1: a run covers the day; runs follow each other from the
    // life start to D0). A run changes them on the week end on or after its first day, and back on
    // the one on or after the day after its last (changes after D0 never count).
    const units = new Float64Array(weeks * (sets + 1));
    const value = new ValueSums(weeks * (sets + 1));
    const inStockA = new Float64Array(weeks);
    const aliveA = new Float64Array(weeks);
    const seen = new Uint8Array(sets + 1);
    // The week index of a day given as its offset from D0 − 364: ⌈offset ÷ 7⌉, 0 for earlier days.
    const weekOf = (offset: number) => Math.max(Math.trunc((offset + 6) / 7), 0);
    const change = (p: number, w: number, sign: number, stock: number) => {
      if (w > last) return;
      const u = stock > 0 ? sign * stock : 0;
      const cost = products.cost[p]!;
      const rs = products.rs[p]!;
      units[w]! += u;
      if (!Number.isNaN(cost)) value.add(w, u, cost);
      if (rs > 0) {
        const at = rs * weeks + w;
        units[at]! += u;
        if (!Number.isNaN(cost)) value.add(at, u, cost);
        seen[rs] = 1;
      }
      if (products.a[p]) {
        if (stock > 0) inStockA[w]! += sign;
        aliveA[w]! += sign;
      }
    };
    const run = (p: number | undefined, from: number, to: number, stock: number) => {
      if (p === undefined) return;
      change(p, weekOf(from), 1, stock);
      if (to < 364) change(p, weekOf(to + 1), -1, stock);
    };
    // The runs module stock_history wrote earlier in this run, as it kept them (their days are
    // offsets from D0 − 364 already); else product_stock_history as stored.
    const kept = ctx.shared?.takeStockRuns(asOf);
    if (kept) {
      let lastPid = Number.NaN;
      let p: number | undefined;
      for (let i = 0; i < kept.n; i++) {
        const pid = kept.pid[i]!;
        if (pid !== lastPid) {
          lastPid = pid;
          p = products.index.get(pid);
        }
        run(p, kept.from[i]!, kept.to[i]!, kept.stock[i]!);
      }
    } else {
      await copyOutDecoded(
        conn,
        `COPY (SELECT pid, valid_from - (DATE '${d0}' - 364), valid_to - (DATE '${d0}' - 364), stock
         FROM product_stock_history) TO STDOUT (FORMAT binary)`,
        ["int4", "int4", "int4", "int4"],
        (row) =>
          run(products.index.get(row[0] as number), row[1] as number, row[2] as number, row[3] as number),
      );
    }
    // The series: per key, the running sums of the changes over the 53 weeks. The total always; a
    // top-level category when one of its root sets had a change.
    const dims: string[] = [];
    const keys: number[] = [];
    const ws: number[] = [];
    const values: string[] = [];
    const unitSums: number[] = [];
    const inStock: number[] = [];
    const alive: number[] = [];
    const series = (dim: string, key: number, rows: number[]) => {
      let u = 0;
      let v = 0n;
      let s = 0;
      let a = 0;
      for (let w = 0; w < weeks; w++) {
        for (const r of rows) {
          u += units[r * weeks + w]!;
          v += value.total(r * weeks + w);
        }
        if (dim === "total") {
          s += inStockA[w]!;
          a += aliveA[w]!;
        }
        dims.push(dim);
        keys.push(key);
        ws.push(w);
        values.push(String(v));
        unitSums.push(u);
        inStock.push(s);
        alive.push(a);
      }
    };
    series("total", 0, [0]);
    const roots = new Map<number, number[]>();
    for (const { rs, root } of members) {
      if (!seen[rs]) continue;
      const list = roots.get(root);
      if (list) list.push(rs);
      else roots.set(root, [rs]);
    }
    for (const [root, list] of [...roots].sort((x, y) => x[0] - y[0])) series("category", root, list);
    const rows = await conn.execute(
      `INSERT INTO stock_value_weekly (dim, key, week_end, value_cost, units, in_stock_a, a_products)
       SELECT dim, key, $1::date - 7 * (52 - w), round(v / 10000, 2), u::int, s::int, a::int
       FROM unnest($2::text[], $3::int[], $4::int[], $5::numeric[], $6::numeric[], $7::numeric[], $8::numeric[])
         AS x(dim, key, w, v, u, s, a)`,
      [d0, dims, keys, ws, values, unitSums, inStock, alive],
    );
    await conn.exec("DROP TABLE st_up, st_proots, st_sets, st_members");
    await restore();
    return rows;
  },
};

/**
 * The merchandise products stock_series counts, by index (index: pid → index): the cost price in
 * 1/10,000 (NaN without one), whether of ABC class A today (1/0), and the root set (st_proots.rs, 0
 * for none); the number of root sets and each set's top-level categories (st_members).
 */
async function stockSeriesProducts(conn: SqlConnection) {
  const index = new Map<number, number>();
  const cost: number[] = [];
  const a: number[] = [];
  const rs: number[] = [];
  await copyOutDecoded(
    conn,
    `COPY (SELECT p.pid, (p.cost_price * 10000)::int8, COALESCE((m.abc_class = 'A')::int, 0), COALESCE(r.rs, 0)
     FROM products p
     LEFT JOIN product_metrics m ON m.pid = p.pid
     LEFT JOIN st_proots r ON r.pid = p.pid
     WHERE ${isMerchandiseSql("p")}) TO STDOUT (FORMAT binary)`,
    ["int4", "int8", "int4", "int4"],
    (row) => {
      index.set(row[0] as number, cost.length);
      cost.push(row[1] === null ? Number.NaN : (row[1] as number));
      a.push(row[2] as number);
      rs.push(row[3] as number);
    },
  );
  const members = await conn.query<{ rs: number; root: number }>(
    "SELECT rs, root_id AS root FROM st_members ORDER BY rs, root_id",
  );
  const [count] = await conn.query<{ n: number }>("SELECT COALESCE(max(rs), 0)::int AS n FROM st_sets");
  return {
    products: { index, cost: Float64Array.from(cost), a: Uint8Array.from(a), rs: Int32Array.from(rs) },
    sets: count?.n ?? 0,
    members,
  };
}

/**
 * Exact sums of integer products u × c per cell: in doubles while every step stays a safe integer
 * (|x| < 2^53), the rest in a BigInt per cell, so no sum is ever rounded.
 */
class ValueSums {
  private readonly small: Float64Array;
  private readonly big = new Map<number, bigint>();
  constructor(cells: number) {
    this.small = new Float64Array(cells);
  }
  add(cell: number, u: number, c: number): void {
    const t = u * c;
    if (Number.isSafeInteger(t)) {
      const s = this.small[cell]! + t;
      if (Number.isSafeInteger(s)) {
        this.small[cell] = s;
        return;
      }
    }
    this.big.set(cell, (this.big.get(cell) ?? 0n) + BigInt(this.small[cell]!) + BigInt(u) * BigInt(c));
    this.small[cell] = 0;
  }
  total(cell: number): bigint {
    return BigInt(this.small[cell]!) + (this.big.get(cell) ?? 0n);
  }
}
