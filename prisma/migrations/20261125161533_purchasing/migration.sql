-- AlterTable
ALTER TABLE "purchase_orders" ADD COLUMN     "reference" TEXT;

-- CreateTable
CREATE TABLE "app_purchase_orders" (
    "id" SERIAL NOT NULL,
    "number" TEXT NOT NULL,
    "vendor_id" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "date_ordered" DATE,
    "date_expected" DATE,
    "notes" TEXT,
    "reason" TEXT,
    "created_by" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "version" INTEGER NOT NULL DEFAULT 1,

    CONSTRAINT "app_purchase_orders_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "app_po_lines" (
    "id" SERIAL NOT NULL,
    "po_id" INTEGER NOT NULL,
    "pid" INTEGER NOT NULL,
    "ordered_qty" INTEGER NOT NULL,
    "received_qty" INTEGER NOT NULL DEFAULT 0,
    "cost_each" DECIMAL(12,4) NOT NULL,

    CONSTRAINT "app_po_lines_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "app_po_receipts" (
    "id" SERIAL NOT NULL,
    "po_line_id" INTEGER NOT NULL,
    "qty" INTEGER NOT NULL,
    "received_date" DATE NOT NULL,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "recorded_by" INTEGER,
    "in_source_stock" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "app_po_receipts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "app_po_history" (
    "id" SERIAL NOT NULL,
    "po_id" INTEGER NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "user_id" INTEGER,
    "username" TEXT,
    "action" TEXT NOT NULL,
    "details" JSONB,

    CONSTRAINT "app_po_history_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "vendor_terms" (
    "vendor_id" INTEGER NOT NULL,
    "min_order_value" DECIMAL(14,2),
    "min_order_qty" INTEGER,
    "free_freight_threshold" DECIMAL(14,2),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_by" INTEGER,

    CONSTRAINT "vendor_terms_pkey" PRIMARY KEY ("vendor_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "app_purchase_orders_number_key" ON "app_purchase_orders"("number");

-- CreateIndex
CREATE INDEX "app_purchase_orders_vendor_id_status_idx" ON "app_purchase_orders"("vendor_id", "status");

-- CreateIndex
CREATE INDEX "app_purchase_orders_status_date_expected_idx" ON "app_purchase_orders"("status", "date_expected");

-- CreateIndex
CREATE INDEX "app_purchase_orders_date_ordered_idx" ON "app_purchase_orders"("date_ordered");

-- CreateIndex
CREATE INDEX "app_po_lines_pid_idx" ON "app_po_lines"("pid");

-- CreateIndex
CREATE UNIQUE INDEX "app_po_lines_po_id_pid_key" ON "app_po_lines"("po_id", "pid");

-- CreateIndex
CREATE INDEX "app_po_receipts_po_line_id_idx" ON "app_po_receipts"("po_line_id");

-- CreateIndex
CREATE INDEX "app_po_receipts_in_source_stock_idx" ON "app_po_receipts"("in_source_stock");

-- CreateIndex
CREATE INDEX "app_po_history_po_id_at_idx" ON "app_po_history"("po_id", "at");

-- CreateIndex
CREATE INDEX "purchase_orders_reference_idx" ON "purchase_orders"("reference");

-- AddForeignKey
ALTER TABLE "app_po_lines" ADD CONSTRAINT "app_po_lines_po_id_fkey" FOREIGN KEY ("po_id") REFERENCES "app_purchase_orders"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "app_po_receipts" ADD CONSTRAINT "app_po_receipts_po_line_id_fkey" FOREIGN KEY ("po_line_id") REFERENCES "app_po_lines"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "app_po_history" ADD CONSTRAINT "app_po_history_po_id_fkey" FOREIGN KEY ("po_id") REFERENCES "app_purchase_orders"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- App purchase-order numbers start at A1001
ALTER SEQUENCE "app_purchase_orders_id_seq" RESTART WITH 1001;
