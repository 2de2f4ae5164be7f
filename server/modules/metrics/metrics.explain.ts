// Builds the explanation of one product's planning figures (docs/metrics.md): for each figure the
// symbolic formula, the same formula with the stored inputs filled in, and the result. Pure: the
// service reads the rows, this file only does arithmetic and text. When the arithmetic on the stored
// inputs does not give the stored figure (data or settings changed since the calculation), the
// figure keeps the stored value and a note says so.
import type {
  ExplainedFigure,
  ExplainedFigureKey,
  MetricsExplanation,
  ProductStatus,
} from "../../../shared/metrics.ts";
import { PRODUCT_STATUSES } from "../../../shared/metrics.ts";
import type { ParameterSource } from "../../../shared/settings.ts";
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
  primary_category: string | null;
  d0: string;
  calculated_at: Date;
  on_hand: number;
  on_order: number;
  units_7d: number;
  units_30d: number;
  units_90d: number;
  units_365d: number;
  revenue_30d: number;
  revenue_365d: number;
  lifetime_revenue: number;
  history_start: string | null;
  history_days: number;
  is_new: boolean;
  in_stock_days_90: number;
  out_of_stock_days_90: number;
  avg_daily_sales: number;
  daily_sales_std: number;
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
  week_start: string;
  weekly: number[];
  total_91d: number;
}

/** An open purchase-order line (order `ordered` or `partial`) of the product. */
export interface OpenLine {
  po_id: number;
  date_ordered: string;
  date_expected: string | null;
  ordered_qty: number;
  received_qty: number;
}

/** Daily sales over the last 90 days: Σx and Σx² of the units per day (days with sales). */
export interface SalesMoments {
  sum_x: number;
  sum_x2: number;
}

export interface ExplainInput {
  row: ExplainRow;
  forecast: ForecastRow | null;
  openLines: OpenLine[];
  sales: SalesMoments;
  /** The product's parameters as the settings resolve them now. */
  params: PlanningParameters | null;
  settings: GlobalSettingValues;
}

// ---------------------------------------------------------------------------------------------
// Numbers as text

/** Rounds away binary noise (1.2 × 10 = 12.000000000000002) before ⌈⌉ and comparisons. */
const clean = (x: number) => Math.round(x * 1e6) / 1e6;
const ceil = (x: number) => Math.ceil(clean(x));

/** Up to `dp` decimals, trailing zeros dropped: 52.8, 0.2857, 12. */
export function num(x: Num, dp = 4): string {
  if (x === null || !Number.isFinite(x)) return "—";
  const r = Number(x.toFixed(dp));
  return String(Object.is(r, -0) ? 0 : r);
}
const money = (x: Num) => (x === null ? "—" : x.toFixed(2));
const rate = (x: Num) => `${num(x)}/day`;
const days = (x: Num) => `${num(x, 2)} ${x === 1 ? "day" : "days"}`;
const round4 = (x: number) => Number(x.toFixed(4));

/**
 * Forecast weeks as text: 2 decimals when the terms so written still add up to the result (to the
 * cent), else 4, so a reader summing the printed terms gets the printed total.
 */
function weekTerms(terms: { w: number; k: number }[], result: number): (w: number) => string {
  const sumAt = (dp: number) => terms.reduce((s, t) => s + t.k * Number(t.w.toFixed(dp)), 0);
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

const SOURCE_LABELS: Record<string, string> = {
  product: "product setting",
  vendor: "vendor setting",
  vendor_quoted: "vendor's quoted lead time",
  global: "global default",
};
const sourceLabel = (s: string | null) => (s ? (SOURCE_LABELS[s] ?? s) : "unknown");

function differs(a: Num | string, b: Num | string): boolean {
  if (typeof a === "number" && typeof b === "number")
    return Math.abs(a - b) > 1e-4 * Math.max(1, Math.abs(b));
  return a !== b;
}

function joinNotes(...notes: (string | undefined | false | null)[]): string | undefined {
  const kept = notes.filter((n): n is string => typeof n === "string" && n.length > 0);
  return kept.length ? kept.join(" ") : undefined;
}

/** The note of a figure whose recomputation from the stored inputs disagrees with the stored value. */
function staleNote(computed: Num | string, stored: Num | string, show: (v: Num | string) => string) {
  if (computed === null || stored === null || !differs(computed, stored)) return undefined;
  return `The inputs above give ${show(computed)} but the calculation stored ${show(stored)}: data or settings changed since it ran; the next full update recalculates it.`;
}
const showNum = (v: Num | string) => (typeof v === "number" ? num(v) : String(v ?? "—"));

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

export function buildExplanation(input: ExplainInput): MetricsExplanation {
  const { row: m, forecast, openLines, sales, params, settings } = input;
  const D0 = m.d0;
  const figures: ExplainedFigure[] = [];
  const push = (f: Fig) => figures.push(figure(f));

  const excludedBySetting = params?.excluded ?? false;
  const excluded = excludedBySetting || !m.replenishable;
  const d = m.demand_rate;
  const dbar = m.avg_daily_sales;
  const L = m.lead_time_days;
  const hasMeasurement = m.lead_time_measured !== null;
  const sigmaL = hasMeasurement ? (m.lead_time_measured_std ?? 0) : 0;
  const SS = m.safety_stock;

  // --- on_hand (§1)
  {
    const computed = Math.max(m.stock_quantity, 0);
    push({
      key: "on_hand",
      label: "On hand",
      value: m.on_hand,
      unit: "units",
      formula: "max(stock_quantity, 0)",
      substituted: `max(${m.stock_quantity}, 0) = ${computed}`,
      inputs: { stock_quantity: m.stock_quantity },
      note: staleNote(computed, m.on_hand, showNum),
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
      note: staleNote(computed, m.on_order, showNum),
      section: "§1",
    });
  }

  // --- avg_daily_sales d̄ (§3)
  {
    const n = m.in_stock_days_90;
    const computed = n > 0 ? round4(m.units_90d / n) : 0;
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
        staleNote(computed, dbar, showNum),
      ),
      section: "§3",
    });
  }

  // --- daily_sales_std σd (§3)
  {
    const n = m.in_stock_days_90;
    let computed = 0;
    let substituted: string;
    if (n < 2) substituted = `n = ${n} in-stock days < 2 → 0`;
    else {
      const variance = Math.max(0, (sales.sum_x2 - sales.sum_x ** 2 / n) / (n - 1));
      computed = round4(Math.sqrt(variance));
      substituted = `√((${num(sales.sum_x2)} − ${num(sales.sum_x)}²/${n}) ÷ ${n - 1}) = ${rate(computed)}`;
    }
    push({
      key: "daily_sales_std",
      label: "Daily demand deviation (σd)",
      value: m.daily_sales_std,
      unit: "units/day",
      formula:
        "σd = √((Σx² − (Σx)²/n) ÷ (n − 1)) over the n in-stock days of the last 90 (days without sales count as 0)",
      substituted,
      inputs: { n, sum_x: sales.sum_x, sum_x2: sales.sum_x2 },
      note: staleNote(computed, m.daily_sales_std, showNum),
      section: "§3",
    });
  }

  // --- demand_rate d (§5)
  {
    let substituted: string;
    let note: string | undefined;
    if (m.demand_source === "category") {
      substituted = `new product → d = category profile of ${m.primary_category ?? "its primary category"} = ${rate(d)}`;
      note = `History of ${m.history_days} days < 30: planned from the mean d̄ of the established products in its primary category.`;
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
      },
      note: joinNotes(note, m.demand_source === "history" && d !== null && staleNote(dbar, d, showNum)),
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
      note: joinNotes(settingsNow, staleNote(computed, L, showNum)),
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
    const z = m.z_score;
    if (m.safety_stock_method === "fixed") {
      formula = "SS = the product's safety_stock setting";
      computed = params?.safety_stock ?? SS;
      substituted = `product setting = ${computed} units`;
    } else if (m.safety_stock_method === "statistical" && z !== null && L !== null) {
      formula = "SS = ⌈z × √(L × σd² + d̄² × σL²)⌉";
      const sigmaD = m.daily_sales_std;
      const inner = z * Math.sqrt(L * sigmaD ** 2 + dbar ** 2 * sigmaL ** 2);
      computed = Math.max(0, ceil(inner));
      substituted = `⌈${num(z)} × √(${num(L, 2)} × ${num(sigmaD)}² + ${num(dbar)}² × ${num(sigmaL, 2)}²)⌉ = ⌈${num(inner)}⌉ = ${ceil(inner)}`;
      if (ceil(inner) < 0) substituted += ` → never below 0 → 0`;
      note = `z = ${num(z)} for the ${num(m.service_level)} service level; established product with ${m.in_stock_days_90} in-stock days of the last 90 (≥ 30).`;
    } else if (m.safety_stock_method === "days" && d !== null) {
      formula = "SS = ⌈safety-stock days × d⌉";
      const sd = params?.safety_stock_days ?? settings.default_safety_stock_days;
      computed = ceil(sd * d);
      substituted = `⌈${sd} × ${rate(d)}⌉ = ⌈${num(sd * d)}⌉ = ${computed}`;
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
        service_level: m.service_level,
        L,
        daily_sales_std: m.daily_sales_std,
        avg_daily_sales: dbar,
        lead_time_std: sigmaL,
        demand_rate: d,
        safety_stock_days: params?.safety_stock_days ?? settings.default_safety_stock_days,
        fixed_setting: params?.safety_stock ?? null,
      },
      note: joinNotes(note, staleNote(computed, SS, showNum)),
      section: "§5",
    });
  }

  // --- lead_time_demand (§6)
  {
    const computed = d !== null && L !== null ? d * L : null;
    push({
      key: "lead_time_demand",
      label: "Lead-time demand",
      value: m.lead_time_demand,
      unit: "units",
      formula: "d × L",
      substituted: computed === null ? "not calculated" : `${rate(d)} × ${days(L)} = ${num(computed, 2)}`,
      inputs: { demand_rate: d, lead_time_days: L },
      note: staleNote(computed === null ? null : Number(computed.toFixed(2)), m.lead_time_demand, showNum),
      section: "§6",
    });
  }

  // --- reorder_point ROP (§6)
  {
    let computed: Num = null;
    let substituted = "not calculated";
    if (d !== null && L !== null && SS !== null) {
      const x = d * L + SS;
      computed = ceil(x);
      substituted = `⌈${rate(d)} × ${days(L)} + ${SS}⌉ = ⌈${num(x)}⌉ = ${computed}`;
    }
    push({
      key: "reorder_point",
      label: "Reorder point (ROP)",
      value: m.reorder_point,
      unit: "units",
      formula: "ROP = ⌈d × L + SS⌉",
      substituted,
      inputs: { demand_rate: d, lead_time_days: L, safety_stock: SS },
      note: staleNote(computed, m.reorder_point, showNum),
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
    const byRate = m.demand_source === "category" || !forecast || forecast.weekly.length === 0;
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
        Number(computed.toFixed(2)),
      );
      const terms: string[] = [];
      if (inRange.length) terms.push(`(${inRange.map(show).join(" + ")})`);
      if (repeats) terms.push(`${repeats} × ${show(last)}`);
      if (rest > 0) terms.push(`${num(rest, 2)}/7 × ${show(next)}`);
      substituted = `${horizon}F(${num(H, 2)}) = ${terms.join(" + ") || "0"} = ${num(computed, 2)}`;
    }
    push({
      key: "forecast_horizon_units",
      label: "Forecast over the horizon F(H)",
      value: m.forecast_horizon_units,
      unit: "units",
      formula: byRate
        ? "F(H) = d × H (category profile, or no forecast), H = L + days of stock"
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
          m.demand_source !== "category" &&
          "No forecast row: the horizon is covered at the demand rate.",
        params && m.days_of_stock !== null && params.days_of_stock !== m.days_of_stock
          ? `The settings now give ${params.days_of_stock} days of stock (${sourceLabel(params.sources.days_of_stock)}); the next full update uses it.`
          : undefined,
        staleNote(computed === null ? null : Number(computed.toFixed(2)), m.forecast_horizon_units, showNum),
      ),
      section: "§6",
    });
  }

  // --- reorder_qty (§6)
  {
    const F = m.forecast_horizon_units;
    let computed: Num = null;
    let substituted = "not calculated";
    let note: string | undefined;
    if (m.discontinued) {
      computed = 0;
      substituted = "discontinued → 0";
    } else if (excluded) {
      computed = 0;
      substituted = excludedBySetting ? "excluded from forecasting → 0" : "not replenishable → 0";
    } else if (F !== null && SS !== null) {
      const need = clean(F + SS - (m.on_hand + m.on_order));
      const head = `need = F(H) + SS − (on hand + on order) = ${num(F, 2)} + ${SS} − (${m.on_hand} + ${m.on_order}) = ${num(need, 2)}`;
      if (need <= 0) {
        computed = 0;
        substituted = `${head} ≤ 0 → 0`;
      } else {
        const up = ceil(need);
        const moq = Math.max(m.moq, 1);
        const q = Math.max(up, moq);
        const caseQty = Math.max(m.case_qty, 1);
        computed = Math.ceil(q / caseQty) * caseQty;
        substituted = `${head} → ⌈${num(need, 2)}⌉ = ${up}, MOQ ${moq} → ${q}, case ${caseQty} → ${computed}`;
      }
    }
    if (m.cost_price !== null && m.reorder_qty > 0)
      note = `Value: ${m.reorder_qty} × ${num(m.cost_price)} = ${money(m.reorder_value)}.`;
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
      note: joinNotes(note, staleNote(computed, m.reorder_qty, showNum)),
      section: "§6",
    });
  }

  // --- overstock_qty (§6)
  {
    let computed: Num = null;
    let substituted = "not calculated";
    const od = settings.overstock_days;
    if (d !== null && SS !== null) {
      const keep = ceil(SS + d * od);
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
      note: staleNote(computed, m.overstock_qty, showNum),
      section: "§6",
    });
  }

  // --- days_of_cover (§6)
  {
    const computed = d !== null && d > 0 ? Number((m.on_hand / d).toFixed(1)) : null;
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
      note: staleNote(computed, m.days_of_cover, showNum),
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
    let computed: string | null = null;
    let substituted: string;
    if (d === null || d <= 0) {
      substituted = `d = ${rate(d ?? 0)} → —`;
    } else if (m.on_hand === 0) {
      computed = D0;
      substituted = `on hand = 0 → D0 = ${D0}`;
    } else {
      const steps: string[] = [];
      let c = m.on_hand;
      let terms = `${m.on_hand}`;
      for (let i = 0; ; i++) {
        const k = ceil(c / d);
        const day = addDays(D0, k);
        const next = arrivals[i];
        const stepText = `D0 + ⌈${i > 0 ? `(${terms})` : terms} ÷ ${rate(d)}⌉ = ${D0} + ${k} ${k === 1 ? "day" : "days"} = ${day}`;
        if (!next || day < next[0]) {
          steps.push(next ? `${stepText}, before the next arrival on ${next[0]}` : stepText);
          computed = day;
          break;
        }
        steps.push(`${stepText} is not before the arrival of ${next[1]} on ${next[0]}`);
        c += next[1];
        terms += ` + ${next[1]}`;
      }
      substituted = steps.join("; ");
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
      note: staleNote(computed, m.stockout_date, showNum),
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
      [
        "excluded",
        excluded,
        excludedBySetting ? "its exclude_from_forecast setting is on" : "it is not replenishable",
        "not excluded",
      ],
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
        "the first rule that matches: discontinued; excluded (setting on or not replenishable); new (history < 30 days); critical (d > 0 and stock-out fewer than low_stock_days after D0); reorder (ROP > 0 and on hand + on order ≤ ROP); overstocked (overstock > 0); healthy",
      substituted: checks.join("; "),
      inputs: {
        discontinued: m.discontinued ? "yes" : "no",
        excluded: excludedBySetting ? "yes" : "no",
        replenishable: m.replenishable ? "yes" : "no",
        history_days: m.history_days,
        demand_rate: d,
        stockout_date: m.stockout_date,
        low_stock_days: low,
        reorder_point: m.reorder_point,
        on_hand: m.on_hand,
        on_order: m.on_order,
        overstock_qty: m.overstock_qty,
      },
      note: staleNote(matched, m.status, showNum),
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
      note: staleNote(computed, m.abc_class, showNum),
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
      const cogs = m.cogs_365d ?? Number((m.units_365d * cost).toFixed(2));
      const profit = Number((m.revenue_365d - cogs).toFixed(2));
      computed = round4(profit / m.revenue_365d);
      substituted = `cogs = ${m.units_365d} × ${num(cost)} = ${money(cogs)}; (${money(m.revenue_365d)} − ${money(cogs)}) ÷ ${money(m.revenue_365d)} = ${money(profit)} ÷ ${money(m.revenue_365d)} = ${num(computed)}`;
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
      note: staleNote(computed, m.margin_365d, showNum),
      section: "§10",
    });
  }
  {
    const denom = m.units_30d + m.on_hand;
    const computed = denom > 0 ? round4(m.units_30d / denom) : null;
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
      note: staleNote(computed, m.sell_through_30d, showNum),
      section: "§10",
    });
  }
  for (const [key, label, top, topName] of [
    ["turnover_365d", "Turnover (365 days)", m.cogs_365d, "cogs_365d"],
    ["gmroi_365d", "GMROI (365 days)", m.gross_profit_365d, "gross_profit_365d"],
  ] as const) {
    const cost = m.cost_price;
    const denom = cost === null ? null : m.avg_stock_units_365 * cost;
    const computed = top !== null && denom !== null && denom > 0 ? round4(top / denom) : null;
    push({
      key,
      label,
      value: m[key],
      formula: `${topName} ÷ (average stock units over 365 days × cost)`,
      substituted:
        computed !== null
          ? `${money(top)} ÷ (${num(m.avg_stock_units_365, 2)} × ${num(cost)}) = ${num(computed)}`
          : cost === null
            ? "no cost price → —"
            : top === null
              ? `${topName} not calculated → —`
              : "average stock × cost = 0 → —",
      inputs: { [topName]: top, avg_stock_units_365: m.avg_stock_units_365, cost_price: cost },
      note: staleNote(computed, m[key], showNum),
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
        Number(total.toFixed(2)),
      );
      substituted = `${forecast.method}: ${forecast.weekly.map(show).join(" + ")} = ${num(total, 2)}`;
      if (forecast.method !== forecast.requested_method)
        note = `${forecast.requested_method} was asked for but needs at least 53 weeks of history: ${forecast.method} ran instead.`;
    }
    push({
      key: "forecast",
      label: "Forecast (13 weeks)",
      value: forecast ? Number(forecast.total_91d.toFixed(2)) : null,
      unit: "units",
      formula:
        forecast?.method === "seasonal"
          ? "seasonal: Fₕ = mean of the same week last year and its neighbours × growth g (clamped 0.5…2); total = Σ F₁…F₁₃"
          : "standard: Fₕ = max(0, ℓ + b × (φ + … + φʰ)), ℓ = exponentially weighted level (α = 0.2), b = damped trend (φ = 0.8); total = Σ F₁…F₁₃",
      substituted,
      inputs: {
        method: forecast?.method ?? null,
        requested_method: forecast?.requested_method ?? params?.forecast_method ?? null,
        week_start: forecast?.week_start ?? null,
        total_91d: forecast?.total_91d ?? null,
      },
      note,
      section: "§8",
    });
  }

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
