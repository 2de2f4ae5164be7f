// The Discount Simulator and promotions (docs/metrics.md §15–16, docs/api.md "Discount Simulator").
// A simulation reads the scope's products with their stored forecast and elasticity in one query
// and projects them in memory (simulation.ts); it saves nothing. Promotions are app-owned rows
// (promotions, promotion_products) that no import step writes.
import {
  addDays,
  type ClearanceInput,
  ClearanceInputSchema,
  type ClearanceResult,
  type DiscountScope,
  type FilterScope,
  MAX_SCOPE_PRODUCTS,
  type Promotion,
  type PromotionInput,
  PromotionInputSchema,
  type PromotionProductRow,
  type PromotionStatus,
  type ScopeOptions,
  type SimulationInput,
  SimulationInputSchema,
  type SimulationResult,
} from "../../../shared/discounts.ts";
import { type ProductMetricsListInput, productMetricsListInput } from "../../../shared/metrics.ts";
import { globalSettingDefinition } from "../../../shared/settings.ts";
import type { Database } from "../../db/database.ts";
import { badRequest, conflict, notFound } from "../../errors.ts";
import { forecastCalendar } from "../forecasting/forecasting.service.ts";
import { refreshPlanningRows } from "../forecasting/planning-refresh.ts";
import { productFilterWhere } from "../metrics/metrics.service.ts";
import { loadDipResolver, refreshPromotionDips } from "./promotion-dip.ts";
import { type ScopeProduct, type SimulationSettings, simulate } from "./simulation.ts";

type Q = <T>(sql: string, ...params: unknown[]) => Promise<T[]>;
const q =
  (db: Database): Q =>
  (sql, ...params) =>
    db.prisma.$queryRawUnsafe(sql, ...params);

/** Today's UTC date (promotions may not start before it). */
export function todayUtc(now = new Date()): string {
  return now.toISOString().slice(0, 10);
}

/** The simulator's global settings, as stored or their catalogue defaults. */
export async function loadSimulationSettings(db: Database): Promise<SimulationSettings> {
  const keys = ["default_price_elasticity", "cannibalisation_share", "price_ending"];
  const rows = await q(db)<{ setting_key: string; setting_value: string }>(
    "SELECT setting_key, setting_value FROM settings_global WHERE setting_key = ANY($1::text[])",
    keys,
  );
  const value = (key: string) =>
    rows.find((r) => r.setting_key === key)?.setting_value ?? globalSettingDefinition(key)!.defaultValue;
  return {
    default_price_elasticity: Number(value("default_price_elasticity")),
    cannibalisation_share: Number(value("cannibalisation_share")),
    price_ending: value("price_ending"),
  };
}

/** The first forecast day (the day after the last calculation) and that calculation's day. */
async function forecastStart(db: Database): Promise<{ first: string; asOf: string } | null> {
  // Every row of one calculation has the same week_start (module forecast writes them all at
  // once): one row is enough, where min() read the whole table (≈ 55 MB at 50k products).
  const [row] = await q(db)<{ first: string | null }>(
    "SELECT to_char(week_start, 'YYYY-MM-DD') AS first FROM product_forecasts LIMIT 1",
  );
  if (!row?.first) return null;
  return { first: row.first, asOf: addDays(row.first, -1) };
}

/**
 * The scope's products (every given part must hold: pids, a category with its sub-categories, a
 * brand, a vendor), less the excluded ones, with their figures. Discontinued products stay in: a
 * clearance is often for them.
 */
async function loadScope(
  db: Database,
  scope: DiscountScope,
  exclude: readonly number[] = [],
): Promise<{ products: ScopeProduct[]; skipped: number }> {
  // Two steps: the scope's pids, then their figures by primary key. In one statement the planner,
  // seeing "any scope" conditions, joined every product's figures (50k) before picking the scope's.
  // Only the scope's given parts become conditions, so a category's pids come from its index on
  // product_categories.category_id instead of a scan of every product.
  const params: unknown[] = [];
  const param = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const where: string[] = [];
  if (scope.pids?.length) where.push(`p.pid = ANY(${param(scope.pids)}::int[])`);
  if (scope.category_id != null)
    where.push(`p.pid IN (SELECT pc.pid FROM product_categories pc
      WHERE pc.category_id IN (WITH RECURSIVE cats(id) AS (
        SELECT id FROM categories WHERE id = ${param(scope.category_id)}::int
        UNION
        SELECT c.id FROM categories c JOIN cats ON c.parent_id = cats.id
      ) SELECT id FROM cats))`);
  if (scope.brand_id != null) where.push(`p.brand_id = ${param(scope.brand_id)}::int`);
  if (scope.vendor_id != null) where.push(`p.vendor_id = ${param(scope.vendor_id)}::int`);
  const scoped = await q(db)<{ pid: number }>(
    `SELECT p.pid FROM products p${where.length ? ` WHERE ${where.join(" AND ")}` : ""}`,
    ...params,
  );
  // The deepest linked category's name and the earliest expected date of the open purchase orders
  // are read set-based for the scope (a sub-query per product cost more than the rest of the read).
  const pids = scoped.map((r) => r.pid);
  const [rows, dipOf] = await Promise.all([
    q(db)<
      Omit<ScopeProduct, "weekly" | "dip_share" | "dip_weeks" | "dip_promotions" | "dip_category"> & {
        excluded: boolean;
        // Arrays as text, split here: the driver's array parser cost ≈ 10 % of a 5,000-product read.
        categories: string | null;
        weekly: string | null;
      }
    >(
      `WITH cat AS (
       SELECT pc.pid, (array_agg(c.name ORDER BY c.level DESC, c.id))[1] AS name,
         array_to_string(array_agg(pc.category_id ORDER BY pc.category_id), ',') AS categories
       FROM product_categories pc JOIN categories c ON c.id = pc.category_id
       WHERE pc.pid = ANY($1::int[])
       GROUP BY pc.pid
     ),
     po AS (
       SELECT l.pid, to_char(min(o.date_expected), 'YYYY-MM-DD') AS next_po_date
       FROM purchase_orders o JOIN po_lines l ON l.po_id = o.id
       WHERE o.status IN ('ordered', 'partial') AND o.date_expected IS NOT NULL AND l.pid = ANY($1::int[])
       GROUP BY l.pid
     )
     SELECT p.pid, p.title, p.sku, cat.name AS category, cat.categories,
       p.price::float8 AS price, p.regular_price::float8 AS regular_price, p.cost_price::float8 AS cost,
       COALESCE(m.on_hand, GREATEST(p.stock_quantity, 0))::int AS on_hand, COALESCE(m.on_order, 0)::int AS on_order,
       po.next_po_date,
       to_char(f.week_start, 'YYYY-MM-DD') AS forecast_start, array_to_string(f.weekly, ',') AS weekly,
       e.source AS elasticity_source, e.elasticity, e.ci_low, e.ci_high, e.price_changes,
       ec.name AS elasticity_category,
       p.pid = ANY($2::int[]) AS excluded
     FROM products p
     LEFT JOIN product_metrics m ON m.pid = p.pid
     LEFT JOIN product_forecasts f ON f.pid = p.pid
     LEFT JOIN product_elasticities e ON e.pid = p.pid
     LEFT JOIN categories ec ON ec.id = e.category_id
     LEFT JOIN cat ON cat.pid = p.pid
     LEFT JOIN po ON po.pid = p.pid
     WHERE p.pid = ANY($1::int[])
     ORDER BY p.pid`,
      pids,
      [...exclude],
    ),
    // The dip after a promotion of each product's categories (docs/metrics.md §16.2).
    loadDipResolver(db),
  ]);
  const products: ScopeProduct[] = [];
  for (const { categories, weekly, excluded, ...r } of rows) {
    if (excluded || !(r.price > 0)) continue;
    const d = dipOf(categories ? categories.split(",").map(Number) : []);
    products.push({
      ...r,
      // array_to_string leaves out NULL elements; the forecast's weeks have none.
      weekly: weekly === null ? null : weekly === "" ? [] : weekly.split(",").map(Number),
      dip_share: d?.share ?? 0,
      dip_weeks: d?.weeks ?? 0,
      dip_promotions: d?.promotions ?? 0,
      dip_category: d?.category ?? null,
    });
  }
  const missing = scope.pids?.length ? new Set(scope.pids).size - rows.length : 0;
  return {
    products,
    skipped: rows.length - products.length + Math.max(0, missing),
  };
}

interface Prepared {
  products: ScopeProduct[];
  skipped: number;
  settings: SimulationSettings;
  first: string;
  asOf: string | null;
}

/** Reads what a simulation of this scope needs and checks the dates against the forecast. */
async function prepare(
  db: Database,
  scope: DiscountScope,
  startsOn: string,
  exclude: readonly number[] | undefined,
): Promise<Prepared> {
  // The dips are measured in the background once per calculation (a nudge here, never awaited:
  // a simulation uses the dips stored so far). The first forecast day and the settings are
  // independent reads: in parallel, then the scope.
  void refreshPromotionDips(db);
  const [fc, settings] = await Promise.all([forecastStart(db), loadSimulationSettings(db)]);
  if (fc && startsOn < fc.first)
    throw badRequest(`must not be before ${fc.first}, the first day of the forecast`, "starts_on");
  const { products, skipped } = await loadScope(db, scope, exclude);
  if (products.length === 0) throw badRequest("no product with a price matches it", "scope");
  return { products, skipped, settings, first: fc?.first ?? startsOn, asOf: fc?.asOf ?? null };
}

export async function simulateDiscount(db: Database, input: SimulationInput): Promise<SimulationResult> {
  const s = SimulationInputSchema.parse(input);
  const p = await prepare(db, s.scope, s.starts_on, s.exclude_pids);
  return simulate(p.products, s, p.settings, p.first, p.asOf, p.skipped);
}

/**
 * Clearance: the smallest whole discount % (1 … cap) whose projected stock at ends_on, summed over
 * the scope, is at most target_units. More discount never leaves more stock (the elasticities are
 * not negative; price endings round down), so a binary search over the percentages finds it with
 * about 7 simulations.
 */
export async function searchClearance(db: Database, input: ClearanceInput): Promise<ClearanceResult> {
  const c = ClearanceInputSchema.parse(input);
  const p = await prepare(db, c.scope, c.starts_on, c.exclude_pids);
  const run = (pct: number) =>
    pct === 0
      ? simulate(
          p.products,
          { starts_on: c.starts_on, ends_on: c.ends_on, discount_pct: 1e-9 },
          p.settings,
          p.first,
          p.asOf,
          p.skipped,
        )
      : simulate(
          p.products,
          { starts_on: c.starts_on, ends_on: c.ends_on, discount_pct: pct },
          p.settings,
          p.first,
          p.asOf,
          p.skipped,
        );
  const stockAt = (r: SimulationResult) => r.totals.scenario.stock_end;
  const without = run(0);
  const atCap = run(c.max_discount_pct);
  const stockWithout = stockAt(without);
  if (stockWithout <= c.target_units) {
    return {
      discount_pct: 0,
      target_units: c.target_units,
      max_discount_pct: c.max_discount_pct,
      stock_without: stockWithout,
      stock_at_cap: stockAt(atCap),
      message: `No discount needed: the projected stock on ${c.ends_on} is ${fmt(stockWithout)} units without one.`,
      simulation: without,
    };
  }
  if (stockAt(atCap) > c.target_units) {
    return {
      discount_pct: null,
      target_units: c.target_units,
      max_discount_pct: c.max_discount_pct,
      stock_without: stockWithout,
      stock_at_cap: stockAt(atCap),
      message: `No discount up to ${c.max_discount_pct}% reaches ${fmt(c.target_units)} units by ${c.ends_on}: at ${c.max_discount_pct}% off, ${fmt(stockAt(atCap))} units are left.`,
      simulation: atCap,
    };
  }
  let lo = 0; // does not reach
  let hi = c.max_discount_pct; // reaches
  let best = atCap;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    const r = run(mid);
    if (stockAt(r) <= c.target_units) {
      hi = mid;
      best = r;
    } else lo = mid;
  }
  return {
    discount_pct: hi,
    target_units: c.target_units,
    max_discount_pct: c.max_discount_pct,
    stock_without: stockWithout,
    stock_at_cap: stockAt(atCap),
    message: `${hi}% off from ${c.starts_on} leaves ${fmt(stockAt(best))} units on ${c.ends_on} (target ${fmt(c.target_units)}).`,
    simulation: best,
  };
}

/**
 * A Products-page filter as a scope: the products it matches (the Products list's own conditions,
 * productFilterWhere, and its status filter), lowest ID first, at most MAX_SCOPE_PRODUCTS.
 */
export async function filterScope(db: Database, input: ProductMetricsListInput): Promise<FilterScope> {
  const f = productMetricsListInput.parse(input);
  const params: unknown[] = [];
  const param = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const where = productFilterWhere(f, param);
  if (f.status) where.push(`m.status = ANY(${param(f.status)}::text[])`);
  const rows = await q(db)<{ pid: number; total: number }>(
    `SELECT m.pid, count(*) OVER ()::int AS total
     FROM product_metrics m JOIN products p ON p.pid = m.pid
     ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
     ORDER BY m.pid LIMIT ${MAX_SCOPE_PRODUCTS}`,
    ...params,
  );
  const total = rows[0]?.total ?? 0;
  return { pids: rows.map((r) => r.pid), total, capped: total > rows.length };
}

/** What a scope can name: categories (with their level and parent), brands and vendors, by name. */
export async function listScopeOptions(db: Database): Promise<ScopeOptions> {
  const [categories, brands, vendors] = await Promise.all([
    q(db)<ScopeOptions["categories"][number]>(
      "SELECT id, name, level, parent_id FROM categories ORDER BY level, name, id",
    ),
    q(db)<{ id: number; name: string }>("SELECT id, name FROM brands ORDER BY name, id"),
    q(db)<{ id: number; name: string }>("SELECT id, name FROM vendors ORDER BY name, id"),
  ]);
  return { categories, brands, vendors };
}

const fmt = (n: number) => (Math.round(n * 10) / 10).toLocaleString("en-US");

// ---------------------------------------------------------------------------------------------
// Promotions

interface PromotionRow {
  id: number;
  name: string;
  scope: DiscountScope;
  discount_pct: number | null;
  target_price: number | null;
  starts_on: string;
  ends_on: string;
  excluded_pids: number[];
  stop_reordering: boolean;
  cancelled: boolean;
  totals: Promotion["totals"];
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  product_count: number;
}

const PROMOTION_SELECT = `
  SELECT pr.id, pr.name, pr.scope, pr.discount_pct::float8 AS discount_pct, pr.target_price::float8 AS target_price,
    to_char(pr.starts_on, 'YYYY-MM-DD') AS starts_on, to_char(pr.ends_on, 'YYYY-MM-DD') AS ends_on,
    pr.excluded_pids, pr.stop_reordering, pr.cancelled_at IS NOT NULL AS cancelled, pr.totals,
    u.username AS created_by, pr.created_at, pr.updated_at,
    (SELECT count(*)::int FROM promotion_products pp WHERE pp.promotion_id = pr.id) AS product_count
  FROM promotions pr LEFT JOIN users u ON u.id = pr.created_by`;

function statusOf(
  r: { cancelled: boolean; starts_on: string; ends_on: string },
  today: string,
): PromotionStatus {
  if (r.cancelled) return "cancelled";
  if (today < r.starts_on) return "planned";
  if (today <= r.ends_on) return "active";
  return "finished";
}

function toPromotion(r: PromotionRow, today: string): Promotion {
  const status = statusOf(r, today);
  return {
    id: r.id,
    name: r.name,
    scope: r.scope,
    discount_pct: r.discount_pct,
    target_price: r.target_price,
    starts_on: r.starts_on,
    ends_on: r.ends_on,
    exclude_pids: r.excluded_pids,
    stop_reordering: r.stop_reordering,
    status,
    editable: status === "planned",
    totals: r.totals,
    created_by: r.created_by,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
    product_count: r.product_count,
  };
}

export async function listPromotions(
  db: Database,
  status: PromotionStatus | "all" = "all",
  now = new Date(),
): Promise<Promotion[]> {
  const today = todayUtc(now);
  const rows = await q(db)<PromotionRow>(`${PROMOTION_SELECT} ORDER BY pr.starts_on DESC, pr.id DESC`);
  return rows.map((r) => toPromotion(r, today)).filter((p) => status === "all" || p.status === status);
}

/**
 * One promotion as `discounts.promotion` answers it: with its products, what was predicted in money
 * (every status) and, once started, the actual units and revenue.
 */
export interface PromotionDetail extends Promotion {
  /** Σ price × predicted_units (the promotional price), to the cent; null without product rows */
  predicted_revenue: number | null;
  /** Σ base_price × baseline_units (the price when saved), to the cent; null without product rows */
  baseline_revenue: number | null;
  actual?:
    | (NonNullable<Promotion["actual"]> & {
        /** Σ quantity × price − discount of the completed lines on its days so far, to the cent */
        actual_revenue: number;
      })
    | null;
}

const cents = (x: number) => Math.round(x * 100) / 100;

/**
 * Σ a × b over the rows, to the cent; null when there is no row, or a row lacks a figure (a sum
 * that left one out would read as a smaller prediction).
 */
function sumOfProducts<T>(rows: readonly T[], a: (r: T) => number | null, b: (r: T) => number | null) {
  if (rows.length === 0) return null;
  let total = 0;
  for (const r of rows) {
    const x = a(r);
    const y = b(r);
    if (x == null || y == null || !Number.isFinite(x) || !Number.isFinite(y)) return null;
    total += x * y;
  }
  return cents(total);
}

/** One promotion with its products: predicted (units and revenue), and actual once it has started. */
export async function getPromotion(db: Database, id: number, now = new Date()): Promise<PromotionDetail> {
  const today = todayUtc(now);
  const [row] = await q(db)<PromotionRow>(`${PROMOTION_SELECT} WHERE pr.id = $1`, id);
  if (!row) throw notFound(`Promotion ${id} not found`);
  const promotion = toPromotion(row, today);
  const started = promotion.status === "active" || promotion.status === "finished";
  // The actual units and revenue (docs/metrics.md: quantity × price − discount) of its days, read
  // in one pass over each product's lines, and only once it has started.
  const products = await q(db)<
    Omit<PromotionProductRow, "actual_uplift"> & {
      actual_units: number | null;
      actual_revenue: number | null;
    }
  >(
    `SELECT pp.pid, COALESCE(p.title, '(product ' || pp.pid || ' no longer in the data)') AS title,
       pp.price::float8 AS price, pp.base_price::float8 AS base_price, pp.baseline_units, pp.predicted_units,
       pp.uplift, pp.elasticity, pp.elasticity_source,
       CASE WHEN $2::boolean THEN a.units END AS actual_units,
       CASE WHEN $2::boolean THEN a.revenue END AS actual_revenue
     FROM promotion_products pp LEFT JOIN products p ON p.pid = pp.pid
     LEFT JOIN LATERAL (
       SELECT COALESCE(SUM(l.quantity), 0)::float8 AS units,
         COALESCE(SUM(l.quantity * l.price - l.discount), 0)::float8 AS revenue
       FROM order_lines l
       WHERE $2::boolean AND l.pid = pp.pid AND l.status = 'completed'
         AND l.order_date >= $3::date AND l.order_date < $4::date + 1
     ) a ON true
     WHERE pp.promotion_id = $1 ORDER BY pp.pid`,
    id,
    started,
    promotion.starts_on,
    promotion.ends_on,
  );
  const finished = promotion.status === "finished";
  promotion.products = products.map(({ actual_revenue: _revenue, ...p }) => ({
    ...p,
    actual_uplift:
      finished && p.actual_units !== null && p.baseline_units > 0
        ? Math.round((p.actual_units / p.baseline_units) * 10000) / 10000
        : null,
  }));
  const detail: PromotionDetail = {
    ...promotion,
    predicted_revenue: sumOfProducts(
      products,
      (p) => p.price,
      (p) => p.predicted_units,
    ),
    baseline_revenue: sumOfProducts(
      products,
      (p) => p.base_price,
      (p) => p.baseline_units,
    ),
    actual: null,
  };
  if (started) {
    const sum = (f: (p: (typeof products)[number]) => number) => products.reduce((a, p) => a + f(p), 0);
    const baseline = sum((p) => p.baseline_units);
    const predicted = sum((p) => p.predicted_units);
    const actual = sum((p) => p.actual_units ?? 0);
    detail.actual = {
      baseline_units: Math.round(baseline * 100) / 100,
      predicted_units: Math.round(predicted * 100) / 100,
      actual_units: actual,
      predicted_uplift: baseline > 0 ? Math.round((predicted / baseline) * 10000) / 10000 : null,
      actual_uplift: finished && baseline > 0 ? Math.round((actual / baseline) * 10000) / 10000 : null,
      actual_revenue: cents(sum((p) => p.actual_revenue ?? 0)),
    };
  }
  return detail;
}

/** Simulates the promotion's scenario and writes it with its products, in one transaction. */
async function savePromotion(
  db: Database,
  input: PromotionInput,
  userId: number | null,
  now: Date,
  id?: number,
): Promise<number> {
  const s = PromotionInputSchema.parse(input);
  const today = todayUtc(now);
  if (s.starts_on < today) throw badRequest(`must not be in the past (today is ${today})`, "starts_on");
  const p = await prepare(db, s.scope, s.starts_on, s.exclude_pids);
  const sim = simulate(p.products, s, p.settings, p.first, p.asOf, p.skipped);
  const cal = await forecastCalendar(db);
  return db.prisma.$transaction(async (tx) => {
    let promotionId = id;
    // The products whose planning rows change: the promotion's before an edit, and after it.
    const before =
      id === undefined
        ? []
        : (
            await tx.$queryRawUnsafe<{ pid: number }[]>(
              "SELECT pid FROM promotion_products WHERE promotion_id = $1",
              id,
            )
          ).map((r) => r.pid);
    const fields = [
      s.name,
      JSON.stringify(s.scope),
      s.discount_pct ?? null,
      s.target_price ?? null,
      s.starts_on,
      s.ends_on,
      s.exclude_pids ?? [],
      s.stop_reordering,
      JSON.stringify(sim.totals),
    ];
    if (promotionId === undefined) {
      const [row] = await tx.$queryRawUnsafe<{ id: number }[]>(
        `INSERT INTO promotions (name, scope, discount_pct, target_price, starts_on, ends_on, excluded_pids,
           stop_reordering, totals, created_by)
         VALUES ($1, $2::jsonb, $3, $4, $5::date, $6::date, $7::int[], $8, $9::jsonb, $10) RETURNING id`,
        ...fields,
        userId,
      );
      promotionId = row!.id;
    } else {
      // Only a planned promotion changes (checked again here, under the row's lock).
      const updated = await tx.$executeRawUnsafe(
        `UPDATE promotions SET name = $2, scope = $3::jsonb, discount_pct = $4, target_price = $5,
           starts_on = $6::date, ends_on = $7::date, excluded_pids = $8::int[], stop_reordering = $9,
           totals = $10::jsonb, updated_at = now()
         WHERE id = $1 AND cancelled_at IS NULL AND starts_on > $11::date`,
        promotionId,
        ...fields,
        today,
      );
      if (updated === 0)
        throw conflict(`Promotion ${promotionId} has started or was cancelled: it can no longer be edited`);
      await tx.$executeRawUnsafe("DELETE FROM promotion_products WHERE promotion_id = $1", promotionId);
    }
    const rows = sim.products;
    await tx.$executeRawUnsafe(
      `INSERT INTO promotion_products (promotion_id, pid, price, base_price, baseline_units, predicted_units, uplift,
         elasticity, elasticity_source, dip, dip_weeks)
       SELECT $1, * FROM unnest($2::int[], $3::numeric[], $4::numeric[], $5::float8[], $6::float8[], $7::float8[],
         $8::float8[], $9::text[], $10::float8[], $11::int[])`,
      promotionId,
      rows.map((r) => r.pid),
      rows.map((r) => r.scenario_price),
      rows.map((r) => r.price),
      rows.map((r) => r.baseline.units + r.baseline.lost_units),
      rows.map((r) => r.scenario.units + r.scenario.lost_units),
      rows.map((r) => r.uplift),
      rows.map((r) => r.elasticity),
      rows.map((r) => r.elasticity_source),
      rows.map((r) => r.dip?.share ?? 0),
      rows.map((r) => r.dip?.weeks ?? 0),
    );
    // The forecast layer reaches the reorder figures at once (docs/metrics.md §16).
    if (cal) await refreshPlanningRows(tx, cal, [...before, ...rows.map((r) => r.pid)]);
    return promotionId;
  }, TX_OPTIONS);
}

const TX_OPTIONS = { maxWait: 30_000, timeout: 60_000 };

export async function createPromotion(
  db: Database,
  input: PromotionInput,
  userId: number | null,
  now = new Date(),
): Promise<PromotionDetail> {
  const id = await savePromotion(db, input, userId, now);
  return getPromotion(db, id, now);
}

export async function updatePromotion(
  db: Database,
  id: number,
  input: PromotionInput,
  now = new Date(),
): Promise<PromotionDetail> {
  const current = await getPromotion(db, id, now);
  if (!current.editable)
    throw conflict(`Promotion ${id} is ${current.status}: only a planned promotion can be edited`);
  await savePromotion(db, input, null, now, id);
  return getPromotion(db, id, now);
}

/** Cancels a promotion that has not finished (kept, marked cancelled: its prediction stays readable). */
export async function cancelPromotion(db: Database, id: number, now = new Date()): Promise<PromotionDetail> {
  const current = await getPromotion(db, id, now);
  if (current.status === "cancelled") throw conflict(`Promotion ${id} is already cancelled`);
  if (current.status === "finished") throw conflict(`Promotion ${id} has finished: it cannot be cancelled`);
  const cal = await forecastCalendar(db);
  await db.prisma.$transaction(async (tx) => {
    await tx.$executeRawUnsafe(
      "UPDATE promotions SET cancelled_at = now(), updated_at = now() WHERE id = $1",
      id,
    );
    // Its forecast layer and any stop of reordering end: the products are planned again at once.
    const pids = await tx.$queryRawUnsafe<{ pid: number }[]>(
      "SELECT pid FROM promotion_products WHERE promotion_id = $1",
      id,
    );
    if (cal)
      await refreshPlanningRows(
        tx,
        cal,
        pids.map((r) => r.pid),
      );
  }, TX_OPTIONS);
  return getPromotion(db, id, now);
}
