// The Overview's figures (docs/metrics.md §18): KPIs of a period against its comparison, and the
// breakdowns by product category (rolled up the tree), brand and vendor with their change and a
// 12-week sparkline. Everything reads the stored series of the calculation phase (sales_daily,
// stock_value_weekly): no order line is read here.
import {
  addDays,
  BREAKDOWN_DIMS,
  type BreakdownDim,
  type BreakdownRow,
  daysIn,
  type OverviewKpi,
  type OverviewSummary,
  PeriodError,
  type PeriodQuery,
  type ResolvedPeriod,
  resolvePeriod,
} from "../../../shared/analytics.ts";
import type { DayRange } from "../../../shared/dashboard.ts";
import { hasPermission, type PermissionHolder } from "../../../shared/permissions.ts";
import type { Database } from "../../db/database.ts";
import { AppError } from "../../errors.ts";
import { isProductCategorySql } from "../config/category-types.ts";
import { loadDataAge } from "../dashboard/dashboard.service.ts";

type Query = <T>(sql: string, params?: unknown[]) => Promise<T[]>;
export const runner = (db: Database): Query => {
  return <T>(sql: string, params: unknown[] = []) => db.prisma.$queryRawUnsafe<T[]>(sql, ...params);
};

const round2 = (v: number) => Math.round(v * 100) / 100;

/** The period of an input for the data's day, or a 400 naming the wrong field. */
export function periodOf(d0: string, input: PeriodQuery): ResolvedPeriod {
  try {
    return resolvePeriod(d0, input);
  } catch (e) {
    if (e instanceof PeriodError) throw new AppError("BAD_REQUEST", e.message);
    throw e;
  }
}

interface Sums {
  revenue: number;
  units: number;
  costed_revenue: number;
  cogs: number;
  orders: number;
  returned_units: number;
  returned_value: number;
}

async function totalSums(db: Database, ranges: DayRange[]): Promise<Sums[]> {
  const fields = ["revenue", "units", "costed_revenue", "cogs", "orders", "returned_units", "returned_value"];
  const cols = ranges
    .map((_, i) => {
      const f = `FILTER (WHERE day BETWEEN $${2 * i + 1}::date AND $${2 * i + 2}::date)`;
      return fields.map((c) => `COALESCE(SUM(${c}) ${f}, 0)::float8 AS ${c}_${i}`).join(", ");
    })
    .join(",\n");
  const lo = ranges.reduce((a, r) => (r.from < a ? r.from : a), ranges[0]!.from);
  const hi = ranges.reduce((a, r) => (r.to > a ? r.to : a), ranges[0]!.to);
  const [row] = await runner(db)<Record<string, number>>(
    `SELECT ${cols} FROM sales_daily WHERE dim = 'total' AND key = 0
       AND day BETWEEN $${2 * ranges.length + 1}::date AND $${2 * ranges.length + 2}::date`,
    [...ranges.flatMap((r) => [r.from, r.to]), lo, hi],
  );
  return ranges.map((_, i) => {
    const s = Object.fromEntries(fields.map((c) => [c, row?.[`${c}_${i}`] ?? 0]));
    return s as unknown as Sums;
  });
}

interface WeekStock {
  week_end: string;
  value_cost: number;
  units: number;
}

/** Stock figures of a period from the weekly series: at its end and on average over its week ends. */
function stockOf(weeks: WeekStock[], r: DayRange) {
  const end = weeks.filter((w) => w.week_end <= r.to).at(-1);
  const atEnd = end && end.week_end > addDays(r.to, -7) ? end : null;
  const inside = weeks.filter((w) => w.week_end >= r.from && w.week_end <= r.to);
  const avg = inside.length
    ? inside.reduce((a, w) => a + w.value_cost, 0) / inside.length
    : atEnd
      ? atEnd.value_cost
      : null;
  return { end: atEnd, avg };
}

const NO_STOCK = "no stock figures for that day (weekly stock values are kept for the last 365 days)";

function kpis(period: ResolvedPeriod, cur: Sums, cmp: Sums, weeks: WeekStock[]): OverviewKpi[] {
  const days = [daysIn(period.current), daysIn(period.comparison)];
  const stock = [stockOf(weeks, period.current), stockOf(weeks, period.comparison)];
  const pair = (
    f: (s: Sums, i: number) => number | null,
    reason: (s: Sums, i: number) => string | null = () => null,
  ) => {
    const current = f(cur, 0);
    const comparison = f(cmp, 1);
    return {
      current,
      comparison,
      blank_reason: current === null ? (reason(cur, 0) ?? "no figures") : null,
      comparison_reason:
        comparison === null ? (reason(cmp, 1) ?? "no figures for the comparison period") : null,
    };
  };
  const margin = (s: Sums) => s.costed_revenue - s.cogs;
  return [
    {
      key: "revenue",
      label: "Sales",
      unit: "money",
      better: "up",
      ...pair((s) => round2(s.revenue)),
      how: "Σ quantity × price − discount over completed order lines of merchandise in the period.",
    },
    {
      key: "gross_margin",
      label: "Gross margin",
      unit: "money",
      better: "up",
      ...pair((s) => round2(margin(s))),
      how: "Revenue − units × cost price, over the lines of products that have a cost price.",
    },
    {
      key: "gross_margin_pct",
      label: "Gross margin %",
      unit: "percent",
      better: "up",
      ...pair(
        (s) => (s.costed_revenue > 0 ? margin(s) / s.costed_revenue : null),
        () => "no sales of products with a cost price",
      ),
      how: "Gross margin ÷ the revenue of the products that have a cost price.",
    },
    {
      key: "units",
      label: "Units sold",
      unit: "count",
      better: "up",
      ...pair((s) => s.units),
      how: "Σ quantity over completed order lines of merchandise in the period.",
    },
    {
      key: "orders",
      label: "Orders",
      unit: "count",
      better: "up",
      ...pair((s) => s.orders),
      how: "Distinct order numbers with a completed line, counted per day.",
    },
    {
      key: "returns",
      label: "Returned units",
      unit: "count",
      better: "down",
      ...pair((s) => s.returned_units),
      how: "Σ quantity over returned order lines of merchandise dated in the period.",
    },
    {
      key: "returns_value",
      label: "Returns value",
      unit: "money",
      better: "down",
      ...pair((s) => round2(s.returned_value)),
      how: "Σ quantity × price − discount over returned order lines of merchandise dated in the period.",
    },
    {
      key: "stock_value",
      label: "Stock value at cost",
      unit: "money",
      better: "down",
      ...pair(
        (_s, i) => stock[i]!.end?.value_cost ?? null,
        () => NO_STOCK,
      ),
      how: "Σ reconstructed closing stock × cost price at the period's end (the last week end on or before it, within 7 days).",
    },
    {
      key: "turnover",
      label: "Stock turnover (yearly)",
      unit: "ratio",
      better: "up",
      ...pair(
        (s, i) => {
          const avg = stock[i]!.avg;
          return avg && avg > 0 ? (s.cogs * (365 / days[i]!)) / avg : null;
        },
        () => `${NO_STOCK}, or none in stock`,
      ),
      how: "Cost of goods sold in the period × 365 ÷ its days, ÷ the average stock value at cost over the period's week ends.",
    },
    {
      key: "sell_through",
      label: "Sell-through",
      unit: "percent",
      better: "up",
      ...pair(
        (s, i) => {
          const end = stock[i]!.end;
          if (!end) return null;
          return s.units + end.units > 0 ? s.units / (s.units + end.units) : null;
        },
        () => `${NO_STOCK}, or nothing sold nor in stock`,
      ),
      how: "Units sold ÷ (units sold + units in stock at the period's end).",
    },
    {
      key: "days_of_cover",
      label: "Days of cover",
      unit: "days",
      better: "down",
      ...pair(
        (s, i) => {
          const end = stock[i]!.end;
          return end && s.cogs > 0 ? end.value_cost / (s.cogs / days[i]!) : null;
        },
        (s) => (s.cogs > 0 ? NO_STOCK : "no sales at cost in the period"),
      ),
      how: "Stock value at cost at the period's end ÷ the period's cost of goods sold per day.",
    },
  ];
}

/** The 12 weeks ending on `to`: week w = 0 is the oldest (to − 83 … to − 77), 11 ends on `to`. */
export const SPARK_WEEKS = 12;

async function breakdown(
  db: Database,
  dim: BreakdownDim,
  period: ResolvedPeriod,
  productsHref: boolean,
): Promise<BreakdownRow[]> {
  const query = runner(db);
  const { current: c, comparison: p } = period;
  const sparkFrom = addDays(c.to, -(SPARK_WEEKS * 7 - 1));
  const lo = c.from < p.from ? c.from : p.from;
  const hi = c.to > p.to ? c.to : p.to;
  const [sums, spark] = await Promise.all([
    query<{
      key: number;
      revenue: number;
      units: number;
      costed_revenue: number;
      cogs: number;
      cmp_revenue: number;
    }>(
      `SELECT key,
         COALESCE(SUM(revenue) FILTER (WHERE day BETWEEN $2::date AND $3::date), 0)::float8 AS revenue,
         COALESCE(SUM(units) FILTER (WHERE day BETWEEN $2::date AND $3::date), 0)::float8 AS units,
         COALESCE(SUM(costed_revenue) FILTER (WHERE day BETWEEN $2::date AND $3::date), 0)::float8 AS costed_revenue,
         COALESCE(SUM(cogs) FILTER (WHERE day BETWEEN $2::date AND $3::date), 0)::float8 AS cogs,
         COALESCE(SUM(revenue) FILTER (WHERE day BETWEEN $4::date AND $5::date), 0)::float8 AS cmp_revenue
       FROM sales_daily WHERE dim = $1 AND day BETWEEN $6::date AND $7::date
       GROUP BY key`,
      [dim, c.from, c.to, p.from, p.to, lo, hi],
    ),
    query<{ key: number; w: number; revenue: number }>(
      `SELECT key, (day - $2::date) / 7 AS w, SUM(revenue)::float8 AS revenue
       FROM sales_daily WHERE dim = $1 AND day BETWEEN $2::date AND $3::date
       GROUP BY key, w`,
      [dim, sparkFrom, c.to],
    ),
  ]);
  const entities =
    dim === "category"
      ? await query<{ id: number; name: string; parent_id: number | null; level: number }>(
          `SELECT c.id, c.name, CASE WHEN pa.id IS NOT NULL THEN c.parent_id END AS parent_id, c.level
           FROM categories c
           LEFT JOIN categories pa ON pa.id = c.parent_id AND ${isProductCategorySql("pa")}
           WHERE ${isProductCategorySql("c")}`,
        )
      : await query<{ id: number; name: string; parent_id: null; level: number }>(
          `SELECT id, name, NULL::int AS parent_id, 1 AS level FROM ${dim === "brand" ? "brands" : "vendors"}
           WHERE id = ANY($1::int[])`,
          [[...new Set([...sums.map((s) => s.key), ...spark.map((s) => s.key)])]],
        );
  const byKey = new Map(sums.map((s) => [Number(s.key), s]));
  const sparks = new Map<number, number[]>();
  for (const s of spark) {
    const key = Number(s.key);
    let arr = sparks.get(key);
    if (!arr) {
      arr = Array(SPARK_WEEKS).fill(0);
      sparks.set(key, arr);
    }
    arr[Number(s.w)] = round2((arr[Number(s.w)] ?? 0) + s.revenue);
  }
  const param = dim === "category" ? "category" : dim;
  return entities
    .map((e): BreakdownRow => {
      const s = byKey.get(e.id);
      const revenue = round2(s?.revenue ?? 0);
      const cmp = round2(s?.cmp_revenue ?? 0);
      const costed = s?.costed_revenue ?? 0;
      const gm = round2(costed - (s?.cogs ?? 0));
      return {
        id: e.id,
        name: e.name,
        parent_id: e.parent_id,
        level: e.level,
        revenue,
        units: s?.units ?? 0,
        gross_margin: gm,
        gross_margin_pct: costed > 0 ? gm / costed : null,
        comparison_revenue: cmp,
        change: cmp > 0 ? (revenue - cmp) / cmp : null,
        sparkline: sparks.get(e.id) ?? Array(SPARK_WEEKS).fill(0),
        href: productsHref ? `/products?${param}=${e.id}` : null,
      };
    })
    .sort((a, b) => b.revenue - a.revenue || a.name.localeCompare(b.name));
}

/** The Overview for one period and one user (links only to pages the user may open). */
export async function getOverview(
  db: Database,
  user: PermissionHolder,
  input: PeriodQuery,
  now: Date = new Date(),
): Promise<OverviewSummary> {
  const { version, ...data } = await loadDataAge(db, now);
  const base = {
    data,
    data_management_href: hasPermission(user, "settings:data_management") ? "/settings?tab=data" : null,
    can_export: hasPermission(user, "export:reports"),
  };
  const d0 = data.as_of_day;
  if (!d0) {
    return {
      ...base,
      has_data: false,
      period: null,
      kpis: [],
      breakdowns: { category: [], brand: [], vendor: [] },
    };
  }
  const period = periodOf(d0, input);
  const products = hasPermission(user, "access:products");
  // The figures change only when a run commits: kept per calculation and period (the links per user).
  let cache = figureCaches.get(db);
  if (!cache) {
    cache = new Map();
    figureCaches.set(db, cache);
  }
  const key = JSON.stringify([period.current, period.comparison]);
  let kept = cache.get(key);
  if (!kept || kept.version !== version) {
    kept = { version, figures: computeFigures(db, period) };
    const k = kept;
    k.figures.catch(() => cache.delete(key));
    cache.set(key, k);
    if (cache.size > FIGURE_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  }
  const figures = await kept.figures;
  const links = (rows: BreakdownRow[]) => (products ? rows : rows.map((r) => ({ ...r, href: null })));
  return {
    ...base,
    has_data: true,
    period,
    kpis: figures.kpis,
    breakdowns: {
      category: links(figures.breakdowns.category),
      brand: links(figures.breakdowns.brand),
      vendor: links(figures.breakdowns.vendor),
    },
  };
}

type Figures = Pick<OverviewSummary, "kpis" | "breakdowns">;
const FIGURE_CACHE_SIZE = 100;
const figureCaches = new WeakMap<Database, Map<string, { version: string; figures: Promise<Figures> }>>();

/** Forgets the kept figures (the benchmark times the computation itself with it). */
export function clearOverviewCache(db: Database): void {
  figureCaches.delete(db);
}

async function computeFigures(db: Database, period: ResolvedPeriod): Promise<Figures> {
  const [[cur, cmp], weeks, ...tables] = await Promise.all([
    totalSums(db, [period.current, period.comparison]),
    runner(db)<WeekStock>(
      `SELECT to_char(week_end, 'YYYY-MM-DD') AS week_end, value_cost::float8 AS value_cost, units
       FROM stock_value_weekly WHERE dim = 'total' AND key = 0 ORDER BY week_end`,
    ),
    ...BREAKDOWN_DIMS.map((dim) => breakdown(db, dim, period, true)),
  ]);
  return {
    kpis: kpis(period, cur!, cmp!, weeks),
    breakdowns: { category: tables[0]!, brand: tables[1]!, vendor: tables[2]! },
  };
}

/** One breakdown table as CSV rows (header first). */
export async function overviewCsv(
  db: Database,
  user: PermissionHolder,
  input: PeriodQuery & { table: BreakdownDim },
): Promise<{ filename: string; rows: (string | number)[][] }> {
  const data = await loadDataAge(db);
  if (!data.as_of_day) throw new AppError("CONFLICT", "No data yet: run a full update or reset");
  const period = periodOf(data.as_of_day, input);
  const rows = await breakdown(db, input.table, period, hasPermission(user, "access:products"));
  const header = [
    input.table,
    "id",
    ...(input.table === "category" ? ["parent_id", "level"] : []),
    `revenue ${period.current.from}..${period.current.to}`,
    "units",
    "gross_margin",
    "gross_margin_pct",
    `revenue ${period.comparison.from}..${period.comparison.to}`,
    "change",
    ...Array.from(
      { length: SPARK_WEEKS },
      (_, i) => `week_to_${addDays(period.current.to, -7 * (SPARK_WEEKS - 1 - i))}`,
    ),
  ];
  const num = (v: number | null, d = 4) => (v === null ? "" : Number(v.toFixed(d)));
  return {
    filename: `overview-${input.table}-${period.current.from}-${period.current.to}.csv`,
    rows: [
      header,
      ...rows.map((r) => [
        r.name,
        r.id,
        ...(input.table === "category" ? [r.parent_id ?? "", r.level] : []),
        r.revenue,
        r.units,
        r.gross_margin,
        num(r.gross_margin_pct),
        r.comparison_revenue,
        num(r.change),
        ...r.sparkline,
      ]),
    ],
  };
}
