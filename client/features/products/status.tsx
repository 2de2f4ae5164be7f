// Status and ABC badges of the planning screens (docs/metrics.md §7 and §9), one colour per status.
import { Badge } from "@client/components/ui/badge.tsx";
import { cn } from "@client/lib/utils.ts";
import { type AbcClass, type ProductStatus, STATUS_LABELS } from "@shared/metrics.ts";

interface StatusStyle {
  /** Badge colours */
  badge: string;
  /** The dot of a filter chip */
  dot: string;
  /** What the status means, for tooltips */
  hint: string;
}

export const STATUS_STYLES: Record<ProductStatus, StatusStyle> = {
  critical: {
    badge: "border-red-200 bg-red-100 text-red-800 dark:border-red-900 dark:bg-red-950 dark:text-red-300",
    dot: "bg-red-500",
    hint: "Expected to run out within the low-stock window",
  },
  reorder: {
    badge:
      "border-amber-200 bg-amber-100 text-amber-800 dark:border-amber-900 dark:bg-amber-950 dark:text-amber-300",
    dot: "bg-amber-500",
    hint: "Stock and open orders are at or below the reorder point",
  },
  healthy: {
    badge:
      "border-emerald-200 bg-emerald-100 text-emerald-800 dark:border-emerald-900 dark:bg-emerald-950 dark:text-emerald-300",
    dot: "bg-emerald-500",
    hint: "Enough stock, not too much",
  },
  overstocked: {
    badge:
      "border-violet-200 bg-violet-100 text-violet-800 dark:border-violet-900 dark:bg-violet-950 dark:text-violet-300",
    dot: "bg-violet-500",
    hint: "More stock than the safety stock plus the overstock window of demand",
  },
  new: {
    badge: "border-sky-200 bg-sky-100 text-sky-800 dark:border-sky-900 dark:bg-sky-950 dark:text-sky-300",
    dot: "bg-sky-500",
    hint: "Less than 30 days of history",
  },
  discontinued: {
    badge:
      "border-zinc-200 bg-zinc-100 text-zinc-600 dark:border-zinc-800 dark:bg-zinc-900 dark:text-zinc-400",
    dot: "bg-zinc-400",
    hint: "Discontinued: never reordered",
  },
  excluded: {
    badge:
      "border-dashed border-slate-300 bg-transparent text-slate-600 dark:border-slate-700 dark:text-slate-400",
    dot: "border border-slate-400 bg-transparent",
    hint: "Excluded from forecasting, or not replenishable",
  },
};

export function ProductStatusBadge({
  status,
  className,
}: {
  status: ProductStatus | null;
  className?: string;
}) {
  if (!status) return <span className="text-muted-foreground">—</span>;
  const style = STATUS_STYLES[status];
  return (
    <Badge
      variant="outline"
      data-testid="product-status"
      data-status={status}
      title={style.hint}
      className={cn(style.badge, className)}
    >
      {STATUS_LABELS[status]}
    </Badge>
  );
}

const ABC_STYLES: Record<AbcClass, string> = {
  A: "border-indigo-300 bg-indigo-600 text-white dark:border-indigo-500",
  B: "border-indigo-200 bg-indigo-100 text-indigo-800 dark:border-indigo-800 dark:bg-indigo-950 dark:text-indigo-300",
  C: "border-border bg-muted text-muted-foreground",
};

export const ABC_HINTS: Record<AbcClass, string> = {
  A: "Class A: the top sellers that make up most of the revenue",
  B: "Class B: the middle of the range",
  C: "Class C: the long tail (and products without sales in the window)",
};

export function AbcBadge({ abc, className }: { abc: AbcClass | null; className?: string }) {
  if (!abc) return <span className="text-muted-foreground">—</span>;
  return (
    <Badge
      variant="outline"
      data-testid="product-abc"
      title={ABC_HINTS[abc]}
      className={cn("w-6 px-0 font-semibold", ABC_STYLES[abc], className)}
    >
      {abc}
    </Badge>
  );
}
