// Module forecast of the planning engine: the 13-week demand forecast of every product that is not
// excluded, and a rolling-origin backtest of both methods (docs/metrics.md §8).
//
// How it stays set-based and fast (50k products, 3M order lines): weeks are numbered k backwards
// from D0 (k = 0 is D0−6 … D0; the spec's t = n − k). For each product with sales one pass of
// running sums over its *sparse* weekly sales (window functions over weeks with sales only; every
// sale before the 104 weeks is put in one bucket k = 104, which no lookup reaches: it only brings
// the product's first sale, for its life start) gives the prefix sums, from the latest week backwards,
//   P(e) = Σ_{k≤e} x_k,   K(e) = Σ_{k≤e} k·x_k,   E(e) = Σ_{k≤e} 0.8^k·x_k,
// kept per product as arrays next to the sorted array of its weeks with sales. A prefix sum at any
// week e is then the entry of the last week with sales ≤ e, found by width_bucket (binary search),
// and every sum the methods need is a difference of two prefix sums, for every forecast origin at
// once. No dense product × week series is built (that would be 5M rows). Products without sales
// forecast 0 and need no series (nor do those whose sales are all older: their fit is 0 as well).
import { addDaysIso, GRID_HISTORY_WEEKS } from "../../../shared/forecasting.ts";
import { isProductCategorySql } from "../../modules/config/category-types.ts";
import {
  calendarWeekSql,
  calendarWeeks,
  forecastFiguresSql,
} from "../../modules/forecasting/forecast-weeks.ts";
import type { CalcModule } from "../calculate.ts";
import { createParametersTable, setLocal, utcDay, utcMidnight } from "./context.ts";

/** Weeks of history the forecast looks at. */
const MAX_WEEKS = 104;
/** Weeks forecast ahead. */
const HORIZON = 13;
/** Weeks of the backtest. */
const BACKTEST_WEEKS = 8;
/** Seasonal runs from this many weeks of history; below two full years (MAX_WEEKS) its index is smoothed. */
const SEASONAL_MIN_WEEKS = 53;
/** The category sums reach back to week k = CATEGORY_WEEKS − 1 (the oldest origin's 5 weeks a year back). */
const CATEGORY_WEEKS = BACKTEST_WEEKS + 54;

const DAY_MS = 86_400_000;
const WEEKS = Array.from({ length: HORIZON }, (_, i) => i + 1);

/** The per-product prefix-sum arrays (one entry per week with sales, in the order of ks). */
const P = "cp";
const K = "ck";
const E = "ce";

/**
 * The prefix sum (array j) over weeks k ≤ e, for an SQL expression e. width_bucket answers how many
 * of the product's weeks with sales are ≤ e, i.e. the index of the last of them; 0 (none) subscripts
 * out of range, which is NULL, so the sum is 0.
 */
function prefix(j: string, e: string): string {
  return `COALESCE(s.${j}[width_bucket(${e}, s.ks)], 0)`;
}

/** n, the whole weeks from the life start (an SQL date expression) to D0 ($1), at most MAX_WEEKS. */
function weeksSince(lifeStart: string): string {
  return `LEAST(${MAX_WEEKS}, GREATEST(0, ($1::date - ${lifeStart} + 1) / 7))::int`;
}

/** The method that runs: seasonal when requested and n ≥ 53 (a year and a week), else standard. */
function methodOf(requested: string, n: string): string {
  return `CASE WHEN ${requested} = 'seasonal' AND ${n} >= ${SEASONAL_MIN_WEEKS} THEN 'seasonal' ELSE 'standard' END`;
}

export const forecastModule: CalcModule = {
  name: "forecast",
  tables: ["product_forecasts", "product_forecast_accuracy"],
  // It reads the imported tables and the settings only (its life start does not come from
  // product_metrics): a Full Reset runs it on the second connection.
  beside: true,
  async run({ conn, asOf }) {
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

    // Forecast origins, in k: origin o uses weeks k ≥ o only (len = n − o weeks, the spec's weeks
    // 1 … t−1 with t − 1 = n − o) and forecasts week k = o − 1. o = 0 is the forecast itself; o = 1 … 8
    // are the backtest's (when n ≥ 9), whose actual is x at k = o − 1 = P(o−1) − P(o−2). With
    // m = min(len, 26):
    //   level ℓ = Σ_{k≥o} 0.8^(k−o) x_k ÷ Σ_{k=o}^{n−1} 0.8^(k−o) = 1.25^o (E(n−1) − E(o−1)) ÷ ((1 − 0.8^len) ÷ 0.2);
    //   trend: the weeks k = o … o+m−1 (o+m−1 = min(n−1, o+25)) have Σx = P(o+m−1) − P(o−1), Σk·x
    //     likewise from K, Σk = m(2o+m−1)/2 and m·Σk² − (Σk)² = m²(m²−1)/12; the slope on t is minus
    //     the slope on k, so b = (Σk·Σx − m·Σk·x) ÷ (m²(m²−1)/12), and 0 when len < 8;
    //   seasonal: with len ≥ 104 (only at o = 0 with n = 104) the mean of x at k = 51−h … 53−h
    //     = (P(53−h) − P(50−h)) ÷ 3 times the growth; with 53 ≤ len < 104 (every backtest origin
    //     where it runs: they have at most 103 weeks) smoothed, see `smoothed`; with len < 53 it does
    //     not run: at o = 0 the product forecasts standard, at a backtest origin its error is null.
    // Weeks before the life start (k ≥ n) never enter: every prefix sum used stops at k ≤ n − 1
    // (the 5-week spans of the smoothed seasonal through plast = P(n − 1)); the category's sums,
    // which take the product's own weeks out again, use the untruncated P.
    // One row per product; the SQL for the 9 origins is spelled out below. Each stage is
    // MATERIALIZED: otherwise the planner would copy a column's expression (lookups included) into
    // every use of it.
    const pre = (j: string, e: number | string) => (e === -1 ? "0" : prefix(j, String(e)));
    const ORIGINS = Array.from({ length: BACKTEST_WEEKS + 1 }, (_, o) => o);
    const BACKTEST = ORIGINS.slice(1);
    const len = (o: number) => `(n - ${o})`;
    const m = (o: number) => `LEAST(n - ${o}, 26)`;
    const lookups = [
      `${pre(E, "l.n - 1")} AS e_end`,
      // P, K, E at k = 0 … 7 (the origins' o − 1)
      ...BACKTEST.map(
        (o) => `${pre(P, o - 1)} AS p${o - 1}, ${pre(K, o - 1)} AS k${o - 1}, ${pre(E, o - 1)} AS e${o - 1}`,
      ),
      // P at k = 8: the naive baseline's week for the oldest origin
      `${pre(P, 8)} AS p8`,
      // P, K at the end of each origin's trend weeks
      ...ORIGINS.map(
        (o) =>
          `${pre(P, `LEAST(l.n - 1, ${o + 25})`)} AS ph${o}, ${pre(K, `LEAST(l.n - 1, ${o + 25})`)} AS kh${o}`,
      ),
      // P at k = 36 … 61 when seasonal can run (n ≥ 53): the forecast's seasonal weeks a year back
      // (k = 36 … 53), the backtest's (k = o + 48 … o + 53), each origin's last 52 weeks (k = o + 51)
      // and the seasonal-naive baseline's week (k = o + 51, needs n − o ≥ 52); and P at n − 1, the
      // product's first full week, where a 5-week span reaches past it (into the partial week).
      ...Array.from(
        { length: 26 },
        (_, i) => `CASE WHEN l.n >= ${SEASONAL_MIN_WEEKS} THEN ${pre(P, 36 + i)} END AS s${36 + i}`,
      ),
      `CASE WHEN l.n >= ${SEASONAL_MIN_WEEKS} THEN ${pre(P, "l.n - 1")} END AS plast`,
      // growth: the last 52 weeks ÷ the 52 before
      `CASE WHEN l.n >= ${MAX_WEEKS} THEN ${pre(P, 103)} END AS p103`,
    ];
    const col = (c: string, e: number) => (e === -1 ? "0" : `${c}${e}`);
    // The smoothed seasonal forecast (n' = the origin's weeks, 53 ≤ n' < 104) of the week a year
    // after k = c (the week centred in the 5 weeks k = c − 2 … c + 2) for origin o (its year: the
    // weeks k = o … o + 51): w·B₅ + (1 − w)·Ȳ·C with w = n' ÷ 104, B₅ = the mean of the product's
    // weeks among c − 2 … c + 2 within its life (k ≤ n − 1), Ȳ = the mean of its year, and C = its
    // primary category's index for those weeks: the category's other products' mean of the 5 weeks ÷
    // their mean of the year (1 when they sold nothing that year, or it has no category). The category
    // sums (cp[k + 1] = Σ of weeks 0 … k) include the product's own sales, which are taken out.
    const smoothed = (o: number, c: number) => {
      const [lo, hi] = [c - 3, c + 2];
      const own5 = `(CASE WHEN ${hi} <= n - 1 THEN s${hi} ELSE plast END - s${lo})`;
      const full5 = `(s${hi} - s${lo})`;
      const year = `(s${o + 51} - ${col("p", o - 1)})`;
      const cat5 = `GREATEST(0, cp[${hi + 1}] - cp[${lo + 1}] - ${full5})`;
      const catYear = `(cp[${o + 52}] - ${o === 0 ? "0" : `cp[${o}]`} - ${year})`;
      const w = `(${len(o)})::float8 / ${MAX_WEEKS}`;
      return `${w} * ${own5} / (LEAST(${hi}, n - 1) - ${lo}) + (1 - ${w}) * ${year} / 52 * CASE WHEN ${catYear} > 0 THEN ${cat5} / 5 / (${catYear} / 52) ELSE 1 END`;
    };
    const level = (o: number) =>
      `power(1.25::float8, ${o}) * (e_end - ${col("e", o - 1)}) * 0.2 / (1 - power(0.8::float8, ${len(o)}))`;
    const trend = (o: number) =>
      `CASE WHEN ${len(o)} < 8 THEN 0::float8 ELSE ((${m(o)} * (${2 * o} + ${m(o)} - 1) / 2)::float8 * (ph${o} - ${col("p", o - 1)}) - ${m(o)} * (kh${o} - ${col("k", o - 1)})) / (${m(o)} * ${m(o)} * (${m(o)} * ${m(o)} - 1) / 12)::float8 END`;
    const origins = [
      `${level(0)} AS level`,
      `${trend(0)} AS trend`,
      `CASE WHEN p103 - s51 > 0 THEN LEAST(2, GREATEST(0.5, s51 / (p103 - s51))) ELSE 1 END AS growth`,
      // the forecast's seasonal bases: with n ≥ 104, baseₕ = mean of x at t = n+h−53 … n+h−51, i.e.
      // k = 51−h … 53−h; with 53 ≤ n < 104, the smoothed forecast of the week a year after k = 52−h
      `CASE WHEN method = 'seasonal' OR (auto AND n >= ${SEASONAL_MIN_WEEKS}) THEN
         CASE WHEN n >= ${MAX_WEEKS} THEN ARRAY[${WEEKS.map((h) => `(s${53 - h} - s${50 - h}) / 3`).join(", ")}]
         ELSE ARRAY[${WEEKS.map((h) => smoothed(0, 52 - h)).join(", ")}] END END AS bases`,
      ...BACKTEST.map((o) =>
        [
          `CASE WHEN n > ${BACKTEST_WEEKS} THEN GREATEST(0, ${level(o)} + 0.8 * ${trend(o)}) END AS std${o}`,
          // seasonal, where it runs (n' = n − o ≥ 53; always below 104, so smoothed); null where it
          // falls back to standard: no error is scored for it there
          `CASE WHEN ${len(o)} >= ${SEASONAL_MIN_WEEKS} THEN ${smoothed(o, o + 51)} END AS seas${o}`,
          `${col("p", o - 1)} - ${col("p", o - 2)} AS a${o}`,
          // naive: the origin's latest week (k = o); seasonal naive: the week a year before the
          // forecast week (k = o + 51) when the origin has 52 weeks, else the naive
          `p${o} - ${col("p", o - 1)} AS nv${o}`,
          `CASE WHEN ${len(o)} >= 52 THEN s${o + 51} - s${o + 50} ELSE p${o} - ${col("p", o - 1)} END AS sn${o}`,
        ].join(", "),
      ),
    ];
    // The backtest sums of standard, from its one-step forecasts std{o} (every origin).
    const backtest = (name: string, f: (o: number) => string) => [
      `${BACKTEST.map((o) => `abs(a${o} - ${f(o)})`).join(" + ")} AS abs_${name}`,
      `${BACKTEST.map((o) => `${f(o)} - a${o}`).join(" + ")} AS err_${name}`,
      `(${BACKTEST.map((o) => `CASE WHEN a${o} > 0 THEN abs(a${o} - ${f(o)}) / a${o} ELSE 0 END`).join(" + ")}) / NULLIF(${BACKTEST.map((o) => `(a${o} > 0)::int`).join(" + ")}, 0) AS mape_${name}`,
    ];
    // Seasonal's sums over the origins where it ran (seas{o} not null), and over the same origins
    // standard's error (for the comparison of the two) and the baselines' (its MASE and baselines).
    const ran = (o: number, e: string) => `CASE WHEN seas${o} IS NOT NULL THEN ${e} ELSE 0 END`;
    const sumRan = (e: (o: number) => string) => BACKTEST.map((o) => ran(o, e(o))).join(" + ");
    const seasonalBacktest = [
      `${sumRan((o) => `a${o}`)} AS actual_seasonal`,
      `${sumRan((o) => `abs(a${o} - seas${o})`)} AS abs_seasonal`,
      `${sumRan((o) => `seas${o} - a${o}`)} AS err_seasonal`,
      `(${sumRan((o) => `CASE WHEN a${o} > 0 THEN abs(a${o} - seas${o}) / a${o} ELSE 0 END`)}) / NULLIF(${sumRan((o) => `(a${o} > 0)::int`)}, 0) AS mape_seasonal`,
      `${sumRan((o) => `abs(a${o} - std${o})`)} AS abs_standard_common`,
      `${sumRan((o) => `abs(a${o} - nv${o})`)} AS abs_naive_seasonal`,
      `${sumRan((o) => `abs(a${o} - sn${o})`)} AS abs_snaive_seasonal`,
    ];
    // Fₕ: seasonal = baseₕ × g; standard = max(0, ℓ + b·(φ + … + φʰ)) with φ + … + φʰ = 4(1 − 0.8ʰ).
    const weekly = (h: number) =>
      `CASE WHEN chosen = 'seasonal' THEN bases[${h}] * growth ELSE GREATEST(0, level + trend * 4 * (1 - power(0.8::float8, ${h}))) END`;
    // JIT would spend seconds compiling this statement's long expressions for a sub-second run: off
    // for this statement only, put back right after. Merge joins off: the planner, not knowing the
    // CTEs' sizes, would sort the ≈ 600k weeks with sales to merge them with the primary categories
    // (catw) where a hash join on the 50k products reads them once (≈ 0.3 s less on 50k products).
    const restore = await setLocal(conn, {
      jit: "off",
      parallel_tuple_cost: "0.01",
      enable_mergejoin: "off",
    });
    await conn.query(
      `CREATE TEMP TABLE fc_fit ON COMMIT DROP AS
       WITH sales0 AS (
         SELECT pid, LEAST(($1::date - (order_date AT TIME ZONE 'UTC')::date) / 7, ${MAX_WEEKS}) AS k,
           -- the Forecasting grid's history: calendar week c (1 = the week before D0's, … 12)
           CASE WHEN (order_date AT TIME ZONE 'UTC')::date >= $3::date - ${7 * GRID_HISTORY_WEEKS}
                 AND (order_date AT TIME ZONE 'UTC')::date < $3::date
             THEN ($3::date - (order_date AT TIME ZONE 'UTC')::date - 1) / 7 + 1 END AS c,
           sum(quantity) AS q, min(order_date) FILTER (WHERE quantity > 0) AS first
         FROM order_lines
         WHERE status = 'completed' AND order_date <= $2::timestamptz
         GROUP BY 1, 2, 3
       ),
       sales AS (
         SELECT pid, k, GREATEST(sum(q), 0)::float8 AS x, min(first) AS first
         FROM sales0
         GROUP BY 1, 2
       ),
       hist AS (
         SELECT pid, ARRAY[${Array.from({ length: GRID_HISTORY_WEEKS }, (_, i) => `COALESCE(sum(q) FILTER (WHERE c = ${GRID_HISTORY_WEEKS - i}), 0)`).join(", ")}]::float8[] AS history
         FROM sales0 WHERE c IS NOT NULL
         GROUP BY pid
       ),
       running AS (
         SELECT pid, k, first, sum(x) OVER w AS p, sum(k * x) OVER w AS kx, sum(x * power(0.8::float8, k)) OVER w AS e
         FROM sales
         WINDOW w AS (PARTITION BY pid ORDER BY k ROWS UNBOUNDED PRECEDING)
       ),
       series AS (
         SELECT pid, array_agg(k ORDER BY k) AS ks, array_agg(p ORDER BY k) AS cp, array_agg(kx ORDER BY k) AS ck,
           array_agg(e ORDER BY k) AS ce, (min(first) AT TIME ZONE 'UTC')::date AS first_sold
         FROM running
         GROUP BY pid
       ),
       -- Each merchandise product's primary category (§5: its linked product category of the highest
       -- level, ties the smallest id), and per category the running sums of its products' weekly
       -- units over k = 0 … ${CATEGORY_WEEKS - 1}, every week (cp[k + 1] = Σ of weeks 0 … k): the smoothed
       -- seasonal's category index. The weeks come from sales0 (already materialized: reading
       -- sales here as well would materialize it, ≈ 0.2 s on 50k products), each part clamped at 0
       -- as sales clamps a week; a week split by the grid's calendar-week boundary with a
       -- correction in one part only is the one case where the two differ.
       prim AS MATERIALIZED (
         SELECT DISTINCT ON (pc.pid) pc.pid, pc.category_id
         FROM product_categories pc
         JOIN categories c ON c.id = pc.category_id AND ${isProductCategorySql("c")}
         JOIN products p ON p.pid = pc.pid AND p.kind = 'merchandise'
         ORDER BY pc.pid, c.level DESC, c.id
       ),
       catw AS (
         SELECT pr.category_id, s.k, sum(GREATEST(s.q, 0))::float8 AS x
         FROM sales0 s JOIN prim pr ON pr.pid = s.pid
         WHERE s.k < ${CATEGORY_WEEKS}
         GROUP BY 1, 2
       ),
       catp AS (
         SELECT category_id, array_agg(cum ORDER BY k) AS cp
         FROM (
           SELECT c.category_id, g.k, sum(COALESCE(w.x, 0)) OVER (PARTITION BY c.category_id ORDER BY g.k) AS cum
           FROM (SELECT DISTINCT category_id FROM catw) c
           CROSS JOIN generate_series(0, ${CATEGORY_WEEKS - 1}) AS g(k)
           LEFT JOIN catw w ON w.category_id = c.category_id AND w.k = g.k
         ) z
         GROUP BY 1
       ),
       prefixes AS MATERIALIZED (
         SELECT s.pid, l.n, l.method, l0.auto,
           ${lookups.join(",\n           ")},
           CASE WHEN l.n >= ${SEASONAL_MIN_WEEKS} THEN cat.cp END AS cp
         FROM series s
         JOIN fc_life l0 ON l0.pid = s.pid
         LEFT JOIN prim pr ON pr.pid = s.pid
         LEFT JOIN catp cat ON cat.category_id = pr.category_id,
         LATERAL (SELECT ${weeksSince("LEAST(l0.life0, s.first_sold)")} AS n) w,
         LATERAL (SELECT w.n, ${methodOf("l0.requested", "w.n")} AS method) l
         WHERE l.n > 0
       ),
       origins AS MATERIALIZED (
         SELECT pid, n, method, auto,
           ${origins.join(",\n           ")}
         FROM prefixes
       ),
       scored AS MATERIALIZED (
         SELECT pid, n, method, auto, bases, level, trend, growth,
           ${BACKTEST.map((o) => `a${o}`).join(" + ")} AS actual,
           ${backtest("standard", (o) => `std${o}`).join(",\n           ")},
           ${seasonalBacktest.join(",\n           ")},
           ${BACKTEST.map((o) => `abs(a${o} - nv${o})`).join(" + ")} AS abs_naive,
           ${BACKTEST.map((o) => `abs(a${o} - sn${o})`).join(" + ")} AS abs_snaive
         FROM origins
       ),
       -- auto_forecast_method: a product without its own method takes the method whose backtest had
       -- the lower error (Σ|A − F|) over the weeks where both ran (those where seasonal ran: standard
       -- runs at every origin); ties, no such week (n ≤ 53) and ΣA = 0 over them keep the default's.
       chosen AS (
         SELECT s.*, CASE WHEN by_backtest AND abs_seasonal < abs_standard_common THEN 'seasonal'
                          WHEN by_backtest AND abs_standard_common < abs_seasonal THEN 'standard'
                          ELSE s.method END AS chosen,
           COALESCE(by_backtest AND abs_seasonal <> abs_standard_common, false) AS chosen_by_backtest
         FROM scored s,
         LATERAL (SELECT s.auto AND s.actual_seasonal > 0 AS by_backtest) b
       )
       SELECT COALESCE(c.pid, h.pid) AS pid, n, chosen AS method, chosen_by_backtest,
         ARRAY[${WEEKS.map(weekly).join(", ")}] AS weekly,
         ${WEEKS.map(weekly).join(" + ")} AS total,
         actual, abs_standard, err_standard, mape_standard, actual_seasonal, abs_seasonal, err_seasonal,
         mape_seasonal, abs_naive, abs_snaive, abs_naive_seasonal, abs_snaive_seasonal, h.history
       FROM chosen c
       -- a product with sales in the grid's weeks but n = 0 (life started this week) has no fit:
       -- its row carries the history only (n null)
       FULL JOIN hist h ON h.pid = c.pid`,
      [d0, asOf, calendarWeeks(d0).asOfWeek],
    );
    await restore();
    await conn.exec("ALTER TABLE fc_fit ADD PRIMARY KEY (pid)");
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
