import type { AppRouter } from "@client/lib/trpc.ts";
import type { inferRouterOutputs } from "@trpc/server";

export type RouterOutputs = inferRouterOutputs<AppRouter>;
export type AdminUserRow = RouterOutputs["users"]["list"][number];
