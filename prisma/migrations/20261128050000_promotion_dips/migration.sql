-- The dip after a promotion (docs/metrics.md §16.2): per category, the past promotions of its
-- products (and its sub-categories' products) and their units in the weeks after them against the
-- products' regular weekly rate; and, per promoted product, the dip its promotion carries.
CREATE TABLE "category_promotion_dips" (
    "category_id" INTEGER NOT NULL,
    "promotions" INTEGER NOT NULL,
    "expected_units" DOUBLE PRECISION[],
    "after_units" DOUBLE PRECISION[],
    "dip" DOUBLE PRECISION NOT NULL,
    "weeks" INTEGER NOT NULL,

    CONSTRAINT "category_promotion_dips_pkey" PRIMARY KEY ("category_id")
);

ALTER TABLE "promotion_products" ADD COLUMN "dip" DOUBLE PRECISION NOT NULL DEFAULT 0,
ADD COLUMN "dip_weeks" INTEGER NOT NULL DEFAULT 0;
