// Module stock_history of the planning engine: see docs/metrics.md. (Scaffold: filled in by its own change.)
import type { CalcModule } from "../calculate.ts";

export const stockHistoryModule: CalcModule = {
  name: "stock_history",
  tables: ["product_stock_history"],
  async run() {
    return 0;
  },
};
