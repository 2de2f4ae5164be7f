// Projected weekly units and stock, baseline against up to three scenarios (docs/metrics.md §16),
// with the promotion's days as a shaded band.
import { dayMs, formatDay, formatShortDay, formatUnits } from "@client/features/products/format.ts";
import type { SimulationResult } from "@shared/discounts.ts";
import {
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ReferenceArea,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";

export const SCENARIO_COLORS = ["#ea580c", "#7c3aed", "#0d9488"] as const;
const BASELINE_COLOR = "#2563eb";
const PROMOTION_FILL = "#fde68a";
const AXIS_TICK = { fontSize: 11, fill: "#6b7280" };
const AXIS_TITLE = { fontSize: 12, fill: "#374151" };
const DAY_MS = 86_400_000;

export interface ChartScenario {
  label: string;
  result: SimulationResult;
}

/** The promotion's days, first to last (YYYY-MM-DD). */
export interface PromotionDates {
  starts_on: string;
  ends_on: string;
}

function rowsOf(scenarios: readonly ChartScenario[], field: "units" | "stock") {
  const first = scenarios[0]!.result.weekly;
  return first.map((w, i) => {
    // A number axis (a week's UTC midnight): the band can start and end on any day of a week.
    const row: Record<string, number> = {
      week: dayMs(w.week_start),
      baseline: field === "units" ? w.baseline_units : w.baseline_stock,
    };
    scenarios.forEach((s, j) => {
      const p = s.result.weekly[i];
      if (p) row[`s${j}`] = field === "units" ? p.scenario_units : p.scenario_stock;
    });
    return row;
  });
}

function WeeklyChart({
  scenarios,
  promotion,
  field,
  title,
  yTitle,
  testId,
}: {
  scenarios: readonly ChartScenario[];
  promotion: PromotionDates;
  field: "units" | "stock";
  title: string;
  yTitle: string;
  testId: string;
}) {
  const data = rowsOf(scenarios, field);
  const weeks = data.map((r) => r.week!);
  // A point is the week starting that day; the band runs from the first day's start to the end of
  // the last day (ends_on + 1 day), so a week half inside the promotion is half covered.
  const bandFrom = dayMs(promotion.starts_on);
  const bandTo = dayMs(promotion.ends_on) + DAY_MS;
  const dates = `${formatDay(promotion.starts_on)} to ${formatDay(promotion.ends_on)}`;
  return (
    <figure
      data-testid={testId}
      aria-label={`${title}, week by week: the baseline against ${scenarios.map((s) => s.label).join(", ")}; the shaded band is the promotion, ${dates}.`}
      className="w-full"
    >
      <figcaption className="mb-1 text-sm font-medium">{title}</figcaption>
      <div className="h-72 w-full">
        <ResponsiveContainer width="100%" height="100%">
          <LineChart data={data} margin={{ top: 8, right: 12, bottom: 16, left: 4 }}>
            <CartesianGrid stroke="#e5e7eb" vertical={false} />
            <XAxis
              dataKey="week"
              type="number"
              domain={["dataMin", "dataMax"]}
              ticks={weeks}
              tick={AXIS_TICK}
              tickFormatter={(ms: number) => formatShortDay(ms)}
              minTickGap={16}
              label={{ value: "Week", position: "insideBottom", offset: -12, ...AXIS_TITLE }}
            />
            <YAxis
              tick={AXIS_TICK}
              width={60}
              tickFormatter={(v: number) => formatUnits(v)}
              label={{
                value: yTitle,
                angle: -90,
                position: "insideLeft",
                style: { textAnchor: "middle" },
                ...AXIS_TITLE,
              }}
            />
            <ReferenceArea
              x1={bandFrom}
              x2={bandTo}
              ifOverflow="hidden"
              fill={PROMOTION_FILL}
              fillOpacity={0.45}
              label={{ value: "Promotion", position: "insideTop", fontSize: 11, fill: "#92400e" }}
            />
            <Tooltip
              formatter={(v) => formatUnits(Number(v))}
              labelFormatter={(ms) => `Week of ${formatShortDay(Number(ms))}`}
            />
            <Legend wrapperStyle={{ fontSize: 12, paddingTop: 12 }} />
            <Line
              type="monotone"
              dataKey="baseline"
              name="Baseline"
              stroke={BASELINE_COLOR}
              strokeWidth={2}
              dot={false}
              isAnimationActive={false}
            />
            {scenarios.map((s, j) => (
              <Line
                key={s.label}
                type="monotone"
                dataKey={`s${j}`}
                name={s.label}
                stroke={SCENARIO_COLORS[j % SCENARIO_COLORS.length]}
                strokeWidth={2}
                strokeDasharray={j === 0 ? undefined : "5 3"}
                dot={false}
                isAnimationActive={false}
              />
            ))}
          </LineChart>
        </ResponsiveContainer>
      </div>
      <p
        className="mt-1 flex items-center gap-1.5 text-xs text-muted-foreground"
        data-testid="chart-promotion-key"
      >
        <span
          aria-hidden="true"
          className="inline-block h-3 w-4 shrink-0 rounded-sm border border-amber-300"
          style={{ backgroundColor: PROMOTION_FILL }}
        />
        Promotion: {dates}
      </p>
    </figure>
  );
}

/**
 * Two charts: units sold per week, and stock at each week's end. The shaded band is the promotion's
 * days: by default the dates the results answered (every scenario of a run has the same dates).
 */
export function ScenarioCharts({
  scenarios,
  promotion,
}: {
  scenarios: readonly ChartScenario[];
  promotion?: PromotionDates;
}) {
  if (scenarios.length === 0) return null;
  const dates = promotion ?? scenarios[0]!.result;
  const band = { starts_on: dates.starts_on, ends_on: dates.ends_on };
  return (
    <div className="grid gap-6 lg:grid-cols-2" data-testid="discount-charts">
      <WeeklyChart
        scenarios={scenarios}
        promotion={band}
        field="units"
        title="Projected units per week"
        yTitle="Units per week"
        testId="chart-units"
      />
      <WeeklyChart
        scenarios={scenarios}
        promotion={band}
        field="stock"
        title="Projected stock at week end"
        yTitle="Units in stock"
        testId="chart-stock"
      />
    </div>
  );
}
