import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { RunTypeSchema } from "../../../shared/data-ops.ts";
import { idSchema } from "../../../shared/input.ts";
import { parseBody } from "../../http/validate.ts";
import type { ProgressEvent, RunType } from "../../jobs/progress-bus.ts";
import type { AppServices } from "../../services.ts";
import {
  getTableCounts,
  importFindingsCsv,
  listCalculationHistory,
  listImportHistory,
  listModuleStatus,
  listTableStatus,
} from "./dataOps.service.ts";

const auth = "settings:data_management" as const;
const IdParams = z.object({ id: idSchema });
const CancelQuery = z.object({ type: RunTypeSchema.optional() });

/** Legacy REST/SSE of spec section 7 "Data management", served at /csv/* and /api/csv/*. */
export async function dataOpsRestRoutes(app: FastifyInstance, services: AppServices) {
  const { dataOps, db } = services;
  for (const prefix of ["", "/api"]) {
    const opts = { config: { auth } };
    app.get(`${prefix}/csv/status`, opts, () => dataOps.status());
    app.post(`${prefix}/csv/full-update`, opts, async (req) => {
      const { run_id } = await dataOps.start("update", req.user!.id);
      return { success: true, message: "Full update started", run_id };
    });
    app.post(`${prefix}/csv/full-reset`, opts, async (req) => {
      const { run_id } = await dataOps.start("reset", req.user!.id);
      return { success: true, message: "Full reset started", run_id };
    });
    app.post(`${prefix}/csv/chat-import`, opts, async (req) => {
      const { run_id } = await dataOps.start("chat", req.user!.id);
      return { success: true, message: "Chat import started", run_id };
    });
    app.post(`${prefix}/csv/cancel`, opts, async (req) => {
      const { type } = parseBody(CancelQuery, req.query);
      const { run_id } = await dataOps.cancel(type);
      return { success: true, message: "Cancellation requested", run_id };
    });
    app.get(`${prefix}/csv/history/import`, opts, () => listImportHistory(db));
    // Every problem a failed run found in the source data (docs/data-format.md).
    app.get(`${prefix}/csv/history/import/:id/findings.csv`, opts, async (req, reply) => {
      const { id } = parseBody(IdParams, req.params, "path");
      const csv = await importFindingsCsv(db, id);
      return reply
        .header("Content-Type", "text/csv; charset=utf-8")
        .header("Content-Disposition", `attachment; filename="import-${id}-findings.csv"`)
        .header("X-Content-Type-Options", "nosniff")
        .send(csv);
    });
    app.get(`${prefix}/csv/history/calculate`, opts, () => listCalculationHistory(db));
    app.get(`${prefix}/csv/status/modules`, opts, () => listModuleStatus(db));
    app.get(`${prefix}/csv/status/tables`, opts, () => listTableStatus(db));
    app.get(`${prefix}/csv/status/table-counts`, opts, () => getTableCounts(db));
    app.get(`${prefix}/csv/update/progress`, opts, (req, reply) =>
      streamProgress(services, "update", req, reply),
    );
    app.get(`${prefix}/csv/reset/progress`, opts, (req, reply) =>
      streamProgress(services, "reset", req, reply),
    );
    app.get(`${prefix}/csv/chat/progress`, opts, (req, reply) =>
      streamProgress(services, "chat", req, reply),
    );
  }
}

/** Server-sent events: the current state first, then each event of this run type, as JSON text. */
function streamProgress(services: AppServices, type: RunType, req: FastifyRequest, reply: FastifyReply) {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-cache, no-transform",
    Connection: "keep-alive",
    "X-Accel-Buffering": "no",
  });
  const send = (e: ProgressEvent) =>
    res.write(`id: ${e.run_id}:${e.timestamp}\ndata: ${JSON.stringify(e)}\n\n`);
  res.write("retry: 3000\n\n");
  const current = services.dataOps.latestEvent(type);
  if (current) send(current);
  const off = services.dataOps.onProgress((e) => {
    if (e.type === type) send(e);
  });
  const heartbeat = setInterval(() => res.write(": keep-alive\n\n"), 15_000);
  req.raw.on("close", () => {
    clearInterval(heartbeat);
    off();
  });
}
