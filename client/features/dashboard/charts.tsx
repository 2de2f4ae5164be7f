// The Dashboard's charts (Recharts): weekly units with last year's line and the forecast, stock
// value at cost per week, and stock value by planning status. Each says why when it has nothing.

import { formatMoneyCompact } from "@client/features/aggregates/top-chart.tsx";
import {
  CHART_COLORS,
  ChartFrame,
  ChartLegend,
  chartBox,
  gridLines,
  LAST_YEAR,
  monthOfWeek,
  monthTicks,
  rowTooltip,
  TooltipBox,
  TooltipRow,
  weekAxis,
  xAxis,
  yAxis,
} from "@client/features/charts/recharts.tsx";
import { formatDay, formatMoneyShort, formatNumber, formatUnits } from "@client/features/products/format.ts";
import type { StatusValue, StockValuePoint, WeeklySalesPoint } from "@shared/dashboard.ts";
import { type ProductStatus, STATUS_LABELS } from "@shared/metrics.ts";
import { Area, AreaChart, Bar, BarChart, Cell, ComposedChart, Line } from "recharts";

const STATUS_COLORS: Record<string, string> = {
  critical: "#dc2626",
  reorder: "#f59e0b",
  healthy: "#10b981",
  overstocked: "#6366f1",
  new: "#0ea5e9",
  discontinued: "#64748b",
  excluded: "#a8a29e",
  none: "#d4d4d8",
};

export function SalesChart({ points }: { points: WeeklySalesPoint[] }) {
  const hasSales = points.some((p) => (p.units ?? 0) > 0 || (p.last_year_units ?? 0) > 0);
  const hasForecast = points.some((p) => p.forecast_units != null);
  const height = 260;
  return (
    <ChartFrame
      testId="sales-chart"
      label="Units sold per week, last year and forecast"
      height={height}
      empty={
        !hasSales && !hasForecast
          ? "No sales in the last 26 weeks or a year before, and no forecast."
          : undefined
      }
    >
      <ChartLegend
        items={[
          { label: "Units sold", color: CHART_COLORS.sales },
          { label: "Same week last year", color: LAST_YEAR, dash: "2 2" },
          ...(hasForecast ? [{ label: "Forecast", color: CHART_COLORS.forecast, dash: "5 3" }] : []),
        ]}
      />
      <ComposedChart {...chartBox(points, height)}>
        {gridLines()}
        {weekAxis(monthOfWeek, 28, true, monthTicks(points))}
        {yAxis({ width: 48, tickFormat: (v) => formatNumber(v, 0) })}
        {rowTooltip(points, (p) => (
          <TooltipBox title={`Week ending ${formatDay(p.week_end)}`}>
            {p.units != null && (
              <TooltipRow color={CHART_COLORS.sales} label="Sold" value={formatUnits(p.units)} />
            )}
            {p.revenue != null && (
              <TooltipRow color={CHART_COLORS.sales} label="Revenue" value={formatMoneyShort(p.revenue)} />
            )}
            {p.last_year_units != null && (
              <TooltipRow color={LAST_YEAR} label="Last year" value={formatUnits(p.last_year_units)} />
            )}
            {p.forecast_units != null && (
              <TooltipRow
                color={CHART_COLORS.forecast}
                label="Forecast"
                value={formatUnits(p.forecast_units)}
              />
            )}
          </TooltipBox>
        ))}
        <Bar dataKey="units" name="Units sold" fill={CHART_COLORS.sales} isAnimationActive={false} />
        <Line
          dataKey="last_year_units"
          name="Same week last year"
          stroke={LAST_YEAR}
          strokeDasharray="2 2"
          dot={false}
          connectNulls={false}
          isAnimationActive={false}
        />
        <Line
          dataKey="forecast_units"
          name="Forecast"
          stroke={CHART_COLORS.forecast}
          strokeDasharray="5 3"
          strokeWidth={2}
          dot={false}
          connectNulls={false}
          isAnimationActive={false}
        />
      </ComposedChart>
    </ChartFrame>
  );
}

export function StockValueChart({ points }: { points: StockValuePoint[] }) {
  const height = 220;
  const empty =
    points.length === 0 ? "No stock history yet: it is reconstructed by the next calculation." : undefined;
  return (
    <ChartFrame testId="stock-value-chart" label="Stock value at cost per week" height={height} empty={empty}>
      <AreaChart {...chartBox(points, height)}>
        {gridLines()}
        {weekAxis(monthOfWeek, 28, true, monthTicks(points))}
        {yAxis({ width: 56, tickFormat: formatMoneyCompact })}
        {rowTooltip(points, (p) => (
          <TooltipBox title={formatDay(p.week_end)}>
            <TooltipRow
              color={CHART_COLORS.stock}
              label="Stock at cost"
              value={formatMoneyShort(p.value_cost)}
            />
          </TooltipBox>
        ))}
        <Area
          dataKey="value_cost"
          stroke={CHART_COLORS.stock}
          fill={CHART_COLORS.stock}
          fillOpacity={0.15}
          dot={false}
          isAnimationActive={false}
        />
      </AreaChart>
    </ChartFrame>
  );
}

export function StatusValueChart({ rows }: { rows: StatusValue[] }) {
  const data = rows
    .filter((r) => r.value_cost > 0)
    .map((r) => ({ ...r, label: STATUS_LABELS[r.status as ProductStatus] ?? "No status" }));
  const height = Math.max(data.length * 32 + 24, 120);
  return (
    <ChartFrame
      testId="status-value-chart"
      label="Stock value at cost by status"
      height={height}
      empty={data.length === 0 ? "No stock with a cost price on hand." : undefined}
    >
      <BarChart layout="vertical" {...chartBox(data, height, { top: 4, right: 16, bottom: 0, left: 0 })}>
        {gridLines("vertical")}
        {xAxis({ type: "number", axisLine: false, tickFormat: formatMoneyCompact })}
        {yAxis({ width: 96, type: "category", dataKey: "label" })}
        {rowTooltip(
          data,
          (p) => (
            <TooltipBox title={p.label}>
              <TooltipRow
                color={STATUS_COLORS[p.status] ?? LAST_YEAR}
                label="Stock at cost"
                value={formatMoneyShort(p.value_cost)}
              />
              <TooltipRow color="transparent" label="Products" value={formatNumber(p.products)} />
            </TooltipBox>
          ),
          { fill: "rgba(0,0,0,0.04)" },
        )}
        <Bar dataKey="value_cost" isAnimationActive={false}>
          {data.map((r) => (
            <Cell key={r.status} fill={STATUS_COLORS[r.status] ?? LAST_YEAR} />
          ))}
        </Bar>
      </BarChart>
    </ChartFrame>
  );
}
