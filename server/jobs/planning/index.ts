// The planning engine's calculation modules, in the order they run (docs/metrics.md).
import type { CalcModule } from "../calculate.ts";
import { aggregatesModule } from "./aggregates.ts";
import { elasticityModule } from "./elasticity.ts";
import { forecastModule } from "./forecast.ts";
import { forecastSnapshotsModule } from "./forecast-snapshots.ts";
import { leadTimesModule } from "./lead-times.ts";
import { planningModule } from "./planning.ts";
import { stockHistoryModule } from "./stock-history.ts";
import { xyzModule } from "./xyz.ts";

// elasticity reads only the imported tables and the stock history: it runs before forecast so that a
// Full Reset's run connection fits it while the second connection still computes the forecast
// (planning, next, waits for that), instead of waiting idle. xyz reads the stock history and leaves
// its figures for planning's UPDATE, so it runs between them, also before that wait.
export const PLANNING_MODULES: readonly CalcModule[] = [
  stockHistoryModule,
  xyzModule,
  leadTimesModule,
  elasticityModule,
  forecastModule,
  planningModule,
  aggregatesModule,
  forecastSnapshotsModule,
];
