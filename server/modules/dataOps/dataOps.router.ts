import { tracked } from "@trpc/server";
import { z } from "zod";
import { CancelInputSchema, HistoryInputSchema, RunTypeSchema } from "../../../shared/data-ops.ts";
import { PAGE_KEYS, pagePermission } from "../../../shared/permissions.ts";
import type { ProgressEvent } from "../../jobs/progress-bus.ts";
import { permissionProcedure, router } from "../../trpc/trpc.ts";
import { getDataAsOf } from "./as-of.service.ts";
import {
  getTableCounts,
  listCalculationHistory,
  listImportHistory,
  listModuleStatus,
  listTableStatus,
} from "./dataOps.service.ts";

const dataProcedure = permissionProcedure("settings:data_management");

export const dataOpsRouter = router({
  status: dataProcedure.query(({ ctx }) => ctx.dataOps.status()),
  startFullUpdate: dataProcedure.mutation(({ ctx }) => ctx.dataOps.start("update", ctx.user.id)),
  startFullReset: dataProcedure.mutation(({ ctx }) => ctx.dataOps.start("reset", ctx.user.id)),
  /** The chat archive import (CHAT_SOURCE_DIR), a run like the others. */
  startChatImport: dataProcedure.mutation(({ ctx }) => ctx.dataOps.start("chat", ctx.user.id)),
  cancel: dataProcedure.input(CancelInputSchema).mutation(({ ctx, input }) => ctx.dataOps.cancel(input.type)),
  importHistory: dataProcedure
    .input(HistoryInputSchema)
    .query(({ ctx, input }) => listImportHistory(ctx.db, input.limit)),
  calculationHistory: dataProcedure
    .input(HistoryInputSchema)
    .query(({ ctx, input }) => listCalculationHistory(ctx.db, input.limit)),
  moduleStatus: dataProcedure.query(({ ctx }) => listModuleStatus(ctx.db)),
  tableStatus: dataProcedure.query(({ ctx }) => listTableStatus(ctx.db)),
  tableCounts: dataProcedure.query(({ ctx }) => getTableCounts(ctx.db)),
  /** The figures' day and the data's freshness (with its warning): read by every page on the figures. */
  /** (Any page's access, or data management: every page on the figures shows their day.) */
  asOf: permissionProcedure([...PAGE_KEYS.map(pagePermission), "settings:data_management"]).query(({ ctx }) =>
    getDataAsOf(ctx.db),
  ),

  /** Progress of both operations (or one type): the current state first, then every event. */
  progress: dataProcedure
    .input(z.object({ type: RunTypeSchema.optional() }).optional())
    .subscription(async function* ({ ctx, input, signal }) {
      const queue: ProgressEvent[] = [];
      let wake: (() => void) | null = null;
      const off = ctx.dataOps.onProgress((e) => {
        if (input?.type && e.type !== input.type) return;
        queue.push(e);
        wake?.();
      });
      const onAbort = () => wake?.();
      signal?.addEventListener("abort", onAbort, { once: true });
      try {
        for (const type of input?.type ? [input.type] : (["update", "reset", "chat"] as const)) {
          const current = ctx.dataOps.latestEvent(type);
          if (current) yield tracked(`${current.run_id}:${current.timestamp}`, current);
        }
        while (!signal?.aborted) {
          const e = queue.shift();
          if (e) {
            yield tracked(`${e.run_id}:${e.timestamp}`, e);
            continue;
          }
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          wake = null;
        }
      } finally {
        off();
        signal?.removeEventListener("abort", onAbort);
      }
    }),
});
