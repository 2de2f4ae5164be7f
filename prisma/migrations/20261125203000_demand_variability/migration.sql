-- What a product's demand deviation σd was measured on (docs/metrics.md §3): in-stock weekly
-- buckets and the bulk orders left out of them.
ALTER TABLE "product_metrics" ADD COLUMN "demand_variability" JSONB;
