// Planning metrics for the screens and scripts (docs/metrics.md): the product list with
// paging, sorting and filters; one product's figures explained; its weekly history, forecast,
// backtest and stock runs; the brand / vendor / category aggregates. Reads only what the
// calculation phase stored (plus the raw rows an explanation shows).

import {
  ABC_CLASSES,
  type AbcClass,
  type AggregateListInput,
  type AggregatePage,
  type AggregateRow,
  type AggregateSort,
  aggregateListInput,
  type COVER_BUCKETS,
  isMerchandiseSql,
  type MetricsExplanation,
  PRODUCT_STATUSES,
  type ProductMetricSort,
  type ProductMetricsDetail,
  type ProductMetricsListInput,
  type ProductMetricsListQuery,
  type ProductMetricsPage,
  type ProductMetricsRow,
  type ProductStatus,
  productMetricsListInput,
} from "../../../shared/metrics.ts";
import type { Database } from "../../db/database.ts";
import { notFound } from "../../errors.ts";
import { isProductCategorySql } from "../config/category-types.ts";
import { loadGlobalSettingValues, resolvePlanningParameters } from "../config/planning-parameters.ts";
import { promotionAdjustmentSql, stoppedReorderSql } from "../discounts/promotion-layer.ts";
import { APP_OPEN_LINES_SQL, APP_PENDING_RECEIPTS_SQL } from "../purchasing/open-orders.ts";
import {
  type AccuracyRow,
  addDays,
  buildExplanation,
  type ExplainRow,
  type ForecastRow,
  type LeadTimeSamples,
  type OpenLine,
  type SalesWindows,
  type StockRun,
} from "./metrics.explain.ts";

type Query = <T>(sql: string, params?: unknown[]) => Promise<T[]>;
const runner = (db: Database): Query => {
  return <T>(sql: string, params: unknown[] = []) => db.prisma.$queryRawUnsafe<T[]>(sql, ...params);
};

/** Text for LIKE: wildcards in the search are matched literally. */
const likeEscape = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

const zeroCounts = <K extends string>(keys: readonly K[]) =>
  Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;

/** A jsonb count object ({"critical": 3, …}) with every key present. */
function counts<K extends string>(keys: readonly K[], value: unknown): Record<K, number> {
  const out = zeroCounts(keys);
  const obj = typeof value === "string" ? JSON.parse(value) : value;
  if (obj && typeof obj === "object")
    for (const k of keys) out[k] = Number((obj as Record<string, unknown>)[k] ?? 0) || 0;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Product list

const STATUS_ORDER = `array_position(ARRAY[${PRODUCT_STATUSES.map((s) => `'${s}'`).join(",")}]::text[], m.status)`;

/** The whitelist: sort key → SQL expression. Nothing else reaches ORDER BY. */
const PRODUCT_SORT_SQL: Record<ProductMetricSort, string> = {
  title: "lower(p.title)",
  sku: "lower(p.sku)",
  on_hand: "m.on_hand",
  on_order: "m.on_order",
  units_30d: "m.units_30d",
  revenue_30d: "m.revenue_30d",
  revenue_365d: "m.revenue_365d",
  avg_daily_sales: "m.avg_daily_sales",
  days_of_cover: "m.days_of_cover",
  reorder_point: "m.reorder_point",
  reorder_qty: "m.reorder_qty",
  reorder_value: "m.reorder_value",
  overstock_value: "m.overstock_value",
  stockout_date: "m.stockout_date",
  margin_365d: "m.margin_365d",
  abc_class: "m.abc_class",
  status: STATUS_ORDER,
};

const PRODUCT_ROW_SELECT = `
  m.pid, p.title, p.sku, v.name AS vendor, b.name AS brand,
  m.on_hand, m.on_order, m.units_30d,
  m.revenue_30d::float8 AS revenue_30d, m.revenue_365d::float8 AS revenue_365d,
  m.avg_daily_sales::float8 AS avg_daily_sales, m.demand_rate::float8 AS demand_rate,
  m.days_of_cover::float8 AS days_of_cover, m.safety_stock, m.reorder_point, m.reorder_qty,
  m.reorder_value::float8 AS reorder_value, m.overstock_qty, m.overstock_value::float8 AS overstock_value,
  to_char(m.stockout_date, 'YYYY-MM-DD') AS stockout_date, m.margin_365d::float8 AS margin_365d,
  m.abc_class, m.xyz_class, m.status, m.forecast_method, p.kind`;

/** What the filters and sorts read (products only when they need it); names join the page's rows. */
const fromFor = (sql: string) =>
  /\bp\./.test(sql) ? "FROM product_metrics m JOIN products p ON p.pid = m.pid" : "FROM product_metrics m";

/**
 * What the product list keeps between requests, per database and calculation (the timestamp the
 * run writes to calculate_status in the transaction that swaps its tables in): per filter set and
 * sort, the matching pids in that order, and per filter set the status counts. Any page is then a
 * slice of the ordering and one primary-key read, which also reads the calculation's timestamp in
 * the same statement (one snapshot): a page is answered only from an ordering of that calculation.
 */
interface Versioned<T> {
  version: string;
  value: T;
}
interface ListCache {
  orderings: Map<string, Promise<Versioned<Int32Array>>>;
  /** pids held by `orderings`, per key and in all (emptied beyond ORDERING_CACHE_PIDS) */
  sizes: Map<string, number>;
  pids: number;
  chips: Map<string, Promise<Versioned<{ status: string | null; n: number }[]>>>;
}
const ORDERING_CACHE_PIDS = 4_000_000;
const ORDERING_CACHE_KEYS = 2_000;
const CHIP_CACHE_SIZE = 500;
const listCaches = new WeakMap<Database, ListCache>();
const listCacheOf = (db: Database): ListCache => {
  let cache = listCaches.get(db);
  if (!cache) {
    cache = { orderings: new Map(), sizes: new Map(), pids: 0, chips: new Map() };
    listCaches.set(db, cache);
  }
  return cache;
};
const CALCULATION_VERSION = "(SELECT max(last_calculation_timestamp)::text FROM calculate_status)";

/**
 * The cached value under `key` if it is of `version` (or of any calculation when `version` is
 * undefined); else computes it, once for all the requests asking at the same time. A value of no
 * calculation (none has run yet) is not kept.
 */
async function versioned<T>(
  map: Map<string, Promise<Versioned<T>>>,
  key: string,
  version: string | undefined,
  compute: () => Promise<Versioned<T>>,
  kept?: (v: Versioned<T>) => void,
): Promise<Versioned<T>> {
  const known = map.get(key);
  if (known) {
    const v = await known.catch(() => null);
    if (v && (version === undefined || v.version === version)) return v;
    if (map.get(key) === known) map.delete(key);
  }
  // Another request may have started it while this one waited.
  const again = map.get(key);
  if (again) return again;
  const computing = compute();
  map.set(key, computing);
  try {
    const v = await computing;
    if (!v.version && map.get(key) === computing) map.delete(key);
    else kept?.(v);
    return v;
  } catch (err) {
    if (map.get(key) === computing) map.delete(key);
    throw err;
  }
}

/**
 * The days-of-cover buckets' conditions (the Analytics chart counts with them, the `cover` filter
 * lists with them): merchandise products that are not discontinued, by on hand and days of cover.
 */
export const COVER_BUCKET_SQL: Record<(typeof COVER_BUCKETS)[number]["key"], string> = {
  out: "m.on_hand <= 0",
  none: "m.on_hand > 0 AND m.days_of_cover IS NULL",
  "0_14": "m.on_hand > 0 AND m.days_of_cover < 15",
  "15_30": "m.on_hand > 0 AND m.days_of_cover >= 15 AND m.days_of_cover <= 30",
  "31_60": "m.on_hand > 0 AND m.days_of_cover > 30 AND m.days_of_cover <= 60",
  "61_90": "m.on_hand > 0 AND m.days_of_cover > 60 AND m.days_of_cover <= 90",
  "91_180": "m.on_hand > 0 AND m.days_of_cover > 90 AND m.days_of_cover <= 180",
  "181_365": "m.on_hand > 0 AND m.days_of_cover > 180 AND m.days_of_cover <= 365",
  over_365: "m.on_hand > 0 AND m.days_of_cover > 365",
};
/** What the cover chart counts at all. */
export const COVER_BASE_SQL = "p.kind = 'merchandise' AND m.status IS DISTINCT FROM 'discontinued'";

/** D0 of a product_metrics row: the UTC day its figures are as of. */
const METRICS_D0 = "(m.calculated_at AT TIME ZONE 'UTC')::date";

/**
 * The product list's filters but status, as SQL conditions over product_metrics m (and products p),
 * parameters added through `param`. The Dashboard's tiles count with these very conditions
 * (countProductMetrics), so a tile and the list it opens cannot disagree.
 */
export function productFilterWhere(q: ProductMetricsListQuery, param: (v: unknown) => string): string[] {
  const where: string[] = [];
  const search = q.search?.trim();
  if (search) {
    const like = param(`%${likeEscape(search)}%`);
    const alternatives = [`p.title ILIKE ${like}`, `p.sku ILIKE ${like}`, `p.barcode ILIKE ${like}`];
    if (/^\d{1,9}$/.test(search)) alternatives.push(`p.pid = ${param(Number(search))}::int`);
    where.push(`(${alternatives.join(" OR ")})`);
  }
  if (q.abc) where.push(`m.abc_class = ${param(q.abc)}`);
  if (q.xyz) where.push(`m.xyz_class = ${param(q.xyz)}`);
  if (q.vendorId) where.push(`p.vendor_id = ${param(q.vendorId)}::int`);
  if (q.brandId) where.push(`p.brand_id = ${param(q.brandId)}::int`);
  if (!q.nonMerchandise) where.push(isMerchandiseSql("p"));
  if (q.category) {
    // The category and every category below it.
    where.push(`m.pid IN (
      SELECT pc.pid FROM product_categories pc WHERE pc.category_id IN (
        WITH RECURSIVE sub(id) AS (
          SELECT id FROM categories WHERE id = ${param(q.category)}::int
          UNION SELECT c.id FROM categories c JOIN sub ON c.parent_id = sub.id
        ) SELECT id FROM sub))`);
  }
  if (q.stockoutBeforeArrival)
    where.push(
      `m.stockout_date < ${METRICS_D0} + ceil(COALESCE(m.lead_time_days, 0))::int AND m.status NOT IN ('discontinued', 'excluded')`,
    );
  if (q.outOfStock) where.push("m.on_hand <= 0");
  if (q.noSalesDays)
    where.push(
      `(m.date_last_sold IS NULL OR m.date_last_sold <= ${METRICS_D0} - ${param(q.noSalesDays)}::int)`,
    );
  // The Analytics page's buckets: the same conditions or the very products its chart counted.
  if (q.cover) where.push(`${COVER_BASE_SQL} AND ${COVER_BUCKET_SQL[q.cover]}`);
  if (q.aging) where.push(`m.pid IN (SELECT unnest(pids) FROM stock_aging WHERE bucket = ${param(q.aging)})`);
  if (q.receivedMonth)
    where.push(
      `m.pid IN (SELECT unnest(pids) FROM receipt_months WHERE month = ${param(`${q.receivedMonth}-01`)}::date)`,
    );
  return where;
}

/** The products a filter set matches: how many and the sums the Dashboard's tiles show. */
export async function countProductMetrics(
  db: Database,
  input: ProductMetricsListInput,
): Promise<{
  count: number;
  reorder_value: number;
  overstock_value: number;
  stock_value_cost: number;
  revenue_30d: number;
}> {
  const q = productMetricsListInput.parse(input);
  const params: unknown[] = [];
  const param = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const where = productFilterWhere(q, param);
  if (q.status) where.push(`m.status = ANY(${param(q.status)}::text[])`);
  const sql = where.length ? `WHERE ${where.join(" AND ")}` : "";
  const [row] = await runner(db)<{
    count: number;
    reorder_value: number;
    overstock_value: number;
    stock_value_cost: number;
    revenue_30d: number;
  }>(
    `SELECT count(*)::int AS count, COALESCE(SUM(m.reorder_value), 0)::float8 AS reorder_value,
       COALESCE(SUM(m.overstock_value), 0)::float8 AS overstock_value,
       COALESCE(SUM(m.stock_value_cost), 0)::float8 AS stock_value_cost,
       COALESCE(SUM(m.revenue_30d), 0)::float8 AS revenue_30d
     ${fromFor(sql)} ${sql}`,
    params,
  );
  return row!;
}

/** GET the product metrics list: one page, its total, and the status counts for the filter chips. */
export async function listProductMetrics(
  db: Database,
  input: ProductMetricsListInput,
): Promise<ProductMetricsPage> {
  const q = productMetricsListInput.parse(input);
  const query = runner(db);
  const cache = listCacheOf(db);
  const params: unknown[] = [];
  const param = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const where = productFilterWhere(q, param);
  const chipWhere = where.length ? `WHERE ${where.join(" AND ")}` : "";
  const chipParams = [...params];
  if (q.status) where.push(`m.status = ANY(${param(q.status)}::text[])`);
  const rowWhere = where.length ? `WHERE ${where.join(" AND ")}` : "";
  const dir = q.dir === "asc" ? "ASC" : "DESC";
  const order = `ORDER BY ${PRODUCT_SORT_SQL[q.sort]} ${dir} NULLS LAST, m.pid ASC`;

  // The names of the vendor / brand filtered by (for the filter's chip).
  const filterNames =
    q.vendorId || q.brandId || q.category
      ? query<{ vendor_name: string | null; brand_name: string | null; category_name: string | null }>(
          `SELECT (SELECT name FROM vendors WHERE id = $1::int) AS vendor_name,
                  (SELECT name FROM brands WHERE id = $2::int) AS brand_name,
                  (SELECT name FROM categories WHERE id = $3::int) AS category_name`,
          [q.vendorId ?? null, q.brandId ?? null, q.category ?? null],
        )
      : Promise.resolve([]);

  // The filter set's pids in the sort's order (one sort over the matching rows, per calculation).
  const orderingKey = `${rowWhere}|${JSON.stringify(params)}|${order}`;
  const orderingOf = (version: string | undefined) =>
    versioned(
      cache.orderings,
      orderingKey,
      version,
      async () => {
        const [r] = await query<{ version: string | null; pids: number[] | null }>(
          `SELECT ${CALCULATION_VERSION} AS version,
             (SELECT array_agg(m.pid ${order}) ${fromFor(rowWhere + order)} ${rowWhere}) AS pids`,
          params,
        );
        return { version: r?.version ?? "", value: Int32Array.from(r?.pids ?? []) };
      },
      (v) => {
        cache.pids += v.value.length - (cache.sizes.get(orderingKey) ?? 0);
        cache.sizes.set(orderingKey, v.value.length);
        // Bounded by the pids held and by the number of orderings (a search that matches nothing
        // holds no pid).
        if (cache.pids > ORDERING_CACHE_PIDS || cache.orderings.size > ORDERING_CACHE_KEYS) {
          for (const key of [...cache.orderings.keys()]) if (key !== orderingKey) cache.orderings.delete(key);
          cache.sizes.clear();
          cache.sizes.set(orderingKey, v.value.length);
          cache.pids = v.value.length;
        }
      },
    );
  // The chips count over every filter but status; the total is one of them (or their sum).
  const chipKey = `${chipWhere}|${JSON.stringify(chipParams)}`;
  const chipsOf = (version: string | undefined) =>
    versioned(
      cache.chips,
      chipKey,
      version,
      async () => {
        const [r] = await query<{
          version: string | null;
          chips: { status: string | null; n: number }[] | null;
        }>(
          `SELECT ${CALCULATION_VERSION} AS version,
             (SELECT json_agg(c) FROM (SELECT m.status, count(*)::int AS n ${fromFor(chipWhere)} ${chipWhere}
                                       GROUP BY m.status) c) AS chips`,
          chipParams,
        );
        return { version: r?.version ?? "", value: r?.chips ?? [] };
      },
      () => {
        if (cache.chips.size > CHIP_CACHE_SIZE) {
          for (const key of [...cache.chips.keys()]) if (key !== chipKey) cache.chips.delete(key);
        }
      },
    );

  // The page: a slice of the ordering, its rows read by primary key together with the calculation's
  // timestamp (one statement, one snapshot). Should a calculation have committed since the ordering
  // or the counts were taken, they are taken again for it.
  const offset = (q.page - 1) * q.pageSize;
  let want: string | undefined;
  let rows: ProductMetricsRow[] = [];
  let chips: { status: string | null; n: number }[] = [];
  for (let attempt = 0; ; attempt++) {
    const [ordering, counted] = await Promise.all([orderingOf(want), chipsOf(want)]);
    const pids = Array.from(ordering.value.subarray(offset, offset + q.pageSize));
    let version: string;
    if (pids.length === 0) {
      const [v] = await query<{ version: string | null }>(`SELECT ${CALCULATION_VERSION} AS version`);
      version = v?.version ?? "";
      rows = [];
    } else {
      const read = await query<ProductMetricsRow & { calc_version: string | null; ord: unknown }>(
        `SELECT ${CALCULATION_VERSION} AS calc_version, pg.ord, ${PRODUCT_ROW_SELECT}
         FROM unnest($1::int[]) WITH ORDINALITY AS pg(pid, ord)
         JOIN product_metrics m ON m.pid = pg.pid
         JOIN products p ON p.pid = m.pid
         LEFT JOIN vendors v ON v.id = p.vendor_id
         LEFT JOIN brands b ON b.id = p.brand_id
         ORDER BY pg.ord`,
        [pids],
      );
      version = read[0]?.calc_version ?? "";
      rows = read.map(({ calc_version: _v, ord: _o, ...row }) => row);
    }
    chips = counted.value;
    if (ordering.version === version && counted.version === version) break;
    if (attempt >= 10) throw new Error("The product list could not be read consistently");
    want = version;
  }

  const [names] = await filterNames;
  const status_counts = zeroCounts(PRODUCT_STATUSES);
  let total = 0;
  for (const c of chips) {
    if (c.status && c.status in status_counts) status_counts[c.status as ProductStatus] = c.n;
    if (!q.status || (c.status && (q.status as string[]).includes(c.status))) total += c.n;
  }
  return {
    rows,
    total,
    page: q.page,
    pageSize: q.pageSize,
    status_counts,
    ...(q.vendorId ? { vendor_name: names?.vendor_name ?? null } : {}),
    ...(q.brandId ? { brand_name: names?.brand_name ?? null } : {}),
    ...(q.category ? { category_name: names?.category_name ?? null } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Explanation and detail

const METRIC_FLOATS = [
  "stock_value_cost",
  "stock_value_retail",
  "revenue_7d",
  "revenue_30d",
  "revenue_90d",
  "revenue_365d",
  "lifetime_revenue",
  "avg_daily_sales",
  "daily_sales_std",
  "avg_stock_units_365",
  "cogs_365d",
  "gross_profit_365d",
  "margin_365d",
  "sell_through_30d",
  "turnover_365d",
  "gmroi_365d",
  "lead_time_measured",
  "lead_time_measured_std",
  "lead_time_days",
  "demand_rate",
  "horizon_days",
  "forecast_horizon_units",
  "service_level",
  "z_score",
  "lead_time_demand",
  "reorder_value",
  "overstock_value",
  "days_of_cover",
  "abc_basis_value",
  "abc_share_before",
];
const METRIC_PLAIN = [
  "demand_variability",
  "on_hand",
  "on_order",
  "units_7d",
  "units_30d",
  "units_90d",
  "units_365d",
  "total_sold",
  "history_days",
  "is_new",
  "in_stock_days_90",
  "out_of_stock_days_90",
  "out_of_stock_days_365",
  "lead_time_configured",
  "lead_time_configured_source",
  "lead_time_measured_samples",
  "lead_time_measured_level",
  "lead_time_source",
  "forecast_method",
  "demand_source",
  "days_of_stock",
  "safety_stock",
  "safety_stock_method",
  "reorder_point",
  "reorder_qty",
  "overstock_qty",
  "status",
  "abc_class",
  "calculated_at",
];

// D0: the UTC date of calculated_at, which is the run's asOf (docs/metrics.md §0).
const EXPLAIN_SQL = `
SELECT p.pid, p.title, p.sku, p.stock_quantity, p.moq, p.case_qty, p.cost_price::float8 AS cost_price,
  p.price::float8 AS price, p.discontinued, p.replenishable, p.kind, p.vendor_id,
  (SELECT v.name FROM vendors v WHERE v.id = p.vendor_id) AS vendor_name,
  (SELECT c.name FROM product_categories pc JOIN categories c ON c.id = pc.category_id
    WHERE pc.pid = p.pid AND ${isProductCategorySql("c")} ORDER BY c.level DESC, c.id LIMIT 1) AS primary_category,
  -- The category whose profile plans a new product (§5): the primary category or its nearest
  -- ancestor with established products linked to it.
  (WITH RECURSIVE up AS (
     (SELECT c.id, c.parent_id, c.name, 0 AS depth
      FROM product_categories pc JOIN categories c ON c.id = pc.category_id
      WHERE pc.pid = p.pid AND ${isProductCategorySql("c")} ORDER BY c.level DESC, c.id LIMIT 1)
     UNION ALL
     SELECT c.id, c.parent_id, c.name, up.depth + 1
     FROM up JOIN categories c ON c.id = up.parent_id WHERE up.depth < 100 AND ${isProductCategorySql("c")})
   SELECT up.name FROM up
   WHERE EXISTS (SELECT 1 FROM product_categories pc2
     JOIN product_metrics m2 ON m2.pid = pc2.pid AND NOT m2.is_new
     JOIN products p2 ON p2.pid = pc2.pid AND NOT p2.discontinued
     WHERE pc2.category_id = up.id)
   ORDER BY up.depth LIMIT 1) AS profile_category,
  (SELECT a.adj FROM (${promotionAdjustmentSql(
    "(m.calculated_at AT TIME ZONE 'UTC')::date",
    "(SELECT m.pid, m.horizon_days AS h, m.demand_rate AS d, m.is_new)",
    "AND pp.pid = p.pid",
  )}) a)::float8 AS promotion_adjustment,
  (SELECT pr.name FROM promotions pr WHERE pr.id = (SELECT s.promotion_id FROM (${stoppedReorderSql(
    "(m.calculated_at AT TIME ZONE 'UTC')::date + 1",
    "AND pp.pid = p.pid",
  )}) s)) AS reorder_stopped_by,
  m.pid IS NOT NULL AS has_metrics,
  to_char((m.calculated_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS d0,
  to_char(m.history_start, 'YYYY-MM-DD') AS history_start,
  to_char(m.stockout_date, 'YYYY-MM-DD') AS stockout_date,
  ${METRIC_FLOATS.map((c) => `m.${c}::float8 AS ${c}`).join(", ")},
  ${METRIC_PLAIN.map((c) => `m.${c}`).join(", ")}
FROM products p
LEFT JOIN product_metrics m ON m.pid = p.pid
WHERE p.pid = $1::int`;

interface Loaded {
  row: ExplainRow;
  forecast: ForecastRow | null;
}

async function loadProduct(db: Database, pid: number): Promise<Loaded> {
  const query = runner(db);
  const [rows, forecasts] = await Promise.all([
    query<ExplainRow & { has_metrics: boolean }>(EXPLAIN_SQL, [pid]),
    query<ForecastRow>(
      `SELECT method, requested_method, chosen_by_backtest, to_char(week_start, 'YYYY-MM-DD') AS week_start,
         weekly::float8[] AS weekly, total_91d::float8 AS total_91d
       FROM product_forecasts WHERE pid = $1::int`,
      [pid],
    ),
  ]);
  const row = rows[0];
  if (!row) throw notFound(`Product ${pid} not found`);
  if (!row.has_metrics)
    throw notFound(`No metrics have been calculated for product ${pid} yet. Run a full update.`);
  const forecast = forecasts[0] ?? null;
  if (forecast) forecast.weekly = forecast.weekly.map(Number);
  return { row, forecast };
}

/** What the explanation and the detail both show: weekly history, backtest rows, stock runs. */
interface Extras {
  /** Units per week k = 103 … 0 (week k = D0−7k−6 … D0−7k), oldest first */
  history: { week_start: string; units: number }[];
  accuracy: AccuracyRow[];
  runs: StockRun[];
}

async function loadExtras(db: Database, row: ExplainRow): Promise<Extras> {
  const query = runner(db);
  const pid = row.pid;
  const [history, accuracy, runs] = await Promise.all([
    // Week k = D0−7k−6 … D0−7k, k = 0 … 103; one grouped pass over the product's order lines.
    // Week 0 is the "last 7 days" window, cut at asOf: it is units_7d.
    query<{ week_start: string; units: number }>(
      `SELECT to_char($2::date - 7 * w.k - 6, 'YYYY-MM-DD') AS week_start, COALESCE(s.units, 0)::float8 AS units
       FROM generate_series(0, 103) AS w(k)
       LEFT JOIN (
         SELECT ($2::date - (order_date AT TIME ZONE 'UTC')::date) / 7 AS k, GREATEST(sum(quantity), 0) AS units
         FROM order_lines
         WHERE pid = $1::int AND status = 'completed'
           AND order_date >= (($2::date - 727)::timestamp AT TIME ZONE 'UTC')
           AND order_date < (($2::date - 6)::timestamp AT TIME ZONE 'UTC')
         GROUP BY 1
       ) s ON s.k = w.k
       ORDER BY w.k DESC`,
      [pid, row.d0],
    ),
    query<AccuracyRow>(
      `SELECT method, weeks, actual::float8 AS actual, wape::float8 AS wape, mape::float8 AS mape,
         bias::float8 AS bias
       FROM product_forecast_accuracy WHERE pid = $1::int ORDER BY method`,
      [pid],
    ),
    query<StockRun>(
      `SELECT to_char(valid_from, 'YYYY-MM-DD') AS valid_from, to_char(valid_to, 'YYYY-MM-DD') AS valid_to,
         stock, sold_first_day
       FROM product_stock_history WHERE pid = $1::int ORDER BY valid_from`,
      [pid],
    ),
  ]);
  const lastWeek = history.at(-1);
  if (lastWeek) lastWeek.units = row.units_7d;
  return { history, accuracy, runs };
}

/** Lead-time samples listed per level (the rest are counted). */
const LISTED_SAMPLES = 20;

/**
 * The lead-time samples (§4) of the product and of its vendor's purchase orders: lines of purchase
 * orders not cancelled, ordered in the last 365 days, with a receipt up to D0; days = first receipt
 * − ordered. Counts and sums over every line; listed per level, the lines of one purchase order
 * with the same first receipt together, the first LISTED_SAMPLES such groups.
 */
async function loadLeadTimeSamples(db: Database, row: ExplainRow): Promise<LeadTimeSamples> {
  const rows = await runner(db)<{
    n_own: number;
    s_own: number;
    ss_own: number;
    n_vend: number;
    s_vend: number;
    ss_vend: number;
    level: "own" | "vendor" | null;
    po_id: number;
    date_ordered: string;
    first_received: string;
    days: number;
    lines: number;
  }>(
    // The product's lines and the vendor's purchase orders' lines, each found by its index.
    `WITH lines AS (
       SELECT l.id, l.pid, l.po_id FROM po_lines l WHERE l.pid = $1::int
       UNION
       SELECT l.id, l.pid, l.po_id
       FROM purchase_orders o JOIN po_lines l ON l.po_id = o.id
       WHERE o.vendor_id = $3::int
     ),
     s AS MATERIALIZED (
       SELECT l.pid = $1::int AS own, COALESCE(o.vendor_id = $3::int, false) AS vend, o.id AS po_id,
         o.date_ordered, fr.first_received, (fr.first_received - o.date_ordered)::float8 AS days
       FROM lines l
       JOIN purchase_orders o ON o.id = l.po_id
       CROSS JOIN LATERAL (
         SELECT min(r.received_date) AS first_received FROM receivings r
         WHERE r.po_line_id = l.id AND r.received_date <= $2::date
       ) fr
       WHERE o.status <> 'cancelled' AND o.date_ordered BETWEEN $2::date - 364 AND $2::date
         AND fr.first_received IS NOT NULL
     ),
     totals AS (
       SELECT count(*) FILTER (WHERE own)::int AS n_own,
         COALESCE(sum(days) FILTER (WHERE own), 0)::float8 AS s_own,
         COALESCE(sum(days * days) FILTER (WHERE own), 0)::float8 AS ss_own,
         count(*) FILTER (WHERE vend)::int AS n_vend,
         COALESCE(sum(days) FILTER (WHERE vend), 0)::float8 AS s_vend,
         COALESCE(sum(days * days) FILTER (WHERE vend), 0)::float8 AS ss_vend
       FROM s
     ),
     groups AS (
       SELECT 'own' AS level, po_id, date_ordered, first_received, days, count(*)::int AS lines
       FROM s WHERE own GROUP BY po_id, date_ordered, first_received, days
       UNION ALL
       SELECT 'vendor', po_id, date_ordered, first_received, days, count(*)::int
       FROM s WHERE vend GROUP BY po_id, date_ordered, first_received, days
     ),
     ranked AS (
       SELECT g.*, row_number() OVER (PARTITION BY level ORDER BY date_ordered, po_id, first_received) AS rn
       FROM groups g
     )
     SELECT t.*, r.level, r.po_id, to_char(r.date_ordered, 'YYYY-MM-DD') AS date_ordered,
       to_char(r.first_received, 'YYYY-MM-DD') AS first_received, r.days, r.lines
     FROM totals t
     LEFT JOIN ranked r ON r.rn <= ${LISTED_SAMPLES}
     ORDER BY r.level, r.rn`,
    [row.pid, row.d0, row.vendor_id],
  );
  const t = rows[0];
  const listed = (level: "own" | "vendor") =>
    rows
      .filter((r) => r.level === level)
      .map((r) => ({
        po_id: r.po_id,
        date_ordered: r.date_ordered,
        first_received: r.first_received,
        days: r.days,
        lines: r.lines,
      }));
  return {
    product: { count: t?.n_own ?? 0, sum: t?.s_own ?? 0, sum_sq: t?.ss_own ?? 0, listed: listed("own") },
    vendor:
      row.vendor_id === null
        ? null
        : { count: t?.n_vend ?? 0, sum: t?.s_vend ?? 0, sum_sq: t?.ss_vend ?? 0, listed: listed("vendor") },
  };
}

/** Units and revenue per window (7, 30, 90, 365 days, lifetime) from the order lines, up to asOf. */
async function loadSalesWindows(db: Database, row: ExplainRow): Promise<SalesWindows> {
  const windows = [6, 29, 89, 364];
  const [w] = await runner(db)<Record<string, number | string | null>>(
    `SELECT ${windows
      .map(
        (back, i) =>
          `GREATEST(COALESCE(sum(quantity) FILTER (WHERE day >= $2::date - ${back}), 0), 0)::float8 AS u${i},
           GREATEST(COALESCE(sum(revenue) FILTER (WHERE day >= $2::date - ${back}), 0), 0)::float8 AS r${i}`,
      )
      .join(", ")},
       GREATEST(COALESCE(sum(quantity), 0), 0)::float8 AS u4, GREATEST(COALESCE(sum(revenue), 0), 0)::float8 AS r4,
       to_char(min(day) FILTER (WHERE quantity > 0), 'YYYY-MM-DD') AS first_sold
     FROM (
       SELECT quantity, quantity * price - discount AS revenue, (order_date AT TIME ZONE 'UTC')::date AS day
       FROM order_lines
       WHERE pid = $1::int AND status = 'completed' AND order_date <= $3::timestamptz
     ) s`,
    [row.pid, row.d0, row.calculated_at],
  );
  const at = (prefix: string) =>
    [0, 1, 2, 3, 4].map((i) => Number(w?.[`${prefix}${i}`] ?? 0)) as SalesWindows["units"];
  return { units: at("u"), revenue: at("r"), first_sold: (w?.first_sold as string | null) ?? null };
}

async function explainLoaded(
  db: Database,
  { row, forecast }: Loaded,
  extras: Extras,
): Promise<MetricsExplanation> {
  const query = runner(db);
  const pid = row.pid;
  const [openLines, pending, params, settings, windows, leadTimeSamples] = await Promise.all([
    // Received = the receipts dated up to D0 (§1: later ones are not received yet). Then the open
    // lines of POs made here, as the calculation and the updates after a PO action count them
    // (open-orders.ts), so the explanation agrees with on order right after such an action.
    query<OpenLine>(
      `SELECT po_id, date_ordered, date_expected, ordered_qty, received_qty FROM (
         SELECT 0 AS src, o.id::text AS po_id, o.date_ordered AS ordered_on, o.id AS k1, l.id AS k2,
           to_char(o.date_ordered, 'YYYY-MM-DD') AS date_ordered,
           to_char(o.date_expected, 'YYYY-MM-DD') AS date_expected, l.ordered_qty,
           COALESCE((SELECT sum(r.qty) FROM receivings r WHERE r.po_line_id = l.id AND r.received_date <= $2::date), 0)::int
             AS received_qty
         FROM po_lines l
         JOIN purchase_orders o ON o.id = l.po_id AND o.status IN ('ordered', 'partial')
         WHERE l.pid = $1::int
         UNION ALL
         SELECT 1, app.number, app.date_ordered, app.po_id, app.id,
           to_char(app.date_ordered, 'YYYY-MM-DD'), to_char(app.date_expected, 'YYYY-MM-DD'),
           app.ordered_qty, app.received_qty
         FROM (${APP_OPEN_LINES_SQL}) app WHERE app.pid = $1::int
       ) u
       ORDER BY ordered_on, src, k1, k2`,
      [pid, row.d0],
    ),
    query<{ qty: number }>(
      `SELECT qty::int AS qty FROM (${APP_PENDING_RECEIPTS_SQL}) pr WHERE pr.pid = $1::int`,
      [pid],
    ),
    resolvePlanningParameters(db, [pid]),
    loadGlobalSettingValues(db),
    loadSalesWindows(db, row),
    loadLeadTimeSamples(db, row),
  ]);
  return buildExplanation({
    row,
    forecast,
    openLines,
    pendingReceipts: pending[0]?.qty ?? 0,
    params: params[0] ?? null,
    settings,
    windows,
    runs: extras.runs,
    leadTimeSamples,
    history: extras.history.map((w) => w.units),
    accuracy: extras.accuracy,
  });
}

/** metrics.explain: every figure of one product with its inputs and the formula filled in. */
export async function explainProductMetrics(db: Database, pid: number): Promise<MetricsExplanation> {
  const loaded = await loadProduct(db, pid);
  return explainLoaded(db, loaded, await loadExtras(db, loaded.row));
}

/** metrics.product: the explanation plus weekly history, forecast, backtest and stock runs. */
export async function productMetricsDetail(db: Database, pid: number): Promise<ProductMetricsDetail> {
  const loaded = await loadProduct(db, pid);
  const { row, forecast } = loaded;
  const extras = await loadExtras(db, row);
  const explanation = await explainLoaded(db, loaded, extras);
  const { history, accuracy, runs } = extras;
  const stock = runs.map((r) => ({ date: r.valid_from, stock: r.stock }));
  const last = runs.at(-1);
  if (last && last.valid_to > last.valid_from) stock.push({ date: last.valid_to, stock: last.stock });
  return {
    explanation,
    history,
    forecast: forecast
      ? forecast.weekly.map((units, h) => ({ week_start: addDays(forecast.week_start, 7 * h), units }))
      : [],
    forecast_method: forecast?.method ?? row.forecast_method ?? null,
    accuracy: accuracy.map(({ method, weeks, wape, mape, bias }) => ({ method, weeks, wape, mape, bias })),
    stock,
  };
}

// ---------------------------------------------------------------------------------------------
// Aggregates

const AGGREGATE_TABLES = {
  brand: { table: "brand_metrics", key: "brand_id", entity: "brands" },
  vendor: { table: "vendor_metrics", key: "vendor_id", entity: "vendors" },
  category: { table: "category_metrics", key: "category_id", entity: "categories" },
} as const;

/**
 * The categories in tree order (depth first, siblings by name, ties by id): each one's path of
 * sibling ranks from its root. Categories whose parent is missing are roots; a cycle is left out
 * (no path, so last). `desc` ranks siblings Z→A, parents still before their children.
 */
const categoryTreeSql = (desc: boolean) => {
  const dir = desc ? "DESC" : "ASC";
  return `WITH RECURSIVE ranked AS (
      SELECT c.id, c.parent_id,
        row_number() OVER (PARTITION BY c.parent_id ORDER BY lower(c.name) ${dir}, c.id ${dir})::int AS r,
        c.parent_id IS NULL OR NOT EXISTS (
          SELECT 1 FROM categories p WHERE p.id = c.parent_id AND ${isProductCategorySql("p")}) AS root
      FROM categories c
      WHERE ${isProductCategorySql("c")}
    ), tree AS (
      SELECT id, ARRAY[r] AS path FROM ranked WHERE root
      UNION ALL
      SELECT k.id, t.path || k.r FROM ranked k JOIN tree t ON k.parent_id = t.id
      WHERE NOT k.root AND cardinality(t.path) < 100
    )`;
};

const AGGREGATE_SORT_SQL: Record<AggregateSort, string> = {
  name: "lower(e.name)",
  product_count: "a.product_count",
  active_product_count: "a.active_product_count",
  stock_units: "a.stock_units",
  stock_value_cost: "a.stock_value_cost",
  stock_value_retail: "a.stock_value_retail",
  units_30d: "a.units_30d",
  revenue_30d: "a.revenue_30d",
  revenue_365d: "a.revenue_365d",
  lifetime_revenue: "a.lifetime_revenue",
  gross_profit_365d: "a.gross_profit_365d",
  margin_365d: "a.margin_365d",
  reorder_value: "a.reorder_value",
  overstock_value: "a.overstock_value",
  // vendor_metrics only (the input refuses them for the other kinds)
  lead_time_mean: "a.lead_time_mean",
  on_time_rate: "a.on_time_rate",
  fill_rate: "a.fill_rate",
  // category_metrics only, with categoryTreeSql
  tree: "tr.path",
};

const AGGREGATE_INTS = [
  "product_count",
  "active_product_count",
  "stock_units",
  "units_7d",
  "units_30d",
  "units_90d",
  "units_365d",
];
const AGGREGATE_FLOATS = [
  "stock_value_cost",
  "stock_value_retail",
  "revenue_7d",
  "revenue_30d",
  "revenue_90d",
  "revenue_365d",
  "lifetime_revenue",
  "gross_profit_365d",
  "margin_365d",
  "reorder_value",
  "overstock_value",
];

/** metrics.aggregates: one page of brand, vendor or category rows (§11). */
export async function listAggregates(db: Database, input: AggregateListInput): Promise<AggregatePage> {
  const q = aggregateListInput.parse(input);
  const t = AGGREGATE_TABLES[q.kind];
  const params: unknown[] = [];
  const param = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const extra =
    q.kind === "category"
      ? ", e.parent_id, e.level, (SELECT pe.name FROM categories pe WHERE pe.id = e.parent_id) AS parent_name"
      : q.kind === "vendor"
        ? `, a.lead_time_samples, a.lead_time_mean::float8 AS lead_time_mean,
           a.lead_time_std::float8 AS lead_time_std, a.on_time_rate::float8 AS on_time_rate,
           a.fill_rate::float8 AS fill_rate`
        : "";
  const search = q.search?.trim();
  const conditions: string[] = [];
  if (search) conditions.push(`e.name ILIKE ${param(`%${likeEscape(search)}%`)}`);
  if (q.kind === "category" && q.level !== undefined) conditions.push(`e.level = ${param(q.level)}::int`);
  // Only product categories (product_category_types), also when the setting changed since the run.
  if (q.kind === "category") conditions.push(isProductCategorySql("e"));
  const where = conditions.length ? `WHERE ${conditions.join(" AND ")}` : "";
  const tree = q.sort === "tree";
  // The tree's order has its direction in the sibling ranks: the paths always ascend.
  const dir = q.dir === "asc" || tree ? "ASC" : "DESC";
  const rows = await runner(db)<AggregateRow & { total: number }>(
    `${tree ? categoryTreeSql(q.dir === "desc") : ""}
     SELECT a.${t.key} AS id, e.name,
       ${AGGREGATE_INTS.map((c) => `a.${c}`).join(", ")},
       ${AGGREGATE_FLOATS.map((c) => `a.${c}::float8 AS ${c}`).join(", ")},
       a.status_counts, a.abc_counts${extra},
       count(*) OVER ()::int AS total
     FROM ${t.table} a JOIN ${t.entity} e ON e.id = a.${t.key}
     ${tree ? "LEFT JOIN tree tr ON tr.id = e.id" : ""}
     ${where}
     ORDER BY ${AGGREGATE_SORT_SQL[q.sort]} ${dir} NULLS LAST, a.${t.key} ASC
     LIMIT ${param(q.pageSize)}::int OFFSET ${param((q.page - 1) * q.pageSize)}::int`,
    params,
  );
  let total = rows[0]?.total ?? 0;
  if (rows.length === 0 && q.page > 1) {
    const [c] = await runner(db)<{ total: number }>(
      `SELECT count(*)::int AS total FROM ${t.table} a JOIN ${t.entity} e ON e.id = a.${t.key} ${where}`,
      params.slice(0, -2),
    );
    total = c?.total ?? 0;
  }
  return {
    rows: rows.map(({ total: _t, ...r }) => ({
      ...r,
      status_counts: counts(PRODUCT_STATUSES, r.status_counts),
      abc_counts: counts(ABC_CLASSES, r.abc_counts) as Record<AbcClass, number>,
    })),
    total,
  };
}
