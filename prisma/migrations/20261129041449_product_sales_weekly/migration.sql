-- CreateTable
CREATE TABLE "product_sales_weekly" (
    "pid" INTEGER NOT NULL,
    "first_week" DATE NOT NULL,
    "weeks" SMALLINT[],
    "units" INTEGER[],

    CONSTRAINT "product_sales_weekly_pkey" PRIMARY KEY ("pid")
);
