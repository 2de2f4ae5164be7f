import { aggregateListInput, metricsPidInput, productMetricsListInput } from "../../../shared/metrics.ts";
import type { PermissionCode } from "../../../shared/permissions.ts";
import { hasPermission } from "../../../shared/permissions.ts";
import { forbidden } from "../../errors.ts";
import { permissionProcedure, router } from "../../trpc/trpc.ts";
import {
  explainProductMetrics,
  listAggregates,
  listProductMetrics,
  productMetricsDetail,
} from "./metrics.service.ts";

const productProcedure = permissionProcedure("access:products");

/** Each aggregate list belongs to its page: brands, vendors or categories. */
const AGGREGATE_PERMISSIONS = {
  brand: "access:brands",
  vendor: "access:vendors",
  category: "access:categories",
} as const satisfies Record<string, PermissionCode>;

export const metricsRouter = router({
  products: productProcedure
    .input(productMetricsListInput)
    .query(({ ctx, input }) => listProductMetrics(ctx.db, input)),
  explain: productProcedure
    .input(metricsPidInput)
    .query(({ ctx, input }) => explainProductMetrics(ctx.db, input.pid)),
  product: productProcedure
    .input(metricsPidInput)
    .query(({ ctx, input }) => productMetricsDetail(ctx.db, input.pid)),
  aggregates: permissionProcedure(Object.values(AGGREGATE_PERMISSIONS))
    .input(aggregateListInput)
    .query(({ ctx, input }) => {
      if (!hasPermission(ctx.user, AGGREGATE_PERMISSIONS[input.kind])) throw forbidden();
      return listAggregates(ctx.db, input);
    }),
});
