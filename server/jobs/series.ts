// The stored series the dashboards read (docs/metrics.md §14): daily sales in total and per brand and
// vendor (module sales_series), and the weekly stock value at cost with the in-stock count of A
// products (module stock_series). Pages read these tables and never aggregate order lines themselves.
// The tables are keyed by a dimension (dim, key) so that further breakdowns add rows, not tables.
import { isMerchandiseSql } from "../../shared/metrics.ts";
import { PRODUCT_CATEGORY_TYPES_SQL } from "../modules/config/category-types.ts";
import type { CalcModule } from "./calculate.ts";
import { setLocal, utcDay, utcMidnight } from "./planning/context.ts";

const DAY_MS = 86_400_000;
/** Days of daily sales kept: two years and a day, so a 365-day range compares with the year before. */
export const SALES_SERIES_DAYS = 731;
/** Week ends of the stock-value series: D0, D0 − 7, … (53 of them, a year and a week). */
export const STOCK_SERIES_WEEKS = 53;

/** The first day of the daily series and the moment it starts. */
function salesWindow(asOf: Date) {
  const start = new Date(utcMidnight(asOf).getTime() - (SALES_SERIES_DAYS - 1) * DAY_MS);
  return { start, first: utcDay(start) };
}

/**
 * Temp tables <p>_pcs (pid, cs: the product's category set) and <p>_cs_members (cs, category_id):
 * every merchandise product linked to a product category gets the id of the set of those categories
 * and all their ancestors (product categories only, as in the aggregates, §11); products with the
 * same set share the id. Reads only categories, product_categories, products and settings.
 */
export const CATEGORY_SETS_SQL = (p: string) => `
  DROP TABLE IF EXISTS ${p}_up, ${p}_pcats, ${p}_pcs, ${p}_cs_members;
  CREATE TEMP TABLE ${p}_up ON COMMIT DROP AS
    WITH RECURSIVE pcat AS (
      SELECT id, parent_id FROM categories WHERE type IN ${PRODUCT_CATEGORY_TYPES_SQL}
    ),
    up(category_id, ancestor_id) AS (
      SELECT id, id FROM pcat
      UNION
      SELECT up.category_id, c.parent_id
      FROM up JOIN pcat c ON c.id = up.ancestor_id
      WHERE c.parent_id IN (SELECT id FROM pcat)
    )
    SELECT category_id, ancestor_id FROM up;
  CREATE TEMP TABLE ${p}_pcats ON COMMIT DROP AS
    SELECT pc.pid, array_agg(DISTINCT up.ancestor_id ORDER BY up.ancestor_id) AS cats
    FROM product_categories pc
    JOIN ${p}_up up ON up.category_id = pc.category_id
    JOIN products pr ON pr.pid = pc.pid AND ${isMerchandiseSql("pr")}
    GROUP BY pc.pid;
  CREATE TEMP TABLE ${p}_sets ON COMMIT DROP AS
    SELECT cats, (row_number() OVER ())::int AS cs FROM (SELECT DISTINCT cats FROM ${p}_pcats) x;
  CREATE TEMP TABLE ${p}_pcs ON COMMIT DROP AS
    SELECT pc.pid, s.cs FROM ${p}_pcats pc JOIN ${p}_sets s ON s.cats = pc.cats;
  ALTER TABLE ${p}_pcs ADD PRIMARY KEY (pid);
  CREATE TEMP TABLE ${p}_cs_members ON COMMIT DROP AS
    SELECT cs, unnest(cats) AS category_id FROM ${p}_sets;
  ANALYZE ${p}_pcs;
  DROP TABLE ${p}_up, ${p}_pcats, ${p}_sets;`;

export const salesSeriesModule: CalcModule = {
  name: "sales_series",
  tables: ["sales_daily"],
  // Reads only imported tables: a Full Reset on PostgreSQL runs it on its second connection.
  beside: true,
  async run({ conn, asOf }) {
    // The day expression has no statistics, so the planner guesses millions of groups where there
    // are a few hundred thousand: more hash memory lets it pick one hashed pass over the lines
    // instead of sorting them once per grouping.
    const restore = await setLocal(conn, { jit: "off", work_mem: "128MB", hash_mem_multiplier: "8" });
    await conn.exec("TRUNCATE sales_daily");
    const { start } = salesWindow(asOf);
    // Category rows (rolled up the tree, each product once per category) without a second pass
    // over the lines: products with the same set of categories (their linked product categories
    // and every ancestor) share a set id cs; the pass groups by (day, cs) as well, and each set's
    // rows are then added to every category of the set (a few hundred sets × days, not lines).
    await conn.exec(CATEGORY_SETS_SQL("ss"));
    // One pass over the window's order lines, each joined to its product's brand, vendor, category
    // set and cost and added to four groupings at once: the day; the day and brand; the day and
    // vendor; the day and category set. GROUPING bits: brand_id 4, vendor_id 2, cs 1.
    // Revenue is quantity × price − discount as in §1. Money is summed in whole cents (int8; costs
    // in 1/10,000, the cost price's scale), exactly: each line's amount becomes cents once, and the
    // four groupings' sums and the category sets' expansion below add integers, where numeric sums
    // cost several times more per line (20 sums per line here).
    await conn.query(
      `CREATE TEMP TABLE ss_sales ON COMMIT DROP AS
       SELECT day, brand_id, vendor_id, cs, GROUPING(brand_id, vendor_id, cs) AS g,
         COALESCE(SUM(quantity) FILTER (WHERE done AND merch), 0)::int AS units,
         COALESCE(SUM(amount_c) FILTER (WHERE done AND merch), 0)::int8 AS revenue_c,
         COALESCE(SUM(amount_c) FILTER (WHERE done), 0)::int8 AS takings_c,
         COALESCE(SUM(amount_c) FILTER (WHERE done AND merch AND cost_m IS NOT NULL), 0)::int8 AS costed_revenue_c,
         COALESCE(SUM(quantity * cost_m) FILTER (WHERE done AND merch), 0)::int8 AS cogs_m,
         COALESCE(SUM(quantity) FILTER (WHERE NOT done AND merch), 0)::int AS returned_units,
         COALESCE(SUM(amount_c) FILTER (WHERE NOT done AND merch), 0)::int8 AS returned_value_c
       FROM (
         SELECT (l.order_date AT TIME ZONE 'UTC')::date AS day, p.brand_id, p.vendor_id, c.cs,
           l.status = 'completed' AS done, l.quantity,
           ((l.quantity * l.price - l.discount) * 100)::int8 AS amount_c, p.cost_m, p.merch
         FROM order_lines l
         JOIN (
           SELECT pid, brand_id, vendor_id, (cost_price * 10000)::int8 AS cost_m, ${isMerchandiseSql("products")} AS merch
           FROM products
         ) p ON p.pid = l.pid
         LEFT JOIN ss_pcs c ON c.pid = l.pid
         WHERE l.status IN ('completed', 'returned')
           AND l.order_date >= $1::timestamptz AND l.order_date <= $2::timestamptz
       ) x
       GROUP BY GROUPING SETS ((day), (day, brand_id), (day, vendor_id), (day, cs))`,
      [start, asOf],
    );
    // Orders per day: distinct order numbers with a completed line (an order's lines share its day).
    await conn.query(
      `CREATE TEMP TABLE ss_orders ON COMMIT DROP AS
       SELECT day, count(*)::int AS n FROM (
         SELECT DISTINCT (order_date AT TIME ZONE 'UTC')::date AS day, order_number FROM order_lines
         WHERE status = 'completed' AND order_date >= $1::timestamptz AND order_date <= $2::timestamptz
       ) o GROUP BY day`,
      [start, asOf],
    );
    const active = "(units <> 0 OR revenue_c <> 0 OR returned_units <> 0 OR returned_value_c <> 0)";
    // Cents back to amounts (exact); the cost of goods has four decimals and is rounded to cents.
    const money = (c: string) => `${c}::numeric / 100`;
    const cols = `${money("revenue_c")}, ${money("revenue_c")}, ${money("costed_revenue_c")},
      round(cogs_m::numeric / 10000, 2), 0, returned_units, ${money("returned_value_c")}`;
    const rows = await conn.execute(
      `INSERT INTO sales_daily (dim, key, day, units, revenue, takings, costed_revenue, cogs, orders, returned_units, returned_value)
       SELECT 'total', 0, t.day, t.units, ${money("t.revenue_c")}, ${money("t.takings_c")}, ${money("t.costed_revenue_c")},
         round(t.cogs_m::numeric / 10000, 2), COALESCE(o.n, 0), t.returned_units, ${money("t.returned_value_c")}
       FROM ss_sales t LEFT JOIN ss_orders o ON o.day = t.day
       WHERE t.g = 7
       UNION ALL
       SELECT 'brand', brand_id, day, units, ${cols} FROM ss_sales WHERE g = 3 AND brand_id IS NOT NULL AND ${active}
       UNION ALL
       SELECT 'vendor', vendor_id, day, units, ${cols} FROM ss_sales WHERE g = 5 AND vendor_id IS NOT NULL AND ${active}
       UNION ALL
       SELECT 'category', category_id, day, units, ${cols} FROM (
         SELECT u.category_id, s.day, SUM(s.units)::int AS units, SUM(s.revenue_c)::int8 AS revenue_c,
           SUM(s.costed_revenue_c)::int8 AS costed_revenue_c, SUM(s.cogs_m)::int8 AS cogs_m,
           SUM(s.returned_units)::int AS returned_units, SUM(s.returned_value_c)::int8 AS returned_value_c
         FROM ss_sales s JOIN ss_cs_members u ON u.cs = s.cs
         WHERE s.g = 6
         GROUP BY u.category_id, s.day
       ) c WHERE ${active}`,
    );
    await conn.exec("DROP TABLE ss_sales, ss_orders, ss_pcs, ss_cs_members");
    await restore();
    return rows;
  },
};

/**
 * Stock value at cost at each week end from the reconstructed stock (product_stock_history, §2),
 * and how many of today's A products were in stock then. A product's stock on a day is the run
 * covering it. Each run adds stock × cost from its first day
 * and takes it away after its last; those changes, summed per week end they precede and running
 * total over the weeks, give the value at each week end without expanding runs into days.
 */
export const stockSeriesModule: CalcModule = {
  name: "stock_series",
  tables: ["stock_value_weekly"],
  async run({ conn, asOf }) {
    const restore = await setLocal(conn, { jit: "off", work_mem: "64MB" });
    await conn.exec("TRUNCATE stock_value_weekly");
    const d0 = utcDay(asOf);
    // Week index w (0 = the oldest week end, D0 − 7 × 52; 52 = D0) of the first week end on or
    // after a day; changes after D0 never count.
    // (Whole-number arithmetic: for d ≥ 0 days, ⌈d ÷ 7⌉ = (d + 6) ÷ 7 in integer division; a
    // numeric ceil per stock run cost more than the rest of the statement.)
    const week = (day: string) => `GREATEST((${day} - ($1::date - 364) + 6) / 7, 0)`;
    // Per week: the change of stock units and value, and of today's A products that are in stock
    // (0/1) and alive (0/1: a run covers the day; runs follow each other from the life start to D0).
    // Each merchandise product's set of top-level product categories (the roots above its linked
    // ones): the value per top-level category is summed per (week, root set) and each set's weeks
    // added to its roots. Products have one or two roots, so there are few sets.
    await conn.exec(`
      DROP TABLE IF EXISTS st_up, st_proots, st_sets, st_members;
      CREATE TEMP TABLE st_up ON COMMIT DROP AS
        WITH RECURSIVE pcat AS (
          SELECT id, parent_id FROM categories WHERE type IN ${PRODUCT_CATEGORY_TYPES_SQL}
        ),
        up(category_id, ancestor_id) AS (
          SELECT id, id FROM pcat
          UNION
          SELECT up.category_id, c.parent_id
          FROM up JOIN pcat c ON c.id = up.ancestor_id
          WHERE c.parent_id IN (SELECT id FROM pcat)
        )
        SELECT up.category_id, up.ancestor_id AS root_id FROM up
        JOIN pcat r ON r.id = up.ancestor_id
        WHERE r.parent_id IS NULL OR r.parent_id NOT IN (SELECT id FROM pcat);
      CREATE TEMP TABLE st_proots ON COMMIT DROP AS
        SELECT pc.pid, array_agg(DISTINCT up.root_id ORDER BY up.root_id) AS roots
        FROM product_categories pc JOIN st_up up ON up.category_id = pc.category_id
        GROUP BY pc.pid;
      CREATE TEMP TABLE st_sets ON COMMIT DROP AS
        SELECT roots, (row_number() OVER ())::int AS rs FROM (SELECT DISTINCT roots FROM st_proots) x;
      CREATE TEMP TABLE st_members ON COMMIT DROP AS SELECT rs, unnest(roots) AS root_id FROM st_sets;
      ALTER TABLE st_proots ADD COLUMN rs int;
      UPDATE st_proots p SET rs = s.rs FROM st_sets s WHERE s.roots = p.roots;
      ANALYZE st_proots;`);
    const rows = await conn.execute(
      `WITH changes AS (
         SELECT h.pid, ${week("h.valid_from")} AS w, GREATEST(h.stock, 0) AS units, (h.stock > 0)::int AS in_stock, 1 AS alive
         FROM product_stock_history h
         UNION ALL
         SELECT h.pid, ${week("(h.valid_to + 1)")}, -GREATEST(h.stock, 0), -(h.stock > 0)::int, -1
         FROM product_stock_history h WHERE h.valid_to < $1::date
       ),
       grouped AS (
         SELECT c.w, r.rs, GROUPING(r.rs) AS g, SUM(c.units) AS units, COALESCE(SUM(c.units * p.cost_m), 0) AS value_m,
           COALESCE(SUM(c.in_stock) FILTER (WHERE m.abc_class = 'A'), 0) AS in_stock_a,
           COALESCE(SUM(c.alive) FILTER (WHERE m.abc_class = 'A'), 0) AS a_products
         FROM changes c
         -- The cost price in 1/10,000 (its scale): units × cost sum as integers, exactly.
         JOIN (SELECT pid, kind, (cost_price * 10000)::int8 AS cost_m FROM products) p ON p.pid = c.pid
         LEFT JOIN product_metrics m ON m.pid = c.pid
         LEFT JOIN st_proots r ON r.pid = c.pid
         WHERE c.w <= 52 AND ${isMerchandiseSql("p")}
         GROUP BY GROUPING SETS ((c.w), (c.w, r.rs))
       ),
       per_week AS (
         SELECT 'total' AS dim, 0 AS key, w, units, value_m, in_stock_a, a_products FROM grouped WHERE g = 1
         UNION ALL
         SELECT 'category', mb.root_id, x.w, SUM(x.units), SUM(x.value_m), 0, 0
         FROM grouped x JOIN st_members mb ON mb.rs = x.rs
         WHERE x.g = 0
         GROUP BY mb.root_id, x.w
       ),
       keys AS (SELECT 'total' AS dim, 0 AS key UNION SELECT dim, key FROM per_week)
       INSERT INTO stock_value_weekly (dim, key, week_end, value_cost, units, in_stock_a, a_products)
       SELECT k.dim, k.key, $1::date - 7 * (52 - g.w),
         round((SUM(COALESCE(x.value_m, 0)) OVER run)::numeric / 10000, 2), (SUM(COALESCE(x.units, 0)) OVER run)::int,
         (SUM(COALESCE(x.in_stock_a, 0)) OVER run)::int, (SUM(COALESCE(x.a_products, 0)) OVER run)::int
       FROM keys k CROSS JOIN generate_series(0, 52) AS g(w)
       LEFT JOIN per_week x ON x.dim = k.dim AND x.key = k.key AND x.w = g.w
       WINDOW run AS (PARTITION BY k.dim, k.key ORDER BY g.w)`,
      [d0],
    );
    await conn.exec("DROP TABLE st_up, st_proots, st_sets, st_members");
    await restore();
    return rows;
  },
};
