// The Overview (/overview, docs/metrics.md §18): the business at a glance for any period — KPIs
// against the previous period or last year, and breakdowns by category (tree), brand and vendor
// with their change and a 12-week sparkline; each row opens the filtered Products page; each table
// downloads as CSV for those allowed. One query: analytics.overview.
import { Skeleton } from "@client/components/ui/skeleton.tsx";
import { Tabs, TabsContent, TabsList, TabsTrigger } from "@client/components/ui/tabs.tsx";
import { LoadError } from "@client/features/config/parts.tsx";
import { NoData } from "@client/features/dashboard/dashboard-page.tsx";
import { AsOfHeader, formatKpi, KpiCard, KpiChange } from "@client/features/dashboard/kpi.tsx";
import { DASH } from "@client/features/products/format.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import { cn } from "@client/lib/utils.ts";
import {
  BREAKDOWN_DIMS,
  type BreakdownDim,
  COMPARE_LABELS,
  type OverviewKpi,
  type OverviewSummary,
  PERIOD_LABELS,
} from "@shared/analytics.ts";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { BreakdownTable } from "./breakdown-table.tsx";
import { PeriodPicker, type PeriodSearch, periodInputOf, periodQuery } from "./period-picker.tsx";

export interface OverviewSearch extends PeriodSearch {
  tab?: BreakdownDim;
}

export function OverviewPage({
  search,
  onSearchChange,
}: {
  search: OverviewSearch;
  onSearchChange: (next: OverviewSearch) => void;
}) {
  const trpc = useTRPC();
  const query = useQuery({
    ...trpc.analytics.overview.queryOptions(periodInputOf(search)),
    placeholderData: keepPreviousData,
    retry: (n, err) => n < 2 && !/^(from|to):/.test(err.message),
  });
  const data = query.data;
  const tab = search.tab ?? "category";
  return (
    <div className="space-y-6" data-testid="overview-page">
      <AsOfHeader title="Overview" asOf={data?.data.as_of} loading={!data} />
      {data && !data.has_data ? (
        <NoData href={data.data_management_href} />
      ) : (
        <>
          <PeriodPicker
            value={search}
            onChange={(next) => onSearchChange({ ...search, ...next })}
            asOfDay={data?.data.as_of_day ?? null}
          />
          {query.isError ? (
            <LoadError message={query.error.message} onRetry={() => void query.refetch()} />
          ) : !data ? (
            <OverviewSkeleton />
          ) : (
            <div
              className={cn("space-y-6", query.isPlaceholderData && "opacity-60")}
              aria-busy={query.isFetching}
            >
              <PeriodLine data={data} />
              <Kpis data={data} />
              <section className="space-y-3" aria-labelledby="breakdowns">
                <h2 id="breakdowns" className="text-base font-semibold">
                  Breakdowns
                </h2>
                <Tabs
                  value={tab}
                  onValueChange={(v) => onSearchChange({ ...search, tab: v as BreakdownDim })}
                >
                  <TabsList>
                    <TabsTrigger value="category">Categories</TabsTrigger>
                    <TabsTrigger value="brand">Brands</TabsTrigger>
                    <TabsTrigger value="vendor">Vendors</TabsTrigger>
                  </TabsList>
                  {BREAKDOWN_DIMS.map((dim) => (
                    <TabsContent key={dim} value={dim}>
                      <BreakdownTable
                        dim={dim}
                        rows={data.breakdowns[dim]}
                        exportHref={
                          data.can_export ? `/api/overview/export?table=${dim}&${periodQuery(search)}` : null
                        }
                      />
                    </TabsContent>
                  ))}
                </Tabs>
              </section>
            </div>
          )}
        </>
      )}
    </div>
  );
}

function OverviewSkeleton() {
  return (
    <div className="space-y-4" aria-busy="true">
      <div className="grid gap-3 sm:grid-cols-2 lg:grid-cols-4">
        {["a", "b", "c", "d"].map((k) => (
          <Skeleton key={k} className="h-24" />
        ))}
      </div>
      <Skeleton className="h-64 w-full" />
    </div>
  );
}

function PeriodLine({ data }: { data: OverviewSummary }) {
  const p = data.period;
  if (!p) return null;
  return (
    <p className="text-sm text-muted-foreground" data-testid="period-line">
      <span className="font-medium text-foreground">{PERIOD_LABELS[p.key]}</span>: {p.current.from} –{" "}
      {p.current.to} ({p.days} days), compared with {COMPARE_LABELS[p.compare].toLowerCase()}{" "}
      {p.comparison.from} – {p.comparison.to}.
    </p>
  );
}

function Change({ kpi }: { kpi: OverviewKpi }) {
  const { current, comparison } = kpi;
  if (current == null || comparison == null) {
    // Say why (when the comparison is the blank one): e.g. no stock figures that far back.
    const why = current != null ? kpi.comparison_reason : null;
    return (
      <span className="text-xs text-muted-foreground" title={why ?? "No figure to compare with"}>
        vs {DASH}
        {why && (
          <span className="block" data-testid="kpi-compare-blank">
            {why}
          </span>
        )}
      </span>
    );
  }
  return (
    <KpiChange
      kpi={kpi}
      current={current}
      base={comparison}
      className="flex flex-wrap items-center gap-x-0.5 text-xs"
      title={`Compared with ${formatKpi(kpi, comparison)}`}
    >
      {(text) => (
        <>
          <span className="whitespace-nowrap">{text}</span>
          <span className="whitespace-nowrap text-muted-foreground">(was {formatKpi(kpi, comparison)})</span>
        </>
      )}
    </KpiChange>
  );
}

function Kpis({ data }: { data: OverviewSummary }) {
  return (
    <section aria-label="Key figures" className="grid grid-cols-2 gap-3 lg:grid-cols-4 xl:grid-cols-6">
      {data.kpis.map((kpi) => (
        <KpiCard key={kpi.key} kpi={kpi} valueClassName="mt-1 text-xl font-semibold tabular-nums sm:text-2xl">
          {kpi.current == null && kpi.blank_reason && (
            <div className="text-xs text-muted-foreground" data-testid="kpi-blank">
              {kpi.blank_reason}
            </div>
          )}
          <div className="mt-1">
            <Change kpi={kpi} />
          </div>
        </KpiCard>
      ))}
      <p className="col-span-2 text-xs text-muted-foreground lg:col-span-4 xl:col-span-6">
        Hover or tap a figure's name for how it is computed (docs/metrics.md §18).
      </p>
    </section>
  );
}
