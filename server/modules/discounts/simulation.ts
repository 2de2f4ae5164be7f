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
  /** The dip after a promotion of its category (§16.2; promotion-dip.ts): 0 weeks = none */
  dip_share: number;
  dip_weeks: number;
  dip_promotions: number;
  dip_category: string | null;
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

/** Day numbers of ISO dates (days since 1970-01-01), parsed once per distinct date of a simulation. */
class Days {
  private cache = new Map<string, number>();
  of(day: string): number {
    let n = this.cache.get(day);
    if (n === undefined) {
      n = Math.round(Date.parse(`${day}T00:00:00Z`) / 86_400_000);
      this.cache.set(day, n);
    }
    return n;
  }
}

/** The walk's days: 0 = the first forecast day; the scenario's and the chart's first day as offsets. */
interface Frame {
  first: string;
  days: number;
  startIdx: number;
  endIdx: number;
  chartOffset: number;
}

/**
 * Baseline demand (units) per day of the walk, from the weekly forecast: day i is `offset` + i days
 * after the product's forecast start; flat past its 13 weeks (the mean of the last TAIL_WEEKS).
 * Days between the calculation and the forecast's first week (if it starts later: a negative
 * offset) take week 1's rate. All 0 without a forecast.
 */
function baseDemand(p: ScopeProduct, offset: number, days: number): Float64Array {
  const out = new Float64Array(days);
  const weekly = p.weekly;
  if (!weekly || !p.forecast_start || weekly.length === 0) return out;
  const tail = weekly.slice(-TAIL_WEEKS);
  const tailRate = Math.max(0, tail.reduce((a, b) => a + b, 0) / tail.length) / 7;
  for (let i = 0; i < days; i++) {
    const w = Math.floor(Math.max(0, offset + i) / 7);
    out[i] = w < weekly.length ? Math.max(0, weekly[w]!) / 7 : tailRate;
  }
  return out;
}

interface Path {
  figures: ProjectionFigures;
  stockout: string | null;
}

/**
 * Walks one product over the frame's days: each day its demand (× uplift on the scenario's days,
 * × (1 − dip) on the `dipDays` days after its end) is sold out of the stock, the open purchase
 * orders arriving on day `poIdx`. Figures are over the scenario's days; the chart's weekly units
 * sold and closing stock (from the frame's chart offset) are added to `wUnits` and `wStock`.
 */
function walk(
  p: ScopeProduct,
  f: Frame,
  demand: Float64Array,
  poIdx: number,
  price: number,
  uplift: number,
  dip: number,
  dipDays: number,
  wUnits: Float64Array,
  wStock: Float64Array,
): Path {
  const { days, startIdx, endIdx, chartOffset } = f;
  const dipEnd = endIdx + dipDays;
  let stock = Math.max(0, p.on_hand);
  let units = 0;
  let lost = 0;
  let stockoutIdx = -1;
  let stockEnd = 0;
  let after = 0;
  for (let i = 0; i < days; i++) {
    if (i === poIdx) stock += Math.max(0, p.on_order);
    const base = demand[i]!;
    const inScenario = i >= startIdx && i <= endIdx;
    const want = inScenario ? base * uplift : i > endIdx && i <= dipEnd ? base * (1 - dip) : base;
    const sale = Math.min(want, stock);
    stock -= sale;
    if (inScenario) {
      units += sale;
      lost += want - sale;
    }
    if (stockoutIdx < 0 && want > 0 && stock <= 1e-9 && i >= startIdx) stockoutIdx = i;
    if (i === endIdx) stockEnd = stock;
    if (i > endIdx && i <= endIdx + 7) after += base;
    if (i >= chartOffset) {
      const d = i - chartOffset;
      const w = (d / 7) | 0;
      wUnits[w]! += sale;
      if (d % 7 === 6 || i === days - 1) wStock[w]! += stock;
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
    stockout: stockoutIdx < 0 ? null : addDays(f.first, stockoutIdx),
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
  const dn = new Days();
  const firstN = dn.of(first);
  const frame: Frame = {
    first,
    days: dn.of(last) - firstN + 1,
    startIdx: dn.of(scenario.starts_on) - firstN,
    endIdx: dn.of(scenario.ends_on) - firstN,
    chartOffset: dn.of(chartFrom) - firstN,
  };
  // The dip after the promotion: per product, its scenario's and baseline's demand on the dip days.
  let dipBase = 0;
  let dipScen = 0;
  let dipWeeks = 0;
  const dipPromotions = new Map<string, number>();
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
    const offRegular =
      scenario.target_price !== undefined
        ? roundPrice(scenario.target_price, settings.price_ending)
        : roundPrice(regular * (1 - (scenario.discount_pct ?? 0) / 100), settings.price_ending);
    // A discount never raises the price: a product already sold below that much off its regular
    // price keeps today's price (a target price is taken as asked).
    const keptToday = scenario.target_price === undefined && offRegular > p.price;
    const scenarioPrice = keptToday ? p.price : offRegular;
    const source: ElasticitySource = p.elasticity_source ?? "global";
    const elasticity = p.elasticity ?? settings.default_price_elasticity;
    const uplift = upliftFactor(scenarioPrice, p.price, elasticity);
    const discountShare = regular > 0 ? 1 - scenarioPrice / regular : 0;
    const marginShare = p.cost !== null && regular > 0 ? (regular - p.cost) / regular : null;
    const demand = baseDemand(p, p.forecast_start ? firstN - dn.of(p.forecast_start) : 0, frame.days);
    const poIdx = p.next_po_date ? Math.max(0, dn.of(p.next_po_date) - firstN) : -1;
    const dipDays = p.dip_weeks > 0 ? 7 * p.dip_weeks : 0;
    const b = walk(p, frame, demand, poIdx, p.price, 1, 0, 0, wBaseUnits, wBaseStock);
    const s = walk(
      p,
      frame,
      demand,
      poIdx,
      scenarioPrice,
      uplift,
      p.dip_share,
      dipDays,
      wScenUnits,
      wScenStock,
    );
    if (dipDays > 0) {
      for (let i = frame.endIdx + 1; i <= frame.endIdx + dipDays && i < frame.days; i++) {
        dipBase += demand[i]!;
        dipScen += demand[i]! * (1 - p.dip_share);
      }
      dipWeeks = Math.max(dipWeeks, p.dip_weeks);
      if (p.dip_category) dipPromotions.set(p.dip_category, p.dip_promotions);
    }
    const notes: string[] = [];
    if (scenario.target_price !== undefined && scenarioPrice > p.price)
      notes.push(
        `The target price ${scenarioPrice.toFixed(2)} is above today's ${p.price.toFixed(2)}: a price rise, not a discount`,
      );
    if (keptToday)
      notes.push(
        `Already sold at ${p.price.toFixed(2)}, below ${scenario.discount_pct}% off the regular ${regular.toFixed(2)}: the scenario keeps today's price`,
      );
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
      // Nothing to break even where the scenario keeps today's price.
      break_even_uplift:
        marginShare === null || scenarioPrice === p.price
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
      dip:
        p.dip_weeks > 0
          ? {
              share: p.dip_share,
              weeks: p.dip_weeks,
              promotions: p.dip_promotions,
              category: p.dip_category ?? "",
            }
          : null,
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
    dip:
      dipWeeks > 0
        ? {
            share: dipBase > 0 ? Math.round((1 - dipScen / dipBase) * 10000) / 10000 : 0,
            weeks: dipWeeks,
            promotions: [...dipPromotions.values()].reduce((a, b) => a + b, 0),
          }
        : null,
  };
}
