import type { PagePath } from "@client/features/layout/pages.ts";
import { firstAllowedPath } from "@shared/permissions.ts";
import { createFileRoute, redirect } from "@tanstack/react-router";

/** Spec section 2: / sends the user to the first page they may open, or to /login if none. */
export const Route = createFileRoute("/_app/")({
  beforeLoad: ({ context }) => {
    const user = context.auth.user;
    // Without a user the layout shows why it could not be loaded.
    if (!user) return;
    // firstAllowedPath returns paths of the same route table as PAGES.
    const to = (firstAllowedPath(user) ?? "/login") as PagePath | "/login";
    throw redirect({ to, replace: true });
  },
});
