// "How these figures are worked out": every figure of metrics.explain with its symbolic formula, the
// same formula filled in with this product's inputs, and the note on any fallback (docs/metrics.md).
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@client/components/ui/card.tsx";
import { cn } from "@client/lib/utils.ts";
import { type ExplainedFigure, type ProductStatus, STATUS_LABELS } from "@shared/metrics.ts";
import { ChevronRightIcon, InfoIcon } from "lucide-react";
import { DASH, formatDay, formatMoney, formatNumber, formatPercent, formatRate } from "./format.ts";

interface FigureGroup {
  id: string;
  title: string;
  description: string;
  keys: readonly string[];
}

export const FIGURE_GROUPS: readonly FigureGroup[] = [
  {
    id: "stock-demand",
    title: "Stock & demand",
    description:
      "What is on hand and coming and what it is worth, what it sold, how fast it sells, and how long it lasts.",
    keys: [
      "on_hand",
      "on_order",
      "stock_value_cost",
      "stock_value_retail",
      "sales_units",
      "sales_revenue",
      "days_in_stock_90",
      "days_in_stock_365",
      "avg_daily_sales",
      "daily_sales_std",
      "demand_rate",
      "days_of_cover",
      "stockout_date",
    ],
  },
  {
    id: "lead-time",
    title: "Lead time",
    description: "How long a purchase order takes to arrive, measured from receipts and configured.",
    keys: ["lead_time_measured", "lead_time", "lead_time_std"],
  },
  {
    id: "reorder",
    title: "Safety stock & reorder",
    description: "When to reorder and how much, covering the lead time and the days of stock.",
    keys: [
      "safety_stock",
      "lead_time_demand",
      "reorder_point",
      "forecast_horizon_units",
      "reorder_qty",
      "reorder_value",
      "overstock_qty",
      "overstock_value",
    ],
  },
  {
    id: "status",
    title: "Status & class",
    description: "Which status rule matched, and where the product ranks by sales.",
    keys: ["status", "abc_class"],
  },
  {
    id: "profitability",
    title: "Profitability",
    description: "Margin and how hard the stock works over the last year.",
    keys: ["margin_365d", "sell_through_30d", "avg_stock_units_365", "turnover_365d", "gmroi_365d"],
  },
  {
    id: "forecast",
    title: "Forecast",
    description:
      "The weekly forecast for the next 13 weeks, how its first week is worked out, and how each method did on the last 8 weeks.",
    keys: ["forecast_week_1", "forecast", "backtest"],
  },
];

/** The figures in their groups, in the server's order; figures of no group go to "Other". */
export function groupFigures(
  figures: ExplainedFigure[],
): { group: FigureGroup; figures: ExplainedFigure[] }[] {
  const known = new Set(FIGURE_GROUPS.flatMap((g) => g.keys));
  const groups = FIGURE_GROUPS.map((group) => ({
    group,
    figures: figures.filter((f) => group.keys.includes(f.key)),
  }));
  const other = figures.filter((f) => !known.has(f.key));
  if (other.length)
    groups.push({
      group: { id: "other", title: "Other", description: "More figures of the calculation.", keys: [] },
      figures: other,
    });
  return groups.filter((g) => g.figures.length > 0);
}

const PERCENT_KEYS = new Set(["margin_365d", "sell_through_30d"]);
const TIMES_KEYS = new Set(["turnover_365d", "gmroi_365d"]);
const MONEY_KEYS = new Set(["stock_value_cost", "stock_value_retail", "reorder_value", "overstock_value"]);

/** A figure's value as shown: units, rates, days, percentages, dates and labels. */
export function formatFigureValue(f: Pick<ExplainedFigure, "key" | "value" | "unit">): string {
  const { key, value, unit } = f;
  if (value === null || value === undefined || value === "") return DASH;
  if (typeof value === "string") {
    if (key === "status") return STATUS_LABELS[value as ProductStatus] ?? value;
    if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return formatDay(value);
    return value;
  }
  if (PERCENT_KEYS.has(key)) return formatPercent(value);
  if (TIMES_KEYS.has(key)) return `${formatNumber(value, 2)}×`;
  if (MONEY_KEYS.has(key)) return formatMoney(value);
  switch (unit) {
    case "units/day":
      return `${formatRate(value)}/day`;
    case "days":
      return `${formatNumber(value, 1)} ${value === 1 ? "day" : "days"}`;
    case "units":
      return `${formatNumber(value, 2)} ${value === 1 ? "unit" : "units"}`;
    case undefined:
    case "":
      return formatNumber(value, 4);
    default:
      return `${formatNumber(value, 2)} ${unit}`;
  }
}

/** Long chains ("a; b; c") break after each "; " on screen; the text stays the same. */
function Chain({ text }: { text: string }) {
  const parts = text.split(/(?<=; )/);
  return parts.map((part, i) => (
    // biome-ignore lint/suspicious/noArrayIndexKey: fixed pieces of one string
    <span key={i} className={cn(parts.length > 1 && "block")}>
      {part}
    </span>
  ));
}

function formatInput(value: number | string | null): string {
  if (value === null) return DASH;
  if (typeof value === "number") return formatNumber(value, 4);
  return value;
}

function FigureRow({ figure }: { figure: ExplainedFigure }) {
  const inputs = Object.entries(figure.inputs);
  return (
    <div
      data-testid="explained-figure"
      data-key={figure.key}
      id={`figure-${figure.key}`}
      className="-mx-2 grid scroll-mt-20 gap-x-6 gap-y-2 rounded-md px-2 py-4 transition-colors first:pt-0 last:pb-0 target:bg-amber-50 target:first:pt-4 md:grid-cols-[13rem_minmax(0,1fr)] dark:target:bg-amber-950/30"
    >
      <div className="flex items-baseline justify-between gap-3 md:block">
        <div className="text-sm text-muted-foreground">
          {figure.label}
          <span className="ml-1.5 text-xs text-muted-foreground/70" title="Section of docs/metrics.md">
            {figure.section}
          </span>
        </div>
        <div
          className="text-right text-lg font-semibold tabular-nums md:mt-0.5 md:text-left"
          data-testid="figure-value"
        >
          {formatFigureValue(figure)}
        </div>
      </div>
      <div className="min-w-0 space-y-1.5">
        <p className="font-mono text-xs leading-relaxed text-muted-foreground" data-testid="figure-formula">
          {figure.formula}
        </p>
        <p
          className="break-words rounded-md border bg-muted/50 px-2.5 py-1.5 font-mono text-[13px] leading-relaxed"
          data-testid="figure-substituted"
        >
          <Chain text={figure.substituted} />
        </p>
        {figure.note && (
          <p className="flex gap-1.5 text-xs text-muted-foreground" data-testid="figure-note">
            <InfoIcon aria-hidden className="mt-0.5 size-3.5 shrink-0 text-sky-600" />
            <span>{figure.note}</span>
          </p>
        )}
        {inputs.length > 0 && (
          <details className="group text-xs">
            <summary className="inline-flex cursor-pointer list-none items-center gap-1 text-muted-foreground hover:text-foreground [&::-webkit-details-marker]:hidden">
              <ChevronRightIcon aria-hidden className="size-3.5 transition-transform group-open:rotate-90" />
              Inputs
            </summary>
            <dl className="mt-1.5 grid grid-cols-[auto_minmax(0,1fr)] gap-x-4 gap-y-0.5 rounded-md border px-2.5 py-1.5 font-mono">
              {inputs.map(([name, value]) => (
                <div key={name} className="contents">
                  <dt className="text-muted-foreground">{name}</dt>
                  <dd className="break-words">{formatInput(value)}</dd>
                </div>
              ))}
            </dl>
          </details>
        )}
      </div>
    </div>
  );
}

export function Explanation({ figures }: { figures: ExplainedFigure[] }) {
  const groups = groupFigures(figures);
  return (
    <section aria-labelledby="explanation-heading" className="space-y-4" data-testid="explanation">
      <div className="space-y-1">
        <h2 id="explanation-heading" className="text-lg font-semibold tracking-tight">
          How these figures are worked out
        </h2>
        <p className="text-sm text-muted-foreground">
          Each figure with its formula and the same formula filled in with this product's numbers from the
          last calculation.
        </p>
        <nav aria-label="Figure groups" className="flex flex-wrap gap-1.5 pt-1">
          {groups.map(({ group }) => (
            <a
              key={group.id}
              href={`#group-${group.id}`}
              className="rounded-full border px-2.5 py-0.5 text-xs text-muted-foreground hover:bg-accent hover:text-foreground"
            >
              {group.title}
            </a>
          ))}
        </nav>
      </div>
      {groups.map(({ group, figures: list }) => (
        <Card
          key={group.id}
          id={`group-${group.id}`}
          className="scroll-mt-20 gap-4 py-5"
          data-testid="figure-group"
          data-group={group.id}
        >
          <CardHeader className="px-5">
            <CardTitle className="text-base">{group.title}</CardTitle>
            <CardDescription>{group.description}</CardDescription>
          </CardHeader>
          <CardContent className="divide-y px-5">
            {list.map((f) => (
              <FigureRow key={f.key} figure={f} />
            ))}
          </CardContent>
        </Card>
      ))}
    </section>
  );
}
