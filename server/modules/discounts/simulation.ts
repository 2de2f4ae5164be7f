// The Discount Simulator's projection (docs/metrics.md §16): per product, day by day from the first
// forecast day, baseline demand from the stored 13-week forecast and scenario demand lifted by the
// price elasticity during the scenario's days, each sold out of the stock on hand plus the next open
// purchase order. Pure functions over rows that discounts.service.ts reads in one query.
import {
  addDays,
  breakEvenUplift,
  daysBetween,
  type ElasticitySource,
  type ProjectionFigures,
  roundPrice,
  type SimulatedProduct,
  type SimulationResult,
  type SimulationTotals,
  upliftFactor,
  type WeeklyPoint,
} from "../../../shared/discounts.ts";

/** A product of the scope with what the projection needs (discounts.service.ts, loadScope). */
export interface ScopeProduct {
  pid: number;
  title: string;
  sku: string | null;
  category: string | null;
  price: number;
  regular_price: number | null;
  cost: number | null;
  on_hand: number;
  on_order: number;
  next_po_date: string | null;
  /** First day of the stored forecast's week 1, and its weekly units; null without a forecast */
  forecast_start: string | null;
  weekly: number[] | null;
  elasticity_source: "product" | "category" | null;
  elasticity: number | null;
  ci_low: number | null;
  ci_high: number | null;
  price_changes: number | null;
  elasticity_category: string | null;
}

export interface SimulationSettings {
  default_price_elasticity: number;
  cannibalisation_share: number;
  price_ending: string;
}

export interface Scenario {
  starts_on: string;
  ends_on: string;
  discount_pct?: number;
  target_price?: number;
}

/** Days the chart shows before the start and after the end of a scenario. */
export const CHART_DAYS_BEFORE = 14;
export const CHART_DAYS_AFTER = 28;
/** Weeks of the forecast's end whose mean carries it on past its 13 weeks. */
const TAIL_WEEKS = 4;

const r2 = (n: number) => Math.round(n * 100) / 100;

/**
 * Baseline demand (units) of the day `offset` days after the product's forecast start, from the
 * weekly forecast; flat past its end. Days between the calculation and the forecast's first week
 * (if it starts later: a negative offset) take week 1's rate.
 */
function demandAt(p: ScopeProduct, offset: number): number {
  if (!p.weekly || !p.forecast_start || p.weekly.length === 0) return 0;
  const w = Math.floor(Math.max(0, offset) / 7);
  if (w < p.weekly.length) return Math.max(0, p.weekly[w]!) / 7;
  const tail = p.weekly.slice(-TAIL_WEEKS);
  return Math.max(0, tail.reduce((a, b) => a + b, 0) / tail.length) / 7;
}

interface Path {
  figures: ProjectionFigures;
  /** Per chart day: units sold and closing stock */
  sold: Float64Array;
  stock: Float64Array;
  stockout: string | null;
}

/**
 * Walks one product from `first` (the first forecast day) to `last`: each day its demand (× uplift
 * on the scenario's days) is sold out of the stock, the open purchase orders arriving on their
 * expected date. Figures are over the scenario's days; chart series from `chartFrom`.
 */
function walk(
  p: ScopeProduct,
  first: string,
  last: string,
  s: { starts_on: string; ends_on: string },
  price: number,
  uplift: number,
  chartFrom: string,
): Path {
  const days = daysBetween(first, last) + 1;
  const chartOffset = daysBetween(first, chartFrom);
  const chartDays = days - chartOffset;
  const sold = new Float64Array(Math.max(chartDays, 0));
  const stockSeries = new Float64Array(Math.max(chartDays, 0));
  const startIdx = daysBetween(first, s.starts_on);
  const endIdx = daysBetween(first, s.ends_on);
  const poIdx = p.next_po_date ? Math.max(0, daysBetween(first, p.next_po_date)) : -1;
  // Day i of the walk is `first` + i: its offset from the forecast's start, and its date only where
  // one is reported (date arithmetic per product and day was most of a simulation's CPU).
  const fromForecastStart = p.forecast_start ? daysBetween(p.forecast_start, first) : 0;
  let stock = Math.max(0, p.on_hand);
  let units = 0;
  let lost = 0;
  let stockout: string | null = null;
  let stockEnd = 0;
  let after = 0;
  for (let i = 0; i < days; i++) {
    if (i === poIdx) stock += Math.max(0, p.on_order);
    const base = demandAt(p, fromForecastStart + i);
    const inScenario = i >= startIdx && i <= endIdx;
    const demand = inScenario ? base * uplift : base;
    const sale = Math.min(demand, stock);
    stock -= sale;
    if (inScenario) {
      units += sale;
      lost += demand - sale;
    }
    if (stockout === null && demand > 0 && stock <= 1e-9 && i >= startIdx) stockout = addDays(first, i);
    if (i === endIdx) stockEnd = stock;
    if (i > endIdx && i <= endIdx + 7) after += base;
    if (i >= chartOffset) {
      sold[i - chartOffset] = sale;
      stockSeries[i - chartOffset] = stock;
    }
  }
  const revenue = units * price;
  const margin = p.cost === null ? null : units * (price - p.cost);
  return {
    figures: {
      units: r2(units),
      revenue: r2(revenue),
      margin: margin === null ? null : r2(margin),
      margin_pct: margin === null || revenue <= 0 ? null : Math.round((margin / revenue) * 10000) / 10000,
      stock_end: r2(stockEnd),
      weeks_of_cover: after > 0 ? Math.round((stockEnd / after) * 10) / 10 : null,
      lost_units: r2(lost),
    },
    sold,
    stock: stockSeries,
    stockout,
  };
}

function emptyTotals(): SimulationTotals {
  return { units: 0, revenue: 0, margin: 0, margin_pct: null, stock_end: 0, lost_units: 0 };
}

function addTo(t: SimulationTotals, f: ProjectionFigures) {
  t.units += f.units;
  t.revenue += f.revenue;
  t.margin += f.margin ?? 0;
  t.stock_end += f.stock_end;
  t.lost_units += f.lost_units;
}

function close(t: SimulationTotals, marginRevenue: number): SimulationTotals {
  return {
    units: r2(t.units),
    revenue: r2(t.revenue),
    margin: r2(t.margin),
    margin_pct: marginRevenue > 0 ? Math.round((t.margin / marginRevenue) * 10000) / 10000 : null,
    stock_end: r2(t.stock_end),
    lost_units: r2(t.lost_units),
  };
}

/**
 * Simulates a scenario over the scope's products. `first` is the first forecast day (the day after
 * the last calculation); the caller has checked that the scenario does not start before it.
 */
export function simulate(
  products: readonly ScopeProduct[],
  scenario: Scenario,
  settings: SimulationSettings,
  first: string,
  asOf: string | null,
  skipped: number,
): SimulationResult {
  const chartFrom =
    addDays(scenario.starts_on, -CHART_DAYS_BEFORE) < first
      ? first
      : addDays(scenario.starts_on, -CHART_DAYS_BEFORE);
  const last = addDays(scenario.ends_on, CHART_DAYS_AFTER);
  const chartDays = daysBetween(chartFrom, last) + 1;
  const weeks = Math.ceil(chartDays / 7);
  const wBaseUnits = new Float64Array(weeks);
  const wScenUnits = new Float64Array(weeks);
  const wBaseStock = new Float64Array(weeks);
  const wScenStock = new Float64Array(weeks);
  const base = emptyTotals();
  const scen = emptyTotals();
  let baseMarginRevenue = 0;
  let scenMarginRevenue = 0;
  let cannibalUnits = 0;
  let cannibalRevenue = 0;
  let cannibalMargin = 0;
  const rows: SimulatedProduct[] = [];

  for (const p of products) {
    const regular = p.regular_price !== null && p.regular_price >= p.price ? p.regular_price : p.price;
    const scenarioPrice =
      scenario.target_price !== undefined
        ? roundPrice(scenario.target_price, settings.price_ending)
        : roundPrice(regular * (1 - (scenario.discount_pct ?? 0) / 100), settings.price_ending);
    const source: ElasticitySource = p.elasticity_source ?? "global";
    const elasticity = p.elasticity ?? settings.default_price_elasticity;
    const uplift = upliftFactor(scenarioPrice, p.price, elasticity);
    const discountShare = regular > 0 ? 1 - scenarioPrice / regular : 0;
    const marginShare = p.cost !== null && regular > 0 ? (regular - p.cost) / regular : null;
    const b = walk(p, first, last, scenario, p.price, 1, chartFrom);
    const s = walk(p, first, last, scenario, scenarioPrice, uplift, chartFrom);
    const notes: string[] = [];
    if (!p.weekly)
      notes.push("No forecast: the product is excluded from forecasting or has no calculation yet");
    else if (p.weekly.every((x) => x <= 0)) notes.push("The forecast is 0: no recent sales to lift");
    if (p.cost === null) notes.push("No cost price: margin and break-even cannot be worked out");
    if (b.figures.weeks_of_cover === null)
      notes.push("Weeks of cover: no demand forecast after the end date");
    const stockoutRisk = s.stockout !== null && (p.next_po_date === null || s.stockout < p.next_po_date);
    rows.push({
      pid: p.pid,
      title: p.title,
      sku: p.sku,
      category: p.category,
      price: p.price,
      regular_price: regular,
      cost: p.cost,
      scenario_price: scenarioPrice,
      discount_share: Math.round(discountShare * 10000) / 10000,
      below_cost: p.cost !== null && scenarioPrice < p.cost,
      elasticity: Math.round(elasticity * 1000) / 1000,
      elasticity_source: source,
      elasticity_category: source === "category" ? p.elasticity_category : null,
      elasticity_range:
        source !== "global" && p.ci_low !== null && p.ci_high !== null
          ? [Math.round(p.ci_low * 1000) / 1000, Math.round(p.ci_high * 1000) / 1000]
          : null,
      price_changes: p.price_changes ?? 0,
      uplift: Math.round(uplift * 10000) / 10000,
      margin_share: marginShare === null ? null : Math.round(marginShare * 10000) / 10000,
      break_even_uplift:
        marginShare === null
          ? null
          : ((x) => (x === null ? null : Math.round(x * 10000) / 10000))(
              breakEvenUplift(marginShare, discountShare),
            ),
      on_hand: p.on_hand,
      next_po_date: p.next_po_date,
      baseline: b.figures,
      scenario: s.figures,
      scenario_stockout: s.stockout,
      stockout_risk: stockoutRisk,
      notes,
    });
    addTo(base, b.figures);
    addTo(scen, s.figures);
    if (p.cost !== null) {
      baseMarginRevenue += b.figures.revenue;
      scenMarginRevenue += s.figures.revenue;
    }
    const extra = Math.max(0, s.figures.units - b.figures.units);
    if (settings.cannibalisation_share > 0 && extra > 0) {
      const taken = extra * settings.cannibalisation_share;
      cannibalUnits += taken;
      cannibalRevenue += taken * p.price;
      cannibalMargin += p.cost === null ? 0 : taken * (p.price - p.cost);
    }
    for (let d = 0; d < chartDays; d++) {
      const w = Math.floor(d / 7);
      wBaseUnits[w]! += b.sold[d]!;
      wScenUnits[w]! += s.sold[d]!;
      if (d % 7 === 6 || d === chartDays - 1) {
        wBaseStock[w]! += b.stock[d]!;
        wScenStock[w]! += s.stock[d]!;
      }
    }
  }

  const weekly: WeeklyPoint[] = Array.from({ length: weeks }, (_, w) => ({
    week_start: addDays(chartFrom, 7 * w),
    baseline_units: r2(wBaseUnits[w]!),
    scenario_units: r2(wScenUnits[w]!),
    baseline_stock: r2(wBaseStock[w]!),
    scenario_stock: r2(wScenStock[w]!),
  }));

  return {
    starts_on: scenario.starts_on,
    ends_on: scenario.ends_on,
    as_of: asOf,
    products: rows,
    totals: { baseline: close(base, baseMarginRevenue), scenario: close(scen, scenMarginRevenue) },
    cannibalisation:
      settings.cannibalisation_share > 0
        ? {
            share: settings.cannibalisation_share,
            units: r2(cannibalUnits),
            revenue: r2(cannibalRevenue),
            margin: r2(cannibalMargin),
          }
        : null,
    weekly,
    settings,
    skipped,
  };
}
