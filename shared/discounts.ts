// The Discount Simulator and promotions (docs/metrics.md §15–16, docs/api.md "Discount Simulator"):
// request schemas both sides validate with, response shapes, and the pure price arithmetic.
import { z } from "zod";
import { decimal, idSchema, int, text } from "./input.ts";

const DATE_MESSAGE = "must be a date (YYYY-MM-DD)";
export const isoDateSchema = z
  .string({ error: DATE_MESSAGE })
  .regex(/^\d{4}-\d{2}-\d{2}$/, { error: DATE_MESSAGE })
  .refine(
    (s) =>
      !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s),
    {
      error: DATE_MESSAGE,
    },
  );

const isDay = (s: unknown) => typeof s === "string" && /^\d{4}-\d{2}-\d{2}$/.test(s);

/** The longest scenario, in days. */
export const MAX_SCENARIO_DAYS = 366;
/** Products one simulation may cover. */
export const MAX_SCOPE_PRODUCTS = 20_000;
/** Scenarios the chart compares beside the baseline. */
export const MAX_COMPARED_SCENARIOS = 3;

/** One product, a selection, a brand, a product category (with its sub-categories) or a vendor. */
export const DiscountScopeSchema = z
  .object({
    pids: z
      .array(idSchema)
      .max(MAX_SCOPE_PRODUCTS, { error: `at most ${MAX_SCOPE_PRODUCTS} products` })
      .optional(),
    category_id: idSchema.optional(),
    brand_id: idSchema.optional(),
    vendor_id: idSchema.optional(),
  })
  .strict()
  .refine(
    (s) =>
      (s.pids?.length ?? 0) > 0 ||
      s.category_id !== undefined ||
      s.brand_id !== undefined ||
      s.vendor_id !== undefined,
    { error: "must name products (pids), a category_id, a brand_id or a vendor_id" },
  );
export type DiscountScope = z.infer<typeof DiscountScopeSchema>;

const pctSchema = z.preprocess(
  (v) => (typeof v === "string" && v.trim() !== "" ? Number(v) : v),
  z
    .number({ error: "must be a number above 0 and below 100" })
    .refine((n) => Number.isFinite(n) && n > 0 && n < 100, {
      error: "must be a number above 0 and below 100",
    }),
);

const scenarioShape = {
  scope: DiscountScopeSchema,
  discount_pct: pctSchema.optional(),
  target_price: decimal(12, 2)
    .refine((n) => n > 0, { error: "must be above 0" })
    .optional(),
  starts_on: isoDateSchema,
  ends_on: isoDateSchema,
  exclude_pids: z.array(idSchema).max(MAX_SCOPE_PRODUCTS).optional(),
};

type ScenarioLike = {
  scope: DiscountScope;
  discount_pct?: number;
  target_price?: number;
  starts_on: string;
  ends_on: string;
};

function checkScenario(s: ScenarioLike, ctx: z.RefinementCtx) {
  if ((s.discount_pct === undefined) === (s.target_price === undefined)) {
    ctx.addIssue({
      code: "custom",
      path: ["discount_pct"],
      message: "give either discount_pct or target_price",
    });
  }
  if (
    s.target_price !== undefined &&
    !(s.scope.pids?.length === 1 && !s.scope.category_id && !s.scope.brand_id && !s.scope.vendor_id)
  ) {
    ctx.addIssue({
      code: "custom",
      path: ["target_price"],
      message: "is for one product only (scope.pids with one pid)",
    });
  }
  if (!isDay(s.starts_on) || !isDay(s.ends_on)) {
    // Already named as not a date: no comparison of a blank with a date.
  } else if (s.ends_on < s.starts_on) {
    ctx.addIssue({ code: "custom", path: ["ends_on"], message: "must not be before starts_on" });
  } else if (daysBetween(s.starts_on, s.ends_on) + 1 > MAX_SCENARIO_DAYS) {
    ctx.addIssue({
      code: "custom",
      path: ["ends_on"],
      message: `must be at most ${MAX_SCENARIO_DAYS} days after starts_on`,
    });
  }
}

/** POST /api/discount-simulations, tRPC discounts.simulate: stateless, saves nothing. */
export const SimulationInputSchema = z.object(scenarioShape).strict().superRefine(checkScenario);
export type SimulationInput = z.input<typeof SimulationInputSchema>;

/** Clearance mode: the smallest discount that brings the scope's stock to target_units by ends_on. */
export const ClearanceInputSchema = z
  .object({
    scope: DiscountScopeSchema,
    starts_on: isoDateSchema,
    ends_on: isoDateSchema,
    target_units: int({ min: 0, max: 1_000_000_000 }).default(0),
    max_discount_pct: z
      .preprocess(
        (v) => (typeof v === "string" && v.trim() !== "" ? Number(v) : v),
        z
          .number({ error: "must be a whole number from 1 to 95" })
          .refine((n) => Number.isInteger(n) && n >= 1 && n <= 95, {
            error: "must be a whole number from 1 to 95",
          }),
      )
      .default(50),
    exclude_pids: z.array(idSchema).max(MAX_SCOPE_PRODUCTS).optional(),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (!isDay(s.starts_on) || !isDay(s.ends_on)) return; // already named as not a date
    if (s.ends_on < s.starts_on)
      ctx.addIssue({ code: "custom", path: ["ends_on"], message: "must not be before starts_on" });
    else if (daysBetween(s.starts_on, s.ends_on) + 1 > MAX_SCENARIO_DAYS)
      ctx.addIssue({
        code: "custom",
        path: ["ends_on"],
        message: `must be at most ${MAX_SCENARIO_DAYS} days after starts_on`,
      });
  });
export type ClearanceInput = z.input<typeof ClearanceInputSchema>;

/** POST /api/promotions: a scenario plus a name and optional stop_reordering. */
export const PromotionInputSchema = z
  .object({
    ...scenarioShape,
    name: text({ max: 200, required: "name is required" }),
    stop_reordering: z.boolean({ error: "must be true or false" }).default(false),
  })
  .strict()
  .superRefine(checkScenario);
export type PromotionInput = z.input<typeof PromotionInputSchema>;

export const PromotionIdSchema = z.object({ id: idSchema });
export const PromotionUpdateSchema = z.object({ id: idSchema, promotion: PromotionInputSchema });

export const PromotionListInputSchema = z
  .object({ status: z.enum(["planned", "active", "finished", "cancelled", "all"]).default("all") })
  .default({ status: "all" });

// ---------------------------------------------------------------------------------------------
// Responses

export type ElasticitySource = "product" | "category" | "global";

export interface ProjectionFigures {
  units: number;
  revenue: number;
  /** Gross margin (revenue − units × cost); null when the product has no cost */
  margin: number | null;
  /** margin ÷ revenue; null without cost or revenue */
  margin_pct: number | null;
  /** Stock left at the end date */
  stock_end: number;
  /** Stock at the end date ÷ the baseline's weekly demand after it; null when there is none */
  weeks_of_cover: number | null;
  /** Demand not met for want of stock during the scenario's days */
  lost_units: number;
}

export interface SimulatedProduct {
  pid: number;
  title: string;
  sku: string | null;
  category: string | null;
  /** Today's price and the regular price the discount is taken from */
  price: number;
  regular_price: number;
  cost: number | null;
  scenario_price: number;
  /** 1 − scenario price ÷ regular price */
  discount_share: number;
  /** True when the scenario price is below cost (shown red) */
  below_cost: boolean;
  elasticity: number;
  elasticity_source: ElasticitySource;
  /** The category whose pooled figure is used (source category) */
  elasticity_category: string | null;
  elasticity_range: [number, number] | null;
  price_changes: number;
  /** Demand factor during the scenario: (scenario price ÷ price)^(−elasticity) */
  uplift: number;
  /** Margin share m of the regular price: (regular − cost) ÷ regular; null without cost */
  margin_share: number | null;
  /** Units must rise by this share for the gross margin not to fall: d ÷ (m − d); null = no break-even */
  break_even_uplift: number | null;
  on_hand: number;
  /** Expected date of the next open purchase order for the product, if any */
  next_po_date: string | null;
  baseline: ProjectionFigures;
  scenario: ProjectionFigures;
  /** First day the scenario's stock runs out, if within the projection */
  scenario_stockout: string | null;
  /** Runs out before the next PO arrives (or with no PO coming) */
  stockout_risk: boolean;
  /** The dip after the promotion its category's history shows (docs/metrics.md §16.2), or null */
  dip: PromotionDip | null;
  /** Why a figure is blank, when one is */
  notes: string[];
}

/** Weeks after a past promotion the dip measurement looks at (docs/metrics.md §16.2). */
export const DIP_MAX_WEEKS = 4;
/** A category needs this many past promotions (with their weeks after) for its dip to count. */
export const DIP_MIN_PROMOTIONS = 10;
/** A week after counts as a dip when it sold at most (1 − this) × the regular weekly rate. */
export const DIP_THRESHOLD = 0.1;

/** Demand × (1 − share) for `weeks` weeks after a promotion's end, from `promotions` past promotions. */
export interface PromotionDip {
  share: number;
  weeks: number;
  promotions: number;
  /** The category it was measured on */
  category: string;
}

/** The line the page shows: "dip after the promotion: −x % for n weeks, from N past promotions". */
export function dipLine(d: { share: number; weeks: number; promotions: number } | null): string {
  if (!d || d.weeks === 0) return "no dip seen in the history";
  const pct = Math.round(d.share * 1000) / 10;
  return `dip after the promotion: −${pct} % for ${d.weeks} week${d.weeks === 1 ? "" : "s"}, from ${d.promotions} past promotion${d.promotions === 1 ? "" : "s"}`;
}

export interface SimulationTotals {
  units: number;
  revenue: number;
  margin: number;
  margin_pct: number | null;
  stock_end: number;
  lost_units: number;
}

export interface WeeklyPoint {
  week_start: string;
  baseline_units: number;
  scenario_units: number;
  baseline_stock: number;
  scenario_stock: number;
}

export interface SimulationResult {
  starts_on: string;
  ends_on: string;
  /** The forecast the baseline comes from starts the day after this (the last calculation's day) */
  as_of: string | null;
  products: SimulatedProduct[];
  totals: { baseline: SimulationTotals; scenario: SimulationTotals };
  /** Extra units taken from the rest of the category (cannibalisation_share), when the setting is above 0 */
  cannibalisation: { share: number; units: number; revenue: number; margin: number } | null;
  weekly: WeeklyPoint[];
  settings: { default_price_elasticity: number; cannibalisation_share: number; price_ending: string };
  /** Products of the scope left out (excluded, not found, or no price) */
  skipped: number;
  /**
   * The dip after the promotion over the scope's products that have one: share = 1 − scenario ÷
   * baseline demand over their dip days, weeks the longest, promotions those of the categories used;
   * null when no product's category shows one ("no dip seen in the history").
   */
  dip: { share: number; weeks: number; promotions: number } | null;
}

export interface ClearanceResult {
  /** The smallest whole discount % that reaches the target, or null when none up to the cap does */
  discount_pct: number | null;
  target_units: number;
  max_discount_pct: number;
  /** Stock at ends_on without a discount and at the cap */
  stock_without: number;
  stock_at_cap: number;
  message: string;
  /** The simulation at the discount found (or at the cap when none) */
  simulation: SimulationResult;
}

/** The products a Products-page filter matches, as a simulator scope (discounts.filterScope). */
export interface FilterScope {
  /** Product IDs, lowest first, at most MAX_SCOPE_PRODUCTS */
  pids: number[];
  /** How many products the filter matches */
  total: number;
  /** More matched than a scope holds: `pids` are the first MAX_SCOPE_PRODUCTS */
  capped: boolean;
}

export interface ScopeOptions {
  categories: { id: number; name: string; level: number; parent_id: number | null }[];
  brands: { id: number; name: string }[];
  vendors: { id: number; name: string }[];
}

export type PromotionStatus = "planned" | "active" | "finished" | "cancelled";

export interface PromotionProductRow {
  pid: number;
  title: string;
  price: number;
  base_price: number;
  baseline_units: number;
  predicted_units: number;
  uplift: number;
  elasticity: number;
  elasticity_source: string;
  /** Units sold during the promotion's days so far (completed lines), once it has started */
  actual_units: number | null;
  /** actual ÷ baseline units, once finished */
  actual_uplift: number | null;
}

export interface Promotion {
  id: number;
  name: string;
  scope: DiscountScope;
  discount_pct: number | null;
  target_price: number | null;
  starts_on: string;
  ends_on: string;
  exclude_pids: number[];
  stop_reordering: boolean;
  status: PromotionStatus;
  editable: boolean;
  totals: { baseline: SimulationTotals; scenario: SimulationTotals };
  created_by: string | null;
  created_at: string;
  updated_at: string;
  product_count: number;
  /** Predicted against actual, per product and total (finished and active promotions) */
  products?: PromotionProductRow[];
  actual?: {
    baseline_units: number;
    predicted_units: number;
    actual_units: number;
    predicted_uplift: number | null;
    actual_uplift: number | null;
  } | null;
}

// ---------------------------------------------------------------------------------------------
// Arithmetic

export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}

export function addDays(day: string, n: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
}

export const PRICE_ENDINGS = [".99", ".95", ".x9", "none"] as const;
export type PriceEnding = (typeof PRICE_ENDINGS)[number];

/**
 * A price rounded down to the ending (global setting price_ending), so the discount is never smaller
 * than asked: 11.24 → 10.99 (.99), 10.95 (.95), 11.19 (.x9), 11.24 (none). A price below the first
 * price with that ending (0.99, 0.95, 0.09) is only rounded to the cent.
 */
export function roundPrice(price: number, ending: string): number {
  const cents = Math.floor(price * 100 + 1e-6);
  let out = cents;
  if (ending === ".99" || ending === ".95") {
    const end = ending === ".99" ? 99 : 95;
    out = Math.floor(cents / 100) * 100 + end;
    if (out > cents) out -= 100;
  } else if (ending === ".x9") {
    out = Math.floor(cents / 10) * 10 + 9;
    if (out > cents) out -= 10;
  }
  return (out > 0 ? out : cents) / 100;
}

/**
 * Units must rise by d ÷ (m − d) for the gross margin not to fall, with m the margin share of the
 * regular price and d the discount share; null ("no break-even") when d ≥ m.
 */
export function breakEvenUplift(marginShare: number, discountShare: number): number | null {
  if (discountShare >= marginShare) return null;
  return discountShare / (marginShare - discountShare);
}

/** Demand factor at `price` against `base`: (price ÷ base)^(−elasticity). */
export function upliftFactor(price: number, base: number, elasticity: number): number {
  if (base <= 0 || price <= 0) return 1;
  return (price / base) ** -elasticity;
}
