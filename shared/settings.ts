// Forecasting parameters (spec sections 2, 3, 5 and 9 "Settings"): the global settings catalogue
// with its seeded defaults, and the schemas both the screens and the server validate with.
import { z } from "zod";
import { idSchema } from "./input.ts";

/** Spec section 9: page size 50, vendor search debounced by 300 ms. */
export const SETTINGS_PAGE_SIZE = 50;
export const SETTINGS_SEARCH_DEBOUNCE_MS = 300;

export const FORECAST_METHODS = ["standard", "seasonal"] as const;
export type ForecastMethod = (typeof FORECAST_METHODS)[number];
export const FORECAST_METHOD_LABELS: Record<ForecastMethod, string> = {
  standard: "Standard",
  seasonal: "Seasonal",
};

// ---------------------------------------------------------------------------------------------
// Global settings

export interface GlobalSettingChoice {
  value: string;
  label: string;
}

/**
 * How a global setting is entered and checked:
 * - `choice`: one of `options`;
 * - `share`: a number from 0 to 1, step 0.01 (only keys containing "threshold" are shares);
 * - `probability`: a number above 0 and below 1 (entered like any other number, minimum 0);
 * - `days`: a whole number of days, 0–3650 unless the setting narrows its range;
 * - `int_list`: whole numbers separated by commas (stored sorted, without repeats, e.g. "10,11,12,13");
 * - `number`: a decimal number within the setting's own range (on the screen, step 0.01 when the
 *   range ends at 1 or below, else 0.1).
 * Numeric kinds have a range (globalSettingRange); other kinds are checked by their own rule.
 */
export type GlobalSettingKind = "choice" | "share" | "probability" | "days" | "int_list" | "number";

/** The range of a numeric setting; `exclusive` ends are not allowed themselves. */
export interface GlobalSettingRange {
  min: number;
  max: number;
  exclusive?: boolean;
  /** Whole numbers only. */
  integer?: boolean;
}

/** Each numeric kind's range, unless a setting gives its own (`range`). */
const KIND_RANGES: Partial<Record<GlobalSettingKind, GlobalSettingRange>> = {
  share: { min: 0, max: 1 },
  probability: { min: 0, max: 1, exclusive: true },
  days: { min: 0, max: 3650, integer: true },
};

export interface GlobalSettingDefinition {
  key: string;
  label: string;
  description: string;
  kind: GlobalSettingKind;
  /** Seeded at start when the key is missing; never overwrites a value staff changed. */
  defaultValue: string;
  options?: readonly GlobalSettingChoice[];
  /** Narrows the kind's range (e.g. a lead time of at least 1 day). */
  range?: GlobalSettingRange;
  /** The card it appears in: keys starting with abc_ under ABC Classification, the rest under Default. */
  card: "abc" | "default";
}

function define(key: string, def: Omit<GlobalSettingDefinition, "key" | "card">): GlobalSettingDefinition {
  return { key, ...def, card: key.startsWith("abc_") ? "abc" : "default" };
}

export const GLOBAL_SETTINGS: readonly GlobalSettingDefinition[] = [
  define("abc_calculation_basis", {
    label: "ABC Calculation Basis",
    description: "The figure products are ranked by when they are classified into A, B and C",
    kind: "choice",
    defaultValue: "revenue_30d",
    options: [
      { value: "revenue_30d", label: "Revenue (30 days)" },
      { value: "sales_30d", label: "Sales Quantity (30 days)" },
      { value: "lifetime_revenue", label: "Lifetime Revenue" },
    ],
  }),
  define("abc_a_threshold", {
    label: "A Threshold",
    description:
      "Cumulative share of the basis (0–1) covered by class A products, e.g. 0.8 = the top products making up 80%",
    kind: "share",
    defaultValue: "0.8",
  }),
  define("abc_b_threshold", {
    label: "B Threshold",
    description:
      "Cumulative share of the basis (0–1) covered by classes A and B together; the remaining products are class C",
    kind: "share",
    defaultValue: "0.95",
  }),
  define("xyz_x_threshold", {
    label: "XYZ: X Threshold",
    description:
      "Products whose weekly demand varies less than this (coefficient of variation: standard deviation ÷ mean of weekly units over in-stock weeks) are class X, steady sellers",
    kind: "number",
    defaultValue: "0.5",
    range: { min: 0, max: 10 },
  }),
  define("xyz_y_threshold", {
    label: "XYZ: Y Threshold",
    description:
      "Products whose coefficient of variation is at least the X threshold and below this are class Y; at or above it, class Z (erratic)",
    kind: "number",
    defaultValue: "1.0",
    range: { min: 0, max: 10 },
  }),
  define("default_forecast_method", {
    label: "Default Forecast Method",
    description: "Forecast method for products that do not set their own",
    kind: "choice",
    defaultValue: "standard",
    options: FORECAST_METHODS.map((value) => ({ value, label: FORECAST_METHOD_LABELS[value] })),
  }),
  define("auto_forecast_method", {
    label: "Choose Forecast Method by Backtest",
    description:
      "True: products that do not set their own method use whichever of standard and seasonal had the lower backtest error (WAPE over the last 8 weeks); ties and products without a backtest keep the default method",
    kind: "choice",
    defaultValue: "true",
    options: [
      { value: "true", label: "True" },
      { value: "false", label: "False" },
    ],
  }),
  define("default_lead_time_days", {
    label: "Default Lead Time (days)",
    description:
      "Days from ordering to receiving, for products whose product and vendor settings give none and whose vendor quotes none",
    kind: "days",
    defaultValue: "14",
    range: { min: 1, max: 3650, integer: true },
  }),
  define("default_days_of_stock", {
    label: "Default Days of Stock",
    description: "Days of demand an order should cover, unless a product or vendor sets its own",
    kind: "days",
    defaultValue: "30",
    range: { min: 1, max: 3650, integer: true },
  }),
  define("default_safety_stock_days", {
    label: "Default Safety Stock (days)",
    description: "Safety stock in days of average demand, for products without a fixed safety stock",
    kind: "days",
    defaultValue: "7",
  }),
  define("default_service_level", {
    label: "Default Service Level",
    description:
      "Target probability (between 0 and 1, e.g. 0.95) of not running out during the lead time; sizes the computed safety stock",
    kind: "probability",
    defaultValue: "0.95",
  }),
  define("lead_time_source", {
    label: "Lead Time Source",
    description:
      "Configured: use the lead times set here and on vendors and products. Measured: use the lead times measured from received purchase orders where there are enough",
    kind: "choice",
    defaultValue: "configured",
    options: [
      { value: "configured", label: "Configured" },
      { value: "measured", label: "Measured" },
    ],
  }),
  define("low_stock_days", {
    label: "Low Stock (days)",
    description: "Products with fewer days of stock left than this count as low stock",
    kind: "days",
    defaultValue: "14",
  }),
  define("overstock_days", {
    label: "Overstock (days)",
    description: "Products with more days of stock than this count as overstocked",
    kind: "days",
    defaultValue: "180",
  }),
  define("calculation_as_of", {
    label: "Calculate as of",
    description:
      "Today: figures are as of the day a run starts. Latest data: as of the day of the newest sale in the data (for a historical export or a source that stopped updating)",
    kind: "choice",
    defaultValue: "today",
    options: [
      { value: "today", label: "Today" },
      { value: "latest_data", label: "Latest data" },
    ],
  }),
  define("stale_data_days", {
    label: "Stale Data Warning (days)",
    description: "Pages warn when the newest sale in the data is more than this many days before today",
    kind: "days",
    defaultValue: "3",
  }),
  define("product_category_types", {
    label: "Product Category Types",
    description:
      "Category types that are product categories (comma-separated, e.g. 10,11,12,13): only these are rolled up into category figures, category pages and templates; other types (warehouse zones, internal groups) are left out",
    kind: "int_list",
    defaultValue: "10,11,12,13",
  }),
  define("default_price_elasticity", {
    label: "Default Price Elasticity",
    description:
      "How strongly sales respond to price, as a magnitude (1.5 = a 1% lower price sells about 1.5% more), for products whose own sales history and category give too little evidence",
    kind: "number",
    defaultValue: "1.5",
    range: { min: 0, max: 10 },
  }),
  define("cannibalisation_share", {
    label: "Cannibalisation Share",
    description:
      "Share (0–1) of a promotion's extra units taken from the rest of its category, e.g. 0.3 = 30% of the extra units would have been bought as other products; 0 = none",
    kind: "number",
    defaultValue: "0",
    range: { min: 0, max: 1 },
  }),
  define("price_ending", {
    label: "Price Ending",
    description:
      "How discounted prices are rounded (down, so the discount is never smaller than asked): to .99, to .95, to a last digit of 9 (.x9), or to the cent (none)",
    kind: "choice",
    defaultValue: ".x9",
    options: [
      { value: ".99", label: ".99 (e.g. 11.99)" },
      { value: ".95", label: ".95 (e.g. 11.95)" },
      { value: ".x9", label: ".x9 (e.g. 11.29)" },
      { value: "none", label: "None (to the cent)" },
    ],
  }),
];

export const CALCULATION_AS_OF_MODES = ["today", "latest_data"] as const;
export type CalculationAsOfMode = (typeof CALCULATION_AS_OF_MODES)[number];

/**
 * The types of a product_category_types value ("10, 11,12" → [10, 11, 12]); the default's types
 * when the text holds none (a stored value is always checked, so that only happens by hand).
 */
export function parseCategoryTypes(text: string | null | undefined): number[] {
  const types = [
    ...new Set(
      String(text ?? "")
        .split(",")
        .map((t) => t.trim())
        .filter((t) => /^-?\d+$/.test(t))
        .map(Number),
    ),
  ].sort((a, b) => a - b);
  return types.length ? types : [10, 11, 12, 13];
}

export const GLOBAL_SETTING_KEYS = GLOBAL_SETTINGS.map((d) => d.key);

export function globalSettingDefinition(key: string): GlobalSettingDefinition | undefined {
  return GLOBAL_SETTINGS.find((d) => d.key === key);
}

/** Numbers arrive as text (the column is text) or as numbers; blank is not a number. */
const numeric = (message: string) =>
  z.union([z.number(), z.string()]).transform((v, ctx) => {
    const n = typeof v === "number" ? v : v.trim() === "" ? Number.NaN : Number(v);
    if (!Number.isFinite(n)) {
      ctx.addIssue({ code: "custom", message });
      return z.NEVER;
    }
    return n;
  });

/** A numeric setting's range (its own, else its kind's); null for settings that are not numbers. */
export function globalSettingRange(def: GlobalSettingDefinition): GlobalSettingRange | null {
  return def.range ?? KIND_RANGES[def.kind] ?? null;
}

/** What a numeric setting must be, in words: "a whole number of days from 1 to 3650". */
export function describeGlobalSettingRange(def: GlobalSettingDefinition): string | null {
  const r = globalSettingRange(def);
  if (!r) return null;
  const what = def.kind === "days" ? "a whole number of days" : r.integer ? "a whole number" : "a number";
  return r.exclusive
    ? `${what} between ${r.min} and ${r.max} (not ${r.min} or ${r.max})`
    : `${what} from ${r.min} to ${r.max}`;
}

/** The schema of one setting's value; the result is the text stored in setting_value. */
export function globalSettingValueSchema(def: GlobalSettingDefinition): z.ZodType<string, unknown> {
  if (def.kind === "int_list") {
    const message = "must be whole numbers separated by commas, e.g. 10,11,12,13";
    return z.union([z.string(), z.number()]).transform((v, ctx) => {
      const parts = String(v)
        .split(",")
        .map((t) => t.trim());
      if (!parts.length || parts.some((t) => !/^\d{1,9}$/.test(t))) {
        ctx.addIssue({ code: "custom", message });
        return z.NEVER;
      }
      return [...new Set(parts.map(Number))].sort((a, b) => a - b).join(",");
    });
  }
  if (def.kind === "choice") {
    const values = (def.options ?? []).map((o) => o.value);
    return z.string().refine((v) => values.includes(v), {
      message: `must be one of ${values.join(", ")}`,
    });
  }
  const r = globalSettingRange(def)!;
  const message = `must be ${describeGlobalSettingRange(def)}${def.kind === "probability" ? ", e.g. 0.95" : ""}`;
  return numeric(message)
    .refine(
      (n) =>
        (!r.integer || Number.isInteger(n)) &&
        (r.exclusive ? n > r.min && n < r.max : n >= r.min && n <= r.max),
      { message },
    )
    .transform(String);
}

/**
 * Stored values that break their setting's rule (saved before the rule existed, or written by
 * hand): each with the key and what it must be. A run refuses to start on any of them.
 */
export function storedGlobalSettingProblems(
  stored: Record<string, string>,
): { key: string; value: string; message: string }[] {
  const problems: { key: string; value: string; message: string }[] = [];
  for (const def of GLOBAL_SETTINGS) {
    const value = stored[def.key];
    if (value === undefined) continue;
    const parsed = globalSettingValueSchema(def).safeParse(value);
    if (!parsed.success)
      problems.push({ key: def.key, value, message: parsed.error.issues[0]?.message ?? "is invalid" });
  }
  return problems;
}

/** A row of spec section 3 "Global setting". */
export interface GlobalSetting {
  setting_key: string;
  setting_value: string;
  description: string | null;
}

/** PUT /config/global: the whole list (descriptions are ignored: they belong to the catalogue). */
export const GlobalSettingsUpdateSchema = z
  .array(
    z.object({
      setting_key: z.string().min(1).max(200),
      setting_value: z.union([z.string().max(1000), z.number()]),
      description: z.string().nullable().optional(),
    }),
  )
  .max(500);
export type GlobalSettingsUpdate = z.input<typeof GlobalSettingsUpdateSchema>;

/**
 * Checks a complete or partial set of values (key → text) against the catalogue and the rules that
 * span keys. Answers the stored text per key, or the first problem with the key at fault.
 */
export function checkGlobalSettings(
  values: Record<string, string | number>,
  current: Record<string, string> = {},
): { ok: true; values: Record<string, string> } | { ok: false; key: string; message: string } {
  const out: Record<string, string> = {};
  for (const [key, raw] of Object.entries(values)) {
    const def = globalSettingDefinition(key);
    if (!def) return { ok: false, key, message: `unknown setting "${key}"` };
    const parsed = globalSettingValueSchema(def).safeParse(raw);
    if (!parsed.success) return { ok: false, key, message: parsed.error.issues[0]?.message ?? "is invalid" };
    out[key] = parsed.data;
  }
  const merged = { ...current, ...out };
  const num = (key: string) => {
    const text = merged[key] ?? globalSettingDefinition(key)?.defaultValue;
    return text === undefined ? Number.NaN : Number(text);
  };
  if (num("abc_a_threshold") > num("abc_b_threshold")) {
    const key = "abc_a_threshold" in out ? "abc_a_threshold" : "abc_b_threshold";
    return { ok: false, key, message: "A threshold must not exceed B threshold" };
  }
  if (num("xyz_x_threshold") > num("xyz_y_threshold")) {
    const key = "xyz_x_threshold" in out ? "xyz_x_threshold" : "xyz_y_threshold";
    return { ok: false, key, message: "X threshold must not exceed Y threshold" };
  }
  if (num("low_stock_days") >= num("overstock_days")) {
    const key = "low_stock_days" in out ? "low_stock_days" : "overstock_days";
    return { ok: false, key, message: "Low stock days must be below overstock days" };
  }
  return { ok: true, values: out };
}

// ---------------------------------------------------------------------------------------------
// Product and vendor settings

const MIN_ONE_MESSAGE = "must be a whole number, 1 or more, or blank";
/** Spec section 5: integer, minimum 1, blank means null. */
const optionalDays = z
  .number({ error: MIN_ONE_MESSAGE })
  .int(MIN_ONE_MESSAGE)
  .min(1, MIN_ONE_MESSAGE)
  .max(3650, "must be at most 3650")
  .nullable();

export const ProductSettingInputSchema = z.object({
  lead_time_days: optionalDays.default(null),
  days_of_stock: optionalDays.default(null),
  /** 0 = computed; a positive number fixes the product's safety stock in units. */
  safety_stock: z
    .number({ error: "must be a whole number, 0 or more" })
    .int("must be a whole number, 0 or more")
    .min(0, "must be a whole number, 0 or more")
    .max(1_000_000_000, "is too large")
    .default(0),
  /** null = the default method. */
  forecast_method: z
    .enum(FORECAST_METHODS, { error: "must be standard, seasonal or null" })
    .nullable()
    .default(null),
  exclude_from_forecast: z.boolean({ error: "must be true or false" }).default(false),
});
export type ProductSettingInput = z.infer<typeof ProductSettingInputSchema>;

export const VendorSettingInputSchema = z.object({
  default_lead_time_days: optionalDays.default(null),
  default_days_of_stock: optionalDays.default(null),
});
export type VendorSettingInput = z.infer<typeof VendorSettingInputSchema>;

/** `?page&pageSize&search` (query strings are text, so numbers are coerced). */
export const SettingsPageQuerySchema = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  pageSize: z.coerce.number().int().min(1).max(500).default(SETTINGS_PAGE_SIZE),
  search: z.string().trim().max(200).optional(),
});
export type SettingsPageQuery = z.input<typeof SettingsPageQuerySchema>;

export const ProductPidSchema = z.object({ pid: idSchema });
export const VendorNameSchema = z.object({ vendor: z.string().min(1).max(500) });

/** Where an effective value came from. */
export type ParameterSource = "product" | "vendor" | "vendor_quoted" | "global";

/** A row of spec section 3 "Product setting", plus what a blank field falls back to. */
export interface ProductSettingRow {
  pid: number;
  product_name: string;
  lead_time_days: number | null;
  days_of_stock: number | null;
  safety_stock: number;
  forecast_method: ForecastMethod | null;
  exclude_from_forecast: boolean;
  /** The product's vendor (name), if any. */
  vendor: string | null;
  /** Whether the product has a row of its own in settings_product. */
  has_override: boolean;
  /** What applies when the product's own field is blank (vendor, then global). */
  inherited: {
    lead_time_days: number;
    lead_time_source: ParameterSource;
    days_of_stock: number;
    days_of_stock_source: ParameterSource;
    forecast_method: ForecastMethod;
  };
}

/** A row of spec section 3 "Vendor setting", plus what a blank field falls back to. */
export interface VendorSettingRow {
  vendor: string;
  default_lead_time_days: number | null;
  default_days_of_stock: number | null;
  /** The lead time the vendor quotes in the imported data (used before the global default). */
  quoted_lead_time_days: number | null;
  product_count: number;
  has_override: boolean;
}

/** Spec section 3 "Paged list response". */
export interface Paged<T> {
  items: T[];
  total: number;
}

export interface VendorSettingsPage extends Paged<VendorSettingRow> {
  /** The global defaults a blank vendor field falls back to. */
  defaults: { lead_time_days: number; days_of_stock: number };
}
