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
// What does not depend on sales (every product's short keys, and its JSON but for the two sales
// fields) goes into temp tables first: prepare() makes them as soon as the products are
// loaded, which on a Full Reset is while the order lines still load; run() makes them itself when
// prepare() did not run.
import { PRODUCT_SEARCH_LIMIT } from "../../shared/templates.ts";
import type { SqlConnection } from "../db/database.ts";
import type { CalcModule } from "./calculate.ts";
import { type OrderLines, orderLinesOf } from "./order-lines-pass.ts";
import { lineChunks } from "./series.ts";

/** Temp tables search_keys (pid, keys) and search_json (pid, head, first_received, tail). */
export const PRODUCT_SEARCH_PREPARE_SQL = `
-- Each product's distinct short keys: the first one and two characters of its title's words, and
-- its SKU and barcode when they are that short. (The keys' order in the array does not matter: the
-- fill unnests them. Most products have neither that short, and the words alone make a cheaper
-- subquery than the UNION ALL.)
CREATE TEMP TABLE search_keys ON COMMIT DROP AS
SELECT s.pid, CASE WHEN char_length(s.sku) BETWEEN 1 AND 2 OR char_length(s.barcode) BETWEEN 1 AND 2
  THEN ARRAY(SELECT DISTINCT k FROM (
    SELECT left(w, n) FROM unnest(string_to_array(s.title, ' ')) w, (VALUES (1), (2)) v(n) WHERE w <> ''
    UNION ALL SELECT s.sku WHERE char_length(s.sku) BETWEEN 1 AND 2
    UNION ALL SELECT s.barcode WHERE char_length(s.barcode) BETWEEN 1 AND 2) x(k))
  ELSE ARRAY(SELECT DISTINCT left(w, n) FROM unnest(string_to_array(s.title, ' ')) w, (VALUES (1), (2)) v(n)
    WHERE w <> '') END AS keys
FROM (
  SELECT pid, lower(title) AS title, lower(coalesce(sku, '')) AS sku, lower(coalesce(barcode, '')) AS barcode
  FROM products
) s;

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

-- The rank is the CASE of the search (server/modules/templates/templates.service.ts) for the text
-- k, with LIKE 'k%' as starts_with; the pid rule is the search's own. Every key of a product is
-- its SKU or barcode (0) or the start of a title word: the first word's (the title starts with it,
-- 2 at most) or a later one's, which follows a space, so the CASE's LIKE '% k%' branch (3) is
-- the only one left and 4 and 5 cannot happen.
-- A key's rows are its first ${PRODUCT_SEARCH_LIMIT + 1} entries in the order (rank, total_sold DESC, pid). Rather than
-- sort every entry of every key, a histogram of (rank, total_sold) per key finds the group where the
-- ${PRODUCT_SEARCH_LIMIT + 1}st entry falls, or the key's last group when it has only ${PRODUCT_SEARCH_LIMIT} (cut): every entry
-- before that group is in, none after it; only the entries up to it are sorted, and numbered. They
-- are sorted by the key's bytes (COLLATE "C", cheaper than the database's collation and the same
-- grouping), which with C.UTF-8 is also the unique index's order, so its build after the fill
-- finds its input sorted.
WITH entries AS MATERIALIZED (
  SELECT ks.k AS key,
    CASE WHEN s.sku = ks.k OR s.barcode = ks.k THEN 0 WHEN s.title = ks.k THEN 1
      WHEN starts_with(s.title, ks.k) THEN 2 ELSE 3 END AS rank,
    s.total_sold, s.pid
  FROM product_search s JOIN search_keys sk ON sk.pid = s.pid, unnest(sk.keys) ks(k)
), cut AS (
  SELECT DISTINCT ON (key) key, rank, total_sold FROM (
    SELECT key, rank, total_sold,
      sum(count(*)) OVER (PARTITION BY key ORDER BY rank, total_sold DESC) AS upto,
      sum(count(*)) OVER (PARTITION BY key) AS key_total
    FROM entries GROUP BY key, rank, total_sold
  ) h WHERE key_total >= ${PRODUCT_SEARCH_LIMIT} AND upto >= least(key_total, ${PRODUCT_SEARCH_LIMIT + 1})
  ORDER BY key, rank, total_sold DESC
)
INSERT INTO product_search_keys (key, rank, total_sold, pid)
SELECT key, rank, total_sold, pid FROM (
  SELECT e.key, e.rank, e.total_sold, e.pid,
    row_number() OVER (PARTITION BY e.key COLLATE "C" ORDER BY e.rank, e.total_sold DESC, e.pid) AS i
  FROM entries e JOIN cut c ON c.key = e.key
  WHERE (e.rank, -e.total_sold) <= (c.rank, -c.total_sold)
) t WHERE i <= ${PRODUCT_SEARCH_LIMIT + 1};

INSERT INTO product_search_rows (pid, json)
SELECT j.pid, j.head || ',"total_sold":' || coalesce(m.total_sold, 0)
  || ',"first_received":' || j.first_received
  || ',"date_last_sold":' || coalesce(to_json(to_char(m.date_last_sold, 'YYYY-MM-DD'))::text, 'null')
  || ',' || j.tail
FROM search_json j LEFT JOIN search_sales m ON m.pid = j.pid;

DROP TABLE search_keys, search_json, search_sales;
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
  for (const chunk of pass.chunks) {
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

async function prepared(conn: SqlConnection): Promise<boolean> {
  const [row] = await conn.query<{ ready: boolean }>(
    "SELECT to_regclass('pg_temp.search_keys') IS NOT NULL AND to_regclass('pg_temp.search_json') IS NOT NULL AS ready",
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
