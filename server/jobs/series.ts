// The stored series the dashboards read (docs/metrics.md §14): daily sales in total and per brand and
// vendor (module sales_series), and the weekly stock value at cost with the in-stock count of A
// products (module stock_series). Pages read these tables and never aggregate order lines themselves.
// The tables are keyed by a dimension (dim, key) so that further breakdowns add rows, not tables.
// Module sales_series also keeps, from the same pass over the lines, each product's units per
// calendar week for the Forecasting page's product detail (product_sales_weekly).
import { DETAIL_SERIES_WEEKS, detailSeriesStart, mondayOf } from "../../shared/forecasting.ts";
import { isMerchandiseSql } from "../../shared/metrics.ts";
import { PRODUCT_CATEGORY_TYPES_SQL } from "../modules/config/category-types.ts";
import type { CalcModule } from "./calculate.ts";
import { orderLinesOf } from "./order-lines-pass.ts";
import { setLocal, utcDay, utcMidnight } from "./planning/context.ts";

const DAY_MS = 86_400_000;
/** Days of daily sales kept: two years and a day, so a 365-day range compares with the year before. */
export const SALES_SERIES_DAYS = 731;
/** Week ends of the stock-value series: D0, D0 − 7, … (53 of them, a year and a week). */
export const STOCK_SERIES_WEEKS = 53;

/** The first day of the daily series and the moment it starts. */
function salesWindow(asOf: Date) {
  const start = new Date(utcMidnight(asOf).getTime() - (SALES_SERIES_DAYS - 1) * DAY_MS);
  return { start, first: utcDay(start) };
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
    WITH RECURSIVE pcat AS (
      SELECT id, parent_id FROM categories WHERE type IN ${PRODUCT_CATEGORY_TYPES_SQL}
    ),
    up(category_id, ancestor_id) AS (
      SELECT id, id FROM pcat
      UNION
      SELECT up.category_id, c.parent_id
      FROM up JOIN pcat c ON c.id = up.ancestor_id
      WHERE c.parent_id IN (SELECT id FROM pcat)
    )
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

/** Money in whole units of 1/`scale` (integers) as a decimal text with `places` places, rounded half away from zero. */
export function scaledToDecimal(value: number, scale: number, places: number): string {
  const unit = scale / 10 ** places; // e.g. cogs in 1/10,000 shown in cents: 100
  const a = Math.abs(value);
  // Exact integer division (a < 2^53): the quotient from floating point, corrected by the rest.
  let q = Math.floor(a / unit);
  let r = a - q * unit;
  if (r < 0) {
    q -= 1;
    r += unit;
  } else if (r >= unit) {
    q += 1;
    r -= unit;
  }
  if (2 * r >= unit && unit > 1) q += 1;
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

/** CSV lines as COPY input, joined into chunks of about 1 MB. */
export async function* lineChunks(lines: Iterable<string>): AsyncGenerator<Buffer> {
  let parts: string[] = [];
  let size = 0;
  for (const line of lines) {
    parts.push(line);
    size += line.length;
    if (size >= 1 << 20) {
      yield Buffer.from(parts.join(""));
      parts = [];
      size = 0;
    }
  }
  if (parts.length) yield Buffer.from(parts.join(""));
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
  tables: ["sales_daily", "product_sales_weekly"],
  // Reads only imported tables: a Full Reset on PostgreSQL runs it on its second connection.
  beside: true,
  async run(ctx) {
    const { conn, asOf } = ctx;
    await conn.exec("TRUNCATE sales_daily, product_sales_weekly");
    const { start, first } = salesWindow(asOf);
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
    // Per week and product (week-major: the lines come in date order, so one week's cells are
    // written together), 2 × the completed units + 1 once the week has a completed line, 0 while
    // it has none (a week whose lines sum to 0 is stored with 0 units, a week without lines not at
    // all, as grouping the lines gives them); and each product's completed lines in those weeks.
    const W = DETAIL_SERIES_WEEKS;
    const weekCells = new Int32Array(W * n);
    const weekLines = new Int32Array(n);
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
    for (const chunk of pass.chunks) {
      const { product, day, done: doneOf, quantity, amountC } = chunk;
      for (let j = 0; j < chunk.n; j++) {
        const i = localOf[product[j]!]!;
        if (i < 0) continue;
        const d = day[j]! - firstDay;
        const done = doneOf[j] === 1;
        const q = quantity[j]!;
        if (done) {
          const w = Math.floor((d + shift) / 7);
          if (w >= 0 && w < W) {
            const at = w * n + i;
            weekCells[at] = (weekCells[at]! || 1) + 2 * q;
            weekLines[i] = weekLines[i]! + 1;
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
    // The last of the run's modules that reads the pass: its arrays can go.
    ctx.shared?.releaseOrderLines();

    // Orders per day: distinct order numbers with a completed line (an order's lines share its day).
    // Counted by the database (1.3M distinct order numbers over two years would cost the app a few
    // hundred MB as strings): one hashed pass, on the second connection of a Full Reset, which has
    // room for it.
    const orders = new Int32Array(days);
    for (const o of await conn.query<{ d: number; n: number }>(
      `SELECT d, count(*)::int AS n FROM (
         SELECT DISTINCT ((order_date AT TIME ZONE 'UTC')::date - $3::date)::int AS d, order_number FROM order_lines
         WHERE status = 'completed' AND order_date >= $1::timestamptz AND order_date <= $2::timestamptz
       ) o GROUP BY d`,
      [start, asOf, first],
    )) {
      if (o.d >= 0 && o.d < days) orders[o.d] = o.n;
    }

    // The rows, as CSV for COPY: a total row for every day with a line, and a row per brand, vendor
    // and category for each day it sold or had a return (merchandise).
    const dayText = Array.from({ length: days }, (_, d) => utcDay(new Date(start.getTime() + d * DAY_MS)));
    const money = (c: number) => scaledToDecimal(c, 100, 2);
    const cellText = (cells: Float64Array, at: number, takingsC: number, orderCount: number) =>
      `${cells[at + UNITS]},${money(cells[at + REVENUE_C]!)},${money(takingsC)},${money(cells[at + COSTED_C]!)},` +
      `${scaledToDecimal(cells[at + COGS_M]!, 10_000, 2)},${orderCount},${cells[at + RET_UNITS]},${money(cells[at + RET_C]!)}`;
    const active = (cells: Float64Array, at: number) =>
      cells[at + UNITS] !== 0 ||
      cells[at + REVENUE_C] !== 0 ||
      cells[at + RET_UNITS] !== 0 ||
      cells[at + RET_C] !== 0;
    function* lines(): Generator<string> {
      for (let d = 0; d < days; d++) {
        if (hasLine[d])
          yield `total,0,${dayText[d]},${cellText(totalCells, d * MEASURES, takings[d]!, orders[d]!)}\n`;
      }
      for (const [dim, cells, ids] of [
        ["brand", brandCells, brands.ids],
        ["vendor", vendorCells, vendors.ids],
        ["category", categoryCells, categories.ids],
      ] as const) {
        for (let k = 0; k < ids.length; k++) {
          for (let d = 0; d < days; d++) {
            const at = (d * ids.length + k) * MEASURES;
            if (active(cells, at))
              yield `${dim},${ids[k]},${dayText[d]},${cellText(cells, at, cells[at + REVENUE_C]!, 0)}\n`;
          }
        }
      }
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
      source: lineChunks(lines()),
      header: false,
    });

    // The weeks with a completed line of every product with at least WEEKLY_MIN_LINES completed
    // lines in them, as two arrays: the week (0 = the Monday weeksFrom, … DETAIL_SERIES_WEEKS − 1 =
    // the week before the as-of day's) and its units. A product with fewer lines has no row: the
    // detail sums its few lines (as many heap pages at most) per request.
    function* weekRows(): Generator<string> {
      const weeks: number[] = [];
      const units: number[] = [];
      for (const [pid, i] of productIndex) {
        if (weekLines[i]! < WEEKLY_MIN_LINES) continue;
        weeks.length = 0;
        units.length = 0;
        for (let w = 0, at = i; w < W; w++, at += n) {
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
 * Stock value at cost at each week end from the reconstructed stock (product_stock_history, §2),
 * and how many of today's A products were in stock then. A product's stock on a day is the run
 * covering it. Each run adds stock × cost from its first day
 * and takes it away after its last; those changes, summed per week end they precede and running
 * total over the weeks, give the value at each week end without expanding runs into days.
 */
export const stockSeriesModule: CalcModule = {
  name: "stock_series",
  tables: ["stock_value_weekly"],
  async run({ conn, asOf }) {
    const restore = await setLocal(conn, { jit: "off", work_mem: "64MB" });
    await conn.exec("TRUNCATE stock_value_weekly");
    const d0 = utcDay(asOf);
    // Week index w (0 = the oldest week end, D0 − 7 × 52; 52 = D0) of the first week end on or
    // after a day; changes after D0 never count.
    // (Whole-number arithmetic: for d ≥ 0 days, ⌈d ÷ 7⌉ = (d + 6) ÷ 7 in integer division; a
    // numeric ceil per stock run cost more than the rest of the statement.)
    const week = (day: string) => `GREATEST((${day} - ($1::date - 364) + 6) / 7, 0)`;
    // Per week: the change of stock units and value, and of today's A products that are in stock
    // (0/1) and alive (0/1: a run covers the day; runs follow each other from the life start to D0).
    // Each merchandise product's set of top-level product categories (the roots above its linked
    // ones): the value per top-level category is summed per (week, root set) and each set's weeks
    // added to its roots. Products have one or two roots, so there are few sets.
    await conn.exec(`
      DROP TABLE IF EXISTS st_up, st_proots, st_sets, st_members;
      CREATE TEMP TABLE st_up ON COMMIT DROP AS
        WITH RECURSIVE pcat AS (
          SELECT id, parent_id FROM categories WHERE type IN ${PRODUCT_CATEGORY_TYPES_SQL}
        ),
        up(category_id, ancestor_id) AS (
          SELECT id, id FROM pcat
          UNION
          SELECT up.category_id, c.parent_id
          FROM up JOIN pcat c ON c.id = up.ancestor_id
          WHERE c.parent_id IN (SELECT id FROM pcat)
        )
        SELECT up.category_id, up.ancestor_id AS root_id FROM up
        JOIN pcat r ON r.id = up.ancestor_id
        WHERE r.parent_id IS NULL OR r.parent_id NOT IN (SELECT id FROM pcat);
      CREATE TEMP TABLE st_proots ON COMMIT DROP AS
        SELECT pc.pid, array_agg(DISTINCT up.root_id ORDER BY up.root_id) AS roots
        FROM product_categories pc JOIN st_up up ON up.category_id = pc.category_id
        GROUP BY pc.pid;
      CREATE TEMP TABLE st_sets ON COMMIT DROP AS
        SELECT roots, (row_number() OVER ())::int AS rs FROM (SELECT DISTINCT roots FROM st_proots) x;
      CREATE TEMP TABLE st_members ON COMMIT DROP AS SELECT rs, unnest(roots) AS root_id FROM st_sets;
      ALTER TABLE st_proots ADD COLUMN rs int;
      UPDATE st_proots p SET rs = s.rs FROM st_sets s WHERE s.roots = p.roots;
      ANALYZE st_proots;`);
    const rows = await conn.execute(
      `WITH changes AS (
         SELECT h.pid, ${week("h.valid_from")} AS w, GREATEST(h.stock, 0) AS units, (h.stock > 0)::int AS in_stock, 1 AS alive
         FROM product_stock_history h
         UNION ALL
         SELECT h.pid, ${week("(h.valid_to + 1)")}, -GREATEST(h.stock, 0), -(h.stock > 0)::int, -1
         FROM product_stock_history h WHERE h.valid_to < $1::date
       ),
       grouped AS (
         SELECT c.w, r.rs, GROUPING(r.rs) AS g, SUM(c.units) AS units, COALESCE(SUM(c.units * p.cost_m), 0) AS value_m,
           COALESCE(SUM(c.in_stock) FILTER (WHERE m.abc_class = 'A'), 0) AS in_stock_a,
           COALESCE(SUM(c.alive) FILTER (WHERE m.abc_class = 'A'), 0) AS a_products
         FROM changes c
         -- The cost price in 1/10,000 (its scale): units × cost sum as integers, exactly.
         JOIN (SELECT pid, kind, (cost_price * 10000)::int8 AS cost_m FROM products) p ON p.pid = c.pid
         LEFT JOIN product_metrics m ON m.pid = c.pid
         LEFT JOIN st_proots r ON r.pid = c.pid
         WHERE c.w <= 52 AND ${isMerchandiseSql("p")}
         GROUP BY GROUPING SETS ((c.w), (c.w, r.rs))
       ),
       per_week AS (
         SELECT 'total' AS dim, 0 AS key, w, units, value_m, in_stock_a, a_products FROM grouped WHERE g = 1
         UNION ALL
         SELECT 'category', mb.root_id, x.w, SUM(x.units), SUM(x.value_m), 0, 0
         FROM grouped x JOIN st_members mb ON mb.rs = x.rs
         WHERE x.g = 0
         GROUP BY mb.root_id, x.w
       ),
       keys AS (SELECT 'total' AS dim, 0 AS key UNION SELECT dim, key FROM per_week)
       INSERT INTO stock_value_weekly (dim, key, week_end, value_cost, units, in_stock_a, a_products)
       SELECT k.dim, k.key, $1::date - 7 * (52 - g.w),
         round((SUM(COALESCE(x.value_m, 0)) OVER run)::numeric / 10000, 2), (SUM(COALESCE(x.units, 0)) OVER run)::int,
         (SUM(COALESCE(x.in_stock_a, 0)) OVER run)::int, (SUM(COALESCE(x.a_products, 0)) OVER run)::int
       FROM keys k CROSS JOIN generate_series(0, 52) AS g(w)
       LEFT JOIN per_week x ON x.dim = k.dim AND x.key = k.key AND x.w = g.w
       WINDOW run AS (PARTITION BY k.dim, k.key ORDER BY g.w)`,
      [d0],
    );
    await conn.exec("DROP TABLE st_up, st_proots, st_sets, st_members");
    await restore();
    return rows;
  },
};
