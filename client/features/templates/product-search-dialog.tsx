// 'Search Products' (spec sections 2 "Product search dialog", 4 "Template form"): find a product,
// then create a template prefilled from it. Cancelling the form returns to the search; closing
// the dialog resets filters, results, page and sort.
import { Badge } from "@client/components/ui/badge.tsx";
import { Button } from "@client/components/ui/button.tsx";
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogHeader,
  DialogTitle,
} from "@client/components/ui/dialog.tsx";
import { Input } from "@client/components/ui/input.tsx";
import { Pagination } from "@client/components/ui/pagination.tsx";
import {
  Select,
  SelectContent,
  SelectItem,
  SelectTrigger,
  SelectValue,
} from "@client/components/ui/select.tsx";
import {
  compareValues,
  cycleSort,
  SortableHead,
  type SortState,
} from "@client/components/ui/sortable-head.tsx";
import { Table, TableBody, TableCell, TableHeader, TableRow } from "@client/components/ui/table.tsx";
import { useTRPCClient } from "@client/lib/trpc.ts";
import { cn } from "@client/lib/utils.ts";
import { formatCurrency } from "@shared/format.ts";
import {
  DATE_RANGE_LABELS,
  DATE_RANGES,
  type DateRange,
  type FieldOptions,
  PRODUCT_SEARCH_PAGE_SIZE,
  type ProductSearchResult,
} from "@shared/templates.ts";
import { Loader2Icon, PackageSearchIcon, SearchIcon, XIcon } from "lucide-react";
import { type FormEvent, useMemo, useRef, useState } from "react";
import { toast } from "sonner";
import { companyLabel, productToForm, type TemplateFormValues, templateCategoriesOf } from "./model.ts";
import { TemplateForm } from "./template-form.tsx";

type Column = "title" | "brand" | "line" | "price" | "total_sold" | "first_received" | "date_last_sold";

/** 'YYYY-MM-DD' as a local date, or '-'. */
function formatDay(day: string | null): string {
  if (!day) return "-";
  const [y, m, d] = day.split("-").map(Number);
  return new Date(y!, m! - 1, d!).toLocaleDateString();
}

interface Filters {
  company: string;
  dateRange: DateRange;
}
const NO_FILTERS: Filters = { company: "all", dateRange: "none" };

export function ProductSearchDialog({
  open,
  onOpenChange,
  options,
  onSaved,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  options: FieldOptions | undefined;
  onSaved: () => void;
}) {
  const client = useTRPCClient();
  const [text, setText] = useState("");
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [results, setResults] = useState<ProductSearchResult[] | null>(null);
  const [loading, setLoading] = useState(false);
  const [page, setPage] = useState(1);
  const [sort, setSort] = useState<SortState<Column> | null>(null);
  const [form, setForm] = useState<TemplateFormValues | null>(null);
  const [categoriesNote, setCategoriesNote] = useState<string | null>(null);
  const [picking, setPicking] = useState<number | null>(null);
  const requestId = useRef(0);

  const reset = () => {
    requestId.current++;
    setText("");
    setFilters(NO_FILTERS);
    setResults(null);
    setLoading(false);
    setPage(1);
    setSort(null);
    setForm(null);
    setPicking(null);
  };

  const close = (next: boolean) => {
    if (!next) reset();
    onOpenChange(next);
  };

  /** Spec section 4: with no text and no filters the list empties and nothing is asked. */
  const search = async (q: string, f: Filters) => {
    const term = q.trim();
    const hasFilters = f.company !== "all" || f.dateRange !== "none";
    const id = ++requestId.current;
    setPage(1);
    if (!term && !hasFilters) {
      setResults(null);
      setLoading(false);
      return;
    }
    setLoading(true);
    try {
      const found = await client.templates.searchProducts.query({
        q: term || "*",
        ...(f.company !== "all" ? { company: f.company } : {}),
        dateRange: f.dateRange,
      });
      if (id !== requestId.current) return;
      setResults(found.map((p) => ({ ...p, pid: Number(p.pid), price: Number(p.price) })));
    } catch {
      if (id !== requestId.current) return;
      setResults([]);
      toast.error("Failed to search products", {
        description: "Could not retrieve search results from the server",
      });
    } finally {
      if (id === requestId.current) setLoading(false);
    }
  };

  const changeFilters = (next: Filters) => {
    setFilters(next);
    void search(text, next);
  };

  const pick = async (product: ProductSearchResult) => {
    setPicking(product.pid);
    let categories: string[] = [];
    let note: string | null = null;
    try {
      const entries = await client.templates.productCategories.query({ pid: product.pid });
      // Only the categories the form offers (a warehouse zone would show as a raw id).
      ({ values: categories, note } = templateCategoriesOf(entries, options?.categories));
    } catch {
      toast.error("Failed to fetch product categories", {
        description: "Could not retrieve categories for this product",
      });
    }
    setPicking(null);
    setCategoriesNote(note);
    setForm(productToForm(product, categories));
  };

  const sorted = useMemo(() => {
    if (!results || !sort) return results ?? [];
    return [...results].sort((a, b) => compareValues(a[sort.key], b[sort.key], sort.direction));
  }, [results, sort]);
  const pageCount = Math.ceil(sorted.length / PRODUCT_SEARCH_PAGE_SIZE);
  const rows = sorted.slice((page - 1) * PRODUCT_SEARCH_PAGE_SIZE, page * PRODUCT_SEARCH_PAGE_SIZE);
  const onSort = (column: Column) => {
    setSort((s) => cycleSort(s, column));
    setPage(1);
  };
  const showCompany = filters.company === "all";
  const hasResults = Boolean(results && results.length > 0);

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    void search(text, filters);
  };

  return (
    <Dialog open={open} onOpenChange={close}>
      <DialogContent
        data-testid="product-search-dialog"
        className={cn(
          // Grid children may shrink below their content (the wide table scrolls inside its box).
          "transition-[max-width] [&>*]:min-w-0",
          form ? "sm:max-w-3xl" : hasResults ? "sm:max-w-6xl" : "sm:max-w-2xl",
        )}
      >
        {form ? (
          <TemplateForm
            mode="fromProduct"
            initial={form}
            categoriesNote={categoriesNote}
            options={options}
            onCancel={() => setForm(null)}
            onSaved={() => {
              close(false);
              onSaved();
            }}
          />
        ) : (
          <>
            <DialogHeader>
              <DialogTitle>Search Products</DialogTitle>
              <DialogDescription>Search for a product you want to use as a template.</DialogDescription>
            </DialogHeader>

            <form onSubmit={onSubmit} className="flex gap-2">
              <div className="relative flex-1">
                <SearchIcon className="pointer-events-none absolute top-1/2 left-2.5 size-4 -translate-y-1/2 text-muted-foreground" />
                <Input
                  aria-label="Search products"
                  placeholder="Search by name, SKU, barcode or ID..."
                  value={text}
                  onChange={(e) => setText(e.target.value)}
                  className="pr-8 pl-8"
                  autoFocus
                />
                {text && (
                  <button
                    type="button"
                    aria-label="Clear search"
                    className="absolute top-1/2 right-2 -translate-y-1/2 rounded-sm p-0.5 text-muted-foreground hover:bg-muted hover:text-foreground"
                    onClick={() => {
                      setText("");
                      void search("", filters);
                    }}
                  >
                    <XIcon className="size-4" />
                  </button>
                )}
              </div>
              <Button type="submit" disabled={loading}>
                {loading ? <Loader2Icon className="animate-spin" /> : <SearchIcon />}
                Search
              </Button>
            </form>

            <div className="flex flex-wrap items-center gap-3">
              <div className="flex items-center gap-2">
                <span className="text-sm text-muted-foreground">Filter by Company</span>
                <Select
                  value={filters.company}
                  onValueChange={(company) => changeFilters({ ...filters, company })}
                >
                  <SelectTrigger className="w-52" size="sm" aria-label="Filter by Company">
                    <SelectValue />
                  </SelectTrigger>
                  <SelectContent>
                    <SelectItem value="all">Any Company</SelectItem>
                    {(options?.companies ?? []).map((c) => (
                      <SelectItem key={c.value} value={c.value}>
                        {c.label}
                      </SelectItem>
                    ))}
                  </SelectContent>
                </Select>
              </div>
              <div className="flex items-center gap-2">
                <span className="text-sm text-muted-foreground">Filter by Date</span>
                <Select
                  value={filters.dateRange}
                  onValueChange={(dateRange) =>
                    changeFilters({ ...filters, dateRange: dateRange as DateRange })
                  }
                >
                  <SelectTrigger className="w-40" size="sm" aria-label="Filter by Date">
                    <SelectValue />
                  </SelectTrigger>
                  <SelectContent>
                    {DATE_RANGES.map((r) => (
                      <SelectItem key={r} value={r}>
                        {DATE_RANGE_LABELS[r]}
                      </SelectItem>
                    ))}
                  </SelectContent>
                </Select>
              </div>
            </div>

            {(filters.company !== "all" || filters.dateRange !== "none") && (
              <div className="flex flex-wrap items-center gap-2" data-testid="active-filters">
                {filters.company !== "all" && (
                  <Badge variant="secondary" className="gap-1 pr-1">
                    Company: {companyLabel(options?.companies, filters.company)}
                    <button
                      type="button"
                      aria-label="Remove company filter"
                      className="rounded-sm hover:bg-muted-foreground/20"
                      onClick={() => changeFilters({ ...filters, company: "all" })}
                    >
                      <XIcon />
                    </button>
                  </Badge>
                )}
                {filters.dateRange !== "none" && (
                  <Badge variant="secondary" className="gap-1 pr-1">
                    Date: {DATE_RANGE_LABELS[filters.dateRange]}
                    <button
                      type="button"
                      aria-label="Remove date filter"
                      className="rounded-sm hover:bg-muted-foreground/20"
                      onClick={() => changeFilters({ ...filters, dateRange: "none" })}
                    >
                      <XIcon />
                    </button>
                  </Badge>
                )}
                <Button type="button" variant="ghost" size="sm" onClick={() => changeFilters(NO_FILTERS)}>
                  Clear All
                </Button>
              </div>
            )}

            <div data-testid="product-search-results" className="min-h-32">
              {loading ? (
                <div className="flex items-center justify-center gap-2 py-12 text-sm text-muted-foreground">
                  <Loader2Icon className="size-4 animate-spin" />
                  Searching...
                </div>
              ) : results === null ? (
                <div className="flex flex-col items-center justify-center gap-2 py-12 text-sm text-muted-foreground">
                  <PackageSearchIcon className="size-8 opacity-40" />
                  Use the search field or filters to find products
                </div>
              ) : results.length === 0 ? (
                <div className="py-12 text-center text-sm text-muted-foreground">
                  No products found matching your criteria
                </div>
              ) : (
                <div className="space-y-3">
                  <p className="text-sm text-muted-foreground" data-testid="product-count">
                    {results.length} products found
                  </p>
                  <div className="max-h-[50vh] overflow-auto rounded-md border">
                    <Table containerClassName="overflow-visible">
                      <TableHeader className="sticky top-0 z-10 bg-background">
                        <TableRow>
                          <SortableHead column="title" sort={sort} onSort={onSort}>
                            Name
                          </SortableHead>
                          {showCompany && (
                            <SortableHead column="brand" sort={sort} onSort={onSort}>
                              Company
                            </SortableHead>
                          )}
                          <SortableHead column="line" sort={sort} onSort={onSort}>
                            Line
                          </SortableHead>
                          <SortableHead column="price" sort={sort} onSort={onSort} className="text-right">
                            Price
                          </SortableHead>
                          <SortableHead
                            column="total_sold"
                            sort={sort}
                            onSort={onSort}
                            className="text-right"
                          >
                            Total Sold
                          </SortableHead>
                          <SortableHead column="first_received" sort={sort} onSort={onSort}>
                            Date In
                          </SortableHead>
                          <SortableHead column="date_last_sold" sort={sort} onSort={onSort}>
                            Last Sold
                          </SortableHead>
                        </TableRow>
                      </TableHeader>
                      <TableBody>
                        {rows.map((p) => (
                          <TableRow
                            key={p.pid}
                            data-testid="product-row"
                            className={cn("cursor-pointer", picking === p.pid && "opacity-60")}
                            onClick={() => picking === null && void pick(p)}
                          >
                            <TableCell className="max-w-96 truncate font-medium" title={p.title}>
                              {p.title}
                            </TableCell>
                            {showCompany && <TableCell>{p.brand ?? "-"}</TableCell>}
                            <TableCell>{p.line || "-"}</TableCell>
                            <TableCell className="text-right tabular-nums">
                              {p.price == null || Number.isNaN(p.price) ? "-" : formatCurrency(p.price)}
                            </TableCell>
                            <TableCell className="text-right tabular-nums">
                              {(p.total_sold ?? 0).toLocaleString()}
                            </TableCell>
                            <TableCell className="tabular-nums">{formatDay(p.first_received)}</TableCell>
                            <TableCell className="tabular-nums">{formatDay(p.date_last_sold)}</TableCell>
                          </TableRow>
                        ))}
                      </TableBody>
                    </Table>
                  </div>
                  <Pagination page={page} pageCount={pageCount} onPageChange={setPage} />
                </div>
              )}
            </div>
          </>
        )}
      </DialogContent>
    </Dialog>
  );
}
