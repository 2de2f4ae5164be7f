import type { PagePath } from "@client/features/layout/pages.ts";
import { landingPath } from "@shared/permissions.ts";
import { createFileRoute, redirect } from "@tanstack/react-router";

/**
 * Spec section 2: / sends the user to the first page they may open in the spec's order; a user
 * whose pages are all outside that order goes to one of those (Brands, Chat Archive). A user who may
 * open no page at all is signed out and the login page says why, instead of showing an empty form.
 */
export const Route = createFileRoute("/_app/")({
  beforeLoad: async ({ context }) => {
    const user = context.auth.user;
    // Without a user the layout shows why it could not be loaded.
    if (!user) return;
    // landingPath returns paths of the same route table as PAGES.
    const to = landingPath(user) as PagePath | null;
    if (to) throw redirect({ to, replace: true });
    await context.auth.logout("no-pages");
    throw redirect({ to: "/login", search: { reason: "no-pages" }, replace: true });
  },
});
