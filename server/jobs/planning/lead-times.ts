// Module lead_times of the planning engine: see docs/metrics.md. (Scaffold: filled in by its own change.)
import type { CalcModule } from "../calculate.ts";

export const leadTimesModule: CalcModule = {
  name: "lead_times",
  tables: ["vendor_lead_times"],
  async run() {
    return 0;
  },
};
