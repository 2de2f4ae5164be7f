-- pg_trgm: trigram indexes for the product search (ILIKE %text%). Trusted since PostgreSQL 13, so the
-- database owner may create it; embedded PGlite loads it at start (server/db/database.ts).
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- CreateIndex
CREATE INDEX "products_title_trgm_idx" ON "products" USING GIN ("title" gin_trgm_ops);

-- CreateIndex
CREATE INDEX "products_sku_trgm_idx" ON "products" USING GIN ("sku" gin_trgm_ops);

-- CreateIndex
CREATE INDEX "products_barcode_trgm_idx" ON "products" USING GIN ("barcode" gin_trgm_ops);
