-- CreateIndex
CREATE INDEX "product_forecasts_wape_desc_pid_idx" ON "product_forecasts"("wape" DESC, "pid");

-- CreateIndex
CREATE INDEX "product_forecasts_wape_asc_pid_idx" ON "product_forecasts"("wape", "pid");

-- CreateIndex
CREATE INDEX "product_forecasts_bias_desc_pid_idx" ON "product_forecasts"("bias" DESC, "pid");

-- CreateIndex
CREATE INDEX "product_forecasts_bias_asc_pid_idx" ON "product_forecasts"("bias", "pid");

-- CreateIndex
CREATE INDEX "product_forecasts_change_desc_pid_idx" ON "product_forecasts"("change" DESC, "pid");

-- CreateIndex
CREATE INDEX "product_forecasts_change_asc_pid_idx" ON "product_forecasts"("change", "pid");
