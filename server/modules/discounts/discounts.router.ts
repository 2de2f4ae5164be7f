import {
  ClearanceInputSchema,
  PromotionIdSchema,
  PromotionInputSchema,
  PromotionListInputSchema,
  PromotionUpdateSchema,
  SimulationInputSchema,
} from "../../../shared/discounts.ts";
import { productMetricsListInput } from "../../../shared/metrics.ts";
import { permissionProcedure, router } from "../../trpc/trpc.ts";
import {
  cancelPromotion,
  createPromotion,
  filterScope,
  getPromotion,
  listPromotions,
  listScopeOptions,
  searchClearance,
  simulateDiscount,
  updatePromotion,
} from "./discounts.service.ts";

/** Simulating and reading promotions: the page's own permission. */
const simulator = permissionProcedure("access:discount_simulator");
/** Saving, editing and cancelling promotions. */
const promotions = permissionProcedure("create:promotions");

export const discountsRouter = router({
  scopeOptions: simulator.query(({ ctx }) => listScopeOptions(ctx.db)),
  /** A Products-page filter (the list's own input) as a scope of product IDs. */
  filterScope: simulator.input(productMetricsListInput).query(({ ctx, input }) => filterScope(ctx.db, input)),
  /** Stateless: projects a scenario, saves nothing (a mutation only because its input can be long). */
  simulate: simulator
    .input(SimulationInputSchema)
    .mutation(({ ctx, input }) => simulateDiscount(ctx.db, input)),
  clearance: simulator
    .input(ClearanceInputSchema)
    .mutation(({ ctx, input }) => searchClearance(ctx.db, input)),
  promotions: simulator
    .input(PromotionListInputSchema)
    .query(({ ctx, input }) => listPromotions(ctx.db, input.status)),
  promotion: simulator.input(PromotionIdSchema).query(({ ctx, input }) => getPromotion(ctx.db, input.id)),
  createPromotion: promotions
    .input(PromotionInputSchema)
    .mutation(({ ctx, input }) => createPromotion(ctx.db, input, ctx.user.id)),
  updatePromotion: promotions
    .input(PromotionUpdateSchema)
    .mutation(({ ctx, input }) => updatePromotion(ctx.db, input.id, input.promotion)),
  cancelPromotion: promotions
    .input(PromotionIdSchema)
    .mutation(({ ctx, input }) => cancelPromotion(ctx.db, input.id)),
});
