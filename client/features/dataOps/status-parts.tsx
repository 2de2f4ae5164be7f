// Small pieces shared by the History & Status cards.
import { Badge } from "@client/components/ui/badge.tsx";
import { Skeleton } from "@client/components/ui/skeleton.tsx";
import { Tooltip, TooltipContent, TooltipTrigger } from "@client/components/ui/tooltip.tsx";
import { cn } from "@client/lib/utils.ts";
import { formatRelativeAge } from "@shared/format.ts";
import { AlertCircleIcon } from "lucide-react";
import type { ReactNode } from "react";
import { formatTimestamp } from "./model.ts";

/** Spec section 4: completed green, failed red, cancelled yellow, anything else (running…) blue. */
export function statusColor(status: string): "green" | "red" | "yellow" | "blue" {
  switch (status) {
    case "completed":
      return "green";
    case "failed":
      return "red";
    case "cancelled":
      return "yellow";
    default:
      return "blue";
  }
}

const STATUS_CLASS = {
  green:
    "border-green-200 bg-green-100 text-green-800 dark:border-green-900 dark:bg-green-950 dark:text-green-300",
  red: "border-red-200 bg-red-100 text-red-800 dark:border-red-900 dark:bg-red-950 dark:text-red-300",
  yellow:
    "border-yellow-200 bg-yellow-100 text-yellow-800 dark:border-yellow-900 dark:bg-yellow-950 dark:text-yellow-300",
  blue: "border-blue-200 bg-blue-100 text-blue-800 dark:border-blue-900 dark:bg-blue-950 dark:text-blue-300",
} as const;

export function StatusBadge({ status, className }: { status: string; className?: string }) {
  const color = statusColor(status);
  return (
    <Badge
      variant="outline"
      data-testid="status-badge"
      data-color={color}
      className={cn("capitalize", STATUS_CLASS[color], className)}
    >
      {color === "blue" && status === "running" && (
        <span aria-hidden className="size-1.5 animate-pulse rounded-full bg-current" />
      )}
      {status}
    </Badge>
  );
}

/** 'Xm ago' with the exact time in a tooltip (and the title, for copy and tests). */
export function RelativeTime({ date, className }: { date: Date | string | null; className?: string }) {
  if (!date) return <span className={cn("text-muted-foreground", className)}>Never</span>;
  const exact = formatTimestamp(date);
  return (
    <Tooltip>
      <TooltipTrigger asChild>
        <time
          dateTime={new Date(date).toISOString()}
          title={exact}
          className={cn("cursor-default tabular-nums", className)}
        >
          {formatRelativeAge(date)}
        </time>
      </TooltipTrigger>
      <TooltipContent>{exact}</TooltipContent>
    </Tooltip>
  );
}

/** A muted message in place of a list: an empty state. */
export function EmptyMessage({ children, testId }: { children: ReactNode; testId?: string }) {
  return (
    <p
      data-testid={testId}
      className="rounded-lg border border-dashed bg-muted/30 px-4 py-6 text-center text-sm text-muted-foreground"
    >
      {children}
    </p>
  );
}

/** A red message in place of a list that failed to load. */
export function ErrorMessage({ children, testId }: { children: ReactNode; testId?: string }) {
  return (
    <p
      role="alert"
      data-testid={testId}
      className="flex items-center justify-center gap-2 rounded-lg border border-destructive/30 bg-destructive/5 px-4 py-6 text-center text-sm text-destructive"
    >
      <AlertCircleIcon aria-hidden className="size-4 shrink-0" />
      {children}
    </p>
  );
}

export function ListSkeleton({ rows = 4 }: { rows?: number }) {
  return (
    <div className="space-y-3" data-testid="list-skeleton">
      {Array.from({ length: rows }, (_, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: static placeholders
        <div key={i} className="flex items-center justify-between gap-4">
          <Skeleton className="h-4 w-32" />
          <Skeleton className="h-4 w-16" />
        </div>
      ))}
    </div>
  );
}
