import {
  createTRPCClient,
  httpBatchLink,
  httpSubscriptionLink,
  splitLink,
  type TRPCClient,
} from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import superjson from "superjson";
import type { AppRouter } from "../../server/trpc/router.ts";
import { getToken } from "./auth-storage.ts";

export type { AppRouter };
export type AppTrpcClient = TRPCClient<AppRouter>;

const TRPC_URL = "/trpc";

/** `useTRPC()` gives components the typed query/mutation option factories; `useTRPCClient()` the client. */
export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();

/**
 * Queries and mutations go batched over fetch with the bearer token (and the session cookie);
 * subscriptions go over EventSource, which cannot set headers but carries the cookie.
 */
export function createAppTrpcClient(): AppTrpcClient {
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === "subscription",
        true: httpSubscriptionLink({
          url: TRPC_URL,
          transformer: superjson,
          // EventSource cannot send headers: the httpOnly session cookie set at login authenticates
          // subscriptions (a token in the URL would end up in access logs).
          eventSourceOptions: { withCredentials: true },
        }),
        false: httpBatchLink({
          url: TRPC_URL,
          transformer: superjson,
          headers: () => {
            const token = getToken();
            return token ? { Authorization: `Bearer ${token}` } : {};
          },
          fetch: (url, options) => fetch(url, { ...options, credentials: "include" }),
        }),
      }),
    ],
  });
}
