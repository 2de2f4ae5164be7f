// The three charts of a product's page: weekly sales with the forecast continuing them (§8), the
// reconstructed stock level with the reorder point and safety stock (§2, §5, §6), and the backtest
// accuracy of each forecast method (§8).
import {
  AXIS_TICK,
  CHART_COLORS,
  ChartFrame,
  ChartLegend,
  TooltipBox,
  TooltipRow,
} from "@client/features/charts/recharts.tsx";
import { cn } from "@client/lib/utils.ts";
import type { ForecastAccuracyRow, WeekUnits } from "@shared/metrics.ts";
import { FORECAST_METHOD_LABELS, type ForecastMethod } from "@shared/settings.ts";
import {
  Area,
  Bar,
  BarChart,
  CartesianGrid,
  Cell,
  ComposedChart,
  LabelList,
  ReferenceLine,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import {
  DASH,
  dayMs,
  formatDay,
  formatMonth,
  formatNumber,
  formatPercent,
  formatShortDay,
  formatUnits,
} from "./format.ts";

export function methodLabel(method: string | null | undefined): string {
  if (!method) return DASH;
  return FORECAST_METHOD_LABELS[method as ForecastMethod] ?? method;
}

interface SalesPoint {
  week: string;
  sold: number | null;
  forecast: number | null;
  /** The last actual week carries its value into the forecast series, so the line continues. */
  bridge: boolean;
}

/** Weeks shown before the first sale at least, so a young product's chart still has some width. */
const MIN_WEEKS_SHOWN = 12;

/**
 * History and forecast as one series of weeks. The weeks before the first sale are left out (the
 * product may not have existed then; a run of zeros would read as "did not sell"), keeping at
 * least the last MIN_WEEKS_SHOWN.
 */
export function salesChartData(history: WeekUnits[], forecast: WeekUnits[]): SalesPoint[] {
  const firstSale = history.findIndex((w) => w.units > 0);
  const from = Math.min(
    firstSale < 0 ? history.length : firstSale,
    Math.max(0, history.length - MIN_WEEKS_SHOWN),
  );
  const points: SalesPoint[] = history.slice(from).map((w) => ({
    week: w.week_start,
    sold: w.units,
    forecast: null,
    bridge: false,
  }));
  const last = points.at(-1);
  if (last && forecast.length > 0) {
    last.forecast = last.sold;
    last.bridge = true;
  }
  for (const w of forecast) points.push({ week: w.week_start, sold: null, forecast: w.units, bridge: false });
  return points;
}

export function SalesForecastChart({
  history,
  forecast,
  method,
  height = 280,
}: {
  history: WeekUnits[];
  forecast: WeekUnits[];
  method: string | null;
  height?: number;
}) {
  const data = salesChartData(history, forecast);
  const firstForecast = forecast[0]?.week_start;
  const hasSales = history.some((w) => w.units > 0) || forecast.some((w) => w.units > 0);
  const shownWeeks = data.filter((p) => p.sold !== null);
  const since =
    shownWeeks.length < history.length && shownWeeks[0]
      ? `Since ${formatDay(shownWeeks[0].week)}`
      : undefined;
  return (
    <ChartFrame
      testId="chart-sales"
      label="Weekly units sold and forecast"
      height={height}
      empty={
        data.length === 0
          ? "No sales history yet."
          : !hasSales
            ? "No sales in the last two years, and none forecast."
            : undefined
      }
    >
      <ChartLegend
        note={since}
        items={[
          { label: "Units sold per week", color: CHART_COLORS.sales },
          ...(forecast.length > 0
            ? [{ label: `Forecast (${methodLabel(method)})`, color: CHART_COLORS.forecast, dash: "5 3" }]
            : []),
        ]}
      />
      <ComposedChart
        responsive
        style={{ width: "100%", height }}
        data={data}
        margin={{ top: 8, right: 8, bottom: 0, left: 0 }}
      >
        <defs>
          <linearGradient id="sales-fill" x1="0" y1="0" x2="0" y2="1">
            <stop offset="0%" stopColor={CHART_COLORS.sales} stopOpacity={0.25} />
            <stop offset="100%" stopColor={CHART_COLORS.sales} stopOpacity={0.02} />
          </linearGradient>
          <linearGradient id="forecast-fill" x1="0" y1="0" x2="0" y2="1">
            <stop offset="0%" stopColor={CHART_COLORS.forecast} stopOpacity={0.25} />
            <stop offset="100%" stopColor={CHART_COLORS.forecast} stopOpacity={0.02} />
          </linearGradient>
        </defs>
        <CartesianGrid vertical={false} stroke={CHART_COLORS.grid} />
        <XAxis
          dataKey="week"
          tick={AXIS_TICK}
          tickLine={false}
          axisLine={{ stroke: CHART_COLORS.grid }}
          tickFormatter={(w: string) => formatMonth(dayMs(w))}
          minTickGap={28}
        />
        <YAxis
          tick={AXIS_TICK}
          tickLine={false}
          axisLine={false}
          width={40}
          allowDecimals={!hasSales}
          tickFormatter={(v: number) => formatNumber(v, 1)}
        />
        <Tooltip
          cursor={{ stroke: CHART_COLORS.axis, strokeDasharray: "3 3" }}
          content={({ active, payload }) => {
            const p = active ? (payload?.[0]?.payload as SalesPoint | undefined) : undefined;
            if (!p) return null;
            return (
              <TooltipBox title={`Week of ${formatDay(p.week)}`}>
                {p.sold != null && (
                  <TooltipRow color={CHART_COLORS.sales} label="Sold" value={formatUnits(p.sold)} />
                )}
                {p.forecast != null && !p.bridge && (
                  <TooltipRow
                    color={CHART_COLORS.forecast}
                    label="Forecast"
                    value={formatUnits(p.forecast)}
                  />
                )}
              </TooltipBox>
            );
          }}
        />
        {firstForecast && (
          <ReferenceLine
            x={history.at(-1)?.week_start}
            stroke={CHART_COLORS.axis}
            strokeDasharray="2 4"
            label={{ value: "Today", position: "insideTopLeft", fontSize: 11, fill: CHART_COLORS.axis }}
          />
        )}
        <Area
          name="Units sold per week"
          type="monotone"
          dataKey="sold"
          stroke={CHART_COLORS.sales}
          strokeWidth={1.5}
          fill="url(#sales-fill)"
          dot={false}
          activeDot={{ r: 3 }}
          connectNulls={false}
          isAnimationActive={false}
        />
        {forecast.length > 0 && (
          <Area
            name={`Forecast (${methodLabel(method)})`}
            type="monotone"
            dataKey="forecast"
            stroke={CHART_COLORS.forecast}
            strokeWidth={2}
            strokeDasharray="5 3"
            fill="url(#forecast-fill)"
            dot={false}
            activeDot={{ r: 3 }}
            connectNulls={false}
            isAnimationActive={false}
          />
        )}
      </ComposedChart>
    </ChartFrame>
  );
}

interface StockPoint {
  t: number;
  stock: number;
}

/**
 * The step points (from `date` on, `stock`) as chart points, ending on the calculation day so the
 * last level is drawn up to today.
 */
export function stockChartData(stock: { date: string; stock: number }[], asOfDay: string): StockPoint[] {
  const points = stock.map((p) => ({ t: dayMs(p.date), stock: p.stock }));
  const last = points.at(-1);
  const end = dayMs(asOfDay);
  if (last && last.t < end) points.push({ t: end, stock: last.stock });
  return points;
}

/** The first day of every month from `start` to `end` (ms), for a time axis with regular ticks. */
export function monthTicks(start: number, end: number): number[] {
  const ticks: number[] = [];
  const d = new Date(start);
  let t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + (d.getUTCDate() > 1 ? 1 : 0), 1);
  while (t <= end) {
    ticks.push(t);
    const m = new Date(t);
    t = Date.UTC(m.getUTCFullYear(), m.getUTCMonth() + 1, 1);
  }
  return ticks;
}

export function StockChart({
  stock,
  asOfDay,
  reorderPoint,
  safetyStock,
  height = 260,
}: {
  stock: { date: string; stock: number }[];
  asOfDay: string;
  reorderPoint: number | null;
  safetyStock: number | null;
  height?: number;
}) {
  const data = stockChartData(stock, asOfDay);
  const start = data[0]?.t;
  const end = data.at(-1)?.t;
  return (
    <ChartFrame
      testId="chart-stock"
      label="Stock level over the last 365 days"
      height={height}
      empty={data.length === 0 ? "No stock history in the last 365 days." : undefined}
    >
      <ChartLegend
        items={[
          { label: "Closing stock", color: CHART_COLORS.stock },
          ...(reorderPoint != null
            ? [
                {
                  label: `Reorder point (${formatNumber(reorderPoint)})`,
                  color: CHART_COLORS.reorderPoint,
                  dash: "5 3",
                },
              ]
            : []),
          ...(safetyStock != null
            ? [
                {
                  label: `Safety stock (${formatNumber(safetyStock)})`,
                  color: CHART_COLORS.safetyStock,
                  dash: "2 3",
                },
              ]
            : []),
        ]}
      />
      <ComposedChart
        responsive
        style={{ width: "100%", height }}
        data={data}
        margin={{ top: 8, right: 8, bottom: 0, left: 0 }}
      >
        <defs>
          <linearGradient id="stock-fill" x1="0" y1="0" x2="0" y2="1">
            <stop offset="0%" stopColor={CHART_COLORS.stock} stopOpacity={0.22} />
            <stop offset="100%" stopColor={CHART_COLORS.stock} stopOpacity={0.03} />
          </linearGradient>
        </defs>
        <CartesianGrid vertical={false} stroke={CHART_COLORS.grid} />
        <XAxis
          dataKey="t"
          type="number"
          scale="time"
          domain={start !== undefined && end !== undefined ? [start, end] : ["dataMin", "dataMax"]}
          ticks={start !== undefined && end !== undefined ? monthTicks(start, end) : undefined}
          tick={AXIS_TICK}
          tickLine={false}
          axisLine={{ stroke: CHART_COLORS.grid }}
          tickFormatter={(t: number) => formatMonth(t)}
          minTickGap={28}
        />
        <YAxis
          tick={AXIS_TICK}
          tickLine={false}
          axisLine={false}
          width={40}
          allowDecimals={false}
          tickFormatter={(v: number) => formatNumber(v)}
        />
        <Tooltip
          cursor={{ stroke: CHART_COLORS.axis, strokeDasharray: "3 3" }}
          content={({ active, payload }) => {
            const p = active ? (payload?.[0]?.payload as StockPoint | undefined) : undefined;
            if (!p) return null;
            return (
              <TooltipBox title={formatShortDay(p.t)}>
                <TooltipRow color={CHART_COLORS.stock} label="Closing stock" value={formatNumber(p.stock)} />
              </TooltipBox>
            );
          }}
        />
        <Area
          name="Closing stock"
          type="stepAfter"
          dataKey="stock"
          stroke={CHART_COLORS.stock}
          strokeWidth={1.5}
          fill="url(#stock-fill)"
          dot={false}
          activeDot={{ r: 3 }}
          isAnimationActive={false}
        />
        {reorderPoint != null && (
          <ReferenceLine
            y={reorderPoint}
            stroke={CHART_COLORS.reorderPoint}
            strokeDasharray="5 3"
            strokeWidth={1.5}
            ifOverflow="extendDomain"
          />
        )}
        {safetyStock != null && (
          <ReferenceLine
            y={safetyStock}
            stroke={CHART_COLORS.safetyStock}
            strokeDasharray="2 3"
            strokeWidth={1.5}
            ifOverflow="extendDomain"
          />
        )}
      </ComposedChart>
    </ChartFrame>
  );
}

interface AccuracyPoint {
  method: string;
  label: string;
  wape: number | null;
  inUse: boolean;
}

export function AccuracyChart({
  accuracy,
  methodInUse,
  height = 160,
}: {
  accuracy: ForecastAccuracyRow[];
  methodInUse: string | null;
  height?: number;
}) {
  const data: AccuracyPoint[] = accuracy.map((a) => ({
    method: a.method,
    label: methodLabel(a.method),
    wape: a.wape,
    inUse: a.method === methodInUse,
  }));
  const measurable = data.some((d) => d.wape != null);
  const maxWape = Math.max(0, ...data.map((d) => d.wape ?? 0));
  const step = maxWape <= 0.5 ? 0.1 : maxWape <= 1 ? 0.25 : 0.5;
  const top = Math.max(step, Math.ceil(maxWape / step - 1e-9) * step);
  const ticks = Array.from({ length: Math.round(top / step) + 1 }, (_, i) => Number((i * step).toFixed(2)));
  const chartHeight = Math.max(height, data.length * 44 + 40);
  return (
    <ChartFrame
      testId="chart-accuracy"
      label="Backtest error per forecast method (WAPE, lower is better)"
      height={chartHeight}
      empty={
        data.length === 0
          ? "Not enough history for a backtest yet (it needs 9 full weeks)."
          : !measurable
            ? "No sales in the backtest weeks, so the error cannot be measured."
            : undefined
      }
    >
      <BarChart
        responsive
        layout="vertical"
        style={{ width: "100%", height: chartHeight }}
        data={data}
        margin={{ top: 4, right: 84, bottom: 0, left: 0 }}
        barCategoryGap="28%"
      >
        <CartesianGrid horizontal={false} stroke={CHART_COLORS.grid} />
        <XAxis
          type="number"
          domain={[0, top]}
          ticks={ticks}
          tick={AXIS_TICK}
          tickLine={false}
          axisLine={{ stroke: CHART_COLORS.grid }}
          tickFormatter={(v: number) => formatPercent(v, 0)}
        />
        <YAxis
          type="category"
          dataKey="label"
          tick={{ ...AXIS_TICK, fontSize: 12 }}
          tickLine={false}
          axisLine={false}
          width={72}
        />
        <Tooltip
          cursor={{ fill: "rgba(0,0,0,0.04)" }}
          content={({ active, payload }) => {
            const p = active ? (payload?.[0]?.payload as AccuracyPoint | undefined) : undefined;
            if (!p) return null;
            return (
              <TooltipBox title={p.label}>
                <TooltipRow
                  color={p.inUse ? CHART_COLORS.barInUse : CHART_COLORS.bar}
                  label="WAPE"
                  value={formatPercent(p.wape)}
                />
              </TooltipBox>
            );
          }}
        />
        <Bar dataKey="wape" name="WAPE" radius={[0, 4, 4, 0]} isAnimationActive={false}>
          {data.map((d) => (
            <Cell key={d.method} fill={d.inUse ? CHART_COLORS.barInUse : CHART_COLORS.bar} />
          ))}
          <LabelList
            dataKey="wape"
            content={({ x, y, width, height, value, index }) => {
              const point = typeof index === "number" ? data[index] : undefined;
              const text = `${typeof value === "number" ? formatPercent(value) : DASH}${point?.inUse ? " · in use" : ""}`;
              return (
                <text
                  x={Number(x) + Number(width) + 6}
                  y={Number(y) + Number(height) / 2}
                  dominantBaseline="central"
                  fontSize={11}
                  fill={point?.inUse ? CHART_COLORS.barInUse : CHART_COLORS.axis}
                  fontWeight={point?.inUse ? 600 : 400}
                >
                  {text}
                </text>
              );
            }}
          />
        </Bar>
      </BarChart>
    </ChartFrame>
  );
}

/** The backtest figures as a small table under the bars. */
export function AccuracyTable({
  accuracy,
  methodInUse,
}: {
  accuracy: ForecastAccuracyRow[];
  methodInUse: string | null;
}) {
  if (accuracy.length === 0) return null;
  // Seasonal is scored only at the weeks where it ran (53 weeks of history before the week): say so
  // where its row covers fewer weeks, and why it is blank where it ran at none.
  const partial = accuracy.filter((a) => a.weeks < 8);
  return (
    <>
      <table
        className="w-full text-xs tabular-nums [&_td+td]:pl-3 [&_th+th]:pl-3"
        data-testid="accuracy-table"
      >
        <thead>
          <tr className="text-muted-foreground">
            <th className="py-1 text-left font-medium">Method</th>
            <th
              className="py-1 text-right font-medium"
              title="Weighted absolute percentage error: Σ|A−F| ÷ ΣA"
            >
              WAPE
            </th>
            <th
              className="py-1 text-right font-medium"
              title="Mean absolute percentage error over weeks with sales"
            >
              MAPE
            </th>
            <th className="py-1 text-right font-medium" title="Σ(F−A) ÷ ΣA; positive = over-forecast">
              Bias
            </th>
          </tr>
        </thead>
        <tbody>
          {accuracy.map((a) => (
            <tr
              key={a.method}
              data-method={a.method}
              className={cn("border-t", a.method === methodInUse && "font-medium")}
            >
              <td className="whitespace-nowrap py-1" title={`${a.weeks} weeks backtested`}>
                {methodLabel(a.method)}
                {a.method === methodInUse && (
                  <span className="ml-1.5 rounded bg-blue-100 px-1 py-px text-[10px] font-medium text-blue-800 dark:bg-blue-950 dark:text-blue-300">
                    in use
                  </span>
                )}
              </td>
              <td className="py-1 text-right">{formatPercent(a.wape)}</td>
              <td className="py-1 text-right">{formatPercent(a.mape)}</td>
              <td className="py-1 text-right">
                {a.bias == null ? DASH : `${a.bias > 0 ? "+" : ""}${formatPercent(a.bias)}`}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {partial.map((a) => (
        <p key={a.method} className="text-xs text-muted-foreground" data-testid="accuracy-weeks">
          {a.weeks === 0
            ? `${methodLabel(a.method)}: blank, it ran at none of the 8 weeks (each had fewer than 53 weeks of history before it, where it would fall back to standard).`
            : `${methodLabel(a.method)}: over the ${a.weeks} of the 8 weeks where it ran (the others had fewer than 53 weeks of history before them).`}
        </p>
      ))}
    </>
  );
}
