import { cn } from "@client/lib/utils.ts";

/**
 * A figure that has no value: the dash, and beneath it, in small print, why it is blank. Every blank
 * figure on the planning screens says its reason on the page (not only in a tooltip).
 */
export function Blank({ reason, className }: { reason: string; className?: string }) {
  return (
    <span className={cn("text-muted-foreground", className)} data-testid="blank">
      —
      <span className="block whitespace-normal text-[11px] leading-tight" data-testid="blank-reason">
        {reason}
      </span>
    </span>
  );
}
