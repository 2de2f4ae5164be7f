import { deviceCreateInput, deviceIdInput } from "../../../shared/dashboard.ts";
import { permissionProcedure, router } from "../../trpc/trpc.ts";
import { getDashboard } from "./dashboard.service.ts";
import { createDevice, getSmall, listDevices, revokeDevice } from "./small.service.ts";

const dashboardProcedure = permissionProcedure("access:dashboard");
const deviceProcedure = permissionProcedure("settings:user_management");

export const dashboardRouter = router({
  /** The tiles, KPIs and charts of /dashboard (GET /api/dashboard). */
  summary: dashboardProcedure.query(({ ctx }) => getDashboard(ctx.db, ctx.user)),
  /** The compact figures of /small for a signed-in user (devices read GET /api/small). */
  small: dashboardProcedure.query(({ ctx }) => getSmall(ctx.db)),
  devices: deviceProcedure.query(({ ctx }) => listDevices(ctx.db)),
  createDevice: deviceProcedure
    .input(deviceCreateInput)
    .mutation(({ ctx, input }) => createDevice(ctx.db, input.name, ctx.user.id)),
  revokeDevice: deviceProcedure
    .input(deviceIdInput)
    .mutation(({ ctx, input }) => revokeDevice(ctx.db, input.id)),
});
