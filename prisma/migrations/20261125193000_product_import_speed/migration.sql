-- Create Products at 50,000 rows (docs/performance.md, "Create Products"):
-- a row's check_hash tells a re-check which rows really changed (only those are written again);
-- the created product of a row is found through created_products (import_id, row_id), so the
-- submit no longer rewrites every row to store it.
ALTER TABLE "product_import_rows" ADD COLUMN "check_hash" TEXT;
ALTER TABLE "product_import_rows" DROP COLUMN "created_pid";

-- The grid's pages: rows with errors in row order, and the (few) deleted rows an import has.
CREATE INDEX "product_import_rows_errors_idx" ON "product_import_rows" ("import_id", "row_id")
  WHERE "error_count" > 0 AND NOT "deleted";
CREATE INDEX "product_import_rows_deleted_idx" ON "product_import_rows" ("import_id", "row_id")
  WHERE "deleted";

-- SKUs are unique case-insensitively: the rule checks look them up by lower(sku).
CREATE INDEX "products_lower_sku_idx" ON "products" (lower("sku"));
CREATE INDEX "created_products_lower_sku_idx" ON "created_products" (lower("sku"));
