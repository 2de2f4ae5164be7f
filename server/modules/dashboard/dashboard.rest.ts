import type { FastifyInstance } from "fastify";
import { deviceCreateInput, deviceIdInput } from "../../../shared/dashboard.ts";
import { unauthorized } from "../../errors.ts";
import { parseBody } from "../../http/validate.ts";
import type { AppServices } from "../../services.ts";
import { getDashboard } from "./dashboard.service.ts";
import { createDevice, getSmall, listDevices, revokeDevice } from "./small.service.ts";

/** REST for scripts and the compact dashboard (docs/api.md "Dashboard"). */
export async function dashboardRestRoutes(app: FastifyInstance, services: AppServices) {
  const { db } = services;
  app.get("/api/dashboard", { config: { auth: "access:dashboard" } }, (req) => {
    if (!req.user) throw unauthorized();
    return getDashboard(db, req.user);
  });
  // A signed-in user with access:dashboard, or a device link's token (config.device).
  app.get("/api/small", { config: { auth: "access:dashboard", device: true } }, async (_req, reply) => {
    reply.header("cache-control", "no-store");
    return getSmall(db);
  });
  const devices = { config: { auth: "settings:user_management" as const } };
  app.get("/api/small/devices", devices, () => listDevices(db));
  app.post("/api/small/devices", devices, async (req, reply) => {
    const { name } = parseBody(deviceCreateInput, req.body);
    reply.code(201);
    return createDevice(db, name, req.user?.id ?? null);
  });
  app.delete("/api/small/devices/:id", devices, async (req, reply) => {
    await revokeDevice(db, parseBody(deviceIdInput, req.params, "path").id);
    reply.code(204);
  });
}
