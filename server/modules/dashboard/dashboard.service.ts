// The Dashboard's figures (docs/metrics.md §14): the action tiles (each counted with the Products
// list's own filter, countProductMetrics), the KPIs of the last 7 and 30 days against the period
// before and the same days a year earlier, and the charts. Everything reads what the calculation
// phase stored (sales_daily, stock_value_weekly, product_metrics, product_forecasts): figures change
// only when a run commits, so they are kept per calculation and only the caller's links differ.
import type {
  DashboardSummary,
  DashboardTile,
  DataAge,
  DayRange,
  Kpi,
  KpiPeriod,
  StatusValue,
  StockValuePoint,
  TileFilter,
  WeeklySalesPoint,
} from "../../../shared/dashboard.ts";
import { PRODUCT_STATUSES } from "../../../shared/metrics.ts";
import { hasPermission, type PermissionHolder } from "../../../shared/permissions.ts";
import type { Database } from "../../db/database.ts";
import { getDataAsOf } from "../dataOps/as-of.service.ts";
import { countProductMetrics } from "../metrics/metrics.service.ts";
import { purchaseOrderTiles } from "../purchasing/purchasing.service.ts";

type Query = <T>(sql: string, params?: unknown[]) => Promise<T[]>;
const runner = (db: Database): Query => {
  return <T>(sql: string, params: unknown[] = []) => db.prisma.$queryRawUnsafe<T[]>(sql, ...params);
};

const DAY_MS = 86_400_000;
/** A day plus n days, "YYYY-MM-DD". */
export function addDays(day: string, n: number): string {
  return new Date(new Date(`${day}T00:00:00Z`).getTime() + n * DAY_MS).toISOString().slice(0, 10);
}
/** Days a year is shifted by for "last year": 52 weeks, so weekdays line up. */
export const LAST_YEAR_DAYS = 364;

// ---------------------------------------------------------------------------------------------
// The data's age

/**
 * The figures' day and freshness (getDataAsOf: the last completed run's as-of day, the stale-data
 * warning), the last successful import and calculation, and the last run when it failed; the
 * version keys the caches (it changes when a run ends).
 */
export async function loadDataAge(
  db: Database,
  now: Date = new Date(),
): Promise<DataAge & { version: string }> {
  const query = runner(db);
  const [asOf, [row]] = await Promise.all([
    getDataAsOf(db, now),
    query<{
      last_import: Date | null;
      last_calculation: Date | null;
      failed_at: Date | null;
      failed_type: string | null;
      failed_message: string | null;
      version: string | null;
    }>(
      `SELECT (SELECT max(end_time) FROM import_history WHERE status = 'completed') AS last_import,
         (SELECT max(end_time) FROM calculate_history WHERE status = 'completed') AS last_calculation,
         f.ended_at AS failed_at, f.type AS failed_type, f.error AS failed_message,
         (SELECT max(last_calculation_timestamp)::text FROM calculate_status) || '|' ||
           COALESCE((SELECT max(id) FROM data_runs WHERE status <> 'running')::text, '') AS version
       FROM (SELECT 1) one
       LEFT JOIN LATERAL (
         SELECT r.ended_at, r.type, r.error, r.status FROM data_runs r
         WHERE r.type IN ('update', 'reset') AND r.status <> 'running'
         ORDER BY r.id DESC LIMIT 1
       ) f ON f.status = 'failed'`,
    ),
  ]);
  const lastImport = row?.last_import ?? null;
  const calculated = asOf.run_id !== null;
  return {
    version: `${row?.version ?? ""}|${asOf.run_id ?? ""}`,
    as_of: calculated ? asOf.as_of : null,
    as_of_day: calculated ? asOf.as_of_day : null,
    last_import: lastImport ? lastImport.toISOString() : null,
    last_calculation: row?.last_calculation ? row.last_calculation.toISOString() : null,
    age_days: asOf.data_age_days,
    stale_data_days: asOf.stale_data_days,
    stale: asOf.stale,
    warning: asOf.warning,
    last_run_failed: row?.failed_at
      ? { at: row.failed_at.toISOString(), type: row.failed_type ?? "", message: row.failed_message ?? "" }
      : null,
  };
}

// ---------------------------------------------------------------------------------------------
// Tiles

interface TileDef {
  key: string;
  label: string;
  filter: TileFilter;
  search: Record<string, string>;
  value: "reorder_value" | "overstock_value" | "stock_value_cost" | "revenue_30d";
  value_label: string;
  how: string;
  tone: DashboardTile["tone"];
}

/**
 * The "Needs action today" tiles, in their order. Each is a Products page filter: its count is the
 * list's total. More tiles (purchase orders) are added to this list.
 */
export const DASHBOARD_TILES: TileDef[] = [
  {
    key: "order_now",
    label: "Order now",
    filter: { status: ["critical", "reorder"] },
    search: { status: "critical,reorder" },
    value: "reorder_value",
    value_label: "to order, at cost",
    how: "Products whose stock plus what is on order is at or below the reorder point, or that run out within the low-stock days (status critical or reorder).",
    tone: "danger",
  },
  {
    key: "stockout_before_arrival",
    label: "Out before an order arrives",
    filter: { stockoutBeforeArrival: true },
    search: { stockout_before_arrival: "1" },
    value: "reorder_value",
    value_label: "to order, at cost",
    how: "Products whose expected stock-out date (incoming purchase orders counted) comes before an order placed today would arrive (today + lead time).",
    tone: "danger",
  },
  {
    key: "a_out_of_stock",
    label: "A products out of stock",
    filter: { abc: "A", outOfStock: true },
    search: { abc: "A", out_of_stock: "1" },
    value: "revenue_30d",
    value_label: "revenue of the last 30 days",
    how: "Products of ABC class A with nothing on hand.",
    tone: "danger",
  },
  {
    key: "overstock",
    label: "Overstock",
    filter: { status: ["overstocked"] },
    search: { status: "overstocked" },
    value: "overstock_value",
    value_label: "overstock at cost",
    how: "Products holding more than safety stock plus the overstock days of demand (status overstocked); the value is the excess at cost.",
    tone: "warning",
  },
  {
    key: "new_without_sales",
    label: "New products without sales",
    filter: { status: ["new"], noSalesDays: 30 },
    search: { status: "new", no_sales_days: "30" },
    value: "stock_value_cost",
    value_label: "stock at cost",
    how: "Products in their first 30 days (status new) with no sale yet.",
    tone: "info",
  },
];

async function computeTiles(db: Database): Promise<Omit<DashboardTile, "href">[]> {
  return Promise.all(
    DASHBOARD_TILES.map(async (t) => {
      const sums = await countProductMetrics(db, t.filter);
      return {
        key: t.key,
        label: t.label,
        count: sums.count,
        value: sums[t.value],
        value_label: t.value_label,
        how: t.how,
        tone: t.tone,
        filter: t.filter,
        search: t.search,
      };
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// KPIs

interface SalesSums {
  revenue: number;
  takings: number;
  units: number;
  costed_revenue: number;
  cogs: number;
  orders: number;
}

/** The total row's sums over each range (one query). */
async function salesSums(db: Database, ranges: DayRange[]): Promise<SalesSums[]> {
  const cols = ranges
    .map((_, i) => {
      const f = `FILTER (WHERE day BETWEEN $${2 * i + 1}::date AND $${2 * i + 2}::date)`;
      return `COALESCE(SUM(revenue) ${f}, 0)::float8 AS revenue_${i},
        COALESCE(SUM(takings) ${f}, 0)::float8 AS takings_${i},
        COALESCE(SUM(units) ${f}, 0)::float8 AS units_${i},
        COALESCE(SUM(costed_revenue) ${f}, 0)::float8 AS costed_revenue_${i},
        COALESCE(SUM(cogs) ${f}, 0)::float8 AS cogs_${i},
        COALESCE(SUM(orders) ${f}, 0)::float8 AS orders_${i}`;
    })
    .join(",\n");
  const [row] = await runner(db)<Record<string, number>>(
    `SELECT ${cols} FROM sales_daily WHERE dim = 'total' AND key = 0`,
    ranges.flatMap((r) => [r.from, r.to]),
  );
  return ranges.map((_, i) => ({
    revenue: row?.[`revenue_${i}`] ?? 0,
    takings: row?.[`takings_${i}`] ?? 0,
    units: row?.[`units_${i}`] ?? 0,
    costed_revenue: row?.[`costed_revenue_${i}`] ?? 0,
    cogs: row?.[`cogs_${i}`] ?? 0,
    orders: row?.[`orders_${i}`] ?? 0,
  }));
}

interface WeekStock {
  week_end: string;
  value_cost: number;
  in_stock_a: number;
  a_products: number;
}

const round2 = (v: number) => Math.round(v * 100) / 100;
const ratio = (a: number, b: number) => (b > 0 ? a / b : null);

/** The periods of the KPIs for D0 (the as-of day): the last n days, the n before, the same n a year earlier. */
export function kpiRanges(
  d0: string,
  days: number,
): { current: DayRange; previous: DayRange; last_year: DayRange } {
  return {
    current: { from: addDays(d0, -(days - 1)), to: d0 },
    previous: { from: addDays(d0, -(2 * days - 1)), to: addDays(d0, -days) },
    last_year: { from: addDays(d0, -(days - 1) - LAST_YEAR_DAYS), to: addDays(d0, -LAST_YEAR_DAYS) },
  };
}

async function computeKpis(db: Database, d0: string): Promise<KpiPeriod[]> {
  const query = runner(db);
  const periods = ([7, 30] as const).map((days) => ({ days, ...kpiRanges(d0, days) }));
  const ranges = periods.flatMap((p) => [p.current, p.previous, p.last_year]);
  const [sums, weeks, [accuracy]] = await Promise.all([
    salesSums(db, ranges),
    query<WeekStock>(
      `SELECT to_char(week_end, 'YYYY-MM-DD') AS week_end, value_cost::float8 AS value_cost, in_stock_a, a_products
       FROM stock_value_weekly WHERE dim = 'total' AND key = 0 ORDER BY week_end`,
    ),
    query<{ wape: number | null }>(
      `SELECT SUM(a.wape * a.actual) / NULLIF(SUM(a.actual) FILTER (WHERE a.wape IS NOT NULL), 0) AS wape
       FROM product_forecast_accuracy a JOIN product_metrics m ON m.pid = a.pid AND m.forecast_method = a.method`,
    ),
  ]);
  const weekAt = (day: string) => weeks.filter((w) => w.week_end <= day).at(-1) ?? null;
  // The stock figures are taken at the end of each period, at the last stored week end on or before it.
  const stockAt = (day: string) => {
    const w = weekAt(day);
    return w && w.week_end > addDays(day, -7) ? w : null;
  };
  return periods.map((p, i) => {
    const [cur, prev, ly] = [sums[3 * i]!, sums[3 * i + 1]!, sums[3 * i + 2]!];
    const trio = (f: (s: SalesSums) => number | null) => ({
      current: f(cur),
      previous: f(prev),
      last_year: f(ly),
    });
    const stock = (f: (w: WeekStock) => number | null) => {
      const at = (day: string) => {
        const w = stockAt(day);
        return w ? f(w) : null;
      };
      return { current: at(p.current.to), previous: at(p.previous.to), last_year: at(p.last_year.to) };
    };
    const figures: Kpi[] = [
      {
        key: "revenue",
        label: "Merchandise revenue",
        unit: "money",
        better: "up",
        ...trio((s) => round2(s.revenue)),
        how: "Σ quantity × price − discount over completed order lines of merchandise products in the period.",
      },
      {
        key: "takings",
        label: "Total takings",
        unit: "money",
        better: "up",
        ...trio((s) => round2(s.takings)),
        how: "Σ quantity × price − discount over every completed order line in the period, non-merchandise lines (postage, fees, gift cards) included.",
      },
      {
        key: "units",
        label: "Units sold",
        unit: "count",
        better: "up",
        ...trio((s) => s.units),
        how: "Σ quantity over completed order lines of merchandise products in the period.",
      },
      {
        key: "gross_margin",
        label: "Gross margin",
        unit: "money",
        better: "up",
        ...trio((s) => round2(s.costed_revenue - s.cogs)),
        how: "Revenue − units × cost price, over the lines of products that have a cost price.",
      },
      {
        key: "gross_margin_pct",
        label: "Gross margin %",
        unit: "percent",
        better: "up",
        ...trio((s) => ratio(s.costed_revenue - s.cogs, s.costed_revenue)),
        how: "Gross margin ÷ the revenue of the products that have a cost price.",
      },
      {
        key: "avg_order_value",
        label: "Average order value",
        unit: "money",
        better: "up",
        ...trio((s) => {
          const v = ratio(s.takings, s.orders);
          return v === null ? null : round2(v);
        }),
        how: "Total takings ÷ the number of orders (distinct order numbers with a completed line, counted per day).",
      },
      {
        key: "stock_value",
        label: "Stock value at cost",
        unit: "money",
        better: "down",
        ...stock((w) => w.value_cost),
        how: "Σ reconstructed closing stock × cost price at the end of the period (the last week end on or before it).",
      },
      {
        key: "a_in_stock_rate",
        label: "A products in stock",
        unit: "percent",
        better: "up",
        ...stock((w) => ratio(w.in_stock_a, w.a_products)),
        how: "Of today's A products that existed then, the share with stock above 0 at the end of the period (the last week end on or before it).",
      },
      {
        key: "forecast_error",
        label: "Forecast error (WAPE)",
        unit: "percent",
        better: "down",
        current: accuracy?.wape ?? null,
        previous: null,
        last_year: null,
        how: "The 8-week backtest's Σ|actual − forecast| ÷ Σ actual of the method each product uses, weighted by units sold. It is recalculated each run, not per period.",
      },
    ];
    return { days: p.days, current: p.current, previous: p.previous, last_year: p.last_year, figures };
  });
}

// ---------------------------------------------------------------------------------------------
// Charts

async function computeCharts(db: Database, d0: string): Promise<DashboardSummary["charts"]> {
  const query = runner(db);
  const first = addDays(d0, -(26 * 7 - 1));
  const [weekly, forecast, stock, status] = await Promise.all([
    // 26 weeks ending on D0 and the same 26 weeks 52 weeks before.
    query<{ w: number; units: number; revenue: number; ly_units: number; ly_revenue: number }>(
      `SELECT w, SUM(units) FILTER (WHERE NOT ly)::float8 AS units, SUM(revenue) FILTER (WHERE NOT ly)::float8 AS revenue,
         SUM(units) FILTER (WHERE ly)::float8 AS ly_units, SUM(revenue) FILTER (WHERE ly)::float8 AS ly_revenue
       FROM (
         SELECT (day - $1::date) / 7 AS w, false AS ly, units, revenue FROM sales_daily
         WHERE dim = 'total' AND key = 0 AND day BETWEEN $1::date AND $2::date
         UNION ALL
         SELECT (day + ${LAST_YEAR_DAYS} - $1::date) / 7, true, units, revenue FROM sales_daily
         WHERE dim = 'total' AND key = 0 AND day BETWEEN $1::date - ${LAST_YEAR_DAYS} AND $2::date - ${LAST_YEAR_DAYS}
       ) x GROUP BY w`,
      [first, d0],
    ),
    query<{ h: number; units: number }>(
      `SELECT h::int, SUM(u)::float8 AS units
       FROM product_forecasts f CROSS JOIN LATERAL unnest(f.weekly) WITH ORDINALITY AS x(u, h)
       GROUP BY h ORDER BY h`,
    ),
    query<StockValuePoint>(
      `SELECT to_char(week_end, 'YYYY-MM-DD') AS week_end, value_cost::float8 AS value_cost
       FROM stock_value_weekly WHERE dim = 'total' AND key = 0 ORDER BY week_end`,
    ),
    query<StatusValue>(
      `SELECT COALESCE(status, 'none') AS status, count(*)::int AS products, COALESCE(SUM(stock_value_cost), 0)::float8 AS value_cost
       FROM product_metrics GROUP BY status`,
    ),
  ]);
  const byWeek = new Map(weekly.map((r) => [Number(r.w), r]));
  const weekly_sales: WeeklySalesPoint[] = [];
  const hasSales = weekly.length > 0;
  for (let w = 0; w < 26; w++) {
    const r = byWeek.get(w);
    weekly_sales.push({
      week_end: addDays(first, 7 * w + 6),
      units: hasSales ? (r?.units ?? 0) : null,
      revenue: hasSales ? round2(r?.revenue ?? 0) : null,
      last_year_units: hasSales ? (r?.ly_units ?? 0) : null,
      last_year_revenue: hasSales ? round2(r?.ly_revenue ?? 0) : null,
      forecast_units: null,
    });
  }
  for (const f of forecast) {
    weekly_sales.push({
      week_end: addDays(d0, 7 * Number(f.h)),
      units: null,
      revenue: null,
      last_year_units: null,
      last_year_revenue: null,
      forecast_units: Math.round(f.units),
    });
  }
  const order = (s: string) => {
    const i = (PRODUCT_STATUSES as readonly string[]).indexOf(s);
    return i < 0 ? 99 : i;
  };
  return {
    weekly_sales,
    stock_value: stock,
    stock_by_status: status.sort((a, b) => order(a.status) - order(b.status)),
  };
}

// ---------------------------------------------------------------------------------------------
// The summary

type Figures = Omit<DashboardSummary, "tiles" | "data_management_href" | "purchase_orders"> & {
  tiles: Omit<DashboardTile, "href">[];
};
const caches = new WeakMap<Database, { version: string; figures: Promise<Figures> }>();

async function computeFigures(db: Database, data: DataAge): Promise<Figures> {
  const d0 = data.as_of_day;
  if (!d0) {
    return {
      data,
      has_data: false,
      tiles: [],
      kpis: [],
      charts: { weekly_sales: [], stock_value: [], stock_by_status: [] },
    };
  }
  const [tiles, kpis, charts] = await Promise.all([
    computeTiles(db),
    computeKpis(db, d0),
    computeCharts(db, d0),
  ]);
  return { data, has_data: true, tiles, kpis, charts };
}

/** The Dashboard for one user: the figures (kept per calculation), with the links they may open. */
export async function getDashboard(
  db: Database,
  user: PermissionHolder,
  now: Date = new Date(),
): Promise<DashboardSummary> {
  const { version, ...data } = await loadDataAge(db, now);
  let kept = caches.get(db);
  if (!kept || kept.version !== version) {
    kept = { version, figures: computeFigures(db, data) };
    caches.set(db, kept);
    kept.figures.catch(() => caches.delete(db));
  }
  // Purchase orders change with every PO action, not only with a calculation: the app's orders are
  // summed each time, the imported ones kept per data version (dashboardPoTotals).
  const [figures, purchaseOrders] = await Promise.all([
    kept.figures,
    hasPermission(user, "access:purchase_orders")
      ? purchaseOrderTiles(db, version, data.as_of_day ?? now.toISOString().slice(0, 10))
      : null,
  ]);
  const products = hasPermission(user, "access:products");
  return {
    ...figures,
    // The age is read on every request (it grows while the figures stay).
    data,
    data_management_href: hasPermission(user, "settings:data_management") ? "/settings?tab=data" : null,
    purchase_orders: purchaseOrders,
    tiles: figures.tiles.map((t) => ({
      ...t,
      href: products ? `/products?${new URLSearchParams(t.search).toString()}` : null,
    })),
  };
}
