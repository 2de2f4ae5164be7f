// Builds the explanation of one product's planning figures (docs/metrics.md): for each figure the
// symbolic formula, the same formula with the stored inputs filled in, and the result. Pure: the
// service reads the rows, this file only does arithmetic and text. When the arithmetic on the stored
// inputs does not give the stored figure (data or settings changed since the calculation), the
// figure keeps the stored value and a note says so. Figures stored rounded (to 2 or 4 decimals)
// are recomputed exactly and compared within half a unit of their last stored place; rounding here
// is half away from zero, as PostgreSQL's round() does.

import { formatCurrency, formatUnitPrice } from "../../../shared/format.ts";
import type {
  ExplainedFigure,
  ExplainedFigureKey,
  MetricsExplanation,
  ProductStatus,
} from "../../../shared/metrics.ts";
import { EXPLAINED_FIGURE_KEYS, PRODUCT_STATUSES } from "../../../shared/metrics.ts";
import type { ParameterSource } from "../../../shared/settings.ts";
import { normalQuantile } from "../../../shared/stats.ts";
import type { GlobalSettingValues, PlanningParameters } from "../config/planning-parameters.ts";

type Num = number | null;

/** The product with its product_metrics row (numbers as JS numbers, dates as YYYY-MM-DD). */
export interface ExplainRow {
  pid: number;
  title: string;
  sku: string | null;
  stock_quantity: number;
  moq: number;
  case_qty: number;
  cost_price: Num;
  discontinued: boolean;
  replenishable: boolean;
  /** products.kind: only merchandise is planned. */
  kind?: string;
  primary_category: string | null;
  /** The category whose profile plans a new product: the primary one or its nearest ancestor with established products. */
  profile_category?: string | null;
  d0: string;
  calculated_at: Date;
  on_hand: number;
  on_order: number;
  units_7d: number;
  units_30d: number;
  units_90d: number;
  units_365d: number;
  total_sold: number;
  revenue_7d: number;
  revenue_30d: number;
  revenue_90d: number;
  revenue_365d: number;
  lifetime_revenue: number;
  price: number;
  stock_value_cost: number;
  stock_value_retail: number;
  vendor_id: number | null;
  vendor_name: string | null;
  /** F(H)'s change from saved promotions (docs/metrics.md §16.1); null when none reaches the horizon */
  promotion_adjustment: number | null;
  /** The running stop_reordering promotion that zeroes the reorder quantity, if any */
  reorder_stopped_by: string | null;
  history_start: string | null;
  history_days: number;
  is_new: boolean;
  in_stock_days_90: number;
  out_of_stock_days_90: number;
  out_of_stock_days_365: number;
  avg_daily_sales: number;
  daily_sales_std: number;
  /** What σd left out (§3): the bulk orders of the last 90 days; null when none */
  demand_variability?: { bulk?: { day: string; units: number }[] } | null;
  avg_stock_units_365: number;
  cogs_365d: Num;
  gross_profit_365d: Num;
  margin_365d: Num;
  sell_through_30d: Num;
  turnover_365d: Num;
  gmroi_365d: Num;
  lead_time_configured: Num;
  lead_time_configured_source: string | null;
  lead_time_measured: Num;
  lead_time_measured_std: Num;
  lead_time_measured_samples: number;
  lead_time_measured_level: string | null;
  lead_time_days: Num;
  lead_time_source: string | null;
  forecast_method: string | null;
  demand_rate: Num;
  demand_source: string | null;
  days_of_stock: Num;
  horizon_days: Num;
  forecast_horizon_units: Num;
  service_level: Num;
  z_score: Num;
  safety_stock: Num;
  safety_stock_method: string | null;
  lead_time_demand: Num;
  reorder_point: Num;
  reorder_qty: number;
  reorder_value: number;
  overstock_qty: number;
  overstock_value: number;
  days_of_cover: Num;
  stockout_date: string | null;
  status: string | null;
  abc_class: string | null;
  abc_basis_value: Num;
  abc_share_before: Num;
}

export interface ForecastRow {
  method: string;
  requested_method: string;
  /** The method ran because auto_forecast_method chose it by its lower backtest error (§8). */
  chosen_by_backtest?: boolean;
  week_start: string;
  weekly: number[];
  total_91d: number;
}

/** An open purchase-order line (order `ordered` or `partial`) of the product. */
export interface OpenLine {
  /** The PO's number: an imported PO's id, or an app PO's "A…" */
  po_id: number | string;
  date_ordered: string;
  date_expected: string | null;
  ordered_qty: number;
  received_qty: number;
}

/**
 * The product's sales recomputed from its order lines (completed, up to asOf): units and revenue
 * over the last 7, 30, 90 and 365 days and over all of them, and the first sale's UTC day.
 */
export interface SalesWindows {
  units: [number, number, number, number, number];
  revenue: [number, number, number, number, number];
  first_sold: string | null;
}

/** A row of product_stock_history: the closing stock of valid_from … valid_to (YYYY-MM-DD). */
export interface StockRun {
  valid_from: string;
  valid_to: string;
  stock: number;
  sold_first_day: number;
}

/** Lead-time samples (§4): `lines` lines of one purchase order with the same first receipt. */
export interface LeadTimeSample {
  po_id: number;
  date_ordered: string;
  first_received: string;
  days: number;
  lines: number;
}

/** The samples (lines) of one level: how many, Σ and Σ² of their days, and the first few of them. */
export interface LeadTimeSampleSet {
  count: number;
  sum: number;
  sum_sq: number;
  listed: LeadTimeSample[];
}

export interface LeadTimeSamples {
  product: LeadTimeSampleSet;
  /** The samples of the product's vendor's purchase orders; null without a vendor. */
  vendor: LeadTimeSampleSet | null;
}

/** A stored backtest row (product_forecast_accuracy). */
export interface AccuracyRow {
  method: string;
  weeks: number;
  actual: number;
  wape: Num;
  mape: Num;
  bias: Num;
}

export interface ExplainInput {
  row: ExplainRow;
  forecast: ForecastRow | null;
  openLines: OpenLine[];
  /**
   * Units of receipts recorded here that the source's stock does not include yet (they count as on
   * hand until the next import carries them: docs/metrics.md, purchase orders); 0 when none.
   */
  pendingReceipts?: number;
  /** The product's parameters as the settings resolve them now. */
  params: PlanningParameters | null;
  settings: GlobalSettingValues;
  /** Sales per window from the order lines; null when not read. */
  windows: SalesWindows | null;
  /** The product's stock runs (product_stock_history), in day order. */
  runs: StockRun[];
  leadTimeSamples: LeadTimeSamples | null;
  /** Units per week, the last 104 weeks oldest first (the last one is week 0, ending on D0). */
  history: number[] | null;
  accuracy: AccuracyRow[];
}

// ---------------------------------------------------------------------------------------------
// Numbers as text

/** Rounds away binary noise (1.2 × 10 = 12.000000000000002) before ⌈⌉ and comparisons. */
const clean = (x: number) => Math.round(x * 1e6) / 1e6;
const ceil = (x: number) => Math.ceil(clean(x));

/**
 * Rounds to `dp` decimals half away from zero, as PostgreSQL's round(numeric, dp) does (toFixed
 * rounds the binary value: −0.78575 → −0.7857 where PostgreSQL stores −0.7858). The scaled value
 * is taken to 15 significant digits first, so a decimal tie stored in binary as …4999… is a tie.
 */
export function roundHalfAway(x: number, dp: number): number {
  const f = 10 ** dp;
  const scaled = Number((Math.abs(x) * f).toPrecision(15));
  return (Math.sign(x) * Math.floor(scaled + 0.5)) / f;
}

/** Up to `dp` decimals (half away from zero), trailing zeros dropped: 52.8, 0.2857, 12. */
export function num(x: Num, dp = 4): string {
  if (x === null || !Number.isFinite(x)) return "—";
  const r = roundHalfAway(x, dp);
  return String(Object.is(r, -0) ? 0 : r);
}
/** Amounts of money as the screens show them (spec section 9's currency formatter): $2,477.17. */
const money = (x: Num) => (x === null || !Number.isFinite(x) ? "—" : formatCurrency(roundHalfAway(x, 2)));
/** A unit cost or price: like money, with up to 4 decimals when it has them ($0.60, $0.4523). */
const price = (x: Num) => (x === null || !Number.isFinite(x) ? "—" : formatUnitPrice(x));
const rate = (x: Num) => `${num(x)}/day`;
const days = (x: Num) => `${num(x, 2)} ${x === 1 ? "day" : "days"}`;
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
/** Like num, but a number below 0.1 keeps 4 significant digits (0.000981, not 0.001). */
const small = (x: number) => (x !== 0 && Math.abs(x) < 0.1 ? String(Number(x.toPrecision(4))) : num(x));

/**
 * The argument of a ⌈⌉ as text: 4 decimals, or more when 4 would hide which whole number it rounds
 * up to (5.00003 printed as 5 would read ⌈5⌉ = 6).
 */
function ceilArg(x: number): string {
  const up = ceil(x);
  for (const dp of [4, 6, 8]) if (ceil(roundHalfAway(x, dp)) === up) return num(x, dp);
  return String(x);
}

/**
 * Forecast weeks as text: 2 decimals when the terms so written still add up to the result (to the
 * cent), else 4, so a reader summing the printed terms gets the printed total.
 */
function weekTerms(terms: { w: number; k: number }[], result: number): (w: number) => string {
  const sumAt = (dp: number) => terms.reduce((s, t) => s + t.k * roundHalfAway(t.w, dp), 0);
  const dp = Math.abs(sumAt(2) - result) < 0.005 ? 2 : 4;
  return (w) => num(w, dp);
}

export function addDays(day: string, n: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}
/** "2026-05-13 … 2026-05-22", or the one day. */
const dayRange = (from: string, to: string) => (from === to ? from : `${from} … ${to}`);

const SOURCE_LABELS: Record<string, string> = {
  product: "product setting",
  vendor: "vendor setting",
  vendor_quoted: "vendor's quoted lead time",
  global: "global default",
};
const sourceLabel = (s: string | null) => (s ? (SOURCE_LABELS[s] ?? s) : "unknown");

/**
 * Whether a recomputed figure disagrees with the stored one. `dp`: the stored figure is rounded to
 * that many decimals, so the exact recomputation may be up to half a unit of its last place away
 * (a tie rounds either way without it meaning anything). Without `dp` the figure is exact (whole
 * units, dates, labels, or a value copied from another stored figure).
 */
function differs(computed: Num | string, stored: Num | string, dp?: number): boolean {
  if (typeof computed === "number" && typeof stored === "number") {
    const slack = 1e-9 * Math.max(1, Math.abs(stored));
    return Math.abs(computed - stored) > (dp === undefined ? 0 : 0.5 * 10 ** -dp) + slack;
  }
  return computed !== stored;
}

function joinNotes(...notes: (string | undefined | false | null)[]): string | undefined {
  const kept = notes.filter((n): n is string => typeof n === "string" && n.length > 0);
  return kept.length ? kept.join(" ") : undefined;
}

const changedSince = (computed: string, stored: string, what = "The inputs above give") =>
  `${what} ${computed} but the calculation stored ${stored}: data or settings changed since it ran; the next full update recalculates it.`;

/**
 * The note of a figure whose recomputation from the stored inputs disagrees with the stored value
 * (`dp` as in differs; the recomputation is shown rounded as the figure is stored).
 */
function staleNote(computed: Num | string, stored: Num | string, dp?: number) {
  if (computed === null || stored === null || !differs(computed, stored, dp)) return undefined;
  const show = (v: Num | string) => (typeof v === "number" ? num(v, dp ?? 4) : String(v));
  return changedSince(show(computed), show(stored));
}

// ---------------------------------------------------------------------------------------------

interface Fig extends Omit<ExplainedFigure, "key"> {
  key: ExplainedFigureKey;
}

function figure(f: Fig): ExplainedFigure {
  const out: ExplainedFigure = {
    key: f.key,
    label: f.label,
    value: f.value,
    formula: f.formula,
    substituted: f.substituted,
    inputs: f.inputs,
    section: f.section,
  };
  if (f.unit) out.unit = f.unit;
  if (f.note) out.note = f.note;
  return out;
}

/** Arrival day of an open line: expected date, else ordered + ⌈L⌉; on or before D0 counts as D0 + 1. */
export function arrivalDay(line: OpenLine, d0: string, leadTime: Num): string | null {
  const day =
    line.date_expected ?? (leadTime === null ? null : addDays(line.date_ordered, Math.ceil(clean(leadTime))));
  if (day === null) return null;
  return day <= d0 ? addDays(d0, 1) : day;
}

/**
 * z as the calculation used it: the exact standard normal quantile of the service level (the
 * stored z_score is rounded to 4 decimals, which can move a ceiling: ⌈4.99987⌉ = 5, ⌈5.00001⌉ = 6).
 * The stored service level keeps 4 decimals; when the setting had more, its own quantile is the one
 * that rounds to the stored z. Falls back to the stored z when neither does.
 */
function exactZ(m: ExplainRow, settings: GlobalSettingValues): Num {
  const quantile = (p: Num) => (p !== null && p > 0 && p < 1 ? normalQuantile(p) : null);
  const fits = (z: Num) => z !== null && (m.z_score === null || !differs(z, m.z_score, 4));
  for (const p of [m.service_level, settings.default_service_level]) {
    const z = quantile(p);
    if (fits(z)) return z;
  }
  return m.z_score;
}

export function buildExplanation(input: ExplainInput): MetricsExplanation {
  const { row: m, forecast, openLines, params, settings } = input;
  const pending = input.pendingReceipts ?? 0;
  const D0 = m.d0;
  // Built in any order, answered in EXPLAINED_FIGURE_KEYS' order.
  const byKey = new Map<string, ExplainedFigure>();
  const push = (f: Fig) => byKey.set(f.key, figure(f));

  const excludedBySetting = params?.excluded ?? false;
  const nonMerchandise = (m.kind ?? "merchandise") !== "merchandise";
  const excluded = excludedBySetting || !m.replenishable || nonMerchandise;
  const whyExcluded = nonMerchandise
    ? `it is not merchandise (kind ${m.kind})`
    : excludedBySetting
      ? "its exclude_from_forecast setting is on"
      : "it is not replenishable";
  const d = m.demand_rate;
  const dbar = m.avg_daily_sales;
  // The ceilings work with exact values, as the calculation does (§5 "Rounding"): d̄ = units ÷
  // in-stock days unrounded, not its stored 4 decimals (⌈7 × 14.4286⌉ would be 102, not 101).
  const dbarX = m.in_stock_days_90 > 0 ? m.units_90d / m.in_stock_days_90 : dbar;
  const dX = m.demand_source === "history" && d !== null ? dbarX : d;
  // Without an exact d (a category profile's is stored with 4 decimals), any d within half a unit
  // of that last place may have given the stored figures; and the update right after a purchase
  // order action plans with the stored d (server/modules/purchasing/replan.ts). A figure that such
  // a d reproduces has no "changed since it ran" note.
  const dRange: [number, number] | null =
    d !== null && d > 0 && dX !== null
      ? [Math.max(Math.min(d, dX) - 0.00005, 1e-12), Math.max(d, dX) + 0.00005]
      : null;
  const roundingNote = (
    computed: Num | string,
    stored: Num | string,
    dp: number | undefined,
    at: (dd: number) => Num | string,
  ): string | undefined => {
    const note = staleNote(computed, stored, dp);
    if (!note || !dRange || stored === null) return note;
    const a = at(dRange[0]);
    const b = at(dRange[1]);
    if (typeof stored === "number" && typeof a === "number" && typeof b === "number") {
      const half = dp === undefined ? 0 : 0.5 * 10 ** -dp;
      const within = stored >= Math.min(a, b) - half - 1e-9 && stored <= Math.max(a, b) + half + 1e-9;
      return within ? undefined : note;
    }
    if (typeof stored === "string" && typeof a === "string" && typeof b === "string") {
      const [lo, hi] = a < b ? [a, b] : [b, a];
      return stored >= lo && stored <= hi ? undefined : note;
    }
    return note;
  };
  const L = m.lead_time_days;
  const hasMeasurement = m.lead_time_measured !== null;
  const sigmaL = hasMeasurement ? (m.lead_time_measured_std ?? 0) : 0;
  const SS = m.safety_stock;

  // --- on_hand (§1)
  {
    const computed = Math.max(m.stock_quantity, 0) + pending;
    push({
      key: "on_hand",
      label: "On hand",
      value: m.on_hand,
      unit: "units",
      formula: pending
        ? "max(stock_quantity, 0) + receipts recorded here that the source's stock does not include yet"
        : "max(stock_quantity, 0)",
      substituted: pending
        ? `max(${m.stock_quantity}, 0) + ${pending} = ${computed}`
        : `max(${m.stock_quantity}, 0) = ${computed}`,
      inputs: pending
        ? { stock_quantity: m.stock_quantity, pending_receipts: pending }
        : { stock_quantity: m.stock_quantity },
      note: staleNote(computed, m.on_hand),
      section: "§1",
    });
  }

  // --- on_order (§1)
  {
    const parts = openLines.map((l) => `max(${l.ordered_qty} − ${l.received_qty}, 0)`);
    const computed = openLines.reduce((s, l) => s + Math.max(l.ordered_qty - l.received_qty, 0), 0);
    const inputs: Record<string, number> = {};
    for (const l of openLines)
      inputs[`PO ${l.po_id}`] = (inputs[`PO ${l.po_id}`] ?? 0) + Math.max(l.ordered_qty - l.received_qty, 0);
    push({
      key: "on_order",
      label: "On order",
      value: m.on_order,
      unit: "units",
      formula: "Σ max(ordered − received, 0) over the lines of purchase orders that are ordered or partial",
      substituted: parts.length ? `${parts.join(" + ")} = ${computed}` : "no open purchase-order lines = 0",
      inputs,
      note: staleNote(computed, m.on_order),
      section: "§1",
    });
  }

  // --- avg_daily_sales d̄ (§3)
  {
    const n = m.in_stock_days_90;
    const computed = n > 0 ? m.units_90d / n : 0;
    const beforeLife = Math.max(0, 90 - n - m.out_of_stock_days_90);
    push({
      key: "avg_daily_sales",
      label: "Average daily sales (d̄)",
      value: dbar,
      unit: "units/day",
      formula: "d̄ = units sold in the last 90 days ÷ in-stock days among them",
      substituted:
        n > 0 ? `${m.units_90d} ÷ ${n} = ${rate(computed)}` : `no in-stock days in the last 90 → ${rate(0)}`,
      inputs: {
        units_90d: m.units_90d,
        in_stock_days_90: n,
        out_of_stock_days_90: m.out_of_stock_days_90,
      },
      note: joinNotes(
        m.out_of_stock_days_90 > 0 &&
          `${m.out_of_stock_days_90} of the last 90 days were out of stock and do not dilute demand.`,
        beforeLife > 0 && `${beforeLife} of the last 90 days are before the product's life started.`,
        staleNote(computed, dbar, 4),
      ),
      section: "§3",
    });
  }

  // --- daily_sales_std σd (§3): weekly buckets over the in-stock weeks, σd = σ_week ÷ √7
  const bulk = m.demand_variability?.bulk ?? [];
  {
    const wd = weeklyDemand(m, input.runs, bulk);
    const n = wd.weeks.length;
    const sw = wd.weeks.reduce((s, w) => s + w, 0);
    const sww = wd.weeks.reduce((s, w) => s + w * w, 0);
    let computed = 0;
    let substituted: string;
    if (n < 2) substituted = `n = ${n} in-stock ${n === 1 ? "week" : "weeks"} < 2 → 0`;
    else {
      const sigmaWeek = Math.sqrt(Math.max(0, (sww - sw ** 2 / n) / (n - 1)));
      computed = sigmaWeek / Math.sqrt(7);
      substituted = `σ_week = √((${num(sww)} − ${num(sw)}²/${n}) ÷ ${n - 1}) = ${num(sigmaWeek)}; σd = ${num(sigmaWeek)} ÷ √7 = ${rate(computed)}`;
    }
    const bulkNote = bulk.length
      ? `${bulk.length} bulk ${bulk.length === 1 ? "order" : "orders"} of ${bulk
          .map((b) => `${b.units} units on ${b.day}`)
          .join(", ")} not used for safety stock.`
      : undefined;
    const outNote = wd.outWeeks.length
      ? `${plural(wd.outWeeks.length, "week")} out of stock on 4 or more days left out: ${wd.outWeeks
          .map((k) => weekText(D0, k))
          .join(", ")}.`
      : undefined;
    push({
      key: "daily_sales_std",
      label: "Daily demand deviation (σd)",
      value: m.daily_sales_std,
      unit: "units/day",
      formula:
        "σd = σ_week ÷ √7, σ_week = √((Σw² − (Σw)²/n) ÷ (n − 1)) over the n in-stock weeks of the last 13 (weeks of 7 days ending on D0, since the life start; a week is in stock when out of stock on fewer than 4 of its days)",
      substituted,
      inputs: { n, sum_w: sw, sum_w2: sww, weeks_in_life: wd.weeksInLife },
      note: joinNotes(bulkNote, outNote, staleNote(computed, m.daily_sales_std, 4)),
      section: "§3",
    });
  }

  // --- demand_rate d (§5)
  {
    let substituted: string;
    let note: string | undefined;
    if (m.demand_source === "category") {
      substituted = `new product → d = category profile of ${m.profile_category ?? m.primary_category ?? "its primary category"} = ${rate(d)}`;
      note = `History of ${m.history_days} days < 30: planned from the mean d̄ of the established products in its primary category (or, without any, in its nearest ancestor category that has them).`;
    } else if (d === null) {
      substituted = "not calculated";
    } else {
      substituted = `d = d̄ = ${rate(dbar)}`;
      if (m.is_new)
        note = `New product (history ${m.history_days} days < 30) without a category profile: its own d̄ plans.`;
    }
    push({
      key: "demand_rate",
      label: "Demand rate (d)",
      value: d,
      unit: "units/day",
      formula:
        "d = d̄ for established products; a new product's category profile (mean d̄ of its category's established products) when there is one",
      substituted,
      inputs: {
        demand_source: m.demand_source,
        is_new: m.is_new ? "yes" : "no",
        history_days: m.history_days,
        avg_daily_sales: dbar,
        primary_category: m.primary_category,
        profile_category: m.profile_category ?? null,
      },
      note: joinNotes(note, m.demand_source === "history" && d !== null && staleNote(dbar, d)),
      section: "§5",
    });
  }

  // --- lead_time L (§4)
  {
    const configured = `${days(m.lead_time_configured)} (${sourceLabel(m.lead_time_configured_source)})`;
    const measured = hasMeasurement
      ? `${days(m.lead_time_measured)} from ${m.lead_time_measured_samples} ${m.lead_time_measured_level ?? ""} samples`.replace(
          "  ",
          " ",
        )
      : null;
    let substituted: string;
    let computed: Num;
    if (m.lead_time_source === "measured") {
      computed = m.lead_time_measured;
      substituted = `lead_time_source = measured, measured ${measured} → L = ${days(computed)} (configured: ${configured})`;
    } else {
      computed = m.lead_time_configured;
      substituted = `lead_time_source = configured → L = ${configured}${measured ? `; measured: ${measured}` : ""}`;
      if (settings.lead_time_source === "measured" && !hasMeasurement)
        substituted = `lead_time_source = measured but no measurement (fewer than 3 samples) → L = ${configured}`;
    }
    const settingsNow =
      params && m.lead_time_configured !== null && params.lead_time_days !== m.lead_time_configured
        ? `The settings now give a configured ${days(params.lead_time_days)} (${sourceLabel(params.sources.lead_time_days as ParameterSource)}); the next full update uses it.`
        : undefined;
    push({
      key: "lead_time",
      label: "Lead time (L)",
      value: L,
      unit: "days",
      formula:
        "L = the measured mean when the global lead_time_source is measured and a measurement exists; otherwise the configured lead time (product → vendor setting → vendor quote → global default)",
      substituted,
      inputs: {
        lead_time_source_setting: settings.lead_time_source,
        configured: m.lead_time_configured,
        configured_source: m.lead_time_configured_source,
        measured: m.lead_time_measured,
        measured_std: m.lead_time_measured_std,
        measured_samples: m.lead_time_measured_samples,
        measured_level: m.lead_time_measured_level,
      },
      note: joinNotes(settingsNow, staleNote(computed, L)),
      section: "§4",
    });
  }

  // --- lead_time_std σL (§4)
  push({
    key: "lead_time_std",
    label: "Lead-time deviation (σL)",
    value: sigmaL,
    unit: "days",
    formula: "σL = the measured standard deviation when a measurement exists, else 0",
    substituted: hasMeasurement
      ? `measured over ${m.lead_time_measured_samples} samples → σL = ${days(sigmaL)}`
      : "no measurement → σL = 0",
    inputs: { measured_std: m.lead_time_measured_std, measured_samples: m.lead_time_measured_samples },
    section: "§4",
  });

  // --- safety_stock SS (§5)
  {
    let formula =
      "fixed: the product setting; statistical: ⌈z × √(L × σd² + d̄² × σL²)⌉; days: ⌈safety-stock days × d⌉";
    let substituted = "not calculated";
    let computed: Num = null;
    let note: string | undefined;
    const z = exactZ(m, settings);
    if (m.safety_stock_method === "fixed") {
      formula = "SS = the product's safety_stock setting";
      computed = params?.safety_stock ?? SS;
      substituted = `product setting = ${computed} units`;
    } else if (m.safety_stock_method === "statistical" && z !== null && L !== null) {
      formula = "SS = ⌈z × √(L × σd² + d̄² × σL²)⌉";
      const sigmaD = m.daily_sales_std;
      const inner = z * Math.sqrt(L * sigmaD ** 2 + dbarX ** 2 * sigmaL ** 2);
      computed = Math.max(0, ceil(inner));
      substituted = `⌈${num(z)} × √(${num(L, 2)} × ${num(sigmaD)}² + ${num(dbar)}² × ${num(sigmaL, 2)}²)⌉ = ⌈${ceilArg(inner)}⌉ = ${ceil(inner)}`;
      if (ceil(inner) < 0) substituted += ` → never below 0 → 0`;
      note = `z = ${num(z, 6)} (the standard normal quantile of the ${num(m.service_level)} service level, stored as ${num(m.z_score)}); established product with ${m.in_stock_days_90} in-stock days of the last 90 (≥ 30).`;
    } else if (m.safety_stock_method === "days" && d !== null) {
      formula = "SS = ⌈safety-stock days × d⌉";
      const sd = params?.safety_stock_days ?? settings.default_safety_stock_days;
      computed = ceil(sd * dX!);
      substituted = `⌈${sd} × ${rate(d)}⌉ = ⌈${ceilArg(sd * dX!)}⌉ = ${computed}`;
      note = m.is_new
        ? `New product (history ${m.history_days} days < 30): the statistical formula needs an established history.`
        : `Only ${m.in_stock_days_90} in-stock days in the last 90 (< 30): too short for the statistical formula.`;
    }
    push({
      key: "safety_stock",
      label: "Safety stock (SS)",
      value: SS,
      unit: "units",
      formula,
      substituted,
      inputs: {
        method: m.safety_stock_method,
        z,
        z_score: m.z_score,
        service_level: m.service_level,
        L,
        daily_sales_std: m.daily_sales_std,
        avg_daily_sales: dbar,
        lead_time_std: sigmaL,
        demand_rate: d,
        safety_stock_days: params?.safety_stock_days ?? settings.default_safety_stock_days,
        fixed_setting: params?.safety_stock ?? null,
      },
      note: joinNotes(note, staleNote(computed, SS)),
      section: "§5",
    });
  }

  // --- lead_time_demand (§6)
  {
    const computed = dX !== null && L !== null ? dX * L : null;
    push({
      key: "lead_time_demand",
      label: "Lead-time demand",
      value: m.lead_time_demand,
      unit: "units",
      formula: "d × L",
      substituted: computed === null ? "not calculated" : `${rate(d)} × ${days(L)} = ${num(computed, 2)}`,
      inputs: { demand_rate: d, lead_time_days: L },
      note: roundingNote(computed, m.lead_time_demand, 2, (dd) => (L === null ? null : dd * L)),
      section: "§6",
    });
  }

  // --- reorder_point ROP (§6)
  {
    let computed: Num = null;
    let substituted = "not calculated";
    if (d !== null && L !== null && SS !== null) {
      const x = dX! * L + SS;
      computed = ceil(x);
      substituted = `⌈${rate(d)} × ${days(L)} + ${SS}⌉ = ⌈${ceilArg(x)}⌉ = ${computed}`;
    }
    push({
      key: "reorder_point",
      label: "Reorder point (ROP)",
      value: m.reorder_point,
      unit: "units",
      formula: "ROP = ⌈d × L + SS⌉",
      substituted,
      inputs: { demand_rate: d, lead_time_days: L, safety_stock: SS },
      note: staleNote(computed, m.reorder_point),
      section: "§6",
    });
  }

  // --- forecast_horizon_units F(H) (§6)
  {
    const H = m.horizon_days;
    let substituted = "not calculated";
    let computed: Num = null;
    const horizon =
      H !== null && L !== null && m.days_of_stock !== null
        ? `H = L + days of stock = ${num(L, 2)} + ${m.days_of_stock} = ${days(H)}; `
        : "";
    // §6: every new product (its forecast rests on a few weeks at most) and one without a forecast row.
    const byRate = m.is_new || !forecast || forecast.weekly.length === 0;
    if (H !== null && byRate && d !== null) {
      computed = d * H;
      substituted = `${horizon}F(H) = d × H = ${rate(d)} × ${days(H)} = ${num(computed, 2)}`;
    } else if (H !== null && forecast && forecast.weekly.length > 0 && !byRate) {
      const weeks = forecast.weekly;
      const last = weeks[weeks.length - 1]!;
      const full = Math.floor(clean(H / 7));
      const rest = clean(H - 7 * full);
      const inRange = weeks.slice(0, Math.min(full, weeks.length));
      const repeats = Math.max(0, full - weeks.length);
      const next = full < weeks.length ? weeks[full]! : last;
      computed = inRange.reduce((s, w) => s + w, 0) + repeats * last + (rest / 7) * next;
      const show = weekTerms(
        [...inRange.map((w) => ({ w, k: 1 })), { w: last, k: repeats }, { w: next, k: rest / 7 }],
        roundHalfAway(computed, 2),
      );
      const terms: string[] = [];
      if (inRange.length) terms.push(`(${inRange.map(show).join(" + ")})`);
      if (repeats) terms.push(`${repeats} × ${show(last)}`);
      if (rest > 0) terms.push(`${num(rest, 2)}/7 × ${show(next)}`);
      substituted = `${horizon}F(${num(H, 2)}) = ${terms.join(" + ") || "0"} = ${num(computed, 2)}`;
    }
    // Saved promotions (§16.1): their units on the promotion days inside the horizon.
    const promo = m.promotion_adjustment;
    if (computed !== null && promo !== null && promo !== 0) {
      const base = computed;
      computed = Math.max(0, roundHalfAway(base, 2) + promo);
      substituted += `; + promotions ${num(promo, 2)} → ${num(computed, 2)}`;
    }
    push({
      key: "forecast_horizon_units",
      label: "Forecast over the horizon F(H)",
      value: m.forecast_horizon_units,
      unit: "units",
      formula: byRate
        ? "F(H) = d × H (a new product, or no forecast), H = L + days of stock"
        : "F(H) = the first ⌊H/7⌋ forecast weeks + (H/7 − ⌊H/7⌋) of the next (weeks after 13 repeat week 13), H = L + days of stock",
      substituted,
      inputs: {
        lead_time_days: L,
        days_of_stock: m.days_of_stock,
        horizon_days: H,
        demand_source: m.demand_source,
        weekly: forecast ? forecast.weekly.map((w) => num(w, 2)).join(", ") : null,
      },
      note: joinNotes(
        byRate &&
          (m.is_new
            ? `New product (history ${m.history_days} days < 30): the horizon is covered at the demand rate.`
            : "No forecast row: the horizon is covered at the demand rate."),
        params && m.days_of_stock !== null && params.days_of_stock !== m.days_of_stock
          ? `The settings now give ${params.days_of_stock} days of stock (${sourceLabel(params.sources.days_of_stock)}); the next full update uses it.`
          : undefined,
        promo !== null && promo !== 0
          ? "Saved promotions add (uplift − 1) × the day's system forecast for each promotion day inside the horizon (§16.1)."
          : undefined,
        staleNote(computed, m.forecast_horizon_units, 2),
      ),
      section: "§6",
    });
  }

  // --- reorder_qty (§6)
  let reorderWithinRounding = false;
  {
    const F = m.forecast_horizon_units;
    let computed: Num = null;
    let substituted = "not calculated";
    if (m.discontinued) {
      computed = 0;
      substituted = "discontinued → 0";
    } else if (excluded) {
      computed = 0;
      substituted = nonMerchandise
        ? `not merchandise (${m.kind}) → 0`
        : excludedBySetting
          ? "excluded from forecasting → 0"
          : "not replenishable → 0";
    } else if (m.reorder_stopped_by !== null) {
      computed = 0;
      substituted = `the promotion "${m.reorder_stopped_by}" stops reordering while it runs (§16.1) → 0`;
    } else if (F !== null && SS !== null) {
      const need = clean(F + SS - (m.on_hand + m.on_order));
      const head = `need = F(H) + SS − (on hand + on order) = ${num(F, 2)} + ${SS} − (${m.on_hand} + ${m.on_order}) = ${num(need, 2)}`;
      const moq = Math.max(m.moq, 1);
      const caseQty = Math.max(m.case_qty, 1);
      const qtyFor = (n: number) => (n <= 0 ? 0 : Math.ceil(Math.max(ceil(n), moq) / caseQty) * caseQty);
      computed = qtyFor(need);
      if (need <= 0) substituted = `${head} ≤ 0 → 0`;
      else {
        const up = ceil(need);
        substituted = `${head} → ⌈${num(need, 2)}⌉ = ${up}, MOQ ${moq} → ${Math.max(up, moq)}, case ${caseQty} → ${computed}`;
      }
      // F(H) is stored with 2 decimals and the calculation rounds up the exact need: a need within
      // half a cent of a whole number (12.003 stored as 12.00) may round either way.
      reorderWithinRounding =
        computed !== m.reorder_qty &&
        [need - 0.005, need + 0.005].some((n) => qtyFor(clean(n)) === m.reorder_qty);
    }
    push({
      key: "reorder_qty",
      label: "Reorder quantity",
      value: m.reorder_qty,
      unit: "units",
      formula:
        "need = F(H) + SS − (on hand + on order); 0 when need ≤ 0, else max(⌈need⌉, MOQ) rounded up to whole cases",
      substituted,
      inputs: {
        forecast_horizon_units: F,
        safety_stock: SS,
        on_hand: m.on_hand,
        on_order: m.on_order,
        moq: m.moq,
        case_qty: m.case_qty,
        cost_price: m.cost_price,
        reorder_value: m.reorder_value,
      },
      note: reorderWithinRounding ? undefined : staleNote(computed, m.reorder_qty),
      section: "§6",
    });
  }

  // --- overstock_qty (§6)
  {
    let computed: Num = null;
    let substituted = "not calculated";
    const od = settings.overstock_days;
    if (d !== null && SS !== null) {
      const keep = ceil(SS + dX! * od);
      computed = Math.max(0, m.on_hand - keep);
      substituted = `max(0, ${m.on_hand} − ⌈${SS} + ${rate(d)} × ${od} days⌉) = max(0, ${m.on_hand} − ${keep}) = ${computed}`;
    }
    push({
      key: "overstock_qty",
      label: "Overstock quantity",
      value: m.overstock_qty,
      unit: "units",
      formula: "max(0, on hand − ⌈SS + d × overstock_days⌉)",
      substituted,
      inputs: {
        on_hand: m.on_hand,
        safety_stock: SS,
        demand_rate: d,
        overstock_days: od,
        cost_price: m.cost_price,
        overstock_value: m.overstock_value,
      },
      note: staleNote(computed, m.overstock_qty),
      section: "§6",
    });
  }

  // --- days_of_cover (§6)
  {
    const computed = dX !== null && dX > 0 ? m.on_hand / dX : null;
    push({
      key: "days_of_cover",
      label: "Days of cover",
      value: m.days_of_cover,
      unit: "days",
      formula: "on hand ÷ d (— when d = 0)",
      substituted:
        computed === null
          ? `d = ${rate(d ?? 0)} → —`
          : `${m.on_hand} ÷ ${rate(d)} = ${num(computed, 1)} days`,
      inputs: { on_hand: m.on_hand, demand_rate: d },
      note: roundingNote(computed, m.days_of_cover, 1, (dd) => m.on_hand / dd),
      section: "§6",
    });
  }

  // --- stockout_date (§6)
  {
    // Arrivals per day, in order.
    const perDay = new Map<string, number>();
    for (const l of openLines) {
      const qty = Math.max(l.ordered_qty - l.received_qty, 0);
      const day = arrivalDay(l, D0, L);
      if (qty > 0 && day) perDay.set(day, (perDay.get(day) ?? 0) + qty);
    }
    const arrivals = [...perDay.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    // The walk with demand dd (the ceilings with the exact d, as the calculation has it).
    const walk = (dd: number) => {
      const steps: string[] = [];
      let c = m.on_hand;
      let terms = `${m.on_hand}`;
      for (let i = 0; ; i++) {
        const k = ceil(c / dd);
        const day = addDays(D0, k);
        const next = arrivals[i];
        const stepText = `D0 + ⌈${i > 0 ? `(${terms})` : terms} ÷ ${rate(d)}⌉ = ${D0} + ${k} ${k === 1 ? "day" : "days"} = ${day}`;
        if (!next || day < next[0]) {
          steps.push(next ? `${stepText}, before the next arrival on ${next[0]}` : stepText);
          return { day, steps };
        }
        steps.push(`${stepText} is not before the arrival of ${next[1]} on ${next[0]}`);
        c += next[1];
        terms += ` + ${next[1]}`;
      }
    };
    let computed: string | null = null;
    let substituted: string;
    if (d === null || d <= 0 || dX === null || dX <= 0) {
      substituted = `d = ${rate(d ?? 0)} → —`;
    } else if (m.on_hand === 0) {
      computed = D0;
      substituted = `on hand = 0 → D0 = ${D0}`;
    } else {
      const w = walk(dX);
      computed = w.day;
      substituted = w.steps.join("; ");
    }
    const inputs: Record<string, number | string | null> = {
      D0,
      on_hand: m.on_hand,
      demand_rate: d,
      lead_time_days: L,
    };
    for (const [day, qty] of arrivals) inputs[`arrival ${day}`] = qty;
    push({
      key: "stockout_date",
      label: "Estimated stock-out date",
      value: m.stockout_date,
      formula:
        "D0 + ⌈Cᵢ ÷ d⌉ for the first i whose day is before arrival i+1 (C₀ = on hand, Cᵢ = Cᵢ₋₁ + qᵢ; open lines arrive on date_expected, else date_ordered + ⌈L⌉, overdue ones on D0 + 1); D0 with nothing on hand; — when d = 0",
      substituted,
      inputs,
      note: roundingNote(computed, m.stockout_date, undefined, (dd) => (m.on_hand === 0 ? D0 : walk(dd).day)),
      section: "§6",
    });
  }

  // --- status (§7)
  {
    const checks: string[] = [];
    let matched: ProductStatus = "healthy";
    const ropText = m.reorder_point === null ? "—" : String(m.reorder_point);
    const untilStockout = m.stockout_date ? daysBetween(D0, m.stockout_date) : null;
    const low = settings.low_stock_days;
    const rules: [ProductStatus, boolean, string, string][] = [
      ["discontinued", m.discontinued, "the product is discontinued", "not discontinued"],
      ["excluded", excluded, whyExcluded, "not excluded"],
      [
        "new",
        m.is_new,
        `history ${m.history_days} days < 30`,
        `not new (history ${m.history_days} days ≥ 30)`,
      ],
      [
        "critical",
        d !== null && d > 0 && untilStockout !== null && untilStockout < low,
        `d = ${rate(d)} > 0 and the stock-out date ${m.stockout_date} is ${untilStockout} days after D0 (< ${low})`,
        d === null || d <= 0
          ? `not critical (d = ${rate(d ?? 0)})`
          : `not critical (stock-out ${m.stockout_date ?? "—"} is ${untilStockout ?? "—"} days after D0, ≥ ${low})`,
      ],
      [
        "reorder",
        m.reorder_point !== null && m.reorder_point > 0 && m.on_hand + m.on_order <= m.reorder_point,
        `ROP ${ropText} > 0 and on hand + on order = ${m.on_hand} + ${m.on_order} = ${m.on_hand + m.on_order} ≤ ${ropText}`,
        `no reorder (on hand + on order = ${m.on_hand + m.on_order}, ROP ${ropText})`,
      ],
      ["overstocked", m.overstock_qty > 0, `overstock ${m.overstock_qty} > 0`, "no overstock"],
    ];
    for (const [status, hit, yes, no] of rules) {
      if (hit) {
        matched = status;
        checks.push(`${yes} → ${status}`);
        break;
      }
      checks.push(no);
    }
    if (matched === "healthy") checks[checks.length - 1] += " → healthy";
    push({
      key: "status",
      label: "Status",
      value: m.status,
      formula:
        "the first rule that matches: discontinued; excluded (setting on, not replenishable, or not merchandise); new (history < 30 days); critical (d > 0 and stock-out fewer than low_stock_days after D0); reorder (ROP > 0 and on hand + on order ≤ ROP); overstocked (overstock > 0); healthy",
      substituted: checks.join("; "),
      inputs: {
        discontinued: m.discontinued ? "yes" : "no",
        excluded: excludedBySetting ? "yes" : "no",
        replenishable: m.replenishable ? "yes" : "no",
        kind: m.kind ?? "merchandise",
        history_days: m.history_days,
        demand_rate: d,
        stockout_date: m.stockout_date,
        low_stock_days: low,
        reorder_point: m.reorder_point,
        on_hand: m.on_hand,
        on_order: m.on_order,
        overstock_qty: m.overstock_qty,
      },
      note: staleNote(matched, m.status),
      section: "§7",
    });
  }

  // --- abc_class (§9)
  {
    const basis = settings.abc_calculation_basis;
    const value = m.abc_basis_value;
    const share = m.abc_share_before;
    const a = settings.abc_a_threshold;
    const b = settings.abc_b_threshold;
    let computed: string | null = null;
    let substituted = "not calculated";
    if (value !== null) {
      if (value <= 0) {
        computed = "C";
        substituted = `basis ${basis} = ${num(value, 2)} → C`;
      } else if (share !== null) {
        const head = `basis ${basis} = ${num(value, 2)} > 0; share before = ${num(share, 6)}`;
        if (share < a) {
          computed = "A";
          substituted = `${head} < ${num(a)} → A`;
        } else if (share < b) {
          computed = "B";
          substituted = `${head} ≥ ${num(a)} and < ${num(b)} → B`;
        } else {
          computed = "C";
          substituted = `${head} ≥ ${num(b)} → C`;
        }
      }
    }
    push({
      key: "abc_class",
      label: "ABC class",
      value: m.abc_class,
      formula:
        "rank by the basis, highest first (ties by pid); share before = basis of the products ranked before ÷ total of positive bases; A when basis > 0 and share before < A threshold, B when < B threshold, else C",
      substituted,
      inputs: { basis, basis_value: value, share_before: share, a_threshold: a, b_threshold: b },
      note: staleNote(computed, m.abc_class),
      section: "§9",
    });
  }

  // --- margin, sell-through, turnover, GMROI (§10)
  {
    const cost = m.cost_price;
    let computed: Num = null;
    let substituted: string;
    if (cost === null) substituted = "no cost price → —";
    else if (m.revenue_365d === 0) substituted = "revenue_365d = 0 → —";
    else {
      // The stored (rounded) cogs, as the calculation takes it.
      const cogs = m.cogs_365d ?? roundHalfAway(m.units_365d * cost, 2);
      const profit = roundHalfAway(m.revenue_365d - cogs, 2);
      computed = profit / m.revenue_365d;
      substituted = `cogs = ${m.units_365d} × ${price(cost)} = ${money(cogs)}; (${money(m.revenue_365d)} − ${money(cogs)}) ÷ ${money(m.revenue_365d)} = ${money(profit)} ÷ ${money(m.revenue_365d)} = ${num(computed)}`;
    }
    push({
      key: "margin_365d",
      label: "Margin (365 days)",
      value: m.margin_365d,
      formula:
        "gross profit ÷ revenue = (revenue_365d − cogs_365d) ÷ revenue_365d, cogs_365d = units_365d × cost",
      substituted,
      inputs: {
        revenue_365d: m.revenue_365d,
        units_365d: m.units_365d,
        cost_price: cost,
        cogs_365d: m.cogs_365d,
        gross_profit_365d: m.gross_profit_365d,
      },
      note: joinNotes(
        cost !== null &&
          m.cogs_365d !== null &&
          differs(m.units_365d * cost, m.cogs_365d, 2) &&
          changedSince(money(m.units_365d * cost), money(m.cogs_365d), "units_365d × cost gives"),
        staleNote(computed, m.margin_365d, 4),
      ),
      section: "§10",
    });
  }
  {
    const denom = m.units_30d + m.on_hand;
    const computed = denom > 0 ? m.units_30d / denom : null;
    push({
      key: "sell_through_30d",
      label: "Sell-through (30 days)",
      value: m.sell_through_30d,
      formula: "units_30d ÷ (units_30d + on hand)",
      substituted:
        denom > 0
          ? `${m.units_30d} ÷ (${m.units_30d} + ${m.on_hand}) = ${num(computed)}`
          : "units_30d + on hand = 0 → —",
      inputs: { units_30d: m.units_30d, on_hand: m.on_hand },
      note: staleNote(computed, m.sell_through_30d, 4),
      section: "§10",
    });
  }
  for (const [key, label, top, topName] of [
    ["turnover_365d", "Turnover (365 days)", m.cogs_365d, "cogs_365d"],
    ["gmroi_365d", "GMROI (365 days)", m.gross_profit_365d, "gross_profit_365d"],
  ] as const) {
    const cost = m.cost_price;
    const denom = cost === null ? null : m.avg_stock_units_365 * cost;
    const computed = top !== null && denom !== null && denom > 0 ? top / denom : null;
    push({
      key,
      label,
      value: m[key],
      formula: `${topName} ÷ (average stock units over 365 days × cost)`,
      substituted:
        computed !== null
          ? `${money(top)} ÷ (${num(m.avg_stock_units_365, 2)} × ${price(cost)}) = ${num(computed)}`
          : cost === null
            ? "no cost price → —"
            : top === null
              ? `${topName} not calculated → —`
              : "average stock × cost = 0 → —",
      inputs: { [topName]: top, avg_stock_units_365: m.avg_stock_units_365, cost_price: cost },
      note: staleNote(computed, m[key], 4),
      section: "§10",
    });
  }

  // --- forecast (§8)
  {
    let substituted: string;
    let note: string | undefined;
    if (!forecast) {
      substituted = excluded ? "excluded → no forecast" : "no forecast stored";
    } else {
      const total = forecast.weekly.reduce((s, w) => s + w, 0);
      const show = weekTerms(
        forecast.weekly.map((w) => ({ w, k: 1 })),
        roundHalfAway(total, 2),
      );
      substituted = `${forecast.method}: ${forecast.weekly.map(show).join(" + ")} = ${num(total, 2)}`;
      if (forecast.chosen_by_backtest)
        note =
          forecast.method === forecast.requested_method
            ? `${forecast.method} ran: auto_forecast_method compared it with ${forecast.method === "standard" ? "seasonal" : "standard"} and kept it (the global default) for its lower backtest error.`
            : `${forecast.method} ran: auto_forecast_method chose it over ${forecast.requested_method} (the global default) for its lower backtest error.`;
      else if (forecast.method !== forecast.requested_method)
        note = `${forecast.requested_method} was asked for but needs at least 53 weeks of history: ${forecast.method} ran instead.`;
    }
    push({
      key: "forecast",
      label: "Forecast (13 weeks)",
      value: forecast ? roundHalfAway(forecast.total_91d, 2) : null,
      unit: "units",
      formula:
        forecast?.method === "seasonal"
          ? "seasonal: Fₕ = mean of the same week last year and its neighbours × growth g (clamped 0.5…2); total = Σ F₁…F₁₃"
          : "standard: Fₕ = max(0, ℓ + b × (φ + … + φʰ)), ℓ = exponentially weighted level (α = 0.2), b = damped trend (φ = 0.8); total = Σ F₁…F₁₃",
      substituted,
      inputs: {
        method: forecast?.method ?? null,
        requested_method: forecast?.requested_method ?? params?.forecast_method ?? null,
        // 1 when auto_forecast_method chose the method by its lower backtest error, else 0.
        chosen_by_backtest: forecast?.chosen_by_backtest ? 1 : 0,
        // Where the requested method is set: the product's own setting or the global default.
        method_source: params?.sources.forecast_method ?? null,
        week_start: forecast?.week_start ?? null,
        total_91d: forecast?.total_91d ?? null,
      },
      note,
      section: "§8",
    });
  }

  for (const f of [
    ...stockValueFigures(m),
    ...salesFigures(m, input.windows),
    ...stockDayFigures(m, input.runs),
    averageStockFigure(m, input.runs),
    leadTimeMeasuredFigure(m, input.leadTimeSamples),
    ...orderValueFigures(m),
    forecastWeekOneFigure(m, forecast, input.history, excluded),
    backtestFigure(m, forecast, input.history, input.accuracy, excluded),
  ])
    push(f);

  const figures = EXPLAINED_FIGURE_KEYS.flatMap((k) => byKey.get(k) ?? []);
  const status = (PRODUCT_STATUSES as readonly string[]).includes(m.status ?? "")
    ? (m.status as ProductStatus)
    : null;
  return {
    pid: m.pid,
    title: m.title,
    sku: m.sku,
    as_of: m.calculated_at.toISOString(),
    d0: D0,
    status,
    figures,
  };
}

// ---------------------------------------------------------------------------------------------
// Stock value and sales windows (§1)

function stockValueFigures(m: ExplainRow): Fig[] {
  const cost = m.cost_price;
  // Non-merchandise (postage, fees, gift cards) has no stock value (§1): a voucher on hand is not stock.
  const nonMerchandise = (m.kind ?? "merchandise") !== "merchandise";
  const atCost = nonMerchandise ? 0 : m.on_hand * (cost ?? 0);
  const atRetail = nonMerchandise ? 0 : m.on_hand * m.price;
  const notStock = `not merchandise (${m.kind}) → 0`;
  return [
    {
      key: "stock_value_cost",
      label: "Stock value at cost",
      value: m.stock_value_cost,
      formula: "on hand × cost price (0 without a cost; 0 for non-merchandise)",
      substituted: nonMerchandise
        ? notStock
        : cost === null
          ? `no cost price → ${m.on_hand} × 0 = 0.00`
          : `${m.on_hand} × ${price(cost)} = ${money(atCost)}`,
      inputs: { on_hand: m.on_hand, cost_price: cost },
      note: staleNote(atCost, m.stock_value_cost, 2),
      section: "§1",
    },
    {
      key: "stock_value_retail",
      label: "Stock value at retail",
      value: m.stock_value_retail,
      formula: "on hand × price (0 for non-merchandise)",
      substituted: nonMerchandise ? notStock : `${m.on_hand} × ${price(m.price)} = ${money(atRetail)}`,
      inputs: { on_hand: m.on_hand, price: m.price },
      note: staleNote(atRetail, m.stock_value_retail, 2),
      section: "§1",
    },
  ];
}

const SALES_WINDOWS = [7, 30, 90, 365] as const;

function salesFigures(m: ExplainRow, w: SalesWindows | null): Fig[] {
  const windows = [
    ...SALES_WINDOWS.map((n) => `${n} days (${dayRange(addDays(m.d0, 1 - n), m.d0)})`),
    w?.first_sold ? `lifetime (first sale ${w.first_sold})` : "lifetime",
  ];
  const figureOf = (
    key: "sales_units" | "sales_revenue",
    label: string,
    formula: string,
    names: string[],
    stored: number[],
    computed: number[] | null,
    show: (x: number) => string,
    dp?: number,
  ): Fig => {
    const shown = computed ?? stored;
    const stale = computed?.some((c, i) => differs(c, stored[i]!, dp));
    return {
      key,
      label,
      value: stored.map(show).join(" / "),
      formula,
      substituted: windows.map((text, i) => `${text} = ${show(shown[i]!)}`).join("; "),
      inputs: Object.fromEntries(names.map((name, i) => [name, stored[i]!])),
      note: stale
        ? changedSince(computed!.map(show).join(" / "), stored.map(show).join(" / "), "The order lines give")
        : undefined,
      section: "§1",
    };
  };
  return [
    figureOf(
      "sales_units",
      "Units sold (7 / 30 / 90 / 365 days / lifetime)",
      "Σ quantity of the sales (completed order lines up to asOf) whose UTC day is one of the last N days, D0 − N + 1 … D0 (N = 7, 30, 90, 365); lifetime: every sale",
      ["units_7d", "units_30d", "units_90d", "units_365d", "total_sold"],
      [m.units_7d, m.units_30d, m.units_90d, m.units_365d, m.total_sold],
      w?.units ?? null,
      (x) => num(x),
    ),
    figureOf(
      "sales_revenue",
      "Revenue (7 / 30 / 90 / 365 days / lifetime)",
      "Σ (quantity × price − discount) of the same sales: the last N days (N = 7, 30, 90, 365) and every sale",
      ["revenue_7d", "revenue_30d", "revenue_90d", "revenue_365d", "lifetime_revenue"],
      [m.revenue_7d, m.revenue_30d, m.revenue_90d, m.revenue_365d, m.lifetime_revenue],
      w?.revenue ?? null,
      money,
      2,
    ),
  ];
}

// ---------------------------------------------------------------------------------------------
// Days in and out of stock, average stock (§2)

/** The days of the last n that fall in the product's life: from the later of life start and D0 − n + 1. */
function lifeWindow(m: ExplainRow, n: number): { from: string | null; days: number } {
  const start = addDays(m.d0, 1 - n);
  const life = m.history_start;
  if (life === null || life > m.d0) return { from: null, days: 0 };
  const from = life > start ? life : start;
  return { from, days: daysBetween(from, m.d0) + 1 };
}

/**
 * Days out of stock among the last n, from the stored runs: every day of a run with closing stock
 * ≤ 0, except its first when that day had sales (it sold its last units: in stock).
 */
function outOfStockDays(m: ExplainRow, runs: StockRun[], n: number) {
  const start = addDays(m.d0, 1 - n);
  const periods: { from: string; to: string; days: number }[] = [];
  for (const r of runs) {
    if (r.stock > 0 || r.valid_to < start) continue;
    const from =
      r.valid_from < start ? start : r.sold_first_day > 0 ? addDays(r.valid_from, 1) : r.valid_from;
    if (from > r.valid_to) continue;
    periods.push({ from, to: r.valid_to, days: daysBetween(from, r.valid_to) + 1 });
  }
  return { periods, days: periods.reduce((s, p) => s + p.days, 0) };
}

/** σd's weeks (§3): the last 13 weeks of 7 days ending on D0, at most the full weeks of the life. */
const SIGMA_WEEKS = 13;

/**
 * σd's weekly buckets from the stored runs (§3): per week k of the product's full weeks since its
 * life start (at most 13), its units (the runs' first days; bulk orders left out; below 0 counts 0)
 * when it was out of stock on fewer than 4 of its 7 days, else it is listed as out of stock.
 */
function weeklyDemand(m: ExplainRow, runs: StockRun[], bulk: { day: string; units: number }[]) {
  const weeksInLife = Math.min(SIGMA_WEEKS, Math.floor(Math.max(m.history_days, 0) / 7));
  const units = new Array<number>(weeksInLife).fill(0);
  const out = new Array<number>(weeksInLife).fill(0);
  const start = addDays(m.d0, -7 * weeksInLife + 1);
  const weekOf = (day: string) => Math.floor(daysBetween(day, m.d0) / 7);
  for (const r of runs) {
    if (r.valid_to < start) continue;
    const add = (a: number[], k: number, v: number) => {
      a[k] = (a[k] ?? 0) + v;
    };
    if (r.valid_from >= start) add(units, weekOf(r.valid_from), r.sold_first_day);
    if (r.stock > 0) continue;
    let from = r.valid_from < start ? start : r.valid_from;
    if (from === r.valid_from && r.sold_first_day > 0) from = addDays(from, 1);
    for (let day = from; day <= r.valid_to; day = addDays(day, 1)) add(out, weekOf(day), 1);
  }
  for (const b of bulk) if (b.day >= start) units[weekOf(b.day)] = (units[weekOf(b.day)] ?? 0) - b.units;
  const weeks: number[] = [];
  const outWeeks: number[] = [];
  for (let k = weeksInLife - 1; k >= 0; k--) {
    if ((out[k] ?? 0) >= 4) outWeeks.push(k);
    else weeks.push(Math.max(units[k] ?? 0, 0));
  }
  return { weeksInLife, weeks, outWeeks };
}

const MAX_LISTED = 6;

function stockDayFigures(m: ExplainRow, runs: StockRun[]): Fig[] {
  return ([90, 365] as const).map((n): Fig => {
    const life = lifeWindow(m, n);
    const out = outOfStockDays(m, runs, n);
    const inStock = life.days - out.days;
    const storedOut = n === 90 ? m.out_of_stock_days_90 : m.out_of_stock_days_365;
    const storedIn = n === 90 ? m.in_stock_days_90 : Math.max(0, life.days - storedOut);
    const listed = out.periods.slice(0, MAX_LISTED).map((p) => `${dayRange(p.from, p.to)} (${p.days})`);
    if (out.periods.length > MAX_LISTED) listed.push(`and ${out.periods.length - MAX_LISTED} more periods`);
    let substituted: string;
    if (m.history_start === null) substituted = "no life start → 0 days in its life → 0";
    else if (life.from === null)
      substituted = `life start ${m.history_start} is after D0 → 0 days in its life → 0`;
    else
      substituted =
        `life start ${m.history_start} → days of the last ${n} in its life: ${dayRange(life.from, m.d0)} = ${life.days}; ` +
        `out of stock: ${out.days > 0 ? `${listed.join(", ")} = ${out.days}` : "none"} → in stock ${life.days} − ${out.days} = ${inStock}`;
    const stale = differs(out.days, storedOut) || differs(inStock, storedIn);
    return {
      key: n === 90 ? "days_in_stock_90" : "days_in_stock_365",
      label: `Days in stock (last ${n} days)`,
      value: storedIn,
      unit: "days",
      formula: `days of the last ${n} in the product's life (from the later of its life start and D0 − ${n - 1}) − days out of stock (closing stock ≤ 0 and nothing sold that day)`,
      substituted,
      inputs: {
        life_start: m.history_start,
        days_in_life: life.days,
        [`out_of_stock_days_${n}`]: storedOut,
        ...(n === 90 ? { in_stock_days_90: m.in_stock_days_90 } : {}),
      },
      note: joinNotes(
        n === 90 &&
          life.days < 90 &&
          life.from !== null &&
          `${90 - life.days} of the last 90 days are before the product's life started.`,
        stale &&
          changedSince(
            `${inStock} in stock, ${out.days} out of stock`,
            `${storedIn} in stock, ${storedOut} out of stock`,
            "The life start and stock runs give",
          ),
      ),
      section: "§2",
    };
  });
}

const MAX_TERMS = 8;

function averageStockFigure(m: ExplainRow, runs: StockRun[]): Fig {
  const life = lifeWindow(m, 365);
  const start = addDays(m.d0, -364);
  const kept = runs.filter((r) => r.valid_to >= start && r.valid_from <= m.d0);
  const terms = kept.map((r) => {
    const from = r.valid_from < start ? start : r.valid_from;
    const to = r.valid_to > m.d0 ? m.d0 : r.valid_to;
    return { stock: Math.max(r.stock, 0), days: daysBetween(from, to) + 1 };
  });
  const sum = terms.reduce((s, t) => s + t.stock * t.days, 0);
  const computed = life.days > 0 ? sum / life.days : 0;
  let substituted: string;
  if (life.from === null) substituted = "no days of the last 365 in its life → 0";
  else {
    const written =
      terms.length <= MAX_TERMS
        ? `${terms.map((t) => `${t.stock} × ${t.days}`).join(" + ") || "0"} = ${sum}`
        : `${sum} (${terms.length} runs of equal closing stock, each × its days)`;
    substituted = `Σ max(S(d), 0) over ${dayRange(life.from, m.d0)} = ${written}; ${sum} ÷ ${life.days} = ${num(computed, 2)}`;
  }
  return {
    key: "avg_stock_units_365",
    label: "Average stock (365 days)",
    value: m.avg_stock_units_365,
    unit: "units",
    formula:
      "mean of max(S(d), 0) over the days of the last 365 in the product's life, S(d) = the closing stock reconstructed backwards (0 when there are none)",
    substituted,
    inputs: { life_start: m.history_start, days_in_life: life.days, stock_runs: kept.length },
    note: staleNote(computed, m.avg_stock_units_365, 2),
    section: "§2",
  };
}

// ---------------------------------------------------------------------------------------------
// Measured lead time (§4)

const MIN_LEAD_TIME_SAMPLES = 3;

function leadTimeMeasuredFigure(m: ExplainRow, samples: LeadTimeSamples | null): Fig {
  const base = {
    key: "lead_time_measured" as const,
    label: "Measured lead time",
    value: m.lead_time_measured,
    unit: "days",
    formula:
      "samples: lines of purchase orders not cancelled, ordered in the last 365 days (D0 − 364 … D0), with a receipt up to D0; a sample's days = first receipt − ordered. The product's own samples when it has at least 3, else its vendor's (every line of the vendor's purchase orders) when the vendor has at least 3: their mean and sample standard deviation; else none",
    section: "§4",
  };
  const stored = {
    level: m.lead_time_measured_level,
    samples: m.lead_time_measured_samples,
    mean: m.lead_time_measured,
    std: m.lead_time_measured_std,
  };
  if (!samples) return { ...base, substituted: "samples not read", inputs: stored };
  const own = samples.product;
  const vendor = samples.vendor;
  const level =
    own.count >= MIN_LEAD_TIME_SAMPLES
      ? "product"
      : vendor && vendor.count >= MIN_LEAD_TIME_SAMPLES
        ? "vendor"
        : null;
  const enough = (set: LeadTimeSampleSet) => (set.count >= MIN_LEAD_TIME_SAMPLES ? "≥ 3" : "< 3");
  const list = (set: LeadTimeSampleSet) => {
    const shown = set.listed.map(
      (s) =>
        `PO ${s.po_id}${s.lines > 1 ? ` × ${s.lines} lines` : ""} (ordered ${s.date_ordered}, first receipt ${s.first_received}) ${plural(s.days, "day")}`,
    );
    const listedLines = set.listed.reduce((n, s) => n + s.lines, 0);
    if (set.count > listedLines) shown.push(`and ${set.count - listedLines} more`);
    return shown.length ? `: ${shown.join(", ")}` : "";
  };
  const parts = [`own samples: ${own.count} (${enough(own)})${list(own)}`];
  if (level !== "product") {
    const name = m.vendor_name ?? (m.vendor_id === null ? null : `#${m.vendor_id}`);
    parts.push(
      vendor && name
        ? `vendor ${name}'s samples: ${vendor.count} (${enough(vendor)})${level === "vendor" ? list(vendor) : ""}`
        : "no vendor",
    );
  }
  const set = level === "product" ? own : level === "vendor" ? vendor : null;
  let computed = { level: null as string | null, samples: 0, mean: null as Num, std: null as Num };
  let result = "no measurement";
  if (set && level) {
    const n = set.count;
    const mean = set.sum / n;
    const std = Math.sqrt(Math.max(0, (set.sum_sq - set.sum ** 2 / n) / (n - 1)));
    computed = { level, samples: n, mean, std };
    result = `mean = ${num(set.sum)} ÷ ${n} = ${days(roundHalfAway(mean, 2))}, s = √((${num(set.sum_sq)} − ${num(set.sum)}²/${n}) ÷ ${n - 1}) = ${days(roundHalfAway(std, 2))}`;
  }
  const describe = (x: typeof computed) =>
    x.level === null || x.mean === null
      ? "no measurement"
      : `${num(x.mean, 2)} ± ${num(x.std, 2)} days from ${x.samples} ${x.level} samples`;
  const stale =
    computed.level !== stored.level ||
    computed.samples !== stored.samples ||
    (computed.mean !== null && stored.mean !== null && differs(computed.mean, stored.mean, 2)) ||
    (computed.std !== null && stored.std !== null && differs(computed.std, stored.std, 2));
  return {
    ...base,
    substituted: `${parts.join("; ")} → ${result}`,
    inputs: { ...stored, own_samples: own.count, vendor_samples: vendor?.count ?? null },
    note: stale ? changedSince(describe(computed), describe(stored), "The samples give") : undefined,
  };
}

// ---------------------------------------------------------------------------------------------
// Reorder and overstock value (§6)

function orderValueFigures(m: ExplainRow): Fig[] {
  const cost = m.cost_price;
  return (
    [
      ["reorder_value", "Reorder value", "reorder_qty", m.reorder_qty, m.reorder_value],
      ["overstock_value", "Overstock value", "overstock_qty", m.overstock_qty, m.overstock_value],
    ] as const
  ).map(([key, label, qtyName, qty, stored]): Fig => {
    const computed = qty * (cost ?? 0);
    return {
      key,
      label,
      value: stored,
      formula: `${qtyName} × cost price (0 without a cost)`,
      substituted:
        cost === null
          ? `no cost price → ${qty} × $0 = ${money(0)}`
          : `${qty} × ${price(cost)} = ${money(computed)}`,
      inputs: { [qtyName]: qty, cost_price: cost },
      note: staleNote(computed, stored, 2),
      section: "§6",
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Forecast working and backtest (§8), recomputed from the weekly history

const PHI = 0.8;
const MAX_WEEKS = 104;
const BACKTEST_WEEKS = 8;
const SEASONAL_MIN_WEEKS = 53;

/** n = min(104, ⌊history_days ÷ 7⌋): the full weeks of the product's life. */
const weeksOf = (m: ExplainRow) => Math.min(MAX_WEEKS, Math.floor(Math.max(m.history_days, 0) / 7));

/** x₁ … xₙ (oldest first) from the 104-week history, or null without it. */
function seriesOf(m: ExplainRow, history: number[] | null): number[] | null {
  if (!history || history.length < MAX_WEEKS) return null;
  const n = weeksOf(m);
  return history.slice(history.length - n);
}

/** Week k (0 = the one ending on D0) as "start … end". */
const weekText = (d0: string, k: number) => dayRange(addDays(d0, -7 * k - 6), addDays(d0, -7 * k));

interface StandardFit {
  level: number;
  trend: number;
  sumW: number;
  sumWX: number;
  /** Trend weeks (0 when n < 8), Σ(t − t̄)·xₜ and Σ(t − t̄)² over them */
  trendWeeks: number;
  sxy: number;
  sxx: number;
}

/** Gardner's damped trend in closed form (§8): ℓ over all the weeks, b over the last min(n, 26). */
function standardFit(xs: number[]): StandardFit {
  const n = xs.length;
  let sumW = 0;
  let sumWX = 0;
  for (let t = 1; t <= n; t++) {
    const w = PHI ** (n - t);
    sumW += w;
    sumWX += w * xs[t - 1]!;
  }
  const level = n > 0 ? sumWX / sumW : 0;
  if (n < 8) return { level, trend: 0, sumW, sumWX, trendWeeks: 0, sxy: 0, sxx: 0 };
  const weeks = Math.min(n, 26);
  const mean = n - (weeks - 1) / 2;
  let sxy = 0;
  let sxx = 0;
  for (let t = n - weeks + 1; t <= n; t++) {
    sxy += (t - mean) * xs[t - 1]!;
    sxx += (t - mean) ** 2;
  }
  return { level, trend: sxy / sxx, sumW, sumWX, trendWeeks: weeks, sxy, sxx };
}

const standardNext = (xs: number[]) => {
  const f = standardFit(xs);
  return Math.max(0, f.level + f.trend * PHI);
};

/** Forecasts agree when they are equal to 1e-6 (relative above 1). */
const agrees = (a: Num, b: Num) =>
  a === null || b === null ? a === b : Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b));

function forecastWeekOneFigure(
  m: ExplainRow,
  forecast: ForecastRow | null,
  history: number[] | null,
  excluded: boolean,
): Fig {
  const seasonal = forecast?.method === "seasonal";
  const stored = forecast?.weekly[0] ?? null;
  const base = {
    key: "forecast_week_1" as const,
    label: "Forecast week 1 (F₁)",
    value: stored,
    unit: "units",
    formula: seasonal
      ? "seasonal: base₁ = mean of x at t = n − 52, n − 51, n − 50 (the same week last year and its neighbours); g = Σ of the last 52 weeks ÷ Σ of the 52 before (when n = 104 and that sum > 0, else 1), clamped to 0.5 … 2; F₁ = base₁ × g. Under two years (53 ≤ n < 104) smoothed: F₁ = w × B₅ + (1 − w) × Ȳ × C₁ with w = n ÷ 104, B₅ = mean of x at t = n − 53 … n − 49 (from t = 1), Ȳ = mean of the last 52 weeks, C₁ = the primary category's index (its other products' mean of the same 5 weeks ÷ their mean of the 52; 1 without one)"
      : "standard: ℓ = Σ 0.8^(n−t)·xₜ ÷ Σ 0.8^(n−t) over the n full weeks of the product's life (α = 0.2); b = least-squares slope of xₜ on t over the last min(n, 26) weeks (0 when n < 8); F₁ = max(0, ℓ + b × φ), φ = 0.8",
    section: "§8",
  };
  if (!forecast)
    return {
      ...base,
      substituted: excluded ? "excluded → no forecast" : "no forecast stored",
      inputs: { method: null },
    };
  const xs = seriesOf(m, history);
  if (!xs) return { ...base, substituted: "weekly history not read", inputs: { method: forecast.method } };
  const n = xs.length;
  const full = Math.floor(Math.max(m.history_days, 0) / 7);
  const weeks =
    full > MAX_WEEKS
      ? `n = min(104, ⌊${m.history_days} ÷ 7⌋) = ${n} weeks`
      : `n = ⌊${m.history_days} ÷ 7⌋ = ${plural(n, "week")}`;
  let computed: number;
  let working: string;
  let inputs: Record<string, number | string | null>;
  if (seasonal && n >= SEASONAL_MIN_WEEKS && n < MAX_WEEKS && stored !== null) {
    // Smoothed (§8): B₅ over weeks k = 53 … 49 (t = n − 53 … n − 49, from t = 1), Ȳ over k = 51 … 0.
    // The category's index is not recomputed here (it needs the category's other products): it is
    // read back from the stored F₁, so the working shows how F₁ is made up.
    const w = n / MAX_WEEKS;
    const ks = [53, 52, 51, 50, 49].filter((k) => k <= n - 1);
    const xsK = ks.map((k) => xs[n - k - 1]!);
    const b5 = xsK.reduce((a, x) => a + x, 0) / ks.length;
    const year = xs.slice(n - 52).reduce((a, x) => a + x, 0) / 52;
    const c1 = year > 0 ? (stored - w * b5) / ((1 - w) * year) : 1;
    computed = w * b5 + (1 - w) * year * c1;
    working = `${weeks} < 104 → smoothed; w = ${n} ÷ 104 = ${num(w)}; B₅ = mean of the weeks ${ks.map((k, i) => `${weekText(m.d0, k)} (${num(xsK[i]!)})`).join(", ")} = ${small(b5)}; Ȳ = mean of the last 52 weeks = ${small(year)}; C₁ = ${num(c1)} (the primary category's index, as the calculation used it: (F₁ − w × B₅) ÷ ((1 − w) × Ȳ)); F₁ = ${num(w)} × ${small(b5)} + ${num(1 - w)} × ${small(year)} × ${num(c1)} = ${small(computed)}`;
    inputs = { method: forecast.method, n, w, b5, year_mean: year, category_index: c1, stored_f1: stored };
  } else if (seasonal && n >= SEASONAL_MIN_WEEKS) {
    // t = n − 52, n − 51, n − 50 are weeks k = 52, 51, 50 before D0's.
    const ks = [52, 51, 50];
    const xsK = ks.map((k) => xs[n - k - 1]!);
    const base1 = (xsK[0]! + xsK[1]! + xsK[2]!) / 3;
    let growth = 1;
    let growthText: string;
    if (n >= MAX_WEEKS) {
      const last = xs.slice(n - 52).reduce((s, x) => s + x, 0);
      const before = xs.slice(n - 104, n - 52).reduce((s, x) => s + x, 0);
      if (before > 0) {
        const ratio = last / before;
        growth = Math.min(2, Math.max(0.5, ratio));
        growthText = `g = Σ of the last 52 weeks ÷ Σ of the 52 before = ${num(last)} ÷ ${num(before)} = ${num(ratio)}${growth !== ratio ? ` → clamped to ${num(growth)}` : ""}`;
      } else growthText = "g = 1 (the 52 weeks before the last 52 sold nothing)";
    } else growthText = `g = 1 (n = ${n} < 104)`;
    computed = base1 * growth;
    working = `${weeks}; base₁ = mean of the weeks ${ks.map((k, i) => `${weekText(m.d0, k)} (${num(xsK[i]!)})`).join(", ")} = (${xsK.map((x) => num(x)).join(" + ")}) ÷ 3 = ${small(base1)}; ${growthText}; F₁ = base₁ × g = ${small(base1)} × ${num(growth)} = ${small(computed)}`;
    inputs = {
      method: forecast.method,
      n,
      base_1: base1,
      growth,
      recomputed_f1: computed,
      stored_f1: stored,
    };
  } else {
    const fit = standardFit(xs);
    computed = Math.max(0, fit.level + fit.trend * PHI);
    const trendText =
      n < 8
        ? `b = 0 (n = ${n} < 8)`
        : `b = Σ(t − t̄)·xₜ ÷ Σ(t − t̄)² over the last ${fit.trendWeeks} weeks = ${small(fit.sxy)} ÷ ${num(fit.sxx)} = ${small(fit.trend)}`;
    const plusTrend =
      fit.trend < 0
        ? `${small(fit.level)} − ${small(-fit.trend)} × 0.8`
        : `${small(fit.level)} + ${small(fit.trend)} × 0.8`;
    working =
      n === 0
        ? `${weeks}: no history → F₁ = 0`
        : `${weeks}; ℓ = Σ 0.8^(n−t)·xₜ ÷ Σ 0.8^(n−t) = ${small(fit.sumWX)} ÷ ${num(fit.sumW)} = ${small(fit.level)}; ${trendText}; F₁ = max(0, ${plusTrend}) = ${small(computed)}`;
    inputs = {
      method: forecast.method,
      n,
      level: fit.level,
      trend: fit.trend,
      recomputed_f1: computed,
      stored_f1: stored,
    };
  }
  if (!agrees(computed, stored))
    return {
      ...base,
      substituted: `F₁ = ${num(stored)} as stored (the working is left out: see the note)`,
      inputs,
      note: changedSince(
        num(computed),
        num(stored),
        "Recomputed from the weekly sales history, week 1 comes to",
      ),
    };
  return { ...base, substituted: working, inputs };
}

interface BacktestSums {
  method: string;
  actual: number;
  absErr: number;
  err: number;
  wape: Num;
  mape: Num;
  bias: Num;
  /** Weeks with A > 0 (the MAPE's); null when taken from the stored row */
  positive: number | null;
}

/**
 * Standard's backtest (§8) on x₁ … xₙ: each of the last 8 weeks forecast from the weeks before it.
 * Seasonal is not recomputed: at every backtest week it has under 104 weeks, so it is smoothed with
 * its category's index (the category's other products), which the explanation does not read; its
 * stored row is shown. `seasonal` marks the weeks where it ran (53 weeks before the week at least).
 */
function backtestOf(xs: number[]) {
  const n = xs.length;
  const weeks: { t: number; a: number; standard: number; seasonal: boolean }[] = [];
  for (let t = n - BACKTEST_WEEKS + 1; t <= n; t++) {
    const before = xs.slice(0, t - 1);
    weeks.push({ t, a: xs[t - 1]!, standard: standardNext(before), seasonal: t - 1 >= SEASONAL_MIN_WEEKS });
  }
  /** Standard's sums over the weeks `only` picks (all by default). */
  const sums = (only: (w: (typeof weeks)[number]) => boolean = () => true): BacktestSums => {
    let actual = 0;
    let absErr = 0;
    let err = 0;
    let ape = 0;
    let positive = 0;
    for (const w of weeks.filter(only)) {
      const f = w.standard;
      actual += w.a;
      absErr += Math.abs(w.a - f);
      err += f - w.a;
      if (w.a > 0) {
        ape += Math.abs(w.a - f) / w.a;
        positive++;
      }
    }
    return {
      method: "standard",
      actual,
      absErr,
      err,
      wape: actual === 0 ? null : absErr / actual,
      mape: positive === 0 ? null : ape / positive,
      bias: actual === 0 ? null : err / actual,
      positive,
    };
  };
  return { weeks, standard: sums(), standardWhereSeasonal: sums((w) => w.seasonal) };
}

const summary = (sums: BacktestSums[]) =>
  sums
    .map(
      (s) =>
        `${s.method}: ΣA ${num(s.actual)}, WAPE ${num(s.wape)}, MAPE ${num(s.mape)}, bias ${num(s.bias)}`,
    )
    .join("; ");

/** A stored row's sums (Σ|A − F| = WAPE × ΣA, Σ(F − A) = bias × ΣA). */
const storedSums = (r: AccuracyRow): BacktestSums => ({
  method: r.method,
  actual: r.actual,
  absErr: (r.wape ?? 0) * r.actual,
  err: (r.bias ?? 0) * r.actual,
  wape: r.wape,
  mape: r.mape,
  bias: r.bias,
  positive: null,
});

function backtestFigure(
  m: ExplainRow,
  forecast: ForecastRow | null,
  history: number[] | null,
  accuracy: AccuracyRow[],
  excluded: boolean,
): Fig {
  const n = weeksOf(m);
  const base = {
    key: "backtest" as const,
    label: "Backtest: the better fit (last 8 weeks)",
    formula:
      "each method forecasts each of the last 8 weeks from the weeks before it only; A = the week's units, F = its forecast: WAPE = Σ|A − F| ÷ ΣA, MAPE = mean of |A − F| ÷ A over the weeks with A > 0, bias = Σ(F − A) ÷ ΣA (positive = over-forecast). Seasonal runs only at the weeks with 53 weeks before them (smoothed: under 104) and is scored only there; the two are compared over the weeks where both ran, the lower WAPE fits better",
    section: "§8",
  };
  const rows = [...accuracy].sort((a, b) => (a.method === "standard" ? -1 : b.method === "standard" ? 1 : 0));
  if (rows.length === 0)
    return {
      ...base,
      value: null,
      substituted:
        excluded && !forecast
          ? "excluded → no backtest"
          : n < BACKTEST_WEEKS + 1
            ? `n = ${plural(n, "week")} < 9 → no backtest`
            : "no backtest stored",
      inputs: { n },
    };
  const xs = seriesOf(m, history);
  const recomputed = xs && xs.length > BACKTEST_WEEKS ? backtestOf(xs) : null;
  const stdRow = rows.find((r) => r.method === "standard");
  const seaRow = rows.find((r) => r.method === "seasonal");
  const consistent =
    recomputed !== null &&
    stdRow !== undefined &&
    agrees(recomputed.standard.actual, stdRow.actual) &&
    agrees(recomputed.standard.wape, stdRow.wape) &&
    agrees(recomputed.standard.mape, stdRow.mape) &&
    agrees(recomputed.standard.bias, stdRow.bias);
  const sums: BacktestSums[] = rows.map((r) =>
    r.method === "standard" && consistent && recomputed ? recomputed.standard : storedSums(r),
  );
  const parts = rows.map((r, i) => {
    const s = sums[i]!;
    const over = r.weeks < BACKTEST_WEEKS ? ` (over the ${plural(r.weeks, "week")} where it ran)` : "";
    if (r.weeks === 0)
      return `${s.method}: ran at none of the 8 weeks (each had fewer than 53 weeks before it) → WAPE, MAPE and bias are —`;
    return s.actual === 0 || s.wape === null
      ? `${s.method}${over}: ΣA = ${num(s.actual)} → WAPE, MAPE and bias are —`
      : `${s.method}${over}: Σ|A − F| = ${num(s.absErr)}, ΣA = ${num(s.actual)} → WAPE = ${num(s.absErr)} ÷ ${num(s.actual)} = ${num(s.wape)}; MAPE = ${num(s.mape)}${s.positive === null ? "" : ` (over the ${plural(s.positive, "week")} with A > 0)`}; bias = Σ(F − A) ÷ ΣA = ${num(s.err)} ÷ ${num(s.actual)} = ${num(s.bias)}`;
  });
  // The comparison, over the weeks where both ran: seasonal's. When it ran at every week the two
  // rows are over the same weeks; when at some, standard's error over those weeks comes from the
  // history; when at none, there is nothing to compare.
  const sea = seaRow ? sums[rows.indexOf(seaRow)]! : undefined;
  let std: BacktestSums | null = null;
  let why: string | null = null;
  if (!seaRow || !sea) why = "no seasonal backtest stored";
  else if (seaRow.weeks === 0) why = `seasonal ran at none of the 8 weeks (n = ${n} ≤ 53): not compared`;
  else if (seaRow.weeks === BACKTEST_WEEKS) std = stdRow ? sums[rows.indexOf(stdRow)]! : null;
  else if (consistent && recomputed) std = recomputed.standardWhereSeasonal;
  else
    why = `seasonal ran at ${seaRow.weeks} of the 8 weeks and standard's error over them is not recomputed (see the note): not compared`;
  let value: string | null = null;
  let verdict = why ? ` → ${why}` : "";
  if (std && sea) {
    const over =
      seaRow!.weeks < BACKTEST_WEEKS ? ` over the ${plural(seaRow!.weeks, "week")} where both ran` : "";
    if (std.wape === null || sea.wape === null)
      verdict = ` → not compared: nothing was sold in the weeks where both ran (ΣA = ${num(sea.actual)})`;
    else if (Math.abs(std.wape - sea.wape) <= 1e-9 * Math.max(1, std.wape)) {
      value = "equal";
      verdict = ` → both fit the same${over} (WAPE ${num(std.wape)})`;
    } else {
      const [better, worse] = std.wape < sea.wape ? [std, sea] : [sea, std];
      value = better.method;
      verdict = ` → ${better.method} fits better${over} (WAPE ${num(better.wape)} < ${num(worse.wape)})`;
    }
  }
  const inputs: Record<string, number | string | null> = { n, weeks: stdRow?.weeks ?? BACKTEST_WEEKS };
  for (const r of rows) {
    inputs[`${r.method}_weeks`] = r.weeks;
    inputs[`${r.method}_actual`] = r.actual;
    inputs[`${r.method}_wape`] = r.wape;
    inputs[`${r.method}_mape`] = r.mape;
    inputs[`${r.method}_bias`] = r.bias;
  }
  if (consistent && recomputed)
    for (const w of recomputed.weeks)
      inputs[`week ${weekText(m.d0, n - w.t)}`] =
        `A ${num(w.a)}, standard ${num(w.standard)}${w.seasonal ? "" : ", seasonal did not run"}`;
  const notRun = recomputed?.weeks.filter((w) => !w.seasonal).length ?? 0;
  return {
    ...base,
    value,
    substituted: parts.join("; ") + verdict,
    inputs,
    note: joinNotes(
      notRun > 0 &&
        notRun < BACKTEST_WEEKS &&
        `Seasonal needs 53 weeks of history before a week: for ${notRun} of the 8 weeks it had fewer, so it has no error there (its figures are over the other ${BACKTEST_WEEKS - notRun}).`,
      seaRow !== undefined &&
        seaRow.weeks > 0 &&
        "Seasonal's one-step forecasts are smoothed with the category's index (§8), which is not recomputed here: its stored figures are shown.",
      !consistent &&
        recomputed &&
        stdRow &&
        `${changedSince(summary([recomputed.standard]), summary([storedSums(stdRow)]), "Recomputed from the weekly sales history, the backtest gives")} The stored figures are shown (Σ|A − F| = WAPE × ΣA, Σ(F − A) = bias × ΣA).`,
    ),
  };
}
