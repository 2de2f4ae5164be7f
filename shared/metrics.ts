// Planning metrics (docs/metrics.md): the contract between the metrics API
// (server/modules/metrics) and the screens that show it. Numbers are plain JS numbers (the server
// converts Decimals); dates are "YYYY-MM-DD" strings (UTC days).
import { z } from "zod";
import { idSchema } from "./input.ts";

export const PRODUCT_STATUSES = [
  "critical",
  "reorder",
  "healthy",
  "overstocked",
  "new",
  "discontinued",
  "excluded",
] as const;
export type ProductStatus = (typeof PRODUCT_STATUSES)[number];
export const STATUS_LABELS: Record<ProductStatus, string> = {
  critical: "Critical",
  reorder: "Reorder",
  healthy: "Healthy",
  overstocked: "Overstocked",
  new: "New",
  discontinued: "Discontinued",
  excluded: "Excluded",
};

/**
 * What a product is (products.csv `kind`; empty = merchandise). Only merchandise is planned: the
 * other kinds (postage, carriage, bank charges, adjustments, gift vouchers) get the status
 * `excluded`, no ABC class, reorder, forecast or stock value, and are left out of ABC ranking and
 * the brand, vendor and category figures; their sales stay in the order lines (total takings).
 */
export const PRODUCT_KINDS = ["merchandise", "service", "fee", "gift_card"] as const;
export type ProductKind = (typeof PRODUCT_KINDS)[number];
export const PRODUCT_KIND_LABELS: Record<ProductKind, string> = {
  merchandise: "Merchandise",
  service: "Service",
  fee: "Fee",
  gift_card: "Gift card",
};
/** SQL condition: the product row aliased `alias` is merchandise (the planned kind). */
export const isMerchandiseSql = (alias: string) => `${alias}.kind = 'merchandise'`;

export const ABC_CLASSES = ["A", "B", "C"] as const;
export type AbcClass = (typeof ABC_CLASSES)[number];
/** XYZ classes (docs/metrics.md §9): X steady, Y variable, Z erratic weekly demand. */
export const XYZ_CLASSES = ["X", "Y", "Z"] as const;
export type XyzClass = (typeof XYZ_CLASSES)[number];

// ---------------------------------------------------------------------------------------------
// Product metrics list

/** Sortable columns of the product metrics list (ties are always broken by pid). */
export const PRODUCT_METRIC_SORTS = [
  "title",
  "sku",
  "on_hand",
  "on_order",
  "units_30d",
  "revenue_30d",
  "revenue_365d",
  "avg_daily_sales",
  "days_of_cover",
  "reorder_point",
  "reorder_qty",
  "reorder_value",
  "overstock_value",
  "stockout_date",
  "margin_365d",
  "abc_class",
  "status",
] as const;
export type ProductMetricSort = (typeof PRODUCT_METRIC_SORTS)[number];

export const SORT_DIRECTIONS = ["asc", "desc"] as const;
export type SortDirection = (typeof SORT_DIRECTIONS)[number];

export const METRICS_PAGE_SIZE = 50;
export const METRICS_MAX_PAGE_SIZE = 200;

const pageFields = {
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  pageSize: z.coerce.number().int().min(10).max(METRICS_MAX_PAGE_SIZE).default(METRICS_PAGE_SIZE),
  search: z.string().trim().max(200).optional(),
  dir: z.enum(SORT_DIRECTIONS).default("desc"),
};

/** Parses a status filter: one status, a list, or a comma-separated text ("critical,reorder"). */
export function parseStatusList(value: string | readonly string[]): {
  statuses: ProductStatus[];
  bad?: string;
} {
  const list = typeof value === "string" ? value.split(",").map((s) => s.trim()) : [...value];
  const statuses: ProductStatus[] = [];
  for (const s of list.filter(Boolean)) {
    if (!(PRODUCT_STATUSES as readonly string[]).includes(s)) return { statuses, bad: s };
    if (!statuses.includes(s as ProductStatus)) statuses.push(s as ProductStatus);
  }
  return { statuses };
}

/** Several statuses at once: `status=critical,reorder` or ["critical", "reorder"]; empty means every status. */
export const statusFilterSchema = z
  .union([z.array(z.string().max(20)).max(20), z.string().max(200)])
  .transform((value, ctx) => {
    const { statuses, bad } = parseStatusList(value);
    if (bad !== undefined) {
      ctx.addIssue({
        code: "custom",
        message: `unknown status "${bad.slice(0, 20)}" (one of ${PRODUCT_STATUSES.join(", ")})`,
      });
      return z.NEVER;
    }
    return statuses.length ? statuses : undefined;
  });

/** Most days a "no sale in N days" filter looks back. */
export const MAX_NO_SALES_DAYS = 3650;

/**
 * Days-of-cover buckets of the Analytics page (docs/metrics.md §19), the Products page's `cover`
 * filter values: out of stock, stock but no demand, then on hand ÷ demand rate in days.
 */
export const COVER_BUCKETS = [
  { key: "out", label: "Out of stock" },
  { key: "none", label: "No demand" },
  { key: "0_14", label: "Under 15 days" },
  { key: "15_30", label: "15–30 days" },
  { key: "31_60", label: "31–60 days" },
  { key: "61_90", label: "61–90 days" },
  { key: "91_180", label: "91–180 days" },
  { key: "181_365", label: "181–365 days" },
  { key: "over_365", label: "Over 365 days" },
] as const;
export const COVER_BUCKET_KEYS = COVER_BUCKETS.map((b) => b.key) as unknown as readonly [
  (typeof COVER_BUCKETS)[number]["key"],
  ...(typeof COVER_BUCKETS)[number]["key"][],
];

/**
 * Stock age buckets of the aging chart (days since the receipt the units came in with, first in,
 * first out; docs/metrics.md §19), the Products page's `aging` filter values.
 */
export const AGING_BUCKETS = [
  { key: "0_90", label: "0–90 days", lo: 0, hi: 90 },
  { key: "91_180", label: "91–180 days", lo: 91, hi: 180 },
  { key: "181_365", label: "181–365 days", lo: 181, hi: 365 },
  { key: "over_365", label: "Over 365 days", lo: 366, hi: 1_000_000 },
] as const;
export const AGING_BUCKET_KEYS = AGING_BUCKETS.map((b) => b.key) as unknown as readonly [
  (typeof AGING_BUCKETS)[number]["key"],
  ...(typeof AGING_BUCKETS)[number]["key"][],
];
/** A receipt month, "YYYY-MM" (the sell-through chart's `received_month` filter). */
export const RECEIPT_MONTH_RE = /^(?!0000)\d{4}-(0[1-9]|1[0-2])$/;

export const productMetricsListInput = z.object({
  ...pageFields,
  status: statusFilterSchema.optional(),
  abc: z.enum(ABC_CLASSES).optional(),
  /** XYZ class (stored by the calculation, docs/metrics.md §9) */
  xyz: z.enum(XYZ_CLASSES).optional(),
  vendorId: idSchema.optional(),
  brandId: idSchema.optional(),
  /** A product category and its whole subtree */
  category: idSchema.optional(),
  /** Expected to run out before an order placed today would arrive (stock-out date < D0 + lead time) */
  stockoutBeforeArrival: z.boolean().optional(),
  /** Nothing on hand */
  outOfStock: z.boolean().optional(),
  /** No completed sale in the last N days (D0 included), or never */
  noSalesDays: z.coerce.number().int().min(1).max(MAX_NO_SALES_DAYS).optional(),
  /** A days-of-cover bucket of the Analytics page (merchandise, not discontinued) */
  cover: z.enum(COVER_BUCKET_KEYS).optional(),
  /** Holding stock of an age bucket since its receipt (first in, first out; the aging chart) */
  aging: z.enum(AGING_BUCKET_KEYS).optional(),
  /** Received in this month, "YYYY-MM", up to D0 (the sell-through chart) */
  receivedMonth: z.string().regex(RECEIPT_MONTH_RE, "receivedMonth must be a month, YYYY-MM").optional(),
  /** Also list non-merchandise products (postage, fees, gift cards); hidden by default. */
  nonMerchandise: z.boolean().default(false),
  sort: z.enum(PRODUCT_METRIC_SORTS).default("reorder_value"),
});
export type ProductMetricsListInput = z.input<typeof productMetricsListInput>;
export type ProductMetricsListQuery = z.output<typeof productMetricsListInput>;

export interface ProductMetricsRow {
  pid: number;
  title: string;
  sku: string | null;
  vendor: string | null;
  brand: string | null;
  on_hand: number;
  on_order: number;
  units_30d: number;
  revenue_30d: number;
  revenue_365d: number;
  avg_daily_sales: number;
  demand_rate: number | null;
  days_of_cover: number | null;
  safety_stock: number | null;
  reorder_point: number | null;
  reorder_qty: number;
  reorder_value: number;
  overstock_qty: number;
  overstock_value: number;
  /** "YYYY-MM-DD" */
  stockout_date: string | null;
  margin_365d: number | null;
  abc_class: AbcClass | null;
  xyz_class: XyzClass | null;
  status: ProductStatus | null;
  forecast_method: string | null;
  kind: ProductKind;
}

export interface ProductMetricsPage {
  rows: ProductMetricsRow[];
  total: number;
  page: number;
  pageSize: number;
  /** Over the current filters except status (for the filter chips); every status, 0 included. */
  status_counts: Record<ProductStatus, number>;
  /** With the vendorId filter: that vendor's name (null when there is no such vendor). */
  vendor_name?: string | null;
  /** With the brandId filter: that brand's name (null when there is no such brand). */
  brand_name?: string | null;
  /** With the category filter: that category's name (null when there is no such category). */
  category_name?: string | null;
}

// ---------------------------------------------------------------------------------------------
// Explanation of one product's figures

export const metricsPidInput = z.object({ pid: idSchema });
export type MetricsPidInput = z.input<typeof metricsPidInput>;

/** The keys of MetricsExplanation.figures, in their order. */
export const EXPLAINED_FIGURE_KEYS = [
  // Stock, sales and demand (§1–§3)
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
  // Lead time (§4)
  "lead_time_measured",
  "lead_time",
  "lead_time_std",
  // Safety stock, reorder, overstock, cover (§5, §6)
  "safety_stock",
  "lead_time_demand",
  "reorder_point",
  "forecast_horizon_units",
  "reorder_qty",
  "reorder_value",
  "overstock_qty",
  "overstock_value",
  "days_of_cover",
  "stockout_date",
  // Status and class (§7, §9)
  "status",
  "abc_class",
  // Profitability (§2, §10)
  "margin_365d",
  "sell_through_30d",
  "avg_stock_units_365",
  "turnover_365d",
  "gmroi_365d",
  // Forecast (§8)
  "forecast_week_1",
  "forecast",
  "backtest",
] as const;
export type ExplainedFigureKey = (typeof EXPLAINED_FIGURE_KEYS)[number];

export interface ExplainedFigure {
  key: ExplainedFigureKey | (string & {});
  label: string;
  value: number | string | null;
  /** e.g. "units", "units/day", "days" */
  unit?: string;
  /** Symbolic, e.g. "⌈d × L + SS⌉" */
  formula: string;
  /** Filled in with the stored inputs, e.g. "⌈1.2/day × 14 days + 8⌉ = 25" */
  substituted: string;
  inputs: Record<string, number | string | null>;
  /** e.g. why a fallback applied */
  note?: string;
  /** The docs/metrics.md section, e.g. "§6" */
  section: string;
}

export interface MetricsExplanation {
  pid: number;
  title: string;
  sku: string | null;
  /** ISO timestamp: when the figures were calculated */
  as_of: string;
  /** "YYYY-MM-DD": D0, the UTC day the figures are for (windows and weeks end on it) */
  d0: string;
  status: ProductStatus | null;
  figures: ExplainedFigure[];
}

export interface WeekUnits {
  /** "YYYY-MM-DD", the first day of the week */
  week_start: string;
  units: number;
}

export interface ForecastAccuracyRow {
  method: string;
  weeks: number;
  wape: number | null;
  mape: number | null;
  bias: number | null;
}

export interface ProductMetricsDetail {
  explanation: MetricsExplanation;
  /** The last 104 weeks, oldest first (weeks as in docs/metrics.md §8: the last one ends on D0) */
  history: WeekUnits[];
  /** 13 weeks after D0; [] when the product has no forecast (excluded) */
  forecast: WeekUnits[];
  forecast_method: string | null;
  accuracy: ForecastAccuracyRow[];
  /**
   * Reconstructed closing stock of the last 365 days as step points: from `date` on, `stock`. One
   * point per run of equal stock, plus a closing point on the last run's final day (D0).
   */
  stock: { date: string; stock: number }[];
}

// ---------------------------------------------------------------------------------------------
// Aggregates (brand, vendor, category; docs/metrics.md §11)

export const AGGREGATE_KINDS = ["brand", "vendor", "category"] as const;
export type AggregateKind = (typeof AGGREGATE_KINDS)[number];

export const AGGREGATE_SORTS = [
  "name",
  "product_count",
  "active_product_count",
  "stock_units",
  "stock_value_cost",
  "stock_value_retail",
  "units_30d",
  "revenue_30d",
  "revenue_365d",
  "lifetime_revenue",
  "gross_profit_365d",
  "margin_365d",
  "reorder_value",
  "overstock_value",
  // Vendors only: their delivery performance.
  "lead_time_mean",
  "on_time_rate",
  "fill_rate",
  // Categories only: the tree, depth first, each parent before its children and siblings by name
  // (dir "desc": siblings Z→A, parents still first).
  "tree",
] as const;
export type AggregateSort = (typeof AGGREGATE_SORTS)[number];
/** The sorts only one kind has (the others refuse them). */
export const KIND_ONLY_SORTS: Partial<Record<AggregateSort, AggregateKind>> = {
  lead_time_mean: "vendor",
  on_time_rate: "vendor",
  fill_rate: "vendor",
  tree: "category",
};
/** Whether the rows of `kind` can be sorted by `sort`. */
export const aggregateSortFits = (kind: AggregateKind, sort: AggregateSort) =>
  (KIND_ONLY_SORTS[sort] ?? kind) === kind;

export const aggregateListInput = z
  .object({
    kind: z.enum(AGGREGATE_KINDS),
    ...pageFields,
    sort: z.enum(AGGREGATE_SORTS).default("revenue_30d"),
    /** Categories only: just the categories of this level (1 = top). */
    level: z.coerce.number().int().min(1).max(100).optional(),
  })
  .refine((q) => aggregateSortFits(q.kind, q.sort), {
    message: "This sort is for another kind of rows",
    path: ["sort"],
  })
  .refine((q) => q.kind === "category" || q.level === undefined, {
    message: "The level filter is for categories only",
    path: ["level"],
  });
export type AggregateListInput = z.input<typeof aggregateListInput>;
export type AggregateListQuery = z.output<typeof aggregateListInput>;

export interface AggregateRow {
  id: number;
  name: string;
  product_count: number;
  active_product_count: number;
  stock_units: number;
  stock_value_cost: number;
  stock_value_retail: number;
  units_7d: number;
  units_30d: number;
  units_90d: number;
  units_365d: number;
  revenue_7d: number;
  revenue_30d: number;
  revenue_90d: number;
  revenue_365d: number;
  lifetime_revenue: number;
  gross_profit_365d: number;
  margin_365d: number | null;
  reorder_value: number;
  overstock_value: number;
  status_counts: Record<ProductStatus, number>;
  abc_counts: Record<AbcClass, number>;
  /** Category rows only */
  parent_id?: number | null;
  parent_name?: string | null;
  level?: number;
  /** Vendor rows only */
  lead_time_samples?: number;
  lead_time_mean?: number | null;
  lead_time_std?: number | null;
  on_time_rate?: number | null;
  fill_rate?: number | null;
}

export interface AggregatePage {
  rows: AggregateRow[];
  total: number;
}
