import type { FastifyInstance } from "fastify";
import { z } from "zod";
import {
  PidSchema,
  ProductSearchInputSchema,
  TemplateIdSchema,
  TemplateInputSchema,
} from "../../../shared/templates.ts";
import { parseBody } from "../../http/validate.ts";
import type { AppServices } from "../../services.ts";
import { FIELD_OPTIONS_READ, TEMPLATES_READ, TEMPLATES_WRITE } from "./templates.access.ts";
import {
  createTemplate,
  deleteTemplate,
  getFieldOptions,
  getProductCategories,
  listTemplates,
  searchProductsJson,
  updateTemplate,
} from "./templates.service.ts";

const IdParams = z.object({ id: TemplateIdSchema });
const PidParams = z.object({ pid: PidSchema });

/** Legacy REST of spec section 7 "Import templates". */
export async function templatesRestRoutes(app: FastifyInstance, { db }: AppServices) {
  const read = { config: { auth: TEMPLATES_READ } };
  const write = { config: { auth: TEMPLATES_WRITE } };

  app.get("/api/templates", read, () => listTemplates(db));
  app.post("/api/templates", write, async (req, reply) => {
    const created = await createTemplate(db, parseBody(TemplateInputSchema, req.body));
    return reply.status(201).send(created);
  });
  app.put("/api/templates/:id", write, (req) => {
    const { id } = parseBody(IdParams, req.params);
    return updateTemplate(db, id, parseBody(TemplateInputSchema, req.body));
  });
  app.delete("/api/templates/:id", write, (req) => deleteTemplate(db, parseBody(IdParams, req.params).id));

  app.get("/api/import/field-options", { config: { auth: FIELD_OPTIONS_READ } }, () => getFieldOptions(db));
  // The search answers ready JSON text (up to 5,000 rows), sent as is rather than parsed and re-serialised.
  app.get("/api/import/search-products", read, async (req, reply) => {
    const json = await searchProductsJson(db, parseBody(ProductSearchInputSchema, req.query));
    return reply.type("application/json; charset=utf-8").send(json);
  });
  app.get("/api/import/product-categories/:pid", read, (req) =>
    getProductCategories(db, parseBody(PidParams, req.params).pid),
  );
}
