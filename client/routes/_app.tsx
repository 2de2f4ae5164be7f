import { FullPageLoading } from "@client/components/full-page-loading.tsx";
import { AppLayout } from "@client/features/layout/app-layout.tsx";
import { createFileRoute, redirect } from "@tanstack/react-router";

/**
 * The sign-in guard of spec section 4 "Session" in front of every page of the layout. Without the
 * session flag (after verifying a stored token) it redirects, replacing, to /login with the
 * requested path and query; with it, the current user is loaded first ('Loading...' meanwhile).
 */
export const Route = createFileRoute("/_app")({
  beforeLoad: ({ context, location }) => {
    const guard = (signedIn: boolean) => {
      if (!signedIn) {
        throw redirect({
          to: "/login",
          search: { redirect: location.pathname + location.searchStr },
          replace: true,
        });
      }
    };
    const session = context.auth.ensureSession();
    return typeof session === "boolean" ? guard(session) : session.then(guard);
  },
  // 'Loading...' from the first moment the user is being fetched, and no longer than that.
  pendingComponent: FullPageLoading,
  pendingMs: 0,
  pendingMinMs: 0,
  component: AppLayout,
});
