// Module planning of the planning engine: see docs/metrics.md. (Scaffold: filled in by its own change.)
import type { CalcModule } from "../calculate.ts";

export const planningModule: CalcModule = {
  name: "planning",
  tables: [],
  async run() {
    return 0;
  },
};
