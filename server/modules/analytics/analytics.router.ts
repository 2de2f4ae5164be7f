import { periodInput } from "../../../shared/analytics.ts";
import { permissionProcedure, router } from "../../trpc/trpc.ts";
import { getOverview } from "./overview.service.ts";

const overviewProcedure = permissionProcedure("access:overview");

export const analyticsRouter = router({
  /** The Overview page (/overview): KPIs of a period against its comparison, and the breakdowns. */
  overview: overviewProcedure
    .input(periodInput)
    .query(({ ctx, input }) => getOverview(ctx.db, ctx.user, input)),
});
