import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { ListCallsInputSchema, ReplayInputSchema } from "../../../shared/ai-validation.ts";
import { idSchema } from "../../../shared/input.ts";
import { parseBody } from "../../http/validate.ts";
import type { AppServices } from "../../services.ts";
import { getCall, listCalls } from "./aiValidation.service.ts";

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
  app.post(
    "/api/ai-validation/test-connection",
    { config: { auth: "settings:prompt_management" as const } },
    (req) => ai.testConnection(req.user!.id),
  );
}
