import type { FastifyInstance } from "fastify";
import {
  ClearanceInputSchema,
  PromotionIdSchema,
  PromotionInputSchema,
  PromotionListInputSchema,
  SimulationInputSchema,
} from "../../../shared/discounts.ts";
import { parseBody } from "../../http/validate.ts";
import type { AppServices } from "../../services.ts";
import {
  cancelPromotion,
  createPromotion,
  getPromotion,
  listPromotions,
  searchClearance,
  simulateDiscount,
  updatePromotion,
} from "./discounts.service.ts";

/** REST for scripts over the same services as the tRPC router `discounts` (docs/api.md). */
export async function discountsRestRoutes(app: FastifyInstance, services: AppServices) {
  const { db } = services;
  const simulator = { config: { auth: "access:discount_simulator" as const } };
  const promotions = { config: { auth: "create:promotions" as const } };

  app.post("/api/discount-simulations", simulator, (req) =>
    simulateDiscount(db, parseBody(SimulationInputSchema, req.body)),
  );
  app.post("/api/discount-simulations/clearance", simulator, (req) =>
    searchClearance(db, parseBody(ClearanceInputSchema, req.body)),
  );
  app.get("/api/promotions", simulator, (req) =>
    listPromotions(db, parseBody(PromotionListInputSchema, req.query, "query").status),
  );
  app.get("/api/promotions/:id", simulator, (req) =>
    getPromotion(db, parseBody(PromotionIdSchema, req.params, "path").id),
  );
  app.post("/api/promotions", promotions, async (req, reply) => {
    const created = await createPromotion(db, parseBody(PromotionInputSchema, req.body), req.user!.id);
    return reply.code(201).send(created);
  });
  app.put("/api/promotions/:id", promotions, (req) =>
    updatePromotion(
      db,
      parseBody(PromotionIdSchema, req.params, "path").id,
      parseBody(PromotionInputSchema, req.body),
    ),
  );
  app.delete("/api/promotions/:id", promotions, (req) =>
    cancelPromotion(db, parseBody(PromotionIdSchema, req.params, "path").id),
  );
}
