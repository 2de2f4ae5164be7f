// Overrides reach the reorder figures at once: after an override is saved or removed, the planning
// module runs again on its own (it reads the figures the last calculation stored in
// product_metrics and product_forecasts, and the overrides in force) for the last calculation's
// as-of moment, in one transaction. Its timestamp is recorded in calculate_status, so every
// instance's cached product pages are renewed. When a data operation holds the run lock, nothing
// is recomputed here: that run's calculation, or the next one, applies the overrides.
import type { Database } from "../../db/database.ts";
import { recordCalculation } from "../../jobs/calculate.ts";
import { DATA_OPS_LOCK_KEY } from "../../jobs/data-ops.ts";
import { planningModule } from "../../jobs/planning/planning.ts";

/**
 * Recomputes the planning rows after the forecast of `pids` changed. Answers whether it ran (false:
 * no calculation yet, or a data operation is running).
 */
export async function refreshPlanningRows(db: Database, pids: readonly number[]): Promise<boolean> {
  if (pids.length === 0) return false;
  const conn = await db.connect();
  try {
    return await conn.transaction(async (tx) => {
      const [lock] = await tx.query<{ locked: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS locked", [
        DATA_OPS_LOCK_KEY,
      ]);
      if (!lock?.locked) return false;
      const [row] = await tx.query<{ as_of: Date | null }>(
        "SELECT max(calculated_at) AS as_of FROM product_metrics",
      );
      if (!row?.as_of) return false;
      await planningModule.run({ conn: tx, asOf: new Date(row.as_of) });
      await recordCalculation(tx, [planningModule.name], new Date());
      return true;
    });
  } finally {
    await conn.release();
  }
}
