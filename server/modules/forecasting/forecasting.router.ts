import { z } from "zod";
import {
  accuracyInput,
  exceptionsInput,
  forecastListInput,
  forecastPidInput,
  overrideIdInput,
  overrideListInput,
} from "../../../shared/forecasting.ts";
import { permissionProcedure, router } from "../../trpc/trpc.ts";
import {
  createOverride,
  deleteOverride,
  forecastAccuracy,
  forecastExceptions,
  forecastOptions,
  forecastProduct,
  listForecastRows,
  listOverrideGroups,
  previewOverride,
} from "./forecasting.service.ts";

const read = permissionProcedure("access:forecasting");
const write = permissionProcedure("update:forecasts");
/** The override body is checked by the service (its messages name the field at fault). */
const overrideBody = z.unknown();

export const forecastingRouter = router({
  options: read.query(({ ctx }) => forecastOptions(ctx.db)),
  rows: read.input(forecastListInput).query(({ ctx, input }) => listForecastRows(ctx.db, input)),
  product: read.input(forecastPidInput).query(({ ctx, input }) => forecastProduct(ctx.db, input.pid)),
  overrides: read.input(overrideListInput).query(({ ctx, input }) => listOverrideGroups(ctx.db, input)),
  accuracy: read.input(accuracyInput).query(({ ctx, input }) => forecastAccuracy(ctx.db, input)),
  exceptions: read.input(exceptionsInput).query(({ ctx, input }) => forecastExceptions(ctx.db, input)),
  previewOverride: write.input(overrideBody).query(({ ctx, input }) => previewOverride(ctx.db, input)),
  createOverride: write
    .input(overrideBody)
    .mutation(({ ctx, input }) => createOverride(ctx.db, ctx.user!, input)),
  deleteOverride: write.input(overrideIdInput).mutation(({ ctx, input }) => deleteOverride(ctx.db, input.id)),
});
