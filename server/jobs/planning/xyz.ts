// Module xyz of the planning engine (docs/metrics.md §9): each merchandise product's XYZ class from
// the coefficient of variation of its weekly demand over its in-stock weeks. It reads only the stored
// stock runs of module stock_history (product_stock_history: the units sold on each run's first
// day, and the closing stock) and the product's life start: no order line is read.
//
// Weeks are 7 days ending on D0 (k = 0 is D0 − 6 … D0), the 52 of the last 364 days, and only the
// full weeks since the product's life start count. A week is in stock when the product was out of
// stock on fewer than 4 of its 7 days (§2's rule: a run with stock ≤ 0 is out on every day but a
// first day with sales). Over the n in-stock weeks with weekly units x (a week below 0, from
// corrections, counts 0): CV = sample standard deviation ÷ mean. X when CV < xyz_x_threshold, Y when
// below xyz_y_threshold, else Z; no class when n < 4 or nothing sold in them.
//
// The figures go into the temp table xyz_product (ON COMMIT DROP), which module planning reads and
// writes into product_metrics with its one UPDATE, as it does stock_history's sh_product: a full
// UPDATE of the wide product_metrics rows of its own cost this module about 2 s of CPU (50k
// products). So it runs after stock_history (its runs, and the life start from sh_product) and
// before planning (CALC_MODULES' order, checkModuleOrder).

import { loadGlobalSettingValues } from "../../modules/config/planning-parameters.ts";
import type { CalcModule } from "../calculate.ts";
import { setLocal, utcDay } from "./context.ts";
import { STOCK_FIGURES_TABLE, STOCK_WALK_TABLE } from "./stock-history.ts";

/** Fewest in-stock weeks a class is given on. */
export const XYZ_MIN_WEEKS = 4;
const WEEKS = 52;

/**
 * The temp table of the XYZ figures of every product that has them (merchandise with a life start),
 * named as the product_metrics columns they fill (XYZ_COLUMNS); module planning writes them.
 */
export const XYZ_TABLE = "xyz_product";

/** The columns of XYZ_TABLE (besides pid), product_metrics' columns of the same names. */
export const XYZ_COLUMNS = ["xyz_weeks", "xyz_cv", "xyz_class"] as const;

/** The coefficient and class from `stats` (pid, n, sx, sxx); $2 and $3 the X and Y thresholds. */
const CV_SQL = `cv AS (
         SELECT pid, n,
           CASE WHEN n >= ${XYZ_MIN_WEEKS} AND sx > 0
             THEN sqrt(GREATEST((sxx - sx * sx / n) / (n - 1), 0)) / (sx / n) END AS cv
         FROM stats
       )
       SELECT pid,
         n::int AS xyz_weeks,
         round(cv, 4)::numeric(12, 4) AS xyz_cv,
         (CASE WHEN cv IS NULL THEN NULL
               WHEN cv < $2::numeric THEN 'X'
               WHEN cv < $3::numeric THEN 'Y'
               ELSE 'Z' END)::char(1) AS xyz_class
       FROM cv`;

export const xyzModule: CalcModule = {
  name: "xyz",
  // Its figures reach product_metrics' XYZ columns through planning's one UPDATE (the table is
  // product_metrics module's).
  tables: [],
  handsOverTo: "planning",
  async run({ conn, asOf }) {
    const restore = await setLocal(conn, { jit: "off", work_mem: "64MB" });
    const g = await loadGlobalSettingValues(conn);
    const d0 = utcDay(asOf);
    // The life start: module stock_history ran in this transaction (CALC_MODULES' order) and left
    // it in its temp table, not yet in product_metrics (planning writes both); else as stored.
    const [found] = await conn.query<{ sh: boolean; walk: boolean }>(
      `SELECT to_regclass('pg_temp.${STOCK_FIGURES_TABLE}') IS NOT NULL AS sh,
         to_regclass('pg_temp.${STOCK_WALK_TABLE}') IS NOT NULL AS walk`,
    );
    const life = `${found?.sh ? STOCK_FIGURES_TABLE : "product_metrics"} m
      JOIN products p ON p.pid = m.pid AND p.kind = 'merchandise'`;
    // The full weeks since the life start (at most 52) of every product that has one.
    const per = `WITH per AS (
         SELECT m.pid, LEAST(${WEEKS}, GREATEST(0, ($1::date - m.history_start + 1) / 7)) AS nf
         FROM ${life}
         WHERE m.history_start IS NOT NULL
       ),`;
    await conn.exec(`DROP TABLE IF EXISTS ${XYZ_TABLE}`);
    // The walk of module stock_history counted each product's weeks out of stock and summed its
    // in-stock weeks' units (x and x², whole numbers) as below (stock-walk.ts): the sums are the
    // same numerics, so only the coefficient is left to work out here.
    if (found?.walk) {
      await conn.query(
        `CREATE TEMP TABLE ${XYZ_TABLE} ON COMMIT DROP AS
         ${per}
         stats AS (
           SELECT per.pid, per.nf - COALESCE(w.out52, 0) AS n,
             COALESCE(w.sx52, 0)::numeric AS sx, COALESCE(w.sxx52, 0)::numeric AS sxx
           FROM per
           LEFT JOIN ${STOCK_WALK_TABLE} w ON w.pid = per.pid
         ),
         ${CV_SQL}`,
        [d0, g.xyz_x_threshold, g.xyz_y_threshold],
      );
    } else {
      // Week of a day expression: (D0 − day) / 7; days before the 52 weeks are left out. The columns
      // carry product_metrics' types (the casts an UPDATE would make), so planning stores the very
      // same values.
      await conn.query(
        `CREATE TEMP TABLE ${XYZ_TABLE} ON COMMIT DROP AS
       ${per}
       -- Days out of stock per product and week, from the runs with stock ≤ 0 cut to each week.
       oos AS (
         SELECT h.pid, k.k,
           SUM(LEAST(h.valid_to, $1::date - 7 * k.k) - GREATEST(h.valid_from, $1::date - 7 * k.k - 6) + 1
               - (h.sold_first_day > 0 AND h.valid_from >= $1::date - 7 * k.k - 6)::int) AS days
         FROM product_stock_history h
         CROSS JOIN LATERAL generate_series(
           GREATEST(($1::date - h.valid_to) / 7, 0),
           LEAST(($1::date - GREATEST(h.valid_from, $1::date - ${7 * WEEKS - 1})) / 7, ${WEEKS - 1})) AS k(k)
         WHERE h.stock <= 0 AND h.valid_to >= $1::date - ${7 * WEEKS - 1}
         GROUP BY h.pid, k.k
       ),
       excluded AS (
         SELECT o.pid, o.k FROM oos o JOIN per ON per.pid = o.pid WHERE o.days >= 4 AND o.k < per.nf
       ),
       weekly AS (
         SELECT pid, ($1::date - valid_from) / 7 AS k, GREATEST(SUM(sold_first_day), 0)::numeric AS x
         FROM product_stock_history
         WHERE valid_from >= $1::date - ${7 * WEEKS - 1} AND sold_first_day <> 0
         GROUP BY 1, 2
       ),
       sums AS (
         SELECT w.pid, SUM(w.x) AS sx, SUM(w.x * w.x) AS sxx
         FROM weekly w
         JOIN per ON per.pid = w.pid AND w.k < per.nf
         LEFT JOIN excluded e ON e.pid = w.pid AND e.k = w.k
         WHERE e.pid IS NULL
         GROUP BY w.pid
       ),
       stats AS (
         SELECT per.pid, per.nf - COALESCE(ex.n, 0) AS n, COALESCE(s.sx, 0) AS sx, COALESCE(s.sxx, 0) AS sxx
         FROM per
         LEFT JOIN (SELECT pid, count(*) AS n FROM excluded GROUP BY pid) ex ON ex.pid = per.pid
         LEFT JOIN sums s ON s.pid = per.pid
       ),
       ${CV_SQL}`,
        [d0, g.xyz_x_threshold, g.xyz_y_threshold],
      );
    }
    // Its rows are the products this module figured (CREATE TABLE AS reports no count on PGlite).
    const [count] = await conn.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${XYZ_TABLE}`);
    await restore();
    return count?.n ?? 0;
  },
};
