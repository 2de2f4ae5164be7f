// Module forecast of the planning engine: the 13-week demand forecast of every product that is not
// excluded, and a rolling-origin backtest of both methods (docs/metrics.md §8).
//
// How it stays set-based and fast (50k products, 3M order lines): weeks are numbered k backwards
// from D0 (k = 0 is D0−6 … D0; the spec's t = n − k). For each product that sold in the last 104
// weeks one pass of running sums over its *sparse* weekly sales (window functions over weeks with
// sales only) gives the prefix sums, from the latest week backwards,
//   P(e) = Σ_{k≤e} x_k,   K(e) = Σ_{k≤e} k·x_k,   E(e) = Σ_{k≤e} 0.8^k·x_k,
// kept per product as arrays next to the sorted array of its weeks with sales. A prefix sum at any
// week e is then the entry of the last week with sales ≤ e, found by width_bucket (binary search),
// and every sum the methods need is a difference of two prefix sums, for every forecast origin at
// once. No dense product × week series is built (that would be 5M rows). Products without such
// sales forecast 0 and need no series.
import type { CalcModule } from "../calculate.ts";
import { createParametersTable, utcDay, utcMidnight } from "./context.ts";

/** Weeks of history the forecast looks at. */
const MAX_WEEKS = 104;
/** Weeks forecast ahead. */
const HORIZON = 13;
/** Weeks of the backtest. */
const BACKTEST_WEEKS = 8;

const DAY_MS = 86_400_000;
const WEEKS = Array.from({ length: HORIZON }, (_, i) => i + 1);

/** Columns of the per-product prefix-sum array c[i][j]. */
const P = 1;
const K = 2;
const E = 3;

/**
 * The prefix sum (column j of c) over weeks k ≤ e, for an SQL expression e. width_bucket answers
 * how many of the product's weeks with sales are ≤ e, i.e. the index of the last of them; 0 (none)
 * subscripts out of range, which is NULL, so the sum is 0.
 */
function prefix(j: number, e: string): string {
  return `COALESCE(s.c[width_bucket(${e}, s.ks)][${j}], 0)`;
}

export const forecastModule: CalcModule = {
  name: "forecast",
  tables: ["product_forecasts", "product_forecast_accuracy"],
  async run({ conn, asOf }) {
    const d0 = utcDay(asOf);
    const weekStart = utcDay(new Date(utcMidnight(asOf).getTime() + DAY_MS));
    // The oldest week (k = 103) starts at D0 − 727.
    const seriesFrom = new Date(utcMidnight(asOf).getTime() - (7 * MAX_WEEKS - 1) * DAY_MS);

    await conn.exec("TRUNCATE product_forecasts, product_forecast_accuracy");
    await createParametersTable(conn);
    await conn.exec("DROP TABLE IF EXISTS fc_life, fc_fit");

    // Every product that gets a forecast (not excluded), its n and its methods. The life start is
    // computed here with §2's definition (earliest of created_at's UTC date, first_received, the
    // first sale, the first receipt) instead of being read from product_metrics.history_days, so
    // this module does not depend on what the stock_history module stores. product_metrics.first_sold
    // (module product_metrics, which runs first) is the first sale's UTC date. LEAST skips nulls;
    // a life start after D0 gives n = 0.
    await conn.query(
      `CREATE TEMP TABLE fc_life ON COMMIT DROP AS
       WITH receipt AS (
         SELECT l.pid, min(r.received_date) AS first_receipt
         FROM receivings r JOIN po_lines l ON l.id = r.po_line_id
         GROUP BY l.pid
       ),
       life AS (
         SELECT c.pid, c.forecast_method AS requested,
           LEAST((p.created_at AT TIME ZONE 'UTC')::date, p.first_received, m.first_sold, rc.first_receipt)
             AS life_start
         FROM calc_params c
         JOIN products p ON p.pid = c.pid
         LEFT JOIN product_metrics m ON m.pid = c.pid
         LEFT JOIN receipt rc ON rc.pid = c.pid
         WHERE NOT c.excluded
       ),
       weeks AS (
         SELECT pid, requested, LEAST(${MAX_WEEKS}, GREATEST(0, ($1::date - life_start + 1) / 7))::int AS n
         FROM life
       )
       SELECT pid, requested, n,
         CASE WHEN requested = 'seasonal' AND n >= 53 THEN 'seasonal' ELSE 'standard' END AS method
       FROM weeks`,
      [d0],
    );
    await conn.exec("ALTER TABLE fc_life ADD PRIMARY KEY (pid); ANALYZE fc_life");

    // One row per product and forecast origin o: the origin uses weeks k ≥ o only (len = n − o
    // weeks, the spec's weeks 1 … t−1) and forecasts week k = o − 1. o = 0 is the forecast itself;
    // o = 1 … 8 are the backtest's origins (only when n ≥ 9), whose actual is x at k = o − 1.
    // With m = min(len, 26):
    //   level ℓ = Σ_{k≥o} 0.8^(k−o) x_k ÷ Σ_{k=o}^{n−1} 0.8^(k−o) = 1.25^o (E(n−1) − E(o−1)) ÷ ((1 − 0.8^len) ÷ 0.2);
    //   trend: the weeks k = o … o+m−1 have Σx = P(o+m−1) − P(o−1), Σk·x likewise from K, Σk =
    //     m(2o+m−1)/2 and m·Σk² − (Σk)² = m²(m²−1)/12; the slope on t = −(the slope on k), so
    //     b = (Σk·Σx − m·Σk·x) ÷ (m²(m²−1)/12), and 0 when len < 8;
    //   seasonal base of week o−1 = mean of x at k = o+50, o+51, o+52 = (P(o+52) − P(o+49)) ÷ 3,
    //     used when len ≥ 53 (else standard); growth only when len ≥ 104, i.e. at o = 0 with n = 104
    //     (the backtest's origins have at most 103 weeks, so their growth is 1).
    // Weeks before the life start (k ≥ n) never enter: every prefix sum used stops at k ≤ n − 1.
    const m = `LEAST(l.n - o, 26)`;
    const inBacktest = `o >= 1`;
    // JIT would spend seconds compiling this statement's long expressions for a sub-second run: off
    // for this statement only (set_config(…, true) lasts until the transaction ends, so the
    // previous value is put back right after).
    const [setting] = await conn.query<{ jit: string }>("SELECT current_setting('jit') AS jit");
    await conn.exec("SELECT set_config('jit', 'off', true)");
    await conn.query(
      `CREATE TEMP TABLE fc_fit ON COMMIT DROP AS
       WITH sales AS (
         SELECT pid, ($1::date - (order_date AT TIME ZONE 'UTC')::date) / 7 AS k, sum(quantity)::float8 AS x
         FROM order_lines
         WHERE status = 'completed' AND order_date >= $2::timestamptz AND order_date <= $3::timestamptz
         GROUP BY 1, 2
       ),
       running AS (
         SELECT pid, k, sum(x) OVER w AS p, sum(k * x) OVER w AS kx, sum(x * power(0.8::float8, k)) OVER w AS e
         FROM sales
         WINDOW w AS (PARTITION BY pid ORDER BY k ROWS UNBOUNDED PRECEDING)
       ),
       series AS (
         SELECT pid, array_agg(k ORDER BY k) AS ks, array_agg(ARRAY[p, kx, e] ORDER BY k) AS c
         FROM running
         GROUP BY pid
       ),
       -- The prefix-sum lookups, once per product and origin. MATERIALIZED: otherwise the planner
       -- would copy these expressions into every later use of the columns and repeat the lookups.
       origin AS MATERIALIZED (
         SELECT s.pid, l.method, o, l.n - o AS len, ${m} AS m,
           power(1.25::float8, o) * (${prefix(E, "l.n - 1")} - ${prefix(E, "o - 1")}) AS ew,
           ${prefix(P, `o + ${m} - 1`)} - ${prefix(P, "o - 1")} AS sx,
           ${prefix(K, `o + ${m} - 1`)} - ${prefix(K, "o - 1")} AS skx,
           CASE WHEN l.n - o >= 53 THEN (${prefix(P, "o + 52")} - ${prefix(P, "o + 49")}) / 3 END AS base,
           CASE WHEN l.n - o >= ${MAX_WEEKS} THEN ${prefix(P, "o + 51")} - ${prefix(P, "o - 1")} END AS last52,
           CASE WHEN l.n - o >= ${MAX_WEEKS} THEN ${prefix(P, "o + 103")} - ${prefix(P, "o + 51")} END AS prior52,
           CASE WHEN o >= 1 THEN ${prefix(P, "o - 1")} - ${prefix(P, "o - 2")} END AS actual,
           -- the forecast's 13 seasonal bases: baseₕ = mean of x at t = n+h−53 … n+h−51 = k = 51−h … 53−h
           CASE WHEN o = 0 AND l.method = 'seasonal'
             THEN ARRAY[${WEEKS.map((h) => `(${prefix(P, String(53 - h))} - ${prefix(P, String(50 - h))}) / 3`).join(", ")}]
           END AS bases
         FROM series s
         JOIN fc_life l ON l.pid = s.pid AND l.n > 0
         CROSS JOIN LATERAL generate_series(0, CASE WHEN l.n > ${BACKTEST_WEEKS} THEN ${BACKTEST_WEEKS} ELSE 0 END) AS o
       ),
       fit AS (
         SELECT pid, method, o, len, actual, base, bases,
           ew * 0.2 / (1 - power(0.8::float8, len)) AS level,
           CASE WHEN len < 8 THEN 0::float8
             ELSE ((m * (2 * o + m - 1) / 2)::float8 * sx - m * skx) / (m * m * (m * m - 1) / 12)::float8
           END AS trend,
           CASE WHEN prior52 > 0 THEN LEAST(2, GREATEST(0.5, last52 / prior52)) ELSE 1 END AS growth
         FROM origin
       ),
       one_step AS (
         SELECT pid, o, level, trend, growth, bases, actual,
           GREATEST(0, level + 0.8 * trend) AS f_standard,
           CASE WHEN len >= 53 THEN base * growth ELSE GREATEST(0, level + 0.8 * trend) END AS f_seasonal
         FROM fit
       )
       SELECT pid,
         max(level) FILTER (WHERE o = 0) AS level,
         max(trend) FILTER (WHERE o = 0) AS trend,
         max(growth) FILTER (WHERE o = 0) AS growth,
         max(bases) AS bases,
         sum(actual) FILTER (WHERE ${inBacktest}) AS actual,
         sum(abs(actual - f_standard)) FILTER (WHERE ${inBacktest}) AS abs_standard,
         sum(f_standard - actual) FILTER (WHERE ${inBacktest}) AS err_standard,
         avg(abs(actual - f_standard) / actual) FILTER (WHERE ${inBacktest} AND actual > 0) AS mape_standard,
         sum(abs(actual - f_seasonal)) FILTER (WHERE ${inBacktest}) AS abs_seasonal,
         sum(f_seasonal - actual) FILTER (WHERE ${inBacktest}) AS err_seasonal,
         avg(abs(actual - f_seasonal) / actual) FILTER (WHERE ${inBacktest} AND actual > 0) AS mape_seasonal
       FROM one_step
       GROUP BY pid`,
      [d0, seriesFrom, asOf],
    );
    await conn.query("SELECT set_config('jit', $1, true)", [setting!.jit]);
    await conn.exec("ALTER TABLE fc_fit ADD PRIMARY KEY (pid)");

    // Fₕ for h = 1 … 13: seasonal = baseₕ × g; standard = max(0, ℓ + b·(φ + … + φʰ)) with
    // φ + … + φʰ = 4(1 − 0.8ʰ). Products without a fit (no sales in their weeks, or n = 0) forecast 0.
    const forecasts = await conn.execute(
      `INSERT INTO product_forecasts (pid, method, requested_method, week_start, weekly, total_91d)
       SELECT l.pid, l.method, l.requested, $1::date, w.weekly, w.total
       FROM fc_life l
       LEFT JOIN fc_fit f ON f.pid = l.pid
       CROSS JOIN LATERAL (
         SELECT array_agg(v ORDER BY h) AS weekly, sum(v) AS total
         FROM (
           SELECT h, CASE
               WHEN f.pid IS NULL THEN 0::float8
               WHEN l.method = 'seasonal' THEN f.bases[h] * f.growth
               ELSE GREATEST(0, f.level + f.trend * 4 * (1 - power(0.8::float8, h)))
             END AS v
           FROM generate_series(1, ${HORIZON}) AS h
         ) q
       ) w`,
      [weekStart],
    );

    // Backtest of both methods where n ≥ 9. A product without a fit sold nothing in those weeks:
    // ΣA = 0, so WAPE and bias are null, and MAPE (no week with A > 0) too.
    const accuracy = await conn.execute(
      `INSERT INTO product_forecast_accuracy (pid, method, weeks, actual, wape, mape, bias)
       SELECT l.pid, m.method, ${BACKTEST_WEEKS}, COALESCE(f.actual, 0),
         CASE m.method WHEN 'standard' THEN f.abs_standard ELSE f.abs_seasonal END / NULLIF(f.actual, 0),
         CASE m.method WHEN 'standard' THEN f.mape_standard ELSE f.mape_seasonal END,
         CASE m.method WHEN 'standard' THEN f.err_standard ELSE f.err_seasonal END / NULLIF(f.actual, 0)
       FROM fc_life l
       CROSS JOIN (VALUES ('standard'), ('seasonal')) AS m(method)
       LEFT JOIN fc_fit f ON f.pid = l.pid
       WHERE l.n > ${BACKTEST_WEEKS}`,
    );

    // product_metrics was refilled by this run with forecast_method null (excluded products keep
    // it); one UPDATE sets the method that ran.
    await conn.exec(
      `UPDATE product_metrics m SET forecast_method = l.method FROM fc_life l WHERE l.pid = m.pid`,
    );
    await conn.exec("DROP TABLE fc_life, fc_fit");
    return forecasts + accuracy;
  },
};
