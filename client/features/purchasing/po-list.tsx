// The purchase-order list: imported POs and those made here, paged, sorted and filtered on the
// server (the URL holds the view). TanStack Table holds the columns and the sort state.
import { Badge } from "@client/components/ui/badge.tsx";
import { Button } from "@client/components/ui/button.tsx";
import { Card } from "@client/components/ui/card.tsx";
import { Input } from "@client/components/ui/input.tsx";
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
import { TableEmptyRow, TableSkeletonRows } from "@client/components/ui/table-helpers.tsx";
import { LoadError, PagingFooter } from "@client/features/config/parts.tsx";
import {
  DASH,
  formatDay,
  formatMoney,
  formatNumber,
  formatPercent,
} from "@client/features/products/format.ts";
import { SearchInput } from "@client/features/tables/parts.tsx";
import { useTRPC } from "@client/lib/trpc.ts";
import { cn } from "@client/lib/utils.ts";
import { PO_SORTS, PO_STATUS_LABELS, PO_STATUSES, type PoListItem } from "@shared/purchasing.ts";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { type ColumnDef, flexRender, getCoreRowModel, useReactTable } from "@tanstack/react-table";
import { ArrowDownIcon, ArrowUpIcon, XIcon } from "lucide-react";
import { LIST_PAGE_SIZE, listInputOf, type PurchaseOrdersSearch } from "./search.ts";
import { PoStatusBadge } from "./status.tsx";

type Sort = (typeof PO_SORTS)[number];
const ALL = "__all";

const COLUMNS: ColumnDef<PoListItem>[] = [
  {
    id: "number",
    header: "Number",
    cell: ({ row }) => (
      <Link
        to="/purchase-orders/$number"
        params={{ number: row.original.number }}
        className="font-medium text-primary underline-offset-4 hover:underline"
        data-testid="po-link"
      >
        {row.original.number}
      </Link>
    ),
  },
  { id: "vendor", header: "Vendor", cell: ({ row }) => row.original.vendor },
  {
    id: "status",
    header: "Status",
    cell: ({ row }) => (
      <span className="flex flex-wrap items-center gap-1">
        <PoStatusBadge status={row.original.status} />
        {row.original.overdue && (
          <Badge variant="destructive" data-testid="overdue">
            Overdue
          </Badge>
        )}
      </span>
    ),
  },
  {
    id: "lines",
    header: "Lines",
    meta: { numeric: true },
    cell: ({ row }) => formatNumber(row.original.lines),
  },
  {
    id: "units",
    header: "Units",
    meta: { numeric: true },
    cell: ({ row }) => formatNumber(row.original.units),
  },
  {
    id: "value",
    header: "Value",
    meta: { numeric: true },
    cell: ({ row }) => formatMoney(row.original.value),
  },
  { id: "date_ordered", header: "Ordered", cell: ({ row }) => formatDay(row.original.date_ordered) },
  { id: "date_expected", header: "Expected", cell: ({ row }) => formatDay(row.original.date_expected) },
  {
    id: "received",
    header: "Received",
    meta: { numeric: true },
    cell: ({ row }) =>
      // A draft has nothing to receive yet.
      row.original.received_pct === null || row.original.status === "draft"
        ? DASH
        : formatPercent(row.original.received_pct, 0),
  },
  {
    id: "on_time",
    header: "On time",
    cell: ({ row }) =>
      row.original.on_time === null ? (
        <span className="text-muted-foreground" title="Shown once the order is fully received">
          {DASH}
        </span>
      ) : row.original.on_time ? (
        "Yes"
      ) : (
        "Late"
      ),
  },
];

export function PurchaseOrderList({
  search,
  onSearchChange,
}: {
  search: PurchaseOrdersSearch;
  onSearchChange: (next: PurchaseOrdersSearch) => void;
}) {
  const trpc = useTRPC();
  const input = listInputOf(search);
  const list = useQuery({ ...trpc.purchasing.list.queryOptions(input), placeholderData: keepPreviousData });
  const set = (patch: Partial<PurchaseOrdersSearch>) =>
    onSearchChange({ ...search, page: undefined, ...patch });
  const sort = input.sort as Sort;
  const table = useReactTable({
    data: list.data?.items ?? [],
    columns: COLUMNS,
    getCoreRowModel: getCoreRowModel(),
    manualSorting: true,
    manualPagination: true,
    getRowId: (r) => r.number,
  });
  const filtered =
    search.status ||
    search.vendor ||
    search.overdue ||
    search.open ||
    search.due_week ||
    search.late_for_stockout ||
    search.from ||
    search.to;
  const sortable = new Set<string>(PO_SORTS);

  return (
    <Card className="gap-4 py-4" data-testid="po-list">
      <div className="flex flex-wrap items-end gap-2 px-4">
        <SearchInput
          value={search.q ?? ""}
          busy={list.isFetching}
          onSearch={(q) => set({ q: q || undefined })}
          placeholder="Search number, vendor or product"
          className="w-full sm:w-72"
        />
        <Select
          value={search.status ?? ALL}
          onValueChange={(v) => set({ status: v === ALL ? undefined : (v as never) })}
        >
          <SelectTrigger className="w-44" aria-label="Status">
            <SelectValue placeholder="Status" />
          </SelectTrigger>
          <SelectContent>
            <SelectItem value={ALL}>All statuses</SelectItem>
            {PO_STATUSES.map((s) => (
              <SelectItem key={s} value={s}>
                {PO_STATUS_LABELS[s]}
              </SelectItem>
            ))}
          </SelectContent>
        </Select>
        <Button
          variant={search.overdue ? "default" : "outline"}
          size="sm"
          onClick={() => set({ overdue: search.overdue ? undefined : true })}
          aria-pressed={Boolean(search.overdue)}
        >
          Overdue only
        </Button>
        <label className="flex items-center gap-1 text-sm">
          From
          <Input
            type="date"
            className="w-36"
            value={search.from ?? ""}
            onChange={(e) => set({ from: e.target.value || undefined })}
            aria-label="Ordered from"
          />
        </label>
        <label className="flex items-center gap-1 text-sm">
          to
          <Input
            type="date"
            className="w-36"
            value={search.to ?? ""}
            onChange={(e) => set({ to: e.target.value || undefined })}
            aria-label="Ordered to"
          />
        </label>
        {filtered && (
          <Button
            variant="ghost"
            size="sm"
            onClick={() =>
              set({
                status: undefined,
                vendor: undefined,
                overdue: undefined,
                open: undefined,
                due_week: undefined,
                late_for_stockout: undefined,
                from: undefined,
                to: undefined,
              })
            }
          >
            <XIcon aria-hidden /> Clear filters
          </Button>
        )}
      </div>
      {(search.open || search.due_week || search.late_for_stockout || search.vendor) && (
        <p className="px-4 text-sm text-muted-foreground" data-testid="list-filter-note">
          {search.open && "Open orders (ordered or partially received). "}
          {search.due_week && "Open orders expected within 7 days of the as-of day. "}
          {search.late_for_stockout && "Open orders with a product that runs out before the order arrives. "}
          {search.vendor && `Vendor ${list.data?.items[0]?.vendor ?? search.vendor}. `}
        </p>
      )}
      {list.isError ? (
        <div className="px-4">
          <LoadError message="Failed to load purchase orders" onRetry={() => void list.refetch()} />
        </div>
      ) : (
        <div className="overflow-x-auto">
          <Table>
            <TableHeader>
              {table.getHeaderGroups().map((g) => (
                <TableRow key={g.id}>
                  {g.headers.map((h) => {
                    const numeric = (h.column.columnDef.meta as { numeric?: boolean } | undefined)?.numeric;
                    const id = h.column.id;
                    const active = sort === id;
                    return (
                      <TableHead key={h.id} className={cn(numeric && "text-right")}>
                        {sortable.has(id) ? (
                          <button
                            type="button"
                            className="inline-flex items-center gap-1 hover:text-foreground"
                            onClick={() =>
                              set({ sort: id as Sort, dir: active && input.dir === "desc" ? "asc" : "desc" })
                            }
                          >
                            {flexRender(h.column.columnDef.header, h.getContext())}
                            {active &&
                              (input.dir === "asc" ? (
                                <ArrowUpIcon className="size-3" aria-label="ascending" />
                              ) : (
                                <ArrowDownIcon className="size-3" aria-label="descending" />
                              ))}
                          </button>
                        ) : (
                          flexRender(h.column.columnDef.header, h.getContext())
                        )}
                      </TableHead>
                    );
                  })}
                </TableRow>
              ))}
            </TableHeader>
            <TableBody>
              {list.isPending ? (
                <TableSkeletonRows columns={COLUMNS.length} />
              ) : table.getRowModel().rows.length === 0 ? (
                <TableEmptyRow
                  colSpan={COLUMNS.length}
                  message={
                    (list.data?.total ?? 0) > 0
                      ? "Nothing on this page: see the pages below"
                      : filtered || search.q
                        ? "No purchase orders match these filters"
                        : "No purchase orders yet"
                  }
                />
              ) : (
                table.getRowModel().rows.map((r) => (
                  <TableRow key={r.id} data-testid="po-row">
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
                ))
              )}
            </TableBody>
          </Table>
        </div>
      )}
      {list.data && (
        <PagingFooter
          page={search.page ?? 1}
          pageSize={LIST_PAGE_SIZE}
          total={list.data.total}
          noun="purchase orders"
          onPageChange={(page) => onSearchChange({ ...search, page })}
        />
      )}
    </Card>
  );
}
