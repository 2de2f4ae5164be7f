// Module forecast of the planning engine: see docs/metrics.md. (Scaffold: filled in by its own change.)
import type { CalcModule } from "../calculate.ts";

export const forecastModule: CalcModule = {
  name: "forecast",
  tables: ["product_forecasts", "product_forecast_accuracy"],
  async run() {
    return 0;
  },
};
