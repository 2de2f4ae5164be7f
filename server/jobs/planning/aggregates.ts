// Module aggregates of the planning engine (docs/metrics.md §11): one row per brand, vendor and
// category with the sums of their products' figures, status and ABC counts; vendors also carry
// their delivery performance from vendor_lead_times. A category counts the products linked to it or
// to any of its descendants, each product once (recursive CTE over the tree). Only product categories
// (global setting product_category_types) get a row, and only they are rolled up; only merchandise
// products count.

import {
  PRODUCT_CATEGORY_TYPES_SQL,
  productCategoryAncestorsCte,
} from "../../modules/config/category-types.ts";
import type { CalcModule } from "../calculate.ts";
import { setLocal } from "./context.ts";

const STATUSES = [
  "critical",
  "reorder",
  "healthy",
  "overstocked",
  "new",
  "discontinued",
  "excluded",
] as const;

/**
 * The money columns (numeric(14,2) in product_metrics). calc_agg_products holds them as whole
 * cents (int8): summing int8 is several times cheaper than summing numeric over the ≈ 7 rows per
 * product of the category tree, and Σ cents × 0.01 is the same numeric as the Σ of the amounts,
 * value and 2 decimals (a numeric product has the sum of its factors' decimals: 0 + 2).
 */
const MONEY = [
  "stock_value_cost",
  "stock_value_retail",
  "revenue_7d",
  "revenue_30d",
  "revenue_90d",
  "revenue_365d",
  "lifetime_revenue",
  "gross_profit_365d",
  "reorder_value",
  "overstock_value",
] as const;

/** Σ of a money column of `x`, in its currency (null when every value is null or there are none). */
const money = (sum: string) => `(${sum} * 0.01)`;

// Σ gross profit ÷ Σ revenue over the products with a cost (those whose gross profit is not null).
const MARGIN = `${money("SUM(x.gross_profit_365d)")} / NULLIF(${money(
  "SUM(x.revenue_365d) FILTER (WHERE x.gross_profit_365d IS NOT NULL)",
)}, 0)`;

/** [column, expression] of the sums over `x` (calc_agg_products). Every entity gets a row: 0 when empty. */
const SUMS: readonly (readonly [string, string])[] = [
  ["product_count", "count(x.pid)::int"],
  ["active_product_count", "(count(x.pid) FILTER (WHERE NOT x.discontinued))::int"],
  ...(
    [
      ["stock_units", "on_hand"],
      ["units_7d", "units_7d"],
      ["units_30d", "units_30d"],
      ["units_90d", "units_90d"],
      ["units_365d", "units_365d"],
    ] as const
  ).map(([col, src]) => [col, `COALESCE(SUM(x.${src}), 0)::int`] as const),
  ...MONEY.map((col) => [col, `COALESCE(${money(`SUM(x.${col})`)}, 0)`] as const),
  [
    "margin_365d",
    // A ratio too large for numeric(10,4) (revenue of a few cents) is null rather than failing the run.
    `CASE WHEN abs(${MARGIN}) < 999999 THEN round(${MARGIN}, 4) END`,
  ],
  [
    "status_counts",
    `jsonb_build_object(${STATUSES.map((s) => `'${s}', count(x.pid) FILTER (WHERE x.status = '${s}')`).join(", ")})`,
  ],
  [
    "abc_counts",
    `jsonb_build_object(${["A", "B", "C"].map((c) => `'${c}', count(x.pid) FILTER (WHERE x.abc_class = '${c}')`).join(", ")})`,
  ],
];
const COLUMNS = SUMS.map(([col]) => col).join(", ");
const SUM_EXPRS = SUMS.map(([col, expr]) => `${expr} AS ${col}`).join(",\n  ");

/**
 * Temp table calc_agg_category_products: each category with every product linked to it or to one of
 * its descendants, each pair once. It reads only the imported categories and their links, so a Full
 * Reset makes it in prepare, while the order lines still load; run() makes it when prepare did not.
 * UNION (not UNION ALL) also ends the recursion should the tree ever contain a cycle. The
 * (category, ancestor) pairs go into a temp table with statistics: a recursive CTE's row guess is
 * many times the real count, and the DISTINCT's hash table sized from it for millions of groups
 * made that statement take twice as long.
 */
const CATEGORY_PRODUCTS_SQL = `
  DROP TABLE IF EXISTS calc_agg_up;
  DROP TABLE IF EXISTS calc_agg_category_products;
  DROP TABLE IF EXISTS calc_agg_types;
  CREATE TEMP TABLE calc_agg_types ON COMMIT DROP AS SELECT t.type FROM ${PRODUCT_CATEGORY_TYPES_SQL} AS t(type);
  CREATE TEMP TABLE calc_agg_up ON COMMIT DROP AS
    ${productCategoryAncestorsCte("(SELECT type FROM calc_agg_types)")}
    SELECT category_id, ancestor_id FROM up;
  ANALYZE calc_agg_up;
  CREATE TEMP TABLE calc_agg_category_products ON COMMIT DROP AS
    SELECT DISTINCT up.ancestor_id AS category_id, pc.pid
    FROM product_categories pc
    JOIN calc_agg_up up ON up.category_id = pc.category_id;
  DROP TABLE calc_agg_up;`;

export const aggregatesModule: CalcModule = {
  name: "aggregates",
  tables: ["brand_metrics", "vendor_metrics", "category_metrics"],
  prepare: {
    reads: ["categories", "product_categories"],
    async run({ conn }) {
      const restore = await setLocal(conn, { jit: "off" });
      await conn.exec(CATEGORY_PRODUCTS_SQL);
      await restore();
    },
  },
  async run({ conn }) {
    const restore = await setLocal(conn, { jit: "off" });
    const [prepared] = await conn.query<{ ready: boolean }>(
      "SELECT to_regclass('pg_temp.calc_agg_category_products') IS NOT NULL AS ready",
    );
    if (!prepared?.ready) await conn.exec(CATEGORY_PRODUCTS_SQL);
    await conn.exec(`
      DROP TABLE IF EXISTS calc_agg_products;
      TRUNCATE brand_metrics, vendor_metrics, category_metrics;
      CREATE TEMP TABLE calc_agg_products ON COMMIT DROP AS
        SELECT m.pid, p.brand_id, p.vendor_id, p.discontinued, m.on_hand,
          m.units_7d, m.units_30d, m.units_90d, m.units_365d, m.status, m.abc_class,
          ${MONEY.map((col) => `(m.${col} * 100)::int8 AS ${col}`).join(", ")}
        FROM product_metrics m JOIN products p ON p.pid = m.pid
        WHERE p.kind = 'merchandise';`);
    let rows = await conn.execute(
      `INSERT INTO brand_metrics (brand_id, ${COLUMNS})
       SELECT b.id, ${SUM_EXPRS}
       FROM brands b LEFT JOIN calc_agg_products x ON x.brand_id = b.id
       GROUP BY b.id`,
    );
    rows += await conn.execute(
      `INSERT INTO vendor_metrics (vendor_id, ${COLUMNS},
         lead_time_samples, lead_time_mean, lead_time_std, on_time_rate, fill_rate)
       SELECT a.*, COALESCE(lt.samples, 0), lt.mean_days, lt.std_days, lt.on_time_rate, lt.fill_rate
       FROM (
         SELECT v.id, ${SUM_EXPRS}
         FROM vendors v LEFT JOIN calc_agg_products x ON x.vendor_id = v.id
         GROUP BY v.id
       ) a
       LEFT JOIN vendor_lead_times lt ON lt.vendor_id = a.id`,
    );
    rows += await conn.execute(
      `INSERT INTO category_metrics (category_id, ${COLUMNS})
       SELECT c.id, ${SUM_EXPRS}
       FROM categories c
       LEFT JOIN calc_agg_category_products cp ON cp.category_id = c.id
       LEFT JOIN calc_agg_products x ON x.pid = cp.pid
       WHERE c.type IN (SELECT type FROM calc_agg_types)
       GROUP BY c.id`,
    );
    // calc_agg_category_products stays to the transaction's end: module analytics_figures, later on
    // this connection, sums its lost sales per category over the same pairs (≈ 0.3 s of the
    // database's CPU to make them again).
    await conn.exec("DROP TABLE calc_agg_products; DROP TABLE calc_agg_types;");
    await restore();
    return rows;
  },
};
