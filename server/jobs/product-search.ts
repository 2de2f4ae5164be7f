// Calculation phase: the product search of the template screen (spec section 3 "Product search
// result"). Runs after product_metrics, in the run's transaction, and fills two tables:
// - product_search: the ranking columns lower-cased once (a search compares them with plain LIKE,
//   which is what ILIKE does after lower-casing both sides), the units sold, and the short keys
//   (first one and two characters of every title word, and SKUs/barcodes that short) whose GIN
//   index serves one- and two-character searches, which trigram indexes cannot;
// - product_search_rows: each product's result as JSON text, so a search only concatenates them.
// The same statements back-fill the tables in their migration (20261121092427_product_search_rows).
import type { CalcModule } from "./calculate.ts";

export const PRODUCT_SEARCH_FILL_SQL = `
INSERT INTO product_search (pid, title, sku, barcode, total_sold, keys)
SELECT p.pid, lower(p.title), lower(coalesce(p.sku, '')), lower(coalesce(p.barcode, '')),
  coalesce(m.total_sold, 0),
  ARRAY(SELECT DISTINCT k FROM (
    SELECT left(w, n) FROM unnest(string_to_array(lower(p.title), ' ')) w, (VALUES (1), (2)) v(n) WHERE w <> ''
    UNION ALL SELECT lower(p.sku) WHERE char_length(p.sku) BETWEEN 1 AND 2
    UNION ALL SELECT lower(p.barcode) WHERE char_length(p.barcode) BETWEEN 1 AND 2) x(k))
FROM products p LEFT JOIN product_metrics m ON m.pid = p.pid;

INSERT INTO product_search_rows (pid, json)
SELECT r.pid, row_to_json(r)::text FROM (
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
  LEFT JOIN product_metrics m ON m.pid = p.pid
  LEFT JOIN (
    SELECT pid, array_agg(category_id::text ORDER BY category_id) AS ids FROM product_categories GROUP BY pid
  ) c ON c.pid = p.pid
) r;
`;

export const productSearchModule: CalcModule = {
  name: "product_search",
  tables: ["product_search", "product_search_rows"],
  async run({ conn }) {
    await conn.exec("TRUNCATE product_search, product_search_rows");
    await conn.exec(PRODUCT_SEARCH_FILL_SQL);
    // Fresh statistics, so the first searches after a Full Reset plan on the real sizes.
    await conn.exec("ANALYZE product_search; ANALYZE product_search_rows;");
    const [row] = await conn.query<{ n: string | number }>("SELECT count(*) AS n FROM product_search");
    return Number(row?.n ?? 0);
  },
};
