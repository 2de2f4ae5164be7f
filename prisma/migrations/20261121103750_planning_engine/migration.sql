-- AlterTable
ALTER TABLE "product_metrics" ADD COLUMN     "abc_basis_value" DECIMAL(14,2),
ADD COLUMN     "abc_class" CHAR(1),
ADD COLUMN     "abc_share_before" DECIMAL(10,6),
ADD COLUMN     "avg_daily_sales" DECIMAL(12,4) NOT NULL DEFAULT 0,
ADD COLUMN     "avg_stock_units_365" DECIMAL(14,2) NOT NULL DEFAULT 0,
ADD COLUMN     "cogs_365d" DECIMAL(14,2),
ADD COLUMN     "daily_sales_std" DECIMAL(12,4) NOT NULL DEFAULT 0,
ADD COLUMN     "days_of_cover" DECIMAL(12,1),
ADD COLUMN     "days_of_stock" INTEGER,
ADD COLUMN     "demand_rate" DECIMAL(12,4),
ADD COLUMN     "demand_source" TEXT,
ADD COLUMN     "forecast_horizon_units" DECIMAL(14,2),
ADD COLUMN     "forecast_method" TEXT,
ADD COLUMN     "gmroi_365d" DECIMAL(12,4),
ADD COLUMN     "gross_profit_365d" DECIMAL(14,2),
ADD COLUMN     "history_days" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "history_start" DATE,
ADD COLUMN     "horizon_days" DECIMAL(10,2),
ADD COLUMN     "in_stock_days_90" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "is_new" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "lead_time_configured" INTEGER,
ADD COLUMN     "lead_time_configured_source" TEXT,
ADD COLUMN     "lead_time_days" DECIMAL(10,2),
ADD COLUMN     "lead_time_demand" DECIMAL(14,2),
ADD COLUMN     "lead_time_measured" DECIMAL(10,2),
ADD COLUMN     "lead_time_measured_level" TEXT,
ADD COLUMN     "lead_time_measured_samples" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "lead_time_measured_std" DECIMAL(10,2),
ADD COLUMN     "lead_time_source" TEXT,
ADD COLUMN     "margin_365d" DECIMAL(10,4),
ADD COLUMN     "out_of_stock_days_365" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "out_of_stock_days_90" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "overstock_qty" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "overstock_value" DECIMAL(14,2) NOT NULL DEFAULT 0,
ADD COLUMN     "reorder_point" INTEGER,
ADD COLUMN     "reorder_qty" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "reorder_value" DECIMAL(14,2) NOT NULL DEFAULT 0,
ADD COLUMN     "safety_stock" INTEGER,
ADD COLUMN     "safety_stock_method" TEXT,
ADD COLUMN     "sell_through_30d" DECIMAL(10,4),
ADD COLUMN     "service_level" DECIMAL(6,4),
ADD COLUMN     "status" TEXT,
ADD COLUMN     "stockout_date" DATE,
ADD COLUMN     "turnover_365d" DECIMAL(12,4),
ADD COLUMN     "z_score" DECIMAL(8,4);

-- CreateTable
CREATE TABLE "product_stock_history" (
    "pid" INTEGER NOT NULL,
    "valid_from" DATE NOT NULL,
    "valid_to" DATE NOT NULL,
    "stock" INTEGER NOT NULL,
    "sold_first_day" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "product_stock_history_pkey" PRIMARY KEY ("pid","valid_from")
);

-- CreateTable
CREATE TABLE "vendor_lead_times" (
    "vendor_id" INTEGER NOT NULL,
    "samples" INTEGER NOT NULL,
    "mean_days" DECIMAL(10,2),
    "std_days" DECIMAL(10,2),
    "on_time_rate" DECIMAL(10,4),
    "fill_rate" DECIMAL(10,4),

    CONSTRAINT "vendor_lead_times_pkey" PRIMARY KEY ("vendor_id")
);

-- CreateTable
CREATE TABLE "product_forecasts" (
    "pid" INTEGER NOT NULL,
    "method" TEXT NOT NULL,
    "requested_method" TEXT NOT NULL,
    "week_start" DATE NOT NULL,
    "weekly" DOUBLE PRECISION[],
    "total_91d" DOUBLE PRECISION NOT NULL,

    CONSTRAINT "product_forecasts_pkey" PRIMARY KEY ("pid")
);

-- CreateTable
CREATE TABLE "product_forecast_accuracy" (
    "pid" INTEGER NOT NULL,
    "method" TEXT NOT NULL,
    "weeks" INTEGER NOT NULL,
    "actual" DOUBLE PRECISION NOT NULL,
    "wape" DOUBLE PRECISION,
    "mape" DOUBLE PRECISION,
    "bias" DOUBLE PRECISION,

    CONSTRAINT "product_forecast_accuracy_pkey" PRIMARY KEY ("pid","method")
);

-- CreateTable
CREATE TABLE "brand_metrics" (
    "brand_id" INTEGER NOT NULL,
    "product_count" INTEGER NOT NULL,
    "active_product_count" INTEGER NOT NULL,
    "stock_units" INTEGER NOT NULL,
    "stock_value_cost" DECIMAL(16,2) NOT NULL,
    "stock_value_retail" DECIMAL(16,2) NOT NULL,
    "units_7d" INTEGER NOT NULL,
    "units_30d" INTEGER NOT NULL,
    "units_90d" INTEGER NOT NULL,
    "units_365d" INTEGER NOT NULL,
    "revenue_7d" DECIMAL(16,2) NOT NULL,
    "revenue_30d" DECIMAL(16,2) NOT NULL,
    "revenue_90d" DECIMAL(16,2) NOT NULL,
    "revenue_365d" DECIMAL(16,2) NOT NULL,
    "lifetime_revenue" DECIMAL(16,2) NOT NULL,
    "gross_profit_365d" DECIMAL(16,2) NOT NULL,
    "margin_365d" DECIMAL(10,4),
    "reorder_value" DECIMAL(16,2) NOT NULL,
    "overstock_value" DECIMAL(16,2) NOT NULL,
    "status_counts" JSONB NOT NULL,
    "abc_counts" JSONB NOT NULL,

    CONSTRAINT "brand_metrics_pkey" PRIMARY KEY ("brand_id")
);

-- CreateTable
CREATE TABLE "vendor_metrics" (
    "vendor_id" INTEGER NOT NULL,
    "product_count" INTEGER NOT NULL,
    "active_product_count" INTEGER NOT NULL,
    "stock_units" INTEGER NOT NULL,
    "stock_value_cost" DECIMAL(16,2) NOT NULL,
    "stock_value_retail" DECIMAL(16,2) NOT NULL,
    "units_7d" INTEGER NOT NULL,
    "units_30d" INTEGER NOT NULL,
    "units_90d" INTEGER NOT NULL,
    "units_365d" INTEGER NOT NULL,
    "revenue_7d" DECIMAL(16,2) NOT NULL,
    "revenue_30d" DECIMAL(16,2) NOT NULL,
    "revenue_90d" DECIMAL(16,2) NOT NULL,
    "revenue_365d" DECIMAL(16,2) NOT NULL,
    "lifetime_revenue" DECIMAL(16,2) NOT NULL,
    "gross_profit_365d" DECIMAL(16,2) NOT NULL,
    "margin_365d" DECIMAL(10,4),
    "reorder_value" DECIMAL(16,2) NOT NULL,
    "overstock_value" DECIMAL(16,2) NOT NULL,
    "status_counts" JSONB NOT NULL,
    "abc_counts" JSONB NOT NULL,
    "lead_time_samples" INTEGER NOT NULL DEFAULT 0,
    "lead_time_mean" DECIMAL(10,2),
    "lead_time_std" DECIMAL(10,2),
    "on_time_rate" DECIMAL(10,4),
    "fill_rate" DECIMAL(10,4),

    CONSTRAINT "vendor_metrics_pkey" PRIMARY KEY ("vendor_id")
);

-- CreateTable
CREATE TABLE "category_metrics" (
    "category_id" INTEGER NOT NULL,
    "product_count" INTEGER NOT NULL,
    "active_product_count" INTEGER NOT NULL,
    "stock_units" INTEGER NOT NULL,
    "stock_value_cost" DECIMAL(16,2) NOT NULL,
    "stock_value_retail" DECIMAL(16,2) NOT NULL,
    "units_7d" INTEGER NOT NULL,
    "units_30d" INTEGER NOT NULL,
    "units_90d" INTEGER NOT NULL,
    "units_365d" INTEGER NOT NULL,
    "revenue_7d" DECIMAL(16,2) NOT NULL,
    "revenue_30d" DECIMAL(16,2) NOT NULL,
    "revenue_90d" DECIMAL(16,2) NOT NULL,
    "revenue_365d" DECIMAL(16,2) NOT NULL,
    "lifetime_revenue" DECIMAL(16,2) NOT NULL,
    "gross_profit_365d" DECIMAL(16,2) NOT NULL,
    "margin_365d" DECIMAL(10,4),
    "reorder_value" DECIMAL(16,2) NOT NULL,
    "overstock_value" DECIMAL(16,2) NOT NULL,
    "status_counts" JSONB NOT NULL,
    "abc_counts" JSONB NOT NULL,

    CONSTRAINT "category_metrics_pkey" PRIMARY KEY ("category_id")
);

-- CreateIndex
CREATE INDEX "product_metrics_status_idx" ON "product_metrics"("status");

-- CreateIndex
CREATE INDEX "product_metrics_abc_class_idx" ON "product_metrics"("abc_class");

-- CreateIndex
CREATE INDEX "product_metrics_reorder_qty_idx" ON "product_metrics"("reorder_qty");

-- CreateIndex
CREATE INDEX "product_metrics_stockout_date_idx" ON "product_metrics"("stockout_date");
