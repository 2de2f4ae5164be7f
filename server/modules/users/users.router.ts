import { permissionProcedure, router } from "../../trpc/trpc.ts";
import { listPermissionCategories } from "./users.service.ts";

export const usersRouter = router({
  permissionCategories: permissionProcedure("settings:user_management").query(({ ctx }) =>
    listPermissionCategories(ctx.db),
  ),
});
