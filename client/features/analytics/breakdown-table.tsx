// A breakdown table of the Overview (category tree, brand, vendor): TanStack Table with sorting (the
// category tree sorts among siblings), a 12-week sparkline per row, and each row's drill-down link.
import { Button } from "@client/components/ui/button.tsx";
import {
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableHeader,
  TableRow,
} from "@client/components/ui/table.tsx";
import { DASH, formatMoneyShort, formatNumber, formatPercent } from "@client/features/products/format.ts";
import { cn } from "@client/lib/utils.ts";
import type { BreakdownDim, BreakdownRow } from "@shared/analytics.ts";
import { useRouter } from "@tanstack/react-router";
import {
  type ColumnDef,
  type ExpandedState,
  flexRender,
  getCoreRowModel,
  getExpandedRowModel,
  getSortedRowModel,
  type SortingState,
  useReactTable,
} from "@tanstack/react-table";
import { ArrowDownIcon, ArrowUpDownIcon, ArrowUpIcon, ChevronDownIcon, ChevronRightIcon } from "lucide-react";
import { useMemo, useState } from "react";

type TreeRow = BreakdownRow & { children?: TreeRow[] };

/** Categories as a tree (children under their parent); brands and vendors as they are. */
function toTree(rows: BreakdownRow[], dim: BreakdownDim): TreeRow[] {
  if (dim !== "category") return rows;
  const byId = new Map<number, TreeRow>(rows.map((r) => [r.id, { ...r }]));
  const roots: TreeRow[] = [];
  for (const r of byId.values()) {
    const parent = r.parent_id !== null ? byId.get(r.parent_id) : undefined;
    if (parent) {
      parent.children ??= [];
      parent.children.push(r);
    } else roots.push(r);
  }
  return roots;
}

export function Sparkline({ values, label }: { values: number[]; label: string }) {
  const w = 96;
  const h = 24;
  const max = Math.max(...values, 0);
  if (max <= 0) {
    return (
      <span className="text-xs text-muted-foreground" title={`${label}: no sales in these 12 weeks`}>
        no sales
      </span>
    );
  }
  const step = w / Math.max(values.length - 1, 1);
  const pts = values.map((v, i) => `${(i * step).toFixed(1)},${(h - 2 - (v / max) * (h - 4)).toFixed(1)}`);
  return (
    <svg
      width={w}
      height={h}
      viewBox={`0 0 ${w} ${h}`}
      role="img"
      aria-label={`${label}: weekly revenue over 12 weeks`}
      data-testid="sparkline"
    >
      <title>{values.map((v) => formatMoneyShort(v)).join(", ")}</title>
      <polyline points={pts.join(" ")} fill="none" stroke="#2563eb" strokeWidth={1.5} />
    </svg>
  );
}

export function ChangeText({ change, comparison }: { change: number | null; comparison: number }) {
  if (change === null) {
    return (
      <span className="text-muted-foreground" title="No sales in the comparison period">
        {comparison === 0 ? "new" : DASH}
      </span>
    );
  }
  return (
    <span
      className={cn(
        "tabular-nums",
        change > 0
          ? "text-emerald-700 dark:text-emerald-400"
          : change < 0
            ? "text-red-700 dark:text-red-400"
            : "",
      )}
    >
      {change > 0 ? "+" : ""}
      {(change * 100).toFixed(1)}%
    </span>
  );
}

const DIM_LABEL: Record<BreakdownDim, string> = { category: "Category", brand: "Brand", vendor: "Vendor" };

export function BreakdownTable({
  dim,
  rows,
  exportHref,
}: {
  dim: BreakdownDim;
  rows: BreakdownRow[];
  /** The CSV download; null when the caller may not export */
  exportHref: string | null;
}) {
  const router = useRouter();
  const data = useMemo(() => toTree(rows, dim), [rows, dim]);
  const [sorting, setSorting] = useState<SortingState>([{ id: "revenue", desc: true }]);
  const [expanded, setExpanded] = useState<ExpandedState>({});
  const columns = useMemo<ColumnDef<TreeRow>[]>(
    () => [
      {
        id: "name",
        accessorKey: "name",
        header: DIM_LABEL[dim],
        cell: ({ row }) => {
          const r = row.original;
          const name = r.href ? (
            <a
              href={r.href}
              className="font-medium hover:underline"
              data-testid="breakdown-link"
              onClick={(e) => {
                if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0 || !r.href) return;
                e.preventDefault();
                router.history.push(r.href);
              }}
            >
              {r.name}
            </a>
          ) : (
            <span className="font-medium">{r.name}</span>
          );
          return (
            <div className="flex items-center gap-1" style={{ paddingLeft: `${row.depth * 1.25}rem` }}>
              {row.getCanExpand() ? (
                <button
                  type="button"
                  onClick={row.getToggleExpandedHandler()}
                  aria-label={row.getIsExpanded() ? `Collapse ${r.name}` : `Expand ${r.name}`}
                  aria-expanded={row.getIsExpanded()}
                  className="rounded p-0.5 hover:bg-muted"
                >
                  {row.getIsExpanded() ? (
                    <ChevronDownIcon className="size-4" />
                  ) : (
                    <ChevronRightIcon className="size-4" />
                  )}
                </button>
              ) : dim === "category" ? (
                <span className="inline-block w-5" />
              ) : null}
              {name}
            </div>
          );
        },
      },
      {
        id: "revenue",
        accessorKey: "revenue",
        header: "Sales",
        cell: ({ row }) => formatMoneyShort(row.original.revenue),
      },
      {
        id: "change",
        accessorFn: (r) => r.change ?? Number.NEGATIVE_INFINITY,
        header: "Change",
        cell: ({ row }) => (
          <ChangeText change={row.original.change} comparison={row.original.comparison_revenue} />
        ),
      },
      {
        id: "comparison_revenue",
        accessorKey: "comparison_revenue",
        header: "Compared with",
        cell: ({ row }) => formatMoneyShort(row.original.comparison_revenue),
      },
      {
        id: "units",
        accessorKey: "units",
        header: "Units",
        cell: ({ row }) => formatNumber(row.original.units),
      },
      {
        id: "gross_margin",
        accessorKey: "gross_margin",
        header: "Gross margin",
        cell: ({ row }) => formatMoneyShort(row.original.gross_margin),
      },
      {
        id: "gross_margin_pct",
        accessorFn: (r) => r.gross_margin_pct ?? Number.NEGATIVE_INFINITY,
        header: "Margin %",
        cell: ({ row }) =>
          row.original.gross_margin_pct === null ? (
            <span className="text-muted-foreground" title="No sales of products with a cost price">
              {DASH}
            </span>
          ) : (
            formatPercent(row.original.gross_margin_pct)
          ),
      },
      {
        id: "sparkline",
        header: "12 weeks",
        enableSorting: false,
        cell: ({ row }) => <Sparkline values={row.original.sparkline} label={row.original.name} />,
      },
    ],
    [dim, router],
  );
  const table = useReactTable({
    data,
    columns,
    state: { sorting, expanded },
    onSortingChange: setSorting,
    onExpandedChange: setExpanded,
    getSubRows: (r) => r.children,
    getCoreRowModel: getCoreRowModel(),
    getSortedRowModel: getSortedRowModel(),
    getExpandedRowModel: getExpandedRowModel(),
    sortDescFirst: true,
  });
  const visible = table.getRowModel().rows;
  return (
    <div className="space-y-2" data-testid={`breakdown-${dim}`}>
      <div className="flex flex-wrap items-center justify-between gap-2">
        <p className="text-xs text-muted-foreground">
          {rows.length} {dim === "category" ? "categories" : `${dim}s`}
          {dim === "category" ? " (each rolls up its subcategories; a product counts once per category)" : ""}
          .{rows.some((r) => r.href) ? " Open a row for its products." : ""}
        </p>
        {exportHref && (
          <Button asChild size="sm" variant="outline">
            <a href={exportHref} download data-testid="export-csv">
              Export CSV
            </a>
          </Button>
        )}
      </div>
      {rows.length === 0 ? (
        <p className="rounded-lg border border-dashed px-4 py-8 text-center text-sm text-muted-foreground">
          No {dim === "category" ? "product categories" : `${dim}s`} with sales in this period or the one it
          is compared with.
        </p>
      ) : (
        <Table stackOnPhone>
          <TableHeader>
            {table.getHeaderGroups().map((g) => (
              <TableRow key={g.id}>
                {g.headers.map((h) => {
                  const sorted = h.column.getIsSorted();
                  const Icon = !sorted ? ArrowUpDownIcon : sorted === "asc" ? ArrowUpIcon : ArrowDownIcon;
                  return (
                    <TableHead
                      key={h.id}
                      aria-sort={sorted ? (sorted === "asc" ? "ascending" : "descending") : undefined}
                    >
                      {h.column.getCanSort() ? (
                        <button
                          type="button"
                          onClick={h.column.getToggleSortingHandler()}
                          className="-ml-1 inline-flex items-center gap-1 rounded px-1 py-0.5 hover:bg-accent"
                        >
                          {flexRender(h.column.columnDef.header, h.getContext())}
                          <Icon className={cn("size-3.5", !sorted && "opacity-40")} />
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
            {visible.map((row) => (
              <TableRow key={row.id} data-testid="breakdown-row" data-id={row.original.id}>
                {row.getVisibleCells().map((c) => (
                  <TableCell
                    key={c.id}
                    data-label={c.column.id === "name" ? undefined : String(c.column.columnDef.header)}
                    data-primary={c.column.id === "name" ? "" : undefined}
                    className={c.column.id === "name" ? undefined : "tabular-nums"}
                  >
                    {flexRender(c.column.columnDef.cell, c.getContext())}
                  </TableCell>
                ))}
              </TableRow>
            ))}
          </TableBody>
        </Table>
      )}
    </div>
  );
}
