// The typed API for scripts: the same tRPC procedures the screens call, with end-to-end types.
//   const api = createApiClient({ url: "http://localhost:3000", token });
//   const me = await api.auth.me.query();
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import superjson from "superjson";
import type { AppRouter } from "../../server/trpc/router.ts";

export interface ApiClientOptions {
  /** Base URL of the server, e.g. http://localhost:3000 */
  url: string;
  /** A session token from auth.login (or POST /auth-inv/login). */
  token?: string;
}

export function createApiClient({ url, token }: ApiClientOptions) {
  return createTRPCClient<AppRouter>({
    links: [
      httpBatchLink({
        url: `${url.replace(/\/$/, "")}/trpc`,
        transformer: superjson,
        headers: () => (token ? { authorization: `Bearer ${token}` } : {}),
      }),
    ],
  });
}

/** Signs in and returns a client that carries the new session's token. */
export async function signIn(url: string, username: string, password: string) {
  const { token, user } = await createApiClient({ url }).auth.login.mutate({ username, password });
  return { api: createApiClient({ url, token }), token, user };
}
