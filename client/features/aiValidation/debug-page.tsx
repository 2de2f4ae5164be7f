// The AI Validation Debug page: every call made to the language model, newest first, with
// filters and search; a run opens its detail (what was sent and received) and can be replayed.
import { PageHeader } from "@client/components/page-header.tsx";
import { Alert, AlertDescription, AlertTitle } from "@client/components/ui/alert.tsx";
import { Badge } from "@client/components/ui/badge.tsx";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@client/components/ui/card.tsx";
import {
  Select,
  SelectContent,
  SelectItem,
  SelectTrigger,
  SelectValue,
} from "@client/components/ui/select.tsx";
import {
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableHeader,
  TableRow,
} from "@client/components/ui/table.tsx";
import { TableEmptyRow, TableLoadingRow } from "@client/components/ui/table-helpers.tsx";
import { canAccess } from "@client/features/auth/access.ts";
import { LoadError, PagingFooter } from "@client/features/config/parts.tsx";
import { SearchInput } from "@client/features/tables/parts.tsx";
import { errorMessage } from "@client/lib/errors.ts";
import { useAuth } from "@client/lib/session.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import {
  AI_CALL_KINDS,
  AI_CALL_STATUSES,
  AI_MODES,
  type AiCallSummary,
  type AiStatus,
} from "@shared/ai-validation.ts";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { InfoIcon } from "lucide-react";
import { Bar, BarChart, CartesianGrid, Cell, Tooltip, XAxis, YAxis } from "recharts";
import {
  formatCost,
  formatInt,
  formatMs,
  KIND_LABELS,
  MODE_LABELS,
  verdictSummary,
  versionsText,
} from "./format.ts";
import { RunDetail } from "./run-detail.tsx";
import { type AiDebugSearch, RUNS_PAGE_SIZE } from "./search.ts";
import { TestConnection } from "./test-connection.tsx";

const ALL = "all";

export function AiDebugPage({
  search,
  onSearchChange,
}: {
  search: AiDebugSearch;
  onSearchChange: (next: AiDebugSearch) => void;
}) {
  const trpc = useTRPC();
  const { user } = useAuth();
  const canTest = canAccess(user, "settings:prompt_management");
  const status = useQuery(trpc.aiValidation.status.queryOptions());
  if (search.run)
    return (
      <RunDetail
        id={search.run}
        canSavePrompts={canTest}
        onOpen={(run) => onSearchChange({ ...search, run })}
        onBack={() => onSearchChange({ ...search, run: undefined })}
      />
    );
  return (
    <div className="space-y-6" data-testid="ai-debug-page">
      <PageHeader
        title="AI Validation Debug"
        description="Every call made to the language model: what was sent, what came back, what it cost. Open a run to replay it with edited prompts."
      />
      <EndpointCard status={status.data} canTest={canTest} />
      <RunsList search={search} onSearchChange={onSearchChange} />
    </div>
  );
}

function EndpointCard({ status, canTest }: { status: AiStatus | undefined; canTest: boolean }) {
  if (!status) return null;
  return (
    <Card className="py-4">
      <CardContent className="flex flex-col gap-4 px-4 md:flex-row md:items-start md:justify-between">
        {status.configured ? (
          <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1 text-sm" data-testid="ai-endpoint">
            <dt className="text-muted-foreground">Endpoint</dt>
            <dd className="break-all">{status.base_url}</dd>
            <dt className="text-muted-foreground">Model</dt>
            <dd>{status.model}</dd>
            <dt className="text-muted-foreground">Calls at once</dt>
            <dd>
              {status.concurrency}, {status.rows_per_call} row{status.rows_per_call === 1 ? "" : "s"} a call
            </dd>
            <dt className="text-muted-foreground">Prices</dt>
            <dd>
              {status.price_input_per_mtok || status.price_output_per_mtok
                ? `${formatCost(status.price_input_per_mtok)} in / ${formatCost(status.price_output_per_mtok)} out per million tokens`
                : "not set (AI_PRICE_INPUT_PER_MTOK, AI_PRICE_OUTPUT_PER_MTOK): costs show as $0"}
            </dd>
            <dt className="text-muted-foreground">Kept for</dt>
            <dd>{status.retention_days} days</dd>
          </dl>
        ) : (
          <Alert data-testid="ai-not-configured">
            <InfoIcon aria-hidden />
            <AlertTitle>{status.message}</AlertTitle>
            <AlertDescription>
              The Create Products flow runs without the AI step until then. See docs/ai-validation.md.
            </AlertDescription>
          </Alert>
        )}
        {canTest && (
          <div className="md:max-w-md">
            <TestConnection />
          </div>
        )}
      </CardContent>
    </Card>
  );
}

function FilterSelect<T extends string>({
  label,
  value,
  options,
  labels,
  onChange,
}: {
  label: string;
  value: T | undefined;
  options: readonly T[];
  labels: Record<T, string>;
  onChange: (v: T | undefined) => void;
}) {
  return (
    <Select value={value ?? ALL} onValueChange={(v) => onChange(v === ALL ? undefined : (v as T))}>
      <SelectTrigger className="w-full sm:w-40" aria-label={label}>
        <SelectValue />
      </SelectTrigger>
      <SelectContent>
        <SelectItem value={ALL}>All {label.toLowerCase()}</SelectItem>
        {options.map((o) => (
          <SelectItem key={o} value={o}>
            {labels[o]}
          </SelectItem>
        ))}
      </SelectContent>
    </Select>
  );
}

const STATUS_LABELS = { ok: "OK", failed: "Failed" } as const;

function RunsList({
  search,
  onSearchChange,
}: {
  search: AiDebugSearch;
  onSearchChange: (next: AiDebugSearch) => void;
}) {
  const trpc = useTRPC();
  const page = search.page ?? 1;
  const runs = useQuery({
    ...trpc.aiValidation.runs.queryOptions({
      page,
      pageSize: RUNS_PAGE_SIZE,
      status: search.status,
      kind: search.kind,
      mode: search.mode,
      search: search.q || undefined,
    }),
    placeholderData: keepPreviousData,
  });
  const set = (patch: Partial<AiDebugSearch>) => onSearchChange({ ...search, page: undefined, ...patch });
  const items = runs.data?.items ?? [];
  const filtered = !!(search.q || search.status || search.kind || search.mode);

  return (
    <Card className="py-4">
      <CardHeader className="px-4">
        <CardTitle>Runs</CardTitle>
        <CardDescription>
          Newest first. Search by model, company id, product type, error, or a run, import or row id.
        </CardDescription>
      </CardHeader>
      <CardContent className="space-y-4 px-4">
        <div className="flex flex-col gap-2 sm:flex-row sm:flex-wrap">
          <SearchInput
            value={search.q ?? ""}
            busy={runs.isFetching}
            placeholder="Search runs..."
            className="sm:w-64"
            onSearch={(q) => set({ q: q || undefined })}
          />
          <FilterSelect
            label="Statuses"
            value={search.status}
            options={AI_CALL_STATUSES}
            labels={STATUS_LABELS}
            onChange={(status) => set({ status })}
          />
          <FilterSelect
            label="Kinds"
            value={search.kind}
            options={AI_CALL_KINDS}
            labels={KIND_LABELS}
            onChange={(kind) => set({ kind })}
          />
          <FilterSelect
            label="Modes"
            value={search.mode}
            options={AI_MODES}
            labels={MODE_LABELS}
            onChange={(mode) => set({ mode })}
          />
        </div>
        {runs.isError && (
          <LoadError
            message={errorMessage(runs.error, "Failed to load runs")}
            onRetry={() => runs.refetch()}
          />
        )}
        {items.length > 1 && <LatencyChart runs={items} />}
        <div className="overflow-x-auto rounded-md border">
          <Table data-testid="runs-table">
            <TableHeader>
              <TableRow>
                <TableHead>Time</TableHead>
                <TableHead>Run</TableHead>
                <TableHead>Import · rows</TableHead>
                <TableHead>Company</TableHead>
                <TableHead>Prompts</TableHead>
                <TableHead>Model · mode</TableHead>
                <TableHead>Status</TableHead>
                <TableHead className="text-right">Latency</TableHead>
                <TableHead className="text-right">Tokens in/out</TableHead>
                <TableHead className="text-right">Cost</TableHead>
                <TableHead>Verdicts</TableHead>
              </TableRow>
            </TableHeader>
            <TableBody>
              {runs.isPending ? (
                <TableLoadingRow colSpan={11} message="Loading runs..." />
              ) : items.length === 0 ? (
                <TableEmptyRow
                  colSpan={11}
                  message={
                    filtered
                      ? "No runs match these filters"
                      : "No runs yet: validating new products, a replay or a connection test makes one"
                  }
                />
              ) : (
                items.map((r) => (
                  <RunRow key={r.id} run={r} onOpen={() => onSearchChange({ ...search, run: r.id })} />
                ))
              )}
            </TableBody>
          </Table>
        </div>
        {runs.data && (
          <PagingFooter
            page={page}
            pageSize={RUNS_PAGE_SIZE}
            total={runs.data.total}
            noun="runs"
            onPageChange={(p) => onSearchChange({ ...search, page: p })}
          />
        )}
      </CardContent>
    </Card>
  );
}

function RunRow({ run: r, onOpen }: { run: AiCallSummary; onOpen: () => void }) {
  return (
    <TableRow className="cursor-pointer" onClick={onOpen} data-testid="run-row">
      <TableCell className="whitespace-nowrap text-xs">{new Date(r.created_at).toLocaleString()}</TableCell>
      <TableCell>
        <button
          type="button"
          className="font-medium text-primary underline-offset-2 hover:underline"
          onClick={(e) => {
            e.stopPropagation();
            onOpen();
          }}
        >
          #{r.id}
        </button>
        <div className="text-xs text-muted-foreground">
          {KIND_LABELS[r.kind]}
          {r.replay_of ? ` of #${r.replay_of}` : ""}
        </div>
      </TableCell>
      <TableCell className="text-xs">
        {r.import_id ? (
          <Link
            to="/import"
            search={{ id: r.import_id }}
            className="text-primary hover:underline"
            onClick={(e) => e.stopPropagation()}
          >
            Import {r.import_id}
          </Link>
        ) : (
          <span className="text-muted-foreground">no import</span>
        )}
        <div className="text-muted-foreground">
          {r.row_ids.length
            ? `row ${r.row_ids.slice(0, 3).join(", ")}${r.row_ids.length > 3 ? ", …" : ""}`
            : ""}
        </div>
      </TableCell>
      <TableCell className="text-xs">
        {r.company_name ?? r.company ?? <span className="text-muted-foreground">none</span>}
        {(r.product_type || r.template_id) && (
          <div className="text-muted-foreground">
            {[r.product_type, r.template_id ? `template #${r.template_id}` : null]
              .filter(Boolean)
              .join(" · ")}
          </div>
        )}
      </TableCell>
      <TableCell className="text-xs">{versionsText(r.prompt_versions)}</TableCell>
      <TableCell className="text-xs">
        {r.model}
        <div className="text-muted-foreground">{r.mode ? MODE_LABELS[r.mode] : "no answer"}</div>
      </TableCell>
      <TableCell>
        <Badge variant={r.status === "ok" ? "success" : "destructive"} title={r.error ?? undefined}>
          {STATUS_LABELS[r.status]}
        </Badge>
      </TableCell>
      <TableCell className="text-right tabular-nums text-xs">{formatMs(r.latency_ms)}</TableCell>
      <TableCell className="text-right tabular-nums text-xs">
        {formatInt(r.tokens_in)} / {formatInt(r.tokens_out)}
      </TableCell>
      <TableCell className="text-right tabular-nums text-xs">{formatCost(r.cost)}</TableCell>
      <TableCell className="max-w-56 text-xs">
        {verdictSummary(r)}
        {r.error && (
          <div className="truncate text-destructive" title={r.error}>
            {r.error}
          </div>
        )}
      </TableCell>
    </TableRow>
  );
}

/** The latency of each run on this page, oldest left, failed ones in red. */
function LatencyChart({ runs }: { runs: AiCallSummary[] }) {
  const data = [...runs]
    .reverse()
    .map((r) => ({ id: `#${r.id}`, latency: r.latency_ms, failed: r.status === "failed" }));
  return (
    <figure className="space-y-1" data-testid="latency-chart">
      <figcaption className="text-sm text-muted-foreground">
        Latency of the runs on this page (ms; failed in red)
      </figcaption>
      <div className="overflow-x-auto">
        <BarChart width={Math.max(320, Math.min(1100, data.length * 22 + 60))} height={140} data={data}>
          <CartesianGrid vertical={false} stroke="#e5e7eb" />
          <XAxis dataKey="id" tick={{ fontSize: 10 }} interval="preserveStartEnd" />
          <YAxis tick={{ fontSize: 10 }} width={48} />
          <Tooltip formatter={(v) => [`${v} ms`, "Latency"]} />
          <Bar dataKey="latency" isAnimationActive={false}>
            {data.map((d) => (
              <Cell key={d.id} fill={d.failed ? "#dc2626" : "#2563eb"} />
            ))}
          </Bar>
        </BarChart>
      </div>
    </figure>
  );
}
