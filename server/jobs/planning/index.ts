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

export const PLANNING_MODULES: readonly CalcModule[] = [
  stockHistoryModule,
  leadTimesModule,
  forecastModule,
  planningModule,
  xyzModule,
  aggregatesModule,
  elasticityModule,
  forecastSnapshotsModule,
];
