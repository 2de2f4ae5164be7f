-- CreateTable
CREATE TABLE "brands" (
    "id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,

    CONSTRAINT "brands_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "vendors" (
    "id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "email" TEXT,
    "phone" TEXT,
    "lead_time_days" INTEGER,

    CONSTRAINT "vendors_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "categories" (
    "id" INTEGER NOT NULL,
    "parent_id" INTEGER,
    "name" TEXT NOT NULL,
    "type" INTEGER NOT NULL,
    "level" INTEGER NOT NULL,

    CONSTRAINT "categories_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tax_categories" (
    "code" TEXT NOT NULL,
    "label" TEXT NOT NULL,

    CONSTRAINT "tax_categories_pkey" PRIMARY KEY ("code")
);

-- CreateTable
CREATE TABLE "sizes" (
    "code" TEXT NOT NULL,
    "label" TEXT NOT NULL,

    CONSTRAINT "sizes_pkey" PRIMARY KEY ("code")
);

-- CreateTable
CREATE TABLE "shipping_restrictions" (
    "code" TEXT NOT NULL,
    "label" TEXT NOT NULL,

    CONSTRAINT "shipping_restrictions_pkey" PRIMARY KEY ("code")
);

-- CreateTable
CREATE TABLE "products" (
    "pid" INTEGER NOT NULL,
    "title" TEXT NOT NULL,
    "sku" TEXT,
    "barcode" TEXT,
    "brand_id" INTEGER,
    "vendor_id" INTEGER,
    "line" TEXT,
    "description" TEXT,
    "price" DECIMAL(12,2) NOT NULL,
    "regular_price" DECIMAL(12,2),
    "cost_price" DECIMAL(12,4),
    "stock_quantity" INTEGER NOT NULL,
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
    "visible" BOOLEAN NOT NULL DEFAULT true,
    "replenishable" BOOLEAN NOT NULL DEFAULT true,
    "discontinued" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "first_received" DATE,
    "image_url" TEXT,

    CONSTRAINT "products_pkey" PRIMARY KEY ("pid")
);

-- CreateTable
CREATE TABLE "product_categories" (
    "pid" INTEGER NOT NULL,
    "category_id" INTEGER NOT NULL,

    CONSTRAINT "product_categories_pkey" PRIMARY KEY ("pid","category_id")
);

-- CreateTable
CREATE TABLE "order_lines" (
    "id" INTEGER NOT NULL,
    "order_number" TEXT NOT NULL,
    "pid" INTEGER NOT NULL,
    "order_date" TIMESTAMPTZ(3) NOT NULL,
    "quantity" INTEGER NOT NULL,
    "price" DECIMAL(12,2) NOT NULL,
    "discount" DECIMAL(12,2) NOT NULL DEFAULT 0,
    "status" TEXT NOT NULL,

    CONSTRAINT "order_lines_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "purchase_orders" (
    "id" INTEGER NOT NULL,
    "vendor_id" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "date_ordered" DATE NOT NULL,
    "date_expected" DATE,

    CONSTRAINT "purchase_orders_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "po_lines" (
    "id" INTEGER NOT NULL,
    "po_id" INTEGER NOT NULL,
    "pid" INTEGER NOT NULL,
    "ordered_qty" INTEGER NOT NULL,
    "cost_each" DECIMAL(12,4) NOT NULL,

    CONSTRAINT "po_lines_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "receivings" (
    "id" INTEGER NOT NULL,
    "po_line_id" INTEGER NOT NULL,
    "received_date" DATE NOT NULL,
    "qty" INTEGER NOT NULL,
    "cost_each" DECIMAL(12,4),

    CONSTRAINT "receivings_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "product_metrics" (
    "pid" INTEGER NOT NULL,
    "on_hand" INTEGER NOT NULL,
    "on_order" INTEGER NOT NULL,
    "stock_value_cost" DECIMAL(14,2) NOT NULL,
    "stock_value_retail" DECIMAL(14,2) NOT NULL,
    "units_7d" INTEGER NOT NULL,
    "units_30d" INTEGER NOT NULL,
    "units_90d" INTEGER NOT NULL,
    "units_365d" INTEGER NOT NULL,
    "revenue_7d" DECIMAL(14,2) NOT NULL,
    "revenue_30d" DECIMAL(14,2) NOT NULL,
    "revenue_90d" DECIMAL(14,2) NOT NULL,
    "revenue_365d" DECIMAL(14,2) NOT NULL,
    "total_sold" INTEGER NOT NULL,
    "lifetime_revenue" DECIMAL(14,2) NOT NULL,
    "first_sold" DATE,
    "date_last_sold" DATE,
    "calculated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "product_metrics_pkey" PRIMARY KEY ("pid")
);

-- CreateTable
CREATE TABLE "data_runs" (
    "id" SERIAL NOT NULL,
    "type" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "ended_at" TIMESTAMPTZ(3),
    "started_by" INTEGER,
    "cancel_requested" BOOLEAN NOT NULL DEFAULT false,
    "error" TEXT,
    "last_event" JSONB,

    CONSTRAINT "data_runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "data_run_events" (
    "id" SERIAL NOT NULL,
    "run_id" INTEGER NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "event" JSONB NOT NULL,

    CONSTRAINT "data_run_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "import_history" (
    "id" SERIAL NOT NULL,
    "run_id" INTEGER,
    "start_time" TIMESTAMPTZ(3) NOT NULL,
    "end_time" TIMESTAMPTZ(3),
    "duration_minutes" DOUBLE PRECISION,
    "status" TEXT NOT NULL,
    "records_added" INTEGER NOT NULL DEFAULT 0,
    "records_updated" INTEGER NOT NULL DEFAULT 0,
    "records_deleted" INTEGER NOT NULL DEFAULT 0,
    "records_skipped" INTEGER NOT NULL DEFAULT 0,
    "total_processed" INTEGER NOT NULL DEFAULT 0,
    "error_message" TEXT,
    "additional_info" JSONB,

    CONSTRAINT "import_history_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "calculate_history" (
    "id" SERIAL NOT NULL,
    "run_id" INTEGER,
    "start_time" TIMESTAMPTZ(3) NOT NULL,
    "end_time" TIMESTAMPTZ(3),
    "duration_minutes" DOUBLE PRECISION,
    "status" TEXT NOT NULL,
    "processed_products" INTEGER NOT NULL DEFAULT 0,
    "total_products" INTEGER NOT NULL DEFAULT 0,
    "processed_orders" INTEGER NOT NULL DEFAULT 0,
    "total_orders" INTEGER NOT NULL DEFAULT 0,
    "processed_purchase_orders" INTEGER NOT NULL DEFAULT 0,
    "total_purchase_orders" INTEGER NOT NULL DEFAULT 0,
    "error_message" TEXT,
    "additional_info" JSONB,

    CONSTRAINT "calculate_history_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sync_status" (
    "table_name" TEXT NOT NULL,
    "last_sync_timestamp" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "sync_status_pkey" PRIMARY KEY ("table_name")
);

-- CreateTable
CREATE TABLE "calculate_status" (
    "module_name" TEXT NOT NULL,
    "last_calculation_timestamp" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "calculate_status_pkey" PRIMARY KEY ("module_name")
);

-- CreateIndex
CREATE INDEX "brands_name_idx" ON "brands"("name");

-- CreateIndex
CREATE UNIQUE INDEX "vendors_name_key" ON "vendors"("name");

-- CreateIndex
CREATE INDEX "categories_parent_id_idx" ON "categories"("parent_id");

-- CreateIndex
CREATE INDEX "categories_type_idx" ON "categories"("type");

-- CreateIndex
CREATE INDEX "products_sku_idx" ON "products"("sku");

-- CreateIndex
CREATE INDEX "products_barcode_idx" ON "products"("barcode");

-- CreateIndex
CREATE INDEX "products_brand_id_idx" ON "products"("brand_id");

-- CreateIndex
CREATE INDEX "products_vendor_id_idx" ON "products"("vendor_id");

-- CreateIndex
CREATE INDEX "products_title_idx" ON "products"("title");

-- CreateIndex
CREATE INDEX "products_first_received_idx" ON "products"("first_received");

-- CreateIndex
CREATE INDEX "product_categories_category_id_idx" ON "product_categories"("category_id");

-- CreateIndex
CREATE INDEX "order_lines_pid_order_date_idx" ON "order_lines"("pid", "order_date");

-- CreateIndex
CREATE INDEX "order_lines_order_date_idx" ON "order_lines"("order_date");

-- CreateIndex
CREATE INDEX "order_lines_order_number_idx" ON "order_lines"("order_number");

-- CreateIndex
CREATE INDEX "purchase_orders_vendor_id_idx" ON "purchase_orders"("vendor_id");

-- CreateIndex
CREATE INDEX "purchase_orders_status_idx" ON "purchase_orders"("status");

-- CreateIndex
CREATE INDEX "po_lines_po_id_idx" ON "po_lines"("po_id");

-- CreateIndex
CREATE INDEX "po_lines_pid_idx" ON "po_lines"("pid");

-- CreateIndex
CREATE INDEX "receivings_po_line_id_idx" ON "receivings"("po_line_id");

-- CreateIndex
CREATE INDEX "product_metrics_total_sold_idx" ON "product_metrics"("total_sold");

-- CreateIndex
CREATE INDEX "product_metrics_revenue_30d_idx" ON "product_metrics"("revenue_30d");

-- CreateIndex
CREATE INDEX "product_metrics_units_30d_idx" ON "product_metrics"("units_30d");

-- CreateIndex
CREATE INDEX "product_metrics_date_last_sold_idx" ON "product_metrics"("date_last_sold");

-- CreateIndex
CREATE INDEX "data_runs_started_at_idx" ON "data_runs"("started_at");

-- CreateIndex
CREATE INDEX "data_run_events_run_id_id_idx" ON "data_run_events"("run_id", "id");

-- CreateIndex
CREATE INDEX "import_history_start_time_idx" ON "import_history"("start_time");

-- CreateIndex
CREATE INDEX "calculate_history_start_time_idx" ON "calculate_history"("start_time");

-- AddForeignKey
ALTER TABLE "data_run_events" ADD CONSTRAINT "data_run_events_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "data_runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
