// Module aggregates of the planning engine: see docs/metrics.md. (Scaffold: filled in by its own change.)
import type { CalcModule } from "../calculate.ts";

export const aggregatesModule: CalcModule = {
  name: "aggregates",
  tables: ["brand_metrics", "vendor_metrics", "category_metrics"],
  async run() {
    return 0;
  },
};
