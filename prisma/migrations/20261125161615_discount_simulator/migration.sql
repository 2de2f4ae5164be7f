-- CreateTable
CREATE TABLE "product_elasticities" (
    "pid" INTEGER NOT NULL,
    "source" TEXT NOT NULL,
    "elasticity" DOUBLE PRECISION NOT NULL,
    "category_id" INTEGER,
    "fitted" DOUBLE PRECISION,
    "fitted_se" DOUBLE PRECISION,
    "ci_low" DOUBLE PRECISION NOT NULL,
    "ci_high" DOUBLE PRECISION NOT NULL,
    "price_changes" INTEGER NOT NULL,
    "weeks" INTEGER NOT NULL,
    "discounted_weeks" INTEGER NOT NULL,

    CONSTRAINT "product_elasticities_pkey" PRIMARY KEY ("pid")
);

-- CreateTable
CREATE TABLE "category_elasticities" (
    "category_id" INTEGER NOT NULL,
    "elasticity" DOUBLE PRECISION NOT NULL,
    "se" DOUBLE PRECISION NOT NULL,
    "ci_low" DOUBLE PRECISION NOT NULL,
    "ci_high" DOUBLE PRECISION NOT NULL,
    "products" INTEGER NOT NULL,
    "price_changes" INTEGER NOT NULL,
    "trusted" BOOLEAN NOT NULL,

    CONSTRAINT "category_elasticities_pkey" PRIMARY KEY ("category_id")
);

-- CreateTable
CREATE TABLE "promotions" (
    "id" SERIAL NOT NULL,
    "name" TEXT NOT NULL,
    "scope" JSONB NOT NULL,
    "discount_pct" DECIMAL(5,2),
    "target_price" DECIMAL(12,2),
    "starts_on" DATE NOT NULL,
    "ends_on" DATE NOT NULL,
    "excluded_pids" INTEGER[] DEFAULT ARRAY[]::INTEGER[],
    "stop_reordering" BOOLEAN NOT NULL DEFAULT false,
    "cancelled_at" TIMESTAMPTZ(3),
    "totals" JSONB NOT NULL,
    "created_by" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "promotions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "promotion_products" (
    "promotion_id" INTEGER NOT NULL,
    "pid" INTEGER NOT NULL,
    "price" DECIMAL(12,2) NOT NULL,
    "base_price" DECIMAL(12,2) NOT NULL,
    "baseline_units" DOUBLE PRECISION NOT NULL,
    "predicted_units" DOUBLE PRECISION NOT NULL,
    "uplift" DOUBLE PRECISION NOT NULL,
    "elasticity" DOUBLE PRECISION NOT NULL,
    "elasticity_source" TEXT NOT NULL,

    CONSTRAINT "promotion_products_pkey" PRIMARY KEY ("promotion_id","pid")
);

-- CreateIndex
CREATE INDEX "promotions_starts_on_ends_on_idx" ON "promotions"("starts_on", "ends_on");

-- CreateIndex
CREATE INDEX "promotion_products_pid_idx" ON "promotion_products"("pid");

-- AddForeignKey
ALTER TABLE "promotion_products" ADD CONSTRAINT "promotion_products_promotion_id_fkey" FOREIGN KEY ("promotion_id") REFERENCES "promotions"("id") ON DELETE CASCADE ON UPDATE CASCADE;
