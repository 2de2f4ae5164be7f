// The Product Settings tab (spec sections 2 "Product-Specific Settings screen", 4 "Settings rows",
// 5 "Product settings"): every product, 50 a page, with per-row Save (once changed) and Reset.
import { Badge } from "@client/components/ui/badge.tsx";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@client/components/ui/card.tsx";
import { Checkbox } from "@client/components/ui/checkbox.tsx";
import { Input } from "@client/components/ui/input.tsx";
import { SearchBox } from "@client/components/ui/search-box.tsx";
import {
  Select,
  SelectContent,
  SelectItem,
  SelectTrigger,
  SelectValue,
} from "@client/components/ui/select.tsx";
import { Skeleton } from "@client/components/ui/skeleton.tsx";
import {
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableHeader,
  TableRow,
} from "@client/components/ui/table.tsx";
import { TableEmptyRow, TableSkeletonRows } from "@client/components/ui/table-helpers.tsx";
import { useTRPC } from "@client/lib/trpc.ts";
import { useIsMobile } from "@client/lib/use-mobile.ts";
import { cn } from "@client/lib/utils.ts";
import {
  FORECAST_METHOD_LABELS,
  FORECAST_METHODS,
  type ForecastMethod,
  type Paged,
  ProductSettingInputSchema,
  type ProductSettingRow,
  SETTINGS_PAGE_SIZE,
} from "@shared/settings.ts";
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type ReactNode, useEffect } from "react";
import { toast } from "sonner";
import { SETTINGS_TEXT } from "./messages.ts";
import {
  CELL_INPUT_CLASS,
  DaysInput,
  DefaultsLegend,
  LoadError,
  PagingFooter,
  parseOptionalInt,
  RowActions,
  sourceText,
} from "./parts.tsx";
import { useSettingsList } from "./use-settings-list.ts";

const COLUMNS = 7;

/** A row as edited: number fields as typed, so a half-typed value is not lost. */
interface ProductDraft {
  lead_time_days: string;
  days_of_stock: string;
  safety_stock: string;
  forecast_method: ForecastMethod | null;
  exclude_from_forecast: boolean;
}

function draftOf(row: ProductSettingRow): ProductDraft {
  return {
    lead_time_days: row.lead_time_days?.toString() ?? "",
    days_of_stock: row.days_of_stock?.toString() ?? "",
    safety_stock: row.safety_stock ? String(row.safety_stock) : "",
    forecast_method: row.forecast_method,
    exclude_from_forecast: row.exclude_from_forecast,
  };
}

/** Spec section 5: blank lead time / days of stock mean null; an invalid safety stock becomes 0. */
function inputOf(draft: ProductDraft) {
  const safety = Number(draft.safety_stock.trim() || "0");
  return {
    lead_time_days: parseOptionalInt(draft.lead_time_days),
    days_of_stock: parseOptionalInt(draft.days_of_stock),
    safety_stock: Number.isInteger(safety) && safety >= 0 ? safety : 0,
    forecast_method: draft.forecast_method,
    exclude_from_forecast: draft.exclude_from_forecast,
  };
}

const sameInput = (a: ProductDraft, b: ProductDraft) =>
  JSON.stringify(inputOf(a)) === JSON.stringify(inputOf(b));

function ProductRow({
  row,
  draft,
  onDraft,
  layout,
}: {
  row: ProductSettingRow;
  draft: ProductDraft | undefined;
  onDraft: (draft: ProductDraft | undefined) => void;
  layout: "table" | "card";
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const current = draft ?? draftOf(row);
  const changed = draft !== undefined && !sameInput(draft, draftOf(row));
  const parsed = ProductSettingInputSchema.safeParse(inputOf(current));
  const errors: Record<string, string> = {};
  if (!parsed.success)
    for (const issue of parsed.error.issues) errors[String(issue.path[0])] ??= issue.message;

  const set = (patch: Partial<ProductDraft>) => onDraft({ ...current, ...patch });

  const save = useMutation(
    trpc.config.updateProduct.mutationOptions({
      onSuccess: (saved) => {
        queryClient.setQueriesData<Paged<ProductSettingRow>>(trpc.config.products.pathFilter(), (old) =>
          old ? { ...old, items: old.items.map((i) => (i.pid === saved.pid ? saved : i)) } : old,
        );
        onDraft(undefined);
        toast.success(SETTINGS_TEXT.productSaved(saved.pid));
      },
      onError: (error) => toast.error(SETTINGS_TEXT.rowSaveFailed("product", error)),
    }),
  );
  const reset = useMutation(
    trpc.config.resetProduct.mutationOptions({
      onSuccess: (fresh) => {
        onDraft(undefined);
        toast.success(SETTINGS_TEXT.productReset(fresh.pid));
        return queryClient.invalidateQueries(trpc.config.products.pathFilter());
      },
      onError: (error) => toast.error(SETTINGS_TEXT.rowResetFailed("product", error)),
    }),
  );
  const busy = save.isPending || reset.isPending;
  const { inherited } = row;

  const custom = row.has_override && (
    <Badge
      variant="secondary"
      className="px-1.5 py-0 text-[10px]"
      title="This product has settings of its own"
    >
      Custom
    </Badge>
  );
  const leadTime = (
    <DaysInput
      label={`Lead time (days) for product ${row.pid}`}
      value={current.lead_time_days}
      onChange={(v) => set({ lead_time_days: v })}
      fallback={inherited.lead_time_days}
      fallbackTitle={sourceText(inherited.lead_time_source, row.vendor)}
      error={errors.lead_time_days}
      disabled={busy}
    />
  );
  const daysOfStock = (
    <DaysInput
      label={`Days of stock for product ${row.pid}`}
      value={current.days_of_stock}
      onChange={(v) => set({ days_of_stock: v })}
      fallback={inherited.days_of_stock}
      fallbackTitle={sourceText(inherited.days_of_stock_source, row.vendor)}
      error={errors.days_of_stock}
      disabled={busy}
    />
  );
  const safetyStock = (
    <Input
      type="number"
      inputMode="numeric"
      min={0}
      step={1}
      aria-label={`Safety stock for product ${row.pid}`}
      title="Units of safety stock; blank or 0 = computed from the global safety stock days and service level"
      placeholder="Auto"
      value={current.safety_stock}
      disabled={busy}
      onChange={(e) => set({ safety_stock: e.target.value })}
      className={CELL_INPUT_CLASS}
    />
  );
  const method = (
    <Select
      value={current.forecast_method ?? "default"}
      disabled={busy}
      onValueChange={(v) => set({ forecast_method: v === "default" ? null : (v as ForecastMethod) })}
    >
      <SelectTrigger
        size="sm"
        className="w-28"
        aria-label={`Forecast method for product ${row.pid}`}
        title={`Default: ${FORECAST_METHOD_LABELS[inherited.forecast_method]}`}
      >
        <SelectValue />
      </SelectTrigger>
      <SelectContent>
        <SelectItem value="default">Default</SelectItem>
        {FORECAST_METHODS.map((m) => (
          <SelectItem key={m} value={m}>
            {FORECAST_METHOD_LABELS[m]}
          </SelectItem>
        ))}
      </SelectContent>
    </Select>
  );
  const exclude = (
    <Checkbox
      aria-label={`Exclude product ${row.pid} from forecasting`}
      checked={current.exclude_from_forecast}
      disabled={busy}
      onCheckedChange={(checked) => set({ exclude_from_forecast: checked === true })}
    />
  );
  const actions = (
    <RowActions
      label={`product ${row.pid}`}
      changed={changed}
      canSave={changed && parsed.success}
      canReset
      saving={save.isPending}
      resetting={reset.isPending}
      onSave={() => parsed.success && save.mutate({ pid: row.pid, settings: parsed.data })}
      onReset={() => reset.mutate({ pid: row.pid })}
    />
  );
  const changedClass = changed && "bg-amber-50/70 dark:bg-amber-950/20";

  if (layout === "card") {
    // Phones: one card per product, every field labelled, nothing scrolling sideways.
    return (
      <li
        data-testid="product-row"
        data-pid={row.pid}
        data-changed={changed ? "true" : undefined}
        className={cn("space-y-3 px-4 py-4", changedClass)}
      >
        <div className="flex items-start justify-between gap-3">
          <div className="min-w-0">
            <div className="flex items-center gap-2">
              <span className="font-medium tabular-nums">{row.pid}</span>
              {custom}
            </div>
            <div className="text-xs break-words text-muted-foreground">{row.product_name}</div>
          </div>
          {actions}
        </div>
        <div className="grid grid-cols-2 gap-x-4 gap-y-3">
          <CardField label="Lead Time (days)">{leadTime}</CardField>
          <CardField label="Days of Stock">{daysOfStock}</CardField>
          <CardField label="Safety Stock">{safetyStock}</CardField>
          <CardField label="Forecast Method">{method}</CardField>
        </div>
        <div className="flex items-center gap-2 text-sm">
          {exclude}
          <span>Exclude from forecasting</span>
        </div>
      </li>
    );
  }

  return (
    <TableRow
      data-testid="product-row"
      data-pid={row.pid}
      data-changed={changed ? "true" : undefined}
      className={cn("align-top", changedClass, changed && "hover:bg-amber-50")}
    >
      <TableCell className="py-2.5">
        <div className="flex items-center gap-2">
          <span className="font-medium tabular-nums">{row.pid}</span>
          {custom}
        </div>
        <div className="max-w-44 truncate text-xs text-muted-foreground" title={row.product_name}>
          {row.product_name}
        </div>
      </TableCell>
      <TableCell>{leadTime}</TableCell>
      <TableCell>{daysOfStock}</TableCell>
      <TableCell>{safetyStock}</TableCell>
      <TableCell>{method}</TableCell>
      <TableCell>
        <div className="flex h-8 items-center justify-center">{exclude}</div>
      </TableCell>
      <TableCell>{actions}</TableCell>
    </TableRow>
  );
}

/** A labelled field of a phone card (the table's column header, above its input). */
function CardField({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="space-y-1">
      <div className="text-xs font-medium text-muted-foreground">{label}</div>
      {children}
    </div>
  );
}

/** Headers over narrow input columns wrap onto two lines, so the table fits beside the settings nav. */
const WRAP_HEAD = "h-auto w-20 py-2 leading-tight whitespace-normal";

export default function ProductSettings() {
  const trpc = useTRPC();
  const { search, setSearch, debounced, page, setPage, drafts, setDraft } = useSettingsList<
    number,
    ProductDraft
  >();

  const query = useQuery(
    trpc.config.products.queryOptions(
      { page, pageSize: SETTINGS_PAGE_SIZE, search: debounced },
      { placeholderData: keepPreviousData },
    ),
  );
  useEffect(() => {
    if (query.error) toast.error(SETTINGS_TEXT.loadFailed("product"));
  }, [query.error]);
  const isMobile = useIsMobile();
  const emptyText = debounced ? "No products match your search" : "No products found";

  return (
    <Card data-testid="product-settings" className="gap-4">
      <CardHeader className="gap-3 sm:grid-cols-[1fr_auto]">
        <div className="space-y-1.5">
          <CardTitle className="text-lg">Product Settings</CardTitle>
          <CardDescription>
            Configure settings for individual products that override global defaults
          </CardDescription>
        </div>
        <SearchBox
          value={search}
          onChange={setSearch}
          placeholder="Search products by ID or name..."
          busy={query.isFetching}
        />
      </CardHeader>
      <CardContent className="space-y-3 px-0">
        {query.error && !query.data ? (
          <div className="px-6">
            <LoadError message={SETTINGS_TEXT.loadFailed("product")} onRetry={() => void query.refetch()} />
          </div>
        ) : isMobile ? (
          <ul
            data-testid="product-cards"
            className={cn("divide-y border-y", query.isPlaceholderData && "opacity-60")}
          >
            {query.isPending ? (
              Array.from({ length: 5 }, (_, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: static placeholders
                <li key={i} className="space-y-2 px-4 py-4">
                  <Skeleton className="h-4 w-1/3" />
                  <Skeleton className="h-8 w-full" />
                </li>
              ))
            ) : query.data?.items.length ? (
              query.data.items.map((row) => (
                <ProductRow
                  key={row.pid}
                  row={row}
                  draft={drafts[row.pid]}
                  onDraft={(d) => setDraft(row.pid, d)}
                  layout="card"
                />
              ))
            ) : (
              <li className="px-4 py-8 text-center text-sm text-muted-foreground">{emptyText}</li>
            )}
          </ul>
        ) : (
          <Table
            className={cn(
              "[&_td:first-child]:pl-6 [&_th:first-child]:pl-6 [&_td:last-child]:pr-6 [&_th:last-child]:pr-6",
              query.isPlaceholderData && "opacity-60",
            )}
          >
            <TableHeader>
              <TableRow className="hover:bg-transparent">
                <TableHead>Product ID</TableHead>
                <TableHead className={WRAP_HEAD}>Lead Time (days)</TableHead>
                <TableHead className={WRAP_HEAD}>Days of Stock</TableHead>
                <TableHead className={WRAP_HEAD}>Safety Stock</TableHead>
                <TableHead className={WRAP_HEAD}>Forecast Method</TableHead>
                <TableHead className="text-center">Exclude</TableHead>
                <TableHead className="text-right">Actions</TableHead>
              </TableRow>
            </TableHeader>
            <TableBody>
              {query.isPending ? (
                <TableSkeletonRows columns={COLUMNS} />
              ) : query.data?.items.length ? (
                query.data.items.map((row) => (
                  <ProductRow
                    key={row.pid}
                    row={row}
                    draft={drafts[row.pid]}
                    onDraft={(d) => setDraft(row.pid, d)}
                    layout="table"
                  />
                ))
              ) : (
                <TableEmptyRow colSpan={COLUMNS} message={emptyText} />
              )}
            </TableBody>
          </Table>
        )}
        {query.data && query.data.items.length > 0 && (
          <DefaultsLegend>
            Blank fields use the default shown in grey: the vendor's settings or quote, else the global
            default. A blank or 0 safety stock is computed (Auto).
          </DefaultsLegend>
        )}
      </CardContent>
      {query.data && (
        <PagingFooter
          page={page}
          pageSize={SETTINGS_PAGE_SIZE}
          total={query.data.total}
          noun="products"
          onPageChange={setPage}
        />
      )}
    </Card>
  );
}
