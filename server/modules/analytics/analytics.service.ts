// The Analytics page's charts (docs/metrics.md §19). Each reads stored figures of the calculation
// phase (sales_daily, stock_value_weekly, product_metrics, category_metrics) or, for the receipt-based
// charts (aging, sell-through by receipt month), the imported receipts with one window pass. Each
// answers its data and the same data as a table (the CSV export). Results are kept per calculation
// (they change only when a run commits) and per input.
import {
  type AbcXyzCell,
  type AnalyticsChart,
  type AnalyticsData,
  addDays,
  type BreakdownDim,
  type Bucket,
  type ChartTable,
  daysIn,
  type LostSalesRow,
  type Mover,
  type PeriodQuery,
  type SalesTrendPoint,
  type SellThroughRow,
  type StockCategoryRow,
} from "../../../shared/analytics.ts";
import type { StockValuePoint } from "../../../shared/dashboard.ts";
import { ABC_CLASSES, AGING_BUCKETS, COVER_BUCKETS, XYZ_CLASSES } from "../../../shared/metrics.ts";
import { hasPermission, type PermissionHolder } from "../../../shared/permissions.ts";
import type { Database } from "../../db/database.ts";
import { isProductCategorySql } from "../config/category-types.ts";
import { loadDataAge } from "../dashboard/dashboard.service.ts";
import { COVER_BUCKET_SQL } from "../metrics/metrics.service.ts";
import { periodOf, runner } from "./overview.service.ts";

const round2 = (v: number) => Math.round(v * 100) / 100;
const LAST_YEAR_DAYS = 364;

interface Ctx {
  db: Database;
  d0: string;
  products: boolean;
}
type Result<T> = { data: AnalyticsData<T>; table: ChartTable };

const CACHE_SIZE = 200;
const caches = new WeakMap<Database, Map<string, { version: string; value: Promise<unknown> }>>();

/** Runs a chart for one user: the figures kept per calculation and input, the links per user. */
async function chart<T extends object>(
  db: Database,
  user: PermissionHolder,
  key: string,
  build: (ctx: Ctx) => Promise<
    Omit<Result<T>, "data"> & {
      data: Omit<AnalyticsData<T>, "has_data" | "as_of_day" | "data_management_href" | "can_export">;
    }
  >,
): Promise<Result<T>> {
  const { version, ...data } = await loadDataAge(db);
  const base = {
    as_of_day: data.as_of_day,
    data_management_href: hasPermission(user, "settings:data_management") ? "/settings?tab=data" : null,
    can_export: hasPermission(user, "export:reports"),
  };
  if (!data.as_of_day) {
    return { data: { ...base, has_data: false, period: null, rows: [] }, table: { columns: [], rows: [] } };
  }
  let cache = caches.get(db);
  if (!cache) {
    cache = new Map();
    caches.set(db, cache);
  }
  let kept = cache.get(key);
  if (!kept || kept.version !== version) {
    const d0 = data.as_of_day;
    kept = { version, value: build({ db, d0, products: true }) };
    kept.value.catch(() => cache.delete(key));
    cache.set(key, kept);
    if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  }
  const result = (await kept.value) as Awaited<ReturnType<typeof build>>;
  const products = hasPermission(user, "access:products");
  return {
    data: {
      ...base,
      has_data: true,
      ...result.data,
      rows: products
        ? result.data.rows
        : result.data.rows.map((r) => ("href" in r ? { ...r, href: null } : r)),
    },
    table: result.table,
  };
}

/** Forgets the kept results (the benchmark times the computation itself with it). */
export function clearAnalyticsCache(db: Database): void {
  caches.delete(db);
}

/**
 * The categories (id, name) with a name that tells them apart: one that another category shares
 * (a "Christmas" under Paper and one under Ribbons) carries its parent's, "Christmas (Paper)".
 */
const CATEGORY_LABELS_SQL = `(
  SELECT c.id, CASE WHEN pa.name IS NOT NULL
      AND EXISTS (SELECT 1 FROM categories d WHERE d.name = c.name AND d.id <> c.id)
    THEN c.name || ' (' || pa.name || ')' ELSE c.name END AS name
  FROM categories c LEFT JOIN categories pa ON pa.id = c.parent_id
)`;

const DIM_TABLE: Record<BreakdownDim, string> = {
  category: CATEGORY_LABELS_SQL,
  brand: "brands",
  vendor: "vendors",
};

// ---------------------------------------------------------------------------------------------
// Sales

/** Weekly revenue, units and margin of the period (weeks ending on its last day) against the same weeks 52 weeks earlier. */
export function salesTrend(db: Database, user: PermissionHolder, input: PeriodQuery) {
  return chart<SalesTrendPoint>(db, user, `sales_trend|${JSON.stringify(input)}`, async ({ d0 }) => {
    const period = periodOf(d0, input);
    const { from, to } = period.current;
    const rows = await runner(db)<{
      w: number;
      ly: boolean;
      revenue: number;
      units: number;
      gm: number;
    }>(
      `SELECT ($2::date - day + CASE WHEN ly THEN -${LAST_YEAR_DAYS} ELSE 0 END) / 7 AS w, ly,
         SUM(revenue)::float8 AS revenue, SUM(units)::float8 AS units, SUM(costed_revenue - cogs)::float8 AS gm
       FROM (
         SELECT day, false AS ly, revenue, units, costed_revenue, cogs FROM sales_daily
         WHERE dim = 'total' AND key = 0 AND day BETWEEN $1::date AND $2::date
         UNION ALL
         SELECT day, true, revenue, units, costed_revenue, cogs FROM sales_daily
         WHERE dim = 'total' AND key = 0 AND day BETWEEN $1::date - ${LAST_YEAR_DAYS} AND $2::date - ${LAST_YEAR_DAYS}
       ) x GROUP BY 1, 2`,
      [from, to],
    );
    const days = daysIn(period.current);
    const weeks = Math.ceil(days / 7);
    const points: SalesTrendPoint[] = [];
    for (let i = weeks - 1; i >= 0; i--) {
      const cur = rows.find((r) => Number(r.w) === i && !r.ly);
      const ly = rows.find((r) => Number(r.w) === i && r.ly);
      const start = addDays(to, -(7 * i + 6));
      points.push({
        week_end: addDays(to, -7 * i),
        days: start < from ? daysIn({ from, to: addDays(to, -7 * i) }) : 7,
        revenue: round2(cur?.revenue ?? 0),
        units: cur?.units ?? 0,
        gross_margin: round2(cur?.gm ?? 0),
        ly_revenue: round2(ly?.revenue ?? 0),
        ly_units: ly?.units ?? 0,
        ly_gross_margin: round2(ly?.gm ?? 0),
      });
    }
    return {
      data: { period, rows: points },
      table: {
        columns: [
          "week_end",
          "days",
          "revenue",
          "units",
          "gross_margin",
          "ly_revenue",
          "ly_units",
          "ly_gross_margin",
        ],
        rows: points.map((p) => [
          p.week_end,
          p.days,
          p.revenue,
          p.units,
          p.gross_margin,
          p.ly_revenue,
          p.ly_units,
          p.ly_gross_margin,
        ]),
      },
    };
  });
}

/** The categories, brands or vendors whose sales rose and fell most against the comparison. */
export function movers(db: Database, user: PermissionHolder, input: PeriodQuery & { dim: BreakdownDim }) {
  return chart<Mover>(db, user, `movers|${JSON.stringify(input)}`, async ({ d0 }) => {
    const period = periodOf(d0, input);
    const { current: c, comparison: p } = period;
    const rows = await runner(db)<{ id: number; name: string; revenue: number; cmp: number }>(
      `SELECT e.id, e.name, s.revenue, s.cmp FROM (
         SELECT key,
           COALESCE(SUM(revenue) FILTER (WHERE day BETWEEN $2::date AND $3::date), 0)::float8 AS revenue,
           COALESCE(SUM(revenue) FILTER (WHERE day BETWEEN $4::date AND $5::date), 0)::float8 AS cmp
         FROM sales_daily WHERE dim = $1 AND day BETWEEN LEAST($2::date, $4::date) AND GREATEST($3::date, $5::date)
         GROUP BY key
       ) s JOIN ${DIM_TABLE[input.dim]} e ON e.id = s.key`,
      [input.dim, c.from, c.to, p.from, p.to],
    );
    const all: Mover[] = rows.map((r) => ({
      id: r.id,
      name: r.name,
      revenue: round2(r.revenue),
      comparison_revenue: round2(r.cmp),
      delta: round2(r.revenue - r.cmp),
      change: r.cmp > 0 ? (r.revenue - r.cmp) / r.cmp : null,
      href: `/products?${input.dim}=${r.id}`,
    }));
    const up = all
      .filter((m) => m.delta > 0)
      .sort((a, b) => b.delta - a.delta || a.name.localeCompare(b.name));
    const down = all
      .filter((m) => m.delta < 0)
      .sort((a, b) => a.delta - b.delta || a.name.localeCompare(b.name));
    const top = [...up.slice(0, 10), ...down.slice(0, 10)];
    return {
      data: { period, rows: top, extra: { up: Math.min(up.length, 10), down: Math.min(down.length, 10) } },
      table: {
        columns: [input.dim, "id", "revenue", "comparison_revenue", "delta", "change"],
        rows: [...up, ...down].map((m) => [m.name, m.id, m.revenue, m.comparison_revenue, m.delta, m.change]),
      },
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Stock

/** Stock value at cost per week end (the stored series), the last N weeks. */
export function stockValue(db: Database, user: PermissionHolder, weeks: number) {
  return chart<StockValuePoint & { units: number; href?: null }>(
    db,
    user,
    `stock_value|${weeks}`,
    async () => {
      const rows = await runner(db)<StockValuePoint & { units: number }>(
        `SELECT to_char(week_end, 'YYYY-MM-DD') AS week_end, value_cost::float8 AS value_cost, units
       FROM stock_value_weekly WHERE dim = 'total' AND key = 0 ORDER BY week_end DESC LIMIT $1`,
        [weeks + 1],
      );
      const points = rows.reverse();
      return {
        data: { period: null, rows: points },
        table: {
          columns: ["week_end", "value_cost", "units"],
          rows: points.map((p) => [p.week_end, p.value_cost, p.units]),
        },
      };
    },
  );
}

/** Stock value at cost per week end of each top-level product category (the stored series), the last N weeks. */
export function stockValueByCategory(db: Database, user: PermissionHolder, weeks: number) {
  return chart<{ id: number; name: string; points: StockValuePoint[]; href: string | null }>(
    db,
    user,
    `stock_value_by_category|${weeks}`,
    async ({ d0 }) => {
      const rows = await runner(db)<{ id: number; name: string; week_end: string; value_cost: number }>(
        `SELECT s.key AS id, c.name, to_char(s.week_end, 'YYYY-MM-DD') AS week_end, s.value_cost::float8 AS value_cost
         FROM stock_value_weekly s JOIN ${CATEGORY_LABELS_SQL} c ON c.id = s.key
         WHERE s.dim = 'category' AND s.week_end >= $1::date - 7 * $2::int
         ORDER BY s.key, s.week_end`,
        [d0, weeks],
      );
      const byId = new Map<
        number,
        { id: number; name: string; points: StockValuePoint[]; href: string | null }
      >();
      for (const r of rows) {
        let e = byId.get(r.id);
        if (!e) {
          e = { id: r.id, name: r.name, points: [], href: `/products?category=${r.id}` };
          byId.set(r.id, e);
        }
        e.points.push({ week_end: r.week_end, value_cost: r.value_cost });
      }
      const all = [...byId.values()].sort(
        (a, b) =>
          (b.points.at(-1)?.value_cost ?? 0) - (a.points.at(-1)?.value_cost ?? 0) ||
          a.name.localeCompare(b.name),
      );
      return {
        data: { period: null, rows: all.slice(0, 8), extra: { categories: all.length } },
        table: {
          columns: ["category", "id", "week_end", "value_cost"],
          rows: all.flatMap((e) => e.points.map((p) => [e.name, e.id, p.week_end, p.value_cost])),
        },
      };
    },
  );
}

/** Per top-level product category: stock value today, the period's cost of goods sold, and the yearly turnover. */
export function stockByCategory(db: Database, user: PermissionHolder, input: PeriodQuery) {
  return chart<StockCategoryRow>(db, user, `stock_by_category|${JSON.stringify(input)}`, async ({ d0 }) => {
    const period = periodOf(d0, input);
    const days = daysIn(period.current);
    const rows = await runner(db)<{ id: number; name: string; stock: number; cogs: number }>(
      `SELECT c.id, cl.name, COALESCE(cm.stock_value_cost, 0)::float8 AS stock, COALESCE(s.cogs, 0)::float8 AS cogs
       FROM categories c
       JOIN ${CATEGORY_LABELS_SQL} cl ON cl.id = c.id
       LEFT JOIN categories pa ON pa.id = c.parent_id AND ${isProductCategorySql("pa")}
       LEFT JOIN category_metrics cm ON cm.category_id = c.id
       LEFT JOIN (
         SELECT key, SUM(cogs) AS cogs FROM sales_daily
         WHERE dim = 'category' AND day BETWEEN $1::date AND $2::date GROUP BY key
       ) s ON s.key = c.id
       WHERE ${isProductCategorySql("c")} AND pa.id IS NULL`,
      [period.current.from, period.current.to],
    );
    const out: StockCategoryRow[] = rows
      .map((r) => ({
        id: r.id,
        name: r.name,
        stock_value: round2(r.stock),
        cogs: round2(r.cogs),
        turnover: r.stock > 0 ? (r.cogs * (365 / days)) / r.stock : null,
        href: `/products?category=${r.id}`,
      }))
      .sort((a, b) => b.stock_value - a.stock_value || a.name.localeCompare(b.name));
    return {
      data: { period, rows: out },
      table: {
        columns: ["category", "id", "stock_value_cost", "cogs", "turnover_yearly"],
        rows: out.map((r) => [r.name, r.id, r.stock_value, r.cogs, r.turnover]),
      },
    };
  });
}

/** Products by days of cover today (on hand ÷ demand rate, §6), with their stock value. */
export function coverDistribution(db: Database, user: PermissionHolder) {
  return chart<Bucket>(db, user, "cover", async () => {
    const cases = COVER_BUCKETS.map((b) => `WHEN ${COVER_BUCKET_SQL[b.key]} THEN '${b.key}'`).join(" ");
    const rows = await runner(db)<{ b: string; n: number; units: number; value: number }>(
      `SELECT CASE ${cases} END AS b, count(*)::int AS n, SUM(GREATEST(m.on_hand, 0))::float8 AS units,
         SUM(m.stock_value_cost)::float8 AS value
       FROM product_metrics m JOIN products p ON p.pid = m.pid
       WHERE p.kind = 'merchandise' AND m.status IS DISTINCT FROM 'discontinued'
       GROUP BY 1`,
    );
    const out: Bucket[] = COVER_BUCKETS.map((b) => {
      const r = rows.find((x) => x.b === b.key);
      return {
        key: b.key,
        label: b.label,
        products: r?.n ?? 0,
        units: r?.units ?? 0,
        value: round2(r?.value ?? 0),
        // The list with the same conditions (productFilterWhere's cover): as many products.
        href: `/products?cover=${b.key}`,
      };
    });
    return {
      data: { period: null, rows: out },
      table: {
        columns: ["days_of_cover", "products", "units", "stock_value_cost"],
        rows: out.map((b) => [b.label, b.products, b.units, b.value]),
      },
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Receipts, first in first out (stored by the calculation module analytics_figures)

/** Stock on hand by days since the receipt it came in with (first in, first out), with its value at cost. */
export function aging(db: Database, user: PermissionHolder) {
  return chart<Bucket>(db, user, "aging", async () => {
    const rows = await runner(db)<{ bucket: string; products: number; units: number; value: number }>(
      "SELECT bucket, products, units, value_cost::float8 AS value FROM stock_aging",
    );
    const out: Bucket[] = AGING_BUCKETS.map((b) => {
      const r = rows.find((x) => x.bucket === b.key);
      return {
        key: b.key,
        label: b.label,
        products: r?.products ?? 0,
        units: r?.units ?? 0,
        value: round2(r?.value ?? 0),
        // The list of the very products counted (productFilterWhere's aging).
        href: `/products?aging=${b.key}`,
      };
    });
    return {
      data: { period: null, rows: out },
      table: {
        columns: ["age_since_receipt", "products", "units", "stock_value_cost"],
        rows: out.map((b) => [b.label, b.products, b.units, b.value]),
      },
    };
  });
}

/** Of the units received in each month, how many have sold since (first in, first out). */
export function sellThrough(db: Database, user: PermissionHolder, months: number) {
  return chart<SellThroughRow>(db, user, `sell_through|${months}`, async ({ d0 }) => {
    const first = `${d0.slice(0, 7)}-01`;
    const rows = await runner(db)<{ month: string; received: number; left_units: number; products: number }>(
      `SELECT to_char(month, 'YYYY-MM') AS month, received, on_hand AS left_units, products
       FROM receipt_months
       WHERE month >= ($1::date - make_interval(months => $2::int - 1))::date
       ORDER BY month`,
      [first, months],
    );
    const out: SellThroughRow[] = rows.map((r) => ({
      month: r.month,
      received: r.received,
      on_hand: r.left_units,
      sold: r.received - r.left_units,
      sell_through: r.received > 0 ? (r.received - r.left_units) / r.received : null,
      products: r.products,
      href: `/products?received_month=${r.month}`,
    }));
    return {
      data: { period: null, rows: out },
      table: {
        columns: ["receipt_month", "received", "sold_since", "on_hand", "sell_through", "products"],
        rows: out.map((r) => [r.month, r.received, r.sold, r.on_hand, r.sell_through, r.products]),
      },
    };
  });
}

/** Products with stock on hand and no sale in the last N days (D0 included), or never. */
export function deadStock(db: Database, user: PermissionHolder, days: number) {
  return chart<Bucket>(db, user, `dead_stock|${days}`, async ({ d0 }) => {
    const [row] = await runner(db)<{ n: number; units: number; value: number }>(
      `SELECT count(*)::int AS n, COALESCE(SUM(m.on_hand), 0)::float8 AS units,
         COALESCE(SUM(m.stock_value_cost), 0)::float8 AS value
       FROM product_metrics m JOIN products p ON p.pid = m.pid
       WHERE p.kind = 'merchandise' AND m.on_hand > 0
         AND (m.date_last_sold IS NULL OR m.date_last_sold <= $1::date - $2::int)`,
      [d0, days],
    );
    const out: Bucket[] = [
      {
        key: "dead",
        label: `No sale in ${days} days`,
        products: row?.n ?? 0,
        units: row?.units ?? 0,
        value: round2(row?.value ?? 0),
        href: `/products?no_sales_days=${days}&sort=on_hand&dir=desc`,
      },
    ];
    return {
      data: { period: null, rows: out },
      table: {
        columns: ["no_sale_days", "products", "units", "stock_value_cost"],
        rows: out.map((b) => [days, b.products, b.units, b.value]),
      },
    };
  });
}

/** Counts and stock value of products per ABC × XYZ class (and those without an XYZ class). */
export function abcXyz(db: Database, user: PermissionHolder) {
  return chart<AbcXyzCell>(db, user, "abc_xyz", async () => {
    const rows = await runner(db)<{ abc: string; xyz: string | null; n: number; value: number }>(
      `SELECT m.abc_class AS abc, m.xyz_class AS xyz, count(*)::int AS n, SUM(m.stock_value_cost)::float8 AS value
       FROM product_metrics m WHERE m.abc_class IS NOT NULL GROUP BY 1, 2`,
    );
    const out: AbcXyzCell[] = [];
    for (const abc of ABC_CLASSES) {
      for (const xyz of [...XYZ_CLASSES, "none"]) {
        const r = rows.find((x) => x.abc === abc && (x.xyz ?? "none") === xyz);
        out.push({
          abc,
          xyz,
          products: r?.n ?? 0,
          value: round2(r?.value ?? 0),
          href: xyz === "none" ? null : `/products?abc=${abc}&xyz=${xyz}`,
        });
      }
    }
    return {
      data: { period: null, rows: out },
      table: {
        columns: ["abc", "xyz", "products", "stock_value_cost"],
        rows: out.map((c) => [c.abc, c.xyz, c.products, c.value]),
      },
    };
  });
}

/**
 * Revenue lost on out-of-stock days: per product, d̄ (average daily units over in-stock days, §3)
 * × its days out of stock in the last 90 or 365 days × its price; summed per category (rolled up)
 * or vendor.
 */
export function lostSales(db: Database, user: PermissionHolder, days: 90 | 365, dim: "category" | "vendor") {
  return chart<LostSalesRow>(db, user, `lost_sales|${days}|${dim}`, async () => {
    // Stored per calculation (module analytics_figures): the groups' sums and the total row.
    const rows = await runner(db)<{
      dim: string;
      id: number;
      name: string | null;
      lost: number;
      oos: number;
      n: number;
    }>(
      `SELECT s.dim, s.key AS id, e.name, s.lost_revenue::float8 AS lost, s.out_of_stock_days AS oos, s.products AS n
       FROM lost_sales s LEFT JOIN ${DIM_TABLE[dim]} e ON e.id = s.key AND s.dim = $2
       WHERE s.days = $1 AND s.dim IN ($2, 'total')`,
      [days, dim],
    );
    const out: LostSalesRow[] = rows
      .filter((r) => r.dim === dim && r.name !== null)
      .map((r) => ({
        id: r.id,
        name: r.name!,
        lost_revenue: round2(r.lost),
        out_of_stock_days: r.oos,
        products: r.n,
        href: `/products?${dim}=${r.id}`,
      }))
      .sort((a, b) => b.lost_revenue - a.lost_revenue || a.name.localeCompare(b.name));
    const total = rows.find((r) => r.dim === "total");
    return {
      data: { period: null, rows: out.slice(0, 50), extra: { total: round2(total?.lost ?? 0) } },
      table: {
        columns: [dim, "id", "lost_revenue", "out_of_stock_days", "products"],
        rows: out.map((r) => [r.name, r.id, r.lost_revenue, r.out_of_stock_days, r.products]),
      },
    };
  });
}

/** One chart's table for the CSV export. */
export async function analyticsTable(
  db: Database,
  user: PermissionHolder,
  chartName: AnalyticsChart,
  q: PeriodQuery & { dim: BreakdownDim; weeks: number; days?: number; months: number },
): Promise<ChartTable> {
  switch (chartName) {
    case "sales_trend":
      return (await salesTrend(db, user, q)).table;
    case "movers":
      return (await movers(db, user, q)).table;
    case "stock_by_category":
      return (await stockByCategory(db, user, q)).table;
    case "stock_value":
      return (await stockValue(db, user, q.weeks)).table;
    case "stock_value_by_category":
      return (await stockValueByCategory(db, user, q.weeks)).table;
    case "cover":
      return (await coverDistribution(db, user)).table;
    case "aging":
      return (await aging(db, user)).table;
    case "dead_stock":
      return (await deadStock(db, user, q.days ?? 180)).table;
    case "abc_xyz":
      return (await abcXyz(db, user)).table;
    case "lost_sales":
      return (
        await lostSales(db, user, q.days === 365 ? 365 : 90, q.dim === "vendor" ? "vendor" : "category")
      ).table;
    case "sell_through":
      return (await sellThrough(db, user, q.months)).table;
  }
}
