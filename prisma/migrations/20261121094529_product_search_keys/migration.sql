-- DropIndex
DROP INDEX "product_search_keys_idx";

-- AlterTable
ALTER TABLE "product_search" DROP COLUMN "keys";

-- CreateTable
CREATE TABLE "product_search_keys" (
    "key" TEXT NOT NULL,
    "rank" SMALLINT NOT NULL,
    "total_sold" INTEGER NOT NULL,
    "pid" INTEGER NOT NULL
);

-- CreateIndex
CREATE UNIQUE INDEX "product_search_keys_key_rank_total_sold_pid_key" ON "product_search_keys"("key", "rank", "total_sold" DESC, "pid");

-- Back-fill from data imported before this migration (the pipeline's calculation phase refills the
-- table on every run: server/jobs/product-search.ts, same statement, with 5,000 = PRODUCT_SEARCH_LIMIT).
WITH entries AS MATERIALIZED (
  SELECT ks.k AS key,
    CASE WHEN s.sku = ks.k OR s.barcode = ks.k THEN 0 WHEN s.title = ks.k THEN 1
      WHEN starts_with(s.title, ks.k) THEN 2 WHEN strpos(s.title, ' ' || ks.k) > 0 THEN 3
      WHEN starts_with(s.sku, ks.k) OR starts_with(s.barcode, ks.k) THEN 4 ELSE 5 END AS rank,
    s.total_sold, s.pid
  FROM product_search s, LATERAL (SELECT DISTINCT k FROM (
    SELECT left(w, n) FROM unnest(string_to_array(s.title, ' ')) w, (VALUES (1), (2)) v(n) WHERE w <> ''
    UNION ALL SELECT s.sku WHERE char_length(s.sku) BETWEEN 1 AND 2
    UNION ALL SELECT s.barcode WHERE char_length(s.barcode) BETWEEN 1 AND 2) x(k)) ks
)
INSERT INTO product_search_keys (key, rank, total_sold, pid)
SELECT key, rank, total_sold, pid FROM (
  SELECT e.*, row_number() OVER (PARTITION BY e.key COLLATE "C" ORDER BY e.rank, e.total_sold DESC, e.pid) AS n
  FROM entries e
  WHERE e.key IN (SELECT key FROM entries GROUP BY key HAVING count(*) >= 5000)
) x WHERE n <= 5001;
