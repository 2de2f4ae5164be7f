import { z } from "zod";
import {
  PidSchema,
  ProductSearchInputSchema,
  TemplateIdSchema,
  TemplateInputSchema,
} from "../../../shared/templates.ts";
import { permissionProcedure, router } from "../../trpc/trpc.ts";
import { FIELD_OPTIONS_READ, TEMPLATES_READ, TEMPLATES_WRITE } from "./templates.access.ts";
import {
  createTemplate,
  deleteTemplate,
  getFieldOptions,
  getProductCategories,
  getTemplate,
  listTemplates,
  searchProducts,
  updateTemplate,
} from "./templates.service.ts";

const readProcedure = permissionProcedure(TEMPLATES_READ);
const writeProcedure = permissionProcedure(TEMPLATES_WRITE);
const IdInput = z.object({ id: TemplateIdSchema });

export const templatesRouter = router({
  fieldOptions: permissionProcedure(FIELD_OPTIONS_READ).query(({ ctx }) => getFieldOptions(ctx.db)),
  list: readProcedure.query(({ ctx }) => listTemplates(ctx.db)),
  get: readProcedure.input(IdInput).query(({ ctx, input }) => getTemplate(ctx.db, input.id)),
  create: writeProcedure
    .input(TemplateInputSchema)
    .mutation(({ ctx, input }) => createTemplate(ctx.db, input)),
  update: writeProcedure
    .input(TemplateInputSchema.extend({ id: TemplateIdSchema }))
    .mutation(({ ctx, input: { id, ...data } }) => updateTemplate(ctx.db, id, data)),
  delete: writeProcedure.input(IdInput).mutation(({ ctx, input }) => deleteTemplate(ctx.db, input.id)),
  searchProducts: readProcedure
    .input(ProductSearchInputSchema)
    .query(({ ctx, input }) => searchProducts(ctx.db, input)),
  productCategories: readProcedure
    .input(z.object({ pid: PidSchema }))
    .query(({ ctx, input }) => getProductCategories(ctx.db, input.pid)),
});
