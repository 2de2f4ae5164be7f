// Projected weekly units and stock, baseline against up to three scenarios (docs/metrics.md §16).
import { formatShortDay, formatUnits } from "@client/features/products/format.ts";
import type { SimulationResult } from "@shared/discounts.ts";
import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";

export const SCENARIO_COLORS = ["#ea580c", "#7c3aed", "#0d9488"] as const;
const BASELINE_COLOR = "#2563eb";
const AXIS_TICK = { fontSize: 11, fill: "#6b7280" };

export interface ChartScenario {
  label: string;
  result: SimulationResult;
}

function rowsOf(scenarios: readonly ChartScenario[], field: "units" | "stock") {
  const first = scenarios[0]!.result.weekly;
  return first.map((w, i) => {
    const row: Record<string, number | string> = {
      week: w.week_start,
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
  field,
  title,
  testId,
}: {
  scenarios: readonly ChartScenario[];
  field: "units" | "stock";
  title: string;
  testId: string;
}) {
  const data = rowsOf(scenarios, field);
  return (
    <figure data-testid={testId} aria-label={title} className="w-full">
      <figcaption className="mb-1 text-sm font-medium">{title}</figcaption>
      <div className="h-64 w-full">
        <ResponsiveContainer width="100%" height="100%">
          <LineChart data={data} margin={{ top: 8, right: 12, bottom: 4, left: 0 }}>
            <CartesianGrid stroke="#e5e7eb" vertical={false} />
            <XAxis
              dataKey="week"
              tick={AXIS_TICK}
              tickFormatter={(d: string) => formatShortDay(Date.parse(`${d}T00:00:00Z`))}
              minTickGap={16}
            />
            <YAxis tick={AXIS_TICK} width={52} tickFormatter={(v: number) => formatUnits(v)} />
            <Tooltip
              formatter={(v) => formatUnits(Number(v))}
              labelFormatter={(d) => `Week of ${formatShortDay(Date.parse(`${String(d)}T00:00:00Z`))}`}
            />
            <Legend wrapperStyle={{ fontSize: 12 }} />
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
    </figure>
  );
}

/** Two charts: units sold per week, and stock at each week's end. */
export function ScenarioCharts({ scenarios }: { scenarios: readonly ChartScenario[] }) {
  if (scenarios.length === 0) return null;
  return (
    <div className="grid gap-6 lg:grid-cols-2" data-testid="discount-charts">
      <WeeklyChart
        scenarios={scenarios}
        field="units"
        title="Projected units per week"
        testId="chart-units"
      />
      <WeeklyChart
        scenarios={scenarios}
        field="stock"
        title="Projected stock at week end"
        testId="chart-stock"
      />
    </div>
  );
}
