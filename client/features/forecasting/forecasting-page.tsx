// The Forecasting page (docs/metrics.md "Forecasting page"): the grid of products (or categories,
// brands, vendors) over the last 12 weeks of sales and the next 13 calendar weeks, a row's chart,
// overrides (dialog with preview, list with remove) and the measured accuracy. View state in the URL.

import { Blank } from "@client/components/blank.tsx";
import { PageHeader } from "@client/components/page-header.tsx";
import { ConfirmDialog } from "@client/components/ui/alert-dialog.tsx";
import { Button } from "@client/components/ui/button.tsx";
import { Card } from "@client/components/ui/card.tsx";
import { canAccess } from "@client/features/auth/access.ts";
import { LoadError, PagingFooter } from "@client/features/config/parts.tsx";
import { SearchInput } from "@client/features/tables/parts.tsx";
import { errorMessage } from "@client/lib/errors.ts";
import { useAuth } from "@client/lib/session.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import { cn } from "@client/lib/utils.ts";
import {
  ACCURACY_GROUPS,
  type AccuracyGroup,
  type AccuracyRow,
  EXCEPTION_KINDS,
  EXCEPTION_LABELS,
  type ExceptionKind,
  FORECAST_LEVELS,
  FORECAST_SORTS,
  type ForecastGridRow,
  type ForecastLevel,
  type ForecastWeeks,
  XYZ_CLASSES,
} from "@shared/forecasting.ts";
import { ABC_CLASSES, PRODUCT_STATUSES, STATUS_LABELS } from "@shared/metrics.ts";
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import {
  type ColumnDef,
  type ExpandedState,
  getCoreRowModel,
  type RowSelectionState,
  useReactTable,
} from "@tanstack/react-table";
import { useVirtualizer } from "@tanstack/react-virtual";
import { ChevronDownIcon, ChevronRightIcon } from "lucide-react";
import { type ReactNode, useRef, useState } from "react";
import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { toast } from "sonner";
import { ForecastChart } from "./forecast-chart.tsx";
import { OverrideDialog, type OverrideTarget } from "./override-dialog.tsx";
import { type ForecastingSearch, GRID_PAGE_SIZE, gridInputOf } from "./search.ts";

export interface ForecastingPageProps {
  search: ForecastingSearch;
  onSearchChange: (next: ForecastingSearch, opts?: { replace?: boolean }) => void;
}

const LEVEL_LABELS: Record<ForecastLevel, string> = {
  product: "Products",
  category: "Categories",
  brand: "Brands",
  vendor: "Vendors",
};
const SORT_LABELS: Record<(typeof FORECAST_SORTS)[number], string> = {
  forecast_value: "Forecast value",
  forecast_units: "Forecast units",
  error: "Error (WAPE)",
  bias: "Bias",
  change: "Change vs last week",
  title: "Name",
};
const GROUP_LABELS: Record<AccuracyGroup, string> = {
  product: "Product",
  category: "Category",
  abc: "ABC class",
  method: "Method",
};

const units = (n: number) =>
  Math.abs(n) >= 100 ? Math.round(n).toLocaleString("en-US") : String(Math.round(n * 10) / 10);
const pct = (n: number | null | undefined) => (n == null ? null : `${(n * 100).toFixed(1)}%`);
const money = (n: number) => `$${Math.round(n).toLocaleString("en-US")}`;
const shortWeek = (iso: string) => {
  const d = new Date(`${iso}T00:00:00Z`);
  return `${d.getUTCDate()} ${d.toLocaleString("en-US", { month: "short", timeZone: "UTC" })}`;
};

const SELECT = "h-9 rounded-md border bg-background px-2 text-sm";

function FilterSelect<T extends string | number>({
  label,
  value,
  options,
  onChange,
}: {
  label: string;
  value: T | undefined;
  options: { value: T; label: string }[];
  onChange: (v: T | undefined) => void;
}) {
  return (
    <label className="flex flex-col gap-1 text-xs text-muted-foreground">
      {label}
      <select
        aria-label={label}
        className={SELECT}
        value={value === undefined ? "" : String(value)}
        onChange={(e) => {
          const raw = e.target.value;
          if (raw === "") return onChange(undefined);
          const found = options.find((o) => String(o.value) === raw);
          onChange(found?.value);
        }}
      >
        <option value="">All</option>
        {options.map((o) => (
          <option key={String(o.value)} value={String(o.value)}>
            {o.label}
          </option>
        ))}
      </select>
    </label>
  );
}

export function ForecastingPage({ search, onSearchChange }: ForecastingPageProps) {
  const tab = search.tab ?? "grid";
  const set = (patch: Partial<ForecastingSearch>, opts?: { replace?: boolean }) =>
    onSearchChange({ ...search, page: undefined, ...patch }, opts);
  const tabs: { id: NonNullable<ForecastingSearch["tab"]>; label: string }[] = [
    { id: "grid", label: "Forecast" },
    { id: "exceptions", label: "Exceptions" },
    { id: "overrides", label: "Overrides" },
    { id: "accuracy", label: "Accuracy" },
  ];
  return (
    <div className="space-y-5" data-testid="forecasting-page">
      <PageHeader
        title="Forecasting"
        description="Review the 13-week forecast that drives every reorder, override it, and see whether it was right."
      />
      <div role="tablist" className="flex flex-wrap gap-1 border-b">
        {tabs.map((t) => (
          <button
            key={t.id}
            type="button"
            role="tab"
            aria-selected={tab === t.id}
            onClick={() => set({ tab: t.id === "grid" ? undefined : t.id })}
            className={cn(
              "-mb-px border-b-2 px-3 py-2 text-sm",
              tab === t.id ? "border-foreground font-medium" : "border-transparent text-muted-foreground",
            )}
          >
            {t.label}
          </button>
        ))}
      </div>
      {tab === "grid" && <GridTab search={search} set={set} />}
      {tab === "exceptions" && (
        <ExceptionsTab
          kind={search.exception ?? "error_value"}
          onKind={(exception) => set({ exception: exception === "error_value" ? undefined : exception })}
          onOpen={(pid) => set({ tab: undefined, q: String(pid), selected: pid })}
        />
      )}
      {tab === "overrides" && <OverridesTab />}
      {tab === "accuracy" && (
        <AccuracyTab group={search.accuracy ?? "product"} onGroup={(accuracy) => set({ accuracy })} />
      )}
    </div>
  );
}

function GridTab({
  search,
  set,
}: {
  search: ForecastingSearch;
  set: (patch: Partial<ForecastingSearch>, opts?: { replace?: boolean }) => void;
}) {
  const trpc = useTRPC();
  const { user } = useAuth();
  const canEdit = canAccess(user, "update:forecasts");
  const input = gridInputOf(search);
  const query = useQuery(trpc.forecasting.rows.queryOptions(input, { placeholderData: keepPreviousData }));
  const options = useQuery(trpc.forecasting.options.queryOptions());
  const [target, setTarget] = useState<OverrideTarget | null>(null);
  const data = query.data;
  const level = input.level ?? "product";
  // TanStack Table keeps the page's row model, the expanded rows and the rows picked for a bulk
  // override (products only); paging, sorting and filtering are the server's. A new filter, sort or
  // page starts the selection afresh.
  const selectable = canEdit && level === "product";
  const [expanded, setExpanded] = useState<ExpandedState>({});
  const [rowSelection, setRowSelection] = useState<RowSelectionState>({});
  const inputKey = JSON.stringify(input);
  const [pickedFor, setPickedFor] = useState(inputKey);
  if (pickedFor !== inputKey) {
    setPickedFor(inputKey);
    setRowSelection({});
  }
  const table = useReactTable({
    data: data?.items ?? NO_ROWS,
    columns: GRID_COLUMNS,
    getCoreRowModel: getCoreRowModel(),
    getRowId: (r) => `${r.level}:${r.id}`,
    getRowCanExpand: () => true,
    enableRowSelection: selectable,
    manualPagination: true,
    manualSorting: true,
    manualFiltering: true,
    state: { expanded, rowSelection },
    onExpandedChange: setExpanded,
    onRowSelectionChange: setRowSelection,
  });
  const tableRows = table.getRowModel().rows;
  const picked = table.getSelectedRowModel().rows.map((r) => r.original.id);
  // Virtual rows: only the rows in view (and a few around) are in the DOM; each row and its expanded
  // lines form one measured <tbody>.
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: tableRows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: (i) => (tableRows[i]?.getIsExpanded() ? ROW_HEIGHT + 5 * SUBROW_HEIGHT : ROW_HEIGHT),
    overscan: 10,
  });
  const virtualRows = virtualizer.getVirtualItems();
  const padTop = virtualRows[0]?.start ?? 0;
  const padBottom = virtualRows.length ? virtualizer.getTotalSize() - virtualRows.at(-1)!.end : 0;
  const columnCount = 7 + (data?.weeks.history.length ?? 0) + (data?.weeks.forecast.length ?? 0);

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-end gap-3">
        <FilterSelect
          label="Rows"
          value={level}
          options={FORECAST_LEVELS.map((l) => ({ value: l, label: LEVEL_LABELS[l] }))}
          onChange={(l) => set({ level: l === "product" ? undefined : l, selected: undefined })}
        />
        <div className="flex flex-col gap-1 text-xs text-muted-foreground">
          Search
          <SearchInput
            value={search.q ?? ""}
            busy={query.isFetching}
            placeholder="Search by name, SKU or ID..."
            className="w-60"
            onSearch={(q) => set({ q: q || undefined }, { replace: true })}
          />
        </div>
        <FilterSelect
          label="Vendor"
          value={search.vendor}
          options={(options.data?.vendors ?? []).map((v) => ({ value: v.id, label: v.name }))}
          onChange={(vendor) => set({ vendor })}
        />
        <FilterSelect
          label="Brand"
          value={search.brand}
          options={(options.data?.brands ?? []).map((v) => ({ value: v.id, label: v.name }))}
          onChange={(brand) => set({ brand })}
        />
        <FilterSelect
          label="Category"
          value={search.category}
          options={(options.data?.categories ?? []).map((c) => ({
            value: c.id,
            label: `${"· ".repeat(Math.max(0, c.level - 1))}${c.name}`,
          }))}
          onChange={(category) => set({ category })}
        />
        <FilterSelect
          label="ABC"
          value={search.abc}
          options={ABC_CLASSES.map((a) => ({ value: a, label: a }))}
          onChange={(abc) => set({ abc })}
        />
        <FilterSelect
          label="XYZ"
          value={search.xyz}
          options={XYZ_CLASSES.map((x) => ({ value: x, label: x }))}
          onChange={(xyz) => set({ xyz })}
        />
        <FilterSelect
          label="Status"
          value={search.status}
          options={PRODUCT_STATUSES.map((s) => ({ value: s, label: STATUS_LABELS[s] }))}
          onChange={(status) => set({ status })}
        />
        <FilterSelect
          label="Method"
          value={search.method}
          options={[
            { value: "standard" as const, label: "Standard" },
            { value: "seasonal" as const, label: "Seasonal" },
          ]}
          onChange={(method) => set({ method })}
        />
        <FilterSelect
          label="Override"
          value={search.overridden}
          options={[
            { value: "yes" as const, label: "Has override" },
            { value: "no" as const, label: "No override" },
          ]}
          onChange={(overridden) => set({ overridden })}
        />
        <label className="flex h-9 items-center gap-2 text-sm">
          <input
            type="checkbox"
            checked={search.bigError === "yes"}
            onChange={(e) => set({ bigError: e.target.checked ? "yes" : undefined })}
          />
          Big error
        </label>
        <FilterSelect
          label="Sort"
          value={input.sort}
          options={FORECAST_SORTS.map((s) => ({ value: s, label: SORT_LABELS[s] }))}
          onChange={(sort) => set({ sort })}
        />
        <Button
          variant="outline"
          size="sm"
          className="h-9"
          onClick={() => set({ dir: input.dir === "asc" ? undefined : "asc" })}
          aria-label="Sort direction"
        >
          {input.dir === "asc" ? "Ascending" : "Descending"}
        </Button>
      </div>
      <p className="text-xs text-muted-foreground">
        Cells show the final forecast; an overridden week is highlighted amber, a week with a saved promotion
        (its uplift added, the Promotion line of the expanded row) violet. As of {data?.weeks.as_of ?? "…"}.
        {selectable && " Tick products to override many at once."}
      </p>
      {selectable && picked.length > 0 && data && (
        <div
          className="flex flex-wrap items-center gap-3 rounded-md border bg-muted/40 px-3 py-2 text-sm"
          data-testid="bulk-bar"
        >
          <span>
            {picked.length} product{picked.length === 1 ? "" : "s"} selected
          </span>
          <Button
            size="sm"
            onClick={() =>
              setTarget({
                level: "products",
                id: 0,
                pids: picked,
                title: `${picked.length} selected product${picked.length === 1 ? "" : "s"}`,
                weeks: data.weeks.forecast,
                lastFour: [],
                system: [],
              })
            }
          >
            Override selected
          </Button>
          <Button size="sm" variant="outline" onClick={() => table.resetRowSelection()}>
            Clear selection
          </Button>
        </div>
      )}

      {query.error && !data ? (
        <LoadError message="Could not load the forecast." onRetry={() => void query.refetch()} />
      ) : data && data.total === 0 ? (
        <Card className="p-8 text-center text-sm text-muted-foreground" data-testid="forecast-empty">
          {data.weeks &&
          (search.q ||
            search.vendor ||
            search.brand ||
            search.category ||
            search.abc ||
            search.xyz ||
            search.status ||
            search.method ||
            search.overridden ||
            search.bigError)
            ? "No rows match these filters."
            : "No forecast yet. Run a full update or reset to calculate one."}
        </Card>
      ) : (
        <Card className={cn("gap-0 overflow-hidden py-0", query.isPlaceholderData && "opacity-60")}>
          <div className="max-h-[70vh] overflow-auto" ref={scrollRef}>
            <table className="w-full border-collapse text-sm" data-testid="forecast-grid">
              <thead className="sticky top-0 z-10 bg-background">
                <GridHead
                  weeks={data?.weeks}
                  level={level}
                  pick={
                    selectable
                      ? {
                          all: table.getIsAllRowsSelected(),
                          onAll: () => table.toggleAllRowsSelected(),
                        }
                      : undefined
                  }
                />
              </thead>
              {padTop > 0 && (
                <tbody aria-hidden="true">
                  <tr>
                    <td colSpan={columnCount} style={{ height: padTop, padding: 0 }} />
                  </tr>
                </tbody>
              )}
              {data &&
                virtualRows.map((v) => {
                  const tableRow = tableRows[v.index]!;
                  const row = tableRow.original;
                  const open = tableRow.getIsExpanded();
                  return (
                    <tbody key={tableRow.id} data-index={v.index} ref={virtualizer.measureElement}>
                      <GridRow
                        row={row}
                        weeks={data.weeks}
                        open={open}
                        selected={level === "product" && search.selected === row.id}
                        canEdit={canEdit}
                        picked={selectable ? tableRow.getIsSelected() : undefined}
                        onPick={() => tableRow.toggleSelected()}
                        onToggle={() => tableRow.toggleExpanded()}
                        onSelect={() => set({ selected: row.id, page: search.page }, { replace: true })}
                        onOverride={() =>
                          setTarget({
                            level: row.level,
                            id: row.id,
                            title: row.title,
                            weeks: data.weeks.forecast,
                            lastFour: row.history.slice(-4),
                            system: row.system,
                          })
                        }
                      />
                      {open && <ExpandedRows row={row} weeks={data.weeks} />}
                    </tbody>
                  );
                })}
              {padBottom > 0 && (
                <tbody aria-hidden="true">
                  <tr>
                    <td colSpan={columnCount} style={{ height: padBottom, padding: 0 }} />
                  </tr>
                </tbody>
              )}
            </table>
          </div>
          {data && (
            <div className="pb-4">
              <PagingFooter
                page={search.page ?? 1}
                pageSize={GRID_PAGE_SIZE}
                total={data.total}
                noun={level === "product" ? "products" : LEVEL_LABELS[level].toLowerCase()}
                onPageChange={(page) => set({ page: page > 1 ? page : undefined })}
              />
            </div>
          )}
        </Card>
      )}
      {level === "product" && search.selected && <ForecastChart pid={search.selected} />}
      {target && (
        <OverrideDialog
          target={target}
          onClose={() => setTarget(null)}
          onSaved={() => {
            if (target.level === "products") table.resetRowSelection();
          }}
        />
      )}
    </div>
  );
}

const NUM = "px-2 py-1.5 text-right tabular-nums whitespace-nowrap";
/** Estimated heights (px) of a grid row and of an expanded row's lines, for the virtualizer. */
const ROW_HEIGHT = 45;
const SUBROW_HEIGHT = 27;
const NO_ROWS: ForecastGridRow[] = [];

/**
 * The grid's columns for TanStack Table's row model (the cells are drawn by GridRow, which needs
 * the week keys; the header by GridHead): the row, method, 13-week units and value, error,
 * reorder quantity, the history weeks, the forecast weeks, actions.
 */
const GRID_COLUMNS: ColumnDef<ForecastGridRow>[] = [
  { id: "title", accessorKey: "title", header: "Row" },
  { id: "method", accessorKey: "method_label", header: "Method" },
  { id: "units", accessorKey: "forecast_units", header: "13 weeks" },
  { id: "value", accessorKey: "forecast_value", header: "Value" },
  { id: "error", accessorKey: "wape", header: "Error" },
  { id: "reorder", accessorKey: "reorder_qty", header: "Reorder" },
  { id: "history", accessorKey: "history", header: "Sold" },
  { id: "final", accessorKey: "final", header: "Forecast" },
  { id: "actions", header: "" },
];

function GridHead({
  weeks,
  level,
  pick,
}: {
  weeks: ForecastWeeks | undefined;
  level: ForecastLevel;
  pick?: { all: boolean; onAll: () => void };
}) {
  return (
    <tr className="border-b text-xs text-muted-foreground">
      <th className="sticky left-0 z-20 min-w-56 bg-background px-2 py-2 text-left">
        {pick && (
          <input
            type="checkbox"
            className="mr-2 align-middle"
            aria-label="Select every product on this page"
            checked={pick.all}
            onChange={pick.onAll}
          />
        )}
        {LEVEL_LABELS[level]}
      </th>
      <th className="px-2 text-left">Method</th>
      <th className={NUM} title="Final forecast of the 13 weeks">
        13 weeks
      </th>
      <th className={NUM} title="The 13 weeks at cost">
        Value
      </th>
      <th
        className={NUM}
        title="Backtest error of the method that ran: WAPE, and MASE (its error ÷ the naive forecast's)"
      >
        Error
      </th>
      <th className={NUM} title="Suggested reorder quantity">
        Reorder
      </th>
      {weeks?.history.map((w) => (
        <th key={w} className={cn(NUM, "bg-muted/40 font-normal")} title={`Sold in the week of ${w}`}>
          {shortWeek(w)}
        </th>
      ))}
      {weeks?.forecast.map((w) => (
        <th key={w} className={cn(NUM, "font-medium")} title={`Forecast for the week of ${w}`}>
          {shortWeek(w)}
        </th>
      ))}
      <th className="px-2" />
    </tr>
  );
}

function GridRow({
  row,
  weeks,
  open,
  selected,
  canEdit,
  picked,
  onPick,
  onToggle,
  onSelect,
  onOverride,
}: {
  row: ForecastGridRow;
  weeks: ForecastWeeks;
  open: boolean;
  selected: boolean;
  canEdit: boolean;
  /** Ticked for a bulk override (undefined: the row cannot be picked) */
  picked?: boolean;
  onPick: () => void;
  onToggle: () => void;
  onSelect: () => void;
  onOverride: () => void;
}) {
  return (
    <tr
      className={cn("border-b hover:bg-muted/30", selected && "bg-accent")}
      data-testid="forecast-row"
      data-id={row.id}
      data-level={row.level}
    >
      <td className="sticky left-0 z-[1] bg-background px-2 py-1.5">
        <div className="flex items-start gap-1">
          {picked !== undefined && (
            <input
              type="checkbox"
              className="mt-1 mr-1"
              aria-label={`Select ${row.title}`}
              checked={picked}
              onChange={onPick}
            />
          )}
          <button
            type="button"
            onClick={onToggle}
            aria-label={open ? `Collapse ${row.title}` : `Expand ${row.title}`}
            className="mt-0.5 text-muted-foreground"
          >
            {open ? <ChevronDownIcon className="size-4" /> : <ChevronRightIcon className="size-4" />}
          </button>
          <div className="min-w-0">
            {row.level === "product" ? (
              <button type="button" className="text-left font-medium hover:underline" onClick={onSelect}>
                {row.title}
              </button>
            ) : (
              <span className="font-medium">{row.title}</span>
            )}
            <div className="text-xs text-muted-foreground">
              {row.level === "product"
                ? [row.sku, row.vendor].filter(Boolean).join(" · ")
                : `${row.products} product${row.products === 1 ? "" : "s"}`}
            </div>
          </div>
        </div>
      </td>
      <td className="px-2 text-xs whitespace-nowrap">
        {row.method_label ?? <Blank reason={row.level === "product" ? "no forecast" : "mixed"} />}
      </td>
      <td className={NUM} data-col="units">
        {units(row.forecast_units)}
      </td>
      <td className={NUM}>{money(row.forecast_value)}</td>
      <td className={NUM} data-col="error">
        {row.wape == null ? (
          <Blank
            reason={
              row.backtest_weeks === 0
                ? "seasonal ran at none of the 8 backtest weeks (fewer than 53 weeks before each)"
                : row.backtest_weeks != null
                  ? "nothing sold in the backtest weeks"
                  : "no backtest"
            }
          />
        ) : (
          <span
            title={
              row.mase == null ? "MASE blank: the naive forecast was exact" : `MASE ${row.mase.toFixed(2)}`
            }
          >
            {pct(row.wape)}
            {row.mase != null && (
              <span
                className={cn(
                  "ml-1 text-xs",
                  row.mase > 1 ? "font-medium text-red-700" : "text-muted-foreground",
                )}
                data-testid={row.mase > 1 ? "worse-than-naive" : undefined}
              >
                {row.mase > 1
                  ? `MASE ${row.mase.toFixed(2)} worse than naive`
                  : `MASE ${row.mase.toFixed(2)}`}
              </span>
            )}
            {/* What the Bias sort orders by: positive forecasts too much, negative too little. */}
            {row.bias != null && (
              <span className="block text-xs text-muted-foreground" data-testid="bias">
                bias {row.bias > 0 ? "+" : row.bias < 0 ? "−" : ""}
                {pct(Math.abs(row.bias))} {row.bias > 0 ? "over" : row.bias < 0 ? "under" : ""}
              </span>
            )}
          </span>
        )}
      </td>
      <td className={NUM} data-col="reorder">
        {row.reorder_qty == null ? <Blank reason="per product" /> : row.reorder_qty.toLocaleString("en-US")}
      </td>
      {row.history.map((h, i) => (
        <td key={weeks.history[i]} className={cn(NUM, "bg-muted/40 text-muted-foreground")}>
          {units(h)}
        </td>
      ))}
      {row.final.map((f, i) => (
        <td
          key={weeks.forecast[i]}
          data-col={`week-${i}`}
          data-overridden={row.override[i] != null ? "true" : undefined}
          data-promotion={row.promotion[i] != null ? "true" : undefined}
          className={cn(
            NUM,
            row.promotion[i] != null && "bg-violet-100 dark:bg-violet-900/40",
            row.override[i] != null && "bg-amber-100 font-medium dark:bg-amber-900/40",
          )}
          title={`System ${units(row.system[i] ?? 0)}${row.override[i] != null ? `, override ${units(row.override[i]!)}` : ""}${row.promotion[i] != null ? `, promotion ${row.promotion[i]! >= 0 ? "+" : ""}${units(row.promotion[i]!)}` : ""}`}
        >
          {units(f)}
        </td>
      ))}
      <td className="px-2">
        {canEdit && (
          <Button size="sm" variant="outline" onClick={onOverride} aria-label={`Override ${row.title}`}>
            Override
          </Button>
        )}
      </td>
    </tr>
  );
}

/** System, override and final lines of a row (and last year's same weeks for a product). */
function ExpandedRows({ row, weeks }: { row: ForecastGridRow; weeks: ForecastWeeks }) {
  const trpc = useTRPC();
  const detail = useQuery({
    ...trpc.forecasting.product.queryOptions({ pid: row.id }),
    enabled: row.level === "product",
  });
  const lines: { label: string; values: (number | null)[]; why?: string }[] = [
    { label: "System", values: row.system },
    { label: "Override", values: row.override, why: "none" },
    { label: "Promotion", values: row.promotion, why: "none" },
    { label: "Final", values: row.final },
  ];
  if (row.level === "product")
    lines.push({
      label: "Last year",
      values: detail.data?.forecast.map((f) => f.last_year) ?? row.final.map(() => null),
      why: detail.data ? "no sales" : "loading",
    });
  return (
    <>
      {lines.map((l) => (
        <tr
          key={l.label}
          className="border-b bg-muted/20 text-xs"
          data-testid="forecast-subrow"
          data-line={l.label}
        >
          <td className="sticky left-0 bg-muted/20 px-2 py-1 pl-8 text-muted-foreground">{l.label}</td>
          <td colSpan={5 + row.history.length} />
          {l.values.map((v, i) => (
            <td key={weeks.forecast[i]} className={NUM}>
              {v == null ? (
                <span className="text-muted-foreground">{l.why === "none" ? "·" : "—"}</span>
              ) : (
                units(v)
              )}
            </td>
          ))}
          <td />
        </tr>
      ))}
    </>
  );
}

function OverridesTab() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { user } = useAuth();
  const canEdit = canAccess(user, "update:forecasts");
  const [page, setPage] = useState(1);
  const list = useQuery(trpc.forecasting.overrides.queryOptions({ page, pageSize: 50 }));
  // Removing changes the forecast (and the orders) of every product the override covers: asked first.
  const [removing, setRemoving] = useState<{ id: number; name: string; products: number } | null>(null);
  const remove = useMutation(
    trpc.forecasting.deleteOverride.mutationOptions({
      onSuccess: (r) => {
        toast.success(
          `Override removed from ${r.products.length} product${r.products.length === 1 ? "" : "s"}`,
        );
        return queryClient.invalidateQueries(trpc.forecasting.pathFilter());
      },
      onError: (e) => toast.error(errorMessage(e, "Could not remove the override")),
    }),
  );
  if (list.error)
    return <LoadError message="Could not load the overrides." onRetry={() => void list.refetch()} />;
  const items = list.data?.items ?? [];
  return (
    <Card className="gap-0 overflow-hidden py-0">
      <ConfirmDialog
        open={removing !== null}
        onOpenChange={(open) => !open && setRemoving(null)}
        title={`Remove the override of ${removing?.name ?? ""}?`}
        description={`The forecast of its ${removing?.products ?? 0} product${removing?.products === 1 ? "" : "s"} goes back to the system's, and so do their reorder figures.`}
        confirmLabel="Remove override"
        variant="destructive"
        onConfirm={() => {
          if (removing) remove.mutate({ id: removing.id });
          setRemoving(null);
        }}
      />
      <div className="overflow-x-auto">
        <table className="w-full text-sm" data-testid="override-list">
          <thead className="border-b text-xs text-muted-foreground">
            <tr>
              <th className="px-3 py-2 text-left">Scope</th>
              <th className="px-3 text-left">Weeks</th>
              <th className="px-3 text-left">Reason</th>
              <th className="px-3 text-left">Expires</th>
              <th className="px-3 text-left">By</th>
              <th className="px-3 text-left">When</th>
              <th className="px-3" />
            </tr>
          </thead>
          <tbody>
            {items.length === 0 && (
              <tr>
                <td colSpan={7} className="px-3 py-8 text-center text-muted-foreground">
                  {list.isLoading ? "Loading..." : "No overrides. Override a row of the forecast to add one."}
                </td>
              </tr>
            )}
            {items.map((g) => (
              <tr key={g.id} className="border-b" data-testid="override-row" data-id={g.id}>
                <td className="px-3 py-2">
                  <span className="font-medium">{g.scope_name}</span>
                  <div className="text-xs text-muted-foreground">
                    {g.scope_kind} · {g.products} product{g.products === 1 ? "" : "s"}
                  </div>
                </td>
                <td className="px-3 text-xs">
                  {g.weeks
                    .map(
                      (w) =>
                        `${shortWeek(w.week_start)}: ${
                          "units" in w
                            ? `${w.units} units`
                            : "pct" in w
                              ? `${w.pct > 0 ? "+" : ""}${w.pct}%`
                              : "held at last 4 weeks' average"
                        }`,
                    )
                    .join(", ")}
                </td>
                <td className="px-3">{g.reason}</td>
                <td className="px-3 text-xs">{g.expires_on ?? <Blank reason="until removed" />}</td>
                <td className="px-3 text-xs">{g.created_by}</td>
                <td className="px-3 text-xs whitespace-nowrap">{new Date(g.created_at).toLocaleString()}</td>
                <td className="px-3 text-right">
                  {canEdit && (
                    <Button
                      size="sm"
                      variant="outline"
                      disabled={remove.isPending}
                      onClick={() => setRemoving({ id: g.id, name: g.scope_name, products: g.products })}
                      aria-label={`Remove override ${g.id}`}
                    >
                      Remove
                    </Button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {list.data && list.data.total > 50 && (
        <div className="pb-4">
          <PagingFooter
            page={page}
            pageSize={50}
            total={list.data.total}
            noun="overrides"
            onPageChange={setPage}
          />
        </div>
      )}
    </Card>
  );
}

function Figure({ label, value, why }: { label: string; value: string | null; why: string }) {
  return (
    <div className="rounded-lg border p-3">
      <div className="text-xs text-muted-foreground">{label}</div>
      <div className="text-lg font-semibold tabular-nums">{value ?? <Blank reason={why} />}</div>
    </div>
  );
}

function AccuracyTab({ group, onGroup }: { group: AccuracyGroup; onGroup: (g: AccuracyGroup) => void }) {
  const trpc = useTRPC();
  const acc = useQuery(trpc.forecasting.accuracy.queryOptions({ group, pageSize: 50 }));
  if (acc.error)
    return <LoadError message="Could not load the accuracy." onRetry={() => void acc.refetch()} />;
  const o = acc.data?.overall ?? null;
  const none = "no completed week measured yet";
  const cells = (r: AccuracyRow): Record<string, ReactNode> => {
    const mase =
      r.mase == null ? (
        <Blank reason="naive exact" />
      ) : (
        <span className={cn(r.mase > 1 && "font-medium text-red-700")}>
          {r.mase.toFixed(2)}
          {r.mase > 1 ? " worse than naive" : ""}
        </span>
      );
    const fva =
      r.fva == null ? (
        <Blank reason="no overridden weeks" />
      ) : (
        `${r.fva > 0 ? "+" : ""}${(r.fva * 100).toFixed(1)} pts`
      );
    return {
      wape: pct(r.wape) ?? <Blank reason="no sales" />,
      bias: pct(r.bias) ?? <Blank reason="no sales" />,
      mase,
      final: pct(r.final_wape) ?? <Blank reason="no sales" />,
      fva,
    };
  };
  return (
    <div className="space-y-4" data-testid="accuracy-tab">
      <p className="text-sm text-muted-foreground">
        Real error of the forecast each product had at its lead time (from the weekly snapshots), over the
        completed weeks of the last 26. FVA: how much the overrides lowered the error of the weeks they
        changed.
      </p>
      <div className="grid grid-cols-2 gap-3 sm:grid-cols-5">
        <Figure label="WAPE" value={pct(o?.wape)} why={none} />
        <Figure label="Bias" value={pct(o?.bias)} why={none} />
        <Figure label="MASE" value={o?.mase == null ? null : o.mase.toFixed(2)} why={none} />
        <Figure label="Final WAPE" value={pct(o?.final_wape)} why={none} />
        <Figure
          label="FVA"
          value={o?.fva == null ? null : `${o.fva > 0 ? "+" : ""}${(o.fva * 100).toFixed(1)} pts`}
          why={o ? "no overridden weeks" : none}
        />
      </div>
      {acc.data && acc.data.trend.length > 0 ? (
        <Card className="p-4">
          <div className="mb-2 text-sm font-medium">Error by week</div>
          <div className="h-56">
            <ResponsiveContainer width="100%" height="100%">
              <LineChart
                data={acc.data.trend.map((t) => ({
                  ...t,
                  wape: t.wape == null ? null : t.wape * 100,
                  final_wape: t.final_wape == null ? null : t.final_wape * 100,
                }))}
              >
                <CartesianGrid stroke="#e5e7eb" />
                <XAxis dataKey="week_start" tickFormatter={shortWeek} fontSize={11} />
                <YAxis unit="%" fontSize={11} />
                <Tooltip />
                <Legend />
                <Line dataKey="wape" name="System WAPE" stroke="#2563eb" dot={false} />
                <Line dataKey="final_wape" name="Final WAPE" stroke="#ea580c" dot={false} />
              </LineChart>
            </ResponsiveContainer>
          </div>
        </Card>
      ) : (
        <Card className="p-6 text-sm text-muted-foreground">
          No trend yet: a week is measured once it has passed and a snapshot was taken its lead time before.
        </Card>
      )}
      <div className="flex items-end gap-3">
        <FilterSelect
          label="Group by"
          value={group}
          options={ACCURACY_GROUPS.map((g) => ({ value: g, label: GROUP_LABELS[g] }))}
          onChange={(g) => onGroup(g ?? "product")}
        />
      </div>
      <Card className="gap-0 overflow-x-auto py-0">
        <table className="w-full text-sm" data-testid="accuracy-table">
          <thead className="border-b text-xs text-muted-foreground">
            <tr>
              <th className="px-3 py-2 text-left">{GROUP_LABELS[group]}</th>
              <th className={NUM}>Weeks</th>
              <th className={NUM}>Sold</th>
              <th className={NUM}>WAPE</th>
              <th className={NUM}>Bias</th>
              <th className={NUM}>MASE</th>
              <th className={NUM}>Final WAPE</th>
              <th className={NUM}>FVA</th>
            </tr>
          </thead>
          <tbody>
            {(acc.data?.items ?? []).map((r) => (
              <tr key={r.key} className="border-b">
                <td className="px-3 py-1.5">{r.label}</td>
                <td className={NUM}>{r.weeks}</td>
                <td className={NUM}>{units(r.actual)}</td>
                {Object.entries(cells(r)).map(([k, c]) => (
                  <td key={k} className={NUM}>
                    {c}
                  </td>
                ))}
              </tr>
            ))}
            {acc.data?.items.length === 0 && (
              <tr>
                <td colSpan={8} className="px-3 py-6 text-center text-muted-foreground">
                  Nothing measured yet: {none}.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </Card>
    </div>
  );
}

function ExceptionsTab({
  kind,
  onKind,
  onOpen,
}: {
  kind: ExceptionKind;
  onKind: (k: ExceptionKind) => void;
  onOpen: (pid: number) => void;
}) {
  const trpc = useTRPC();
  const [page, setPage] = useState(1);
  const list = useQuery(
    trpc.forecasting.exceptions.queryOptions(
      { kind, page, pageSize: 50 },
      { placeholderData: keepPreviousData },
    ),
  );
  if (list.error)
    return <LoadError message="Could not load the exceptions." onRetry={() => void list.refetch()} />;
  const data = list.data;
  return (
    <div className="space-y-4" data-testid="exceptions-tab">
      <p className="text-sm text-muted-foreground">
        The products whose forecast most needs a look, from the last calculation. Open one to see its chart
        and override it.
      </p>
      <fieldset className="flex flex-wrap gap-2" aria-label="Exception kind">
        {EXCEPTION_KINDS.map((k) => (
          <Button
            key={k}
            size="sm"
            variant={k === kind ? "default" : "outline"}
            aria-pressed={k === kind}
            data-testid={`exception-kind-${k}`}
            onClick={() => {
              setPage(1);
              onKind(k);
            }}
          >
            {EXCEPTION_LABELS[k]}
            <span className="ml-1 tabular-nums opacity-80">{data ? data.counts[k] : "…"}</span>
          </Button>
        ))}
      </fieldset>
      <Card className={cn("gap-0 overflow-hidden py-0", list.isPlaceholderData && "opacity-60")}>
        <div className="overflow-x-auto">
          <table className="w-full text-sm" data-testid="exceptions-table">
            <thead className="border-b text-xs text-muted-foreground">
              <tr>
                <th className="px-3 py-2 text-left">Product</th>
                <th className="px-3 text-left">Why</th>
                <th className={NUM}>13 weeks</th>
                <th className={NUM}>Value</th>
                <th className={NUM}>WAPE</th>
                <th className={NUM}>MASE</th>
                <th className={NUM}>Bias</th>
                <th className={NUM}>Change</th>
              </tr>
            </thead>
            <tbody>
              {data?.items.length === 0 && (
                <tr>
                  <td colSpan={8} className="px-3 py-8 text-center text-muted-foreground">
                    No product is listed here.
                  </td>
                </tr>
              )}
              {(data?.items ?? []).map((r) => (
                <tr key={r.pid} className="border-b" data-testid="exception-row" data-id={r.pid}>
                  <td className="px-3 py-1.5">
                    <button
                      type="button"
                      className="text-left font-medium hover:underline"
                      onClick={() => onOpen(r.pid)}
                    >
                      {r.title}
                    </button>
                    <div className="text-xs text-muted-foreground">
                      {[r.sku, r.vendor, r.method_label].filter(Boolean).join(" · ")}
                    </div>
                  </td>
                  <td className="px-3 text-xs">{r.reason}</td>
                  <td className={NUM}>{units(r.forecast_units)}</td>
                  <td className={NUM}>{money(r.forecast_value)}</td>
                  <td className={NUM}>{pct(r.wape) ?? <Blank reason="no backtest" />}</td>
                  <td className={NUM}>
                    {r.mase == null ? (
                      <Blank reason={r.wape == null ? "no backtest" : "naive exact"} />
                    ) : (
                      <span className={cn(r.mase > 1 && "font-medium text-red-700")}>
                        {r.mase.toFixed(2)}
                        {r.mase > 1 ? " worse than naive" : ""}
                      </span>
                    )}
                  </td>
                  <td className={NUM}>{pct(r.bias) ?? <Blank reason="no backtest" />}</td>
                  <td className={NUM}>{pct(r.change) ?? <Blank reason="no snapshot last week" />}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {data && data.total > 50 && (
          <div className="pb-4">
            <PagingFooter
              page={page}
              pageSize={50}
              total={data.total}
              noun="products"
              onPageChange={setPage}
            />
          </div>
        )}
      </Card>
    </div>
  );
}
