// The Forecasting page's contract (server/modules/forecasting ↔ client/features/forecasting):
// calendar weeks (Monday to Sunday, keyed by their Monday `week_start`), the grid, a product's
// detail, overrides and measured accuracy. docs/metrics.md "Forecasting page" explains the figures.
import { z } from "zod";
import { idSchema, int, text } from "./input.ts";
import { ABC_CLASSES, PRODUCT_STATUSES, SORT_DIRECTIONS } from "./metrics.ts";

/** Calendar weeks forecast ahead: the 13 weeks after the as-of day's week. */
export const FORECAST_WEEKS = 13;
/** Complete weeks of actual sales the grid shows before the as-of week. */
export const GRID_HISTORY_WEEKS = 12;
/** Weeks of history the detail chart shows. */
export const DETAIL_HISTORY_WEEKS = 104;
/**
 * Weeks of sales a product's detail reads: its history and, for last year's overlay, the 52 weeks
 * before them (module sales_series stores them per product: product_sales_weekly).
 */
export const DETAIL_SERIES_WEEKS = DETAIL_HISTORY_WEEKS + 52;

const DAY_MS = 86_400_000;

/** "YYYY-MM-DD" of a UTC day plus n days. */
export function addDaysIso(day: string, n: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
}

/** The Monday (UTC) of the week holding the day "YYYY-MM-DD". */
export function mondayOf(day: string): string {
  const dow = new Date(`${day}T00:00:00Z`).getUTCDay(); // 0 = Sunday
  return addDaysIso(day, -((dow + 6) % 7));
}

/** The Monday of the first week of a product's detail series, for the Monday of the as-of day's week. */
export function detailSeriesStart(asOfWeek: string): string {
  return addDaysIso(asOfWeek, -7 * DETAIL_SERIES_WEEKS);
}

export const FORECAST_LEVELS = ["product", "category", "brand", "vendor"] as const;
export type ForecastLevel = (typeof FORECAST_LEVELS)[number];

export const FORECAST_SORTS = [
  "forecast_value",
  "forecast_units",
  "error",
  "bias",
  "change",
  "title",
] as const;
export type ForecastSort = (typeof FORECAST_SORTS)[number];

export const FORECAST_METHODS = ["standard", "seasonal"] as const;

/** XYZ classes (demand variability), stored by the dashboards' calculation. */
export const XYZ_CLASSES = ["X", "Y", "Z"] as const;

const bool = z.preprocess(
  (v) => (v === "true" || v === "1" ? true : v === "false" || v === "0" ? false : v),
  z.boolean(),
);

export const forecastListInput = z.object({
  level: z.enum(FORECAST_LEVELS).default("product"),
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  pageSize: z.coerce.number().int().min(10).max(200).default(50),
  search: z.string().trim().max(200).optional(),
  sort: z.enum(FORECAST_SORTS).default("forecast_value"),
  dir: z.enum(SORT_DIRECTIONS).default("desc"),
  vendorId: idSchema.optional(),
  brandId: idSchema.optional(),
  categoryId: idSchema.optional(),
  abc: z.enum(ABC_CLASSES).optional(),
  xyz: z.enum(XYZ_CLASSES).optional(),
  status: z.enum(PRODUCT_STATUSES).optional(),
  method: z.enum(FORECAST_METHODS).optional(),
  hasOverride: bool.optional(),
  /** Backtest WAPE above 50 % */
  bigError: bool.optional(),
});
export type ForecastListInput = z.input<typeof forecastListInput>;
export type ForecastListQuery = z.output<typeof forecastListInput>;

/** Backtest WAPE above which a row counts as a "big error". */
export const BIG_ERROR_WAPE = 0.5;

export interface ForecastWeeks {
  /** The as-of day of the calculation the figures come from */
  as_of: string;
  /** Mondays of the complete weeks of history shown, oldest first */
  history: string[];
  /** Mondays of the 13 forecast weeks */
  forecast: string[];
}

export interface ForecastGridRow {
  level: ForecastLevel;
  /** pid, category id, brand id or vendor id */
  id: number;
  title: string;
  sku: string | null;
  vendor: string | null;
  brand: string | null;
  /** The method that ran (products only) and whether the backtest chose it */
  method: string | null;
  method_label: string | null;
  abc_class: string | null;
  status: string | null;
  /** Products in a category / brand / vendor row (1 for a product) */
  products: number;
  /** Units sold per history week */
  history: number[];
  /** Per forecast week: the system forecast, the override (null where none) and the final figure */
  system: number[];
  override: (number | null)[];
  /** The promotion layer's change per week, in units (null where no saved promotion runs) */
  promotion: (number | null)[];
  /** The override's figure (or the system's) plus the promotion layer */
  final: number[];
  /** Σ final × cost price */
  forecast_value: number;
  forecast_units: number;
  /** Backtest WAPE and bias of the method that ran (products only; null without a backtest) */
  wape: number | null;
  bias: number | null;
  /** The backtest's MASE (its error ÷ the naive forecast's over the same weeks); above 1 = worse than naive */
  mase: number | null;
  /** Final 13-week units against last week's snapshot (ratio − 1); null without one */
  change: number | null;
  /** The product's suggested reorder quantity (products only) */
  reorder_qty: number | null;
  /**
   * Weeks of the backtest of the method that ran (products only; null without a backtest): 8 for
   * standard; for seasonal the weeks where it ran, 0 when it ran at none (WAPE blank for that reason)
   */
  backtest_weeks: number | null;
}

/** The grid's filter choices. */
export interface ForecastOptions {
  vendors: { id: number; name: string }[];
  brands: { id: number; name: string }[];
  categories: { id: number; name: string; level: number; parent_id: number | null }[];
}

export interface ForecastGridPage {
  items: ForecastGridRow[];
  total: number;
  weeks: ForecastWeeks;
}

// ---------------------------------------------------------------------------------------------
// Overrides

const isoDay = z
  .string({ error: "must be a date (YYYY-MM-DD)" })
  .regex(/^\d{4}-\d{2}-\d{2}$/, { error: "must be a date (YYYY-MM-DD)" })
  .refine(
    (s) =>
      !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s),
    {
      error: "must be a real date (YYYY-MM-DD)",
    },
  );

const unitsSchema = z
  .number({ error: "must be a number of units, 0 or more" })
  .min(0, { error: "must be 0 or more" })
  .max(100_000_000, { error: "must be at most 100000000" });
const pctSchema = z
  .number({ error: "must be a percentage" })
  .min(-100, { error: "must be at least -100 (units cannot go below 0)" })
  .max(1000, { error: "must be at most 1000" });

/** The override that holds each product at its last 4 complete weeks' average. */
export const HOLD_LAST_4_WEEKS = "last_4_weeks" as const;
/** Products one bulk override may name. */
export const MAX_BULK_PRODUCTS = 5000;

export const overrideWeekSchema = z.union(
  [
    z.object({ week_start: isoDay, units: unitsSchema }).strict(),
    z.object({ week_start: isoDay, pct: pctSchema }).strict(),
    // Each product held at its own average of the last 4 complete weeks' sales (stored as units).
    z.object({ week_start: isoDay, hold: z.literal(HOLD_LAST_4_WEEKS) }).strict(),
  ],
  { error: `each week needs week_start and one of units, pct or hold ("${HOLD_LAST_4_WEEKS}")` },
);
export type OverrideWeek = z.infer<typeof overrideWeekSchema>;

export const overrideScopeSchema = z.union(
  [
    z.object({ pid: idSchema }).strict(),
    z.object({ category_id: idSchema }).strict(),
    z.object({ brand_id: idSchema }).strict(),
    z.object({ vendor_id: idSchema }).strict(),
    // Bulk: many rows at once (units apply to each product as they are, not spread).
    z
      .object({
        pids: z
          .array(idSchema, { error: "must be a list of product ids" })
          .min(1, { error: "at least one product is required" })
          .max(MAX_BULK_PRODUCTS, { error: `at most ${MAX_BULK_PRODUCTS} products` }),
      })
      .strict(),
  ],
  { error: "must be one of { pid }, { pids }, { category_id }, { brand_id }, { vendor_id }" },
);
export type OverrideScope = z.infer<typeof overrideScopeSchema>;

export const overrideInput = z.object({
  scope: overrideScopeSchema,
  weeks: z
    .array(overrideWeekSchema, { error: "must be a list of weeks" })
    .min(1, { error: "at least one week is required" })
    .max(FORECAST_WEEKS, { error: `at most ${FORECAST_WEEKS} weeks` }),
  reason: text({ max: 500, required: "a reason is required" }),
  expires_on: isoDay.nullish(),
});
export type OverrideInput = z.infer<typeof overrideInput>;

export interface OverrideWeekResult {
  week_start: string;
  /** The system forecast of the week when the override was made */
  system: number;
  /** Units set for this product (units overrides, spread by share on a group) */
  units: number | null;
  pct: number | null;
  /** The week's final figure with this override */
  final: number;
}

export interface OverrideProductResult {
  pid: number;
  title: string;
  /** The product's share of the scope's forecast over the weeks overridden (1 for a product) */
  share: number;
  weeks: OverrideWeekResult[];
}

export interface OverrideResult {
  /** The override group (null for a preview) */
  id: number | null;
  products: OverrideProductResult[];
}

export interface OverrideGroupRow {
  id: number;
  scope_kind: "product" | "products" | "category" | "brand" | "vendor";
  scope_id: number;
  scope_name: string;
  weeks: OverrideWeek[];
  reason: string;
  expires_on: string | null;
  created_by: string;
  created_at: string;
  products: number;
}

export const overrideListInput = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  pageSize: z.coerce.number().int().min(10).max(200).default(50),
  pid: idSchema.optional(),
});
export type OverrideListInput = z.input<typeof overrideListInput>;

export const overrideIdInput = z.object({ id: int({ min: 1 }) });
export const forecastPidInput = z.object({ pid: idSchema });

// ---------------------------------------------------------------------------------------------
// A product's detail

export interface ForecastProductDetail {
  pid: number;
  title: string;
  sku: string | null;
  weeks: ForecastWeeks;
  /** 104 complete weeks of actual sales, oldest first: { week_start, units, last_year } */
  history: { week_start: string; units: number; last_year: number | null }[];
  forecast: {
    week_start: string;
    system: number;
    override: number | null;
    /** The promotion layer's change in units (null when no saved promotion runs that week) */
    promotion: number | null;
    final: number;
    /** Last year's same week */
    last_year: number | null;
    /** 80 % prediction band from the backtest's errors */
    low: number;
    high: number;
  }[];
  method: string | null;
  method_label: string | null;
  requested_method: string | null;
  backtest: {
    method: string;
    weeks: number;
    wape: number | null;
    mape: number | null;
    bias: number | null;
    /** Σ|A − F| ÷ Σ|A − naive| over the same weeks */
    mase: number | null;
    /** The baselines over the same weeks */
    naive_wape: number | null;
    seasonal_naive_wape: number | null;
    seasonal_naive_mase: number | null;
  }[];
  overrides: OverrideGroupRow[];
  /** The saved promotions in the forecast weeks (the promotion layer), oldest start first */
  promotions: ForecastPromotion[];
}

/** A saved promotion as a layer of a product's forecast. */
export interface ForecastPromotion {
  id: number;
  name: string;
  starts_on: string;
  ends_on: string;
  discount_pct: number | null;
  target_price: number | null;
  /** The product's predicted uplift (× its system forecast on the promotion's days) */
  uplift: number;
  stop_reordering: boolean;
  /** The dip after it (docs/metrics.md §16.2): × (1 − dip) for dip_weeks weeks after its end; 0 = none */
  dip: number;
  dip_weeks: number;
}

// ---------------------------------------------------------------------------------------------
// Measured accuracy

export const ACCURACY_GROUPS = ["product", "category", "abc", "method"] as const;
export type AccuracyGroup = (typeof ACCURACY_GROUPS)[number];

export const accuracyInput = z.object({
  group: z.enum(ACCURACY_GROUPS).default("product"),
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  pageSize: z.coerce.number().int().min(10).max(200).default(50),
});
export type AccuracyInput = z.input<typeof accuracyInput>;

export interface AccuracyRow {
  key: string;
  label: string;
  weeks: number;
  actual: number;
  /** Σ|A − F| ÷ ΣA of the system forecast; null when ΣA = 0 */
  wape: number | null;
  /** Σ(F − A) ÷ ΣA */
  bias: number | null;
  /** Σ|A − F| ÷ Σ|A − naive|; above 1 = worse than naive */
  mase: number | null;
  /** The same for the final figure (overrides applied) */
  final_wape: number | null;
  /** Forecast value added: system WAPE − final WAPE (positive = overrides helped); overridden weeks only */
  fva: number | null;
  overridden_weeks: number;
}

export interface AccuracyPage {
  group: AccuracyGroup;
  items: AccuracyRow[];
  total: number;
  /** All measured weeks together, and per completed week (the trend) */
  overall: AccuracyRow | null;
  trend: { week_start: string; wape: number | null; bias: number | null; final_wape: number | null }[];
}

// ---------------------------------------------------------------------------------------------
// Exceptions: the products whose forecast most needs a look (docs/metrics.md §17 "Exceptions")

export const EXCEPTION_KINDS = ["error_value", "bias", "stockouts", "new_profile", "sudden_change"] as const;
export type ExceptionKind = (typeof EXCEPTION_KINDS)[number];

export const EXCEPTION_LABELS: Record<ExceptionKind, string> = {
  error_value: "Largest error × value",
  bias: "Bias beyond ±20 %",
  stockouts: "Demand hidden by stock-outs",
  new_profile: "New, on a category profile",
  sudden_change: "Sudden change vs last week",
};

/** |backtest bias| above which a product is listed. */
export const EXCEPTION_BIAS = 0.2;
/** Out-of-stock days in the last 90 from which sales (and so the forecast) understate demand. */
export const EXCEPTION_STOCKOUT_DAYS = 14;
/** |change| of the 13-week forecast against last week's snapshot from which it is "sudden". */
export const EXCEPTION_CHANGE = 0.5;

export const exceptionsInput = z.object({
  kind: z.enum(EXCEPTION_KINDS).default("error_value"),
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  pageSize: z.coerce.number().int().min(10).max(200).default(50),
});
export type ExceptionsInput = z.input<typeof exceptionsInput>;

export interface ExceptionRow {
  pid: number;
  title: string;
  sku: string | null;
  vendor: string | null;
  method_label: string | null;
  forecast_units: number;
  forecast_value: number;
  wape: number | null;
  bias: number | null;
  mase: number | null;
  change: number | null;
  out_of_stock_days_90: number | null;
  /** WAPE × forecast value: the forecast value at risk (error_value) */
  error_value: number | null;
  /** Why it is listed, in words */
  reason: string;
}

export interface ExceptionsPage {
  kind: ExceptionKind;
  items: ExceptionRow[];
  total: number;
  /** Products listed under each kind */
  counts: Record<ExceptionKind, number>;
}
