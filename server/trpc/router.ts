import { authRouter } from "../modules/auth/auth.router.ts";
import { dataOpsRouter } from "../modules/dataOps/dataOps.router.ts";
import { usersRouter } from "../modules/users/users.router.ts";
import { router } from "./trpc.ts";

export const appRouter = router({
  auth: authRouter,
  users: usersRouter,
  dataOps: dataOpsRouter,
});

export type AppRouter = typeof appRouter;
