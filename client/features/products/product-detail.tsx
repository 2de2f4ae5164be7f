// A product's planning page: its figures at a glance, the charts behind them, and how each
// figure is worked out (metrics.product = the explanation plus the chart series).

import { Button } from "@client/components/ui/button.tsx";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@client/components/ui/card.tsx";
import { Skeleton } from "@client/components/ui/skeleton.tsx";
import { LoadError } from "@client/features/config/parts.tsx";
import { useTRPC } from "@client/lib/trpc.ts";
import { cn } from "@client/lib/utils.ts";
import type { AbcClass, ExplainedFigure, ProductMetricsDetail } from "@shared/metrics.ts";
import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { ArrowLeftIcon, PackageXIcon } from "lucide-react";
import type { ReactNode } from "react";
import { StaleDataWarning } from "../dataOps/stale-data-warning.tsx";
import { AccuracyChart, AccuracyTable, methodLabel, SalesForecastChart, StockChart } from "./charts.tsx";
import { Explanation } from "./explanation.tsx";
import {
  DASH,
  daysBetween,
  formatDay,
  formatMoney,
  formatNumber,
  formatPercent,
  formatRate,
  formatTimestamp,
  formatUnits,
} from "./format.ts";
import type { ProductsSearch } from "./search.ts";
import { AbcBadge, ProductStatusBadge } from "./status.tsx";

export interface ProductDetailProps {
  /** The pid of the URL, as typed (validated here). */
  pid: string;
  /** The list's URL state, so "Back to products" returns to the same view. */
  listSearch: ProductsSearch;
}

function parsePid(text: string): number | null {
  return /^\d{1,10}$/.test(text) && Number(text) >= 1 && Number(text) <= 2_147_483_647 ? Number(text) : null;
}

export function ProductDetail({ pid: pidText, listSearch }: ProductDetailProps) {
  const pid = parsePid(pidText);
  const back = (
    <Button asChild variant="ghost" size="sm" className="-ml-2 text-muted-foreground">
      <Link to="/products" search={listSearch} data-testid="back-to-products">
        <ArrowLeftIcon />
        Products
      </Link>
    </Button>
  );
  if (pid === null) return <NotFound back={back} message={`"${pidText}" is not a product ID.`} />;
  return <ProductDetailOf pid={pid} back={back} />;
}

function ProductDetailOf({ pid, back }: { pid: number; back: ReactNode }) {
  const trpc = useTRPC();
  const query = useQuery(trpc.metrics.product.queryOptions({ pid }));
  if (query.error) {
    if (query.error.data?.code === "NOT_FOUND") return <NotFound back={back} message={query.error.message} />;
    return (
      <div className="space-y-4">
        {back}
        <LoadError message="Could not load this product's figures." onRetry={() => void query.refetch()} />
      </div>
    );
  }
  if (!query.data) return <DetailSkeleton back={back} />;
  return <DetailView detail={query.data} back={back} />;
}

function NotFound({ back, message }: { back: ReactNode; message: string }) {
  return (
    <div className="space-y-4">
      {back}
      <div
        data-testid="product-not-found"
        className="flex flex-col items-center justify-center gap-3 rounded-xl border border-dashed bg-muted/30 px-6 py-16 text-center"
      >
        <PackageXIcon className="size-6 text-muted-foreground" aria-hidden />
        <p className="max-w-md text-sm text-muted-foreground">{message}</p>
      </div>
    </div>
  );
}

function DetailSkeleton({ back }: { back: ReactNode }) {
  return (
    <div className="space-y-6" data-testid="product-detail-loading">
      {back}
      <div className="space-y-2">
        <Skeleton className="h-8 w-2/3 max-w-md" />
        <Skeleton className="h-4 w-48" />
      </div>
      <div className="grid grid-cols-2 gap-3 md:grid-cols-3 xl:grid-cols-6">
        {Array.from({ length: 6 }, (_, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: static placeholders
          <Skeleton key={i} className="h-24" />
        ))}
      </div>
      <Skeleton className="h-80" />
    </div>
  );
}

type Figures = Map<string, ExplainedFigure>;
const numberOf = (figs: Figures, key: string): number | null => {
  const v = figs.get(key)?.value;
  return typeof v === "number" ? v : null;
};
const inputOf = (figs: Figures, key: string, input: string) => figs.get(key)?.inputs[input] ?? null;

function Kpi({
  label,
  value,
  sub,
  tone,
  href,
  testId,
}: {
  label: string;
  value: string;
  sub?: ReactNode;
  tone?: "alert" | "warn" | "good";
  href: string;
  testId: string;
}) {
  return (
    <a
      href={href}
      data-testid={testId}
      className="group rounded-xl border bg-card p-4 shadow-xs transition-colors hover:border-foreground/20 hover:bg-accent/40"
    >
      <div className="text-xs font-medium text-muted-foreground">{label}</div>
      <div
        className={cn(
          "mt-1 text-2xl font-semibold tracking-tight tabular-nums",
          tone === "alert" && "text-red-700 dark:text-red-400",
          tone === "warn" && "text-amber-700 dark:text-amber-400",
          tone === "good" && "text-emerald-700 dark:text-emerald-400",
        )}
      >
        {value}
      </div>
      {sub && <div className="mt-1 text-xs text-muted-foreground">{sub}</div>}
    </a>
  );
}

function DetailView({ detail, back }: { detail: ProductMetricsDetail; back: ReactNode }) {
  const { explanation: ex } = detail;
  const figs: Figures = new Map(ex.figures.map((f) => [f.key, f]));
  const onHand = numberOf(figs, "on_hand");
  const onOrder = numberOf(figs, "on_order") ?? 0;
  const d = numberOf(figs, "demand_rate");
  const dbar = numberOf(figs, "avg_daily_sales");
  const cover = numberOf(figs, "days_of_cover");
  const stockout = figs.get("stockout_date")?.value;
  const stockoutDay = typeof stockout === "string" ? stockout : null;
  const rop = numberOf(figs, "reorder_point");
  const ss = numberOf(figs, "safety_stock");
  const lead = numberOf(figs, "lead_time");
  const qty = numberOf(figs, "reorder_qty") ?? 0;
  const value = inputOf(figs, "reorder_qty", "reorder_value");
  const margin = numberOf(figs, "margin_365d");
  const gmroi = numberOf(figs, "gmroi_365d");
  const abc = figs.get("abc_class")?.value;
  const forecastTotal = numberOf(figs, "forecast");
  const demandSource = inputOf(figs, "demand_rate", "demand_source");
  const requested = inputOf(figs, "forecast", "requested_method");
  const byBacktest = inputOf(figs, "forecast", "chosen_by_backtest") === 1;
  const excludedFromForecast = inputOf(figs, "status", "excluded") === "yes";
  const untilStockout = stockoutDay ? daysBetween(ex.d0, stockoutDay) : null;

  return (
    <div className="space-y-6" data-testid="product-detail" data-pid={ex.pid}>
      <StaleDataWarning />
      <div className="space-y-3">
        {back}
        <div className="flex flex-wrap items-start justify-between gap-x-6 gap-y-3">
          <div className="min-w-0 space-y-1.5">
            <h1 className="text-2xl font-semibold tracking-tight break-words" data-testid="product-title">
              {ex.title}
            </h1>
            <div className="flex flex-wrap items-center gap-2 text-sm text-muted-foreground">
              <span>
                SKU <span className="font-medium text-foreground">{ex.sku ?? DASH}</span>
              </span>
              <span aria-hidden>·</span>
              <span>ID {ex.pid}</span>
              <ProductStatusBadge status={ex.status} />
              {typeof abc === "string" && <AbcBadge abc={abc as AbcClass} />}
            </div>
          </div>
          <p className="text-xs text-muted-foreground sm:text-right" data-testid="calculated-at">
            Figures as of {formatDay(ex.d0)}
            <span className="block">Calculated {formatTimestamp(ex.as_of)}</span>
          </p>
        </div>
      </div>

      <div className="grid grid-cols-2 gap-3 md:grid-cols-3 xl:grid-cols-6" data-testid="kpis">
        <Kpi
          testId="kpi-on-hand"
          href="#figure-on_hand"
          label="On hand"
          value={formatNumber(onHand)}
          sub={onOrder > 0 ? `+${formatNumber(onOrder)} on order` : "Nothing on order"}
        />
        <Kpi
          testId="kpi-demand"
          href="#figure-demand_rate"
          label="Demand"
          value={d == null ? DASH : `${formatRate(d)}/day`}
          sub={
            demandSource === "category"
              ? "New: from its category profile"
              : dbar != null
                ? "Sales per in-stock day, 90 days"
                : "Not planned in the last calculation"
          }
        />
        <Kpi
          testId="kpi-cover"
          href="#figure-days_of_cover"
          label="Days of cover"
          value={cover == null ? DASH : `${formatNumber(Math.round(cover))} d`}
          tone={ex.status === "critical" ? "alert" : undefined}
          sub={
            stockoutDay
              ? `Stock-out ${formatDay(stockoutDay)}${untilStockout != null && untilStockout > 0 ? ` (${untilStockout} d)` : ""}`
              : cover == null && d === 0
                ? "No demand, so no stock-out expected"
                : "No stock-out expected"
          }
        />
        <Kpi
          testId="kpi-rop"
          href="#figure-reorder_point"
          label="Reorder point"
          value={rop == null ? DASH : formatNumber(rop)}
          tone={ex.status === "reorder" ? "warn" : undefined}
          sub={
            rop == null
              ? "Not planned in the last calculation"
              : `Safety stock ${formatNumber(ss)} · lead time ${lead == null ? DASH : `${formatNumber(lead, 1)} d`}`
          }
        />
        <Kpi
          testId="kpi-reorder"
          href="#figure-reorder_qty"
          label="Suggested order"
          value={qty > 0 ? `${formatNumber(qty)}` : "0"}
          tone={qty > 0 ? "warn" : undefined}
          sub={qty > 0 && typeof value === "number" ? `${formatMoney(value)} at cost` : "Nothing to order"}
        />
        <Kpi
          testId="kpi-margin"
          href="#figure-margin_365d"
          label="Margin (365 d)"
          value={formatPercent(margin)}
          tone={margin != null && margin < 0 ? "alert" : undefined}
          sub={
            margin == null
              ? inputOf(figs, "margin_365d", "cost_price") == null
                ? "No cost price, so no margin"
                : "No sales in the last 365 days"
              : gmroi == null
                ? "No GMROI: no stock held at cost"
                : `GMROI ${formatNumber(gmroi, 2)}× (gross profit ÷ average stock at cost)`
          }
        />
      </div>

      <div className="grid gap-4 lg:grid-cols-3">
        <Card className="gap-3 py-5 lg:col-span-3">
          <CardHeader className="px-5 sm:grid-cols-[1fr_auto]">
            <div className="space-y-1.5">
              <CardTitle className="text-base">Weekly sales and forecast</CardTitle>
              <CardDescription data-testid="sales-chart-description">
                {detail.forecast_method ? (
                  <>
                    Units sold per week over the last two years, and the next 13 weeks as forecast by the{" "}
                    {methodLabel(detail.forecast_method).toLowerCase()} method
                    {byBacktest
                      ? " (chosen by backtest)"
                      : typeof requested === "string" && requested !== detail.forecast_method
                        ? ` (${methodLabel(requested).toLowerCase()} was asked for but needs a year of history)`
                        : ""}
                    .
                  </>
                ) : excludedFromForecast ? (
                  "Units sold per week over the last two years. No forecast: the product's setting excludes it from forecasting."
                ) : (
                  "Units sold per week over the last two years. No forecast is stored yet."
                )}
              </CardDescription>
            </div>
            {forecastTotal != null && (
              <div className="text-sm sm:text-right">
                <div className="text-xs text-muted-foreground">Next 13 weeks</div>
                <div className="font-semibold tabular-nums">{formatUnits(forecastTotal)} units</div>
              </div>
            )}
          </CardHeader>
          <CardContent className="px-3 sm:px-5">
            <SalesForecastChart
              history={detail.history}
              forecast={detail.forecast}
              method={detail.forecast_method}
            />
          </CardContent>
        </Card>

        <Card className="gap-3 py-5 lg:col-span-2">
          <CardHeader className="px-5">
            <CardTitle className="text-base">Stock level</CardTitle>
            <CardDescription>
              Closing stock of each day of the last 365, worked back from today's stock, sales and receipts.
            </CardDescription>
          </CardHeader>
          <CardContent className="px-3 sm:px-5">
            <StockChart stock={detail.stock} asOfDay={ex.d0} reorderPoint={rop} safetyStock={ss} />
          </CardContent>
        </Card>

        <Card className="gap-3 py-5">
          <CardHeader className="px-5">
            <CardTitle className="text-base">Forecast accuracy</CardTitle>
            <CardDescription>
              Error of each method forecasting the last 8 weeks one at a time (WAPE, lower is better).
            </CardDescription>
          </CardHeader>
          <CardContent className="space-y-3 px-3 sm:px-5">
            <AccuracyChart accuracy={detail.accuracy} methodInUse={detail.forecast_method} />
            <AccuracyTable accuracy={detail.accuracy} methodInUse={detail.forecast_method} />
            <AccuracyNotes
              accuracy={detail.accuracy}
              methodInUse={detail.forecast_method}
              requested={typeof requested === "string" ? requested : null}
              byBacktest={byBacktest}
              source={inputOf(figs, "forecast", "method_source")}
            />
          </CardContent>
        </Card>
      </div>

      <Explanation figures={ex.figures} />
    </div>
  );
}

/**
 * Under the backtest: what WAPE means, which method forecasts and why, and, when another method
 * scored better, how to switch to it.
 */
function AccuracyNotes({
  accuracy,
  methodInUse,
  requested,
  byBacktest,
  source,
}: {
  accuracy: ProductMetricsDetail["accuracy"];
  methodInUse: string | null;
  requested: string | null;
  byBacktest: boolean;
  source: number | string | null;
}) {
  if (accuracy.length === 0 || !methodInUse) return null;
  const inUse = accuracy.find((a) => a.method === methodInUse);
  const best = accuracy
    .filter((a) => a.wape != null)
    .reduce<(typeof accuracy)[number] | null>((b, a) => (b && (b.wape ?? 0) <= (a.wape ?? 0) ? b : a), null);
  const label = methodLabel(methodInUse);
  const why = byBacktest
    ? `${label} is in use because it had the lower backtest error: this product takes the global default method (${(requested ?? "").toLowerCase()}) and the setting auto_forecast_method lets the backtest choose (Settings → Global Settings).`
    : requested && requested !== methodInUse
      ? `${methodLabel(requested)} was asked for but needs a year of history, so ${label.toLowerCase()} runs instead.`
      : source === "product"
        ? `${label} is in use because this product's setting asks for it (Settings → Product Settings).`
        : `${label} is in use because it is the global default forecast method (Settings → Global Settings); this product has no method of its own.`;
  const better =
    best &&
    inUse?.wape != null &&
    best.method !== methodInUse &&
    best.weeks === inUse.weeks &&
    (best.wape ?? 0) < inUse.wape
      ? `${methodLabel(best.method)} did better on these weeks (${formatPercent(best.wape)} against ${formatPercent(inUse.wape)}). The backtest does not switch methods by itself: to use ${methodLabel(best.method).toLowerCase()} for this product, choose it as its Forecast Method in Settings → Product Settings.`
      : null;
  return (
    <div className="space-y-1.5 text-xs text-muted-foreground" data-testid="accuracy-notes">
      <p>
        <span className="font-medium text-foreground">WAPE</span> (weighted absolute percentage error): the
        units a method missed by over the 8 weeks, as a share of the units sold. 20% means it was off by a
        fifth of the sales; over 100% means it missed by more than sold.{" "}
        <span className="font-medium text-foreground">MAPE</span> averages the weekly errors;{" "}
        <span className="font-medium text-foreground">bias</span> above 0 means it forecast too much.
      </p>
      <p data-testid="accuracy-in-use">{why}</p>
      {better && (
        <p data-testid="accuracy-better" className="text-amber-800 dark:text-amber-300">
          {better}
        </p>
      )}
    </div>
  );
}
