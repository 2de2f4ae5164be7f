import { z } from "zod";
import { idSchema } from "../../../shared/input.ts";
import {
  BulkEditSchema,
  ImportIdSchema,
  ImportSettingsSchema,
  ListImportsSchema,
  RowPatchSchema,
  RowsQuerySchema,
} from "../../../shared/product-import.ts";
import { permissionProcedure, router } from "../../trpc/trpc.ts";
import {
  bulkEdit,
  discardImport,
  getImport,
  IMPORT_READ,
  IMPORT_WRITE,
  listImports,
  listRows,
  loadImport,
  patchRow,
  updateImportSettings,
} from "./productImport.service.ts";
import { getProgress } from "./progress.ts";
import { continueWithRowsLeft, dryRun, listCreatedProducts, submitImport } from "./submit.ts";

const readProcedure = permissionProcedure(IMPORT_READ);
const writeProcedure = permissionProcedure(IMPORT_WRITE);
const IdInput = z.object({ id: ImportIdSchema });

/** Create Products (/import). Uploads (the file, images) are multipart REST routes: docs/api.md. */
export const productImportRouter = router({
  list: readProcedure
    .input(ListImportsSchema)
    .query(({ ctx, input }) => listImports(ctx.db, ctx.user, input)),
  get: readProcedure.input(IdInput).query(({ ctx, input }) => getImport(ctx.db, ctx.user, input.id)),
  update: writeProcedure
    .input(ImportSettingsSchema.extend({ id: ImportIdSchema }))
    .mutation(({ ctx, input: { id, ...settings } }) => updateImportSettings(ctx.db, ctx.user, id, settings)),
  rows: readProcedure
    .input(RowsQuerySchema.extend({ id: ImportIdSchema }))
    .query(({ ctx, input: { id, ...q } }) => listRows(ctx.db, ctx.user, id, q)),
  patchRow: writeProcedure
    .input(RowPatchSchema.extend({ id: ImportIdSchema, row_id: idSchema }))
    .mutation(({ ctx, input: { id, row_id, ...patch } }) => patchRow(ctx.db, ctx.user, id, row_id, patch)),
  bulkEdit: writeProcedure
    .input(z.object({ id: ImportIdSchema, edit: BulkEditSchema }))
    .mutation(({ ctx, input }) => bulkEdit(ctx.db, ctx.user, input.id, input.edit)),
  dryRun: writeProcedure.input(IdInput).mutation(({ ctx, input }) => dryRun(ctx.db, ctx.user, input.id)),
  submit: writeProcedure
    .input(IdInput)
    .mutation(({ ctx, input }) =>
      submitImport({ db: ctx.db, storage: ctx.images, exportDir: ctx.config.exportDir }, ctx.user, input.id),
    ),
  /** A submitted import's rows that were not created, as a new draft import to fix and submit. */
  continueWithRowsLeft: writeProcedure
    .input(IdInput)
    .mutation(({ ctx, input }) => continueWithRowsLeft(ctx.db, ctx.user, input.id)),
  /** How far a running submit has got (null when none ran lately): the page's progress bar. */
  progress: readProcedure.input(IdInput).query(async ({ ctx, input }) => {
    await loadImport(ctx.db, ctx.user, input.id);
    return getProgress(input.id);
  }),
  discard: writeProcedure
    .input(IdInput)
    .mutation(({ ctx, input }) => discardImport(ctx.db, ctx.user, input.id)),
  created: readProcedure
    .input(IdInput)
    .query(({ ctx, input }) => listCreatedProducts(ctx.db, ctx.user, input.id)),
});
