-- CreateTable
CREATE TABLE "sales_daily" (
    "dim" TEXT NOT NULL,
    "key" INTEGER NOT NULL,
    "day" DATE NOT NULL,
    "units" INTEGER NOT NULL,
    "revenue" DECIMAL(14,2) NOT NULL,
    "takings" DECIMAL(14,2) NOT NULL,
    "costed_revenue" DECIMAL(14,2) NOT NULL,
    "cogs" DECIMAL(14,2) NOT NULL,
    "orders" INTEGER NOT NULL,
    "returned_units" INTEGER NOT NULL,
    "returned_value" DECIMAL(14,2) NOT NULL,

    CONSTRAINT "sales_daily_pkey" PRIMARY KEY ("dim","key","day")
);

-- CreateTable
CREATE TABLE "stock_value_weekly" (
    "dim" TEXT NOT NULL,
    "key" INTEGER NOT NULL,
    "week_end" DATE NOT NULL,
    "value_cost" DECIMAL(16,2) NOT NULL,
    "units" INTEGER NOT NULL,
    "in_stock_a" INTEGER NOT NULL,
    "a_products" INTEGER NOT NULL,

    CONSTRAINT "stock_value_weekly_pkey" PRIMARY KEY ("dim","key","week_end")
);

-- CreateTable
CREATE TABLE "small_devices" (
    "id" SERIAL NOT NULL,
    "name" TEXT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "created_by" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),

    CONSTRAINT "small_devices_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "small_devices_token_hash_key" ON "small_devices"("token_hash");
