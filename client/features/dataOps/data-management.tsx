// The Data Management tab of Settings (spec section 2 "Data Management screen", section 4 "Data
// operations"): Full Update and Full Reset with live output, cancel, and History & Status.
import { TooltipProvider } from "@client/components/ui/tooltip.tsx";
import { useCallback, useState } from "react";
import { toast } from "sonner";
import { HistoryStatus } from "./history-status.tsx";
import { OperationCards } from "./operation-cards.tsx";
import { ScriptOutput } from "./script-output.tsx";
import { StaleDataWarning } from "./stale-data-warning.tsx";
import { useDataOperations } from "./use-data-operations.ts";
import { useDataOverview } from "./use-data-overview.ts";

export default function DataManagement() {
  const { overview, reload } = useDataOverview();
  const onHistoryChange = useCallback(() => void reload(), [reload]);
  const ops = useDataOperations({ onHistoryChange });
  const [refreshing, setRefreshing] = useState(false);

  const refresh = async () => {
    setRefreshing(true);
    try {
      const [ok] = await Promise.all([reload({ quiet: true }), ops.checkStatus()]);
      if (ok) toast.success("All data refreshed");
      else toast.error("Failed to refresh data");
    } catch {
      toast.error("Failed to refresh data");
    } finally {
      setRefreshing(false);
    }
  };

  return (
    <TooltipProvider>
      <div data-testid="data-management" className="space-y-6">
        <div className="space-y-1">
          <h2 className="text-lg font-semibold tracking-tight">Data Management</h2>
          <p className="text-sm text-muted-foreground">
            Import the latest data, recalculate metrics, and review what ran.
          </p>
        </div>
        <StaleDataWarning />
        <OperationCards ops={ops} />
        <ScriptOutput ops={ops} />
        <HistoryStatus overview={overview} refreshing={refreshing} onRefresh={refresh} />
      </div>
    </TooltipProvider>
  );
}
