import { Button } from "@client/components/ui/button.tsx";
import { Logo, PRODUCT_NAME } from "@client/features/layout/logo.tsx";
import { Link } from "@tanstack/react-router";

/** /small: a compact dashboard outside the layout. */
export function CompactDashboard() {
  return (
    <div className="min-h-svh bg-muted/40">
      <header className="flex h-14 items-center justify-between border-b bg-background px-4">
        <div className="flex items-center gap-2">
          <Logo className="size-7" />
          <span className="text-sm font-semibold">{PRODUCT_NAME}</span>
        </div>
        <Button asChild variant="outline" size="sm">
          <Link to="/">Open the full app</Link>
        </Button>
      </header>
      <main className="mx-auto max-w-3xl space-y-4 p-4">
        <h1 className="text-xl font-semibold tracking-tight">Compact Dashboard</h1>
        <div className="rounded-xl border border-dashed bg-background px-6 py-16 text-center text-sm text-muted-foreground">
          The compact dashboard is coming soon.
        </div>
      </main>
    </div>
  );
}
