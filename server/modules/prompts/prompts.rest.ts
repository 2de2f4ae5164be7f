import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { PromptIdSchema, PromptInputSchema } from "../../../shared/prompts.ts";
import { badRequest } from "../../errors.ts";
import { parseBody } from "../../http/validate.ts";
import type { AppServices } from "../../services.ts";
import {
  createPrompt,
  deletePrompt,
  listPrompts,
  listPromptVersions,
  updatePrompt,
} from "./prompts.service.ts";

const IdParams = z.object({ id: PromptIdSchema });
const UpdateBody = PromptInputSchema.extend({ id: PromptIdSchema.optional() });

/** Legacy REST of spec section 7 "AI prompts": the cookie session, no authorization header. */
export async function promptsRestRoutes(app: FastifyInstance, { db }: AppServices) {
  const opts = { config: { auth: "settings:prompt_management" as const } };
  app.get("/api/ai-prompts", opts, () => listPrompts(db));
  app.post("/api/ai-prompts", opts, async (req, reply) => {
    const created = await createPrompt(db, parseBody(PromptInputSchema, req.body));
    return reply.status(201).send(created);
  });
  app.put("/api/ai-prompts/:id", opts, (req) => {
    const { id } = parseBody(IdParams, req.params);
    const { id: bodyId, ...data } = parseBody(UpdateBody, req.body);
    if (bodyId !== undefined && bodyId !== id) throw badRequest("does not match the id in the path", "id");
    return updatePrompt(db, id, data);
  });
  app.get("/api/ai-prompts/:id/versions", opts, (req) =>
    listPromptVersions(db, parseBody(IdParams, req.params, "path").id),
  );
  app.delete("/api/ai-prompts/:id", opts, (req) => deletePrompt(db, parseBody(IdParams, req.params).id));
}
