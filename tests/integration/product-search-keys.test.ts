// The product_search module's short keys (server/jobs/product-search.ts) on a data set large enough
// for keys to reach PRODUCT_SEARCH_LIMIT products: the rows it keeps per key must be exactly the
// first PRODUCT_SEARCH_LIMIT + 1 entries in the order (rank, total_sold DESC, pid), the definition
// written out here as a plain sort, with the cut falling inside groups of equal rank and units sold.
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
        WHEN title LIKE key || '%' THEN 2 WHEN title LIKE '% ' || key || '%' THEN 3
        WHEN sku LIKE key || '%' OR barcode LIKE key || '%' THEN 4 ELSE 5 END AS rank
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
      // thousandth SKU is "a".
      // Units sold take four values only, so the cut lands inside a group of equal (rank, units).
      await conn.exec(`
        INSERT INTO products (pid, title, sku, price, stock_quantity, created_at)
        SELECT g,
          CASE WHEN g = ${N} THEN 'A'
               WHEN g % 3 = 0 THEN 'Ab Card ' || g ELSE 'Paper Ab ' || g END
            || CASE WHEN g <= ${PRODUCT_SEARCH_LIMIT} THEN ' Mm' ELSE '' END
            || CASE WHEN g <= ${PRODUCT_SEARCH_LIMIT - 1} THEN ' zz' ELSE '' END,
          CASE WHEN g % 1000 = 0 THEN 'a' ELSE 'SKU-' || g END,
          1, 0, now()
        FROM generate_series(1, ${N}) g;
        INSERT INTO product_metrics (pid, on_hand, on_order, stock_value_cost, stock_value_retail,
          units_7d, units_30d, units_90d, units_365d, revenue_7d, revenue_30d, revenue_90d, revenue_365d,
          total_sold, lifetime_revenue, calculated_at)
        SELECT g, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (g * 7) % 4, 0, now() FROM generate_series(1, ${N}) g;`);
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
    // "a": the SKUs first, then the title that is "a", then titles starting with it.
    const a = actual.filter((r) => r.key === "a");
    const skus = Math.floor(N / 1000);
    expect(a.slice(0, skus).map((r) => r.rank)).toEqual(Array(skus).fill(0));
    expect(a[skus]).toMatchObject({ rank: 1, pid: N });
    expect(a[skus + 1]).toMatchObject({ rank: 2, total_sold: 3 });
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
