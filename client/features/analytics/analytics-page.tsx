// The Analytics page (/analytics, docs/metrics.md §19): sales this year against last, top movers;
// stock value over time, stock and turnover by category, days of cover, aging by receipt (FIFO),
// dead stock; the ABC × XYZ matrix; lost sales; sell-through by receipt month. Every chart has its
// own control, a drill-down to products where a list filter exists, a CSV download for those
// holding export:reports, and a one-line note on how it is computed. One procedure per chart.

import { PageHeader } from "@client/components/page-header.tsx";
import { Button } from "@client/components/ui/button.tsx";
import { Input } from "@client/components/ui/input.tsx";
import { Skeleton } from "@client/components/ui/skeleton.tsx";
import {
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableHeader,
  TableRow,
} from "@client/components/ui/table.tsx";
import { formatMoneyCompact } from "@client/features/aggregates/top-chart.tsx";
import { ChartCard } from "@client/features/charts/chart-card.tsx";
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
import { LoadError } from "@client/features/config/parts.tsx";
import { NoData } from "@client/features/dashboard/dashboard-page.tsx";
import {
  formatDay,
  formatMoneyShort,
  formatNumber,
  formatPercent,
} from "@client/features/products/format.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import { cn } from "@client/lib/utils.ts";
import type { AnalyticsData, BreakdownDim } from "@shared/analytics.ts";
import { keepPreviousData, type UseQueryResult, useQuery } from "@tanstack/react-query";
import { useRouter } from "@tanstack/react-router";
import { type ReactNode, useState } from "react";
import { Bar, BarChart, ComposedChart, Line } from "recharts";
import { ChangeText } from "./breakdown-table.tsx";
import { PeriodPicker, type PeriodSearch, periodInputOf, periodQuery } from "./period-picker.tsx";

const MARGIN = "#10b981";

export function AnalyticsPage({
  search,
  onSearchChange,
}: {
  search: PeriodSearch;
  onSearchChange: (next: PeriodSearch) => void;
}) {
  const trpc = useTRPC();
  // The ABC × XYZ matrix is cheap: it tells whether there is data at all, and the as-of day.
  const matrix = useQuery(trpc.analytics.abcXyz.queryOptions());
  const head = matrix.data;
  return (
    <div className="space-y-6" data-testid="analytics-page">
      <PageHeader
        title="Analytics"
        description={head?.as_of_day ? <span data-testid="as-of">as of {head.as_of_day}</span> : undefined}
      />
      {matrix.isError ? (
        <LoadError message={matrix.error.message} onRetry={() => void matrix.refetch()} />
      ) : !head ? (
        <Skeleton className="h-64 w-full" />
      ) : !head.has_data ? (
        <NoData href={head.data_management_href} />
      ) : (
        <>
          <section className="space-y-4" aria-labelledby="sales">
            <h2 id="sales" className="text-lg font-semibold">
              Sales
            </h2>
            <PeriodPicker
              value={search}
              onChange={(n) => onSearchChange({ ...search, ...n })}
              asOfDay={head.as_of_day}
            />
            <div className="grid gap-4 xl:grid-cols-2">
              <SalesTrend search={search} canExport={head.can_export} />
              <Movers search={search} canExport={head.can_export} />
            </div>
          </section>
          <section className="space-y-4" aria-labelledby="stock">
            <h2 id="stock" className="text-lg font-semibold">
              Stock
            </h2>
            <div className="grid gap-4 xl:grid-cols-2">
              <StockValue canExport={head.can_export} />
              <StockByCategory search={search} canExport={head.can_export} />
              <Buckets chart="cover" canExport={head.can_export} />
              <Buckets chart="aging" canExport={head.can_export} />
              <DeadStock canExport={head.can_export} />
              <SellThrough canExport={head.can_export} />
            </div>
          </section>
          <section className="space-y-4" aria-labelledby="classes">
            <h2 id="classes" className="text-lg font-semibold">
              Classes and lost sales
            </h2>
            <div className="grid gap-4 xl:grid-cols-2">
              <AbcXyz data={head} />
              <LostSales canExport={head.can_export} />
            </div>
          </section>
        </>
      )}
    </div>
  );
}

/** A chart's card on this page: named for tests, its note is how it is computed. */
function AnalyticsCard({
  id,
  how,
  ...card
}: {
  id: string;
  title: string;
  how: string;
  control?: ReactNode;
  exportHref: string | null;
  query?: UseQueryResult<unknown, { message: string }>;
  children: ReactNode;
}) {
  return (
    <ChartCard
      testId="analytics-chart"
      chartId={id}
      noteTestId="chart-how"
      className="min-w-0"
      note={how}
      {...card}
    />
  );
}

/** One of a few values, as a row of toggle buttons; `options` are [value, label] pairs. */
function Choice<T extends string | number>({
  label,
  value,
  options,
  onChange,
}: {
  label: string;
  value: T;
  options: readonly (readonly [T, string])[];
  onChange: (v: T) => void;
}) {
  return (
    <fieldset className="flex flex-wrap items-center gap-1" aria-label={label}>
      {options.map(([v, text]) => (
        <button
          key={String(v)}
          type="button"
          aria-pressed={value === v}
          onClick={() => onChange(v)}
          className={cn(
            "rounded-md border px-2 py-0.5 text-xs",
            value === v
              ? "border-primary bg-primary text-primary-foreground"
              : "text-muted-foreground hover:bg-muted",
          )}
        >
          {text}
        </button>
      ))}
    </fieldset>
  );
}

/** A chart's choice: its value (starting at `initial`) and its control. */
function useChoice<T extends string | number>(
  label: string,
  options: readonly (readonly [T, string])[],
  initial: NoInfer<T>,
): [T, ReactNode] {
  const [value, setValue] = useState<T>(initial);
  return [value, <Choice key={label} label={label} value={value} onChange={setValue} options={options} />];
}

const exportHref = (can: boolean, chart: string, extra: string) =>
  can ? `/api/analytics/export?chart=${chart}${extra ? `&${extra}` : ""}` : null;

function useLink() {
  const router = useRouter();
  return (href: string | null, children: ReactNode, testId = "drill-link") =>
    href ? (
      <a
        href={href}
        data-testid={testId}
        className="font-medium hover:underline"
        onClick={(e) => {
          if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
          e.preventDefault();
          router.history.push(href);
        }}
      >
        {children}
      </a>
    ) : (
      <span>{children}</span>
    );
}

/**
 * A table of named rows (the name opening its products where it can) and their figures; on a
 * phone each row is a card, each figure labelled by its column.
 */
function NamedRowsTable<R extends { id: string | number; name: string; href: string | null }>({
  nameHead,
  rows,
  columns,
  rowTestId,
}: {
  nameHead: string;
  rows: R[];
  columns: [head: string, cell: (row: R) => ReactNode][];
  rowTestId?: string;
}) {
  const link = useLink();
  return (
    <Table stackOnPhone>
      <TableHeader>
        <TableRow>
          <TableHead>{nameHead}</TableHead>
          {columns.map(([head]) => (
            <TableHead key={head}>{head}</TableHead>
          ))}
        </TableRow>
      </TableHeader>
      <TableBody>
        {rows.map((r) => (
          <TableRow key={r.id} data-testid={rowTestId}>
            <TableCell data-primary="">{link(r.href, r.name)}</TableCell>
            {columns.map(([head, cell]) => (
              <TableCell key={head} data-label={head} className="tabular-nums">
                {cell(r)}
              </TableCell>
            ))}
          </TableRow>
        ))}
      </TableBody>
    </Table>
  );
}

// ---------------------------------------------------------------------------------------------

function SalesTrend({ search, canExport }: { search: PeriodSearch; canExport: boolean }) {
  const trpc = useTRPC();
  const q = useQuery({
    ...trpc.analytics.salesTrend.queryOptions(periodInputOf(search)),
    placeholderData: keepPreviousData,
  });
  const [measure, measureChoice] = useChoice<"revenue" | "units" | "gross_margin">(
    "Measure",
    [
      ["revenue", "Revenue"],
      ["units", "Units"],
      ["gross_margin", "Margin"],
    ],
    "revenue",
  );
  const rows = q.data?.rows ?? [];
  const ly = `ly_${measure}` as const;
  const fmt = (v: number) => (measure === "units" ? formatNumber(v) : formatMoneyShort(v));
  return (
    <AnalyticsCard
      id="sales_trend"
      title="Weekly sales, this year against last"
      how="Σ of the stored daily sales per week ending on the period's last day; last year = the same weeks 52 weeks earlier. Margin = revenue − units × cost price."
      exportHref={exportHref(canExport, "sales_trend", periodQuery(search))}
      query={q}
      control={measureChoice}
    >
      <ChartFrame
        testId="sales-trend-chart"
        label="Weekly sales this year and last"
        height={240}
        empty={
          rows.every((r) => r[measure] === 0 && r[ly] === 0)
            ? "No sales in this period or a year before."
            : undefined
        }
      >
        <ChartLegend
          items={[
            { label: "This year", color: measure === "gross_margin" ? MARGIN : CHART_COLORS.sales },
            { label: "Last year", color: LAST_YEAR, dash: "2 2" },
          ]}
        />
        <ComposedChart {...chartBox(rows, 240)}>
          {gridLines()}
          {weekAxis((w) => formatDay(w).replace(/, \d{4}$/, ""), 24)}
          {yAxis({
            width: 56,
            tickFormat: (v) => (measure === "units" ? formatNumber(v) : formatMoneyCompact(v)),
          })}
          {rowTooltip(rows, (p) => (
            <TooltipBox
              title={`Week ending ${formatDay(p.week_end)}${p.days < 7 ? ` (${p.days} days)` : ""}`}
            >
              <TooltipRow color={CHART_COLORS.sales} label="This year" value={fmt(p[measure])} />
              <TooltipRow color={LAST_YEAR} label="Last year" value={fmt(p[ly])} />
            </TooltipBox>
          ))}
          <Bar
            dataKey={measure}
            fill={measure === "gross_margin" ? MARGIN : CHART_COLORS.sales}
            isAnimationActive={false}
          />
          <Line
            dataKey={ly}
            stroke={LAST_YEAR}
            strokeWidth={2}
            strokeDasharray="4 3"
            dot={false}
            isAnimationActive={false}
          />
        </ComposedChart>
      </ChartFrame>
    </AnalyticsCard>
  );
}

function Movers({ search, canExport }: { search: PeriodSearch; canExport: boolean }) {
  const trpc = useTRPC();
  const [dim, dimChoice] = useChoice<BreakdownDim>(
    "By",
    [
      ["category", "Categories"],
      ["brand", "Brands"],
      ["vendor", "Vendors"],
    ],
    "category",
  );
  const input = { ...periodInputOf(search), dim };
  const q = useQuery({ ...trpc.analytics.movers.queryOptions(input), placeholderData: keepPreviousData });
  const rows = q.data?.rows ?? [];
  return (
    <AnalyticsCard
      id="movers"
      title="Top movers"
      how="The 10 whose sales rose most and the 10 whose sales fell most against the comparison period, in money."
      exportHref={exportHref(canExport, "movers", `${periodQuery(search)}&dim=${dim}`)}
      query={q}
      control={dimChoice}
    >
      {rows.length === 0 ? (
        <p className="py-8 text-center text-sm text-muted-foreground">
          No change in sales between the two periods.
        </p>
      ) : (
        <NamedRowsTable
          nameHead="Name"
          rows={rows}
          rowTestId="mover"
          columns={[
            ["Sales", (r) => formatMoneyShort(r.revenue)],
            ["Compared with", (r) => formatMoneyShort(r.comparison_revenue)],
            [
              "Change",
              (r) => (
                <>
                  <span className={r.delta > 0 ? "text-emerald-700" : "text-red-700"}>
                    {r.delta > 0 ? "+" : ""}
                    {formatMoneyShort(r.delta)}
                  </span>{" "}
                  <ChangeText change={r.change} comparison={r.comparison_revenue} />
                </>
              ),
            ],
          ]}
        />
      )}
    </AnalyticsCard>
  );
}

const SERIES_COLORS = [
  "#2563eb",
  "#ea580c",
  "#0d9488",
  "#9333ea",
  "#dc2626",
  "#ca8a04",
  "#0891b2",
  "#64748b",
];

function StockValue({ canExport }: { canExport: boolean }) {
  const trpc = useTRPC();
  const [weeks, weeksChoice] = useChoice<13 | 26 | 52>(
    "Weeks",
    [
      [13, "13 weeks"],
      [26, "26 weeks"],
      [52, "52 weeks"],
    ],
    52,
  );
  const [split, splitChoice] = useChoice<"total" | "category">(
    "Split",
    [
      ["total", "Total"],
      ["category", "By category"],
    ],
    "total",
  );
  const total = useQuery({
    ...trpc.analytics.stockValue.queryOptions({ weeks }),
    placeholderData: keepPreviousData,
    enabled: split === "total",
  });
  const byCategory = useQuery({
    ...trpc.analytics.stockValueByCategory.queryOptions({ weeks }),
    placeholderData: keepPreviousData,
    enabled: split === "category",
  });
  const q = split === "total" ? total : byCategory;
  const rows = total.data?.rows ?? [];
  const series = byCategory.data?.rows ?? [];
  const merged = (() => {
    const map = new Map<string, Record<string, number | string>>();
    for (const s of series) {
      for (const p of s.points) {
        const row = map.get(p.week_end) ?? { week_end: p.week_end };
        row[`c${s.id}`] = p.value_cost;
        map.set(p.week_end, row);
      }
    }
    return [...map.values()].sort((a, b) => String(a.week_end).localeCompare(String(b.week_end)));
  })();
  const link = useLink();
  return (
    <AnalyticsCard
      id="stock_value"
      title="Stock value over time"
      how="Σ reconstructed closing stock × cost price at each week's end (merchandise); by category: per top-level product category (each product once), the 8 largest today."
      exportHref={exportHref(
        canExport,
        split === "total" ? "stock_value" : "stock_value_by_category",
        `weeks=${weeks}`,
      )}
      query={q}
      control={
        <div className="flex flex-wrap gap-3">
          {weeksChoice}
          {splitChoice}
        </div>
      }
    >
      {split === "total" ? (
        <ChartFrame
          testId="stock-value-chart"
          label="Stock value at cost per week"
          height={220}
          empty={rows.length ? undefined : "No stock history yet."}
        >
          <ComposedChart {...chartBox(rows, 220)}>
            {gridLines()}
            {weekAxis(monthOfWeek, 28, false, monthTicks(rows))}
            {yAxis({ width: 56, tickFormat: formatMoneyCompact })}
            {rowTooltip(rows, (p) => (
              <TooltipBox title={`Week ending ${formatDay(p.week_end)}`}>
                <TooltipRow
                  color={CHART_COLORS.stock}
                  label="At cost"
                  value={formatMoneyShort(p.value_cost)}
                />
                <TooltipRow color={CHART_COLORS.stock} label="Units" value={formatNumber(p.units)} />
              </TooltipBox>
            ))}
            <Line
              dataKey="value_cost"
              stroke={CHART_COLORS.stock}
              strokeWidth={2}
              dot={false}
              isAnimationActive={false}
            />
          </ComposedChart>
        </ChartFrame>
      ) : (
        <ChartFrame
          testId="stock-value-category-chart"
          label="Stock value at cost per week by category"
          height={220}
          empty={series.length ? undefined : "No product category holds stock."}
        >
          <ComposedChart {...chartBox(merged, 220)}>
            {gridLines()}
            {weekAxis(monthOfWeek, 28, false, monthTicks(merged as { week_end: string }[]))}
            {yAxis({ width: 56, tickFormat: formatMoneyCompact })}
            {rowTooltip(merged, (p) => (
              <TooltipBox title={`Week ending ${formatDay(String(p.week_end))}`}>
                {series.map((s, i) => (
                  <TooltipRow
                    key={s.id}
                    color={SERIES_COLORS[i % SERIES_COLORS.length]!}
                    label={s.name}
                    value={formatMoneyShort(Number(p[`c${s.id}`] ?? 0))}
                  />
                ))}
              </TooltipBox>
            ))}
            {series.map((s, i) => (
              <Line
                key={s.id}
                dataKey={`c${s.id}`}
                stroke={SERIES_COLORS[i % SERIES_COLORS.length]}
                strokeWidth={2}
                dot={false}
                isAnimationActive={false}
              />
            ))}
          </ComposedChart>
          <div className="mt-2 flex flex-wrap gap-x-3 gap-y-1 text-xs">
            {series.map((s, i) => (
              <span key={s.id} className="inline-flex items-center gap-1">
                <span
                  className="inline-block size-2 rounded-full"
                  style={{ background: SERIES_COLORS[i % SERIES_COLORS.length] }}
                />
                {link(s.href, s.name)}
              </span>
            ))}
          </div>
        </ChartFrame>
      )}
    </AnalyticsCard>
  );
}

function StockByCategory({ search, canExport }: { search: PeriodSearch; canExport: boolean }) {
  const trpc = useTRPC();
  const q = useQuery({
    ...trpc.analytics.stockByCategory.queryOptions(periodInputOf(search)),
    placeholderData: keepPreviousData,
  });
  const rows = q.data?.rows ?? [];
  return (
    <AnalyticsCard
      id="stock_by_category"
      title="Stock and turnover by category"
      how="Today's stock value at cost per top-level category (rolled up); turnover = the period's cost of goods sold × 365 ÷ its days ÷ that stock value. The period is the Sales period above."
      exportHref={exportHref(canExport, "stock_by_category", periodQuery(search))}
      query={q}
    >
      {rows.length === 0 ? (
        <p className="py-8 text-center text-sm text-muted-foreground">No product categories.</p>
      ) : (
        <div className="max-h-80 overflow-y-auto">
          <NamedRowsTable
            nameHead="Category"
            rows={rows}
            columns={[
              ["Stock at cost", (r) => formatMoneyShort(r.stock_value)],
              ["Cost of sales", (r) => formatMoneyShort(r.cogs)],
              [
                "Turnover",
                (r) =>
                  r.turnover === null ? (
                    <span title="No stock at cost">—</span>
                  ) : (
                    `${formatNumber(r.turnover, 2)}×`
                  ),
              ],
            ]}
          />
        </div>
      )}
    </AnalyticsCard>
  );
}

function BucketChart({
  testId,
  rows,
  empty,
}: {
  testId: string;
  rows: { key: string; label: string; products: number; units: number; value: number; href: string | null }[];
  empty: string;
}) {
  const link = useLink();
  return (
    <div className="space-y-2">
      <ChartFrame
        testId={testId}
        label={testId}
        height={200}
        empty={rows.every((r) => r.products === 0) ? empty : undefined}
      >
        <BarChart {...chartBox(rows, 200)}>
          {gridLines()}
          {xAxis({ dataKey: "label", interval: 0, angle: -20, textAnchor: "end", height: 44 })}
          {yAxis({ width: 56, tickFormat: formatMoneyCompact })}
          {rowTooltip(rows, (p) => (
            <TooltipBox title={p.label}>
              <TooltipRow color={CHART_COLORS.sales} label="At cost" value={formatMoneyShort(p.value)} />
              <TooltipRow color={CHART_COLORS.sales} label="Units" value={formatNumber(p.units)} />
              <TooltipRow color={CHART_COLORS.sales} label="Products" value={formatNumber(p.products)} />
            </TooltipBox>
          ))}
          <Bar dataKey="value" fill={CHART_COLORS.sales} isAnimationActive={false} />
        </BarChart>
      </ChartFrame>
      <div className="flex flex-wrap gap-x-4 gap-y-1 text-xs text-muted-foreground">
        {rows.map((r) => (
          <span key={r.key} data-testid="bucket" data-key={r.key}>
            {link(r.href, r.label)}: {formatNumber(r.products)} products, {formatMoneyShort(r.value)}
          </span>
        ))}
      </div>
    </div>
  );
}

/** The bucket charts: their stock value at cost by bucket, each bucket opening its products. */
const BUCKETS = {
  cover: {
    title: "Days of cover",
    how: "Today's products by on hand ÷ their demand rate (docs/metrics.md §6), with their stock value at cost; discontinued products left out. Open a bucket for its products.",
    empty: "No products.",
  },
  aging: {
    title: "Stock aging",
    how: "Stock on hand by days since the receipt it came in with, first in first out (today's stock is the newest receipts); stock no receipt explains dates from the first receipt or creation. Open a bucket for the products holding stock of that age.",
    empty: "No stock on hand.",
  },
};

function Buckets({ chart, canExport }: { chart: keyof typeof BUCKETS; canExport: boolean }) {
  const trpc = useTRPC();
  const q = useQuery(trpc.analytics[chart].queryOptions());
  const { title, how, empty } = BUCKETS[chart];
  return (
    <AnalyticsCard id={chart} title={title} how={how} exportHref={exportHref(canExport, chart, "")} query={q}>
      <BucketChart testId={`${chart}-chart`} rows={q.data?.rows ?? []} empty={empty} />
    </AnalyticsCard>
  );
}

function DeadStock({ canExport }: { canExport: boolean }) {
  const trpc = useTRPC();
  const [days, setDays] = useState(180);
  const [text, setText] = useState("180");
  const q = useQuery({
    ...trpc.analytics.deadStock.queryOptions({ days }),
    placeholderData: keepPreviousData,
  });
  const link = useLink();
  const row = q.data?.rows[0];
  return (
    <AnalyticsCard
      id="dead_stock"
      title="Dead stock"
      how="Products with stock on hand and no completed sale in the last N days (or never), with their stock value at cost."
      exportHref={exportHref(canExport, "dead_stock", `days=${days}`)}
      query={q}
      control={
        <form
          className="flex items-end gap-2"
          onSubmit={(e) => {
            e.preventDefault();
            const n = Number(text);
            if (Number.isInteger(n) && n >= 1 && n <= 3650) setDays(n);
          }}
        >
          <label className="flex flex-col text-xs text-muted-foreground">
            No sale in N days (1–3650)
            <Input
              type="number"
              min={1}
              max={3650}
              value={text}
              onChange={(e) => setText(e.target.value)}
              className="h-8 w-28"
              data-testid="dead-days"
            />
          </label>
          <Button type="submit" size="sm" variant="outline">
            Apply
          </Button>
        </form>
      }
    >
      {row && (
        <div className="space-y-1" data-testid="dead-stock">
          <div className="text-3xl font-semibold tabular-nums">{formatMoneyShort(row.value)}</div>
          <div className="text-sm text-muted-foreground">
            {link(row.href, `${formatNumber(row.products)} products`)} · {formatNumber(row.units)} units with
            no sale in {formatNumber(days)} days
          </div>
        </div>
      )}
    </AnalyticsCard>
  );
}

function SellThrough({ canExport }: { canExport: boolean }) {
  const trpc = useTRPC();
  const [months, monthsChoice] = useChoice<6 | 12 | 24>(
    "Months",
    [
      [6, "6 months"],
      [12, "12 months"],
      [24, "24 months"],
    ],
    12,
  );
  const q = useQuery({
    ...trpc.analytics.sellThrough.queryOptions({ months }),
    placeholderData: keepPreviousData,
  });
  const link = useLink();
  const rows = q.data?.rows ?? [];
  return (
    <AnalyticsCard
      id="sell_through"
      title="Sell-through by receipt month"
      how="Of the units received in each month, the share sold since: received − still on hand (first in, first out) ÷ received. Open a month for the products received in it."
      exportHref={exportHref(canExport, "sell_through", `months=${months}`)}
      query={q}
      control={monthsChoice}
    >
      <ChartFrame
        testId="sell-through-chart"
        label="Sell-through by receipt month"
        height={200}
        empty={rows.length ? undefined : "No receipts in these months."}
      >
        <BarChart {...chartBox(rows, 200)}>
          {gridLines()}
          {xAxis({ dataKey: "month" })}
          {yAxis({ width: 44, tickFormat: (v) => formatPercent(v, 0), domain: [0, 1] })}
          {rowTooltip(rows, (p) => (
            <TooltipBox title={p.month}>
              <TooltipRow
                color={CHART_COLORS.sales}
                label="Sell-through"
                value={formatPercent(p.sell_through)}
              />
              <TooltipRow color={CHART_COLORS.sales} label="Received" value={formatNumber(p.received)} />
              <TooltipRow color={CHART_COLORS.sales} label="Sold since" value={formatNumber(p.sold)} />
            </TooltipBox>
          ))}
          <Bar dataKey="sell_through" fill={CHART_COLORS.sales} isAnimationActive={false} />
        </BarChart>
      </ChartFrame>
      <div className="mt-2 flex flex-wrap gap-x-4 gap-y-1 text-xs text-muted-foreground">
        {rows.map((r) => (
          <span key={r.month} data-testid="receipt-month" data-key={r.month}>
            {link(r.href, r.month)}: {formatNumber(r.products)} products, {formatPercent(r.sell_through, 0)}
          </span>
        ))}
      </div>
    </AnalyticsCard>
  );
}

function AbcXyz({
  data,
}: {
  data: AnalyticsData<{ abc: string; xyz: string; products: number; value: number; href: string | null }>;
}) {
  const link = useLink();
  const cols = ["X", "Y", "Z", "none"];
  const cell = (abc: string, xyz: string) => data.rows.find((c) => c.abc === abc && c.xyz === xyz);
  return (
    <AnalyticsCard
      id="abc_xyz"
      title="ABC × XYZ"
      how="Products and stock value at cost by ABC class (share of revenue) and XYZ class (variation of weekly demand over in-stock weeks: X steady, Z erratic; docs/metrics.md §9). Today's classes."
      exportHref={exportHref(data.can_export, "abc_xyz", "")}
    >
      <table className="w-full table-fixed text-sm" data-testid="abc-xyz">
        <thead>
          <tr>
            <th className="w-10" />
            {cols.map((x) => (
              <th key={x} className="pb-1 text-left text-xs font-medium text-muted-foreground">
                {x === "none" ? "No XYZ" : x}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {["A", "B", "C"].map((abc) => (
            <tr key={abc}>
              <th className="text-left font-semibold">{abc}</th>
              {cols.map((xyz) => {
                const c = cell(abc, xyz);
                return (
                  <td key={xyz} className="p-0.5" data-cell={`${abc}${xyz}`}>
                    <div className="rounded-md border bg-muted/30 px-1.5 py-1">
                      <div className="tabular-nums">
                        {link(c?.href ?? null, formatNumber(c?.products ?? 0), "matrix-link")}
                      </div>
                      <div className="truncate text-xs text-muted-foreground tabular-nums">
                        {formatMoneyShort(c?.value ?? 0)}
                      </div>
                    </div>
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
      <p className="mt-2 text-xs text-muted-foreground">
        "No XYZ": fewer than 4 in-stock weeks or no demand. A count opens those products.
      </p>
    </AnalyticsCard>
  );
}

function LostSales({ canExport }: { canExport: boolean }) {
  const trpc = useTRPC();
  const [days, daysChoice] = useChoice<90 | 365>(
    "Window",
    [
      [90, "90 days"],
      [365, "365 days"],
    ],
    90,
  );
  const [dim, dimChoice] = useChoice<"category" | "vendor">(
    "By",
    [
      ["category", "Categories"],
      ["vendor", "Vendors"],
    ],
    "category",
  );
  const q = useQuery({
    ...trpc.analytics.lostSales.queryOptions({ days, dim }),
    placeholderData: keepPreviousData,
  });
  const rows = q.data?.rows ?? [];
  return (
    <AnalyticsCard
      id="lost_sales"
      title="Lost sales"
      how="Per product: average daily units on in-stock days (last 90 days) × its days out of stock in the window × its price; summed per category (rolled up) or vendor."
      exportHref={exportHref(canExport, "lost_sales", `days=${days}&dim=${dim}`)}
      query={q}
      control={
        <div className="flex flex-wrap gap-3">
          {daysChoice}
          {dimChoice}
        </div>
      }
    >
      <p className="mb-2 text-sm">
        Total:{" "}
        <span className="font-semibold tabular-nums">{formatMoneyShort(q.data?.extra?.total ?? 0)}</span>
      </p>
      {rows.length === 0 ? (
        <p className="py-6 text-center text-sm text-muted-foreground">
          No product with demand was out of stock in this window.
        </p>
      ) : (
        <div className="max-h-80 overflow-y-auto">
          <NamedRowsTable
            nameHead={dim === "category" ? "Category" : "Vendor"}
            rows={rows}
            columns={[
              ["Lost revenue", (r) => formatMoneyShort(r.lost_revenue)],
              ["Days out", (r) => formatNumber(r.out_of_stock_days)],
              ["Products", (r) => formatNumber(r.products)],
            ]}
          />
        </div>
      )}
    </AnalyticsCard>
  );
}
