// Module elasticity of the planning engine (docs/metrics.md §15): how strongly each product's sales
// respond to its price, fitted from its own last 52 weeks of sales, with its category's pooled
// figure where its own history has too little evidence. The Discount Simulator reads the result.
//
// Everything is set-based over small tables: one pass over the last year's order lines gives each
// product's weekly units and shelf price (≈ 15 weeks with sales per product on the large demo set),
// the stock history's out-of-stock runs give its days in stock per week, and the fit is a weighted
// least-squares line per product computed from six sums per product.
import type { CalcModule } from "../calculate.ts";
import { setLocal, utcDay, utcMidnight } from "./context.ts";

const DAY_MS = 86_400_000;
/** Weeks of history the fit reads (the stock history's year). */
export const ELASTICITY_WEEKS = 52;
/** A week's regular price is the highest weekly price within this many weeks either side. */
export const REGULAR_PRICE_WEEKS = 6;
/** Price levels are ratios to the regular price rounded to this step (a ratio ≥ 0.975 is regular). */
export const LEVEL_STEP = 0.05;
/** A category needs this many categories' worth of products to be a product's seasonal reference. */
export const HOME_CATEGORY_MIN_PRODUCTS = 10;

/** When a product's own fit is used (docs/metrics.md §15.3). */
export const OWN_FIT_RULE = { minPriceChanges: 2, minDiscountedUnits: 5, maxSe: 0.5, max: 10 } as const;
/** When a category's pooled fit stands in for its products. */
export const CATEGORY_FIT_RULE = { minProducts: 3, maxSe: 0.35, max: 10 } as const;

/** The last week k a product's life covers (0 … 51): its weeks since it was created or first received. */
const ksSql = (d0Param: string) => `LEAST(${ELASTICITY_WEEKS - 1}, GREATEST(0,
  (${d0Param}::date - LEAST((p.created_at AT TIME ZONE 'UTC')::date, p.first_received)) / 7))`;

export const elasticityModule: CalcModule = {
  name: "elasticity",
  tables: ["product_elasticities", "category_elasticities"],
  async run({ conn, asOf }) {
    const d0 = utcDay(asOf);
    const from = new Date(utcMidnight(asOf).getTime() - (ELASTICITY_WEEKS * 7 - 1) * DAY_MS);
    // Temp tables have no statistics until analyzed: without them the planner guesses a few hundred
    // rows for tables of 50k–500k and picks nested loops; and the window sorts over ≈ 500k weeks
    // spill to disk with the default work_mem.
    const restore = await setLocal(conn, { jit: "off", work_mem: "128MB" });
    await conn.exec(`TRUNCATE product_elasticities, category_elasticities;
      DROP TABLE IF EXISTS el_weeks, el_home, el_oos, el_home_weeks, el_home_cum, el_levels, el_fit`);

    // Weekly units and shelf price (order_lines.price, before line discounts: coupons and bulk
    // discounts are not the product's price) per product, week k = 0 … 51 counted back from D0.
    // Discontinued products are left out: their clearance goes with the end of the line's life
    // (demand fading, then cleared), so it says little about what a price cut does to a live product.
    // So are non-merchandise products (postage, fees, gift cards: products.kind).
    // The week's takings are summed in whole cents as float8 (by value, where a numeric sum keeps a
    // state per group): every term and partial sum is a whole number, exact in a float8 while a
    // product's week takes less than 2^53 cents (≈ 90 trillion), so the price is the same numeric
    // division of the same total as before.
    await conn.query(
      `CREATE TEMP TABLE el_weeks ON COMMIT DROP AS
       SELECT pid, (($1::date - (order_date AT TIME ZONE 'UTC')::date) / 7)::int AS k,
         SUM(quantity)::float8 AS u,
         ((SUM(round(price::float8 * 100) * quantity)::int8 * 0.01) / SUM(quantity))::float8 AS p
       FROM order_lines
       WHERE status = 'completed' AND quantity > 0 AND price > 0
         AND order_date >= $2::timestamptz AND order_date <= $3::timestamptz
         AND pid NOT IN (SELECT pid FROM products WHERE discontinued OR kind <> 'merchandise')
       GROUP BY 1, 2`,
      [d0, from, asOf],
    );
    await conn.exec("ANALYZE el_weeks");

    // The seasonal reference: each product's home category (its linked category with the fewest
    // products among those with at least HOME_CATEGORY_MIN_PRODUCTS; 0 = every product), and that
    // category's weekly units without the product's own (leave one out), as an index with mean 1
    // over the 52 weeks. A week whose reference sold nothing, or a product alone in it, gets 1.
    await conn.query(
      `CREATE TEMP TABLE el_home ON COMMIT DROP AS
       WITH sizes AS (
         SELECT category_id, count(*) AS n FROM product_categories GROUP BY 1 HAVING count(*) >= $1
       )
       , sold AS (
         SELECT w.pid, SUM(w.u) AS u, SUM(w.u) FILTER (WHERE w.k <= p.ks) AS u_in_range
         FROM el_weeks w
         LEFT JOIN (SELECT p.pid, ${ksSql("$2")} AS ks FROM products p) p ON p.pid = w.pid
         GROUP BY 1
       ),
       pick AS (
         SELECT DISTINCT ON (pc.pid) pc.pid, pc.category_id
         FROM product_categories pc JOIN sizes s USING (category_id) JOIN sold USING (pid)
         ORDER BY pc.pid, s.n, pc.category_id
       )
       SELECT sold.pid, COALESCE(pick.category_id, 0) AS home, sold.u AS own_u,
         COALESCE(sold.u_in_range, 0) AS own_in_range
       FROM sold LEFT JOIN pick USING (pid)`,
      [HOME_CATEGORY_MIN_PRODUCTS, d0],
    );
    await conn.exec("ALTER TABLE el_home ADD PRIMARY KEY (pid); ANALYZE el_home");

    // Days out of stock per product and week: a run of the stock history with stock ≤ 0 is out of
    // stock on each of its days except its first when that day had sales (§2).
    await conn.query(
      `CREATE TEMP TABLE el_oos ON COMMIT DROP AS
       SELECT h.pid, wk.k,
         SUM(LEAST(h.valid_to, $1::date - 7 * wk.k) - GREATEST(h.valid_from, $1::date - 7 * wk.k - 6) + 1
           - CASE WHEN h.sold_first_day > 0 AND h.valid_from >= $1::date - 7 * wk.k - 6 THEN 1 ELSE 0 END)::int AS days
       FROM product_stock_history h,
         LATERAL generate_series(GREATEST(($1::date - h.valid_to) / 7, 0),
           LEAST(($1::date - h.valid_from) / 7, ${ELASTICITY_WEEKS - 1})) AS wk(k)
       WHERE h.stock <= 0 AND h.valid_to >= $1::date - ${ELASTICITY_WEEKS * 7 - 1}
         AND h.pid IN (SELECT pid FROM el_home)
       GROUP BY 1, 2`,
      [d0],
    );
    await conn.exec("ANALYZE el_oos");
    // The home categories' units per week and their running sums over k (every week, 0 … 51).
    await conn.exec(`
      CREATE TEMP TABLE el_home_weeks ON COMMIT DROP AS
        SELECT h.home, w.k, SUM(w.u) AS u FROM el_weeks w JOIN el_home h USING (pid) GROUP BY 1, 2;
      CREATE TEMP TABLE el_home_cum ON COMMIT DROP AS
        SELECT t.home, g.k, SUM(COALESCE(hw.u, 0)) OVER (PARTITION BY t.home ORDER BY g.k) AS cum,
          SUM(COALESCE(hw.u, 0)) OVER (PARTITION BY t.home) AS total
        FROM (SELECT DISTINCT home FROM el_home) t
        CROSS JOIN generate_series(0, ${ELASTICITY_WEEKS - 1}) AS g(k)
        LEFT JOIN el_home_weeks hw ON hw.home = t.home AND hw.k = g.k;
      ANALYZE el_home_weeks; ANALYZE el_home_cum;`);

    // Per product and week with sales: its days in stock (at least 1: it sold), the ratio of its
    // price to the regular price, the level, and the week's seasonal index (its home category's
    // units that week without its own, × 52 ÷ the same over the 52 weeks; 1 when the others sold
    // nothing all year). A week's regular price is the lower of the highest prices in the
    // REGULAR_PRICE_WEEKS weeks before it and in those after it (each including the week itself; the
    // product's regular price today counts as "after" for the latest weeks): a promotion is a price
    // below the price on both sides of it, while after a permanent price rise the weeks before it
    // keep their old price as regular.
    //
    // Then per product and level: units U, exposure E = Σ days in stock × seasonal index, and the
    // units-weighted mean log ratio X. The regular level's exposure is every in-stock day of the
    // product's weeks (from its life start, at most 52 weeks) less the discounted weeks' exposure,
    // so weeks in stock without a sale count at the regular price (their price is not seen; most
    // are regular), and a slow seller's regular rate is not taken from its weeks with sales alone.
    await conn.query(
      `CREATE TEMP TABLE el_levels ON COMMIT DROP AS
       WITH own AS (SELECT pid, own_u AS u FROM el_home),
       prod AS (
         SELECT h.pid, h.home, o.u AS own_u, c.total - o.u AS others,
           COALESCE(p.regular_price, p.price)::float8 AS regular, ${ksSql("$1")} AS ks
         FROM el_home h
         JOIN own o ON o.pid = h.pid
         JOIN products p ON p.pid = h.pid
         JOIN el_home_cum c ON c.home = h.home AND c.k = 0
       ),
       weeks AS (
         SELECT w.pid, w.k, w.u,
           w.p / LEAST(
             max(w.p) OVER (PARTITION BY w.pid ORDER BY w.k RANGE BETWEEN CURRENT ROW AND ${REGULAR_PRICE_WEEKS} FOLLOWING),
             GREATEST(max(w.p) OVER (PARTITION BY w.pid ORDER BY w.k RANGE BETWEEN ${REGULAR_PRICE_WEEKS} PRECEDING AND CURRENT ROW),
               CASE WHEN w.k < ${REGULAR_PRICE_WEEKS} THEN pr.regular END)) AS ratio,
           GREATEST(7 - COALESCE(o.days, 0), 1) AS days,
           CASE WHEN pr.others > 0 THEN (COALESCE(hw.u, 0) - w.u) * ${ELASTICITY_WEEKS} / pr.others ELSE 1 END AS season
         FROM el_weeks w
         JOIN prod pr ON pr.pid = w.pid
         LEFT JOIN el_home_weeks hw ON hw.home = pr.home AND hw.k = w.k
         LEFT JOIN el_oos o ON o.pid = w.pid AND o.k = w.k
       ),
       leveled AS (
         SELECT *, LEAST(1, round(ratio / ${LEVEL_STEP}) * ${LEVEL_STEP}) AS level,
           lag(LEAST(1, round(ratio / ${LEVEL_STEP}) * ${LEVEL_STEP})) OVER (PARTITION BY pid ORDER BY k) AS prev
         FROM weeks
       ),
       oos_exposure AS (
         SELECT o.pid, SUM(o.days * CASE WHEN pr.others > 0
           THEN (COALESCE(hw.u, 0) - COALESCE(w.u, 0)) * ${ELASTICITY_WEEKS} / pr.others ELSE 1 END) AS e
         FROM el_oos o
         JOIN prod pr ON pr.pid = o.pid AND o.k <= pr.ks
         LEFT JOIN el_home_weeks hw ON hw.home = pr.home AND hw.k = o.k
         LEFT JOIN el_weeks w ON w.pid = o.pid AND w.k = o.k
         GROUP BY 1
       ),
       own_in_range AS (SELECT pid, own_in_range AS u FROM el_home),
       exposure AS (
         SELECT pr.pid, 7 * CASE WHEN pr.others > 0
             THEN (c.cum - COALESCE(oi.u, 0)) * ${ELASTICITY_WEEKS} / pr.others
             ELSE pr.ks + 1 END - COALESCE(oe.e, 0) AS e
         FROM prod pr
         JOIN el_home_cum c ON c.home = pr.home AND c.k = pr.ks
         LEFT JOIN own_in_range oi ON oi.pid = pr.pid
         LEFT JOIN oos_exposure oe ON oe.pid = pr.pid
       ),
       levels AS MATERIALIZED (
         SELECT pid, level, SUM(u) AS u, SUM(days * season) AS e, SUM(u * ln(ratio)) / SUM(u) AS x,
           count(*)::int AS weeks, count(*) FILTER (WHERE prev IS NOT NULL AND prev <> level)::int AS changes
         FROM leveled
         GROUP BY 1, 2
       ),
       discounted AS (SELECT pid, SUM(e) AS e FROM levels WHERE level < 1 GROUP BY 1)
       SELECT l.pid, l.level, l.u,
         CASE WHEN l.level < 1 THEN l.e ELSE GREATEST(x.e - COALESCE(d.e, 0), l.e) END AS e,
         l.x, l.weeks, l.changes
       FROM levels l
       JOIN exposure x ON x.pid = l.pid
       LEFT JOIN discounted d ON d.pid = l.pid`,
      [d0],
    );

    // Per product: the weighted least-squares line of y = ln((U + ½) ÷ E) on X over its levels,
    // weights U + ½ (about the inverse variance of ln U for a Poisson count; the ½ takes away most of
    // the downward bias of the log of a small count, which would otherwise shrink the uplift of the
    // few units a slow seller sells on offer), from centred sums; slope b, elasticity −b,
    // standard error √(max(1, φ) ÷ Sxx) with φ the residual variance per degree of freedom when
    // there are more than two levels.
    await conn.exec(`
      CREATE TEMP TABLE el_fit ON COMMIT DROP AS
      WITH s AS (
        SELECT pid, count(*)::int AS levels, SUM(weeks)::int AS weeks, SUM(changes)::int AS changes,
          COALESCE(SUM(weeks) FILTER (WHERE level < 1), 0)::int AS discounted_weeks,
          COALESCE(SUM(u) FILTER (WHERE level < 1), 0) AS discounted_units,
          SUM(u + 0.5) AS w, SUM((u + 0.5) * x) AS sx, SUM((u + 0.5) * ln((u + 0.5) / e)) AS sy,
          SUM((u + 0.5) * x * x) AS sxx, SUM((u + 0.5) * x * ln((u + 0.5) / e)) AS sxy,
          SUM((u + 0.5) * ln((u + 0.5) / e) * ln((u + 0.5) / e)) AS syy
        FROM el_levels WHERE e > 0 GROUP BY 1
      ),
      c AS (
        SELECT *, sxx - sx * sx / w AS cxx, sxy - sx * sy / w AS cxy, syy - sy * sy / w AS cyy FROM s
      )
      SELECT pid, levels, weeks, changes, discounted_weeks, discounted_units, cxx, cxy, cyy,
        CASE WHEN cxx > 1e-9 THEN -cxy / cxx END AS elasticity,
        CASE WHEN cxx > 1e-9 THEN sqrt(GREATEST(1, CASE WHEN levels > 2
          THEN GREATEST(cyy - cxy * cxy / cxx, 0) / (levels - 2) ELSE 1 END) / cxx) END AS se
      FROM c;
      ALTER TABLE el_fit ADD PRIMARY KEY (pid);`);

    // Per category (its products and its descendants' products, each once): the within-product
    // pooled line, Σ of the products' centred sums, over the products with at least two levels.
    await conn.query(
      `INSERT INTO category_elasticities (category_id, elasticity, se, ci_low, ci_high, products, price_changes, trusted)
       WITH RECURSIVE up(category_id, ancestor_id) AS (
         SELECT id, id FROM categories
         UNION
         SELECT up.category_id, c.parent_id FROM up JOIN categories c ON c.id = up.ancestor_id
         WHERE c.parent_id IS NOT NULL
       ),
       members AS (
         SELECT DISTINCT up.ancestor_id AS category_id, f.pid
         FROM el_fit f
         JOIN product_categories pc ON pc.pid = f.pid
         JOIN up ON up.category_id = pc.category_id
         WHERE f.cxx > 1e-9
       ),
       pooled AS (
         SELECT m.category_id, count(*)::int AS products, SUM(f.changes)::int AS changes,
           SUM(f.levels) AS levels, SUM(f.cxx) AS cxx, SUM(f.cxy) AS cxy, SUM(f.cyy) AS cyy
         FROM members m JOIN el_fit f ON f.pid = m.pid
         GROUP BY 1
       ),
       fit AS (
         SELECT *, -cxy / cxx AS elasticity,
           sqrt(GREATEST(1, CASE WHEN levels - products - 1 > 0
             THEN GREATEST(cyy - cxy * cxy / cxx, 0) / (levels - products - 1) ELSE 1 END) / cxx) AS se
         FROM pooled
       )
       SELECT category_id, elasticity, se, elasticity - 1.96 * se, elasticity + 1.96 * se, products, changes,
         products >= $1 AND se <= $2 AND elasticity >= 0 AND elasticity <= $3
       FROM fit`,
      [CATEGORY_FIT_RULE.minProducts, CATEGORY_FIT_RULE.maxSe, CATEGORY_FIT_RULE.max],
    );

    // Per product: its own fit when trusted, else the deepest trusted category among its linked
    // categories and their ancestors (the narrower the category, the closer its products; ties:
    // the smaller standard error). Products with neither get no row: the global setting applies.
    // The chain is walked per category (a few hundred rows), each linked category's best trusted
    // ancestor-or-self picked, then the best of a product's linked categories: the same choice as
    // walking every product link (≈ 114k) up to the root.
    const rows = await conn.query(
      `WITH RECURSIVE up(category_id, ancestor_id) AS (
         SELECT id, id FROM categories
         UNION
         SELECT up.category_id, c.parent_id FROM up JOIN categories c ON c.id = up.ancestor_id
         WHERE c.parent_id IS NOT NULL
       ),
       linked_best AS (
         SELECT DISTINCT ON (up.category_id) up.category_id AS linked, ce.category_id, ce.elasticity,
           ce.ci_low, ce.ci_high, ce.se, c.level
         FROM up
         JOIN category_elasticities ce ON ce.category_id = up.ancestor_id AND ce.trusted
         JOIN categories c ON c.id = up.ancestor_id
         ORDER BY up.category_id, c.level DESC, ce.se, ce.category_id
       ),
       best AS (
         SELECT DISTINCT ON (pc.pid) pc.pid, b.category_id, b.elasticity, b.ci_low, b.ci_high
         FROM product_categories pc
         JOIN linked_best b ON b.linked = pc.category_id
         ORDER BY pc.pid, b.level DESC, b.se, b.category_id
       ),
       own AS (
         SELECT f.*, f.changes >= $1 AND f.discounted_units >= $2 AND f.se <= $3
           AND f.elasticity >= 0 AND f.elasticity <= $4 AS trusted
         FROM el_fit f
       ),
       ins AS (
         INSERT INTO product_elasticities (pid, source, elasticity, category_id, fitted, fitted_se, ci_low, ci_high,
           price_changes, weeks, discounted_weeks)
         SELECT p.pid,
           CASE WHEN o.trusted THEN 'product' ELSE 'category' END,
           CASE WHEN o.trusted THEN o.elasticity ELSE b.elasticity END,
           CASE WHEN o.trusted THEN NULL ELSE b.category_id END,
           o.elasticity, o.se,
           CASE WHEN o.trusted THEN o.elasticity - 1.96 * o.se ELSE b.ci_low END,
           CASE WHEN o.trusted THEN o.elasticity + 1.96 * o.se ELSE b.ci_high END,
           COALESCE(o.changes, 0), COALESCE(o.weeks, 0), COALESCE(o.discounted_weeks, 0)
         FROM products p
         LEFT JOIN own o ON o.pid = p.pid
         LEFT JOIN best b ON b.pid = p.pid
         WHERE o.trusted OR b.pid IS NOT NULL
         RETURNING 1
       )
       SELECT count(*)::int AS n FROM ins`,
      [OWN_FIT_RULE.minPriceChanges, OWN_FIT_RULE.minDiscountedUnits, OWN_FIT_RULE.maxSe, OWN_FIT_RULE.max],
    );
    await conn.exec("DROP TABLE el_weeks, el_home, el_oos, el_home_weeks, el_home_cum, el_levels, el_fit");
    await restore();
    return (rows[0] as { n: number } | undefined)?.n ?? 0;
  },
};
