import { Button } from "@client/components/ui/button.tsx";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@client/components/ui/card.tsx";
import {
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableHeader,
  TableRow,
} from "@client/components/ui/table.tsx";
import { TableSkeletonRows } from "@client/components/ui/table-helpers.tsx";
import { cn } from "@client/lib/utils.ts";
import { FINDING_KIND_LABELS, type FindingsRecord, findingsOf, HISTORY_LIMIT } from "@shared/data-ops.ts";
import { formatDuration } from "@shared/format.ts";
import { AlertCircleIcon, ChevronRightIcon, DownloadIcon, HistoryIcon } from "lucide-react";
import { Fragment, type ReactNode, useState } from "react";
import { BarList } from "./bar-list.tsx";
import {
  type CalculationRecord,
  formatCount,
  formatSeconds,
  formatTimestamp,
  type ImportRecord,
  MESSAGES,
  parseRunDetail,
  type RunDetail,
  recordDurationMs,
} from "./model.ts";
import { RelativeTime, StatusBadge } from "./status-parts.tsx";
import type { Section } from "./use-data-overview.ts";

function Duration({ record }: { record: Parameters<typeof recordDurationMs>[0] }) {
  const ms = recordDurationMs(record);
  return <span className="tabular-nums">{ms === null ? "—" : formatDuration(ms)}</span>;
}

function Started({ date }: { date: Date | string }) {
  return (
    <div className="flex flex-col">
      <span className="tabular-nums">{formatTimestamp(date)}</span>
      <RelativeTime date={date} className="text-xs text-muted-foreground" />
    </div>
  );
}

/** Denser rows for the tables inside an expanded history row. */
const COMPACT = "[&_td]:py-1 [&_th]:h-8";

function DetailHeading({ children }: { children: ReactNode }) {
  return (
    <h5 className="mb-2 text-xs font-medium tracking-wide text-muted-foreground uppercase">{children}</h5>
  );
}

/**
 * Every problem a failed run found in the source data, grouped by file and kind (each group
 * expandable; the history lists a group's first findings, the CSV has them all).
 */
function FindingsView({ findings, csvHref }: { findings: FindingsRecord; csvHref: string | null }) {
  return (
    <div data-testid="run-findings">
      <div className="mb-2 flex flex-wrap items-center justify-between gap-2">
        <DetailHeading>
          Problems in the source data: {formatCount(findings.count)}
          {findings.truncated ? ` (the first ${formatCount(findings.limit)}; there are more)` : ""}
        </DetailHeading>
        {csvHref && (
          <Button asChild variant="outline" size="sm">
            <a href={csvHref} download data-testid="run-findings-csv">
              <DownloadIcon aria-hidden />
              Download CSV
            </a>
          </Button>
        )}
      </div>
      <div className="space-y-1">
        {findings.groups.map((g) => {
          const listed = g.findings.length;
          return (
            <details
              key={`${g.file}-${g.kind}`}
              data-testid="run-findings-group"
              data-file={g.file}
              data-kind={g.kind}
              className="rounded-md border bg-background px-3 py-2 text-sm"
            >
              <summary className="cursor-pointer">
                <span className="font-mono text-xs">{g.file}</span> · {FINDING_KIND_LABELS[g.kind] ?? g.kind}:{" "}
                <span className="tabular-nums">{formatCount(g.count)}</span>
              </summary>
              <ul className="mt-2 space-y-1">
                {g.findings.map((f) => (
                  <li key={`${f.line}-${f.column}`} data-testid="run-finding" className="break-words">
                    {f.message}
                  </li>
                ))}
              </ul>
              {listed < g.count && (
                <p className="mt-1 text-xs text-muted-foreground">
                  {formatCount(g.count - listed)} more in the CSV.
                </p>
              )}
            </details>
          );
        })}
      </div>
    </div>
  );
}

/** Spec section 3 "Run history detail": per-step results, per-section details, step timings. */
function RunDetailView({
  detail,
  error,
  findings,
  findingsCsv,
}: {
  detail: RunDetail;
  error: string | null;
  findings?: FindingsRecord | null;
  findingsCsv?: string | null;
}) {
  const nothing =
    !error && detail.steps.length === 0 && detail.details.length === 0 && detail.timings.length === 0;
  return (
    <div data-testid="run-detail" className="space-y-5 p-4">
      {error && (
        <div
          role="alert"
          className="flex items-start gap-2 rounded-md border border-destructive/30 bg-destructive/5 px-3 py-2 text-sm text-destructive"
        >
          <AlertCircleIcon aria-hidden className="mt-0.5 size-4 shrink-0" />
          <span className="break-words">{error}</span>
        </div>
      )}
      {findings && <FindingsView findings={findings} csvHref={findingsCsv ?? null} />}
      {nothing && <p className="text-sm text-muted-foreground">No step details recorded.</p>}
      <div className="space-y-5">
        {detail.steps.length > 0 && (
          <div>
            <DetailHeading>Steps</DetailHeading>
            <div className="rounded-md border bg-background">
              <Table stackOnPhone data-testid="run-steps" className={COMPACT}>
                <TableHeader>
                  <TableRow>
                    <TableHead>Step</TableHead>
                    <TableHead className="text-right">Duration (s)</TableHead>
                    <TableHead className="text-right">Rows affected</TableHead>
                    <TableHead>Status</TableHead>
                  </TableRow>
                </TableHeader>
                <TableBody>
                  {detail.steps.map((step, i) => (
                    // biome-ignore lint/suspicious/noArrayIndexKey: steps are a fixed, ordered record
                    <TableRow key={i}>
                      <TableCell data-primary className="font-mono text-xs">
                        {step.name}
                      </TableCell>
                      <TableCell data-label="Duration (s)" className="text-right tabular-nums">
                        {step.duration.toFixed(3)}
                      </TableCell>
                      <TableCell data-label="Rows affected" className="text-right tabular-nums">
                        {formatCount(step.rowsAffected)}
                      </TableCell>
                      <TableCell data-label="Status">
                        <StatusBadge status={step.status} />
                      </TableCell>
                    </TableRow>
                  ))}
                </TableBody>
              </Table>
            </div>
          </div>
        )}
        {detail.timings.length > 0 && (
          <div>
            <DetailHeading>Step timings</DetailHeading>
            <BarList
              aria-label="Step timings"
              testId="step-timings"
              labelWidth="14rem"
              className="gap-x-10 lg:columns-2 [&>li]:break-inside-avoid"
              barClassName="bg-amber-500/70"
              items={detail.timings.map((t) => ({
                key: t.name,
                label: t.name,
                value: t.seconds,
                display: formatSeconds(t.seconds),
                title: `${t.name}: ${formatSeconds(t.seconds)}`,
              }))}
            />
          </div>
        )}
      </div>
      {detail.details.map((section) => (
        <div key={section.name} data-testid={`run-details-${section.name}`}>
          <DetailHeading>Details: {section.name}</DetailHeading>
          <div className="rounded-md border bg-background">
            <Table stackOnPhone className={COMPACT}>
              <TableHeader>
                <TableRow>
                  <TableHead>Name</TableHead>
                  {section.columns.map((c) => (
                    <TableHead key={c} className="text-right capitalize">
                      {c}
                    </TableHead>
                  ))}
                </TableRow>
              </TableHeader>
              <TableBody>
                {section.rows.map((row) => (
                  <TableRow key={row.name} data-name={row.name}>
                    <TableCell data-primary className="font-mono text-xs">
                      {row.name}
                    </TableCell>
                    {section.columns.map((c) => {
                      const v = row.values[c];
                      return (
                        <TableCell data-label={c} key={c} className="text-right tabular-nums">
                          {typeof v === "number" ? formatCount(v) : (v ?? "—")}
                        </TableCell>
                      );
                    })}
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          </div>
        </div>
      ))}
    </div>
  );
}

interface Column<R> {
  header: string;
  className?: string;
  cell: (record: R) => ReactNode;
}

function HistoryTable<
  R extends { id: number; status: string; error_message: string | null; additional_info: unknown },
>({
  title,
  description,
  testId,
  section,
  columns,
  empty,
  what,
  findingsCsv,
}: {
  title: string;
  description: string;
  testId: string;
  section: Section<R[]> | undefined;
  columns: Column<R>[];
  empty: string;
  what: string;
  /** The findings CSV of a run (import history only). */
  findingsCsv?: (id: number) => string;
}) {
  const [expanded, setExpanded] = useState<ReadonlySet<number>>(new Set());
  const toggle = (id: number) =>
    setExpanded((prev) => {
      const next = new Set(prev);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  const span = columns.length + 1;
  const records = section?.ok ? section.data.slice(0, HISTORY_LIMIT) : [];

  return (
    <Card data-testid={testId} className="gap-4">
      <CardHeader>
        <CardTitle className="flex items-center gap-2 text-base">
          <HistoryIcon aria-hidden className="size-4 text-muted-foreground" />
          {title}
        </CardTitle>
        <CardDescription>{description}</CardDescription>
      </CardHeader>
      <CardContent>
        <div className="rounded-md border">
          <Table stackOnPhone>
            <TableHeader>
              <TableRow className="bg-muted/40 hover:bg-muted/40">
                <TableHead className="w-10">
                  <span className="sr-only">Details</span>
                </TableHead>
                {columns.map((c) => (
                  <TableHead key={c.header} className={c.className}>
                    {c.header}
                  </TableHead>
                ))}
              </TableRow>
            </TableHeader>
            <TableBody>
              {!section ? (
                <TableSkeletonRows rows={3} columns={span} />
              ) : !section.ok ? (
                <TableRow className="hover:bg-transparent">
                  <TableCell
                    colSpan={span}
                    className="h-24 text-center text-destructive"
                    data-testid={`${testId}-error`}
                  >
                    {MESSAGES.failed(what)}
                  </TableCell>
                </TableRow>
              ) : records.length === 0 ? (
                <TableRow className="hover:bg-transparent">
                  <TableCell
                    colSpan={span}
                    className="h-24 text-center text-muted-foreground"
                    data-testid={`${testId}-empty`}
                  >
                    {empty}
                  </TableCell>
                </TableRow>
              ) : (
                records.map((record) => {
                  const open = expanded.has(record.id);
                  return (
                    <Fragment key={record.id}>
                      <TableRow
                        data-testid={`${testId}-row`}
                        data-status={record.status}
                        data-state={open ? "selected" : undefined}
                        className="cursor-pointer"
                        onClick={() => toggle(record.id)}
                      >
                        <TableCell className="w-10 py-1">
                          <Button
                            variant="ghost"
                            size="icon-sm"
                            aria-expanded={open}
                            aria-label={open ? "Hide details" : "Show details"}
                            data-testid={`${testId}-toggle`}
                            onClick={(e) => {
                              e.stopPropagation();
                              toggle(record.id);
                            }}
                          >
                            <ChevronRightIcon
                              aria-hidden
                              className={cn("transition-transform duration-200", open && "rotate-90")}
                            />
                          </Button>
                        </TableCell>
                        {columns.map((c) => (
                          <TableCell data-label={c.header} key={c.header} className={c.className}>
                            {c.cell(record)}
                          </TableCell>
                        ))}
                      </TableRow>
                      {open && (
                        <TableRow className="bg-muted/20 hover:bg-muted/20">
                          <TableCell colSpan={span} className="p-0 whitespace-normal">
                            <RunDetailView
                              detail={parseRunDetail(record.additional_info)}
                              error={record.error_message}
                              findings={findingsOf(record.additional_info)}
                              findingsCsv={findingsCsv?.(record.id)}
                            />
                          </TableCell>
                        </TableRow>
                      )}
                    </Fragment>
                  );
                })
              )}
            </TableBody>
          </Table>
        </div>
      </CardContent>
    </Card>
  );
}

const num = "text-right tabular-nums";
const ratio = (done: number | null, total: number | null) => `${formatCount(done)} / ${formatCount(total)}`;

const IMPORT_COLUMNS: Column<ImportRecord>[] = [
  { header: "Started", cell: (r) => <Started date={r.start_time} /> },
  { header: "Duration", cell: (r) => <Duration record={r} /> },
  { header: "Status", cell: (r) => <StatusBadge status={r.status} /> },
  { header: "Added", className: num, cell: (r) => formatCount(r.records_added) },
  { header: "Updated", className: num, cell: (r) => formatCount(r.records_updated) },
  { header: "Deleted", className: num, cell: (r) => formatCount(r.records_deleted) },
  { header: "Skipped", className: num, cell: (r) => formatCount(r.records_skipped) },
  { header: "Total", className: num, cell: (r) => formatCount(r.total_processed) },
];

const CALCULATION_COLUMNS: Column<CalculationRecord>[] = [
  { header: "Started", cell: (r) => <Started date={r.start_time} /> },
  { header: "Duration", cell: (r) => <Duration record={r} /> },
  { header: "Status", cell: (r) => <StatusBadge status={r.status} /> },
  { header: "Products", className: num, cell: (r) => ratio(r.processed_products, r.total_products) },
  { header: "Orders", className: num, cell: (r) => ratio(r.processed_orders, r.total_orders) },
  {
    header: "Purchase orders",
    className: num,
    cell: (r) => ratio(r.processed_purchase_orders, r.total_purchase_orders),
  },
];

export function ImportHistoryTable({ section }: { section: Section<ImportRecord[]> | undefined }) {
  return (
    <HistoryTable
      title="Recent Imports"
      description={`The last ${HISTORY_LIMIT} imports, newest first`}
      testId="import-history"
      section={section}
      columns={IMPORT_COLUMNS}
      empty={MESSAGES.noImportHistory}
      what="import history"
      findingsCsv={(id) => `/api/csv/history/import/${id}/findings.csv`}
    />
  );
}

export function CalculationHistoryTable({ section }: { section: Section<CalculationRecord[]> | undefined }) {
  return (
    <HistoryTable
      title="Recent Calculations"
      description={`The last ${HISTORY_LIMIT} calculations, newest first`}
      testId="calculation-history"
      section={section}
      columns={CALCULATION_COLUMNS}
      empty={MESSAGES.noCalculationHistory}
      what="calculation history"
    />
  );
}
