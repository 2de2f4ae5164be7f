import { CreateUserInputSchema, UpdateUserInputSchema, UserIdSchema } from "../../../shared/users.ts";
import { permissionProcedure, router } from "../../trpc/trpc.ts";
import {
  createUser,
  deleteUser,
  getUser,
  listPermissionCategories,
  listUsers,
  updateUser,
} from "./users.service.ts";

const userAdmin = permissionProcedure("settings:user_management");

export const usersRouter = router({
  list: userAdmin.query(({ ctx }) => listUsers(ctx.db)),
  get: userAdmin.input(UserIdSchema).query(({ ctx, input }) => getUser(ctx.db, input.id)),
  create: userAdmin
    .input(CreateUserInputSchema)
    .mutation(({ ctx, input }) => createUser(ctx.db, ctx.user, input)),
  update: userAdmin
    .input(UpdateUserInputSchema.extend({ id: UserIdSchema.shape.id }))
    .mutation(({ ctx, input }) => updateUser(ctx.db, ctx.user, input.id, input)),
  delete: userAdmin.input(UserIdSchema).mutation(async ({ ctx, input }) => {
    await deleteUser(ctx.db, ctx.user, input.id);
    return { success: true };
  }),
  permissionCategories: userAdmin.query(({ ctx }) => listPermissionCategories(ctx.db)),
});
