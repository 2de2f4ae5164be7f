// Calculation phase: the product search of the template screen (spec section 3 "Product search
// result"). Reads only imported tables (its units sold and last sale come from the run's pass over
// the order lines, with product_metrics' rules), so a Full Reset on PostgreSQL runs it on the second
// connection; it fills three tables:
// - product_search: the ranking columns lower-cased once (a search compares them with plain LIKE,
//   which is what ILIKE does after lower-casing both sides) and the units sold;
// - product_search_keys: for every short key (the first one and two characters of every title word,
//   and SKUs/barcodes that short) that at least PRODUCT_SEARCH_LIMIT products carry, the first
//   PRODUCT_SEARCH_LIMIT + 1 of them in the search's order, with the rank a search for exactly that
//   text gives them: the answer of a one- or two-character search, which trigram indexes cannot
//   serve and which would otherwise rank a good part of the table;
// - product_search_rows: each product's result as JSON text, so a search only concatenates them.
// Their migrations (20261121092427_product_search_rows, 20261121094529_product_search_keys) back-fill
// the tables with statements that give the same rows.
//
// What does not depend on sales (each product's JSON but for the two sales fields) goes into a temp
// table first: prepare() makes it as soon as the products are loaded, which on a Full Reset is
// while the order lines still load; run() makes it itself when prepare() did not run. The short
// keys are worked out in the app from product_search once it is filled (fillKeys).
import { PRODUCT_SEARCH_LIMIT } from "../../shared/templates.ts";
import type { SqlConnection } from "../db/database.ts";
import { pacer } from "../db/pace.ts";
import type { CalcModule } from "./calculate.ts";
import { type OrderLines, orderLinesOf } from "./order-lines-pass.ts";
import { lineChunks } from "./series.ts";

/** Temp table search_json (pid, head, first_received, tail). */
export const PRODUCT_SEARCH_PREPARE_SQL = `
-- The result's JSON (as row_to_json writes it) cut around total_sold and date_last_sold: head is
-- up to price without the closing brace, tail from supplier on without the opening one.
CREATE TEMP TABLE search_json ON COMMIT DROP AS
SELECT p.pid, left(row_to_json(a)::text, -1) AS head,
  coalesce(to_json(to_char(p.first_received, 'YYYY-MM-DD'))::text, 'null') AS first_received,
  substr(row_to_json(z)::text, 2) AS tail
FROM products p
LEFT JOIN brands b ON b.id = p.brand_id
LEFT JOIN (
  SELECT pid, array_agg(category_id::text ORDER BY category_id) AS ids FROM product_categories GROUP BY pid
) c ON c.pid = p.pid,
LATERAL (SELECT p.pid, p.title, b.name AS brand, p.brand_id, p.line, p.price::float8 AS price) a,
LATERAL (
  SELECT p.vendor_id AS supplier, p.regular_price::float8 AS regular_price, p.cost_price::float8 AS cost_price,
    p.moq, p.case_qty, p.harmonized_tariff_code, p.description,
    p.weight::float8 AS weight, p.length::float8 AS length, p.width::float8 AS width,
    p.height::float8 AS height, p.tax_code, p.size_cat, p.shipping_restrictions,
    coalesce(c.ids, '{}') AS categories
) z;
`;

export const PRODUCT_SEARCH_FILL_SQL = `
INSERT INTO product_search (pid, title, sku, barcode, total_sold)
SELECT p.pid, lower(p.title), lower(coalesce(p.sku, '')), lower(coalesce(p.barcode, '')),
  coalesce(m.total_sold, 0)
FROM products p LEFT JOIN search_sales m ON m.pid = p.pid;

INSERT INTO product_search_rows (pid, json)
SELECT j.pid, j.head || ',"total_sold":' || coalesce(m.total_sold, 0)
  || ',"first_received":' || j.first_received
  || ',"date_last_sold":' || coalesce(to_json(to_char(m.date_last_sold, 'YYYY-MM-DD'))::text, 'null')
  || ',' || j.tail
FROM search_json j LEFT JOIN search_sales m ON m.pid = j.pid;

DROP TABLE search_json, search_sales;
`;

/**
 * Temp table search_sales (pid, total_sold, date_last_sold): per product with a completed line up to
 * asOf, its units sold (never below 0) and the UTC day of its last sale (a line with a positive
 * quantity), as product_metrics has them (docs/metrics.md §1), from the run's pass over the lines.
 */
async function salesTable(conn: SqlConnection, pass: OrderLines): Promise<void> {
  const units = new Float64Array(pass.pids.length);
  const sold = new Uint8Array(pass.pids.length);
  const last = new Int32Array(pass.pids.length).fill(-1);
  const pace = pacer();
  for (const chunk of pass.chunks) {
    await pace();
    const { product, day, done, quantity } = chunk;
    for (let j = 0; j < chunk.n; j++) {
      if (!done[j]) continue;
      const p = product[j]!;
      const q = quantity[j]!;
      units[p] = units[p]! + q;
      sold[p] = 1;
      if (q > 0 && day[j]! > last[p]!) last[p] = day[j]!;
    }
  }
  function* rows(): Generator<string> {
    for (let p = 0; p < pass.pids.length; p++) {
      if (!sold[p]) continue;
      const day = last[p]! < 0 ? "" : new Date(last[p]! * 86_400_000).toISOString().slice(0, 10);
      yield `${pass.pids[p]},${Math.max(units[p]!, 0)},${day}\n`;
    }
  }
  await conn.exec(
    "DROP TABLE IF EXISTS search_sales; CREATE TEMP TABLE search_sales (pid int PRIMARY KEY, total_sold int NOT NULL, date_last_sold date) ON COMMIT DROP",
  );
  await conn.copyCsv({
    table: "search_sales",
    columns: ["pid", "total_sold", "date_last_sold"],
    source: lineChunks(rows()),
    header: false,
  });
  await conn.exec("ANALYZE search_sales");
}

/**
 * The first `n` characters (code points, as PostgreSQL's left() counts them in UTF-8) of `w`, or ""
 * when it has fewer.
 */
function leftChars(w: string, n: 1 | 2): string {
  let at = 0;
  for (let i = 0; i < n; i++) {
    if (at >= w.length) return "";
    at += w.codePointAt(at)! > 0xffff ? 2 : 1;
  }
  return w.slice(0, at);
}

/** Whether `s` has 1 or 2 characters (code points, as char_length counts them). */
function shortKey(s: string): boolean {
  if (s.length === 0 || s.length > 4) return false;
  let n = 0;
  for (let at = 0; at < s.length; at += s.codePointAt(at)! > 0xffff ? 2 : 1) n++;
  return n <= 2;
}

/**
 * product_search_keys from product_search (filled just before, lower-cased): a product's keys are the
 * first one and two characters of each word of its title (split at single spaces, empty words
 * skipped) and its SKU and barcode when they have one or two characters, each key once. A key
 * carried by at least PRODUCT_SEARCH_LIMIT products keeps its first PRODUCT_SEARCH_LIMIT + 1 entries
 * in the search's order (rank, total_sold DESC, pid), with the rank a search for exactly that text
 * gives (server/modules/templates/templates.service.ts): 0 for the SKU or barcode, 1 for the whole
 * title, 2 for the title's start, else 3 (a later word's start: '% k%'; 4 and 5 cannot happen).
 * Worked out here rather than in SQL: unnesting the 720k keys of the 50k set, grouping and sorting
 * them cost the database ≈ 3 s of CPU, the app a fraction of that. Texts compare as PostgreSQL's
 * deterministic collations compare them (equal bytes), and a UTF-8 prefix is a prefix here too.
 */
async function fillKeys(conn: SqlConnection): Promise<number> {
  const products = await conn.query<{
    pid: number;
    title: string;
    sku: string;
    barcode: string;
    total_sold: number;
  }>("SELECT pid, title, sku, barcode, total_sold FROM product_search");
  const keyId = new Map<string, number>();
  const keyText: string[] = [];
  const carried: number[] = [];
  // Each product's key ids: keyOf[from[i]] … keyOf[from[i + 1] − 1].
  const from = new Int32Array(products.length + 1);
  let keyOf = new Int32Array(1 << 16);
  let n = 0;
  const mine: string[] = [];
  const add = (k: string) => {
    if (k !== "" && !mine.includes(k)) mine.push(k);
  };
  const pace = pacer();
  for (const [i, p] of products.entries()) {
    if ((i & 1023) === 0) await pace();
    mine.length = 0;
    for (const w of p.title.split(" ")) {
      if (w === "") continue;
      add(leftChars(w, 1));
      add(leftChars(w, 2));
    }
    if (shortKey(p.sku)) add(p.sku);
    if (shortKey(p.barcode)) add(p.barcode);
    if (n + mine.length > keyOf.length) {
      const grown = new Int32Array(2 * keyOf.length + mine.length);
      grown.set(keyOf);
      keyOf = grown;
    }
    for (const k of mine) {
      let id = keyId.get(k);
      if (id === undefined) {
        id = keyText.length;
        keyId.set(k, id);
        keyText.push(k);
        carried.push(0);
      }
      carried[id]!++;
      keyOf[n++] = id;
    }
    from[i + 1] = n;
  }
  // The keys carried by enough products: their first entries, per rank, with the products taken in
  // the order (total_sold DESC, pid), so each rank's list is in the search's order as it grows and
  // the lists of ranks 0 … 3 one after the other are the key's entries in order (no sort per key).
  const buckets = new Map<number, number[][]>();
  for (let id = 0; id < keyText.length; id++)
    if (carried[id]! >= PRODUCT_SEARCH_LIMIT) buckets.set(id, [[], [], [], []]);
  if (buckets.size === 0) return 0;
  const order = Array.from(products.keys()).sort(
    (a, b) => products[b]!.total_sold - products[a]!.total_sold || products[a]!.pid - products[b]!.pid,
  );
  for (const [at, i] of order.entries()) {
    if ((at & 1023) === 0) await pace();
    const p = products[i]!;
    for (let j = from[i]!; j < from[i + 1]!; j++) {
      const ranks = buckets.get(keyOf[j]!);
      if (!ranks) continue;
      const k = keyText[keyOf[j]!]!;
      const list =
        ranks[p.sku === k || p.barcode === k ? 0 : p.title === k ? 1 : p.title.startsWith(k) ? 2 : 3]!;
      if (list.length <= PRODUCT_SEARCH_LIMIT) list.push(i);
    }
  }
  // In the keys' byte order (COLLATE "C"): the unique index's order, so its build finds them sorted.
  const keys = [...buckets.keys()].sort((a, b) =>
    Buffer.compare(Buffer.from(keyText[a]!), Buffer.from(keyText[b]!)),
  );
  const rows: string[] = [];
  for (const id of keys) {
    const text = `"${keyText[id]!.replaceAll('"', '""')}"`;
    let left = PRODUCT_SEARCH_LIMIT + 1;
    buckets.get(id)!.forEach((list, rank) => {
      for (const i of list.slice(0, left))
        rows.push(`${text},${rank},${products[i]!.total_sold},${products[i]!.pid}\n`);
      left -= Math.min(left, list.length);
    });
  }
  return conn.copyCsv({
    table: "product_search_keys",
    columns: ["key", "rank", "total_sold", "pid"],
    source: lineChunks(rows),
    header: false,
  });
}

async function prepared(conn: SqlConnection): Promise<boolean> {
  const [row] = await conn.query<{ ready: boolean }>(
    "SELECT to_regclass('pg_temp.search_json') IS NOT NULL AS ready",
  );
  return Boolean(row?.ready);
}

export const productSearchModule: CalcModule = {
  name: "product_search",
  readsOrderLines: true,
  // product_search_keys (derived from product_search, empty on small data sets) is left out of the
  // table counts.
  tables: ["product_search", "product_search_rows", "product_search_keys"],
  prepare: {
    reads: ["products", "brands", "product_categories"],
    async run({ conn }) {
      await conn.exec(PRODUCT_SEARCH_PREPARE_SQL);
    },
  },
  // Reads only imported tables: a Full Reset on PostgreSQL runs it on its second connection (where
  // it prepares itself).
  beside: true,
  async run(ctx) {
    const { conn } = ctx;
    await conn.exec("TRUNCATE product_search, product_search_keys, product_search_rows");
    await salesTable(conn, await orderLinesOf(ctx));
    // product_search_keys' index is built once after the fill rather than maintained row by row.
    const indexes = await conn.query<{ drop: string; create: string }>(
      `SELECT CASE WHEN c.oid IS NULL THEN format('DROP INDEX %I.%I', n.nspname, i.relname)
                   ELSE format('ALTER TABLE %s DROP CONSTRAINT %I', x.indrelid::regclass, c.conname) END AS drop,
              CASE WHEN c.oid IS NULL THEN pg_get_indexdef(x.indexrelid)
                   ELSE format('ALTER TABLE %s ADD CONSTRAINT %I ', x.indrelid::regclass, c.conname)
                        || pg_get_constraintdef(c.oid) END AS create
       FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_namespace n ON n.oid = i.relnamespace
       LEFT JOIN pg_constraint c ON c.conindid = x.indexrelid AND c.conrelid = x.indrelid
       WHERE x.indrelid = 'product_search_keys'::regclass`,
    );
    for (const ix of indexes) await conn.exec(ix.drop);
    if (!(await prepared(conn))) await conn.exec(PRODUCT_SEARCH_PREPARE_SQL);
    await conn.exec(PRODUCT_SEARCH_FILL_SQL);
    await fillKeys(conn);
    for (const ix of indexes) await conn.exec(ix.create);
    // Fresh statistics, so the first searches after a Full Reset plan on the real sizes. Only
    // product_search's: the searches read product_search_keys by its unique index's leading column
    // in the index's order and product_search_rows by its primary key, plans that need no statistics
    // (autovacuum analyzes them later).
    await conn.exec("ANALYZE product_search");
    const [row] = await conn.query<{ n: string | number }>("SELECT count(*) AS n FROM product_search");
    return Number(row?.n ?? 0);
  },
};
