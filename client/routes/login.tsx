import { LoginPage } from "@client/features/auth/login-page.tsx";
import { createFileRoute } from "@tanstack/react-router";
import * as z from "zod/mini";

const LoginSearchSchema = z.object({
  /** The originally requested path and query string. */
  redirect: z.catch(z.optional(z.string()), undefined),
});

export const Route = createFileRoute("/login")({
  validateSearch: LoginSearchSchema,
  component: function LoginRoute() {
    const { redirect } = Route.useSearch();
    return <LoginPage redirectTo={redirect} />;
  },
});
