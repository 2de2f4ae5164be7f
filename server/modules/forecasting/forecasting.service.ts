// The Forecasting page (docs/metrics.md "Forecasting page"): the grid of products or their
// categories, brands and vendors over calendar weeks, a product's detail, overrides (saved,
// spread down a group by share of the forecast, removed) and measured accuracy. Reads what the
// calculation stored (product_forecasts, product_metrics, forecast_snapshots, forecast_measured)
// plus the app-owned override tables.

import type { CurrentUser } from "../../../shared/auth.ts";
import {
  type AccuracyInput,
  type AccuracyPage,
  type AccuracyRow,
  accuracyInput,
  addDaysIso,
  BIG_ERROR_WAPE,
  DETAIL_HISTORY_WEEKS,
  detailSeriesStart,
  EXCEPTION_BIAS,
  EXCEPTION_CHANGE,
  EXCEPTION_KINDS,
  EXCEPTION_STOCKOUT_DAYS,
  type ExceptionKind,
  type ExceptionRow,
  type ExceptionsInput,
  type ExceptionsPage,
  exceptionsInput,
  FORECAST_WEEKS,
  type ForecastGridPage,
  type ForecastGridRow,
  type ForecastLevel,
  type ForecastListInput,
  type ForecastOptions,
  type ForecastProductDetail,
  type ForecastPromotion,
  type ForecastSort,
  type ForecastWeeks,
  forecastListInput,
  GRID_HISTORY_WEEKS,
  mondayOf,
  type OverrideGroupRow,
  type OverrideInput,
  type OverrideListInput,
  type OverrideProductResult,
  type OverrideResult,
  type OverrideScope,
  type OverrideWeek,
  overrideInput,
  overrideListInput,
} from "../../../shared/forecasting.ts";
import type { Database } from "../../db/database.ts";
import { badRequest, notFound } from "../../errors.ts";
import { promotionWeeksSql } from "../discounts/promotion-layer.ts";
import { KEPT_PAGES_MAX_BYTES, keptPagesPerDatabase } from "../kept-pages.ts";
import {
  activeOverridesSql,
  type CalendarWeeks,
  calendarWeeks,
  finalOf,
  toCalendar,
} from "./forecast-weeks.ts";
import { refreshPlanningRows } from "./planning-refresh.ts";

type Query = <T>(sql: string, params?: unknown[]) => Promise<T[]>;
const runner = (db: Database): Query => {
  return <T>(sql: string, params: unknown[] = []) => db.prisma.$queryRawUnsafe<T[]>(sql, ...params);
};

const likeEscape = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);
const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const round2 = (n: number) => Math.round(n * 100) / 100;

/** The as-of day of the last calculation (from product_forecasts: week 1 starts the day after). */
export async function forecastCalendar(db: Database): Promise<CalendarWeeks | null> {
  const [row] = await runner(db)<{ d0: string | null }>(
    // Every row of one calculation has the same week_start: one row is enough (no scan of the table).
    "SELECT to_char(week_start - 1, 'YYYY-MM-DD') AS d0 FROM product_forecasts LIMIT 1",
  );
  return row?.d0 ? calendarWeeks(row.d0) : null;
}

function weeksOf(cal: CalendarWeeks, historyWeeks = GRID_HISTORY_WEEKS): ForecastWeeks {
  return {
    as_of: cal.d0,
    history: Array.from({ length: historyWeeks }, (_, i) =>
      addDaysIso(cal.asOfWeek, -7 * (historyWeeks - i)),
    ),
    forecast: cal.weeks,
  };
}

function emptyWeeks(): ForecastWeeks {
  const today = new Date().toISOString().slice(0, 10);
  return weeksOf(calendarWeeks(today));
}

// ---------------------------------------------------------------------------------------------
// The grid

/** D0 from the query's $1 (the first forecast Monday = D0 + 1 + r) and $2 (r). */
const D0_OF_CALENDAR = "($1::date - $2::int - 1)";

/**
 * The product grid's sort keys: figures module forecast stores per product (and an override
 * refreshes for its products), so a page is an indexed read. final_value and final_units are never
 * null: their order matches their (… DESC, pid) indexes.
 */
const PRODUCT_SORT_SQL: Record<ForecastSort, { sql: string; nullable: boolean }> = {
  forecast_value: { sql: "f.final_value", nullable: false },
  forecast_units: { sql: "f.final_units", nullable: false },
  error: { sql: "f.wape", nullable: true },
  bias: { sql: "f.bias", nullable: true },
  change: { sql: "f.change", nullable: true },
  title: { sql: "lower(p.title)", nullable: false },
};

/** The stored XYZ class column of product_metrics (the dashboards' issue adds it), if there is one. */
let xyzColumn: Promise<string | null> | null = null;
async function findXyzColumn(db: Database): Promise<string | null> {
  xyzColumn ??= runner(db)<{ name: string }>(
    `SELECT column_name AS name FROM information_schema.columns
     WHERE table_name = 'product_metrics' AND column_name IN ('xyz_class', 'xyz')
     ORDER BY column_name = 'xyz_class' DESC LIMIT 1`,
  ).then((rows) => rows[0]?.name ?? null);
  const found = await xyzColumn;
  if (!found) xyzColumn = null; // asked again next time (a migration may add it)
  return found;
}

/** The product rows of the grid (filters over products, their metrics and forecasts). */
function productFilters(
  q: ReturnType<typeof forecastListInput.parse>,
  param: (v: unknown) => string,
  xyz: string | null,
): string[] {
  const where: string[] = [];
  const search = q.search?.trim();
  if (search) {
    const like = param(`%${likeEscape(search)}%`);
    const alts = [`p.title ILIKE ${like}`, `p.sku ILIKE ${like}`];
    if (/^\d{1,9}$/.test(search)) alts.push(`p.pid = ${param(Number(search))}::int`);
    where.push(`(${alts.join(" OR ")})`);
  }
  if (q.vendorId) where.push(`p.vendor_id = ${param(q.vendorId)}::int`);
  if (q.brandId) where.push(`p.brand_id = ${param(q.brandId)}::int`);
  if (q.categoryId)
    where.push(
      `p.pid IN (SELECT pid FROM product_categories WHERE category_id IN (${categoryTreeSql(param(q.categoryId))}))`,
    );
  if (q.abc) where.push(`m.abc_class = ${param(q.abc)}`);
  if (q.xyz) {
    if (!xyz) throw badRequest("XYZ classes are not calculated yet", "xyz");
    where.push(`m.${xyz} = ${param(q.xyz)}`);
  }
  if (q.status) where.push(`m.status = ${param(q.status)}`);
  if (q.method) where.push(`f.method = ${param(q.method)}`);
  if (q.hasOverride === true) where.push("f.has_override");
  if (q.hasOverride === false) where.push("NOT f.has_override");
  if (q.bigError === true) where.push(`f.wape > ${BIG_ERROR_WAPE}`);
  return where;
}

/** SQL: a category and every category under it (the depth cap stops a cycle). */
function categoryTreeSql(idParam: string): string {
  return `WITH RECURSIVE tree AS (
      SELECT id, 0 AS depth FROM categories WHERE id = ${idParam}::int
      UNION ALL
      SELECT c.id, t.depth + 1 FROM categories c JOIN tree t ON c.parent_id = t.id WHERE t.depth < 100
    ) SELECT id FROM tree`;
}

interface ProductPageRow {
  pid: number;
  title: string;
  sku: string | null;
  vendor: string | null;
  brand: string | null;
  method: string;
  requested_method: string;
  chosen_by_backtest: boolean;
  abc_class: string | null;
  status: string | null;
  weekly: number[];
  cost: number;
  wape: number | null;
  bias: number | null;
  mase: number | null;
  change: number | null;
  reorder_qty: number | null;
  backtest_weeks: number | null;
  /** The 12 history weeks stored by module forecast (empty when written otherwise) */
  history: number[];
}

/** The grid's filter choices: every vendor, brand and category by name. */
export async function forecastOptions(db: Database): Promise<ForecastOptions> {
  const query = runner(db);
  const [vendors, brands, categories] = await Promise.all([
    query<{ id: number; name: string }>("SELECT id, name FROM vendors ORDER BY lower(name), id"),
    query<{ id: number; name: string }>("SELECT id, name FROM brands ORDER BY lower(name), id"),
    query<{ id: number; name: string; level: number; parent_id: number | null }>(
      "SELECT id, name, level, parent_id FROM categories ORDER BY level, lower(name), id",
    ),
  ]);
  return { vendors, brands, categories };
}

/**
 * Product counts per filter set (SQL and parameters), kept per calculation version like the group
 * rows: paging through one filter counts it once.
 */
const countCaches = new WeakMap<Database, Map<string, { version: string; n: number }>>();

async function countRows(db: Database, sql: string, params: unknown[]): Promise<number> {
  const [version, cache] = [await figuresVersion(db), countCaches.get(db) ?? new Map()];
  countCaches.set(db, cache);
  const key = `${sql}|${JSON.stringify(params)}`;
  const kept = version ? cache.get(key) : undefined;
  if (kept && kept.version === version) return kept.n;
  const [row] = await runner(db)<{ n: number }>(sql, params);
  const n = row?.n ?? 0;
  if (version) {
    if (cache.size >= GROUP_CACHE_SIZE) cache.clear();
    cache.set(key, { version, n });
  }
  return n;
}

/** GET the grid: one page of products (or categories, brands, vendors) and the total. */
export async function listForecastRows(db: Database, input: ForecastListInput): Promise<ForecastGridPage> {
  const q = forecastListInput.parse(input);
  const cal = await forecastCalendar(db);
  if (!cal) return { items: [], total: 0, weeks: emptyWeeks() };
  if (q.level !== "product") return listGroupRows(db, q, cal);
  // A product page reads only what the last calculation or planning refresh stored: kept per
  // version like the group rows (and the products list's pages).
  const version = await figuresVersion(db);
  const cacheKey = JSON.stringify({ ...q, d0: cal.d0 });
  return pageCaches.of(db).get(cacheKey, version, () => productPage(db, q, cal));
}

async function productPage(
  db: Database,
  q: ReturnType<typeof forecastListInput.parse>,
  cal: CalendarWeeks,
): Promise<ForecastGridPage> {
  const query = runner(db);
  const params: unknown[] = [];
  const param = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const where = productFilters(q, param, q.xyz ? await findXyzColumn(db) : null);
  const whereSql = where.length ? `WHERE ${where.join(" AND ")}` : "";
  const sort = PRODUCT_SORT_SQL[q.sort];
  const dir = q.dir === "asc" ? "ASC" : "DESC";
  const order = `ORDER BY ${sort.sql} ${dir}${sort.nullable ? " NULLS LAST" : ""}, f.pid ASC`;
  // product_metrics is joined only when a filter needs it (ABC, XYZ, status): the page reads its
  // reorder quantity by primary key.
  const needsMetrics = Boolean(q.abc || q.xyz || q.status);
  const from = `FROM product_forecasts f
    JOIN products p ON p.pid = f.pid
    ${needsMetrics ? "JOIN product_metrics m ON m.pid = f.pid" : ""}`;
  const countParams = [...params];
  const limit = param(q.pageSize);
  const offset = param((q.page - 1) * q.pageSize);
  // A nullable key (error, bias, change) is read in two index-ordered parts, blanks last: the rows
  // with a value by the key's (key, pid) index, then the blanks by pid; each part stops at the
  // page's end, so a page reads offset + limit index entries at most.
  const whereAnd = (cond: string) => (where.length ? `${whereSql} AND ${cond}` : `WHERE ${cond}`);
  const pageSql = sort.nullable
    ? `SELECT pid FROM (
         (SELECT f.pid, 0 AS blank, ${sort.sql} AS k ${from} ${whereAnd(`${sort.sql} IS NOT NULL`)}
          ORDER BY ${sort.sql} ${dir}, f.pid ASC LIMIT ${limit}::int + ${offset}::int)
         UNION ALL
         (SELECT f.pid, 1 AS blank, NULL AS k ${from} ${whereAnd(`${sort.sql} IS NULL`)}
          ORDER BY f.pid ASC LIMIT ${limit}::int + ${offset}::int)
       ) x ORDER BY blank, k ${dir}, pid ASC LIMIT ${limit}::int OFFSET ${offset}::int`
    : `SELECT f.pid ${from} ${whereSql} ${order} LIMIT ${limit}::int OFFSET ${offset}::int`;
  const [rows, total] = await Promise.all([
    query<ProductPageRow>(
      `WITH page AS (${pageSql})
       SELECT f.pid, p.title, p.sku, v.name AS vendor, b.name AS brand, f.method, f.requested_method,
         f.chosen_by_backtest, m.abc_class, m.status, f.weekly, COALESCE(p.cost_price, 0)::float8 AS cost,
         f.wape, f.bias, f.mase, f.change, m.reorder_qty, f.history, acc.weeks AS backtest_weeks
       FROM page JOIN product_forecasts f ON f.pid = page.pid
       JOIN products p ON p.pid = f.pid
       LEFT JOIN product_forecast_accuracy acc ON acc.pid = f.pid AND acc.method = f.method
       LEFT JOIN product_metrics m ON m.pid = f.pid
       LEFT JOIN vendors v ON v.id = p.vendor_id
       LEFT JOIN brands b ON b.id = p.brand_id
       ${order}`,
      params,
    ),
    countRows(db, `SELECT count(*)::int AS n ${from} ${whereSql}`, countParams),
  ]);
  const pids = rows.map((r) => r.pid);
  const weeks = weeksOf(cal);
  // History comes stored with the forecast; only rows without it (written by other means) are summed
  // from the order lines here.
  const unstored = rows.filter((r) => r.history.length !== weeks.history.length).map((r) => r.pid);
  const [history, overrides, promotions] = await Promise.all([
    weeklySales(db, unstored, weeks.history[0]!, cal.asOfWeek),
    overridesFor(db, cal, pids),
    promotionLayerFor(db, cal, pids),
  ]);
  const items = rows.map((r): ForecastGridRow => {
    const system = toCalendar(r.weekly.map(Number), cal.r);
    const own = overrides.get(r.pid);
    const override = cal.weeks.map((w) => own?.get(w) ?? null);
    const promo = promotions.get(r.pid);
    const promotion = cal.weeks.map((_, i) => promo?.get(i + 1)?.delta ?? null);
    const final = system.map(
      (s, i) => (override[i] !== null ? (override[i] as number) : s) + (promotion[i] ?? 0),
    );
    const units = final.reduce((a, b) => a + b, 0);
    return {
      level: "product",
      id: r.pid,
      title: r.title,
      sku: r.sku,
      vendor: r.vendor,
      brand: r.brand,
      method: r.method,
      method_label: methodLabel(r.method, r.requested_method, r.chosen_by_backtest),
      abc_class: r.abc_class,
      status: r.status,
      products: 1,
      history:
        r.history.length === weeks.history.length
          ? r.history.map(Number)
          : weeks.history.map((w) => history.get(r.pid)?.get(w) ?? 0),
      system: system.map(round2),
      override: override.map((o) => (o === null ? null : round2(o))),
      promotion: promotion.map((o) => (o === null ? null : round2(o))),
      final: final.map(round2),
      forecast_units: round2(units),
      forecast_value: round2(units * num(r.cost)),
      wape: numOrNull(r.wape),
      bias: numOrNull(r.bias),
      mase: numOrNull(r.mase),
      change: numOrNull(r.change),
      reorder_qty: numOrNull(r.reorder_qty),
      backtest_weeks: numOrNull(r.backtest_weeks),
    };
  });
  return { items, total, weeks };
}

function methodLabel(method: string | null, requested: string | null, byBacktest = false): string | null {
  if (!method) return null;
  if (byBacktest) return `${method} (chosen by backtest)`;
  if (requested === "seasonal" && method === "standard") return "standard (too little history for seasonal)";
  return method;
}

/** Units sold per calendar week (Monday keys) for the products, weeks from `from` to before `to`. */
async function weeklySales(
  db: Database,
  pids: number[],
  from: string,
  to: string,
): Promise<Map<number, Map<string, number>>> {
  const out = new Map<number, Map<string, number>>();
  if (pids.length === 0) return out;
  const rows = await runner(db)<{ pid: number; week: string; units: number }>(
    `SELECT pid, to_char(date_trunc('week', order_date AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS week,
       sum(quantity)::float8 AS units
     FROM order_lines
     WHERE pid = ANY($1::int[]) AND status = 'completed'
       AND order_date >= $2::date::timestamp AT TIME ZONE 'UTC' AND order_date < $3::date::timestamp AT TIME ZONE 'UTC'
     GROUP BY 1, 2`,
    [pids, from, to],
  );
  for (const r of rows) {
    const m = out.get(r.pid) ?? new Map<string, number>();
    m.set(r.week, num(r.units));
    out.set(r.pid, m);
  }
  return out;
}

/**
 * A product's stored weekly sales (product_sales_weekly, module sales_series: its weeks with sales,
 * counted from the Monday first_week, and their units) keyed by Monday, as weeklySales keys them.
 */
function storedSales(firstWeek: string, weeks: number[] | null, units: number[] | null): Map<string, number> {
  const sales = new Map<string, number>();
  for (const [k, w] of (weeks ?? []).entries())
    sales.set(addDaysIso(firstWeek, 7 * Number(w)), Number(units![k]));
  return sales;
}

/** The final figure of every overridden week of the products: pid → week_start → units. */
async function overridesFor(
  db: Database,
  cal: CalendarWeeks,
  pids: number[],
): Promise<Map<number, Map<string, number>>> {
  const out = new Map<number, Map<string, number>>();
  if (pids.length === 0) return out;
  const rows = await runner(db)<{ pid: number; week: string; final: number }>(
    `SELECT pid, to_char(week_start, 'YYYY-MM-DD') AS week, final::float8 AS final
     FROM (${activeOverridesSql("$1::date", "$2::int", "AND o.pid = ANY($3::int[])")}) a`,
    [cal.weeks[0], cal.r, pids],
  );
  for (const r of rows) {
    const m = out.get(r.pid) ?? new Map<string, number>();
    m.set(r.week, num(r.final));
    out.set(r.pid, m);
  }
  return out;
}

/**
 * The promotion layer of the products per calendar week (docs/metrics.md §16): pid → j (1 … 13) →
 * the week's change in units and the promotions behind it.
 */
async function promotionLayerFor(
  db: Database,
  cal: CalendarWeeks,
  pids: number[],
): Promise<Map<number, Map<number, { delta: number; promotions: number[] }>>> {
  const out = new Map<number, Map<number, { delta: number; promotions: number[] }>>();
  if (pids.length === 0) return out;
  const rows = await runner(db)<{ pid: number; j: number; delta: number; promotions: number[] }>(
    `SELECT pid, j, delta, promotions FROM (${promotionWeeksSql("$1::date", "$2::int", "AND pp.pid = ANY($3::int[])")}) a`,
    [cal.d0, cal.r, pids],
  );
  for (const r of rows) {
    const m = out.get(r.pid) ?? new Map<number, { delta: number; promotions: number[] }>();
    m.set(r.j, { delta: num(r.delta), promotions: r.promotions.map(Number) });
    out.set(r.pid, m);
  }
  return out;
}

const GROUP_SQL: Record<Exclude<ForecastLevel, "product">, { key: string; table: string }> = {
  brand: { key: "p.brand_id", table: "brands" },
  vendor: { key: "p.vendor_id", table: "vendors" },
  // Rolled up the tree: a product counts once in its categories and each of their ancestors.
  category: { key: "", table: "categories" },
};

const GROUP_SORT_SQL: Record<ForecastSort, string> = {
  forecast_value: "g.value",
  forecast_units: "g.units",
  error: "g.wape",
  bias: "g.bias",
  change: "g.change",
  title: "lower(g.name)",
};

interface GroupRow {
  key: number;
  name: string | null;
  products: number;
  system: (number | null)[];
  history: (number | null)[];
  final: (number | null)[];
  promotion: (number | null)[];
  units: number;
  value: number;
  wape: number | null;
  bias: number | null;
  mase: number | null;
  change: number | null;
}

/**
 * Group rows per calculation (the timestamp in calculate_status, renewed by every calculation, every
 * override and promotion saved and every purchase-order action): the whole sorted list of one
 * level under one filter set, per database, at most GROUP_CACHE_SIZE lists and about KEPT_PAGES_MAX_BYTES
 * (server/modules/kept-pages.ts). A page is a slice.
 */
const GROUP_CACHE_SIZE = 500;
const groupCaches = keptPagesPerDatabase<GroupRow[]>(GROUP_CACHE_SIZE, KEPT_PAGES_MAX_BYTES);
/** Product pages of the grid, kept the same way. */
const pageCaches = keptPagesPerDatabase<ForecastGridPage>(GROUP_CACHE_SIZE * 4, KEPT_PAGES_MAX_BYTES);
/** Pages of the exceptions lists, kept the same way. */
const exceptionCaches = keptPagesPerDatabase<ExceptionsPage>(GROUP_CACHE_SIZE, KEPT_PAGES_MAX_BYTES);
/** How many products each exceptions list holds: one count for every list and page of a version. */
const exceptionCountCaches = keptPagesPerDatabase<Record<ExceptionKind, number>>(4, KEPT_PAGES_MAX_BYTES);

/** The version of the figures the grid reads: the newest calculation or planning refresh. */
async function figuresVersion(db: Database): Promise<string> {
  const [row] = await runner(db)<{ v: string | null }>(
    "SELECT max(last_calculation_timestamp)::text AS v FROM calculate_status",
  );
  return row?.v ?? "";
}

/** Forgets every kept group list (the bench times the first computation after a calculation). */
export function clearForecastCaches(db: Database): void {
  groupCaches.clear(db);
  countCaches.delete(db);
  pageCaches.clear(db);
  exceptionCaches.clear(db);
  exceptionCountCaches.clear(db);
}

/**
 * The grid's category / brand / vendor rows: the sums of their products' calendar weeks.
 *
 * One pass over the filtered products sums the engine's 13 weeks (a calendar week is a fixed blend
 * of two engine weeks, so the blend is taken of the sums), the 12 history weeks and the figures
 * behind the weighted errors; overrides and promotions, which touch few products, add their change
 * per week from the products that have one. Categories: products are first grouped by their set of
 * categories (a few thousand sets), each set's sums are then added to every category of the set and
 * each of their ancestors once, so a product in two categories under one parent counts once there.
 */
async function listGroupRows(
  db: Database,
  q: ReturnType<typeof forecastListInput.parse>,
  cal: CalendarWeeks,
): Promise<ForecastGridPage> {
  const level = q.level as Exclude<ForecastLevel, "product">;
  const version = await figuresVersion(db);
  const { page: _page, pageSize: _size, ...rest } = q;
  const cacheKey = JSON.stringify({ ...rest, d0: cal.d0 });
  const all = await groupCaches.of(db).get(cacheKey, version, () => computeGroupRows(db, q, cal, level));
  const rows = all.slice((q.page - 1) * q.pageSize, q.page * q.pageSize);
  const weeks = weeksOf(cal);
  const items = rows.map((r): ForecastGridRow => {
    const system = r.system.map(num);
    const promotion = r.promotion.map(num);
    // final = overrides' final + the promotion layer; the override column compares the first.
    const overridden = r.final.map(num);
    const final = overridden.map((f, i) => f + (promotion[i] ?? 0));
    return {
      level,
      id: r.key,
      title: r.name ?? `#${r.key}`,
      sku: null,
      vendor: null,
      brand: null,
      method: null,
      method_label: null,
      abc_class: null,
      status: null,
      products: r.products,
      history: r.history.map(num),
      system: system.map(round2),
      override: overridden.map((f, i) => (Math.abs(f - (system[i] ?? 0)) > 1e-9 ? round2(f) : null)),
      promotion: promotion.map((x) => (Math.abs(x) > 1e-9 ? round2(x) : null)),
      final: final.map(round2),
      forecast_units: round2(num(r.units)),
      forecast_value: round2(num(r.value)),
      wape: numOrNull(r.wape),
      bias: numOrNull(r.bias),
      mase: numOrNull(r.mase),
      change: numOrNull(r.change),
      reorder_qty: null,
      backtest_weeks: null,
    };
  });
  return { items, total: all.length, weeks };
}

async function computeGroupRows(
  db: Database,
  q: ReturnType<typeof forecastListInput.parse>,
  cal: CalendarWeeks,
  level: Exclude<ForecastLevel, "product">,
): Promise<GroupRow[]> {
  const spec = GROUP_SQL[level];
  const params: unknown[] = [cal.weeks[0], cal.r];
  const param = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  // The search applies to the group's name, not to its products.
  const where = productFilters({ ...q, search: undefined }, param, q.xyz ? await findXyzColumn(db) : null);
  const needsMetrics = Boolean(q.abc || q.xyz || q.status);
  const category = level === "category";
  // A category row's products: those in one of its categories or under them. Per product its
  // categories as a sorted array (the group key of the first pass).
  if (category) where.push("cs.cats IS NOT NULL");
  else where.push(`${spec.key} IS NOT NULL`);
  const weekIdx = Array.from({ length: FORECAST_WEEKS }, (_, i) => i + 1);
  const historyIdx = Array.from({ length: GRID_HISTORY_WEEKS }, (_, i) => i + 1);
  const search = q.search?.trim();
  const groupWhere = search ? `WHERE g.name ILIKE ${param(`%${likeEscape(search)}%`)}` : "";
  const dir = q.dir === "asc" ? "ASC" : "DESC";
  const r = "$2::int";
  // Sums of the first pass (per vendor / brand, or per set of categories).
  const firstPass = [
    "count(*)::int AS products",
    ...weekIdx.map((j) => `sum(f.weekly[${j}]) AS w${j}`),
    ...weekIdx.map((j) => `sum(ow.d[${j}]) AS o${j}`),
    ...weekIdx.map((j) => `sum(pw.d[${j}]) AS p${j}`),
    ...historyIdx.map((i) => `sum(f.history[${i}]) AS h${i}`),
    "sum(f.final_units) AS units",
    "sum(f.final_value) AS value",
    "sum(f.wape * acc.actual) AS wa",
    "sum(acc.actual) FILTER (WHERE f.wape IS NOT NULL) AS a_w",
    "sum(f.bias * acc.actual) AS ba",
    "sum(acc.actual) FILTER (WHERE f.bias IS NOT NULL) AS a_b",
    "sum(f.wape * acc.actual) FILTER (WHERE acc.naive_wape IS NOT NULL) AS wa_n",
    "sum(acc.naive_wape * acc.actual) FILTER (WHERE f.wape IS NOT NULL) AS na_w",
    "sum(f.change) AS ch",
    "count(f.change) AS ch_n",
  ];
  const sumCols = [
    ...weekIdx.flatMap((j) => [`w${j}`, `o${j}`, `p${j}`]),
    ...historyIdx.map((i) => `h${i}`),
    "units",
    "value",
    "wa",
    "a_w",
    "ba",
    "a_b",
    "wa_n",
    "na_w",
    "ch",
  ];
  const calendar = (j: number) => `((w${j} * (7 - ${r}) + w${Math.min(j + 1, FORECAST_WEEKS)} * ${r}) / 7.0)`;
  const rows = await runner(db)<GroupRow>(
    `WITH ow AS (
       SELECT pid, array_agg(final - system ORDER BY j) AS dj, array_agg(j ORDER BY j) AS js
       FROM (${activeOverridesSql("$1::date", r)}) a GROUP BY pid
     ),
     owd AS (
       SELECT pid, ARRAY[${weekIdx.map((j) => `dj[array_position(js, ${j})]`).join(", ")}]::float8[] AS d FROM ow
     ),
     pwa AS (
       SELECT pid, array_agg(delta ORDER BY j) AS dj, array_agg(j ORDER BY j) AS js
       FROM (${promotionWeeksSql(D0_OF_CALENDAR, r)}) a
       GROUP BY pid
     ),
     pwd AS (
       SELECT pid, ARRAY[${weekIdx.map((j) => `dj[array_position(js, ${j})]`).join(", ")}]::float8[] AS d FROM pwa
     ),
     ${
       category
         ? `cs AS (
       SELECT pid, array_agg(DISTINCT category_id ORDER BY category_id) AS cats FROM product_categories GROUP BY pid
     ),`
         : ""
     }
     s AS (
       SELECT ${category ? "cs.cats" : spec.key} AS key, ${firstPass.join(", ")}
       FROM product_forecasts f
       JOIN products p ON p.pid = f.pid
       ${needsMetrics ? "JOIN product_metrics m ON m.pid = f.pid" : ""}
       LEFT JOIN owd ow ON ow.pid = f.pid
       LEFT JOIN pwd pw ON pw.pid = f.pid
       LEFT JOIN product_forecast_accuracy acc ON acc.pid = f.pid AND acc.method = f.method
       ${category ? "LEFT JOIN cs ON cs.pid = f.pid" : ""}
       WHERE ${where.join(" AND ")}
       GROUP BY 1
     ),
     ${
       category
         ? `walk AS (
       WITH RECURSIVE walk AS (
         SELECT id AS category_id, id AS ancestor, 0 AS depth FROM categories
         UNION ALL
         SELECT w.category_id, c.parent_id, w.depth + 1 FROM walk w JOIN categories c ON c.id = w.ancestor
         WHERE c.parent_id IS NOT NULL AND w.depth < 100
       ) SELECT category_id, ancestor FROM walk
     ),
     -- every set of categories with each category it rolls up to, once
     up AS (
       SELECT DISTINCT s.key AS cats, walk.ancestor
       FROM (SELECT key FROM s) s, unnest(s.key) AS c(id)
       JOIN walk ON walk.category_id = c.id
     ),
     t AS (
       SELECT up.ancestor AS key, sum(s.products)::int AS products, ${sumCols.map((c) => `sum(s.${c}) AS ${c}`).join(", ")},
         sum(s.ch_n) AS ch_n
       FROM up JOIN s ON s.key = up.cats
       GROUP BY 1
     ),`
         : "t AS (SELECT * FROM s),"
     }
     g AS (
       SELECT t.key, n.name, t.products,
         ARRAY[${weekIdx.map(calendar).join(", ")}]::float8[] AS system,
         ARRAY[${weekIdx.map((j) => `${calendar(j)} + COALESCE(o${j}, 0)`).join(", ")}]::float8[] AS final,
         ARRAY[${weekIdx.map((j) => `COALESCE(p${j}, 0)`).join(", ")}]::float8[] AS promotion,
         ARRAY[${historyIdx.map((i) => `COALESCE(h${i}, 0)`).join(", ")}]::float8[] AS history,
         units::float8 AS units, value::float8 AS value,
         (wa / NULLIF(a_w, 0))::float8 AS wape,
         (ba / NULLIF(a_b, 0))::float8 AS bias,
         (wa_n / NULLIF(na_w, 0))::float8 AS mase,
         (ch / NULLIF(ch_n, 0))::float8 AS change
       FROM t LEFT JOIN ${spec.table} n ON n.id = t.key
     )
     SELECT g.* FROM g ${groupWhere}
     ORDER BY ${GROUP_SORT_SQL[q.sort]} ${dir} NULLS LAST, g.key`,
    params,
  );
  return rows;
}

// ---------------------------------------------------------------------------------------------
// A product's detail

/** GET one product: 104 weeks of history with last year, the forecast with overrides and band. */
export async function forecastProduct(db: Database, pid: number): Promise<ForecastProductDetail> {
  const query = runner(db);
  // Two rounds of statements, each at once, so the detail waits for its slowest statement, not for
  // the sum of them: the product with its forecast, its stored weekly sales and the calendar (one
  // statement by primary keys), its backtest and override groups; then what needs the calendar.
  const [[head], backtest, groups] = await Promise.all([
    query<{
      d0: string | null;
      pid: number;
      title: string;
      sku: string | null;
      has_forecast: boolean;
      method: string;
      requested_method: string;
      chosen_by_backtest: boolean;
      weekly: number[];
      first_week: string | null;
      sold_weeks: number[] | null;
      sold_units: number[] | null;
    }>(
      // Every row of one calculation has the same week_start: one row gives the calendar.
      `SELECT (SELECT to_char(week_start - 1, 'YYYY-MM-DD') FROM product_forecasts LIMIT 1) AS d0,
         p.pid, p.title, p.sku, f.pid IS NOT NULL AS has_forecast, f.method, f.requested_method,
         f.chosen_by_backtest, f.weekly, to_char(s.first_week, 'YYYY-MM-DD') AS first_week,
         s.weeks AS sold_weeks, s.units AS sold_units
       FROM products p
       LEFT JOIN product_forecasts f ON f.pid = p.pid
       LEFT JOIN product_sales_weekly s ON s.pid = p.pid
       WHERE p.pid = $1::int`,
      [pid],
    ),
    query<ForecastProductDetail["backtest"][number]>(
      `SELECT method, weeks, wape, mape, bias, mase, naive_wape, seasonal_naive_wape, seasonal_naive_mase
       FROM product_forecast_accuracy WHERE pid = $1::int ORDER BY method`,
      [pid],
    ),
    listOverrideGroups(db, { pid, pageSize: 200 }),
  ]);
  if (!head) throw notFound(`Product ${pid} not found`);
  const product = head;
  const forecast = head.has_forecast ? head : undefined;
  const cal = head.d0 ? calendarWeeks(head.d0) : null;
  const weeks = cal ? weeksOf(cal, DETAIL_HISTORY_WEEKS) : emptyWeeks();
  const asOfWeek = cal?.asOfWeek ?? mondayOf(new Date().toISOString().slice(0, 10));
  // 104 weeks of history and, for last year's overlay, the 52 before them: module sales_series
  // stores them for the calculation's weeks per product with many order lines (product_sales_weekly);
  // a product without such a row has few lines, summed here (or there is no calculation yet).
  const historyFrom = detailSeriesStart(asOfWeek);
  const stored =
    head.first_week === historyFrom ? storedSales(head.first_week, head.sold_weeks, head.sold_units) : null;
  const [salesByPid, ownByPid, promoByPid, promotions] = await Promise.all([
    stored ? new Map([[pid, stored]]) : weeklySales(db, [pid], historyFrom, asOfWeek),
    cal ? overridesFor(db, cal, [pid]) : new Map<number, Map<string, number>>(),
    cal
      ? promotionLayerFor(db, cal, [pid])
      : new Map<number, Map<number, { delta: number; promotions: number[] }>>(),
    cal
      ? query<ForecastPromotion>(
          `SELECT pr.id, pr.name, to_char(pr.starts_on, 'YYYY-MM-DD') AS starts_on,
             to_char(pr.ends_on, 'YYYY-MM-DD') AS ends_on, pr.discount_pct::float8 AS discount_pct,
             pr.target_price::float8 AS target_price, pp.uplift::float8 AS uplift, pr.stop_reordering,
             pp.dip::float8 AS dip, pp.dip_weeks
           FROM promotions pr JOIN promotion_products pp ON pp.promotion_id = pr.id AND pp.pid = $1::int
           WHERE pr.cancelled_at IS NULL AND pr.ends_on + 7 * pp.dip_weeks > $2::date
           ORDER BY pr.starts_on, pr.id`,
          [pid, cal.d0],
        )
      : ([] as ForecastPromotion[]),
  ]);
  const sales = salesByPid.get(pid) ?? new Map<string, number>();
  const history = weeks.history.map((w) => ({
    week_start: w,
    units: sales.get(w) ?? 0,
    last_year: sales.get(addDaysIso(w, -364)) ?? 0,
  }));
  const own = ownByPid.get(pid) ?? new Map<string, number>();
  const promo = promoByPid.get(pid) ?? new Map<number, { delta: number; promotions: number[] }>();
  const system = forecast && cal ? toCalendar(forecast.weekly.map(Number), cal.r) : [];
  const chosen = backtest.find((b) => b.method === forecast?.method);
  const actualMean = history.slice(-8).reduce((a, h) => a + h.units, 0) / 8;
  // 80 % band: ± 1.28 × the backtest's mean absolute weekly error (WAPE × mean actual ÷ 0.8, the
  // mean absolute error scaled to a standard deviation).
  const spread = chosen?.wape != null ? (1.28 * Number(chosen.wape) * actualMean) / 0.8 : 0;
  return {
    pid: product.pid,
    title: product.title,
    sku: product.sku,
    weeks,
    history,
    forecast: (cal?.weeks ?? []).map((w, i) => {
      const sys = system[i] ?? 0;
      const o = own.get(w);
      const p = promo.get(i + 1)?.delta as number | undefined;
      const fin = (o ?? sys) + (p ?? 0);
      return {
        week_start: w,
        system: round2(sys),
        override: o === undefined ? null : round2(o),
        promotion: p === undefined ? null : round2(p),
        final: round2(fin),
        last_year: sales.get(addDaysIso(w, -364)) ?? null,
        low: round2(Math.max(0, fin - spread)),
        high: round2(fin + spread),
      };
    }),
    method: forecast?.method ?? null,
    method_label: methodLabel(
      forecast?.method ?? null,
      forecast?.requested_method ?? null,
      forecast?.chosen_by_backtest ?? false,
    ),
    requested_method: forecast?.requested_method ?? null,
    backtest: backtest.map((b) => ({
      method: b.method,
      weeks: b.weeks,
      wape: numOrNull(b.wape),
      mape: numOrNull(b.mape),
      bias: numOrNull(b.bias),
      mase: numOrNull(b.mase),
      naive_wape: numOrNull(b.naive_wape),
      seasonal_naive_wape: numOrNull(b.seasonal_naive_wape),
      seasonal_naive_mase: numOrNull(b.seasonal_naive_mase),
    })),
    overrides: groups.items,
    promotions,
  };
}

// ---------------------------------------------------------------------------------------------
// Overrides

interface ScopeInfo {
  kind: OverrideGroupRow["scope_kind"];
  id: number;
  name: string;
  pids: number[];
}

async function resolveScope(db: Database, scope: OverrideScope): Promise<ScopeInfo> {
  const query = runner(db);
  const members = (from: string, idParam = "$1::int") =>
    query<{ pid: number }>(
      `SELECT f.pid FROM product_forecasts f JOIN products p ON p.pid = f.pid WHERE ${from.replace("$ID", idParam)} ORDER BY f.pid`,
      [Object.values(scope)[0]],
    ).then((rows) => rows.map((r) => r.pid));
  if ("pids" in scope) {
    const wanted = [...new Set(scope.pids)];
    const found = await query<{ pid: number; title: string; has: boolean }>(
      `SELECT p.pid, p.title, EXISTS (SELECT 1 FROM product_forecasts f WHERE f.pid = p.pid) AS has
       FROM products p WHERE p.pid = ANY($1::int[])`,
      [wanted],
    );
    const byPid = new Map(found.map((r) => [r.pid, r]));
    const missing = wanted.filter((pid) => !byPid.has(pid));
    if (missing.length)
      throw badRequest(
        `product${missing.length === 1 ? "" : "s"} ${missing.slice(0, 10).join(", ")}${missing.length > 10 ? ", …" : ""} not found`,
        "scope.pids",
      );
    const excluded = wanted.filter((pid) => !byPid.get(pid)!.has);
    if (excluded.length)
      throw badRequest(
        `product${excluded.length === 1 ? "" : "s"} ${excluded.slice(0, 10).join(", ")}${excluded.length > 10 ? ", …" : ""} ha${excluded.length === 1 ? "s" : "ve"} no forecast (excluded from forecasting)`,
        "scope.pids",
      );
    const name = wanted.length === 1 ? byPid.get(wanted[0]!)!.title : `${wanted.length} products`;
    return { kind: "products", id: wanted.length, name, pids: wanted.sort((a, b) => a - b) };
  }
  if ("pid" in scope) {
    const [p] = await query<{ title: string; has: boolean }>(
      "SELECT title, EXISTS (SELECT 1 FROM product_forecasts WHERE pid = $1::int) AS has FROM products WHERE pid = $1::int",
      [scope.pid],
    );
    if (!p) throw badRequest(`product ${scope.pid} not found`, "scope.pid");
    if (!p.has)
      throw badRequest(`product ${scope.pid} has no forecast (excluded from forecasting)`, "scope.pid");
    return { kind: "product", id: scope.pid, name: p.title, pids: [scope.pid] };
  }
  if ("category_id" in scope) {
    const [c] = await query<{ name: string }>("SELECT name FROM categories WHERE id = $1::int", [
      scope.category_id,
    ]);
    if (!c) throw badRequest(`category ${scope.category_id} not found`, "scope.category_id");
    const pids = await members(
      `f.pid IN (SELECT pid FROM product_categories WHERE category_id IN (${categoryTreeSql("$ID")}))`,
    );
    return { kind: "category", id: scope.category_id, name: c.name, pids };
  }
  if ("brand_id" in scope) {
    const [b] = await query<{ name: string }>("SELECT name FROM brands WHERE id = $1::int", [scope.brand_id]);
    if (!b) throw badRequest(`brand ${scope.brand_id} not found`, "scope.brand_id");
    return { kind: "brand", id: scope.brand_id, name: b.name, pids: await members("p.brand_id = $ID") };
  }
  const [v] = await query<{ name: string }>("SELECT name FROM vendors WHERE id = $1::int", [scope.vendor_id]);
  if (!v) throw badRequest(`vendor ${scope.vendor_id} not found`, "scope.vendor_id");
  return { kind: "vendor", id: scope.vendor_id, name: v.name, pids: await members("p.vendor_id = $ID") };
}

/** Checks the weeks against the forecast's 13 calendar weeks; answers each week's index (0 … 12). */
function checkWeeks(cal: CalendarWeeks, weeks: OverrideWeek[]): number[] {
  const seen = new Set<string>();
  return weeks.map((w, i) => {
    const field = `weeks.${i}.week_start`;
    if (mondayOf(w.week_start) !== w.week_start) throw badRequest(`${w.week_start} is not a Monday`, field);
    if (w.week_start <= cal.asOfWeek)
      throw badRequest(
        `${w.week_start} is in the past (the first week that can be overridden is ${cal.weeks[0]})`,
        field,
      );
    const idx = cal.weeks.indexOf(w.week_start);
    if (idx < 0)
      throw badRequest(
        `${w.week_start} is beyond the ${FORECAST_WEEKS}-week horizon (last week ${cal.weeks.at(-1)})`,
        field,
      );
    if (seen.has(w.week_start)) throw badRequest(`${w.week_start} is given twice`, field);
    seen.add(w.week_start);
    return idx;
  });
}

/**
 * The per-product overrides a request makes, without saving: on a category, brand or vendor, units
 * are spread over its products by their share of the week's system forecast (evenly when the scope
 * forecasts 0 that week); a percentage applies to each product as it is.
 */
async function planOverride(
  db: Database,
  input: OverrideInput,
): Promise<{ cal: CalendarWeeks; scope: ScopeInfo; products: OverrideProductResult[] }> {
  const cal = await forecastCalendar(db);
  if (!cal) throw badRequest("There is no forecast yet: run a Full Update or Full Reset first", "weeks");
  const idx = checkWeeks(cal, input.weeks);
  if (input.expires_on && input.expires_on < cal.d0)
    throw badRequest(`${input.expires_on} is in the past`, "expires_on");
  const scope = await resolveScope(db, input.scope);
  if (scope.pids.length === 0)
    throw badRequest(`${scope.kind} ${scope.id} has no products with a forecast`, "scope");
  const rows = await runner(db)<{ pid: number; title: string; weekly: number[] }>(
    "SELECT f.pid, p.title, f.weekly FROM product_forecasts f JOIN products p ON p.pid = f.pid WHERE f.pid = ANY($1::int[]) ORDER BY f.pid",
    [scope.pids],
  );
  const system = rows.map((r) => toCalendar(r.weekly.map(Number), cal.r));
  const totals = idx.map((j) => system.reduce((a, s) => a + (s[j] ?? 0), 0));
  // "Hold": each product's own average of the last 4 complete weeks (before the as-of week).
  const holds = input.weeks.some((w) => "hold" in w)
    ? await weeklySales(db, scope.pids, addDaysIso(cal.asOfWeek, -28), cal.asOfWeek)
    : new Map<number, Map<string, number>>();
  const holdOf = (pid: number) => {
    let sum = 0;
    for (const v of holds.get(pid)?.values() ?? []) sum += v;
    return sum / 4;
  };
  // Units on a list of products (bulk) apply to each product as they are; on a group they are spread.
  const spread = scope.kind !== "product" && scope.kind !== "products";
  const overall = totals.reduce((a, b) => a + b, 0);
  const products = rows.map((r, p): OverrideProductResult => {
    const sys = system[p]!;
    const ownTotal = idx.reduce((a, j) => a + (sys[j] ?? 0), 0);
    return {
      pid: r.pid,
      title: r.title,
      share: rows.length === 1 ? 1 : overall > 0 ? ownTotal / overall : 1 / rows.length,
      weeks: input.weeks.map((w, k) => {
        const s = sys[idx[k]!] ?? 0;
        if ("pct" in w)
          return {
            week_start: w.week_start,
            system: round2(s),
            units: null,
            pct: w.pct,
            final: round2(finalOf(s, { units: null, pct: w.pct })),
          };
        const total = totals[k]!;
        const share = !spread || rows.length === 1 ? 1 : total > 0 ? s / total : 1 / rows.length;
        const units = "hold" in w ? holdOf(r.pid) : w.units * share;
        return {
          week_start: w.week_start,
          system: round2(s),
          units: round2(units),
          pct: null,
          final: round2(units),
        };
      }),
    };
  });
  return { cal, scope, products };
}

/** What an override would make, per product, before it is saved. */
export async function previewOverride(db: Database, raw: unknown): Promise<OverrideResult> {
  const input = parseOverride(raw);
  const { products } = await planOverride(db, input);
  return { id: null, products };
}

function parseOverride(raw: unknown): OverrideInput {
  const parsed = overrideInput.safeParse(raw ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.join(".");
    throw badRequest(issue.message, field || "body");
  }
  return parsed.data;
}

const TX_OPTIONS = { maxWait: 30_000, timeout: 60_000 };

/**
 * POST an override: one group and its per-product rows, and the edited products' planning rows
 * recomputed (refreshPlanningRows), in one transaction: nothing is half-saved.
 */
export async function createOverride(db: Database, user: CurrentUser, raw: unknown): Promise<OverrideResult> {
  const input = parseOverride(raw);
  const { cal, scope, products } = await planOverride(db, input);
  const pids: number[] = [];
  const weeks: string[] = [];
  const units: (number | null)[] = [];
  const pcts: (number | null)[] = [];
  for (const p of products)
    for (const w of p.weeks) {
      pids.push(p.pid);
      weeks.push(w.week_start);
      units.push(w.units);
      pcts.push(w.pct);
    }
  const id = await db.prisma.$transaction(async (tx) => {
    const [group] = await tx.$queryRawUnsafe<{ id: number }[]>(
      `INSERT INTO forecast_override_groups (scope_kind, scope_id, scope_name, weeks, reason, expires_on, created_by, created_by_name)
       VALUES ($1, $2::int, $3, $4::jsonb, $5, $6::date, $7::int, $8) RETURNING id`,
      scope.kind,
      scope.id,
      scope.name,
      JSON.stringify(input.weeks),
      input.reason,
      input.expires_on ?? null,
      user.id,
      user.username,
    );
    await tx.$executeRawUnsafe(
      `INSERT INTO forecast_overrides (group_id, pid, week_start, units, pct)
       SELECT $1::int, * FROM unnest($2::int[], $3::date[], $4::float8[], $5::float8[])`,
      group!.id,
      pids,
      weeks,
      units,
      pcts,
    );
    await refreshPlanningRows(tx, cal, scope.pids);
    return group!.id;
  }, TX_OPTIONS);
  return { id, products };
}

/** DELETE an override group (all its products' weeks); the products' planning rows are recomputed. */
export async function deleteOverride(db: Database, id: number): Promise<{ id: number; products: number[] }> {
  const cal = await forecastCalendar(db);
  const pids = await db.prisma.$transaction(async (tx) => {
    const rows = await tx.$queryRawUnsafe<{ pid: number }[]>(
      "SELECT DISTINCT pid FROM forecast_overrides WHERE group_id = $1::int ORDER BY pid",
      id,
    );
    const gone = await tx.$executeRawUnsafe("DELETE FROM forecast_override_groups WHERE id = $1::int", id);
    if (gone === 0) throw notFound(`Override ${id} not found`);
    const pids = rows.map((r) => r.pid);
    if (cal) await refreshPlanningRows(tx, cal, pids);
    return pids;
  }, TX_OPTIONS);
  return { id, products: pids };
}

/** The override groups, newest first (optionally those touching one product). */
export async function listOverrideGroups(
  db: Database,
  raw: OverrideListInput,
): Promise<{ items: OverrideGroupRow[]; total: number }> {
  const q = overrideListInput.parse(raw);
  const where = q.pid ? "WHERE g.id IN (SELECT group_id FROM forecast_overrides WHERE pid = $3::int)" : "";
  const params: unknown[] = [q.pageSize, (q.page - 1) * q.pageSize];
  if (q.pid) params.push(q.pid);
  const rows = await runner(db)<{
    id: number;
    scope_kind: OverrideGroupRow["scope_kind"];
    scope_id: number;
    scope_name: string;
    weeks: unknown;
    reason: string;
    expires_on: string | null;
    created_by_name: string;
    created_at: Date;
    products: number;
    total: number;
  }>(
    `SELECT g.id, g.scope_kind, g.scope_id, g.scope_name, g.weeks, g.reason,
       to_char(g.expires_on, 'YYYY-MM-DD') AS expires_on, g.created_by_name, g.created_at,
       (SELECT count(DISTINCT pid)::int FROM forecast_overrides o WHERE o.group_id = g.id) AS products,
       count(*) OVER ()::int AS total
     FROM forecast_override_groups g ${where}
     ORDER BY g.created_at DESC, g.id DESC LIMIT $1::int OFFSET $2::int`,
    params,
  );
  return {
    items: rows.map((r) => ({
      id: r.id,
      scope_kind: r.scope_kind,
      scope_id: r.scope_id,
      scope_name: r.scope_name,
      weeks: (typeof r.weeks === "string" ? JSON.parse(r.weeks) : r.weeks) as OverrideWeek[],
      reason: r.reason,
      expires_on: r.expires_on,
      created_by: r.created_by_name,
      created_at: new Date(r.created_at).toISOString(),
      products: r.products,
    })),
    total: rows[0]?.total ?? 0,
  };
}

// ---------------------------------------------------------------------------------------------
// Measured accuracy (forecast_measured, filled by the calculation from the snapshots)

const ACCURACY_KEY: Record<AccuracyPage["group"], { key: string; label: string; join: string }> = {
  product: { key: "x.pid::text", label: "min(p.title)", join: "JOIN products p ON p.pid = x.pid" },
  abc: {
    key: "COALESCE(m.abc_class, '–')",
    label: "COALESCE(m.abc_class, 'No class')",
    join: "LEFT JOIN product_metrics m ON m.pid = x.pid",
  },
  method: { key: "x.method", label: "x.method", join: "" },
  category: {
    key: "pc.category_id::text",
    label: "min(c.name)",
    join: "JOIN product_categories pc ON pc.pid = x.pid JOIN categories c ON c.id = pc.category_id",
  },
};

const ACCURACY_FIGURES = `
  count(DISTINCT x.week_start)::int AS weeks,
  sum(x.actual)::float8 AS actual,
  (sum(abs(x.actual - x.system)) / NULLIF(sum(x.actual), 0))::float8 AS wape,
  (sum(x.system - x.actual) / NULLIF(sum(x.actual), 0))::float8 AS bias,
  (sum(abs(x.actual - x.system)) / NULLIF(sum(abs(x.actual - x.naive)), 0))::float8 AS mase,
  (sum(abs(x.actual - x.final)) / NULLIF(sum(x.actual), 0))::float8 AS final_wape,
  ((sum(abs(x.actual - x.system)) FILTER (WHERE x.final <> x.system)
    - sum(abs(x.actual - x.final)) FILTER (WHERE x.final <> x.system))
    / NULLIF(sum(x.actual) FILTER (WHERE x.final <> x.system), 0))::float8 AS fva,
  count(*) FILTER (WHERE x.final <> x.system)::int AS overridden_weeks`;

/** GET measured accuracy at the lead-time lag, grouped, with the overall figures and weekly trend. */
export async function forecastAccuracy(db: Database, raw: AccuracyInput): Promise<AccuracyPage> {
  const q = accuracyInput.parse(raw);
  const spec = ACCURACY_KEY[q.group];
  const query = runner(db);
  const [items, [overall], trend] = await Promise.all([
    query<AccuracyRow & { total: number }>(
      `SELECT ${spec.key} AS key, ${spec.label} AS label, ${ACCURACY_FIGURES}, count(*) OVER ()::int AS total
       FROM forecast_measured x ${spec.join}
       GROUP BY 1 ${q.group === "abc" || q.group === "method" ? ", 2" : ""}
       ORDER BY sum(abs(x.actual - x.system)) DESC, 1 LIMIT $1::int OFFSET $2::int`,
      [q.pageSize, (q.page - 1) * q.pageSize],
    ),
    query<AccuracyRow & { n: number }>(
      `SELECT 'all' AS key, 'All products' AS label, ${ACCURACY_FIGURES}, count(*)::int AS n FROM forecast_measured x`,
    ),
    query<{ week_start: string; wape: number | null; bias: number | null; final_wape: number | null }>(
      `SELECT to_char(x.week_start, 'YYYY-MM-DD') AS week_start,
         (sum(abs(x.actual - x.system)) / NULLIF(sum(x.actual), 0))::float8 AS wape,
         (sum(x.system - x.actual) / NULLIF(sum(x.actual), 0))::float8 AS bias,
         (sum(abs(x.actual - x.final)) / NULLIF(sum(x.actual), 0))::float8 AS final_wape
       FROM forecast_measured x GROUP BY x.week_start ORDER BY x.week_start`,
    ),
  ]);
  return {
    group: q.group,
    items: items.map(({ total: _t, ...r }) => r),
    total: items[0]?.total ?? 0,
    overall: overall && overall.n > 0 ? (({ n: _n, ...r }) => r)(overall) : null,
    trend,
  };
}

// ---------------------------------------------------------------------------------------------
// Exceptions (docs/metrics.md §17 "Exceptions"): read from the stored grid figures and metrics.

const EXCEPTION_SQL: Record<ExceptionKind, { where: string; order: string }> = {
  // At least a cent at risk (a constant series backtests to a WAPE of ~1e-16, not 0).
  error_value: { where: "f.wape * f.final_value >= 0.01", order: "f.wape * f.final_value DESC" },
  bias: {
    where: `abs(f.bias) > ${EXCEPTION_BIAS}`,
    order: "abs(f.bias) * f.final_value DESC, abs(f.bias) DESC",
  },
  stockouts: {
    where: `m.out_of_stock_days_90 >= ${EXCEPTION_STOCKOUT_DAYS}`,
    order: "m.out_of_stock_days_90 DESC, f.final_value DESC",
  },
  new_profile: { where: "m.is_new AND m.demand_source = 'category'", order: "f.final_value DESC" },
  sudden_change: {
    where: `abs(f.change) > ${EXCEPTION_CHANGE}`,
    order: "abs(f.change) DESC, f.final_value DESC",
  },
};

const pctText = (x: number) => `${x > 0 ? "+" : ""}${Math.round(x * 1000) / 10} %`;
const moneyText = (x: number) => `$${Math.round(x).toLocaleString("en-US")}`;

function exceptionReason(kind: ExceptionKind, r: ExceptionRow): string {
  switch (kind) {
    case "error_value":
      return `Backtest error ${pctText(r.wape ?? 0).replace("+", "")} of ${moneyText(r.forecast_value)} forecast: ${moneyText(r.error_value ?? 0)} at risk`;
    case "bias":
      return (r.bias ?? 0) > 0
        ? `Over-forecast by ${pctText(r.bias ?? 0).replace("+", "")} in the backtest`
        : `Under-forecast by ${pctText(-(r.bias ?? 0)).replace("+", "")} in the backtest`;
    case "stockouts":
      return `Out of stock ${r.out_of_stock_days_90} of the last 90 days: sales understate demand`;
    case "new_profile":
      return "New product (under 30 days of history), planned from its category's profile";
    case "sudden_change":
      return `Forecast ${pctText(r.change ?? 0)} against last week's snapshot`;
  }
}

/**
 * GET the exceptions of one kind (paged) and how many products each kind lists. The page's products
 * are chosen over product_forecasts and product_metrics alone (a top-N sort of the kind's rows), and
 * only those 50 are joined to their titles and vendors: joining every listed product first (28k of
 * the 50k set's for `error_value`) took 215 ms of the 230. The kind's total is its count, from the
 * same WHERE.
 */
export async function forecastExceptions(db: Database, raw: ExceptionsInput): Promise<ExceptionsPage> {
  const q = exceptionsInput.parse(raw);
  // Kept per version of the figures, as the grid's pages: a calculation or a planning refresh
  // (an override, a promotion) makes a new one.
  const version = await figuresVersion(db);
  return exceptionCaches.of(db).get(JSON.stringify(q), version, () => exceptionsPage(db, q, version));
}

async function exceptionsPage(
  db: Database,
  q: ReturnType<typeof exceptionsInput.parse>,
  version: string,
): Promise<ExceptionsPage> {
  const spec = EXCEPTION_SQL[q.kind];
  const query = runner(db);
  const [pageIds, counts] = await Promise.all([
    query<{ pid: number }>(
      `SELECT f.pid
       FROM product_forecasts f
       LEFT JOIN product_metrics m ON m.pid = f.pid
       WHERE ${spec.where}
       ORDER BY ${spec.order}, f.pid LIMIT $1::int OFFSET $2::int`,
      [q.pageSize, (q.page - 1) * q.pageSize],
    ),
    exceptionCountCaches.of(db).get("counts", version, async () => {
      const [row] = await query<Record<ExceptionKind, number>>(
        `SELECT ${EXCEPTION_KINDS.map((k) => `count(*) FILTER (WHERE ${EXCEPTION_SQL[k].where})::int AS ${k}`).join(", ")}
         FROM product_forecasts f LEFT JOIN product_metrics m ON m.pid = f.pid`,
      );
      return Object.fromEntries(EXCEPTION_KINDS.map((k) => [k, row?.[k] ?? 0])) as Record<
        ExceptionKind,
        number
      >;
    }),
  ]);
  const pids = pageIds.map((r) => r.pid);
  const found = pids.length
    ? await query<{
        pid: number;
        title: string;
        sku: string | null;
        vendor: string | null;
        method: string;
        requested_method: string;
        chosen_by_backtest: boolean;
        units: number;
        value: number;
        wape: number | null;
        bias: number | null;
        mase: number | null;
        change: number | null;
        oos: number | null;
      }>(
        `SELECT f.pid, p.title, p.sku, v.name AS vendor, f.method, f.requested_method, f.chosen_by_backtest,
           f.final_units AS units, f.final_value AS value, f.wape, f.bias, f.mase, f.change,
           m.out_of_stock_days_90 AS oos
         FROM product_forecasts f
         JOIN products p ON p.pid = f.pid
         LEFT JOIN product_metrics m ON m.pid = f.pid
         LEFT JOIN vendors v ON v.id = p.vendor_id
         WHERE f.pid = ANY($1::int[])`,
        [pids],
      )
    : [];
  const byPid = new Map(found.map((r) => [r.pid, r]));
  // In the page's order (a product deleted between the two reads is left out).
  const rows = pids.flatMap((pid) => byPid.get(pid) ?? []);
  const items = rows.map((r): ExceptionRow => {
    const row: ExceptionRow = {
      pid: r.pid,
      title: r.title,
      sku: r.sku,
      vendor: r.vendor,
      method_label: methodLabel(r.method, r.requested_method, r.chosen_by_backtest),
      forecast_units: round2(num(r.units)),
      forecast_value: round2(num(r.value)),
      wape: numOrNull(r.wape),
      bias: numOrNull(r.bias),
      mase: numOrNull(r.mase),
      change: numOrNull(r.change),
      out_of_stock_days_90: numOrNull(r.oos),
      error_value: r.wape == null ? null : round2(Number(r.wape) * num(r.value)),
      reason: "",
    };
    row.reason = exceptionReason(q.kind, row);
    return row;
  });
  return {
    kind: q.kind,
    items,
    total: counts[q.kind],
    counts: { ...counts },
  };
}
