import { cn } from "@client/lib/utils.ts";
import type * as React from "react";

export interface ProgressProps extends React.ComponentProps<"div"> {
  /** 0–100; values outside are clamped. */
  value: number;
  /** The bar's colour class (default the primary colour). */
  indicatorClassName?: string;
}

/** A horizontal progress bar (role progressbar, 0–100). */
export function Progress({ value, className, indicatorClassName, ...props }: ProgressProps) {
  const pct = Math.max(0, Math.min(100, Number.isFinite(value) ? value : 0));
  return (
    <div
      role="progressbar"
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={Math.round(pct)}
      data-slot="progress"
      className={cn("relative h-2 w-full overflow-hidden rounded-full bg-primary/15", className)}
      {...props}
    >
      <div
        data-slot="progress-indicator"
        className={cn(
          "h-full rounded-full bg-primary transition-[width] duration-300 ease-out",
          indicatorClassName,
        )}
        style={{ width: `${pct}%` }}
      />
    </div>
  );
}
