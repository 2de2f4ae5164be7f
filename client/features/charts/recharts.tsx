// The pieces every Recharts chart of the app is built from: the palette, the figure that names a
// chart (or says why it is blank), the HTML legend and tooltip, and the chart's frame, grid, axes and
// tooltip as the Dashboard, Analytics and a product's page draw them. The axis and tooltip helpers
// return Recharts' own elements (a chart finds its axes among its children).
import { dayMs, formatMonth } from "@client/features/products/format.ts";
import type { ReactNode } from "react";
import {
  CartesianGrid,
  Tooltip,
  type TooltipProps,
  XAxis,
  type XAxisProps,
  YAxis,
  type YAxisProps,
} from "recharts";

export const CHART_COLORS = {
  sales: "#2563eb",
  forecast: "#ea580c",
  stock: "#0d9488",
  reorderPoint: "#d97706",
  safetyStock: "#dc2626",
  bar: "#cbd5e1",
  barInUse: "#2563eb",
  grid: "#e5e7eb",
  axis: "#6b7280",
} as const;

/** Last year's series. */
export const LAST_YEAR = "#94a3b8";

export const AXIS_TICK = { fontSize: 11, fill: CHART_COLORS.axis };

/** A chart's frame; the svg gets a name for screen readers and tests. */
export function ChartFrame({
  testId,
  label,
  height,
  children,
  empty,
}: {
  testId: string;
  label: string;
  height: number;
  children: ReactNode;
  empty?: string;
}) {
  return (
    <figure data-testid={testId} aria-label={label} className="w-full" style={{ minHeight: height }}>
      {empty ? (
        <div
          className="flex items-center justify-center rounded-lg border border-dashed bg-muted/30 px-4 text-center text-sm text-muted-foreground"
          style={{ height }}
        >
          {empty}
        </div>
      ) : (
        children
      )}
    </figure>
  );
}

interface LegendItem {
  label: string;
  color: string;
  /** Dashed like the series it names */
  dash?: string;
}

/** The series of a chart, above it (plain HTML: it wraps on narrow screens). */
export function ChartLegend({ items, note }: { items: LegendItem[]; note?: string }) {
  return (
    <ul className="mb-2 flex flex-wrap justify-end gap-x-4 gap-y-1 text-xs text-muted-foreground">
      {note && <li className="mr-auto">{note}</li>}
      {items.map((item) => (
        <li key={item.label} className="flex items-center gap-1.5">
          <svg aria-hidden width="18" height="6" className="shrink-0">
            <line
              x1="0"
              y1="3"
              x2="18"
              y2="3"
              stroke={item.color}
              strokeWidth="2.5"
              strokeDasharray={item.dash}
            />
          </svg>
          {item.label}
        </li>
      ))}
    </ul>
  );
}

export function TooltipBox({ title, children }: { title: string; children: ReactNode }) {
  return (
    <div className="rounded-md border bg-popover px-3 py-2 text-xs text-popover-foreground shadow-md">
      <p className="mb-1 font-medium">{title}</p>
      {children}
    </div>
  );
}

export function TooltipRow({ color, label, value }: { color: string; label: string; value: string }) {
  return (
    <p className="flex items-center gap-2 tabular-nums">
      <span aria-hidden className="size-2 rounded-full" style={{ background: color }} />
      <span className="text-muted-foreground">{label}</span>
      <span className="ml-auto font-medium">{value}</span>
    </p>
  );
}

const MARGIN = { top: 8, right: 8, bottom: 0, left: 0 };

/** A chart's own props: full width at `height`, over `data`, with the app's margin. */
export function chartBox<T>(data: T[], height: number, margin = MARGIN) {
  return { responsive: true, style: { width: "100%", height }, data, margin };
}

/** The grid's lines along the value axis: horizontal for columns, vertical for a chart laid on its side. */
export function gridLines(along: "horizontal" | "vertical" = "horizontal") {
  return along === "horizontal" ? (
    <CartesianGrid vertical={false} stroke={CHART_COLORS.grid} />
  ) : (
    <CartesianGrid horizontal={false} stroke={CHART_COLORS.grid} />
  );
}

type AxisFormat = { tickFormat?: (v: number) => string };

/** Tick labels written by `tickFormat` (each tick's value alone). */
function ticks(tickFormat: ((v: number) => string) | undefined) {
  return tickFormat ? { tickFormatter: (v: number) => tickFormat(v) } : {};
}

/** The x axis: small grey labels, no tick marks. */
export function xAxis({ tickFormat, ...props }: Omit<XAxisProps, "ref"> & AxisFormat) {
  return <XAxis tick={AXIS_TICK} tickLine={false} {...ticks(tickFormat)} {...props} />;
}

/** The y axis: small grey labels, no tick marks, no axis line. */
export function yAxis({ tickFormat, ...props }: Omit<YAxisProps, "ref"> & AxisFormat) {
  return <YAxis tick={AXIS_TICK} tickLine={false} axisLine={false} {...ticks(tickFormat)} {...props} />;
}

/**
 * The x axis of a weekly chart over `week_end` days, each labelled by `label`; `line` draws the
 * axis line in the grid's colour.
 */
export function weekAxis(
  label: (weekEnd: string) => string,
  minTickGap: number,
  line = false,
  /** The ticks to label (e.g. monthTicks): without, Recharts spaces them and may repeat a label. */
  tickValues?: string[],
) {
  return xAxis({
    dataKey: "week_end",
    tickFormatter: (w: string) => label(w),
    minTickGap,
    ...(tickValues ? { ticks: tickValues } : {}),
    ...(line ? { axisLine: { stroke: CHART_COLORS.grid } } : {}),
  });
}

/** The first week of each month among `rows`: one "Nov '26" label per month, never two. */
export function monthTicks(rows: readonly { week_end: string }[]): string[] {
  const out: string[] = [];
  let last = "";
  for (const r of rows) {
    const month = r.week_end.slice(0, 7);
    if (month !== last) out.push(r.week_end);
    last = month;
  }
  return out;
}

/** A week's label on a long weekly axis: its month ("Nov '26"). */
export function monthOfWeek(weekEnd: string): string {
  return formatMonth(dayMs(weekEnd));
}

/**
 * The tooltip of a chart over `rows` (passed for the rows' type): `render` draws the hovered row,
 * nothing when none is hovered; `cursor` as Recharts' own.
 */
export function rowTooltip<T>(
  _rows: readonly T[],
  render: (row: T) => ReactNode,
  cursor?: TooltipProps<number, string>["cursor"],
) {
  return (
    <Tooltip
      {...(cursor === undefined ? {} : { cursor })}
      content={({ active, payload }) => {
        const p = active ? (payload?.[0]?.payload as T | undefined) : undefined;
        return p ? render(p) : null;
      }}
    />
  );
}
