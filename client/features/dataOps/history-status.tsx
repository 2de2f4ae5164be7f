import { Button } from "@client/components/ui/button.tsx";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@client/components/ui/card.tsx";
import { Tooltip, TooltipContent, TooltipTrigger } from "@client/components/ui/tooltip.tsx";
import { cn } from "@client/lib/utils.ts";
import { CalculatorIcon, DatabaseIcon, DownloadIcon, RefreshCwIcon } from "lucide-react";
import { type ReactNode, useId } from "react";
import { BarList } from "./bar-list.tsx";
import { CalculationHistoryTable, ImportHistoryTable } from "./history-tables.tsx";
import { formatCount, MESSAGES, type TableCount, type TableCounts } from "./model.ts";
import { EmptyMessage, ErrorMessage, ListSkeleton, RelativeTime } from "./status-parts.tsx";
import type { DataOverview, Section } from "./use-data-overview.ts";

/** Renders a section's loading, error, empty or loaded state. */
export function SectionBody<T>({
  section,
  what,
  isEmpty,
  empty,
  testId,
  skeleton = <ListSkeleton />,
  children,
}: {
  section: Section<T> | undefined;
  what: string;
  isEmpty: (data: T) => boolean;
  empty: string;
  testId: string;
  skeleton?: ReactNode;
  children: (data: T) => ReactNode;
}) {
  if (!section) return skeleton;
  if (!section.ok) return <ErrorMessage testId={`${testId}-error`}>{MESSAGES.failed(what)}</ErrorMessage>;
  if (isEmpty(section.data)) return <EmptyMessage testId={`${testId}-empty`}>{empty}</EmptyMessage>;
  return children(section.data);
}

function StatusCard({
  title,
  description,
  icon: Icon,
  testId,
  children,
  className,
}: {
  title: string;
  description: string;
  icon: typeof DatabaseIcon;
  testId: string;
  children: ReactNode;
  className?: string;
}) {
  return (
    <Card data-testid={testId} className={cn("gap-4", className)}>
      <CardHeader>
        <CardTitle className="flex items-center gap-2 text-base">
          <Icon aria-hidden className="size-4 text-muted-foreground" />
          {title}
        </CardTitle>
        <CardDescription>{description}</CardDescription>
      </CardHeader>
      <CardContent>{children}</CardContent>
    </Card>
  );
}

function TimesList({ rows }: { rows: { name: string; time: Date | string | null }[] }) {
  return (
    <ul className="divide-y text-sm">
      {rows.map((row) => (
        <li
          key={row.name}
          data-name={row.name}
          className="flex items-center justify-between gap-4 py-2 first:pt-0 last:pb-0"
        >
          <span className="truncate font-mono text-xs">{row.name}</span>
          <RelativeTime date={row.time} className="shrink-0 text-muted-foreground" />
        </li>
      ))}
    </ul>
  );
}

const COUNT_GROUPS = [
  { key: "core", title: "Core Tables", bar: "bg-primary/70" },
  { key: "metrics", title: "Metrics Tables", bar: "bg-sky-500/70" },
  { key: "config", title: "Config Tables", bar: "bg-violet-500/60" },
] as const;

function hasNoTableData(counts: TableCounts): boolean {
  const data = [...counts.core, ...counts.metrics];
  return data.every((c) => !c.error && c.count === 0) && (data.length > 0 || counts.config.length === 0);
}

function CountGroup({ title, rows, bar }: { title: string; rows: TableCount[]; bar: string }) {
  const headingId = useId();
  if (rows.length === 0) return null;
  const total = rows.reduce((sum, r) => sum + (r.error ? 0 : r.count), 0);
  return (
    <div className="space-y-2">
      <div className="flex items-baseline justify-between">
        <h4 id={headingId} className="text-xs font-medium tracking-wide text-muted-foreground uppercase">
          {title}
        </h4>
        <span className="text-xs text-muted-foreground tabular-nums">{formatCount(total)} rows</span>
      </div>
      <BarList
        aria-label={title}
        testId={`counts-${title.split(" ")[0]!.toLowerCase()}`}
        barClassName={bar}
        items={rows.map((r) => ({
          key: r.table_name,
          label: r.table_name,
          value: r.count,
          error: !!r.error,
          title: r.error ?? `${r.table_name}: ${formatCount(r.count)}`,
          display: r.error ?? formatCount(r.count),
        }))}
      />
    </div>
  );
}

/** The 'History & Status' section of spec section 2. */
export function HistoryStatus({
  overview,
  refreshing,
  onRefresh,
}: {
  overview: DataOverview | undefined;
  refreshing: boolean;
  onRefresh: () => void;
}) {
  const headingId = useId();
  return (
    <section aria-labelledby={headingId} className="space-y-4">
      <div className="flex items-center justify-between gap-4 border-b pb-3">
        <div>
          <h3 id={headingId} className="text-lg font-semibold tracking-tight">
            History &amp; Status
          </h3>
          <p className="text-sm text-muted-foreground">Refreshes every minute.</p>
        </div>
        <Tooltip>
          <TooltipTrigger asChild>
            <Button
              variant="outline"
              size="icon"
              aria-label="Refresh"
              data-testid="history-refresh"
              disabled={refreshing}
              onClick={onRefresh}
            >
              <RefreshCwIcon aria-hidden className={cn(refreshing && "animate-spin")} />
            </Button>
          </TooltipTrigger>
          <TooltipContent>Refresh</TooltipContent>
        </Tooltip>
      </div>

      <div className="grid items-start gap-4 lg:grid-cols-2">
        <div className="grid gap-4">
          <StatusCard
            title="Last Import Times"
            description="When each table last synced from the source"
            icon={DownloadIcon}
            testId="import-times"
          >
            <SectionBody
              section={overview?.tableStatus}
              what="import status"
              isEmpty={(rows) => rows.length === 0}
              empty={MESSAGES.noImports}
              testId="import-times"
            >
              {(rows) => (
                <TimesList rows={rows.map((r) => ({ name: r.table_name, time: r.last_sync_timestamp }))} />
              )}
            </SectionBody>
          </StatusCard>
          <StatusCard
            title="Last Calculation Times"
            description="When each metrics module last ran"
            icon={CalculatorIcon}
            testId="calculation-times"
          >
            <SectionBody
              section={overview?.moduleStatus}
              what="calculation status"
              isEmpty={(rows) => rows.length === 0}
              empty={MESSAGES.noCalculations}
              testId="calculation-times"
            >
              {(rows) => (
                <TimesList
                  rows={rows.map((r) => ({ name: r.module_name, time: r.last_calculation_timestamp }))}
                />
              )}
            </SectionBody>
          </StatusCard>
        </div>
        <StatusCard
          title="Table Record Counts"
          description="Rows per table, by group"
          icon={DatabaseIcon}
          testId="table-counts"
        >
          <SectionBody
            section={overview?.tableCounts}
            what="table counts"
            isEmpty={hasNoTableData}
            empty={MESSAGES.noTableData}
            testId="table-counts"
            skeleton={<ListSkeleton rows={8} />}
          >
            {(counts) => (
              <div className="space-y-6">
                {COUNT_GROUPS.map((g) => (
                  <CountGroup key={g.key} title={g.title} rows={counts[g.key]} bar={g.bar} />
                ))}
              </div>
            )}
          </SectionBody>
        </StatusCard>
      </div>

      <ImportHistoryTable section={overview?.importHistory} />
      <CalculationHistoryTable section={overview?.calculationHistory} />
    </section>
  );
}
