// The dip after a promotion (docs/metrics.md §16.2): do the shop's past promotions pull sales forward,
// so that the weeks after one sell less than usual? Measured per category from the last 52 weeks of
// order lines of the products module elasticity found discounted weeks for, with module elasticity's
// own definition of a discounted week (§15.1), and stored in category_promotion_dips.
//
// The measurement belongs in the calculation phase (it depends only on the history up to D0). Until
// module elasticity runs it, the first simulation after a calculation runs it here (ensurePromotionDips)
// and marks it with the elasticity's calculation timestamp in calculate_status ('promotion_dips'), so
// it runs once per calculation. `measurePromotionDips` takes any SQL runner: module elasticity can call
// it with its own connection after its fit.
import {
  DIP_MAX_WEEKS,
  DIP_MIN_PROMOTIONS,
  DIP_THRESHOLD,
  type PromotionDip,
} from "../../../shared/discounts.ts";
import type { Database } from "../../db/database.ts";
import { ELASTICITY_WEEKS, LEVEL_STEP, REGULAR_PRICE_WEEKS } from "../../jobs/planning/elasticity.ts";

export { DIP_MAX_WEEKS, DIP_MIN_PROMOTIONS, DIP_THRESHOLD };

/** What the measurement needs of a connection: statements with $n parameters and their rows. */
export interface SqlRunner {
  query<T>(sql: string, params?: unknown[]): Promise<T[]>;
  exec(sql: string, params?: unknown[]): Promise<void>;
}

/** The category figures of §16.2 from its promotions' sums: weeks n and dip share (0, 0: no dip). */
export function dipOf(promotions: number, base: number, after: readonly number[]): { dip: number; weeks: number } {
  if (promotions < DIP_MIN_PROMOTIONS || base <= 0) return { dip: 0, weeks: 0 };
  let weeks = 0;
  while (weeks < Math.min(DIP_MAX_WEEKS, after.length) && after[weeks]! / base <= 1 - DIP_THRESHOLD) weeks++;
  if (weeks === 0) return { dip: 0, weeks: 0 };
  const sold = after.slice(0, weeks).reduce((a, b) => a + b, 0);
  return { dip: Math.round((1 - sold / (weeks * base)) * 10000) / 10000, weeks };
}

/**
 * Measures every category's dip as of `asOf` (the calculation's moment, D0 its UTC day) and replaces
 * category_promotion_dips. Returns the number of categories with at least one promotion.
 */
export async function measurePromotionDips(run: SqlRunner, asOf: Date): Promise<number> {
  const d0 = asOf.toISOString().slice(0, 10);
  const from = new Date(Date.parse(`${d0}T00:00:00Z`) - (ELASTICITY_WEEKS * 7 - 1) * 86_400_000);
  const level = (ratio: string) => `LEAST(1, round(${ratio} / ${LEVEL_STEP}) * ${LEVEL_STEP})`;
  // Per promoted product and week k with sales (k = 0 … 51 back from D0): units, and whether the
  // week is discounted (its level below 1, with §15.1's regular price). Then its promotions (runs of
  // consecutive discounted weeks), the qualifying ones (the DIP_MAX_WEEKS weeks after it inside the
  // 52 weeks and none of them discounted), its regular weekly rate (units ÷ weeks from its first week
  // with a sale in the 52 to D0, without the discounted weeks and the weeks after a promotion, weeks
  // without a sale counting 0) and, per promotion, its units in each week after it.
  const rows = await run.query<{ category_id: number; promotions: number; base: number; after: number[] }>(
    `WITH RECURSIVE promoted AS MATERIALIZED (
       SELECT p.pid, COALESCE(p.regular_price, p.price)::float8 AS regular
       FROM product_elasticities e JOIN products p ON p.pid = e.pid
       WHERE e.discounted_weeks > 0
     ),
     w AS MATERIALIZED (
       SELECT l.pid, (($1::date - (l.order_date AT TIME ZONE 'UTC')::date) / 7)::int AS k,
         SUM(l.quantity)::float8 AS u, (SUM(l.price * l.quantity) / SUM(l.quantity))::float8 AS p
       FROM order_lines l
       WHERE l.pid IN (SELECT pid FROM promoted)
         AND l.status = 'completed' AND l.quantity > 0 AND l.price > 0
         AND l.order_date >= $2::timestamptz AND l.order_date <= $3::timestamptz
       GROUP BY 1, 2
     ),
     r AS MATERIALIZED (
       SELECT w.pid, w.k, w.u,
         ${level(`w.p / LEAST(
           max(w.p) OVER (PARTITION BY w.pid ORDER BY w.k RANGE BETWEEN CURRENT ROW AND ${REGULAR_PRICE_WEEKS} FOLLOWING),
           GREATEST(max(w.p) OVER (PARTITION BY w.pid ORDER BY w.k RANGE BETWEEN ${REGULAR_PRICE_WEEKS} PRECEDING AND CURRENT ROW),
             CASE WHEN w.k < ${REGULAR_PRICE_WEEKS} THEN pr.regular END))`)} < 1 AS disc
       FROM w JOIN promoted pr ON pr.pid = w.pid
     ),
     ep AS MATERIALIZED (
       SELECT pid, min(k) AS k_last FROM (
         SELECT pid, k, k - row_number() OVER (PARTITION BY pid ORDER BY k) AS g FROM r WHERE disc
       ) x GROUP BY pid, g
     ),
     blocked AS (
       SELECT DISTINCT r.pid, r.k FROM r WHERE r.disc
       UNION
       SELECT ep.pid, g.k FROM ep, generate_series(GREATEST(ep.k_last - ${DIP_MAX_WEEKS}, 0), ep.k_last - 1) AS g(k)
     ),
     rate AS (
       SELECT s.pid,
         (s.units - COALESCE(b.units, 0)) / NULLIF(s.kmax + 1 - COALESCE(b.weeks, 0), 0) AS rate
       FROM (SELECT pid, max(k) AS kmax, SUM(u) AS units FROM r GROUP BY pid) s
       LEFT JOIN (
         SELECT b.pid, count(*) AS weeks, SUM(COALESCE(r.u, 0)) AS units
         FROM blocked b LEFT JOIN r ON r.pid = b.pid AND r.k = b.k GROUP BY b.pid
       ) b ON b.pid = s.pid
     ),
     qualified AS (
       SELECT ep.pid, rate.rate,
         ${Array.from({ length: DIP_MAX_WEEKS }, (_, i) => `COALESCE((SELECT r.u FROM r WHERE r.pid = ep.pid AND r.k = ep.k_last - ${i + 1}), 0) AS a${i + 1}`).join(",\n         ")}
       FROM ep JOIN rate ON rate.pid = ep.pid
       WHERE ep.k_last >= ${DIP_MAX_WEEKS} AND rate.rate IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM r WHERE r.pid = ep.pid AND r.disc
                         AND r.k BETWEEN ep.k_last - ${DIP_MAX_WEEKS} AND ep.k_last - 1)
     ),
     up(category_id, ancestor_id) AS (
       SELECT id, id FROM categories
       UNION
       SELECT up.category_id, c.parent_id FROM up JOIN categories c ON c.id = up.ancestor_id
       WHERE c.parent_id IS NOT NULL
     ),
     members AS (
       SELECT DISTINCT up.ancestor_id AS category_id, pc.pid
       FROM product_categories pc JOIN up ON up.category_id = pc.category_id
       WHERE pc.pid IN (SELECT pid FROM qualified)
     )
     SELECT m.category_id, count(*)::int AS promotions, SUM(q.rate)::float8 AS base,
       ARRAY[${Array.from({ length: DIP_MAX_WEEKS }, (_, i) => `SUM(q.a${i + 1})`).join(", ")}]::float8[] AS after
     FROM members m JOIN qualified q ON q.pid = m.pid
     GROUP BY m.category_id`,
    [d0, from.toISOString(), asOf.toISOString()],
  );
  const figures = rows.map((r) => {
    const after = r.after.map(Number);
    return { ...r, base: Number(r.base), after, ...dipOf(r.promotions, Number(r.base), after) };
  });
  await run.exec("DELETE FROM category_promotion_dips");
  if (figures.length > 0)
    await run.exec(
      `INSERT INTO category_promotion_dips (category_id, promotions, base_units, after_units, dip, weeks)
       SELECT c, n, b, ARRAY[${Array.from({ length: DIP_MAX_WEEKS }, (_, i) => `a${i + 1}`).join(", ")}], d, w
       FROM unnest($1::int[], $2::int[], $3::float8[], ${Array.from({ length: DIP_MAX_WEEKS }, (_, i) => `$${i + 6}::float8[]`).join(", ")}, $4::float8[], $5::int[])
         AS t(c, n, b, ${Array.from({ length: DIP_MAX_WEEKS }, (_, i) => `a${i + 1}`).join(", ")}, d, w)`,
      [
        figures.map((f) => f.category_id),
        figures.map((f) => f.promotions),
        figures.map((f) => f.base),
        figures.map((f) => f.dip),
        figures.map((f) => f.weeks),
        ...Array.from({ length: DIP_MAX_WEEKS }, (_, i) => figures.map((f) => f.after[i] ?? 0)),
      ],
    );
  return figures.length;
}

const MARK = "promotion_dips";

/**
 * Makes sure category_promotion_dips is measured for the latest calculation (module elasticity's
 * timestamp in calculate_status): otherwise measures it once, under a transaction-level advisory
 * lock, so concurrent simulations wait for one measurement instead of each running it.
 */
export async function ensurePromotionDips(db: Database): Promise<void> {
  const stale = async (q: <T>(sql: string, ...p: unknown[]) => Promise<T[]>) => {
    const [row] = await q<{ stale: boolean; as_of: Date | null }>(
      `SELECT e.last_calculation_timestamp IS DISTINCT FROM d.last_calculation_timestamp AS stale,
         (SELECT calculated_at FROM product_metrics LIMIT 1) AS as_of
       FROM (SELECT last_calculation_timestamp FROM calculate_status WHERE module_name = 'elasticity') e
       LEFT JOIN calculate_status d ON d.module_name = '${MARK}'`,
    );
    return row?.stale && row.as_of ? row.as_of : null;
  };
  if (!(await stale((sql, ...p) => db.prisma.$queryRawUnsafe(sql, ...p)))) return;
  await db.prisma.$transaction(
    async (tx) => {
      const q = <T>(sql: string, ...p: unknown[]) => tx.$queryRawUnsafe<T[]>(sql, ...p);
      await tx.$executeRawUnsafe("SELECT pg_advisory_xact_lock(72707370)");
      const asOf = await stale(q);
      if (!asOf) return;
      await tx.$executeRawUnsafe("SET LOCAL work_mem = '64MB'");
      await measurePromotionDips(
        {
          query: (sql, params = []) => q(sql, ...params),
          exec: async (sql, params = []) => {
            await tx.$executeRawUnsafe(sql, ...params);
          },
        },
        new Date(asOf),
      );
      await tx.$executeRawUnsafe(
        `INSERT INTO calculate_status (module_name, last_calculation_timestamp)
         SELECT '${MARK}', last_calculation_timestamp FROM calculate_status WHERE module_name = 'elasticity'
         ON CONFLICT (module_name) DO UPDATE SET last_calculation_timestamp = EXCLUDED.last_calculation_timestamp`,
      );
    },
    { maxWait: 60_000, timeout: 120_000 },
  );
}

/** SQL: per product of `$1::int[]`, the dip its deepest category with enough promotions carries. */
export const PRODUCT_DIP_SQL = `
  SELECT DISTINCT ON (pc.pid) pc.pid, d.dip, d.weeks, d.promotions, c.name AS category
  FROM product_categories pc
  JOIN (WITH RECURSIVE up(category_id, ancestor_id) AS (
          SELECT id, id FROM categories
          UNION
          SELECT up.category_id, c.parent_id FROM up JOIN categories c ON c.id = up.ancestor_id
          WHERE c.parent_id IS NOT NULL
        ) SELECT * FROM up) up ON up.category_id = pc.category_id
  JOIN category_promotion_dips d ON d.category_id = up.ancestor_id AND d.promotions >= ${DIP_MIN_PROMOTIONS}
  JOIN categories c ON c.id = up.ancestor_id
  WHERE pc.pid = ANY($1::int[])
  ORDER BY pc.pid, c.level DESC, d.promotions DESC, c.id`;

export type { PromotionDip };
