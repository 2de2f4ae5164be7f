// Module forecast of the planning engine: the 13-week demand forecast of every product that is not
// excluded, and a rolling-origin backtest of both methods (docs/metrics.md §8).
//
// How it stays fast (50k products, 3M order lines): the run's one pass over the order lines
// (order-lines-pass.ts: streamed into the app once, and shared with the dashboards' series and the
// product search) is summed in the app into each product's units per week k (counted back from D0:
// k = 0 is D0−6 … D0; every sale before the 104 weeks is put in one bucket k = 104, which no lookup
// reaches: it only brings the product's first sale, for its life start) and per calendar week of
// the Forecasting grid's history. Then each product's prefix sums over its weeks
//   P(e) = Σ_{k≤e} x_k,   K(e) = Σ_{k≤e} k·x_k,   E(e) = Σ_{k≤e} 0.8^k·x_k
// are dense arrays, and every sum the methods need is a difference of two prefix sums, for every
// forecast origin at once (forecast-fit.ts). The fits go back in one COPY into the temp table
// fc_fit, from which the rest is set-based SQL. Products without sales forecast 0 and need no series
// (nor do those whose sales are all older: their fit is 0 as well).
import { addDaysIso, GRID_HISTORY_WEEKS } from "../../../shared/forecasting.ts";
import { BinaryRowWriter } from "../../db/binary-copy.ts";
import type { SqlConnection } from "../../db/database.ts";
import { pacer } from "../../db/pace.ts";
import { isProductCategorySql } from "../../modules/config/category-types.ts";
import {
  calendarWeekSql,
  calendarWeeks,
  forecastFiguresSql,
} from "../../modules/forecasting/forecast-weeks.ts";
import type { CalcModule } from "../calculate.ts";
import { type OrderLines, orderLinesOf } from "../order-lines-pass.ts";
import { createParametersTable, utcDay, utcMidnight } from "./context.ts";
import {
  BACKTEST_WEEKS,
  CATEGORY_WEEKS,
  type Fit,
  fitProduct,
  HORIZON,
  MAX_WEEKS,
  type Method,
  type Powers,
  SEASONAL_MIN_WEEKS,
} from "./forecast-fit.ts";

const DAY_MS = 86_400_000;
/** Day numbers (days since 1970-01-01) as the stream carries them. */
const EPOCH = "DATE '1970-01-01'";
const dayNumber = (iso: string) => Math.round(Date.parse(`${iso}T00:00:00Z`) / DAY_MS);

/** n, the whole weeks from the life start (an SQL date expression) to D0 ($1), at most MAX_WEEKS. */
function weeksSince(lifeStart: string): string {
  return `LEAST(${MAX_WEEKS}, GREATEST(0, ($1::date - ${lifeStart} + 1) / 7))::int`;
}

/** The method that runs: seasonal when requested and n ≥ 53 (a year and a week), else standard. */
function methodOf(requested: string, n: string): string {
  return `CASE WHEN ${requested} = 'seasonal' AND ${n} >= ${SEASONAL_MIN_WEEKS} THEN 'seasonal' ELSE 'standard' END`;
}

/** The columns of fc_fit after pid, in the order fitInApp writes them. */
const FIT_COLUMNS = [
  "n",
  "method",
  "chosen_by_backtest",
  "weekly",
  "total",
  "actual",
  "abs_standard",
  "err_standard",
  "mape_standard",
  "actual_seasonal",
  "abs_seasonal",
  "err_seasonal",
  "mape_seasonal",
  "abs_naive",
  "abs_snaive",
  "abs_naive_seasonal",
  "abs_snaive_seasonal",
  "history",
] as const;

/**
 * Fits every product of fc_life that has sales (fitProduct) and leaves fc_fit: per product its n and
 * method counting its first sale, the fit and the Forecasting grid's 12 weeks of history (calendar
 * week c = 1 is the week before the as-of day's week, … 12, oldest first in the array). A product
 * with sales in those weeks but n = 0 (life started this week) has a row with the history only.
 */
async function fitInApp(conn: SqlConnection, lines: OrderLines, d0: string, asOfWeek: string): Promise<void> {
  const D = GRID_HISTORY_WEEKS;
  // PostgreSQL's own powers, so the figures are those the database's arithmetic gives.
  const [powers] = await conn.query<{ p08: number[]; p125: number[] }>(
    `SELECT (SELECT array_agg(power(0.8::float8, k) ORDER BY k) FROM generate_series(0, ${MAX_WEEKS + 6}) k) AS p08,
       (SELECT array_agg(power(1.25::float8, o) ORDER BY o) FROM generate_series(0, ${BACKTEST_WEEKS}) o) AS p125`,
  );
  const pw: Powers = {
    p08: Float64Array.from(powers!.p08.map(Number)),
    p125: Float64Array.from(powers!.p125.map(Number)),
  };

  // The products that get a forecast (fc_life) and every merchandise product's primary category (§5:
  // its linked product category of the highest level, ties the smallest id): the smoothed seasonal's
  // category index sums all of them.
  const life = await conn.query<{ pid: number; requested: string; auto: boolean; life0: number }>(
    `SELECT pid, requested, auto, (life0 - ${EPOCH})::int AS life0 FROM fc_life`,
  );
  const prim = await conn.query<{ pid: number; category_id: number }>(
    `SELECT DISTINCT ON (pc.pid) pc.pid, pc.category_id
     FROM product_categories pc
     JOIN categories c ON c.id = pc.category_id AND ${isProductCategorySql("c")}
     JOIN products p ON p.pid = pc.pid AND p.kind = 'merchandise'
     ORDER BY pc.pid, c.level DESC, c.id`,
  );
  // One entry per product in either list (one lookup per streamed row): its slot among fc_life's
  // products (−1: none) and the dense index of its primary category (−1: none).
  const entryOf = new Map<number, number>();
  const entrySlot: number[] = [];
  const entryCategory: number[] = [];
  const entry = (pid: number) => {
    let e = entryOf.get(pid);
    if (e === undefined) {
      e = entrySlot.length;
      entryOf.set(pid, e);
      entrySlot.push(-1);
      entryCategory.push(-1);
    }
    return e;
  };
  for (const [i, l] of life.entries()) entrySlot[entry(l.pid)] = i;
  const categoryIndex = new Map<number, number>();
  for (const r of prim) {
    let c = categoryIndex.get(r.category_id);
    if (c === undefined) {
      c = categoryIndex.size;
      categoryIndex.set(r.category_id, c);
    }
    entryCategory[entry(r.pid)] = c;
  }
  const slotOfEntry = Int32Array.from(entrySlot);
  const categoryOfEntry = Int32Array.from(entryCategory);

  const W = MAX_WEEKS + 1;
  const CW = CATEGORY_WEEKS;
  const nE = entrySlot.length;
  const nL = life.length;
  // Each line's product (an index of the shared pass, order-lines-pass.ts) → its entry (−1: none).
  const entryOfProduct = new Int32Array(lines.pids.length).fill(-1);
  for (const [pid, e] of entryOf) {
    const p = lines.indexOf.get(pid);
    if (p !== undefined) entryOfProduct[p] = e;
  }
  const today = dayNumber(d0);
  // The grid's calendar weeks: c = 1 … D for a day in [gridFrom, week0) (c = 1 the week before the
  // as-of day's), 0 for any other day.
  const week0 = dayNumber(asOfWeek);
  const gridFrom = week0 - 7 * D;
  const gridWeek = (d: number) => (d >= gridFrom && d < week0 ? Math.trunc((week0 - d - 1) / 7) + 1 : 0);
  // Per entry and week k (k = (D0 − day) ÷ 7, the older lines all in k = MAX_WEEKS), Σ quantity of
  // its completed lines; per entry the smallest k with a line (W: none).
  // (Whole units in an Int32Array, half the memory of doubles: a week's units beyond ±2^31 stop the
  // run with a message, as product_metrics' int4 units sold would.)
  const weekQ = new Int32Array(nE * W);
  const minK = new Int32Array(nE).fill(W);
  // The grid's weeks split a k-week in two where they meet, and the category sums clamp each part at
  // 0 (as grouping by product, k and c did): per entry and k < KS (the k-weeks that can meet a grid
  // week), the units of the part whose c is not that of the k-week's last day (0 when one part).
  const KS = Math.min(W, Math.trunc((today - gridFrom) / 7) + 2);
  const endWeek = Int32Array.from({ length: KS }, (_, k) => gridWeek(today - 7 * k));
  const otherQ = new Int32Array(nE * KS);
  // Per product of fc_life: any completed line up to asOf, its first sale's day, and its units per
  // grid week.
  const firstDay = new Float64Array(nL).fill(Number.POSITIVE_INFINITY);
  const history = new Float64Array(nL * D);
  const hasHistory = new Uint8Array(nL);
  // Adds a line's units to a week's whole units; beyond ±2^31 the run stops with a message.
  const addUnits = (cells: Int32Array, at: number, q: number, p: number) => {
    const sum = cells[at]! + q;
    if (sum > 2147483647 || sum < -2147483648)
      throw new Error(`Product ${lines.pids[p]} sold more than 2^31 units in one week`);
    cells[at] = sum;
  };
  const pace = pacer();
  for (const chunk of lines.chunks) {
    await pace();
    const { product, day, done, quantity } = chunk;
    for (let j = 0; j < chunk.n; j++) {
      if (!done[j]) continue;
      const e = entryOfProduct[product[j]!]!;
      if (e < 0) continue;
      const d = day[j]!;
      const q = quantity[j]!;
      const k = Math.min(Math.trunc((today - d) / 7), MAX_WEEKS);
      addUnits(weekQ, e * W + k, q, product[j]!);
      if (k < minK[e]!) minK[e] = k;
      const c = gridWeek(d);
      if (k < KS && c !== endWeek[k]) addUnits(otherQ, e * KS + k, q, product[j]!);
      const i = slotOfEntry[e]!;
      if (i < 0) continue;
      if (q > 0 && d < firstDay[i]!) firstDay[i] = d;
      if (c > 0) {
        hasHistory[i] = 1;
        history[i * D + (D - c)] = history[i * D + (D - c)]! + q;
      }
    }
  }
  // Σ max(q, 0) per category and k < CATEGORY_WEEKS over its products' (k, c) parts, and whether the
  // category has any line there.
  const categoryWeeks = new Float64Array(categoryIndex.size * CW);
  const categorySeen = new Uint8Array(categoryIndex.size);
  for (let e = 0; e < nE; e++) {
    const category = categoryOfEntry[e]!;
    if (category < 0 || minK[e]! >= CW) continue;
    categorySeen[category] = 1;
    for (let k = minK[e]!; k < CW; k++) {
      const total = weekQ[e * W + k]!;
      const other = k < KS ? otherQ[e * KS + k]! : 0;
      const add = Math.max(total - other, 0) + Math.max(other, 0);
      if (add !== 0) categoryWeeks[category * CW + k] = categoryWeeks[category * CW + k]! + add;
    }
  }

  // Per category the running sums over k = 0 … CATEGORY_WEEKS − 1, 1-based (cp[j] = Σ of weeks 0 … j − 1).
  const categoryPrefix: (Float64Array | null)[] = [];
  for (let c = 0; c < categoryIndex.size; c++) {
    if (!categorySeen[c]) {
      categoryPrefix.push(null);
      continue;
    }
    const cp = new Float64Array(CW + 1);
    let sum = 0;
    for (let k = 0; k < CW; k++) {
      sum = k === 0 ? categoryWeeks[c * CW]! : sum + categoryWeeks[c * CW + k]!;
      cp[k + 1] = sum;
    }
    categoryPrefix.push(cp);
  }

  const P = new Float64Array(W);
  const K = new Float64Array(W);
  const E = new Float64Array(W);
  // Binary COPY input (its numbers are neither formatted here nor parsed by the database).
  function* fitRows(): Generator<Buffer> {
    const out = new BinaryRowWriter();
    for (let i = 0; i < life.length; i++) {
      const l = life[i]!;
      const entry = entryOf.get(l.pid)!;
      let fit: (Fit & { n: number }) | null = null;
      // Any completed line up to asOf.
      if (minK[entry]! < W) {
        const start = Math.min(l.life0, firstDay[i]!);
        const n = Math.min(MAX_WEEKS, Math.max(0, Math.trunc((today - start + 1) / 7)));
        if (n > 0) {
          // Running sums in k order (a week without sales adds 0, which changes no sum).
          let p = 0;
          let kx = 0;
          let e = 0;
          for (let k = 0, at = entry * W; k < W; k++, at++) {
            const x = Math.max(weekQ[at]!, 0);
            p += x;
            kx += k * x;
            e += x * pw.p08[k]!;
            P[k] = p;
            K[k] = kx;
            E[k] = e;
          }
          const method: Method =
            l.requested === "seasonal" && n >= SEASONAL_MIN_WEEKS ? "seasonal" : "standard";
          const category = categoryOfEntry[entry]!;
          const cp = category < 0 ? null : categoryPrefix[category]!;
          fit = { n, ...fitProduct({ n, method, auto: l.auto, P, K, E, cp }, pw) };
        }
      }
      if (!fit && !hasHistory[i]) continue;
      const hist = hasHistory[i] ? history.subarray(i * D, i * D + D) : null;
      out.row(1 + FIT_COLUMNS.length);
      out.int4(l.pid);
      if (!fit) {
        for (let c = 1; c < FIT_COLUMNS.length; c++) out.null();
        out.float8Array(hist!);
      } else {
        out.int4(fit.n);
        out.text(fit.method);
        out.bool(fit.chosenByBacktest);
        out.float8Array(fit.weekly);
        for (const v of [
          fit.total,
          fit.actual,
          fit.absStandard,
          fit.errStandard,
          fit.mapeStandard,
          fit.actualSeasonal,
          fit.absSeasonal,
          fit.errSeasonal,
          fit.mapeSeasonal,
          fit.absNaive,
          fit.absSnaive,
          fit.absNaiveSeasonal,
          fit.absSnaiveSeasonal,
        ])
          out.float8(v);
        if (hist) out.float8Array(hist);
        else out.null();
      }
      if (out.full) yield out.take();
    }
    yield out.end();
  }
  await conn.exec(
    `CREATE TEMP TABLE fc_fit (pid int NOT NULL, n int, method text, chosen_by_backtest boolean,
       weekly float8[], total float8, actual float8, abs_standard float8, err_standard float8,
       mape_standard float8, actual_seasonal float8, abs_seasonal float8, err_seasonal float8,
       mape_seasonal float8, abs_naive float8, abs_snaive float8, abs_naive_seasonal float8,
       abs_snaive_seasonal float8, history float8[]) ON COMMIT DROP`,
  );
  await conn.copyCsv({
    table: "fc_fit",
    columns: ["pid", ...FIT_COLUMNS],
    source: fitRows(),
    header: false,
    binary: true,
  });
  // Statistics of the columns joined and compared on only (those of the arrays cost most of it).
  await conn.exec("ALTER TABLE fc_fit ADD PRIMARY KEY (pid); ANALYZE fc_fit (pid, n, method)");
}

export const forecastModule: CalcModule = {
  name: "forecast",
  readsOrderLines: true,
  tables: ["product_forecasts", "product_forecast_accuracy"],
  // It reads the imported tables and the settings only (its life start does not come from
  // product_metrics): a Full Reset runs it on the second connection.
  beside: true,
  async run(ctx) {
    const { conn, asOf } = ctx;
    const d0 = utcDay(asOf);
    const weekStart = utcDay(new Date(utcMidnight(asOf).getTime() + DAY_MS));

    await conn.exec("TRUNCATE product_forecasts, product_forecast_accuracy");
    await createParametersTable(conn);
    await conn.exec("DROP TABLE IF EXISTS fc_life, fc_fit");

    // Every product that gets a forecast (not excluded), its n and its methods. The life start is
    // §2's (earliest of created_at's UTC date, first_received, the first sale, the first receipt up
    // to D0, as module stock_history takes it), computed here from the imported tables: this module
    // reads no other module's table, so a Full Reset can run it beside the others (CalcModule.beside).
    // life0 leaves the first sale out: the fit below, which reads every sale anyway, takes it into
    // account (and sets n and method again) for the products that have sales; for the others life0 is
    // the life start. LEAST skips nulls; a life start after D0 gives n = 0.
    await conn.query(
      `CREATE TEMP TABLE fc_life ON COMMIT DROP AS
       WITH receipt AS (
         SELECT l.pid, min(r.received_date) AS first_receipt
         FROM receivings r JOIN po_lines l ON l.id = r.po_line_id
         WHERE r.received_date <= $1::date
         GROUP BY l.pid
       ),
       life AS (
         SELECT c.pid, c.forecast_method AS requested,
           c.forecast_method_source = 'global' AND COALESCE((
             SELECT setting_value FROM settings_global WHERE setting_key = 'auto_forecast_method'
           ), 'true') = 'true' AS auto,
           LEAST((p.created_at AT TIME ZONE 'UTC')::date, p.first_received, rc.first_receipt) AS life0
         FROM calc_params c
         JOIN products p ON p.pid = c.pid
         LEFT JOIN receipt rc ON rc.pid = c.pid
         WHERE NOT c.excluded AND p.kind = 'merchandise'
       ),
       weeks AS (
         SELECT pid, requested, auto, life0, ${weeksSince("life0")} AS n
         FROM life
       )
       SELECT pid, requested, auto, life0, n, ${methodOf("requested", "n")} AS method
       FROM weeks`,
      [d0],
    );
    await conn.exec("ALTER TABLE fc_life ADD PRIMARY KEY (pid); ANALYZE fc_life");

    // The fit of every product with sales (forecast-fit.ts), from its weekly sales streamed out of
    // the database once, into the temp table fc_fit (one row per product: the fit and the grid's
    // history).
    await fitInApp(conn, await orderLinesOf(ctx), d0, calendarWeeks(d0).asOfWeek);
    // The products with sales: their n and method counting the first sale.
    await conn.exec(
      `UPDATE fc_life l SET n = f.n, method = f.method FROM fc_fit f
       WHERE f.pid = l.pid AND f.n IS NOT NULL AND (l.n, l.method) IS DISTINCT FROM (f.n, f.method)`,
    );

    // Products without a fit (no sales in their weeks, or n = 0) forecast 0.
    // With the grid's figures (forecasting page): the 13 calendar weeks' total (forecast-weeks.ts),
    // its value at cost, the backtest of the method that ran, and the change against last week's
    // snapshot; the final figures of the products with overrides or promotions are set right after
    // (forecastFiguresSql).
    const cal = calendarWeeks(d0);
    const lastSnapshot = addDaysIso(cal.asOfWeek, -7);
    const forecasts = await conn.execute(
      `INSERT INTO product_forecasts (pid, method, requested_method, chosen_by_backtest, week_start, weekly, total_91d,
         system_units, final_units, final_value, has_override, change, wape, bias, mase, history)
       SELECT l.pid, l.method, l.requested, COALESCE(f.chosen_by_backtest, false), $1::date, w.weekly, w.total,
         c.units, c.units, c.units * COALESCE(p.cost_price, 0)::float8, false,
         (c.units - ${calendarWeekSql("w.weekly", HORIZON, "$2::int")}) /
           NULLIF((SELECT sum(v) FROM unnest(s.final[2:${HORIZON}]) v), 0) - 1,
         e.abs / NULLIF(e.actual, 0), e.err / NULLIF(e.actual, 0), e.abs / NULLIF(e.naive, 0),
         COALESCE(f.history, array_fill(0::float8, ARRAY[${GRID_HISTORY_WEEKS}]))
       FROM fc_life l
       JOIN products p ON p.pid = l.pid
       LEFT JOIN fc_fit f ON f.pid = l.pid
       LEFT JOIN forecast_snapshots s ON s.snapshot_week = $3::date AND s.pid = l.pid,
       LATERAL (SELECT COALESCE(f.weekly, array_fill(0::float8, ARRAY[${HORIZON}])) AS weekly,
         COALESCE(f.total, 0) AS total) w,
       LATERAL (SELECT w.total + $2::int * (w.weekly[${HORIZON}] - w.weekly[1]) / 7.0 AS units) c,
       LATERAL (SELECT CASE WHEN l.method = 'seasonal' THEN f.abs_seasonal ELSE f.abs_standard END AS abs,
         CASE WHEN l.method = 'seasonal' THEN f.err_seasonal ELSE f.err_standard END AS err,
         CASE WHEN l.method = 'seasonal' THEN f.actual_seasonal ELSE f.actual END AS actual,
         CASE WHEN l.method = 'seasonal' THEN f.abs_naive_seasonal ELSE f.abs_naive END AS naive) e`,
      [weekStart, cal.r, lastSnapshot],
    );
    await conn.query(
      forecastFiguresSql(
        "$1::date",
        "$2::int",
        "$3::date",
        "f.pid IN (SELECT pid FROM forecast_overrides UNION SELECT pid FROM promotion_products)",
      ),
      [cal.weeks[0], cal.r, lastSnapshot],
    );

    // Backtest of both methods where n ≥ 9: standard over its 8 weeks, seasonal over the weeks where
    // it ran (weeks = how many: the origins with n − o ≥ 53, so 0 when n ≤ 53, where every figure of
    // its row is null). A product without a fit sold nothing in those weeks: ΣA = 0, so WAPE and bias
    // are null, and MAPE (no week with A > 0) too.
    // With the baselines over the same weeks: naive WAPE, seasonal-naive WAPE, and MASE (the method's
    // Σ|A − F| ÷ the naive's Σ|A − naive|; null when the naive was exact every week).
    const accuracy = await conn.execute(
      `INSERT INTO product_forecast_accuracy (pid, method, weeks, actual, wape, mape, bias, mase, naive_wape,
         seasonal_naive_wape, seasonal_naive_mase)
       SELECT l.pid, m.method, b.weeks, COALESCE(b.actual, 0), b.abs / NULLIF(b.actual, 0), b.mape,
         b.err / NULLIF(b.actual, 0), b.abs / NULLIF(b.naive, 0),
         b.naive / NULLIF(b.actual, 0), b.snaive / NULLIF(b.actual, 0), b.snaive / NULLIF(b.naive, 0)
       FROM fc_life l
       CROSS JOIN (VALUES ('standard'), ('seasonal')) AS m(method)
       LEFT JOIN fc_fit f ON f.pid = l.pid,
       LATERAL (
         SELECT ${BACKTEST_WEEKS} AS weeks, f.actual, f.abs_standard AS abs, f.err_standard AS err,
           f.mape_standard AS mape, f.abs_naive AS naive, f.abs_snaive AS snaive
         WHERE m.method = 'standard'
         UNION ALL
         SELECT GREATEST(0, LEAST(${BACKTEST_WEEKS}, l.n - ${SEASONAL_MIN_WEEKS})), f.actual_seasonal, f.abs_seasonal,
           f.err_seasonal, f.mape_seasonal, f.abs_naive_seasonal, f.abs_snaive_seasonal
         WHERE m.method = 'seasonal'
       ) b
       WHERE l.n > ${BACKTEST_WEEKS}`,
    );

    // product_metrics.forecast_method (the method that ran, null for excluded products) is set by
    // module planning's one UPDATE from product_forecasts.method: no UPDATE of product_metrics here.
    await conn.exec("DROP TABLE fc_life, fc_fit");
    return forecasts + accuracy;
  },
};
