// A chart's card on the Dashboard and the Analytics page: its title, a note saying what it shows,
// its control (when it has one), the chart, and its CSV link (only for those allowed to export).
import { Button } from "@client/components/ui/button.tsx";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@client/components/ui/card.tsx";
import { Skeleton } from "@client/components/ui/skeleton.tsx";
import { LoadError } from "@client/features/config/parts.tsx";
import { cn } from "@client/lib/utils.ts";
import type { UseQueryResult } from "@tanstack/react-query";
import type { ReactNode } from "react";

export function ChartCard({
  title,
  note,
  control,
  exportHref,
  query,
  testId,
  chartId,
  noteTestId,
  className,
  children,
}: {
  title: string;
  /** What the chart shows and how it is computed. */
  note: ReactNode;
  control?: ReactNode;
  /**
   * The chart's CSV download; null where the viewer may not export (no link), left out for a chart
   * that has none.
   */
  exportHref?: string | null;
  /**
   * The chart's own query, where it has one: its error with a retry, a skeleton until it answers,
   * and the chart dimmed while it shows the previous answer.
   */
  query?: UseQueryResult<unknown, { message: string }>;
  testId?: string;
  /** data-chart: the chart's name for tests. */
  chartId?: string;
  noteTestId?: string;
  className?: string;
  children: ReactNode;
}) {
  return (
    <Card data-testid={testId} data-chart={chartId} className={className}>
      <CardHeader>
        {exportHref === undefined ? (
          <CardTitle>{title}</CardTitle>
        ) : (
          <div className="flex flex-wrap items-start justify-between gap-2">
            <CardTitle>{title}</CardTitle>
            {exportHref && (
              <Button asChild size="sm" variant="outline">
                <a href={exportHref} download data-testid="export-csv">
                  CSV
                </a>
              </Button>
            )}
          </div>
        )}
        <CardDescription data-testid={noteTestId}>{note}</CardDescription>
        {control}
      </CardHeader>
      {query ? (
        <CardContent className={cn(query.isPlaceholderData && "opacity-60")}>
          {query.isError ? (
            <LoadError
              message={query.error?.message ?? "Could not load"}
              onRetry={() => void query.refetch()}
            />
          ) : query.data === undefined ? (
            <Skeleton className="h-48 w-full" />
          ) : (
            children
          )}
        </CardContent>
      ) : (
        <CardContent>{children}</CardContent>
      )}
    </Card>
  );
}
