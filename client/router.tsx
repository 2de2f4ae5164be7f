import type { PageKey } from "@shared/permissions.ts";
import type { QueryClient } from "@tanstack/react-query";
import { createRouter, useNavigate } from "@tanstack/react-router";
import type { TRPCOptionsProxy } from "@trpc/tanstack-react-query";
import { useEffect } from "react";
import { LoadingIndicator } from "./components/ui/loading-indicator.tsx";
import { RouteError } from "./features/layout/route-error.tsx";
import type { AuthStore } from "./lib/auth-store.ts";
import type { AppRouter } from "./lib/trpc.ts";
import { routeTree } from "./routeTree.gen.ts";

/** What every route's beforeLoad and loader receive. */
export interface RouterContext {
  trpc: TRPCOptionsProxy<AppRouter>;
  queryClient: QueryClient;
  auth: AuthStore;
}

/** Spec section 2: any unknown path redirects to / with replacement (once, not on every render). */
function RedirectHome() {
  const navigate = useNavigate();
  useEffect(() => {
    void navigate({ to: "/", replace: true });
  }, [navigate]);
  return null;
}

export function createAppRouter(context: RouterContext) {
  return createRouter({
    routeTree,
    context,
    defaultPreload: "intent",
    // TanStack Query owns the caching; the router should always ask it.
    defaultPreloadStaleTime: 0,
    scrollRestoration: true,
    defaultPendingComponent: () => <LoadingIndicator />,
    defaultErrorComponent: RouteError,
    defaultNotFoundComponent: RedirectHome,
  });
}

declare module "@tanstack/react-router" {
  interface Register {
    router: ReturnType<typeof createAppRouter>;
  }
  interface StaticDataRouteOption {
    /** The page key of the route table; the layout guards it with `access:<page>`. */
    page?: PageKey;
  }
}
