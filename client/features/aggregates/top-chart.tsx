// The chart above the Brands / Vendors / Categories table: the ten biggest by revenue of the last
// 365 days, each bar with its gross profit drawn inside it (so the margin shows as the dark share).
import { DASH, formatMoney, formatMoneyShort, formatPercent } from "@client/features/products/format.ts";
import { useIsMobile } from "@client/lib/use-mobile.ts";
import type { AggregateRow } from "@shared/metrics.ts";
import { Bar, BarChart, CartesianGrid, LabelList, Tooltip, XAxis, YAxis } from "recharts";

export const TOP_CHART_COLORS = {
  revenue: "#bfdbfe",
  grossProfit: "#2563eb",
  grid: "#e5e7eb",
  axis: "#6b7280",
} as const;

const AXIS_TICK = { fontSize: 11, fill: TOP_CHART_COLORS.axis };
const BAR_SIZE = 16;
const ROW_HEIGHT = 30;

const compactFormat = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });

/** "$12.3K", "$1.2M": axis ticks and bar labels. */
export function formatMoneyCompact(value: number | null | undefined): string {
  if (value == null || !Number.isFinite(value)) return DASH;
  if (value === 0) return "$0";
  if (Math.abs(value) < 1000) return formatMoneyShort(value);
  return `${value < 0 ? "-" : ""}$${compactFormat.format(Math.abs(value))}`;
}

interface TopPoint {
  id: number;
  name: string;
  revenue: number;
  grossProfit: number;
  margin: number | null;
}

/** A name cut to fit the axis (the full name is in the tooltip). */
function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`;
}

export function TopRevenueChart({
  rows,
  label,
  onSelect,
}: {
  /** Highest revenue first */
  rows: AggregateRow[];
  /** What the chart shows, for screen readers */
  label: string;
  /** Clicking a bar (e.g. opens that brand's products) */
  onSelect?: (row: { id: number; name: string }) => void;
}) {
  const isMobile = useIsMobile();
  const data: TopPoint[] = rows
    .filter((r) => r.revenue_365d > 0)
    .map((r) => ({
      id: r.id,
      name: r.name,
      revenue: r.revenue_365d,
      grossProfit: r.gross_profit_365d,
      margin: r.margin_365d,
    }));
  const height = data.length * ROW_HEIGHT + 28;
  const nameWidth = isMobile ? 100 : 176;
  const maxChars = isMobile ? 12 : 26;
  const nameFont = isMobile ? 11 : 12;
  const negative = data.some((d) => d.grossProfit < 0);
  return (
    <figure data-testid="top-chart" aria-label={label} className="w-full" style={{ minHeight: height }}>
      {data.length === 0 ? (
        <div
          data-testid="top-chart-empty"
          className="flex h-24 items-center justify-center rounded-lg border border-dashed bg-muted/30 px-4 text-center text-sm text-muted-foreground"
        >
          No sales in the last 365 days.
        </div>
      ) : (
        <BarChart
          responsive
          layout="vertical"
          style={{ width: "100%", height }}
          data={data}
          margin={{ top: 0, right: isMobile ? 44 : 56, bottom: 0, left: 0 }}
          barGap={-BAR_SIZE}
          barSize={BAR_SIZE}
        >
          <CartesianGrid horizontal={false} stroke={TOP_CHART_COLORS.grid} />
          <XAxis
            type="number"
            domain={negative ? ["auto", "auto"] : [0, "auto"]}
            tick={AXIS_TICK}
            tickLine={false}
            axisLine={{ stroke: TOP_CHART_COLORS.grid }}
            tickFormatter={(v: number) => formatMoneyCompact(v)}
            tickCount={isMobile ? 4 : 6}
          />
          <YAxis
            type="category"
            dataKey="name"
            tick={({ x, y, payload }) => {
              const name = String(payload?.value ?? "");
              return (
                <text
                  x={Number(x)}
                  y={Number(y)}
                  dx={-4}
                  textAnchor="end"
                  dominantBaseline="central"
                  fontSize={nameFont}
                  fill="currentColor"
                >
                  <title>{name}</title>
                  {clip(name, maxChars)}
                </text>
              );
            }}
            tickLine={false}
            axisLine={false}
            width={nameWidth}
            interval={0}
          />
          <Tooltip
            cursor={{ fill: "rgba(0,0,0,0.04)" }}
            content={({ active, payload }) => {
              const p = active ? (payload?.[0]?.payload as TopPoint | undefined) : undefined;
              if (!p) return null;
              return (
                <div className="max-w-64 rounded-md border bg-popover px-3 py-2 text-xs text-popover-foreground shadow-md">
                  <p className="mb-1 font-medium">{p.name}</p>
                  <TooltipRow
                    color={TOP_CHART_COLORS.revenue}
                    label="Revenue 365d"
                    value={formatMoney(p.revenue)}
                  />
                  <TooltipRow
                    color={TOP_CHART_COLORS.grossProfit}
                    label="Gross profit"
                    value={formatMoney(p.grossProfit)}
                  />
                  <TooltipRow label="Margin" value={formatPercent(p.margin)} />
                </div>
              );
            }}
          />
          <Bar
            dataKey="revenue"
            name="Revenue"
            fill={TOP_CHART_COLORS.revenue}
            radius={[0, 4, 4, 0]}
            isAnimationActive={false}
            cursor={onSelect ? "pointer" : undefined}
            onClick={onSelect ? (_d, index) => data[index] && onSelect(data[index]) : undefined}
          >
            <LabelList
              dataKey="revenue"
              position="right"
              fontSize={11}
              fill={TOP_CHART_COLORS.axis}
              formatter={(v: unknown) => (typeof v === "number" ? formatMoneyCompact(v) : "")}
            />
          </Bar>
          <Bar
            dataKey="grossProfit"
            name="Gross profit"
            fill={TOP_CHART_COLORS.grossProfit}
            radius={[0, 4, 4, 0]}
            isAnimationActive={false}
            cursor={onSelect ? "pointer" : undefined}
            onClick={onSelect ? (_d, index) => data[index] && onSelect(data[index]) : undefined}
          />
        </BarChart>
      )}
    </figure>
  );
}

function TooltipRow({ color, label, value }: { color?: string; label: string; value: string }) {
  return (
    <p className="flex items-center gap-2 tabular-nums">
      <span aria-hidden className="size-2 rounded-full" style={{ background: color ?? "transparent" }} />
      <span className="text-muted-foreground">{label}</span>
      <span className="ml-auto pl-3 font-medium">{value}</span>
    </p>
  );
}

/** The two series, as the legend above the chart. */
export function TopChartLegend() {
  const item = (color: string, text: string) => (
    <li className="flex items-center gap-1.5">
      <span aria-hidden className="size-2.5 rounded-sm" style={{ background: color }} />
      {text}
    </li>
  );
  return (
    <ul className="flex flex-wrap gap-x-4 gap-y-1 text-xs text-muted-foreground">
      {item(TOP_CHART_COLORS.revenue, "Revenue")}
      {item(TOP_CHART_COLORS.grossProfit, "Gross profit")}
    </ul>
  );
}
