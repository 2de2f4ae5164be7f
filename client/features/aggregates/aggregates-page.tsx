// The Brands, Vendors and Categories pages (docs/metrics.md §11): one component, told
// which kind it lists. Top 10 by revenue as a chart, then every row, 50 a page, sorted and searched
// on the server. The whole view lives in the URL (search.ts).
import { Blank } from "@client/components/blank.tsx";
import { PageHeader } from "@client/components/page-header.tsx";
import { Button } from "@client/components/ui/button.tsx";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@client/components/ui/card.tsx";
import { Skeleton } from "@client/components/ui/skeleton.tsx";
import {
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableHeader,
  TableRow,
} from "@client/components/ui/table.tsx";
import { TableSkeletonRows } from "@client/components/ui/table-helpers.tsx";
import { canAccess } from "@client/features/auth/access.ts";
import { LoadError, PagingFooter } from "@client/features/config/parts.tsx";
import { DASH, formatMoneyShort, formatNumber, formatPercent } from "@client/features/products/format.ts";
import { ABC_HINTS } from "@client/features/products/status.tsx";
import {
  CardsSkeleton,
  MobileSort,
  muted,
  SearchInput,
  SortHead,
  STICKY,
  WRAP_HEAD,
} from "@client/features/tables/parts.tsx";
import { useAuth } from "@client/lib/session.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import { useIsMobile } from "@client/lib/use-mobile.ts";
import { cn } from "@client/lib/utils.ts";
import {
  type AggregateKind,
  type AggregateRow,
  type AggregateSort,
  METRICS_PAGE_SIZE,
  type SortDirection,
} from "@shared/metrics.ts";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { Link, useNavigate } from "@tanstack/react-router";
import { DatabaseIcon, SearchXIcon } from "lucide-react";
import { type ReactNode, useEffect } from "react";
import { KINDS, type KindConfig, SORT_LABELS, VENDOR_SORT_LABELS } from "./kinds.ts";
import { type AggregatesSearch, listInputOf, nextSort, sortOf } from "./search.ts";
import { StatusBar } from "./status-bar.tsx";
import { TopChartLegend, TopRevenueChart } from "./top-chart.tsx";

const TOP_N = 10;

export const NO_METRICS_TEXT =
  "No metrics have been calculated yet. Run a full update or reset to calculate metrics.";

type Sort = { sort: AggregateSort; dir: SortDirection };

interface Column {
  id: string;
  label: ReactNode;
  /** What the column means (header tooltip). */
  title?: string;
  sort?: AggregateSort;
  numeric?: boolean;
  /** e.g. shown from a breakpoint on */
  className?: string;
  cell: (row: AggregateRow) => ReactNode;
}

const money = (value: number) => (value === 0 ? muted("$0") : formatMoneyShort(value));
const percent = (value: number | null | undefined, blankReason: string) =>
  value == null ? (
    <Blank reason={blankReason} />
  ) : (
    <span className={cn(value < 0 && "text-red-700 dark:text-red-400")}>{formatPercent(value)}</span>
  );

/** "16.5 ± 2.5 d" */
export function formatLeadTime(row: Pick<AggregateRow, "lead_time_mean" | "lead_time_std">): string {
  if (row.lead_time_mean == null) return DASH;
  const std = row.lead_time_std == null ? "" : ` ± ${formatNumber(row.lead_time_std, 1)}`;
  return `${formatNumber(row.lead_time_mean, 1)}${std} d`;
}

const samplesText = (n: number) => `${formatNumber(n)} ${n === 1 ? "sample" : "samples"}`;

/** Why a margin is blank: nothing sold in the year, or none of what sold has a cost price. */
export const noMarginReason = (row: Pick<AggregateRow, "revenue_365d">) =>
  row.revenue_365d === 0 ? "no sales in 365 d" : "no cost prices";
/** Why a vendor's on-time rate is blank: no receipts, or none of its orders has an expected date. */
export const noOnTimeReason = (row: Pick<AggregateRow, "lead_time_samples">) =>
  (row.lead_time_samples ?? 0) === 0 ? "no received orders" : "orders have no expected date";
/** Why a vendor's fill rate is blank. */
export const NO_FILL_REASON = "no received orders in 365 d";
/** Why a vendor's lead time is blank. */
export const NO_LEAD_TIME_REASON = "no received orders";

/** A, B and C counts: "5 · 3 · 12", class A emphasised. */
function AbcCounts({ row }: { row: AggregateRow }) {
  const { A, B, C } = row.abc_counts;
  return (
    <span
      data-testid="abc-counts"
      className="whitespace-nowrap tabular-nums"
      title={`${ABC_HINTS.A.split(":")[0]}: ${A}\n${ABC_HINTS.B.split(":")[0]}: ${B}\n${ABC_HINTS.C.split(":")[0]}: ${C}`}
    >
      <span
        className={cn(
          "font-semibold",
          A > 0 ? "text-indigo-700 dark:text-indigo-400" : "text-muted-foreground",
        )}
      >
        {formatNumber(A)}
      </span>
      <span className="px-0.5 text-muted-foreground/60">·</span>
      <span className={cn(B === 0 && "text-muted-foreground")}>{formatNumber(B)}</span>
      <span className="px-0.5 text-muted-foreground/60">·</span>
      <span className="text-muted-foreground">{formatNumber(C)}</span>
    </span>
  );
}

const COMMON_COLUMNS: Column[] = [
  {
    id: "product_count",
    label: "Products",
    sort: "product_count",
    numeric: true,
    title: "Products, and beneath them how many are active (not discontinued)",
    cell: (row) => (
      <span className="whitespace-nowrap">
        {row.product_count === 0 ? muted("0") : formatNumber(row.product_count)}
        {row.active_product_count !== row.product_count && (
          <span className="block text-xs text-muted-foreground" data-testid="active-count">
            {formatNumber(row.active_product_count)} active
          </span>
        )}
      </span>
    ),
  },
  {
    id: "statuses",
    label: "Statuses",
    title: "How the products split over the statuses (hover for the counts)",
    className: "w-24 min-w-20",
    cell: (row) => <StatusBar counts={row.status_counts} title={row.name} />,
  },
  {
    id: "abc",
    label: "A · B · C",
    title: "Products in ABC class A · B · C (A = top sellers)",
    numeric: true,
    cell: (row) => <AbcCounts row={row} />,
  },
  {
    id: "stock_value_cost",
    label: "Stock value",
    sort: "stock_value_cost",
    numeric: true,
    title: "Stock on hand at cost",
    cell: (row) => money(row.stock_value_cost),
  },
  {
    id: "revenue_30d",
    label: "Revenue 30d",
    sort: "revenue_30d",
    numeric: true,
    title: "Revenue of the last 30 days",
    cell: (row) => money(row.revenue_30d),
  },
  {
    id: "revenue_365d",
    label: "Revenue 365d",
    sort: "revenue_365d",
    numeric: true,
    title: "Revenue of the last 365 days",
    cell: (row) => money(row.revenue_365d),
  },
  {
    id: "units_30d",
    label: "Sold 30d",
    sort: "units_30d",
    numeric: true,
    title: "Units sold in the last 30 days",
    cell: (row) => (row.units_30d === 0 ? muted("0") : formatNumber(row.units_30d)),
  },
  {
    id: "margin_365d",
    label: "Margin",
    sort: "margin_365d",
    numeric: true,
    title: "Gross margin of the last 365 days (over the products with a cost)",
    cell: (row) => percent(row.margin_365d, noMarginReason(row)),
  },
  {
    id: "reorder_value",
    label: "Reorder value",
    sort: "reorder_value",
    numeric: true,
    title: "Value at cost of the suggested orders",
    cell: (row) =>
      row.reorder_value > 0 ? (
        <span className="font-medium">{formatMoneyShort(row.reorder_value)}</span>
      ) : (
        muted("$0")
      ),
  },
  {
    id: "overstock_value",
    label: "Overstock value",
    sort: "overstock_value",
    numeric: true,
    title: "Value at cost of the stock above what is needed",
    cell: (row) => money(row.overstock_value),
  },
];

const VENDOR_COLUMNS: Column[] = [
  {
    id: "lead_time",
    label: "Lead time",
    sort: "lead_time_mean",
    numeric: true,
    title: "Measured lead time: mean ± standard deviation over the received purchase orders (samples)",
    cell: (row) =>
      row.lead_time_mean == null ? (
        <Blank reason={NO_LEAD_TIME_REASON} />
      ) : (
        <span className="whitespace-nowrap" title={samplesText(row.lead_time_samples ?? 0)}>
          {formatLeadTime(row)}
          <span className="block text-xs text-muted-foreground">
            {samplesText(row.lead_time_samples ?? 0)}
          </span>
        </span>
      ),
  },
  {
    id: "on_time_rate",
    label: "On time",
    sort: "on_time_rate",
    numeric: true,
    title: "Share of the deliveries that arrived by their expected date",
    cell: (row) => percent(row.on_time_rate, noOnTimeReason(row)),
  },
  {
    id: "fill_rate",
    label: "Fill rate",
    sort: "fill_rate",
    numeric: true,
    title: "Units received ÷ units ordered on the received purchase orders of the last 365 days",
    cell: (row) => percent(row.fill_rate, NO_FILL_REASON),
  },
];

/** Vendors have three more columns: under 1536 px three of the others give way so all fit at 1280 px. */
const VENDOR_NARROW_HIDDEN = new Set(["revenue_30d", "units_30d", "overstock_value"]);
const columnsOf = (kind: AggregateKind): Column[] =>
  kind === "vendor"
    ? [
        ...COMMON_COLUMNS.map((c) =>
          VENDOR_NARROW_HIDDEN.has(c.id) ? { ...c, className: cn(c.className, "hidden 2xl:table-cell") } : c,
        ),
        ...VENDOR_COLUMNS,
      ]
    : COMMON_COLUMNS;

export interface AggregatesPageProps {
  kind: AggregateKind;
  search: AggregatesSearch;
  /** Replaces the URL state (`replace` for typing, so the history is not flooded). */
  onSearchChange: (next: AggregatesSearch, opts?: { replace?: boolean }) => void;
}

export function AggregatesPage({ kind, search, onSearchChange }: AggregatesPageProps) {
  const trpc = useTRPC();
  const isMobile = useIsMobile();
  const { user } = useAuth();
  const navigate = useNavigate();
  const config = KINDS[kind];
  const input = listInputOf(kind, search, METRICS_PAGE_SIZE);
  const query = useQuery(trpc.metrics.aggregates.queryOptions(input, { placeholderData: keepPreviousData }));
  const top = useQuery(
    trpc.metrics.aggregates.queryOptions({
      kind,
      pageSize: TOP_N,
      sort: "revenue_365d",
      dir: "desc",
      level: config.chartLevel,
    }),
  );
  const sort = sortOf(kind, search);

  const set = (patch: Partial<AggregatesSearch>, opts?: { replace?: boolean }) =>
    onSearchChange({ ...search, page: undefined, ...patch }, opts);
  const onSort = (column: AggregateSort) => set(nextSort(sort, column));

  // Brand and vendor rows open the Products page narrowed to them (for those who may see it).
  const productsParam = canAccess(user, "access:products") ? config.productsParam : undefined;
  const openProducts = productsParam
    ? (row: { id: number }) => void navigate({ to: "/products", search: { [productsParam]: row.id } })
    : undefined;

  const data = query.data;
  const filtered = Boolean(input.search);
  const pageCount = data ? Math.max(1, Math.ceil(data.total / METRICS_PAGE_SIZE)) : 1;
  // A page past the end (fewer results after a recalculation, an old link): go to the last one.
  useEffect(() => {
    if (data && !query.isPlaceholderData && data.total > 0 && (search.page ?? 1) > pageCount)
      onSearchChange({ ...search, page: pageCount > 1 ? pageCount : undefined }, { replace: true });
  }, [data, query.isPlaceholderData, search, pageCount, onSearchChange]);

  // Nothing calculated yet: every brand, vendor and category has a row after a calculation.
  const nothingYet = data && data.total === 0 && !filtered;

  return (
    <div className="space-y-5" data-testid="aggregates-page" data-kind={kind}>
      <PageHeader title={config.title} description={config.description} />
      {query.error && !data ? (
        <LoadError
          message={`Could not load the ${config.singular} metrics.`}
          onRetry={() => void query.refetch()}
        />
      ) : nothingYet ? (
        <EmptyState />
      ) : (
        <>
          <Card className="gap-3 py-5">
            <CardHeader className="px-5 sm:grid-cols-[1fr_auto]">
              <div className="space-y-1">
                <CardTitle className="text-base">{config.chartTitle}</CardTitle>
                <CardDescription>{config.chartDescription}</CardDescription>
              </div>
              <div className="self-end">
                <TopChartLegend />
              </div>
            </CardHeader>
            <CardContent className="px-3 sm:px-5">
              {top.data ? (
                <TopRevenueChart rows={top.data.rows} label={config.chartTitle} onSelect={openProducts} />
              ) : top.error ? (
                <p className="py-6 text-center text-sm text-muted-foreground">Could not load the chart.</p>
              ) : (
                <Skeleton className="h-64 w-full" />
              )}
            </CardContent>
          </Card>

          <div className="flex flex-col gap-3 sm:flex-row sm:items-center sm:justify-between">
            <SearchInput
              value={search.q ?? ""}
              busy={query.isFetching}
              placeholder={config.searchPlaceholder}
              className="sm:w-80"
              onSearch={(q) => set({ q: q || undefined }, { replace: true })}
            />
            {isMobile && (
              <MobileSort
                sort={sort}
                labels={sortLabelsOf(kind)}
                nextSort={nextSort}
                onChange={(next) => set(next)}
              />
            )}
          </div>

          {data && data.total === 0 ? (
            <NoMatch config={config} query={input.search ?? ""} onClear={() => set({ q: undefined })} />
          ) : (
            <Card className={cn("gap-0 overflow-hidden py-0", query.isPlaceholderData && "opacity-60")}>
              {isMobile ? (
                <AggregateCards kind={kind} rows={data?.rows} productsParam={productsParam} />
              ) : (
                <AggregatesTable
                  kind={kind}
                  rows={data?.rows}
                  sort={sort}
                  onSort={onSort}
                  productsParam={productsParam}
                  onOpen={openProducts}
                />
              )}
              {data && (
                <div className="pb-4">
                  <PagingFooter
                    page={Math.min(search.page ?? 1, pageCount)}
                    pageSize={METRICS_PAGE_SIZE}
                    total={data.total}
                    noun={data.total === 1 ? config.singular : config.plural}
                    onPageChange={(page) => {
                      onSearchChange({ ...search, page: page > 1 ? page : undefined });
                      window.scrollTo({ top: 0 });
                    }}
                  />
                </div>
              )}
            </Card>
          )}
        </>
      )}
    </div>
  );
}

/** The sorts the phone layout offers in its select (the table heads offer them all). */
const sortLabelsOf = (kind: AggregateKind): Partial<Record<AggregateSort, string>> =>
  kind === "vendor"
    ? { ...SORT_LABELS, ...VENDOR_SORT_LABELS }
    : kind === "category"
      ? { tree: "Category tree", ...SORT_LABELS }
      : SORT_LABELS;

/** A row's name: a link to its products (brands, vendors), or a place in the tree (categories). */
function RowName({
  kind,
  row,
  productsParam,
  stretch,
}: {
  kind: AggregateKind;
  row: AggregateRow;
  productsParam: KindConfig["productsParam"];
  /** The link covers its card (phones) */
  stretch?: boolean;
}) {
  const level = row.level ?? 1;
  const nameClass = cn(
    kind === "category" && level === 1 ? "font-semibold" : "font-medium",
    "block truncate",
  );
  return (
    <div
      className="min-w-0"
      style={
        kind === "category" ? { paddingLeft: `${Math.min(level - 1, 6) * (stretch ? 12 : 14)}px` } : undefined
      }
    >
      {productsParam ? (
        <Link
          to="/products"
          search={{ [productsParam]: row.id }}
          data-testid="aggregate-link"
          title={`${row.name}: show its products`}
          className={cn(
            nameClass,
            "hover:underline focus-visible:underline focus-visible:outline-none",
            stretch && "after:absolute after:inset-0",
          )}
        >
          {row.name}
        </Link>
      ) : (
        <span className={nameClass} title={row.name} data-testid="aggregate-name">
          {row.name}
        </span>
      )}
      {kind === "category" && row.parent_name && (
        <span className="block truncate text-xs text-muted-foreground" data-testid="aggregate-parent">
          in {row.parent_name}
        </span>
      )}
    </div>
  );
}

function AggregatesTable({
  kind,
  rows,
  sort,
  onSort,
  productsParam,
  onOpen,
}: {
  kind: AggregateKind;
  rows: AggregateRow[] | undefined;
  sort: Sort;
  onSort: (column: AggregateSort) => void;
  productsParam: KindConfig["productsParam"];
  onOpen?: (row: AggregateRow) => void;
}) {
  const columns = columnsOf(kind);
  const nameHead = kind === "brand" ? "Brand" : kind === "vendor" ? "Vendor" : "Category";
  return (
    <Table
      data-testid="aggregates-table"
      className="text-[13px] [&_td:first-child]:pl-4 [&_th:first-child]:pl-4 [&_td:last-child]:pr-4 [&_th:last-child]:pr-4"
    >
      <TableHeader className="bg-muted">
        <TableRow className="hover:bg-transparent">
          <SortHead
            column={kind === "category" ? "tree" : "name"}
            sort={sort}
            onSort={onSort}
            title={
              kind === "category" ? "The category tree: each category above its subcategories" : undefined
            }
            className={cn(STICKY, "bg-muted")}
          >
            {nameHead}
          </SortHead>
          {columns.map((col) =>
            col.sort ? (
              <SortHead
                key={col.id}
                column={col.sort}
                sort={sort}
                onSort={onSort}
                title={col.title}
                numeric={col.numeric}
                className={col.className}
              >
                {col.label}
              </SortHead>
            ) : (
              <TableHead
                key={col.id}
                title={col.title}
                className={cn(WRAP_HEAD, col.numeric && "text-right", col.className)}
              >
                {col.label}
              </TableHead>
            ),
          )}
        </TableRow>
      </TableHeader>
      <TableBody>
        {rows === undefined ? (
          <TableSkeletonRows rows={8} columns={columns.length + 1} />
        ) : (
          rows.map((row) => (
            <TableRow
              key={row.id}
              data-testid="aggregate-row"
              data-id={row.id}
              data-level={row.level}
              className={cn("group hover:bg-muted", onOpen && "cursor-pointer")}
              onClick={
                onOpen
                  ? (e) => {
                      if ((e.target as HTMLElement).closest("a,[data-testid='status-bar']")) return;
                      if (window.getSelection()?.toString()) return;
                      onOpen(row);
                    }
                  : undefined
              }
            >
              <TableCell className={cn(STICKY, "py-2")}>
                <div className="max-w-40 2xl:max-w-72">
                  <RowName kind={kind} row={row} productsParam={productsParam} />
                </div>
              </TableCell>
              {columns.map((col) => (
                <TableCell
                  key={col.id}
                  data-col={col.id}
                  className={cn(col.numeric && "text-right tabular-nums", col.className)}
                >
                  {col.cell(row)}
                </TableCell>
              ))}
            </TableRow>
          ))
        )}
      </TableBody>
    </Table>
  );
}

/** Under 768 px: one card per row with the figures that matter most. */
function AggregateCards({
  kind,
  rows,
  productsParam,
}: {
  kind: AggregateKind;
  rows: AggregateRow[] | undefined;
  productsParam: KindConfig["productsParam"];
}) {
  if (rows === undefined) return <CardsSkeleton second="h-2.5 w-full" />;
  return (
    <ul className="divide-y" data-testid="aggregates-cards">
      {rows.map((row) => (
        <li key={row.id} data-testid="aggregate-row" data-id={row.id} data-level={row.level}>
          <div className="relative space-y-2.5 p-4 hover:bg-muted/50">
            <div className="flex items-start justify-between gap-3">
              <RowName kind={kind} row={row} productsParam={productsParam} stretch />
              <div className="shrink-0 text-right text-xs text-muted-foreground">
                <span className="font-medium text-foreground tabular-nums">
                  {formatNumber(row.product_count)}
                </span>{" "}
                {row.product_count === 1 ? "product" : "products"}
                {row.active_product_count !== row.product_count && (
                  <span className="block">{formatNumber(row.active_product_count)} active</span>
                )}
              </div>
            </div>
            {/* Above the card's link, so its tooltip can be opened. */}
            <div className="relative z-10 flex items-center gap-3">
              <StatusBar counts={row.status_counts} title={row.name} className="flex-1" />
              <span className="shrink-0 text-xs text-muted-foreground" title="Products in class A · B · C">
                ABC <AbcCounts row={row} />
              </span>
            </div>
            <dl className="grid grid-cols-4 gap-2 text-xs">
              <Figure label="Revenue 1y" value={formatMoneyShort(row.revenue_365d)} />
              <Figure
                label="Margin"
                value={formatPercent(row.margin_365d)}
                reason={row.margin_365d == null ? noMarginReason(row) : undefined}
                alert={(row.margin_365d ?? 0) < 0}
              />
              <Figure label="Stock value" value={formatMoneyShort(row.stock_value_cost)} />
              <Figure
                label="Reorder"
                value={row.reorder_value > 0 ? formatMoneyShort(row.reorder_value) : "$0"}
              />
              {kind === "vendor" && (
                <>
                  <Figure
                    label="Lead time"
                    value={formatLeadTime(row)}
                    sub={row.lead_time_samples ? samplesText(row.lead_time_samples) : undefined}
                    reason={row.lead_time_mean == null ? NO_LEAD_TIME_REASON : undefined}
                    wide
                  />
                  <Figure
                    label="On time"
                    value={formatPercent(row.on_time_rate)}
                    reason={row.on_time_rate == null ? noOnTimeReason(row) : undefined}
                  />
                  <Figure
                    label="Fill rate"
                    value={formatPercent(row.fill_rate)}
                    reason={row.fill_rate == null ? NO_FILL_REASON : undefined}
                  />
                </>
              )}
            </dl>
          </div>
        </li>
      ))}
    </ul>
  );
}

function Figure({
  label,
  value,
  sub,
  reason,
  alert,
  wide,
}: {
  label: string;
  value: string;
  sub?: string;
  /** Why the value is blank, in small print beneath it. */
  reason?: string;
  alert?: boolean;
  wide?: boolean;
}) {
  return (
    <div className={cn("min-w-0", wide && "col-span-2")}>
      <dt className="text-muted-foreground">{label}</dt>
      <dd
        className={cn("truncate text-sm font-medium tabular-nums", alert && "text-red-700 dark:text-red-400")}
      >
        {value}
        {sub && <span className="ml-1 text-xs font-normal text-muted-foreground">{sub}</span>}
      </dd>
      {reason && (
        <dd className="text-[11px] leading-tight text-muted-foreground" data-testid="blank-reason">
          {reason}
        </dd>
      )}
    </div>
  );
}

function NoMatch({ config, query, onClear }: { config: KindConfig; query: string; onClear: () => void }) {
  return (
    <div
      data-testid="aggregates-no-match"
      className="flex flex-col items-center justify-center gap-3 rounded-xl border border-dashed bg-muted/30 px-6 py-12 text-center"
    >
      <div className="flex size-12 items-center justify-center rounded-full border bg-background shadow-xs">
        <SearchXIcon className="size-5 text-muted-foreground" aria-hidden />
      </div>
      <p className="text-sm font-medium">
        No {config.plural} match “{query}”.
      </p>
      <Button variant="outline" size="sm" onClick={onClear}>
        Clear search
      </Button>
    </div>
  );
}

function EmptyState() {
  const { user } = useAuth();
  return (
    <div
      data-testid="aggregates-empty"
      className="flex flex-col items-center justify-center gap-3 rounded-xl border border-dashed bg-muted/30 px-6 py-16 text-center"
    >
      <div className="flex size-12 items-center justify-center rounded-full border bg-background shadow-xs">
        <DatabaseIcon className="size-5 text-muted-foreground" aria-hidden />
      </div>
      <p className="max-w-md text-sm text-muted-foreground">{NO_METRICS_TEXT}</p>
      {canAccess(user, "settings:data_management") && (
        <Button asChild variant="outline" size="sm">
          <Link to="/settings" search={{ tab: "data" }}>
            Go to Data Management
          </Link>
        </Button>
      )}
    </div>
  );
}
