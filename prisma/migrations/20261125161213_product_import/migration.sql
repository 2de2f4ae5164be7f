-- CreateTable
CREATE TABLE "product_imports" (
    "id" SERIAL NOT NULL,
    "owner_id" INTEGER NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'draft',
    "filename" TEXT NOT NULL,
    "file_type" TEXT NOT NULL,
    "encoding" TEXT,
    "delimiter" TEXT,
    "sheet" TEXT,
    "sheets" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "file_size" INTEGER NOT NULL,
    "file_data" BYTEA NOT NULL,
    "headers" JSONB NOT NULL,
    "company" TEXT,
    "product_type" TEXT,
    "template_id" INTEGER,
    "mapping" JSONB NOT NULL DEFAULT '{}',
    "row_count" INTEGER NOT NULL DEFAULT 0,
    "error_rows" INTEGER NOT NULL DEFAULT 0,
    "warning_rows" INTEGER NOT NULL DEFAULT 0,
    "created_count" INTEGER NOT NULL DEFAULT 0,
    "summary" JSONB,
    "validation" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "submitted_at" TIMESTAMPTZ(3),
    "submitted_by" INTEGER,
    "exported_at" TIMESTAMPTZ(3),

    CONSTRAINT "product_imports_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "product_import_rows" (
    "import_id" INTEGER NOT NULL,
    "row_id" INTEGER NOT NULL,
    "raw" JSONB NOT NULL,
    "edits" JSONB NOT NULL DEFAULT '{}',
    "values" JSONB NOT NULL DEFAULT '{}',
    "from_template" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "findings" JSONB NOT NULL DEFAULT '[]',
    "validation" JSONB NOT NULL DEFAULT '{}',
    "error_count" INTEGER NOT NULL DEFAULT 0,
    "warning_count" INTEGER NOT NULL DEFAULT 0,
    "sku_key" TEXT,
    "barcode_key" TEXT,
    "images" JSONB NOT NULL DEFAULT '[]',
    "deleted" BOOLEAN NOT NULL DEFAULT false,
    "created_pid" INTEGER,

    CONSTRAINT "product_import_rows_pkey" PRIMARY KEY ("import_id","row_id")
);

-- CreateTable
CREATE TABLE "product_import_images" (
    "id" SERIAL NOT NULL,
    "import_id" INTEGER NOT NULL,
    "filename" TEXT NOT NULL,
    "mime_type" TEXT NOT NULL,
    "file_size" INTEGER NOT NULL,
    "content_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "product_import_images_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "product_import_mappings" (
    "id" SERIAL NOT NULL,
    "supplier" TEXT NOT NULL,
    "header_key" TEXT NOT NULL,
    "mapping" JSONB NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "product_import_mappings_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "created_products" (
    "pid" SERIAL NOT NULL,
    "import_id" INTEGER NOT NULL,
    "row_id" INTEGER NOT NULL,
    "title" TEXT NOT NULL,
    "sku" TEXT NOT NULL,
    "barcode" TEXT,
    "brand_id" INTEGER,
    "vendor_id" INTEGER,
    "product_type" TEXT,
    "line" TEXT,
    "description" TEXT,
    "price" DECIMAL(12,2) NOT NULL,
    "regular_price" DECIMAL(12,2),
    "cost_price" DECIMAL(12,4),
    "stock_quantity" INTEGER NOT NULL DEFAULT 0,
    "moq" INTEGER NOT NULL DEFAULT 1,
    "case_qty" INTEGER NOT NULL DEFAULT 1,
    "harmonized_tariff_code" TEXT,
    "weight" DECIMAL(10,2),
    "length" DECIMAL(10,2),
    "width" DECIMAL(10,2),
    "height" DECIMAL(10,2),
    "tax_code" TEXT NOT NULL DEFAULT '0',
    "size_cat" TEXT,
    "shipping_restrictions" TEXT NOT NULL DEFAULT '0',
    "categories" INTEGER[] DEFAULT ARRAY[]::INTEGER[],
    "images" JSONB NOT NULL DEFAULT '[]',
    "kind" TEXT NOT NULL DEFAULT 'merchandise',
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "created_by" INTEGER NOT NULL,
    "shop_pid" INTEGER,
    "matched_at" TIMESTAMPTZ(3),

    CONSTRAINT "created_products_pkey" PRIMARY KEY ("pid")
);

-- CreateIndex
CREATE INDEX "product_imports_owner_id_created_at_idx" ON "product_imports"("owner_id", "created_at");

-- CreateIndex
CREATE INDEX "product_imports_created_at_idx" ON "product_imports"("created_at");

-- CreateIndex
CREATE INDEX "product_import_rows_import_id_error_count_idx" ON "product_import_rows"("import_id", "error_count");

-- CreateIndex
CREATE INDEX "product_import_rows_import_id_sku_key_idx" ON "product_import_rows"("import_id", "sku_key");

-- CreateIndex
CREATE INDEX "product_import_rows_import_id_barcode_key_idx" ON "product_import_rows"("import_id", "barcode_key");

-- CreateIndex
CREATE INDEX "product_import_images_import_id_idx" ON "product_import_images"("import_id");

-- CreateIndex
CREATE INDEX "product_import_images_content_hash_idx" ON "product_import_images"("content_hash");

-- CreateIndex
CREATE UNIQUE INDEX "product_import_mappings_supplier_header_key_key" ON "product_import_mappings"("supplier", "header_key");

-- CreateIndex
CREATE INDEX "created_products_shop_pid_idx" ON "created_products"("shop_pid");

-- CreateIndex
CREATE INDEX "created_products_sku_idx" ON "created_products"("sku");

-- CreateIndex
CREATE INDEX "created_products_barcode_idx" ON "created_products"("barcode");

-- CreateIndex
CREATE UNIQUE INDEX "created_products_import_id_row_id_key" ON "created_products"("import_id", "row_id");

-- Created products take provisional pids from 2,000,000,000 up: a range the shop system does not use.
ALTER SEQUENCE "created_products_pid_seq" START WITH 2000000000 MINVALUE 2000000000 RESTART WITH 2000000000;
