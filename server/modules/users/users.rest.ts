import type { FastifyInstance } from "fastify";
import { CreateUserInputSchema, UpdateUserInputSchema, UserIdSchema } from "../../../shared/users.ts";
import { parseBody } from "../../http/validate.ts";
import type { AppServices } from "../../services.ts";
import {
  createUser,
  deleteUser,
  getUser,
  listPermissionCategories,
  listUsers,
  updateUser,
} from "./users.service.ts";

const opts = { config: { auth: "settings:user_management" as const } };

/**
 * Legacy REST of spec section 7 "Users" under /auth-inv (bearer token or session cookie). Bodies
 * name permissions by id or code; users come back with their permission codes.
 */
export async function usersRestRoutes(app: FastifyInstance, services: AppServices) {
  const { db } = services;
  app.get("/auth-inv/permissions/categories", opts, () => listPermissionCategories(db));
  app.get("/auth-inv/users", opts, () => listUsers(db));
  app.get("/auth-inv/users/:id", opts, (req) => getUser(db, parseBody(UserIdSchema, req.params).id));
  app.post("/auth-inv/users", opts, async (req, reply) => {
    const user = await createUser(db, req.user!, parseBody(CreateUserInputSchema, req.body));
    return reply.status(201).send(user);
  });
  app.put("/auth-inv/users/:id", opts, (req) =>
    updateUser(
      db,
      req.user!,
      parseBody(UserIdSchema, req.params).id,
      parseBody(UpdateUserInputSchema, req.body),
    ),
  );
  app.delete("/auth-inv/users/:id", opts, async (req) => {
    await deleteUser(db, req.user!, parseBody(UserIdSchema, req.params).id);
    return { success: true, message: "User deleted" };
  });
}
