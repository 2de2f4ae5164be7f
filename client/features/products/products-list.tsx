// The Products page: every product's planning figures (docs/metrics.md), 50 a page,
// sorted, searched and filtered on the server. The whole view lives in the URL (search.ts).
import { Blank } from "@client/components/blank.tsx";
import { PageHeader } from "@client/components/page-header.tsx";
import { Button } from "@client/components/ui/button.tsx";
import { Card } from "@client/components/ui/card.tsx";
import { Skeleton } from "@client/components/ui/skeleton.tsx";
import { Switch } from "@client/components/ui/switch.tsx";
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
import {
  CardsSkeleton,
  MobileSort,
  muted,
  SearchInput,
  SortHead,
  STICKY,
} from "@client/features/tables/parts.tsx";
import { useAuth } from "@client/lib/session.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import { useIsMobile } from "@client/lib/use-mobile.ts";
import { cn } from "@client/lib/utils.ts";
import {
  ABC_CLASSES,
  type AbcClass,
  AGING_BUCKETS,
  COVER_BUCKETS,
  METRICS_PAGE_SIZE,
  PRODUCT_KIND_LABELS,
  PRODUCT_STATUSES,
  type ProductKind,
  type ProductMetricSort,
  type ProductMetricsPage,
  type ProductMetricsRow,
  type ProductStatus,
  STATUS_LABELS,
} from "@shared/metrics.ts";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { Link, useNavigate } from "@tanstack/react-router";
import { DatabaseIcon, PackageSearchIcon, XIcon } from "lucide-react";
import { type ReactNode, useEffect } from "react";
import { StaleDataWarning } from "../dataOps/stale-data-warning.tsx";
import {
  DASH,
  formatDay,
  formatDayCompact,
  formatMoneyShort,
  formatNumber,
  formatPercent,
  formatRate,
} from "./format.ts";
import {
  DEFAULT_DIR,
  DEFAULT_SORT,
  filterToParam,
  listInputOf,
  nextSort,
  type ProductsSearch,
  statusesOf,
} from "./search.ts";
import { AbcBadge, ProductStatusBadge, STATUS_STYLES } from "./status.tsx";

export const NO_METRICS_TEXT =
  "No metrics have been calculated yet. Run a full update or reset to calculate metrics.";

interface Column {
  id: string;
  label: ReactNode;
  /** What the column means (header tooltip). */
  title?: string;
  sort?: ProductMetricSort;
  numeric?: boolean;
  /** e.g. shown from a breakpoint on */
  className?: string;
  cell: (row: ProductMetricsRow) => ReactNode;
}

const zeroMuted = (value: number, text: string) => (value === 0 ? muted(text) : text);

/** Why a product's cover and stock-out date are blank. */
export function noCoverReason(row: Pick<ProductMetricsRow, "demand_rate">): string {
  if (row.demand_rate == null) return "not planned";
  return row.demand_rate === 0 ? "no demand" : "too far off";
}
/** Why a margin is blank: no sales in the year, or no cost price to take from them. */
export function noMarginReason(row: Pick<ProductMetricsRow, "revenue_365d">): string {
  return row.revenue_365d === 0 ? "no sales in 365 d" : "no cost price";
}
const urgent = (row: ProductMetricsRow) => row.status === "critical";

/** What a non-merchandise product is (why it is excluded); nothing for merchandise. */
function KindNote({ kind }: { kind: ProductKind | undefined }) {
  if (!kind || kind === "merchandise") return null;
  return (
    <span className="text-xs text-muted-foreground" data-testid="product-kind">
      {PRODUCT_KIND_LABELS[kind]}
    </span>
  );
}

const COLUMNS: Column[] = [
  {
    id: "status",
    label: "Status",
    sort: "status",
    cell: (row) => (
      <span className="inline-flex items-center gap-1.5">
        <ProductStatusBadge status={row.status} />
        <KindNote kind={row.kind} />
      </span>
    ),
  },
  {
    id: "abc",
    label: "ABC",
    sort: "abc_class",
    title: "ABC class by the share of sales (A = top sellers)",
    cell: (row) => <AbcBadge abc={row.abc_class} />,
  },
  {
    id: "on_hand",
    label: "On hand",
    sort: "on_hand",
    numeric: true,
    cell: (row) => zeroMuted(row.on_hand, formatNumber(row.on_hand)),
  },
  {
    id: "on_order",
    label: "On order",
    sort: "on_order",
    numeric: true,
    title: "Units still to arrive on open purchase orders",
    cell: (row) => zeroMuted(row.on_order, formatNumber(row.on_order)),
  },
  {
    id: "days_of_cover",
    label: "Cover",
    sort: "days_of_cover",
    numeric: true,
    title: "Days of cover: on hand ÷ daily demand",
    cell: (row) =>
      row.days_of_cover == null ? (
        <Blank reason={noCoverReason(row)} />
      ) : (
        <span className={cn(urgent(row) && "font-medium text-red-700 dark:text-red-400")}>
          {formatNumber(Math.round(row.days_of_cover))} d
        </span>
      ),
  },
  {
    id: "stockout_date",
    label: "Stock-out",
    sort: "stockout_date",
    numeric: true,
    title: "Estimated stock-out date, counting incoming purchase orders",
    cell: (row) =>
      row.stockout_date ? (
        <span
          title={formatDay(row.stockout_date)}
          className={cn(urgent(row) && "font-medium text-red-700 dark:text-red-400")}
        >
          {formatDayCompact(row.stockout_date)}
        </span>
      ) : (
        <Blank reason={row.days_of_cover == null ? noCoverReason(row) : "too far off"} />
      ),
  },
  {
    id: "reorder_point",
    label: "ROP",
    sort: "reorder_point",
    numeric: true,
    title: "Reorder point: lead-time demand plus safety stock",
    cell: (row) =>
      row.reorder_point == null ? <Blank reason="not planned" /> : formatNumber(row.reorder_point),
  },
  {
    id: "reorder_qty",
    label: "Reorder qty",
    sort: "reorder_qty",
    numeric: true,
    title: "Suggested order quantity",
    cell: (row) =>
      row.reorder_qty > 0 ? <span className="font-medium">{formatNumber(row.reorder_qty)}</span> : muted("0"),
  },
  {
    id: "reorder_value",
    label: "Reorder value",
    sort: "reorder_value",
    numeric: true,
    title: "Value of the suggested order at cost",
    cell: (row) => (row.reorder_value > 0 ? formatMoneyShort(row.reorder_value) : muted("$0")),
  },
  {
    id: "units_30d",
    label: "Sold 30d",
    sort: "units_30d",
    numeric: true,
    title: "Units sold in the last 30 days",
    cell: (row) => zeroMuted(row.units_30d, formatNumber(row.units_30d)),
  },
  {
    id: "avg_daily_sales",
    label: "Sales / day",
    sort: "avg_daily_sales",
    numeric: true,
    title: "Average daily sales over the in-stock days of the last 90 days",
    cell: (row) => zeroMuted(row.avg_daily_sales, formatRate(row.avg_daily_sales)),
  },
  {
    id: "margin_365d",
    label: "Margin",
    sort: "margin_365d",
    numeric: true,
    title: "Gross margin of the last 365 days",
    cell: (row) =>
      row.margin_365d == null ? (
        <Blank reason={noMarginReason(row)} />
      ) : (
        <span className={cn(row.margin_365d < 0 && "text-red-700 dark:text-red-400")}>
          {formatPercent(row.margin_365d)}
        </span>
      ),
  },
  {
    id: "vendor",
    label: "Vendor",
    // Under 1536 px the vendor shows under the product's title instead.
    className: "hidden 2xl:table-cell",
    cell: (row) =>
      row.vendor ? (
        <span className="block max-w-28 truncate" title={row.vendor}>
          {row.vendor}
        </span>
      ) : (
        <Blank reason="no vendor" />
      ),
  },
];

/** The sorts the phone layout offers in its select (the table heads offer them all). */
const SORT_LABELS: Partial<Record<ProductMetricSort, string>> = {
  reorder_value: "Reorder value",
  reorder_qty: "Reorder quantity",
  stockout_date: "Stock-out date",
  days_of_cover: "Days of cover",
  units_30d: "Sold in 30 days",
  revenue_30d: "Revenue 30 days",
  avg_daily_sales: "Sales per day",
  on_hand: "On hand",
  margin_365d: "Margin",
  title: "Title",
  sku: "SKU",
  status: "Status",
  abc_class: "ABC class",
};

export interface ProductsListProps {
  search: ProductsSearch;
  /** Replaces the URL state (`replace` for typing, so the history is not flooded). */
  onSearchChange: (next: ProductsSearch, opts?: { replace?: boolean }) => void;
}

export function ProductsList({ search, onSearchChange }: ProductsListProps) {
  const trpc = useTRPC();
  const { user } = useAuth();
  const isMobile = useIsMobile();
  const input = listInputOf(search, METRICS_PAGE_SIZE);
  const query = useQuery(trpc.metrics.products.queryOptions(input, { placeholderData: keepPreviousData }));
  const sort = { sort: input.sort ?? DEFAULT_SORT, dir: input.dir ?? DEFAULT_DIR };

  const set = (patch: Partial<ProductsSearch>, opts?: { replace?: boolean }) =>
    onSearchChange({ ...search, page: undefined, ...patch }, opts);
  const onSort = (column: ProductMetricSort) => set(nextSort(sort, column));

  const data = query.data;
  const filtered = Boolean(
    input.search ||
      search.status ||
      search.abc ||
      search.xyz ||
      search.vendor ||
      search.brand ||
      search.category ||
      search.stockout_before_arrival ||
      search.out_of_stock ||
      search.no_sales_days ||
      search.cover ||
      search.aging ||
      search.received_month,
  );
  const pageCount = data ? Math.max(1, Math.ceil(data.total / METRICS_PAGE_SIZE)) : 1;
  // A page past the end (fewer results after a recalculation, an old link): go to the last one.
  useEffect(() => {
    if (data && !query.isPlaceholderData && data.total > 0 && (search.page ?? 1) > pageCount)
      onSearchChange({ ...search, page: pageCount > 1 ? pageCount : undefined }, { replace: true });
  }, [data, query.isPlaceholderData, search, pageCount, onSearchChange]);

  return (
    <div className="space-y-5" data-testid="products-page">
      <PageHeader
        title="Products"
        description="Stock, demand and reorder figures of every product, as of the last calculation."
        actions={
          canAccess(user, "access:discount_simulator") && (
            <Button asChild variant="outline" size="sm">
              <Link
                to="/discount-simulator"
                search={{ filter: filterToParam(search) }}
                data-testid="simulate-selection"
                title="Open the Discount Simulator with the products this filter matches"
              >
                {filtered ? "Simulate a discount on these products" : "Simulate a discount"}
              </Link>
            </Button>
          )
        }
      />
      <StaleDataWarning />
      <div className="space-y-3">
        <div className="flex flex-col gap-3 sm:flex-row sm:items-center sm:justify-between">
          <SearchInput
            value={search.q ?? ""}
            busy={query.isFetching}
            placeholder="Search by title, SKU, barcode or ID..."
            className="sm:w-96"
            onSearch={(q) => set({ q: q || undefined }, { replace: true })}
          />
          <label className="flex shrink-0 items-center gap-2 text-sm text-muted-foreground">
            <Switch
              checked={search.nonMerchandise === true}
              onCheckedChange={(on) => set({ nonMerchandise: on ? true : undefined })}
              data-testid="non-merchandise-filter"
              aria-label="Show non-merchandise"
            />
            <span>Show non-merchandise</span>
          </label>
          <div className="flex min-w-0 items-center gap-2">
            <AbcFilter value={search.abc} onChange={(abc) => set({ abc })} />
            {isMobile && (
              <MobileSort
                sort={sort}
                labels={SORT_LABELS}
                nextSort={nextSort}
                onChange={(next) => set(next)}
              />
            )}
          </div>
        </div>
        {(search.vendor ||
          search.xyz ||
          search.brand ||
          search.category ||
          search.stockout_before_arrival ||
          search.out_of_stock ||
          search.no_sales_days ||
          search.cover ||
          search.aging ||
          search.received_month) && (
          <div className="flex flex-wrap gap-2">
            {search.category && (
              <FilterChip
                kind="Category"
                id={search.category}
                name={query.isPlaceholderData ? undefined : data?.category_name}
                onRemove={() => set({ category: undefined })}
              />
            )}
            {search.xyz && (
              <FlagChip
                flag="xyz"
                label={`XYZ class ${search.xyz}`}
                onRemove={() => set({ xyz: undefined })}
              />
            )}
            {search.stockout_before_arrival && (
              <FlagChip
                flag="stockout_before_arrival"
                label="Runs out before an order placed today would arrive"
                onRemove={() => set({ stockout_before_arrival: undefined })}
              />
            )}
            {search.out_of_stock && (
              <FlagChip
                flag="out_of_stock"
                label="Out of stock"
                onRemove={() => set({ out_of_stock: undefined })}
              />
            )}
            {search.no_sales_days && (
              <FlagChip
                flag="no_sales_days"
                label={`No sale in the last ${formatNumber(search.no_sales_days)} days`}
                onRemove={() => set({ no_sales_days: undefined })}
              />
            )}
            {search.cover && (
              <FlagChip
                flag="cover"
                label={`Days of cover: ${COVER_BUCKETS.find((b) => b.key === search.cover)?.label ?? search.cover}`}
                onRemove={() => set({ cover: undefined })}
              />
            )}
            {search.aging && (
              <FlagChip
                flag="aging"
                label={`Stock received ${AGING_BUCKETS.find((b) => b.key === search.aging)?.label ?? search.aging} ago`}
                onRemove={() => set({ aging: undefined })}
              />
            )}
            {search.received_month && (
              <FlagChip
                flag="received_month"
                label={`Received in ${search.received_month}`}
                onRemove={() => set({ received_month: undefined })}
              />
            )}
            {search.vendor && (
              <FilterChip
                kind="Vendor"
                id={search.vendor}
                name={query.isPlaceholderData ? undefined : data?.vendor_name}
                onRemove={() => set({ vendor: undefined })}
              />
            )}
            {search.brand && (
              <FilterChip
                kind="Brand"
                id={search.brand}
                name={query.isPlaceholderData ? undefined : data?.brand_name}
                onRemove={() => set({ brand: undefined })}
              />
            )}
          </div>
        )}
        <StatusChips
          counts={data?.status_counts}
          value={statusesOf(search)}
          onChange={(status) => set({ status })}
        />
      </div>

      {query.error && !data ? (
        <LoadError message="Could not load the product metrics." onRetry={() => void query.refetch()} />
      ) : data && data.total === 0 ? (
        <EmptyState
          filtered={filtered}
          onClear={() => onSearchChange({ sort: search.sort, dir: search.dir })}
        />
      ) : (
        <Card className={cn("gap-0 overflow-hidden py-0", query.isPlaceholderData && "opacity-60")}>
          {isMobile ? (
            <ProductCards rows={data?.rows} search={search} />
          ) : (
            <ProductsTable rows={data?.rows} sort={sort} onSort={onSort} search={search} />
          )}
          {data && (
            <div className="pb-4">
              <PagingFooter
                page={Math.min(search.page ?? 1, pageCount)}
                pageSize={METRICS_PAGE_SIZE}
                total={data.total}
                noun={data.total === 1 ? "product" : "products"}
                onPageChange={(page) => {
                  onSearchChange({ ...search, page: page > 1 ? page : undefined });
                  window.scrollTo({ top: 0 });
                }}
              />
            </div>
          )}
        </Card>
      )}
    </div>
  );
}

/** The vendor or brand the list is narrowed to (from the Vendors / Brands pages), with its remove button. */
/** A filter without a name to look up (from a Dashboard tile's link), removable. */
function FlagChip({ flag, label, onRemove }: { flag: string; label: string; onRemove: () => void }) {
  return (
    <span
      data-testid="flag-filter"
      data-flag={flag}
      className="inline-flex h-8 max-w-full items-center gap-1.5 rounded-full border border-foreground/70 bg-accent pr-1 pl-3 text-sm"
    >
      <span className="truncate font-medium">{label}</span>
      <button
        type="button"
        onClick={onRemove}
        aria-label={`Remove the filter: ${label}`}
        className="inline-flex size-6 items-center justify-center rounded-full text-muted-foreground hover:bg-background hover:text-foreground"
      >
        <XIcon className="size-3.5" aria-hidden />
      </button>
    </span>
  );
}

function FilterChip({
  kind,
  id,
  name,
  onRemove,
}: {
  kind: "Vendor" | "Brand" | "Category";
  id: number;
  /** undefined while loading, null when there is no such vendor / brand */
  name: string | null | undefined;
  onRemove: () => void;
}) {
  const label = name === undefined ? undefined : (name ?? `#${id} (unknown)`);
  return (
    <span
      data-testid="entity-filter"
      data-kind={kind.toLowerCase()}
      className="inline-flex h-8 max-w-full items-center gap-1.5 rounded-full border border-foreground/70 bg-accent pr-1 pl-3 text-sm"
    >
      <span className="text-muted-foreground">{kind}:</span>
      {label === undefined ? (
        <Skeleton className="h-3 w-24" />
      ) : (
        <span className="truncate font-medium" data-testid="entity-filter-name">
          {label}
        </span>
      )}
      <button
        type="button"
        onClick={onRemove}
        aria-label={`Remove the ${kind.toLowerCase()} filter`}
        className="inline-flex size-6 shrink-0 items-center justify-center rounded-full text-muted-foreground hover:bg-background hover:text-foreground focus-visible:ring-[3px] focus-visible:ring-ring/50 focus-visible:outline-none"
      >
        <XIcon className="size-3.5" aria-hidden />
      </button>
    </span>
  );
}

function StatusChips({
  counts,
  value,
  onChange,
}: {
  counts: ProductMetricsPage["status_counts"] | undefined;
  /** The statuses filtered by (none: all) */
  value: ProductStatus[];
  onChange: (status: ProductStatus | undefined) => void;
}) {
  const total = counts ? PRODUCT_STATUSES.reduce((sum, s) => sum + (counts[s] ?? 0), 0) : undefined;
  const chip = (
    status: ProductStatus | undefined,
    label: string,
    count: number | undefined,
    dot?: string,
  ) => {
    const active = status === undefined ? value.length === 0 : value.includes(status);
    return (
      <button
        key={status ?? "all"}
        type="button"
        aria-pressed={active}
        data-testid="status-chip"
        data-status={status ?? "all"}
        // One status at a time from here (several come from links): an active chip clears the filter.
        onClick={() => onChange(active ? undefined : status)}
        className={cn(
          "inline-flex h-8 shrink-0 items-center gap-2 rounded-full border px-3 text-sm transition-colors",
          "hover:bg-accent focus-visible:ring-[3px] focus-visible:ring-ring/50 focus-visible:outline-none",
          active ? "border-foreground/70 bg-accent font-medium text-foreground" : "text-muted-foreground",
          count === 0 && !active && "opacity-60",
        )}
      >
        {dot && <span aria-hidden className={cn("size-2 rounded-full", dot)} />}
        {label}
        <span className="min-w-4 text-xs tabular-nums text-muted-foreground" data-testid="status-chip-count">
          {count === undefined ? <Skeleton className="h-3 w-4" /> : formatNumber(count)}
        </span>
      </button>
    );
  };
  return (
    <div role="toolbar" aria-label="Filter by status" className="flex flex-wrap gap-2">
      {chip(undefined, "All", total)}
      {PRODUCT_STATUSES.map((s) => chip(s, STATUS_LABELS[s], counts?.[s], STATUS_STYLES[s].dot))}
    </div>
  );
}

function AbcFilter({
  value,
  onChange,
}: {
  value: AbcClass | undefined;
  onChange: (abc: AbcClass | undefined) => void;
}) {
  const options: (AbcClass | undefined)[] = [undefined, ...ABC_CLASSES];
  return (
    <fieldset
      aria-label="ABC class"
      className="m-0 inline-flex h-9 min-w-0 items-center rounded-md border bg-background p-0.5 shadow-xs"
    >
      <span className="px-2 text-xs font-medium text-muted-foreground">ABC</span>
      {options.map((abc) => {
        const active = value === abc;
        return (
          <button
            key={abc ?? "all"}
            type="button"
            aria-pressed={active}
            aria-label={abc ? `Class ${abc}` : "All classes"}
            data-testid="abc-filter"
            data-abc={abc ?? "all"}
            onClick={() => onChange(abc)}
            className={cn(
              "h-full min-w-8 rounded px-2 text-sm transition-colors hover:bg-accent",
              active
                ? "bg-primary font-medium text-primary-foreground hover:bg-primary/90"
                : "text-muted-foreground",
            )}
          >
            {abc ?? "All"}
          </button>
        );
      })}
    </fieldset>
  );
}

function ProductLink({
  row,
  search,
  className,
}: {
  row: ProductMetricsRow;
  search: ProductsSearch;
  className?: string;
}) {
  return (
    <Link
      to="/products/$pid"
      params={{ pid: String(row.pid) }}
      search={search}
      data-testid="product-link"
      className={cn(
        "font-medium hover:underline focus-visible:underline focus-visible:outline-none",
        className,
      )}
      title={row.title}
    >
      {row.title}
    </Link>
  );
}

function ProductsTable({
  rows,
  sort,
  onSort,
  search,
}: {
  rows: ProductMetricsRow[] | undefined;
  sort: { sort: ProductMetricSort; dir: "asc" | "desc" };
  onSort: (column: ProductMetricSort) => void;
  search: ProductsSearch;
}) {
  const navigate = useNavigate();
  return (
    <Table
      data-testid="products-table"
      className="text-[13px] [&_td:first-child]:pl-4 [&_th:first-child]:pl-4 [&_td:last-child]:pr-4 [&_th:last-child]:pr-4"
    >
      <TableHeader className="bg-muted">
        <TableRow className="hover:bg-transparent">
          <SortHead column="title" sort={sort} onSort={onSort} className={cn(STICKY, "bg-muted")}>
            Product
          </SortHead>
          {COLUMNS.map((col) =>
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
              <TableHead key={col.id} title={col.title} className={col.className}>
                {col.label}
              </TableHead>
            ),
          )}
        </TableRow>
      </TableHeader>
      <TableBody>
        {rows === undefined ? (
          <TableSkeletonRows rows={8} columns={COLUMNS.length + 1} />
        ) : (
          rows.map((row) => (
            <TableRow
              key={row.pid}
              data-testid="products-row"
              data-pid={row.pid}
              data-status={row.status ?? undefined}
              className="group cursor-pointer hover:bg-muted"
              onClick={(e) => {
                if ((e.target as HTMLElement).closest("a")) return;
                if (window.getSelection()?.toString()) return;
                void navigate({ to: "/products/$pid", params: { pid: String(row.pid) }, search });
              }}
            >
              <TableCell className={cn(STICKY, "py-2")}>
                <div className="max-w-52 truncate 2xl:max-w-72">
                  <ProductLink row={row} search={search} />
                </div>
                <div
                  className="max-w-52 truncate text-xs text-muted-foreground"
                  data-testid="products-row-sub"
                >
                  {row.sku ?? "No SKU"}
                  {row.vendor && <span className="2xl:hidden"> · {row.vendor}</span>}
                </div>
              </TableCell>
              {COLUMNS.map((col) => (
                <TableCell
                  key={col.id}
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

/** Under 768 px: one card per product with the figures that decide what to do. */
function ProductCards({ rows, search }: { rows: ProductMetricsRow[] | undefined; search: ProductsSearch }) {
  if (rows === undefined) return <CardsSkeleton second="h-3 w-1/3" />;
  return (
    <ul className="divide-y" data-testid="products-cards">
      {rows.map((row) => (
        <li key={row.pid} data-testid="products-row" data-pid={row.pid} data-status={row.status ?? undefined}>
          <div className="relative space-y-2.5 p-4 hover:bg-muted/50">
            <div className="flex items-start justify-between gap-3">
              <div className="min-w-0">
                <div className="line-clamp-2 leading-snug">
                  <ProductLink row={row} search={search} className="after:absolute after:inset-0" />
                </div>
                <div className="mt-0.5 truncate text-xs text-muted-foreground">
                  {row.sku ?? "No SKU"} · #{row.pid}
                  {row.vendor ? ` · ${row.vendor}` : ""}
                </div>
              </div>
              <div className="flex shrink-0 items-center gap-1.5">
                <AbcBadge abc={row.abc_class} />
                <ProductStatusBadge status={row.status} />
                <KindNote kind={row.kind} />
              </div>
            </div>
            <dl className="grid grid-cols-4 gap-2 text-xs">
              <Figure label="On hand" value={formatNumber(row.on_hand)} />
              <Figure
                label="Cover"
                value={row.days_of_cover == null ? DASH : `${formatNumber(Math.round(row.days_of_cover))} d`}
                reason={row.days_of_cover == null ? noCoverReason(row) : undefined}
                alert={urgent(row)}
              />
              <Figure
                label="Reorder"
                value={row.reorder_qty > 0 ? formatNumber(row.reorder_qty) : "0"}
                sub={row.reorder_value > 0 ? formatMoneyShort(row.reorder_value) : undefined}
              />
              <Figure
                label="Stock-out"
                value={formatDayCompact(row.stockout_date)}
                reason={
                  row.stockout_date
                    ? undefined
                    : row.days_of_cover == null
                      ? noCoverReason(row)
                      : "too far off"
                }
                alert={urgent(row)}
              />
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
}: {
  label: string;
  value: string;
  sub?: string;
  /** Why the value is blank, in small print beneath it. */
  reason?: string;
  alert?: boolean;
}) {
  return (
    <div className="min-w-0">
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

function EmptyState({ filtered, onClear }: { filtered: boolean; onClear: () => void }) {
  const { user } = useAuth();
  return (
    <div
      data-testid="products-empty"
      className="flex flex-col items-center justify-center gap-3 rounded-xl border border-dashed bg-muted/30 px-6 py-16 text-center"
    >
      <div className="flex size-12 items-center justify-center rounded-full border bg-background shadow-xs">
        {filtered ? (
          <PackageSearchIcon className="size-5 text-muted-foreground" aria-hidden />
        ) : (
          <DatabaseIcon className="size-5 text-muted-foreground" aria-hidden />
        )}
      </div>
      {filtered ? (
        <>
          <p className="text-sm font-medium">No products match these filters.</p>
          <Button variant="outline" size="sm" onClick={onClear}>
            Clear filters
          </Button>
        </>
      ) : (
        <>
          <p className="max-w-md text-sm text-muted-foreground">{NO_METRICS_TEXT}</p>
          {canAccess(user, "settings:data_management") && (
            <Button asChild variant="outline" size="sm">
              <Link to="/settings" search={{ tab: "data" }}>
                Go to Data Management
              </Link>
            </Button>
          )}
        </>
      )}
    </div>
  );
}
