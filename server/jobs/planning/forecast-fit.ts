// The forecast module's fit of one product (docs/metrics.md §8), in the app: the 13-week forecast of
// both methods, the rolling-origin backtest at origins o = 1 … 8 with the naive and seasonal-naive
// baselines, and the method auto_forecast_method chooses. Until 2026-11-29 this was one SQL statement
// over per-product arrays of prefix sums (≈ 10 s of database CPU on 50k products, most of it array
// lookups and long expressions per product); here the same prefix sums are dense arrays over the
// weeks k = 0 … 104 (k = 0 is the week ending on D0, counted back; k = 104 holds every older sale).
//
// Every figure is computed with the operations of that statement, in its order, on the same
// float8 (double) values, and the powers of 0.8 and 1.25 are PostgreSQL's own (read from the
// database), so the figures are the ones the statement gave, bit for bit: the choice of method
// compares two sums that are often equal, and must tie where they tie.

/** Weeks of history the forecast looks at. */
export const MAX_WEEKS = 104;
/** Weeks forecast ahead. */
export const HORIZON = 13;
/** Weeks of the backtest. */
export const BACKTEST_WEEKS = 8;
/** Seasonal runs from this many weeks of history; below two full years (MAX_WEEKS) its index is smoothed. */
export const SEASONAL_MIN_WEEKS = 53;
/** The category sums reach back to week k = CATEGORY_WEEKS − 1 (the oldest origin's 5 weeks a year back). */
export const CATEGORY_WEEKS = BACKTEST_WEEKS + 54;

export type Method = "standard" | "seasonal";

/** PostgreSQL's power(0.8::float8, k) for k = 0 … 110 and power(1.25::float8, o) for o = 0 … 8. */
export interface Powers {
  p08: Float64Array;
  p125: Float64Array;
}

export interface FitInput {
  /** Whole weeks of history (1 … 104). */
  n: number;
  /** The method that runs: seasonal when requested and n ≥ 53, else standard. */
  method: Method;
  /** The product takes its method from the global default with auto_forecast_method on. */
  auto: boolean;
  /** Prefix sums over k = 0 … e of the weekly units x (clamped at 0), of k·x and of 0.8^k·x. */
  P: Float64Array;
  K: Float64Array;
  E: Float64Array;
  /**
   * Its primary category's running sums of weekly units over k = 0 … CATEGORY_WEEKS − 1, 1-based as
   * in SQL (cp[j] = Σ of weeks 0 … j − 1; cp[0] unused), or null when it has none.
   */
  cp: Float64Array | null;
}

export interface Fit {
  method: Method;
  chosenByBacktest: boolean;
  weekly: number[];
  total: number;
  actual: number;
  absStandard: number | null;
  errStandard: number | null;
  mapeStandard: number | null;
  actualSeasonal: number;
  absSeasonal: number;
  errSeasonal: number;
  mapeSeasonal: number | null;
  absNaive: number;
  absSnaive: number;
  absNaiveSeasonal: number;
  absSnaiveSeasonal: number;
}

// Per-origin figures of the product being fitted (index o = 1 … 8), reused from one product to the
// next: fitProduct runs 50k times per calculation, so it allocates nothing per origin and creates no
// closures (each would be a call of the runtime's name helper under tsx).
const STD = new Float64Array(BACKTEST_WEEKS + 1);
const SEAS = new Float64Array(BACKTEST_WEEKS + 1);
const RAN = new Uint8Array(BACKTEST_WEEKS + 1);
const A = new Float64Array(BACKTEST_WEEKS + 1);
const NV = new Float64Array(BACKTEST_WEEKS + 1);
const SN = new Float64Array(BACKTEST_WEEKS + 1);

/** A prefix sum at week e, 0 at e = −1 (the statement's lookups). */
function at(sums: Float64Array, e: number): number {
  return e === -1 ? 0 : sums[e]!;
}

/** ℓ at origin o: 1.25^o (E(n−1) − E(o−1)) × 0.2 ÷ (1 − 0.8^(n−o)). */
function levelAt(input: FitInput, pw: Powers, o: number): number {
  return (pw.p125[o]! * (input.E[input.n - 1]! - at(input.E, o - 1)) * 0.2) / (1 - pw.p08[input.n - o]!);
}

/** b at origin o: (Σk·Σx − m·Σk·x) ÷ (m²(m²−1)/12) over its last m = min(n − o, 26) weeks; 0 under 8 weeks. */
function trendAt(input: FitInput, o: number): number {
  const { n, P, K } = input;
  if (n - o < 8) return 0;
  const m = Math.min(n - o, 26);
  const end = Math.min(n - 1, o + 25);
  const sumK = Math.trunc((m * (2 * o + m - 1)) / 2);
  const denom = Math.trunc((m * m * (m * m - 1)) / 12);
  return (sumK * (P[end]! - at(P, o - 1)) - m * (K[end]! - at(K, o - 1))) / denom;
}

/**
 * The smoothed seasonal forecast (53 ≤ n − o < 104) of the week a year after k = c for origin o:
 * w·B₅ + (1 − w)·Ȳ·C with w = (n − o) ÷ 104 (docs/metrics.md §8). A product without a category
 * (cp null) has C = 1.
 */
function smoothedAt(input: FitInput, cp: Float64Array | null, o: number, c: number): number {
  const { n, P } = input;
  const lo = c - 3;
  const hi = c + 2;
  const own5 = (hi <= n - 1 ? P[hi]! : P[n - 1]!) - P[lo]!;
  const full5 = P[hi]! - P[lo]!;
  const year = P[o + 51]! - at(P, o - 1);
  const w = (n - o) / MAX_WEEKS;
  let index = 1;
  if (cp) {
    const catYear = cp[o + 52]! - (o === 0 ? 0 : cp[o]!) - year;
    if (catYear > 0) index = Math.max(0, cp[hi + 1]! - cp[lo + 1]! - full5) / 5 / (catYear / 52);
  }
  return (w * own5) / (Math.min(hi, n - 1) - lo) + (((1 - w) * year) / 52) * index;
}

export function fitProduct(input: FitInput, pw: Powers): Fit {
  const { n, method, auto, P } = input;
  const seasonalData = n >= SEASONAL_MIN_WEEKS;
  const cp = seasonalData ? input.cp : null;

  const level0 = levelAt(input, pw, 0);
  const trend0 = trendAt(input, 0);
  let growth = 1;
  if (n >= MAX_WEEKS) {
    const d = P[103]! - P[51]!;
    if (d > 0) growth = Math.min(2, Math.max(0.5, P[51]! / d));
  }
  let bases: number[] | null = null;
  if (method === "seasonal" || (auto && seasonalData)) {
    bases = [];
    for (let h = 1; h <= HORIZON; h++)
      bases.push(n >= MAX_WEEKS ? (P[53 - h]! - P[50 - h]!) / 3 : smoothedAt(input, cp, 0, 52 - h));
  }

  // The backtest origins o = 1 … 8: standard (n > 8), seasonal where it runs (n − o ≥ 53), the
  // actual, the naive and the seasonal-naive forecasts.
  const hasStd = n > BACKTEST_WEEKS;
  for (let o = 1; o <= BACKTEST_WEEKS; o++) {
    if (hasStd) STD[o] = Math.max(0, levelAt(input, pw, o) + 0.8 * trendAt(input, o));
    RAN[o] = n - o >= SEASONAL_MIN_WEEKS ? 1 : 0;
    if (RAN[o]) SEAS[o] = smoothedAt(input, cp, o, o + 51);
    A[o] = at(P, o - 1) - at(P, o - 2);
    NV[o] = P[o]! - at(P, o - 1);
    SN[o] = n - o >= 52 ? P[o + 51]! - P[o + 50]! : P[o]! - at(P, o - 1);
  }
  // The statement's sums, left to right (a null term, standard's without n > 8, makes its sum null).
  let actual = 0;
  let absStd = 0;
  let errStd = 0;
  let apeStd = 0;
  let positive = 0;
  let actualSeas = 0;
  let absSeas = 0;
  let errSeas = 0;
  let apeSeas = 0;
  let positiveSeas = 0;
  let absStdCommon = 0;
  let absNaiveSeas = 0;
  let absSnaiveSeas = 0;
  let absNaive = 0;
  let absSnaive = 0;
  for (let o = 1; o <= BACKTEST_WEEKS; o++) {
    const a = A[o]!;
    const first = o === 1;
    actual = first ? a : actual + a;
    if (a > 0) positive += 1;
    if (hasStd) {
      const f = STD[o]!;
      absStd = first ? Math.abs(a - f) : absStd + Math.abs(a - f);
      // Σ (F − A) as the statement wrote it, unbracketed: ((F₁ − A₁ + F₂) − A₂ + F₃) …
      errStd = (first ? f : errStd + f) - a;
      const ape = a > 0 ? Math.abs(a - f) / a : 0;
      apeStd = first ? ape : apeStd + ape;
    }
    const ran = RAN[o] === 1;
    const seas = SEAS[o]!;
    const vA = ran ? a : 0;
    const vAbs = ran ? Math.abs(a - seas) : 0;
    const vErr = ran ? seas - a : 0;
    const vApe = ran ? (a > 0 ? Math.abs(a - seas) / a : 0) : 0;
    const vCommon = ran ? Math.abs(a - STD[o]!) : 0;
    const vNaive = ran ? Math.abs(a - NV[o]!) : 0;
    const vSnaive = ran ? Math.abs(a - SN[o]!) : 0;
    actualSeas = first ? vA : actualSeas + vA;
    absSeas = first ? vAbs : absSeas + vAbs;
    errSeas = first ? vErr : errSeas + vErr;
    apeSeas = first ? vApe : apeSeas + vApe;
    absStdCommon = first ? vCommon : absStdCommon + vCommon;
    absNaiveSeas = first ? vNaive : absNaiveSeas + vNaive;
    absSnaiveSeas = first ? vSnaive : absSnaiveSeas + vSnaive;
    if (ran && a > 0) positiveSeas += 1;
    absNaive = first ? Math.abs(a - NV[o]!) : absNaive + Math.abs(a - NV[o]!);
    absSnaive = first ? Math.abs(a - SN[o]!) : absSnaive + Math.abs(a - SN[o]!);
  }

  // auto_forecast_method: the method with the lower backtest error over the weeks where both ran.
  const byBacktest = auto && actualSeas > 0;
  const chosen: Method =
    byBacktest && absSeas < absStdCommon
      ? "seasonal"
      : byBacktest && absStdCommon < absSeas
        ? "standard"
        : method;

  const weekly: number[] = [];
  let total = 0;
  for (let h = 1; h <= HORIZON; h++) {
    const f =
      chosen === "seasonal" ? bases![h - 1]! * growth : Math.max(0, level0 + trend0 * 4 * (1 - pw.p08[h]!));
    weekly.push(f);
    total = h === 1 ? f : total + f;
  }
  return {
    method: chosen,
    chosenByBacktest: byBacktest && absSeas !== absStdCommon,
    weekly,
    total,
    actual,
    absStandard: hasStd ? absStd : null,
    errStandard: hasStd ? errStd : null,
    mapeStandard: hasStd && positive > 0 ? apeStd / positive : null,
    actualSeasonal: actualSeas,
    absSeasonal: absSeas,
    errSeasonal: errSeas,
    mapeSeasonal: positiveSeas > 0 ? apeSeas / positiveSeas : null,
    absNaive,
    absSnaive,
    absNaiveSeasonal: absNaiveSeas,
    absSnaiveSeasonal: absSnaiveSeas,
  };
}
