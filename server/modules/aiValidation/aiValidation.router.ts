import { z } from "zod";
import { ListCallsInputSchema, ReplayInputSchema } from "../../../shared/ai-validation.ts";
import { idSchema } from "../../../shared/input.ts";
import { permissionProcedure, router } from "../../trpc/trpc.ts";
import { getCall, listCalls } from "./aiValidation.service.ts";

const debugProcedure = permissionProcedure("access:ai_validation_debug");

export const aiValidationRouter = router({
  /** Whether a model is configured (and which), for the screens that offer the AI step. */
  status: permissionProcedure([
    "create:products",
    "access:ai_validation_debug",
    "settings:prompt_management",
  ]).query(({ ctx }) => ctx.ai.status()),
  runs: debugProcedure.input(ListCallsInputSchema).query(({ ctx, input }) => listCalls(ctx.db, input)),
  run: debugProcedure.input(z.object({ id: idSchema })).query(({ ctx, input }) => getCall(ctx.db, input.id)),
  replay: debugProcedure
    .input(ReplayInputSchema)
    .mutation(({ ctx, input }) => ctx.ai.replay(input, ctx.user.id)),
  testConnection: permissionProcedure("settings:prompt_management").mutation(({ ctx }) =>
    ctx.ai.testConnection(ctx.user.id),
  ),
});
