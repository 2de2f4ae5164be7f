import { z } from "zod";
import { PromptIdSchema, PromptInputSchema } from "../../../shared/prompts.ts";
import { permissionProcedure, router } from "../../trpc/trpc.ts";
import {
  createPrompt,
  deletePrompt,
  listPrompts,
  listPromptVersions,
  updatePrompt,
} from "./prompts.service.ts";

const promptProcedure = permissionProcedure("settings:prompt_management");

export const promptsRouter = router({
  list: promptProcedure.query(({ ctx }) => listPrompts(ctx.db)),
  create: promptProcedure.input(PromptInputSchema).mutation(({ ctx, input }) => createPrompt(ctx.db, input)),
  update: promptProcedure
    .input(PromptInputSchema.extend({ id: PromptIdSchema }))
    .mutation(({ ctx, input: { id, ...data } }) => updatePrompt(ctx.db, id, data)),
  versions: promptProcedure
    .input(z.object({ id: PromptIdSchema }))
    .query(({ ctx, input }) => listPromptVersions(ctx.db, input.id)),
  delete: promptProcedure
    .input(z.object({ id: PromptIdSchema }))
    .mutation(({ ctx, input }) => deletePrompt(ctx.db, input.id)),
});
