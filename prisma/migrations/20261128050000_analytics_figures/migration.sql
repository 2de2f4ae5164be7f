-- The Analytics page's receipt and lost-sales figures, stored by the calculation module
-- analytics_figures (docs/metrics.md §19), so a chart reads a few rows instead of walking every
-- receipt or expanding every product into its categories on its first request.

-- Stock on hand by days since the receipt it came in with (first in, first out), per age bucket:
-- the products holding some (and their ids, for the Products page's `aging` filter), units, value.
CREATE TABLE "stock_aging" (
    "bucket" TEXT NOT NULL,
    "products" INTEGER NOT NULL,
    "units" INTEGER NOT NULL,
    "value_cost" DECIMAL(18,4) NOT NULL,
    "pids" INTEGER[],

    CONSTRAINT "stock_aging_pkey" PRIMARY KEY ("bucket")
);

-- Units of merchandise received per month up to D0, how many of them are still on hand (first in,
-- first out), and the products received (and their ids, for the `received_month` filter).
CREATE TABLE "receipt_months" (
    "month" DATE NOT NULL,
    "received" INTEGER NOT NULL,
    "on_hand" INTEGER NOT NULL,
    "products" INTEGER NOT NULL,
    "pids" INTEGER[],

    CONSTRAINT "receipt_months_pkey" PRIMARY KEY ("month")
);

-- Estimated revenue lost on out-of-stock days over the last 90 and 365 days, per product category
-- (rolled up), vendor, and in total (dim 'total', key 0).
CREATE TABLE "lost_sales" (
    "days" INTEGER NOT NULL,
    "dim" TEXT NOT NULL,
    "key" INTEGER NOT NULL,
    "lost_revenue" DECIMAL(18,4) NOT NULL,
    "out_of_stock_days" INTEGER NOT NULL,
    "products" INTEGER NOT NULL,

    CONSTRAINT "lost_sales_pkey" PRIMARY KEY ("days","dim","key")
);
