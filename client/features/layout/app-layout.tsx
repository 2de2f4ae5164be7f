import { FullPageLoading } from "@client/components/full-page-loading.tsx";
import { Button } from "@client/components/ui/button.tsx";
import { Separator } from "@client/components/ui/separator.tsx";
import { SidebarInset, SidebarProvider, SidebarTrigger } from "@client/components/ui/sidebar.tsx";
import { AccessDenied } from "@client/features/auth/access-denied.tsx";
import { PermissionGate } from "@client/features/auth/permission-gate.tsx";
import { auth, useAuth } from "@client/lib/session.ts";
import { pagePermission } from "@shared/permissions.ts";
import { Outlet, useMatches, useNavigate, useRouter } from "@tanstack/react-router";
import { CircleAlertIcon } from "lucide-react";
import { useEffect } from "react";
import { AppSidebar } from "./app-sidebar.tsx";
import { PAGES } from "./pages.ts";

/** The page key the deepest matched route declares in its staticData. */
function useCurrentPage() {
  return useMatches({ select: (matches) => matches.at(-1)?.staticData.page });
}

/**
 * The authenticated shell (spec section 2 "Layout"): sidebar, a 3.5rem top bar with the page title,
 * content up to 1500px wide, and the per-page guard (`access:<page>`).
 */
export function AppLayout() {
  const { user, signedIn, endedBy, error } = useAuth();
  const page = useCurrentPage();
  const router = useRouter();
  const navigate = useNavigate();

  // The session ended while a page was open (logout, or an auth error from any call): go to /login
  // once, with the current path and query as the redirect unless the user logged out.
  useEffect(() => {
    if (signedIn) return;
    const { pathname, searchStr } = router.state.location;
    const search =
      endedBy === "logout"
        ? {}
        : endedBy === "no-pages"
          ? { reason: "no-pages" as const }
          : { redirect: pathname + searchStr };
    void navigate({ to: "/login", search, replace: true });
  }, [signedIn, endedBy, router, navigate]);

  if (!signedIn) return null;
  if (!user) {
    if (!error) return <FullPageLoading />;
    return (
      <div className="flex min-h-svh flex-col items-center justify-center gap-4 p-6 text-center" role="alert">
        <CircleAlertIcon className="size-8 text-destructive" aria-hidden />
        <p className="text-sm text-muted-foreground">{error}</p>
        <Button variant="outline" onClick={() => void auth.fetchCurrentUser()}>
          Try again
        </Button>
      </div>
    );
  }

  const title = page ? PAGES[page].title : undefined;
  return (
    <SidebarProvider>
      <AppSidebar user={user} />
      <SidebarInset>
        <header
          data-testid="topbar"
          className="sticky top-0 z-20 flex h-14 shrink-0 items-center gap-2 border-b bg-background/90 px-4 backdrop-blur supports-[backdrop-filter]:bg-background/70 print:hidden"
        >
          <SidebarTrigger />
          <Separator orientation="vertical" className="mr-1 data-[orientation=vertical]:h-4" />
          <span data-testid="page-title" className="truncate text-sm font-medium">
            {title}
          </span>
        </header>
        <div data-testid="page-content" className="mx-auto w-full max-w-[1500px] flex-1 p-4 md:p-6 lg:p-8">
          {page ? (
            <PermissionGate need={pagePermission(page)} fallback={<AccessDenied />}>
              <Outlet />
            </PermissionGate>
          ) : (
            <Outlet />
          )}
        </div>
      </SidebarInset>
    </SidebarProvider>
  );
}
