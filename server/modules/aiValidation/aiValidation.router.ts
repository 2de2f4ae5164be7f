import { z } from "zod";
import {
  ImportAiRowsSchema,
  ListCallsInputSchema,
  ReplayInputSchema,
  SuggestionActionSchema,
} from "../../../shared/ai-validation.ts";
import { idSchema } from "../../../shared/input.ts";
import { permissionProcedure, router } from "../../trpc/trpc.ts";
import { getCall, listCalls } from "./aiValidation.service.ts";
import {
  actOnSuggestions,
  cancelImportValidation,
  estimateImport,
  importAiStatus,
  listImportSuggestions,
  startImportValidation,
} from "./import-validation.ts";

const importProcedure = permissionProcedure("create:products");
const ImportId = z.object({ id: idSchema });

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
  /** The cost and tokens before an import's AI step starts. */
  importEstimate: importProcedure
    .input(ImportId.extend(ImportAiRowsSchema.shape))
    .query(({ ctx, input }) => estimateImport(ctx.ai, ctx.db, ctx.user, input.id, input.rows)),
  importStart: importProcedure
    .input(ImportId.extend(ImportAiRowsSchema.shape))
    .mutation(({ ctx, input }) => startImportValidation(ctx.ai, ctx.db, ctx.user, input.id, input.rows)),
  /** The run in progress (polled by the screen for its progress bar) and the import's AI history. */
  importStatus: importProcedure
    .input(ImportId)
    .query(({ ctx, input }) => importAiStatus(ctx.ai, ctx.db, ctx.user, input.id)),
  importCancel: importProcedure
    .input(ImportId)
    .mutation(({ ctx, input }) => cancelImportValidation(ctx.ai, ctx.db, ctx.user, input.id)),
  importSuggestions: importProcedure
    .input(ImportId)
    .query(({ ctx, input }) => listImportSuggestions(ctx.db, ctx.user, input.id)),
  suggestions: importProcedure
    .input(z.intersection(ImportId, SuggestionActionSchema))
    .mutation(({ ctx, input: { id, ...action } }) => actOnSuggestions(ctx.db, ctx.user, id, action)),
  testConnection: permissionProcedure("settings:prompt_management").mutation(({ ctx }) =>
    ctx.ai.testConnection(ctx.user.id),
  ),
});
