import { cn } from "@client/lib/utils.ts";
import { ShieldAlertIcon } from "lucide-react";

/** The fallback of a page, tab or section the user may not open. */
export function AccessDenied({
  message = "You don't have permission to access this page.",
  className,
}: {
  message?: string;
  className?: string;
}) {
  return (
    <div
      role="alert"
      data-testid="access-denied"
      className={cn(
        "flex flex-col items-center justify-center gap-3 rounded-xl border border-dashed px-6 py-16 text-center",
        className,
      )}
    >
      <div className="flex size-11 items-center justify-center rounded-full bg-muted">
        <ShieldAlertIcon className="size-5 text-muted-foreground" aria-hidden />
      </div>
      <p className="max-w-md text-sm text-muted-foreground">{message}</p>
    </div>
  );
}
