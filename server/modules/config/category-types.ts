// Which categories are product categories (docs/metrics.md §11): the types listed in the global
// setting product_category_types (default 10,11,12,13). Every place that groups figures by category
// (the aggregates, the category tree and pages, the new-product category profile, templates) keeps
// to these; other types (warehouse zones, internal groups) are never rolled up or shown there.
import { GLOBAL_SETTINGS, parseCategoryTypes } from "../../../shared/settings.ts";
import { loadGlobalSettingValues, type SqlSource } from "./planning-parameters.ts";

const DEFAULT_TYPES = GLOBAL_SETTINGS.find((d) => d.key === "product_category_types")!.defaultValue;

/**
 * SQL (a subquery: one row per type) of the product category types, read from settings_global as the statement's search
 * path finds it (a run's frozen copy during a run). The stored value is checked on save; a value
 * that is not a list of whole numbers gives the default.
 */
export const PRODUCT_CATEGORY_TYPES_SQL = `(SELECT unnest(string_to_array(COALESCE(
    (SELECT CASE WHEN setting_value ~ '^[0-9]+(,[0-9]+)*$' THEN setting_value END
     FROM settings_global WHERE setting_key = 'product_category_types'), '${DEFAULT_TYPES}'), ',')::int[]))`;

/**
 * SQL (a WITH clause): `pcat` (id, parent_id), the categories of the `types` subquery, and `up`
 * (category_id, ancestor_id), each of them with itself and every ancestor among them.
 */
export const productCategoryAncestorsCte = (types = PRODUCT_CATEGORY_TYPES_SQL) => `WITH RECURSIVE pcat AS (
      SELECT id, parent_id FROM categories WHERE type IN ${types}
    ),
    up(category_id, ancestor_id) AS (
      SELECT id, id FROM pcat
      UNION
      SELECT up.category_id, c.parent_id
      FROM up JOIN pcat c ON c.id = up.ancestor_id
      WHERE c.parent_id IN (SELECT id FROM pcat)
    )`;

/** SQL condition: the categories row aliased `alias` is a product category. */
export const isProductCategorySql = (alias: string) => `${alias}.type IN ${PRODUCT_CATEGORY_TYPES_SQL}`;

/** The product category types now in force. */
export async function loadProductCategoryTypes(source: SqlSource): Promise<number[]> {
  return parseCategoryTypes((await loadGlobalSettingValues(source)).product_category_types);
}
