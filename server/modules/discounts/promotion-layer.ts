// Promotions as a layer of the forecast (docs/metrics.md §16 "Promotions in the forecast").
//
// A saved promotion that is not cancelled lifts its products' daily forecast on its days by its
// stored uplift: the day's system figure × uplift, i.e. a change of (uplift − 1) × the system
// figure. Days are counted from the first forecast day D0 + 1 (k = 0, 1, …); the system figure of
// day k is the engine's week ⌊k ÷ 7⌋ + 1 (the 13th repeats beyond the horizon, as planning reads
// it) ÷ 7. When promotions overlap on a product's day the newest one counts (as overrides do).
// One set of rows feeds three readers with the same numbers: module planning (F(H), every
// calculation), the refresh when a promotion is saved or cancelled (planning-refresh.ts), and the
// Forecasting page (per calendar week, beside the overrides).
//
// `stop_reordering`: a product of such a promotion gets no reorder suggestion while the promotion
// runs, from its start to its end date: on the planning day D0 + 1 the promotion has started and
// not ended (and is not cancelled). Its forecast keeps the promotion's uplift.
//
// The dip after a promotion (§16.2): for promotion_products.dip_weeks weeks after its end, the
// product's figure is system × (1 − dip), through the same rows (a day factor below 1).
import { DIP_MAX_WEEKS } from "../../../shared/discounts.ts";

/**
 * SQL: the promotion days of the products within reach of planning, one row per product and day
 * offset k ≥ 0 from D0 + 1: (pid, k, uplift, promotion_id). `d0` is an SQL date; `pidFilter` an
 * extra condition on `pp.pid`. The dip after a promotion (§16.2: promotion_products.dip for dip_weeks
 * weeks after its end) comes as days whose factor is 1 − dip; on a day that is one promotion's and
 * another's dip, the promotion's own day counts.
 */
export function promotionDaysSql(d0: string, pidFilter = ""): string {
  return `SELECT DISTINCT ON (pid, k) pid, k, uplift, promotion_id FROM (
      SELECT pp.pid, d.k, pp.uplift, pr.id AS promotion_id, 0 AS after
      FROM promotions pr
      JOIN promotion_products pp ON pp.promotion_id = pr.id
      CROSS JOIN LATERAL generate_series(GREATEST(pr.starts_on - (${d0} + 1), 0), pr.ends_on - (${d0} + 1)) AS d(k)
      WHERE pr.cancelled_at IS NULL AND pr.ends_on > ${d0} ${pidFilter}
      UNION ALL
      SELECT pp.pid, d.k, 1 - pp.dip, pr.id, 1
      FROM promotions pr
      JOIN promotion_products pp ON pp.promotion_id = pr.id AND pp.dip_weeks > 0
      CROSS JOIN LATERAL generate_series(GREATEST(pr.ends_on + 1 - (${d0} + 1), 0),
        pr.ends_on + 7 * pp.dip_weeks - (${d0} + 1)) AS d(k)
      WHERE pr.cancelled_at IS NULL AND pr.ends_on + 7 * pp.dip_weeks > ${d0} ${pidFilter}
    ) x
    ORDER BY pid, k, after, promotion_id DESC`;
}

/**
 * SQL (a boolean): whether any promotion (or the longest dip after one) reaches days after `d0`
 * (planning skips the layer otherwise).
 */
export function anyPromotionSql(d0: string): string {
  return `EXISTS (SELECT 1 FROM promotions pr WHERE pr.cancelled_at IS NULL AND pr.ends_on + ${7 * DIP_MAX_WEEKS} > ${d0})`;
}

/** SQL: the engine's system figure of day k (an SQL int) from `f.weekly`. */
const DAILY_SYSTEM = (k: string) => `(f.weekly[LEAST(${k} / 7 + 1, 13)] / 7.0)`;

/**
 * SQL: F(H)'s change from the promotions, per product: (pid, adj). `base` is a relation with the
 * columns pid, h (the horizon in days), d (demand rate) and is_new, as module planning reads them:
 * a product planned from its forecast gets (uplift − 1) × the day's system figure for each of its
 * promotion days inside the horizon (a day counts by the share of it inside H, as F(H) counts
 * weeks); a product planned from d × H (new, or without a forecast row) gets (uplift − 1) × d.
 */
export function promotionAdjustmentSql(d0: string, base: string, pidFilter = ""): string {
  return `SELECT b.pid, sum((pd.uplift - 1) * LEAST(GREATEST(b.h::float8 - pd.k, 0), 1) *
      CASE WHEN b.is_new OR f.weekly IS NULL THEN COALESCE(b.d, 0)::float8 ELSE ${DAILY_SYSTEM("pd.k")} END) AS adj
    FROM (${promotionDaysSql(d0, pidFilter)}) pd
    JOIN ${base} b ON b.pid = pd.pid
    LEFT JOIN product_forecasts f ON f.pid = pd.pid
    WHERE pd.k < b.h
    GROUP BY b.pid`;
}

/**
 * SQL: the promotion layer per product and calendar forecast week j (1 … 13):
 * (pid, j, delta, promotions) with delta = Σ (uplift − 1) × the day's system figure over the week's
 * promotion days, and the promotions' ids. `d0` is an SQL date, `r` an SQL int (days from D0 + 1 to
 * the first forecast Monday).
 */
export function promotionWeeksSql(d0: string, r: string, pidFilter = ""): string {
  return `SELECT pd.pid, ((pd.k - ${r}) / 7 + 1)::int AS j,
      sum((pd.uplift - 1) * ${DAILY_SYSTEM("pd.k")})::float8 AS delta,
      array_agg(DISTINCT pd.promotion_id) AS promotions
    FROM (${promotionDaysSql(d0, pidFilter)}) pd
    JOIN product_forecasts f ON f.pid = pd.pid
    WHERE pd.k >= ${r} AND pd.k < ${r} + 91
    GROUP BY 1, 2`;
}

/**
 * SQL: the products whose reordering a stop_reordering promotion stops on `day` (an SQL date; the
 * planning day D0 + 1): (pid, promotion_id).
 */
export function stoppedReorderSql(day: string, pidFilter = ""): string {
  return `SELECT DISTINCT ON (pp.pid) pp.pid, pr.id AS promotion_id
    FROM promotions pr
    JOIN promotion_products pp ON pp.promotion_id = pr.id
    WHERE pr.stop_reordering AND pr.cancelled_at IS NULL
      AND pr.starts_on <= ${day} AND pr.ends_on >= ${day} ${pidFilter}
    ORDER BY pp.pid, pr.id DESC`;
}
