// The Dashboard (/dashboard, docs/metrics.md §14): the data's age, "Needs action today" (each tile
// opens the Products page with its own filter), the KPIs of the last 7 or 30 days with their change
// against the period before and last year, and three charts. One query: dashboard.summary.
import { Button } from "@client/components/ui/button.tsx";
import { Skeleton } from "@client/components/ui/skeleton.tsx";
import { ChartCard } from "@client/features/charts/chart-card.tsx";
import { LoadError } from "@client/features/config/parts.tsx";
import { DASH, formatMoneyShort, formatNumber } from "@client/features/products/format.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import { cn } from "@client/lib/utils.ts";
import type { DashboardSummary, DashboardTile, DataAge, Kpi, KpiPeriod } from "@shared/dashboard.ts";
import { useQuery } from "@tanstack/react-query";
import { useRouter } from "@tanstack/react-router";
import { AlertTriangleIcon, DatabaseIcon } from "lucide-react";
import { useState } from "react";
import { SalesChart, StatusValueChart, StockValueChart } from "./charts.tsx";
import { formatMoment } from "./format.ts";
import { AsOfHeader, formatKpi, KpiCard, KpiChange } from "./kpi.tsx";

export function DashboardPage() {
  const trpc = useTRPC();
  const summary = useQuery(trpc.dashboard.summary.queryOptions());
  const data = summary.data;
  return (
    <div className="space-y-6" data-testid="dashboard-page">
      <AsOfHeader title="Dashboard" asOf={data?.data.as_of} loading={!data} />
      {summary.isError ? (
        <LoadError message={summary.error.message} onRetry={() => void summary.refetch()} />
      ) : !data ? (
        <DashboardSkeleton />
      ) : !data.has_data ? (
        <NoData href={data.data_management_href} />
      ) : (
        <>
          <DataAgeCard data={data.data} href={data.data_management_href} />
          <Tiles tiles={data.tiles} />
          {data.purchase_orders && <PurchaseOrderTiles tiles={data.purchase_orders} />}
          <Kpis periods={data.kpis} />
          <Charts charts={data.charts} />
        </>
      )}
    </div>
  );
}

/** No calculation yet: say so, with the way to run one for those allowed. */
export function NoData({ href }: { href: string | null }) {
  return (
    <div
      data-testid="dashboard-empty"
      className="flex flex-col items-center gap-3 rounded-xl border border-dashed bg-muted/30 px-6 py-16 text-center"
    >
      <DatabaseIcon className="size-6 text-muted-foreground" aria-hidden />
      <p className="text-sm font-medium">No data yet: run a full update or reset</p>
      {href ? (
        <Button asChild size="sm" variant="outline">
          <a href={href}>Open Data Management</a>
        </Button>
      ) : (
        <p className="text-sm text-muted-foreground">Ask someone who manages the data to run one.</p>
      )}
    </div>
  );
}

function DashboardSkeleton() {
  return (
    <div className="space-y-4" aria-busy="true">
      <Skeleton className="h-16 w-full" />
      <div className="grid gap-3 sm:grid-cols-2 lg:grid-cols-5">
        {["a", "b", "c", "d", "e"].map((k) => (
          <Skeleton key={k} className="h-28" />
        ))}
      </div>
      <Skeleton className="h-64 w-full" />
    </div>
  );
}

/** The last import and calculation; a warning when old, an error card when the last run failed. */
export function DataAgeCard({ data, href }: { data: DataAge; href: string | null }) {
  const failed = data.last_run_failed;
  return (
    <div className="space-y-2">
      {failed && (
        <div
          role="alert"
          data-testid="run-failed"
          className="flex flex-wrap items-center gap-3 rounded-lg border border-red-300 bg-red-50 px-4 py-3 text-sm text-red-900 dark:border-red-900 dark:bg-red-950 dark:text-red-200"
        >
          <AlertTriangleIcon className="size-4 shrink-0" aria-hidden />
          <span className="min-w-0 flex-1">
            The last {failed.type === "reset" ? "full reset" : "full update"} failed (
            {formatMoment(failed.at)}): {failed.message}. The figures below are from the last successful run.
          </span>
          {href && (
            <a className="font-medium underline" href={href}>
              Open Data Management
            </a>
          )}
        </div>
      )}
      {data.warning && (
        <div
          role="status"
          data-testid="stale-warning"
          className="flex items-center gap-3 rounded-lg border border-amber-300 bg-amber-50 px-4 py-3 text-sm text-amber-900 dark:border-amber-900 dark:bg-amber-950 dark:text-amber-200"
        >
          <AlertTriangleIcon className="size-4 shrink-0" aria-hidden />
          <span>{data.warning}</span>
        </div>
      )}
      <p className="text-xs text-muted-foreground" data-testid="data-age">
        Last import {data.last_import ? formatMoment(data.last_import) : "never"} · last calculation{" "}
        {data.last_calculation ? formatMoment(data.last_calculation) : "never"}
      </p>
    </div>
  );
}

const TONES: Record<DashboardTile["tone"], string> = {
  danger: "border-l-red-500",
  warning: "border-l-amber-500",
  info: "border-l-sky-500",
};

function Tiles({ tiles }: { tiles: DashboardTile[] }) {
  return (
    <section aria-labelledby="needs-action" className="space-y-3">
      <h2 id="needs-action" className="text-base font-semibold">
        Needs action today
      </h2>
      <div className="grid gap-3 sm:grid-cols-2 lg:grid-cols-3 xl:grid-cols-5">
        {tiles.map((tile) => (
          <TileCard key={tile.key} tile={tile} />
        ))}
      </div>
    </section>
  );
}

type TileLike = Pick<DashboardTile, "label" | "count" | "value" | "value_label" | "tone" | "how" | "href"> & {
  key: string;
};

/** The purchase-order tiles: each opens the purchase-order list with the same filter. */
function PurchaseOrderTiles({ tiles }: { tiles: TileLike[] }) {
  return (
    <section aria-labelledby="purchase-orders" className="space-y-3" data-testid="po-tiles">
      <h2 id="purchase-orders" className="text-base font-semibold">
        Purchase orders
      </h2>
      <div className="grid gap-3 sm:grid-cols-2 lg:grid-cols-4">
        {tiles.map((tile) => (
          <TileCard key={tile.key} tile={tile} testId="po-tile" />
        ))}
      </div>
    </section>
  );
}

function TileCard({ tile, testId = "tile" }: { tile: TileLike; testId?: string }) {
  const body = (
    <>
      <div className="text-sm font-medium text-muted-foreground">{tile.label}</div>
      <div className="mt-1 text-3xl font-semibold tabular-nums" data-testid="tile-count">
        {formatNumber(tile.count)}
      </div>
      <div className="mt-1 text-xs text-muted-foreground" data-testid="tile-value">
        {tile.count === 0 ? "Nothing to do" : `${formatMoneyShort(tile.value)} ${tile.value_label}`}
      </div>
    </>
  );
  const className = cn(
    "block rounded-xl border border-l-4 bg-card p-4 shadow-xs",
    tile.count > 0 ? TONES[tile.tone] : "border-l-emerald-500",
  );
  const router = useRouter();
  const href = tile.href;
  return href ? (
    <a
      href={href}
      onClick={(e) => {
        if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        router.history.push(href);
      }}
      className={cn(
        className,
        "transition-colors hover:bg-muted/50 focus-visible:ring-2 focus-visible:ring-ring",
      )}
      data-testid={testId}
      data-key={tile.key}
      title={tile.how}
    >
      {body}
    </a>
  ) : (
    <div className={className} data-testid={testId} data-key={tile.key} title={tile.how}>
      {body}
    </div>
  );
}

/** The change from `base` to the figure: relative for amounts, in points for percentages. */
function Change({ kpi, base, label }: { kpi: Kpi; base: number | null; label: string }) {
  const value = kpi.current;
  if (value == null || base == null) {
    return (
      <span className="text-muted-foreground" title={`No figure for ${label}`}>
        {label}: {DASH}
      </span>
    );
  }
  return (
    <KpiChange
      kpi={kpi}
      current={value}
      base={base}
      // In a narrow card the change goes under its label rather than past the card's edge.
      className="flex flex-wrap items-center gap-x-1 gap-y-0"
      title={`${label}: ${formatKpi(kpi, base)}`}
    >
      {(text) => (
        <>
          <span className="whitespace-nowrap">{label}:</span>
          <span className="whitespace-nowrap font-medium">{text}</span>
        </>
      )}
    </KpiChange>
  );
}

function Kpis({ periods }: { periods: KpiPeriod[] }) {
  const [days, setDays] = useState<7 | 30>(7);
  const period = periods.find((p) => p.days === days) ?? periods[0];
  if (!period) return null;
  return (
    <section aria-labelledby="kpis" className="space-y-3">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h2 id="kpis" className="text-base font-semibold">
          Last {period.days} days{" "}
          <span className="text-sm font-normal text-muted-foreground">
            ({period.current.from} – {period.current.to})
          </span>
        </h2>
        <fieldset className="inline-flex rounded-md border p-0.5" aria-label="Period">
          {([7, 30] as const).map((d) => (
            <button
              key={d}
              type="button"
              aria-pressed={days === d}
              onClick={() => setDays(d)}
              className={cn(
                "rounded px-3 py-1 text-sm",
                days === d ? "bg-primary text-primary-foreground" : "text-muted-foreground hover:bg-muted",
              )}
            >
              {d} days
            </button>
          ))}
        </fieldset>
      </div>
      <div className="grid gap-3 sm:grid-cols-2 lg:grid-cols-3 xl:grid-cols-5">
        {period.figures.map((kpi) => (
          <KpiCard key={kpi.key} kpi={kpi} valueClassName="mt-1 text-2xl font-semibold tabular-nums">
            <div className="mt-2 flex flex-col gap-0.5 text-xs">
              <Change kpi={kpi} base={kpi.previous} label={`vs previous ${period.days} days`} />
              <Change kpi={kpi} base={kpi.last_year} label="vs last year" />
            </div>
          </KpiCard>
        ))}
      </div>
      <p className="text-xs text-muted-foreground">
        Previous period {period.previous.from} – {period.previous.to}; last year {period.last_year.from} –{" "}
        {period.last_year.to} (52 weeks earlier, so weekdays line up). Hover a figure's name for how it is
        computed.
      </p>
    </section>
  );
}

function Charts({ charts }: { charts: DashboardSummary["charts"] }) {
  return (
    <section className="grid gap-4 xl:grid-cols-2">
      <ChartCard
        className="xl:col-span-2"
        title="Units sold per week"
        note="The last 26 weeks, the same weeks last year, and the forecast for the next 13."
      >
        <SalesChart points={charts.weekly_sales} />
      </ChartCard>
      <ChartCard
        title="Stock value at cost"
        note="Reconstructed closing stock × cost price, at each week's end over the last year."
      >
        <StockValueChart points={charts.stock_value} />
      </ChartCard>
      <ChartCard
        title="Stock value by status"
        note="Today's stock at cost, by the products' planning status."
      >
        <StatusValueChart rows={charts.stock_by_status} />
      </ChartCard>
    </section>
  );
}
