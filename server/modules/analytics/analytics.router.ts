import {
  deadStockInput,
  lostSalesInput,
  moversInput,
  periodInput,
  sellThroughInput,
  stockValueInput,
} from "../../../shared/analytics.ts";
import { permissionProcedure, router } from "../../trpc/trpc.ts";
import {
  abcXyz,
  aging,
  coverDistribution,
  deadStock,
  lostSales,
  movers,
  salesTrend,
  sellThrough,
  stockByCategory,
  stockValue,
  stockValueByCategory,
} from "./analytics.service.ts";
import { getOverview } from "./overview.service.ts";

const overviewProcedure = permissionProcedure("access:overview");
const analyticsProcedure = permissionProcedure("access:analytics");

export const analyticsRouter = router({
  /** The Overview page (/overview): KPIs of a period against its comparison, and the breakdowns. */
  overview: overviewProcedure
    .input(periodInput)
    .query(({ ctx, input }) => getOverview(ctx.db, ctx.user, input)),
  // The Analytics page (/analytics): one procedure per chart, each with its own period control.
  salesTrend: analyticsProcedure
    .input(periodInput)
    .query(async ({ ctx, input }) => (await salesTrend(ctx.db, ctx.user, input)).data),
  movers: analyticsProcedure
    .input(moversInput)
    .query(async ({ ctx, input }) => (await movers(ctx.db, ctx.user, input)).data),
  stockByCategory: analyticsProcedure
    .input(periodInput)
    .query(async ({ ctx, input }) => (await stockByCategory(ctx.db, ctx.user, input)).data),
  stockValue: analyticsProcedure
    .input(stockValueInput)
    .query(async ({ ctx, input }) => (await stockValue(ctx.db, ctx.user, input.weeks)).data),
  stockValueByCategory: analyticsProcedure
    .input(stockValueInput)
    .query(async ({ ctx, input }) => (await stockValueByCategory(ctx.db, ctx.user, input.weeks)).data),
  cover: analyticsProcedure.query(async ({ ctx }) => (await coverDistribution(ctx.db, ctx.user)).data),
  aging: analyticsProcedure.query(async ({ ctx }) => (await aging(ctx.db, ctx.user)).data),
  deadStock: analyticsProcedure
    .input(deadStockInput)
    .query(async ({ ctx, input }) => (await deadStock(ctx.db, ctx.user, input.days)).data),
  abcXyz: analyticsProcedure.query(async ({ ctx }) => (await abcXyz(ctx.db, ctx.user)).data),
  lostSales: analyticsProcedure
    .input(lostSalesInput)
    .query(async ({ ctx, input }) => (await lostSales(ctx.db, ctx.user, input.days, input.dim)).data),
  sellThrough: analyticsProcedure
    .input(sellThroughInput)
    .query(async ({ ctx, input }) => (await sellThrough(ctx.db, ctx.user, input.months)).data),
});
