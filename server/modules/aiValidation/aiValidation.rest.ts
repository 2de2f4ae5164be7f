import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import {
  ImportAiRowsSchema,
  ListCallsInputSchema,
  ReplayInputSchema,
  SuggestionActionSchema,
} from "../../../shared/ai-validation.ts";
import { idSchema } from "../../../shared/input.ts";
import type { Database } from "../../db/database.ts";
import { parseBody } from "../../http/validate.ts";
import type { AppServices } from "../../services.ts";
import type { AiValidation, BatchProgress } from "./aiValidation.service.ts";
import { getCall, listCalls } from "./aiValidation.service.ts";
import {
  actOnSuggestions,
  cancelImportValidation,
  estimateImport,
  importAiStatus,
  listImportSuggestions,
  startImportValidation,
  storedRun,
} from "./import-validation.ts";

const IdParams = z.object({ id: idSchema });

/** REST for scripts: the AI call log, replay and the connection test (docs/api.md). */
export async function aiValidationRestRoutes(app: FastifyInstance, { db, ai }: AppServices) {
  const debug = { config: { auth: "access:ai_validation_debug" as const } };
  app.get("/api/ai-validation/status", { config: { auth: "authenticated" as const } }, () => ai.status());
  app.get("/api/ai-validation/runs", debug, (req) =>
    listCalls(db, parseBody(ListCallsInputSchema, req.query, "query")),
  );
  app.get("/api/ai-validation/runs/:id", debug, (req) =>
    getCall(db, parseBody(IdParams, req.params, "path").id),
  );
  app.post("/api/ai-validation/runs/:id/replay", debug, (req) => {
    const { id } = parseBody(IdParams, req.params, "path");
    const body = parseBody(ReplayInputSchema.omit({ id: true }), req.body);
    return ai.replay({ ...body, id }, req.user!.id);
  });
  const write = { config: { auth: "create:products" as const } };
  const log = (err: unknown) => app.log.error({ err }, "AI validation of an import failed");
  app.post("/api/product-imports/:id/ai-validate", write, (req) => {
    const { id } = parseBody(IdParams, req.params, "path");
    const { rows } = parseBody(ImportAiRowsSchema, req.body ?? {});
    return startImportValidation(ai, db, req.user!, id, rows, log);
  });
  app.post("/api/product-imports/:id/ai-validate/estimate", write, (req) => {
    const { id } = parseBody(IdParams, req.params, "path");
    const { rows } = parseBody(ImportAiRowsSchema, req.body ?? {});
    return estimateImport(ai, db, req.user!, id, rows);
  });
  app.get("/api/product-imports/:id/ai-validate", write, (req) =>
    importAiStatus(ai, db, req.user!, parseBody(IdParams, req.params, "path").id),
  );
  app.post("/api/product-imports/:id/ai-validate/cancel", write, (req) =>
    cancelImportValidation(ai, db, req.user!, parseBody(IdParams, req.params, "path").id),
  );
  app.get("/api/product-imports/:id/ai-validate/progress", write, async (req, reply) => {
    const { id } = parseBody(IdParams, req.params, "path");
    await importAiStatus(ai, db, req.user!, id); // 404 / 403 before the stream opens
    // A run on this instance streams from its batch; one on another instance from the bus.
    if (ai.latestBatchFor(id)) streamImportProgress(ai, id, req, reply);
    else await streamRemoteProgress(ai, db, id, req, reply);
  });
  app.get("/api/product-imports/:id/ai-suggestions", write, (req) =>
    listImportSuggestions(db, req.user!, parseBody(IdParams, req.params, "path").id),
  );
  app.post("/api/product-imports/:id/ai-suggestions", write, (req) => {
    const { id } = parseBody(IdParams, req.params, "path");
    return actOnSuggestions(db, req.user!, id, parseBody(SuggestionActionSchema, req.body), log);
  });
  app.post(
    "/api/ai-validation/test-connection",
    { config: { auth: "settings:prompt_management" as const } },
    (req) => ai.testConnection(req.user!.id),
  );
}

/**
 * Server-sent events of an import's AI run: the current state first, then each change, until the
 * verdicts are saved into the rows (`saved: true`) or the run ends. No run on this instance: one
 * event `{ status: "idle" }` and the stream ends.
 */
function streamImportProgress(ai: AiValidation, importId: number, req: FastifyRequest, reply: FastifyReply) {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-cache, no-transform",
    Connection: "keep-alive",
    "X-Accel-Buffering": "no",
  });
  const send = (e: object) => res.write(`data: ${JSON.stringify(e)}\n\n`);
  const batch = ai.latestBatchFor(importId);
  if (!batch) {
    send({ status: "idle", import_id: importId });
    res.end();
    return;
  }
  let finished = false;
  const onProgress = (p: BatchProgress) => {
    if (finished) return;
    send(p);
    if (p.saved) end();
  };
  const heartbeat = setInterval(() => res.write(": keep-alive\n\n"), 15_000);
  const end = () => {
    finished = true;
    clearInterval(heartbeat);
    batch.events.off("progress", onProgress);
    res.end();
  };
  batch.events.on("progress", onProgress);
  send({ ...batch.progress });
  if (batch.savedAt) end();
  req.raw.on("close", () => {
    if (!finished) end();
  });
}

/**
 * The same stream for a run another instance is doing (PostgreSQL LISTEN/NOTIFY, as the data
 * operations' progress): its stored progress first, then each change the running instance
 * publishes, until the verdicts are saved. No run: `{ status: "idle" }`; a finished one: its last
 * progress with `saved: true`.
 */
async function streamRemoteProgress(
  ai: AiValidation,
  db: Database,
  importId: number,
  req: FastifyRequest,
  reply: FastifyReply,
) {
  const events: BatchProgress[] = [];
  // Subscribe first, so nothing published between the read and the subscription is lost.
  let deliver: ((p: BatchProgress) => void) | null = null;
  const off = ai.onRemoteProgress((p) => {
    if (p.import_id !== importId) return;
    const { import_id: _i, ...progress } = p;
    if (deliver) deliver(progress);
    else events.push(progress);
  });
  let stored: Awaited<ReturnType<typeof storedRun>>;
  try {
    stored = await storedRun(ai, db, importId);
  } catch (err) {
    off();
    throw err;
  }
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-cache, no-transform",
    Connection: "keep-alive",
    "X-Accel-Buffering": "no",
  });
  const send = (e: object) => res.write(`data: ${JSON.stringify(e)}\n\n`);
  let finished = false;
  const heartbeat = setInterval(() => res.write(": keep-alive\n\n"), 15_000);
  // A NOTIFY can be missed (the listening connection came back): the stored state is read again.
  const poll = setInterval(() => {
    void storedRun(ai, db, importId)
      .then((s) => {
        if (!finished && s && s.batch_id === batchId && (s.saved || !s.running)) {
          const { running: _r, ...p } = s;
          onProgress({ ...p, saved: true });
        }
      })
      .catch(() => {});
  }, 5_000);
  const end = () => {
    finished = true;
    clearInterval(heartbeat);
    clearInterval(poll);
    off();
    res.end();
  };
  req.raw.on("close", () => {
    if (!finished) end();
  });
  if (!stored) {
    send({ status: "idle", import_id: importId });
    end();
    return;
  }
  const batchId = stored.batch_id;
  const { running: isRunning, ...first } = stored;
  const onProgress = (p: BatchProgress) => {
    if (finished || p.batch_id < batchId) return;
    send(p);
    if (p.saved) end();
  };
  if (!isRunning) {
    send({ ...first, saved: true });
    end();
    return;
  }
  send(first);
  for (const p of events) onProgress(p);
  deliver = onProgress;
}
