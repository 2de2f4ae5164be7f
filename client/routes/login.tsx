import { LoginPage } from "@client/features/auth/login-page.tsx";
import { createFileRoute } from "@tanstack/react-router";
import * as z from "zod/mini";

const LoginSearchSchema = z.object({
  /** The originally requested path and query string. */
  redirect: z.catch(z.optional(z.string()), undefined),
  /** Why the user is back here: "no-pages" = the account may open no page. */
  reason: z.catch(z.optional(z.literal("no-pages")), undefined),
});

export const Route = createFileRoute("/login")({
  validateSearch: LoginSearchSchema,
  component: function LoginRoute() {
    const { redirect, reason } = Route.useSearch();
    return <LoginPage redirectTo={redirect} reason={reason} />;
  },
});
