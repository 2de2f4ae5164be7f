// The app's singletons: one tRPC client, one session store, one query cache.
import { TOKEN_STORAGE_KEY } from "@shared/auth.ts";
import { createTRPCOptionsProxy } from "@trpc/tanstack-react-query";
import { useSyncExternalStore } from "react";
import { type AuthState, AuthStore } from "./auth-store.ts";
import { createQueryClient } from "./query-client.ts";
import { type AppRouter, createAppTrpcClient } from "./trpc.ts";

export const trpcClient = createAppTrpcClient();

export const auth: AuthStore = new AuthStore(trpcClient, {
  // The next user must not see the previous one's cached data.
  onUserChange: () => queryClient.clear(),
});

export const queryClient = createQueryClient(() => auth.handleUnauthorized());

export const trpc = createTRPCOptionsProxy<AppRouter>({ client: trpcClient, queryClient });

export function useAuth(): AuthState {
  return useSyncExternalStore(auth.subscribe, auth.getSnapshot);
}

// A logout (or a cleared storage) in another tab ends this tab's session too.
window.addEventListener("storage", (event) => {
  if ((event.key === null || event.key === TOKEN_STORAGE_KEY) && event.newValue === null)
    auth.handleUnauthorized();
});
