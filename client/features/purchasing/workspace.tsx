// The replenishment workspace: every product the plan says to order now, by vendor, with why, and
// the drafts made from a selection of vendors and lines (docs/metrics.md §13). The vendor panel
// edits the vendor's terms (react-hook-form + zod over the same schema the server takes).
import { Badge } from "@client/components/ui/badge.tsx";
import { Button } from "@client/components/ui/button.tsx";
import { Card } from "@client/components/ui/card.tsx";
import { Checkbox } from "@client/components/ui/checkbox.tsx";
import { Combobox } from "@client/components/ui/combobox.tsx";
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
} from "@client/components/ui/dialog.tsx";
import { Input } from "@client/components/ui/input.tsx";
import { Label } from "@client/components/ui/label.tsx";
import {
  Select,
  SelectContent,
  SelectItem,
  SelectTrigger,
  SelectValue,
} from "@client/components/ui/select.tsx";
import { Switch } from "@client/components/ui/switch.tsx";
import {
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableHeader,
  TableRow,
} from "@client/components/ui/table.tsx";
import { TableEmptyRow, TableSkeletonRows } from "@client/components/ui/table-helpers.tsx";
import { formatMoneyCompact } from "@client/features/aggregates/top-chart.tsx";
import { canAccess } from "@client/features/auth/access.ts";
import { LoadError, PagingFooter } from "@client/features/config/parts.tsx";
import {
  DASH,
  formatDay,
  formatMoney,
  formatNumber,
  formatPercent,
} from "@client/features/products/format.ts";
import { AbcBadge, ProductStatusBadge } from "@client/features/products/status.tsx";
import { SearchInput } from "@client/features/tables/parts.tsx";
import { errorMessage } from "@client/lib/errors.ts";
import { useAuth } from "@client/lib/session.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import { cn } from "@client/lib/utils.ts";
import { zodResolver } from "@hookform/resolvers/zod";
import { ABC_CLASSES, PRODUCT_STATUSES, type ProductStatus, STATUS_LABELS } from "@shared/metrics.ts";
import {
  type FacetOption,
  type FromSuggestionsInput,
  MAX_LINE_QTY,
  type ReplenishmentLine,
  roundingText,
  roundToPack,
  type VendorSummary,
  vendorTermsInput,
} from "@shared/purchasing.ts";
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { type ColumnDef, flexRender, getCoreRowModel, useReactTable } from "@tanstack/react-table";
import { useVirtualizer } from "@tanstack/react-virtual";
import { useMemo, useRef, useState } from "react";
import { useForm } from "react-hook-form";
import { Bar, BarChart, CartesianGrid, Tooltip, XAxis, YAxis } from "recharts";
import { toast } from "sonner";
import type { z } from "zod";
import { type PurchaseOrdersSearch, WORKSPACE_PAGE_SIZE, workspaceInputOf } from "./search.ts";

const ALL = "__all";
/** The largest order quantity a line takes (the server's limit too). */
const pct = (v: number | null) => (v === null ? DASH : formatPercent(v, 0));
const days = (v: number | null) => (v === null ? DASH : `${formatNumber(Math.round(v))} d`);

function toggle<T>(s: Set<T>, v: T): Set<T> {
  const next = new Set(s);
  if (next.has(v)) next.delete(v);
  else next.add(v);
  return next;
}

function Reach({ label, value }: { label: string; value: boolean | null }) {
  if (value === null) return null;
  return (
    <Badge
      variant="outline"
      className={cn(
        "border-transparent",
        value
          ? "bg-green-100 text-green-800 dark:bg-green-900 dark:text-green-100"
          : "bg-amber-100 text-amber-900 dark:bg-amber-900 dark:text-amber-100",
      )}
    >
      {value ? "Reaches" : "Below"} {label}
    </Badge>
  );
}

export function ReplenishmentWorkspace({
  search,
  onSearchChange,
}: {
  search: PurchaseOrdersSearch;
  onSearchChange: (next: PurchaseOrdersSearch) => void;
}) {
  const trpc = useTRPC();
  const { user } = useAuth();
  const canCreate = canAccess(user, "create:purchase_orders");
  const input = workspaceInputOf(search);
  const data = useQuery({
    ...trpc.purchasing.replenishment.queryOptions(input),
    placeholderData: keepPreviousData,
  });
  // The brand and category choices: those of the products to order under the other filters.
  const facets = useQuery({
    ...trpc.purchasing.replenishmentFacets.queryOptions({
      ...input,
      brand_id: undefined,
      category_id: undefined,
    }),
    placeholderData: keepPreviousData,
  });
  const facetOptions = (list: FacetOption[] | undefined, selected: number | undefined) => {
    const options = (list ?? []).map((f) => ({ value: String(f.id), label: `${f.label} (${f.lines})` }));
    // A brand or category from the URL with nothing to order still reads as itself.
    if (selected && !options.some((o) => o.value === String(selected)))
      options.unshift({ value: String(selected), label: `#${selected} (0)` });
    return options;
  };
  const brandOptions = facetOptions(facets.data?.brands, search.w_brand);
  const categoryOptions = facetOptions(facets.data?.categories, search.w_category);
  const set = (patch: Partial<PurchaseOrdersSearch>) =>
    onSearchChange({ ...search, w_page: undefined, ...patch });

  const [vendors, setVendors] = useState<Set<number>>(new Set());
  const [lines, setLines] = useState<Set<number>>(new Set());
  // Lines of a selected vendor unticked: left out of its drafts.
  const [excluded, setExcluded] = useState<Set<number>>(new Set());
  const [qty, setQty] = useState<Map<number, number>>(new Map());
  // What was typed into a quantity that is not one (0, -5, 1.5, too large): kept and named, not dropped.
  const [badQty, setBadQty] = useState<Map<number, string>>(new Map());
  const [preview, setPreview] = useState<FromSuggestionsInput | null>(null);
  const [termsFor, setTermsFor] = useState<VendorSummary | null>(null);

  const columns = useMemo<ColumnDef<ReplenishmentLine>[]>(
    () => [
      {
        id: "select",
        header: () => <span className="sr-only">Select</span>,
        cell: ({ row }) => {
          const l = row.original;
          const covered = Boolean(l.covered_by);
          return (
            <Checkbox
              aria-label={`Select ${l.title}`}
              disabled={covered || !canCreate}
              checked={!covered && !excluded.has(l.pid) && (lines.has(l.pid) || vendors.has(l.vendor_id))}
              onCheckedChange={() => {
                if (vendors.has(l.vendor_id)) {
                  // A selected vendor's line: unticking leaves it out, ticking takes it back.
                  setExcluded((s) => toggle(s, l.pid));
                  setLines((s) => {
                    const next = new Set(s);
                    next.delete(l.pid);
                    return next;
                  });
                } else {
                  setLines((s) => toggle(s, l.pid));
                  setExcluded((s) => {
                    const next = new Set(s);
                    next.delete(l.pid);
                    return next;
                  });
                }
              }}
            />
          );
        },
      },
      {
        id: "product",
        header: "Product",
        cell: ({ row }) => (
          <div className="min-w-44">
            <Link
              to="/products/$pid"
              params={{ pid: String(row.original.pid) }}
              className="font-medium hover:underline"
              search={{}}
            >
              {row.original.title}
            </Link>
            <div className="text-xs text-muted-foreground">
              {row.original.sku ?? row.original.pid} · {row.original.vendor}
            </div>
          </div>
        ),
      },
      {
        id: "status",
        header: "Status",
        cell: ({ row }) => (
          <span className="flex gap-1">
            <ProductStatusBadge status={row.original.status as ProductStatus | null} />
            <AbcBadge abc={row.original.abc_class as "A" | "B" | "C" | null} />
          </span>
        ),
      },
      {
        id: "on_hand",
        header: "On hand",
        meta: { numeric: true },
        cell: ({ row }) => formatNumber(row.original.on_hand),
      },
      {
        id: "on_order",
        header: "On order",
        meta: { numeric: true },
        cell: ({ row }) => formatNumber(row.original.on_order),
      },
      {
        id: "cover",
        header: "Cover",
        meta: { numeric: true },
        cell: ({ row }) => days(row.original.days_of_cover),
      },
      { id: "stockout", header: "Stock-out", cell: ({ row }) => formatDay(row.original.stockout_date) },
      {
        id: "suggested",
        header: "Suggested",
        meta: { numeric: true },
        cell: ({ row }) => (
          <div className="text-right">
            <div className="font-medium">{formatNumber(row.original.suggested_qty)}</div>
            <div className="text-xs text-muted-foreground whitespace-nowrap" data-testid="why">
              {row.original.why}
            </div>
          </div>
        ),
      },
      {
        id: "qty",
        header: "Order qty",
        cell: ({ row }) => {
          const l = row.original;
          if (l.covered_by)
            return (
              <Link
                to="/purchase-orders/$number"
                params={{ number: l.covered_by }}
                className="whitespace-nowrap text-sm text-primary hover:underline"
                data-testid="covered"
              >
                covered by PO {l.covered_by}
              </Link>
            );
          const typed = qty.get(l.pid);
          const bad = badQty.get(l.pid);
          const hint = typed ? roundingText(typed, l.moq, l.case_qty) : null;
          return (
            <div className="w-28">
              <Input
                type="number"
                min={1}
                max={MAX_LINE_QTY}
                inputMode="numeric"
                aria-label={`Order quantity of ${l.title}`}
                aria-invalid={bad !== undefined || undefined}
                disabled={!canCreate}
                className="h-8 text-right"
                value={typed ?? bad ?? ""}
                placeholder={String(l.suggested_qty || roundToPack(0, l.moq, l.case_qty))}
                onChange={(e) => {
                  const text = e.target.value;
                  const n = Number(text);
                  const ok = text !== "" && Number.isInteger(n) && n >= 1 && n <= MAX_LINE_QTY;
                  setQty((m) => {
                    const next = new Map(m);
                    if (ok) next.set(l.pid, n);
                    else next.delete(l.pid);
                    return next;
                  });
                  setBadQty((m) => {
                    const next = new Map(m);
                    if (ok || text === "") next.delete(l.pid);
                    else next.set(l.pid, text);
                    return next;
                  });
                }}
              />
              {bad !== undefined ? (
                <div className="text-xs text-destructive" role="alert" data-testid="qty-error">
                  Whole number, 1 to {formatNumber(MAX_LINE_QTY)}
                </div>
              ) : (
                hint && <div className="text-xs text-muted-foreground">{hint}</div>
              )}
            </div>
          );
        },
      },
      {
        id: "cost",
        header: "Cost",
        meta: { numeric: true },
        cell: ({ row }) => formatMoney(row.original.cost),
      },
      {
        id: "value",
        header: "Value",
        meta: { numeric: true },
        cell: ({ row }) => {
          const l = row.original;
          const typed = qty.get(l.pid);
          return formatMoney(typed ? roundToPack(typed, l.moq, l.case_qty) * l.cost : l.line_value);
        },
      },
    ],
    [lines, vendors, excluded, qty, badQty, canCreate],
  );

  const table = useReactTable({
    data: data.data?.items ?? [],
    columns,
    getCoreRowModel: getCoreRowModel(),
    manualPagination: true,
    getRowId: (r) => String(r.pid),
  });

  const scrollRef = useRef<HTMLDivElement>(null);
  const modelRows = table.getRowModel().rows;
  const virtualizer = useVirtualizer({
    count: modelRows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => 64,
    overscan: 8,
    getItemKey: (i) => modelRows[i]?.id ?? i,
  });
  const virtualRows = virtualizer.getVirtualItems();
  const padTop = virtualRows[0]?.start ?? 0;
  const padBottom = virtualRows.length ? virtualizer.getTotalSize() - virtualRows.at(-1)!.end : 0;

  const selection: FromSuggestionsInput = {
    vendor_ids: [...vendors],
    pids: [...lines],
    ...(excluded.size ? { exclude_pids: [...excluded] } : {}),
    quantities: [...qty].map(([pid, q]) => ({ pid, qty: q })),
  };
  const selectedCount = vendors.size + lines.size;
  // What drafts would order now, by vendor (lines already on an open PO left out).
  const chart = (data.data?.vendors ?? [])
    .filter((v) => v.open_value > 0)
    .slice(0, 10)
    .map((v) => ({ name: v.vendor, value: v.open_value }));

  return (
    <div className="space-y-4" data-testid="workspace">
      <Card className="gap-3 py-4">
        <div className="flex flex-wrap items-end gap-2 px-4">
          <SearchInput
            value={search.w_q ?? ""}
            busy={data.isFetching}
            onSearch={(q) => set({ w_q: q || undefined })}
            placeholder="Search product, SKU or pid"
            className="w-full sm:w-64"
          />
          <Select
            value={search.w_vendor ? String(search.w_vendor) : ALL}
            onValueChange={(v) => set({ w_vendor: v === ALL ? undefined : Number(v) })}
          >
            <SelectTrigger className="w-48" aria-label="Vendor">
              <SelectValue placeholder="Vendor" />
            </SelectTrigger>
            <SelectContent>
              <SelectItem value={ALL}>All vendors</SelectItem>
              {(data.data?.vendors ?? []).map((v) => (
                <SelectItem key={v.vendor_id} value={String(v.vendor_id)}>
                  {v.vendor}
                </SelectItem>
              ))}
            </SelectContent>
          </Select>
          <Select
            value={search.w_status ?? ALL}
            onValueChange={(v) => set({ w_status: v === ALL ? undefined : (v as ProductStatus) })}
          >
            <SelectTrigger className="w-36" aria-label="Product status">
              <SelectValue placeholder="Status" />
            </SelectTrigger>
            <SelectContent>
              <SelectItem value={ALL}>All statuses</SelectItem>
              {PRODUCT_STATUSES.filter((s) => s !== "discontinued" && s !== "excluded").map((s) => (
                <SelectItem key={s} value={s}>
                  {STATUS_LABELS[s]}
                </SelectItem>
              ))}
            </SelectContent>
          </Select>
          <Select
            value={search.w_abc ?? ALL}
            onValueChange={(v) => set({ w_abc: v === ALL ? undefined : (v as "A") })}
          >
            <SelectTrigger className="w-28" aria-label="ABC class">
              <SelectValue placeholder="ABC" />
            </SelectTrigger>
            <SelectContent>
              <SelectItem value={ALL}>All ABC</SelectItem>
              {ABC_CLASSES.map((c) => (
                <SelectItem key={c} value={c}>
                  Class {c}
                </SelectItem>
              ))}
            </SelectContent>
          </Select>
          <Combobox
            value={search.w_brand ? String(search.w_brand) : null}
            onChange={(v) => set({ w_brand: v ? Number(v) : undefined })}
            options={brandOptions}
            disabled={facets.isPending}
            placeholder="All brands"
            searchPlaceholder="Search brands..."
            className="w-full sm:w-48"
            data-testid="brand-filter"
          />
          <Combobox
            value={search.w_category ? String(search.w_category) : null}
            onChange={(v) => set({ w_category: v ? Number(v) : undefined })}
            options={categoryOptions}
            disabled={facets.isPending}
            placeholder="All categories"
            searchPlaceholder="Search categories..."
            className="w-full sm:w-56"
            data-testid="category-filter"
          />
          {canCreate && (
            <div className="ml-auto flex items-center gap-2">
              <span className="text-sm text-muted-foreground" data-testid="selection">
                {vendors.size} {vendors.size === 1 ? "vendor" : "vendors"}, {lines.size}{" "}
                {lines.size === 1 ? "line" : "lines"} selected
                {excluded.size > 0 && `, ${excluded.size} left out`}
              </span>
              <Button
                disabled={selectedCount === 0 || badQty.size > 0}
                title={badQty.size > 0 ? "Correct the quantities marked in red first" : undefined}
                onClick={() => setPreview(selection)}
                data-testid="create-drafts"
              >
                Create drafts
              </Button>
            </div>
          )}
        </div>
        {data.data && (
          <p className="px-4 text-xs text-muted-foreground">
            Figures as of {formatDay(data.data.as_of)}. Products already on an open PO of their vendor show
            "covered by PO" and are not added again.
          </p>
        )}
      </Card>

      {data.isError ? (
        <LoadError message="Failed to load the replenishment workspace" onRetry={() => void data.refetch()} />
      ) : (
        <div className="grid gap-4 lg:grid-cols-[minmax(0,2fr)_minmax(0,1fr)]">
          {/* Its own scroll: with 70 vendors the lines below would otherwise start 8,000 px down. */}
          <div
            className="grid max-h-[28rem] content-start gap-3 overflow-y-auto pr-1 sm:grid-cols-2"
            data-testid="vendor-summaries"
          >
            {data.isPending && <Card className="h-32 animate-pulse" />}
            {data.data?.vendors.length === 0 && (
              <Card className="p-4 text-sm text-muted-foreground sm:col-span-2">
                Nothing to order: no product's plan says "order now" under these filters (or no calculation
                has run yet).
              </Card>
            )}
            {data.data?.vendors.map((v) => (
              <Card key={v.vendor_id} className="gap-2 p-4" data-testid="vendor-summary">
                <div className="flex items-start gap-2">
                  {canCreate && (
                    <Checkbox
                      aria-label={`Select vendor ${v.vendor}`}
                      className="mt-1"
                      checked={vendors.has(v.vendor_id)}
                      disabled={v.open_lines === 0}
                      onCheckedChange={() => {
                        setVendors((s) => toggle(s, v.vendor_id));
                        // A vendor let go takes its left-out lines with it.
                        if (vendors.has(v.vendor_id)) {
                          const theirs = new Set(
                            (data.data?.items ?? [])
                              .filter((l) => l.vendor_id === v.vendor_id)
                              .map((l) => l.pid),
                          );
                          setExcluded((s) => new Set([...s].filter((pid) => !theirs.has(pid))));
                        }
                      }}
                    />
                  )}
                  <div className="min-w-0 flex-1">
                    <div className="font-medium">{v.vendor}</div>
                    <div className="text-sm tabular-nums">
                      {v.lines} lines ({v.open_lines} to order) · {formatMoney(v.open_value)} to order
                      {v.open_lines < v.lines && (
                        <span className="text-muted-foreground">
                          {" "}
                          ({formatMoney(v.order_value - v.open_value)} already on open POs)
                        </span>
                      )}
                    </div>
                  </div>
                  {canCreate && (
                    <Button size="sm" variant="outline" onClick={() => setTermsFor(v)}>
                      Terms
                    </Button>
                  )}
                </div>
                <dl className="grid grid-cols-2 gap-x-3 text-xs text-muted-foreground">
                  <dt>Lead time measured</dt>
                  <dd
                    title={v.lead_time_measured === null ? "No received orders to measure from" : undefined}
                  >
                    {days(v.lead_time_measured)}
                  </dd>
                  <dt>Lead time quoted</dt>
                  <dd>{days(v.lead_time_quoted)}</dd>
                  <dt>On time</dt>
                  <dd
                    title={v.on_time_rate === null ? "No received orders with an expected date" : undefined}
                  >
                    {pct(v.on_time_rate)}
                  </dd>
                  <dt>Min order</dt>
                  <dd>
                    {v.min_order_value === null ? "not set" : formatMoney(v.min_order_value)}
                    {v.min_order_qty === null ? "" : ` / ${formatNumber(v.min_order_qty)} units`}
                  </dd>
                  <dt>Free freight from</dt>
                  <dd>
                    {v.free_freight_threshold === null ? "not set" : formatMoney(v.free_freight_threshold)}
                  </dd>
                </dl>
                <div className="flex flex-wrap gap-1">
                  <Reach label="minimum value" value={v.reaches_min_value} />
                  <Reach label="minimum quantity" value={v.reaches_min_qty} />
                  <Reach label="free freight" value={v.reaches_free_freight} />
                </div>
              </Card>
            ))}
          </div>
          <Card className="max-h-[28rem] overflow-y-auto p-4">
            <div className="mb-2 text-sm font-medium">Order value by vendor</div>
            {chart.length === 0 ? (
              <p className="text-sm text-muted-foreground">No suggestions to chart.</p>
            ) : (
              <figure
                aria-label="Suggested order value by vendor"
                style={{ minHeight: chart.length * 30 + 28 }}
              >
                <BarChart
                  responsive
                  layout="vertical"
                  data={chart}
                  style={{ width: "100%", height: chart.length * 30 + 28 }}
                >
                  <CartesianGrid horizontal={false} stroke="#e5e7eb" />
                  <XAxis type="number" tickFormatter={formatMoneyCompact} tick={{ fontSize: 11 }} />
                  <YAxis type="category" dataKey="name" width={110} tick={{ fontSize: 11 }} />
                  <Tooltip formatter={(v) => formatMoney(Number(v))} />
                  <Bar dataKey="value" fill="#2563eb" barSize={16} />
                </BarChart>
              </figure>
            )}
          </Card>
        </div>
      )}

      <Card className="gap-2 py-2">
        {/* A page holds up to WORKSPACE_PAGE_SIZE lines (a large vendor's in one scroll): only the
            rows in view are in the DOM (TanStack Virtual), measured as they render. */}
        <div ref={scrollRef} className="max-h-[70vh] overflow-auto" data-testid="workspace-scroll">
          <Table
            data-testid="workspace-lines"
            data-total={data.data?.items.length ?? 0}
            containerClassName="overflow-visible"
          >
            <TableHeader className="sticky top-0 z-10 bg-card">
              {table.getHeaderGroups().map((g) => (
                <TableRow key={g.id}>
                  {g.headers.map((h) => (
                    <TableHead
                      key={h.id}
                      className={cn(
                        (h.column.columnDef.meta as { numeric?: boolean } | undefined)?.numeric &&
                          "text-right",
                      )}
                    >
                      {flexRender(h.column.columnDef.header, h.getContext())}
                    </TableHead>
                  ))}
                </TableRow>
              ))}
            </TableHeader>
            <TableBody>
              {data.isPending ? (
                <TableSkeletonRows columns={columns.length} />
              ) : modelRows.length === 0 ? (
                <TableEmptyRow colSpan={columns.length} message="Nothing to order under these filters" />
              ) : (
                <>
                  {padTop > 0 && (
                    <tr aria-hidden style={{ height: padTop }}>
                      <td colSpan={columns.length} />
                    </tr>
                  )}
                  {virtualRows.map((v) => {
                    const r = modelRows[v.index]!;
                    return (
                      <TableRow
                        key={r.id}
                        data-index={v.index}
                        ref={virtualizer.measureElement}
                        data-testid="workspace-line"
                        data-pid={r.original.pid}
                      >
                        {r.getVisibleCells().map((c) => (
                          <TableCell
                            key={c.id}
                            className={cn(
                              "tabular-nums",
                              (c.column.columnDef.meta as { numeric?: boolean } | undefined)?.numeric &&
                                "text-right",
                            )}
                          >
                            {flexRender(c.column.columnDef.cell, c.getContext())}
                          </TableCell>
                        ))}
                      </TableRow>
                    );
                  })}
                  {padBottom > 0 && (
                    <tr aria-hidden style={{ height: padBottom }}>
                      <td colSpan={columns.length} />
                    </tr>
                  )}
                </>
              )}
            </TableBody>
          </Table>
        </div>
        {data.data && (
          <PagingFooter
            page={search.w_page ?? 1}
            pageSize={WORKSPACE_PAGE_SIZE}
            total={data.data.total}
            noun="lines"
            onPageChange={(page) => onSearchChange({ ...search, w_page: page })}
          />
        )}
      </Card>

      {preview && (
        <DraftPreviewDialog
          selection={preview}
          onClose={() => setPreview(null)}
          onCreated={() => {
            setPreview(null);
            setVendors(new Set());
            setLines(new Set());
            setExcluded(new Set());
            setQty(new Map());
          }}
        />
      )}
      {termsFor && <VendorTermsDialog vendor={termsFor} onClose={() => setTermsFor(null)} />}
    </div>
  );
}

function DraftPreviewDialog({
  selection,
  onClose,
  onCreated,
}: {
  selection: FromSuggestionsInput;
  onClose: () => void;
  onCreated: () => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [topUp, setTopUp] = useState(false);
  const input = { ...selection, top_up: topUp };
  const preview = useQuery(trpc.purchasing.previewDrafts.queryOptions(input));
  const create = useMutation(
    trpc.purchasing.createFromSuggestions.mutationOptions({
      onSuccess: (r) => {
        void queryClient.invalidateQueries(trpc.purchasing.pathFilter());
        void queryClient.invalidateQueries(trpc.metrics.pathFilter());
        toast.success(
          r.created.length
            ? `Created ${r.created.map((c) => `${c.number} (${c.vendor})`).join(", ")}`
            : "No new drafts: every selected product is already on an open PO",
        );
        onCreated();
      },
      onError: (e) => toast.error(errorMessage(e, "Failed to create drafts")),
    }),
  );
  const drafts = preview.data?.filter((d) => d.lines.length > 0) ?? [];
  return (
    <Dialog open onOpenChange={(o) => !o && onClose()}>
      <DialogContent className="max-h-[90vh] overflow-y-auto sm:max-w-2xl" data-testid="draft-preview">
        <DialogHeader>
          <DialogTitle>Create drafts</DialogTitle>
          <DialogDescription>One draft purchase order per vendor, with the lines below.</DialogDescription>
        </DialogHeader>
        <div className="flex items-center gap-2">
          <Switch id="top-up" checked={topUp} onCheckedChange={setTopUp} />
          <Label htmlFor="top-up">Top up to the vendor minimum</Label>
        </div>
        {preview.isPending && <p className="text-sm text-muted-foreground">Loading…</p>}
        {preview.isError && (
          <p className="text-sm text-destructive">{errorMessage(preview.error, "Failed to preview")}</p>
        )}
        {drafts.map((d) => (
          <div key={d.vendor_id} className="min-w-0 rounded-md border p-3" data-testid="preview-vendor">
            <div className="flex justify-between text-sm font-medium">
              <span>{d.vendor}</span>
              <span className="tabular-nums">
                {formatNumber(d.units)} units · {formatMoney(d.value)}
              </span>
            </div>
            {(d.min_order_value !== null || d.min_order_qty !== null) && (
              <div className="text-xs text-muted-foreground">
                Minimum {d.min_order_value !== null ? formatMoney(d.min_order_value) : ""}
                {d.min_order_qty !== null ? ` ${formatNumber(d.min_order_qty)} units` : ""}
              </div>
            )}
            <ul className="mt-1 text-sm">
              {d.lines.map((l) => (
                <li key={l.pid} className="flex justify-between gap-2 tabular-nums">
                  <span className="truncate">{l.title}</span>
                  <span>
                    {formatNumber(l.qty)}
                    {l.top_up > 0 && (
                      <span className="ml-1 text-xs text-amber-700 dark:text-amber-300">
                        (+{l.top_up} top-up)
                      </span>
                    )}
                  </span>
                </li>
              ))}
            </ul>
            {d.covered.length > 0 && (
              <div className="mt-1 text-xs text-muted-foreground">
                Left out, already on an open PO:{" "}
                {d.covered.map((c) => `${c.pid} (PO ${c.number})`).join(", ")}
              </div>
            )}
          </div>
        ))}
        {preview.data && drafts.length === 0 && (
          <p className="text-sm text-muted-foreground">Every selected product is already on an open PO.</p>
        )}
        <DialogFooter>
          <Button variant="outline" onClick={onClose}>
            Cancel
          </Button>
          <Button
            disabled={create.isPending || drafts.length === 0}
            onClick={() => create.mutate(input)}
            data-testid="confirm-create-drafts"
          >
            {create.isPending
              ? "Creating..."
              : `Create ${drafts.length} draft${drafts.length === 1 ? "" : "s"}`}
          </Button>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  );
}

const termsForm = vendorTermsInput;
type TermsValues = z.input<typeof termsForm>;

function VendorTermsDialog({ vendor, onClose }: { vendor: VendorSummary; onClose: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const form = useForm<TermsValues>({
    resolver: zodResolver(termsForm),
    defaultValues: {
      min_order_value: vendor.min_order_value,
      min_order_qty: vendor.min_order_qty,
      free_freight_threshold: vendor.free_freight_threshold,
    },
  });
  const save = useMutation(
    trpc.purchasing.updateVendorTerms.mutationOptions({
      onSuccess: () => {
        void queryClient.invalidateQueries(trpc.purchasing.pathFilter());
        toast.success(`Terms of ${vendor.vendor} saved`);
        onClose();
      },
      onError: (e) => toast.error(errorMessage(e, "Failed to save the vendor's terms")),
    }),
  );
  const blankToNull = (v: unknown) => (v === "" || v === undefined ? null : v);
  const field = (name: keyof TermsValues, label: string) => (
    <div className="space-y-1">
      <Label htmlFor={name}>{label}</Label>
      <Input
        id={name}
        type="number"
        min={0}
        step="any"
        {...form.register(name, { setValueAs: blankToNull })}
        placeholder="not set"
      />
      {form.formState.errors[name] && (
        <p className="text-xs text-destructive">{String(form.formState.errors[name]?.message)}</p>
      )}
    </div>
  );
  return (
    <Dialog open onOpenChange={(o) => !o && onClose()}>
      <DialogContent data-testid="vendor-terms">
        <DialogHeader>
          <DialogTitle>Terms of {vendor.vendor}</DialogTitle>
          <DialogDescription>Kept across imports. Blank means not set.</DialogDescription>
        </DialogHeader>
        <form
          className="space-y-3"
          onSubmit={form.handleSubmit((values) =>
            save.mutate({ vendor_id: vendor.vendor_id, ...(values as z.output<typeof termsForm>) }),
          )}
        >
          {field("min_order_value", "Minimum order value ($)")}
          {field("min_order_qty", "Minimum order quantity (units)")}
          {field("free_freight_threshold", "Free freight from ($)")}
          <DialogFooter>
            <Button type="button" variant="outline" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" disabled={save.isPending}>
              {save.isPending ? "Saving..." : "Save"}
            </Button>
          </DialogFooter>
        </form>
      </DialogContent>
    </Dialog>
  );
}
