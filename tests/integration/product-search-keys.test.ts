// The product_search module's short keys (server/jobs/product-search.ts) on a data set large enough
// for keys to reach PRODUCT_SEARCH_LIMIT products: the rows it keeps per key must be exactly the
// first PRODUCT_SEARCH_LIMIT + 1 entries in the order (rank, total_sold DESC, pid), the definition
// written out here as a plain sort (the search's LIKE patterns, with the key's wildcards escaped as
// the search escapes them, as starts_with and strpos), with the cut falling inside groups of equal
// rank and units sold.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { productSearchModule } from "../../server/jobs/product-search.ts";
import { PRODUCT_SEARCH_LIMIT } from "../../shared/templates.ts";
import { createTestDatabase, type TestDatabase, testBackend } from "../helpers/db.ts";

const N = PRODUCT_SEARCH_LIMIT + 1_500;

/** Every entry of every key carried by at least PRODUCT_SEARCH_LIMIT products, first ones kept. */
const REFERENCE = `
  WITH words AS (
    SELECT s.pid, s.total_sold, s.title, s.sku, s.barcode, left(w, n) AS key
    FROM product_search s, unnest(string_to_array(s.title, ' ')) w, generate_series(1, 2) n WHERE w <> ''
    UNION SELECT s.pid, s.total_sold, s.title, s.sku, s.barcode, s.sku FROM product_search s
      WHERE char_length(s.sku) BETWEEN 1 AND 2
    UNION SELECT s.pid, s.total_sold, s.title, s.sku, s.barcode, s.barcode FROM product_search s
      WHERE char_length(s.barcode) BETWEEN 1 AND 2
  ), entries AS (
    SELECT key, pid, total_sold,
      CASE WHEN sku = key OR barcode = key THEN 0 WHEN title = key THEN 1
        WHEN starts_with(title, key) THEN 2 WHEN strpos(title, ' ' || key) > 0 THEN 3
        WHEN starts_with(sku, key) OR starts_with(barcode, key) THEN 4 ELSE 5 END AS rank
    FROM words
  )
  SELECT key, rank, total_sold, pid FROM (
    SELECT e.*, row_number() OVER (PARTITION BY key ORDER BY rank, total_sold DESC, pid) AS n,
      count(*) OVER (PARTITION BY key) AS carried
    FROM entries e
  ) x WHERE carried >= ${PRODUCT_SEARCH_LIMIT} AND n <= ${PRODUCT_SEARCH_LIMIT + 1}
  ORDER BY key, rank, total_sold DESC, pid`;

describe(`product search keys at the answer's cap (${testBackend})`, () => {
  let tdb: TestDatabase;
  beforeAll(async () => {
    tdb = await createTestDatabase();
    const conn = await tdb.db.connect();
    try {
      // Titles: a third start with "ab", the rest carry "ab" as a later word; "mm" words on exactly
      // PRODUCT_SEARCH_LIMIT products, "zz" on one fewer; the last title is just "a", and every
      // thousandth SKU is "a". Most also have a double space and words of other characters.
      // Units sold take four values only, so the cut lands inside a group of equal (rank, units).
      await conn.exec(`
        INSERT INTO products (pid, title, sku, price, stock_quantity, created_at)
        SELECT g,
          CASE WHEN g = ${N} THEN 'A'
               WHEN g % 3 = 0 THEN 'Ab Card ' || g ELSE 'Paper Ab ' || g END
            || CASE WHEN g <= ${PRODUCT_SEARCH_LIMIT} THEN ' Mm' ELSE '' END
            || CASE WHEN g <= ${PRODUCT_SEARCH_LIMIT - 1} THEN ' zz' ELSE '' END
            -- Keys of characters beyond 16 bits, upper case lower-cased, and CSV's quote and
            -- separator, on more than the limit's products.
            || CASE WHEN g <= ${PRODUCT_SEARCH_LIMIT + 200} THEN '  🎨Élan ",x ẞ\\q' || E' n\\nl \\rr' ELSE '' END,
          CASE WHEN g % 1000 = 0 THEN 'a' ELSE 'SKU-' || g END,
          1, 0, now()
        FROM generate_series(1, ${N}) g;
        -- Units sold (the module sums the completed order lines, as product_metrics does): (g × 7) mod 4
        -- in one line, or none; every fourth product's last sale on a day of its own, and a returned
        -- line and one cancelled that sell nothing.
        INSERT INTO order_lines (id, order_number, pid, order_date, quantity, price, discount, status)
        SELECT g, 'O' || g, g, TIMESTAMPTZ '2026-01-01 12:00Z' + (g % 50) * INTERVAL '1 day' - (g % 4 <> 0)::int * INTERVAL '90 days',
          (g * 7) % 4, 1, 0, 'completed'
        FROM generate_series(1, ${N}) g WHERE (g * 7) % 4 > 0;
        INSERT INTO order_lines (id, order_number, pid, order_date, quantity, price, discount, status)
        SELECT ${N} + g, 'R' || g, g, TIMESTAMPTZ '2026-03-01 12:00Z', 5, 1, 0,
          CASE WHEN g % 2 = 0 THEN 'returned' ELSE 'cancelled' END
        FROM generate_series(1, ${N}, 7) g;
        -- The rest of a result row, with text JSON must escape.
        INSERT INTO brands (id, name) VALUES (1, 'Paper "Co"'), (2, 'Ink & Co');
        INSERT INTO categories (id, name, type, level) VALUES (10, 'Cards', 10, 1), (11, 'Inks', 11, 2);
        INSERT INTO product_categories (pid, category_id)
        SELECT g, c FROM generate_series(1, 300) g, (VALUES (10), (11)) v(c) WHERE g % 3 <> 0 OR c = 10;
        UPDATE products SET brand_id = 1 + pid % 2, description = E'Line one\nline "two" – ü', line = 'Basics',
          first_received = DATE '2025-01-01' + pid % 300, regular_price = 2.5, moq = 3
        WHERE pid % 5 = 0;`);
      await conn.transaction((tx) => productSearchModule.run({ conn: tx, asOf: new Date() }).then(() => {}));
    } finally {
      await conn.release();
    }
  });
  afterAll(async () => {
    await tdb?.drop();
  });

  const keysTable = () =>
    tdb.db.prisma.$queryRawUnsafe<{ key: string; rank: number; total_sold: number; pid: number }[]>(
      "SELECT key, rank, total_sold, pid FROM product_search_keys ORDER BY key, rank, total_sold DESC, pid",
    );

  it("keeps, per key carried by enough products, exactly its first entries in the search's order", async () => {
    const expected = await tdb.db.prisma.$queryRawUnsafe<unknown[]>(REFERENCE);
    const actual = await keysTable();
    expect(actual).toEqual(expected);
    const perKey = new Map<string, number>();
    for (const r of actual) perKey.set(r.key, (perKey.get(r.key) ?? 0) + 1);
    // Carried by every product: capped; by exactly the limit: all of them; by one fewer: none.
    expect(perKey.get("a")).toBe(PRODUCT_SEARCH_LIMIT + 1);
    expect(perKey.get("ab")).toBe(PRODUCT_SEARCH_LIMIT + 1);
    expect(perKey.get("mm")).toBe(PRODUCT_SEARCH_LIMIT);
    expect(perKey.has("zz")).toBe(false);
    // Characters, not UTF-16 units; lower-cased by the database; quotes, commas, backslashes, line
    // feeds and carriage returns kept.
    for (const key of ["🎨", "🎨é", '"', '",', "ß", "ß\\", "n\n", "\r", "\rr"])
      expect(perKey.get(key)).toBe(PRODUCT_SEARCH_LIMIT + 1);
    // "a": the SKUs first, then the title that is "a", then titles starting with it.
    const a = actual.filter((r) => r.key === "a");
    const skus = Math.floor(N / 1000);
    expect(a.slice(0, skus).map((r) => r.rank)).toEqual(Array(skus).fill(0));
    expect(a[skus]).toMatchObject({ rank: 1, pid: N });
    expect(a[skus + 1]).toMatchObject({ rank: 2, total_sold: 3 });
  });

  it("gives the same rows when prepare() ran first (as a Full Reset does while it loads)", async () => {
    const rows = () =>
      tdb.db.prisma.$queryRawUnsafe<unknown[]>("SELECT pid, json FROM product_search_rows ORDER BY pid");
    const keys = await keysTable();
    const json = await rows();
    expect(json).toHaveLength(N);
    const conn = await tdb.db.connect();
    try {
      await conn.exec("UPDATE order_lines SET status = 'cancelled' WHERE order_number LIKE 'O%'");
      await conn.transaction(async (tx) => {
        await productSearchModule.prepare!.run({ conn: tx, asOf: new Date() });
        // What prepare() keeps does not depend on sales: they may change before run().
        await tx.exec("UPDATE order_lines SET status = 'completed' WHERE order_number LIKE 'O%'");
        await productSearchModule.run({ conn: tx, asOf: new Date() });
      });
    } finally {
      await conn.release();
    }
    expect(await keysTable()).toEqual(keys);
    expect(await rows()).toEqual(json);
  });

  it("writes each product's result as row_to_json writes the whole row", async () => {
    const expected = await tdb.db.prisma.$queryRawUnsafe<unknown[]>(`
      SELECT r.pid, row_to_json(r)::text AS json FROM (
        SELECT p.pid, p.title, b.name AS brand, p.brand_id, p.line, p.price::float8 AS price,
          coalesce(m.total_sold, 0) AS total_sold,
          to_char(p.first_received, 'YYYY-MM-DD') AS first_received,
          to_char(m.date_last_sold, 'YYYY-MM-DD') AS date_last_sold,
          p.vendor_id AS supplier, p.regular_price::float8 AS regular_price, p.cost_price::float8 AS cost_price,
          p.moq, p.case_qty, p.harmonized_tariff_code, p.description,
          p.weight::float8 AS weight, p.length::float8 AS length, p.width::float8 AS width,
          p.height::float8 AS height, p.tax_code, p.size_cat, p.shipping_restrictions,
          coalesce(c.ids, '{}') AS categories
        FROM products p
        LEFT JOIN brands b ON b.id = p.brand_id
        -- product_metrics' units sold and last sale (docs/metrics.md §1), from the order lines.
        LEFT JOIN (
          SELECT pid, GREATEST(SUM(quantity), 0) AS total_sold,
            (max(order_date) FILTER (WHERE quantity > 0) AT TIME ZONE 'UTC')::date AS date_last_sold
          FROM order_lines WHERE status = 'completed' GROUP BY pid
        ) m ON m.pid = p.pid
        LEFT JOIN (
          SELECT pid, array_agg(category_id::text ORDER BY category_id) AS ids FROM product_categories GROUP BY pid
        ) c ON c.pid = p.pid
      ) r ORDER BY r.pid`);
    const actual = await tdb.db.prisma.$queryRawUnsafe<{ json: string }[]>(
      "SELECT pid, json FROM product_search_rows ORDER BY pid",
    );
    expect(actual).toEqual(expected);
    expect(JSON.parse(actual[9]!.json)).toMatchObject({
      pid: 10,
      brand: 'Paper "Co"',
      categories: ["10", "11"],
      // Its one completed line: (10 × 7) mod 4 units on 2026-01-11 − 90 days.
      total_sold: 2,
      date_last_sold: "2025-10-13",
    });
  });

  it("leaves the table's index as the migration made it", async () => {
    const indexes = await tdb.db.prisma.$queryRawUnsafe<{ indexdef: string }[]>(
      "SELECT indexdef FROM pg_indexes WHERE tablename = 'product_search_keys'",
    );
    expect(indexes.map((i) => i.indexdef)).toEqual([
      expect.stringMatching(
        /CREATE UNIQUE INDEX product_search_keys_key_rank_total_sold_pid_key .*\(key, rank, total_sold DESC, pid\)/,
      ),
    ]);
  });
});
