import type { FastifyInstance } from "fastify";
import type { AppServices } from "../../services.ts";
import { listPermissionCategories } from "./users.service.ts";

/** Legacy REST of spec section 7 "Users" under /auth-inv (bearer token or session cookie). */
export async function usersRestRoutes(app: FastifyInstance, services: AppServices) {
  app.get("/auth-inv/permissions/categories", { config: { auth: "settings:user_management" } }, () =>
    listPermissionCategories(services.db),
  );
}
