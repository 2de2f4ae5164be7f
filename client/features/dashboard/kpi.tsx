// What the Dashboard and the Overview show alike: the page's title with the figures' as-of moment,
// a key figure's card, its value written in its unit, and its change against a comparison.

import { PageHeader } from "@client/components/page-header.tsx";
import { Popover, PopoverContent, PopoverTrigger } from "@client/components/ui/popover.tsx";
import { Skeleton } from "@client/components/ui/skeleton.tsx";
import { DASH, formatMoneyShort, formatNumber, formatPercent } from "@client/features/products/format.ts";
import { cn } from "@client/lib/utils.ts";
import { ArrowDownRightIcon, ArrowUpRightIcon, MinusIcon } from "lucide-react";
import type { ReactNode } from "react";
import { formatAsOf } from "./format.ts";

/** The page's title and "as of …" once the figures are in (a placeholder while they load). */
export function AsOfHeader({
  title,
  asOf,
  loading,
}: {
  title: string;
  asOf: string | null | undefined;
  loading: boolean;
}) {
  return (
    <PageHeader
      title={title}
      description={
        asOf ? (
          <span data-testid="as-of">as of {formatAsOf(asOf)}</span>
        ) : loading ? (
          <Skeleton className="h-4 w-40" />
        ) : null
      }
    />
  );
}

interface KpiLike {
  key: string;
  label: string;
  how: string;
  unit: "money" | "count" | "percent" | "ratio" | "days";
  better: "up" | "down";
  current: number | null;
}

export function formatKpi(kpi: Pick<KpiLike, "unit">, value: number | null): string {
  if (value == null) return DASH;
  switch (kpi.unit) {
    case "money":
      return formatMoneyShort(value);
    case "percent":
      return formatPercent(value);
    case "ratio":
      return `${formatNumber(value, 2)}×`;
    case "days":
      return `${formatNumber(Math.round(value))} days`;
    default:
      return formatNumber(value);
  }
}

/**
 * A key figure: its name (hovered, tapped or focused, it says how the figure is computed: a phone
 * has no hover), its value, and what `children` add.
 */
export function KpiCard({
  kpi,
  valueClassName,
  children,
}: {
  kpi: KpiLike;
  valueClassName: string;
  children: ReactNode;
}) {
  return (
    <div className="min-w-0 rounded-xl border bg-card p-4 shadow-xs" data-testid="kpi" data-key={kpi.key}>
      <Popover>
        <PopoverTrigger asChild>
          <button
            type="button"
            className="text-left text-sm text-muted-foreground underline decoration-dotted underline-offset-4 hover:text-foreground"
            title={kpi.how}
            data-testid="kpi-label"
          >
            {kpi.label}
          </button>
        </PopoverTrigger>
        <PopoverContent className="text-sm" data-testid="kpi-how">
          <div className="font-medium">{kpi.label}</div>
          <p className="mt-1 text-muted-foreground">{kpi.how}</p>
        </PopoverContent>
      </Popover>
      {/* A long amount ($2,527,065 in a narrow card) wraps inside the card instead of running out. */}
      <div className={cn(valueClassName, "[overflow-wrap:anywhere]")} data-testid="kpi-value">
        {formatKpi(kpi, kpi.current)}
      </div>
      {children}
    </div>
  );
}

/**
 * The change of a figure from `base` to `current`: relative for amounts, in points for percentages; green when
 * it went the better way, red when not. `children` write it from its text.
 */
export function KpiChange({
  kpi,
  current,
  base,
  className,
  title,
  children,
}: {
  kpi: Pick<KpiLike, "unit" | "better">;
  current: number;
  base: number;
  className: string;
  title: string;
  children: (text: string) => ReactNode;
}) {
  const diff = current - base;
  const text =
    kpi.unit === "percent"
      ? `${diff >= 0 ? "+" : ""}${(diff * 100).toFixed(1)} pts`
      : base === 0
        ? diff === 0
          ? "0%"
          : "new"
        : `${diff >= 0 ? "+" : ""}${((diff / Math.abs(base)) * 100).toFixed(1)}%`;
  const good = diff === 0 ? null : diff > 0 === (kpi.better === "up");
  const Icon = diff === 0 ? MinusIcon : diff > 0 ? ArrowUpRightIcon : ArrowDownRightIcon;
  return (
    <span
      className={cn(
        className,
        good === null
          ? "text-muted-foreground"
          : good
            ? "text-emerald-700 dark:text-emerald-400"
            : "text-red-700 dark:text-red-400",
      )}
      data-testid="kpi-change"
      title={title}
    >
      <Icon className="size-3.5 shrink-0" aria-hidden />
      {children(text)}
    </span>
  );
}
