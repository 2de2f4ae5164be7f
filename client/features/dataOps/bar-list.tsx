import { cn } from "@client/lib/utils.ts";
import type { ReactNode } from "react";

export interface BarListItem {
  key: string;
  label: ReactNode;
  /** The bar's length relative to the largest value; 0 draws no bar. */
  value: number;
  /** What is printed at the end of the row (the formatted value, or an error). */
  display: ReactNode;
  /** Rows with an error show no bar and print `display` in red. */
  error?: boolean;
  title?: string;
}

/**
 * A small horizontal bar chart: one row per item with its label, a bar scaled to the largest value
 * and the value. Plain CSS, so the lazily loaded tab carries no charting library.
 */
export function BarList({
  items,
  className,
  barClassName = "bg-primary/70",
  "aria-label": ariaLabel,
  testId,
  labelWidth = "11rem",
}: {
  items: BarListItem[];
  /** The widest the label column may grow. */
  labelWidth?: string;
  className?: string;
  barClassName?: string;
  "aria-label"?: string;
  testId?: string;
}) {
  const max = Math.max(0, ...items.filter((i) => !i.error).map((i) => i.value));
  return (
    <ul aria-label={ariaLabel} data-testid={testId} className={cn("space-y-1.5", className)}>
      {items.map((item) => {
        const pct = max > 0 && !item.error ? (item.value / max) * 100 : 0;
        return (
          <li
            key={item.key}
            data-testid={testId ? `${testId}-row` : undefined}
            data-name={item.key}
            title={item.title}
            className="grid items-center gap-3 text-sm"
            style={{ gridTemplateColumns: `minmax(7rem, ${labelWidth}) 1fr auto` }}
          >
            <span className="truncate font-mono text-xs text-muted-foreground">{item.label}</span>
            <span aria-hidden className="h-2 min-w-0 overflow-hidden rounded-full bg-muted">
              {pct > 0 && (
                <span
                  className={cn("block h-full rounded-full", barClassName)}
                  style={{ width: `max(${pct}%, 0.25rem)` }}
                />
              )}
            </span>
            <span
              className={cn(
                "text-right tabular-nums",
                item.error ? "max-w-48 truncate text-xs text-destructive" : "font-medium",
              )}
            >
              {item.display}
            </span>
          </li>
        );
      })}
    </ul>
  );
}
