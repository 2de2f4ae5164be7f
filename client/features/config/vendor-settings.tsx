// The Vendor Settings tab (spec sections 2 "Vendor-Specific Settings screen", 4 "Settings rows",
// 5 "Vendor settings"): every vendor, 50 a page, search debounced by 300 ms.
import { Badge } from "@client/components/ui/badge.tsx";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@client/components/ui/card.tsx";
import { SearchBox } from "@client/components/ui/search-box.tsx";
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
import { cn } from "@client/lib/utils.ts";
import {
  SETTINGS_PAGE_SIZE,
  VendorSettingInputSchema,
  type VendorSettingRow,
  type VendorSettingsPage,
} from "@shared/settings.ts";
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { toast } from "sonner";
import { SETTINGS_TEXT } from "./messages.ts";
import {
  DaysInput,
  DefaultsLegend,
  LoadError,
  PagingFooter,
  parseOptionalInt,
  RowActions,
} from "./parts.tsx";
import { useSettingsList } from "./use-settings-list.ts";

const COLUMNS = 4;
const countFormat = new Intl.NumberFormat("en-US");

interface VendorDraft {
  default_lead_time_days: string;
  default_days_of_stock: string;
}

const draftOf = (row: VendorSettingRow): VendorDraft => ({
  default_lead_time_days: row.default_lead_time_days?.toString() ?? "",
  default_days_of_stock: row.default_days_of_stock?.toString() ?? "",
});

const inputOf = (draft: VendorDraft) => ({
  default_lead_time_days: parseOptionalInt(draft.default_lead_time_days),
  default_days_of_stock: parseOptionalInt(draft.default_days_of_stock),
});

function VendorRow({
  row,
  defaults,
  draft,
  onDraft,
}: {
  row: VendorSettingRow;
  defaults: VendorSettingsPage["defaults"];
  draft: VendorDraft | undefined;
  onDraft: (draft: VendorDraft | undefined) => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const current = draft ?? draftOf(row);
  const changed =
    draft !== undefined && JSON.stringify(inputOf(draft)) !== JSON.stringify(inputOf(draftOf(row)));
  const parsed = VendorSettingInputSchema.safeParse(inputOf(current));
  const errors: Record<string, string> = {};
  if (!parsed.success)
    for (const issue of parsed.error.issues) errors[String(issue.path[0])] ??= issue.message;

  const save = useMutation(
    trpc.config.updateVendor.mutationOptions({
      onSuccess: (saved) => {
        queryClient.setQueriesData<VendorSettingsPage>(trpc.config.vendors.pathFilter(), (old) =>
          old ? { ...old, items: old.items.map((i) => (i.vendor === saved.vendor ? saved : i)) } : old,
        );
        onDraft(undefined);
        toast.success(SETTINGS_TEXT.vendorSaved(saved.vendor));
        // The products of this vendor now inherit differently.
        return queryClient.invalidateQueries(trpc.config.products.pathFilter());
      },
      onError: (error) => toast.error(SETTINGS_TEXT.rowSaveFailed("vendor", error)),
    }),
  );
  const reset = useMutation(
    trpc.config.resetVendor.mutationOptions({
      onSuccess: (fresh) => {
        onDraft(undefined);
        toast.success(SETTINGS_TEXT.vendorReset(fresh.vendor));
        return Promise.all([
          queryClient.invalidateQueries(trpc.config.vendors.pathFilter()),
          queryClient.invalidateQueries(trpc.config.products.pathFilter()),
        ]);
      },
      onError: (error) => toast.error(SETTINGS_TEXT.rowResetFailed("vendor", error)),
    }),
  );
  const busy = save.isPending || reset.isPending;
  const leadFallback = row.quoted_lead_time_days ?? defaults.lead_time_days;

  return (
    <TableRow
      data-testid="vendor-row"
      data-vendor={row.vendor}
      data-changed={changed ? "true" : undefined}
      className={cn("align-top", changed && "bg-amber-50/70 hover:bg-amber-50 dark:bg-amber-950/20")}
    >
      <TableCell data-primary className="py-2.5">
        <div className="flex items-center gap-2">
          <span className="font-medium">{row.vendor}</span>
          {row.has_override && (
            <Badge
              variant="secondary"
              className="px-1.5 py-0 text-[10px]"
              title="This vendor has defaults of its own"
            >
              Custom
            </Badge>
          )}
        </div>
        <div className="text-xs text-muted-foreground tabular-nums">
          {countFormat.format(row.product_count)} {row.product_count === 1 ? "product" : "products"}
        </div>
      </TableCell>
      <TableCell data-label="Default Lead Time (days)">
        <DaysInput
          label={`Default lead time (days) for ${row.vendor}`}
          value={current.default_lead_time_days}
          onChange={(v) => onDraft({ ...current, default_lead_time_days: v })}
          fallback={leadFallback}
          fallbackTitle={
            row.quoted_lead_time_days !== null
              ? "Blank uses the lead time this vendor quotes"
              : "Blank uses the global default"
          }
          error={errors.default_lead_time_days}
          disabled={busy}
        />
      </TableCell>
      <TableCell data-label="Default Days of Stock">
        <DaysInput
          label={`Default days of stock for ${row.vendor}`}
          value={current.default_days_of_stock}
          onChange={(v) => onDraft({ ...current, default_days_of_stock: v })}
          fallback={defaults.days_of_stock}
          fallbackTitle="Blank uses the global default"
          error={errors.default_days_of_stock}
          disabled={busy}
        />
      </TableCell>
      <TableCell data-actions>
        <RowActions
          label={`vendor ${row.vendor}`}
          changed={changed}
          canSave={changed && parsed.success}
          canReset
          saving={save.isPending}
          resetting={reset.isPending}
          onSave={() => parsed.success && save.mutate({ vendor: row.vendor, settings: parsed.data })}
          onReset={() => reset.mutate({ vendor: row.vendor })}
        />
      </TableCell>
    </TableRow>
  );
}

export default function VendorSettings() {
  const trpc = useTRPC();
  const { search, setSearch, debounced, page, setPage, drafts, setDraft } = useSettingsList<
    string,
    VendorDraft
  >();

  const query = useQuery(
    trpc.config.vendors.queryOptions(
      { page, pageSize: SETTINGS_PAGE_SIZE, search: debounced },
      { placeholderData: keepPreviousData },
    ),
  );
  useEffect(() => {
    if (query.error) toast.error(SETTINGS_TEXT.loadFailed("vendor"));
  }, [query.error]);

  return (
    <Card data-testid="vendor-settings" className="gap-4">
      <CardHeader className="gap-3 sm:grid-cols-[1fr_auto]">
        <div className="space-y-1.5">
          <CardTitle className="text-lg">Vendor Settings</CardTitle>
          <CardDescription>Configure default settings for products from specific vendors</CardDescription>
        </div>
        <SearchBox
          value={search}
          onChange={setSearch}
          placeholder="Search vendors..."
          busy={query.isFetching}
        />
      </CardHeader>
      <CardContent className="space-y-3 px-0">
        {query.error && !query.data ? (
          <div className="px-6">
            <LoadError message={SETTINGS_TEXT.loadFailed("vendor")} onRetry={() => void query.refetch()} />
          </div>
        ) : (
          <Table
            stackOnPhone
            className={cn(
              "[&_td:first-child]:pl-6 [&_td:last-child]:pr-6 [&_th:first-child]:pl-6 [&_th:last-child]:pr-6",
              query.isPlaceholderData && "opacity-60",
            )}
          >
            <TableHeader>
              <TableRow className="hover:bg-transparent">
                <TableHead>Vendor</TableHead>
                <TableHead>Default Lead Time (days)</TableHead>
                <TableHead>Default Days of Stock</TableHead>
                <TableHead className="text-right">Actions</TableHead>
              </TableRow>
            </TableHeader>
            <TableBody>
              {query.isPending ? (
                <TableSkeletonRows columns={COLUMNS} />
              ) : query.data?.items.length ? (
                query.data.items.map((row) => (
                  <VendorRow
                    key={row.vendor}
                    row={row}
                    defaults={query.data.defaults}
                    draft={drafts[row.vendor]}
                    onDraft={(d) => setDraft(row.vendor, d)}
                  />
                ))
              ) : (
                <TableEmptyRow
                  colSpan={COLUMNS}
                  message={debounced ? "No vendors match your search" : "No vendors found"}
                />
              )}
            </TableBody>
          </Table>
        )}
        {query.data && query.data.items.length > 0 && (
          <DefaultsLegend>
            Blank fields use the default shown in grey: the lead time the vendor quotes, else the global
            default.
          </DefaultsLegend>
        )}
      </CardContent>
      {query.data && (
        <PagingFooter
          page={page}
          pageSize={SETTINGS_PAGE_SIZE}
          total={query.data.total}
          noun="vendors"
          onPageChange={setPage}
        />
      )}
    </Card>
  );
}
