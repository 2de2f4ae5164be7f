import { Alert, AlertDescription } from "@client/components/ui/alert.tsx";
import { Button } from "@client/components/ui/button.tsx";
import { Input } from "@client/components/ui/input.tsx";
import { Label } from "@client/components/ui/label.tsx";
import { Logo, PRODUCT_NAME, PRODUCT_TAGLINE } from "@client/features/layout/logo.tsx";
import { errorMessage } from "@client/lib/errors.ts";
import { auth, useAuth } from "@client/lib/session.ts";
import { zodResolver } from "@hookform/resolvers/zod";
import { type LoginInput, LoginInputSchema } from "@shared/auth.ts";
import { useNavigate } from "@tanstack/react-router";
import { Loader2Icon, TriangleAlertIcon } from "lucide-react";
import { useForm } from "react-hook-form";
import { toast } from "sonner";
import { safeRedirect } from "./safe-redirect.ts";

/** Logo, product name and tagline: a band above the form on phones, the left half on wide screens. */
function BrandPanel() {
  return (
    <div className="relative flex flex-col gap-6 overflow-hidden bg-zinc-950 px-6 py-8 text-white lg:justify-between lg:p-10">
      <div
        aria-hidden
        className="pointer-events-none absolute inset-0 opacity-40 [background-image:radial-gradient(circle_at_1px_1px,rgb(255_255_255/0.12)_1px,transparent_0)] [background-size:24px_24px]"
      />
      <div
        aria-hidden
        className="pointer-events-none absolute -bottom-40 -left-24 size-[28rem] rounded-full bg-white/5 blur-3xl"
      />
      <div className="relative flex items-center gap-3">
        <Logo inverted className="size-9" />
        <span className="text-lg font-semibold tracking-tight">{PRODUCT_NAME}</span>
      </div>
      <div className="relative max-w-md space-y-3">
        <p
          data-testid="login-tagline"
          className="text-xl font-semibold leading-tight tracking-tight lg:text-3xl"
        >
          {PRODUCT_TAGLINE}
        </p>
        <p className="hidden text-sm text-zinc-400 lg:block">
          Products, vendors, purchase orders, forecasting and import templates for the whole team.
        </p>
      </div>
      <p className="relative hidden text-xs text-zinc-500 lg:block">Internal use only · Staff accounts</p>
    </div>
  );
}

/** Shown on the login page when a signed-in account turned out to have no page it may open. */
export const NO_PAGES_MESSAGE = "Your account has no pages it may open. Ask an administrator for access.";

/**
 * The /login screen of spec section 2; `redirectTo` is the `?redirect=` parameter, `reason` says
 * why the user was sent back here.
 */
export function LoginPage({ redirectTo, reason }: { redirectTo?: string; reason?: "no-pages" }) {
  const navigate = useNavigate();
  const { isLoading } = useAuth();
  const { register, handleSubmit, formState } = useForm<LoginInput>({
    resolver: zodResolver(LoginInputSchema),
    defaultValues: { username: "", password: "" },
  });
  const pending = isLoading || formState.isSubmitting;

  const onSubmit = handleSubmit(async (values) => {
    try {
      await auth.login(values);
    } catch (error) {
      toast.error(errorMessage(error, "Login failed"));
      return;
    }
    await navigate({ href: safeRedirect(redirectTo), replace: true });
  });

  return (
    <div className="grid min-h-svh grid-rows-[auto_1fr] lg:grid-cols-2 lg:grid-rows-1">
      <BrandPanel />
      <div className="flex flex-col items-center px-6 py-10 sm:justify-center">
        <div className="w-full max-w-sm space-y-8">
          <div className="space-y-2">
            <h1 className="text-2xl font-semibold tracking-tight">Log in to your account</h1>
            <p className="text-sm text-muted-foreground">Enter your username and password to continue.</p>
          </div>
          {reason === "no-pages" && (
            <Alert variant="warning" data-testid="login-no-pages">
              <TriangleAlertIcon aria-hidden />
              <AlertDescription className="text-amber-800">{NO_PAGES_MESSAGE}</AlertDescription>
            </Alert>
          )}
          <form className="space-y-5" onSubmit={onSubmit} data-testid="login-form">
            <div className="space-y-2">
              <Label htmlFor="username">Username</Label>
              <Input
                id="username"
                autoComplete="username"
                autoCapitalize="none"
                spellCheck={false}
                autoFocus
                required
                disabled={pending}
                aria-invalid={formState.errors.username ? true : undefined}
                {...register("username")}
              />
              {formState.errors.username && (
                <p className="text-sm text-destructive">{formState.errors.username.message}</p>
              )}
            </div>
            <div className="space-y-2">
              <Label htmlFor="password">Password</Label>
              <Input
                id="password"
                type="password"
                autoComplete="current-password"
                required
                disabled={pending}
                aria-invalid={formState.errors.password ? true : undefined}
                {...register("password")}
              />
              {formState.errors.password && (
                <p className="text-sm text-destructive">{formState.errors.password.message}</p>
              )}
            </div>
            <Button type="submit" className="w-full" disabled={pending}>
              {pending && <Loader2Icon className="animate-spin" aria-hidden />}
              {pending ? "Logging in..." : "Log In"}
            </Button>
          </form>
        </div>
      </div>
    </div>
  );
}
