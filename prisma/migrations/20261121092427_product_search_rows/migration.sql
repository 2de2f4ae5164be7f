-- CreateTable
CREATE TABLE "product_search" (
    "pid" INTEGER NOT NULL,
    "title" TEXT NOT NULL,
    "sku" TEXT NOT NULL,
    "barcode" TEXT NOT NULL,
    "total_sold" INTEGER NOT NULL,
    "keys" TEXT[],

    CONSTRAINT "product_search_pkey" PRIMARY KEY ("pid")
);

-- CreateTable
CREATE TABLE "product_search_rows" (
    "pid" INTEGER NOT NULL,
    "json" TEXT NOT NULL,

    CONSTRAINT "product_search_rows_pkey" PRIMARY KEY ("pid")
);

-- CreateIndex
CREATE INDEX "product_search_keys_idx" ON "product_search" USING GIN ("keys");

-- Back-fill from data imported before this migration (the pipeline's calculation phase refills both
-- tables on every run: server/jobs/product-search.ts, same statements).
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
