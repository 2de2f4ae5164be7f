-- AlterTable
ALTER TABLE "product_forecast_accuracy" ADD COLUMN     "mase" DOUBLE PRECISION,
ADD COLUMN     "naive_wape" DOUBLE PRECISION,
ADD COLUMN     "seasonal_naive_mase" DOUBLE PRECISION,
ADD COLUMN     "seasonal_naive_wape" DOUBLE PRECISION;

-- AlterTable
ALTER TABLE "product_forecasts" ADD COLUMN     "bias" DOUBLE PRECISION,
ADD COLUMN     "change" DOUBLE PRECISION,
ADD COLUMN     "chosen_by_backtest" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "final_units" DOUBLE PRECISION NOT NULL DEFAULT 0,
ADD COLUMN     "final_value" DOUBLE PRECISION NOT NULL DEFAULT 0,
ADD COLUMN     "has_override" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "mase" DOUBLE PRECISION,
ADD COLUMN     "system_units" DOUBLE PRECISION NOT NULL DEFAULT 0,
ADD COLUMN     "wape" DOUBLE PRECISION;

-- CreateIndex
CREATE INDEX "product_forecasts_final_value_pid_idx" ON "product_forecasts"("final_value" DESC, "pid");

-- CreateIndex
CREATE INDEX "product_forecasts_final_units_pid_idx" ON "product_forecasts"("final_units" DESC, "pid");
