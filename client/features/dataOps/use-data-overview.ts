// History & Status data (spec section 7 "Data management"): the two history lists, the import and
// calculation status and the table counts are fetched together on load, every 60 s and on refresh.
import { errorStatus, isUnauthorized } from "@client/lib/errors.ts";
import { useTRPCClient } from "@client/lib/trpc.ts";
import { HISTORY_LIMIT, HISTORY_REFRESH_MS } from "@shared/data-ops.ts";
import { useQuery } from "@tanstack/react-query";
import { useCallback, useRef } from "react";
import { toast } from "sonner";
import type {
  CalculationRecord,
  ImportRecord,
  ModuleStatusEntry,
  TableCounts,
  TableStatusEntry,
} from "./model.ts";

/** One part of the overview: its data, or the error that kept it from loading. */
export type Section<T> = { ok: true; data: T } | { ok: false; error: unknown };

export interface DataOverview {
  importHistory: Section<ImportRecord[]>;
  calculationHistory: Section<CalculationRecord[]>;
  tableStatus: Section<TableStatusEntry[]>;
  moduleStatus: Section<ModuleStatusEntry[]>;
  tableCounts: Section<TableCounts>;
  /** 'dataOps.importHistory (500)' for each part that failed. */
  failed: string[];
}

export const DATA_OVERVIEW_KEY = ["dataOps", "overview"] as const;

function settle<T>(result: PromiseSettledResult<T>): Section<T> {
  return result.status === "fulfilled"
    ? { ok: true, data: result.value }
    : { ok: false, error: result.reason };
}

export interface DataOverviewState {
  overview: DataOverview | undefined;
  isLoading: boolean;
  isFetching: boolean;
  /**
   * Refetches everything; resolves to true when every part loaded. `quiet` leaves out the
   * 'Failed to load data' toast (a manual refresh shows its own).
   */
  reload: (opts?: { quiet?: boolean }) => Promise<boolean>;
}

export function useDataOverview(): DataOverviewState {
  const client = useTRPCClient();
  /** While a manual refresh runs, its own toast replaces the 'Failed to load data' one. */
  const quiet = useRef(false);

  const query = useQuery({
    queryKey: DATA_OVERVIEW_KEY,
    staleTime: 0,
    refetchInterval: HISTORY_REFRESH_MS,
    queryFn: async (): Promise<DataOverview> => {
      const input = { limit: HISTORY_LIMIT };
      const results = await Promise.allSettled([
        client.dataOps.importHistory.query(input),
        client.dataOps.calculationHistory.query(input),
        client.dataOps.tableStatus.query(),
        client.dataOps.moduleStatus.query(),
        client.dataOps.tableCounts.query(),
      ]);
      const [importHistory, calculationHistory, tableStatus, moduleStatus, tableCounts] = results;
      const names = ["importHistory", "calculationHistory", "tableStatus", "moduleStatus", "tableCounts"];
      const failed: string[] = [];
      results.forEach((r, i) => {
        if (r.status === "fulfilled") return;
        // A lost session is the session's business (the query cache's onError signs out).
        if (isUnauthorized(r.reason)) throw r.reason;
        failed.push(`dataOps.${names[i]} (${errorStatus(r.reason) ?? "network error"})`);
      });
      if (failed.length && !quiet.current) {
        toast.error(`Failed to load data: Failed requests: ${failed.join(", ")}`);
      }
      return {
        importHistory: settle(importHistory),
        calculationHistory: settle(calculationHistory),
        tableStatus: settle(tableStatus),
        moduleStatus: settle(moduleStatus),
        tableCounts: settle(tableCounts),
        failed,
      };
    },
  });

  const { refetch } = query;
  const reload = useCallback(
    async ({ quiet: silent = false } = {}) => {
      quiet.current = silent;
      try {
        const result = await refetch();
        return !result.error && !!result.data && result.data.failed.length === 0;
      } finally {
        quiet.current = false;
      }
    },
    [refetch],
  );

  return { overview: query.data, isLoading: query.isPending, isFetching: query.isFetching, reload };
}
