// The /products list state in the URL (page, search, filters, sort), so a link reproduces the view.
// zod/mini: route search schemas load with the first bundle, so they stay small.
import {
  ABC_CLASSES,
  PRODUCT_METRIC_SORTS,
  PRODUCT_STATUSES,
  type ProductMetricSort,
  type ProductMetricsListInput,
  SORT_DIRECTIONS,
  type SortDirection,
} from "@shared/metrics.ts";
import * as z from "zod/mini";

export const DEFAULT_SORT: ProductMetricSort = "reorder_value";
export const DEFAULT_DIR: SortDirection = "desc";

const idParam = z.coerce.number().check(z.int(), z.minimum(1), z.maximum(2_147_483_647));

/** A bad value of one parameter is dropped (the default applies) instead of failing the page. */
export const ProductsSearchSchema = z.object({
  page: z.catch(z.optional(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(1_000_000))), undefined),
  q: z.catch(z.optional(z.string().check(z.maxLength(200))), undefined),
  status: z.catch(z.optional(z.enum(PRODUCT_STATUSES)), undefined),
  abc: z.catch(z.optional(z.enum(ABC_CLASSES)), undefined),
  /** Only this vendor's / brand's products (the links of the Vendors and Brands pages). */
  vendor: z.catch(z.optional(idParam), undefined),
  brand: z.catch(z.optional(idParam), undefined),
  /** "Show non-merchandise": also list postage, fees, services and gift cards. */
  nonMerchandise: z.catch(z.optional(z.boolean()), undefined),
  sort: z.catch(z.optional(z.enum(PRODUCT_METRIC_SORTS)), undefined),
  dir: z.catch(z.optional(z.enum(SORT_DIRECTIONS)), undefined),
});
export type ProductsSearch = z.infer<typeof ProductsSearchSchema>;

/** The list query of a URL state (defaults filled in). */
export function listInputOf(search: ProductsSearch, pageSize: number): ProductMetricsListInput {
  return {
    page: search.page ?? 1,
    pageSize,
    search: search.q?.trim() || undefined,
    status: search.status,
    abc: search.abc,
    vendorId: search.vendor,
    brandId: search.brand,
    nonMerchandise: search.nonMerchandise === true,
    sort: search.sort ?? DEFAULT_SORT,
    dir: search.dir ?? DEFAULT_DIR,
  };
}

/** Leaves defaults out of the URL, so the plain /products is the default view. */
export function cleanSearch(search: ProductsSearch): ProductsSearch {
  const out: ProductsSearch = {};
  if (search.page && search.page > 1) out.page = search.page;
  if (search.q?.trim()) out.q = search.q.trim();
  if (search.status) out.status = search.status;
  if (search.abc) out.abc = search.abc;
  if (search.vendor) out.vendor = search.vendor;
  if (search.brand) out.brand = search.brand;
  if (search.nonMerchandise) out.nonMerchandise = true;
  const sort = search.sort ?? DEFAULT_SORT;
  const dir = search.dir ?? DEFAULT_DIR;
  if (sort !== DEFAULT_SORT || dir !== DEFAULT_DIR) {
    out.sort = sort;
    out.dir = dir;
  }
  return out;
}

/** Columns whose natural first click is highest first (money, quantities); text and dates go A→Z / soonest. */
const ASCENDING_FIRST = new Set<ProductMetricSort>([
  "title",
  "sku",
  "stockout_date",
  "days_of_cover",
  "abc_class",
  "status",
]);

/** A new column starts in its natural direction; the same column flips. */
export function nextSort(
  current: { sort: ProductMetricSort; dir: SortDirection },
  column: ProductMetricSort,
): { sort: ProductMetricSort; dir: SortDirection } {
  if (current.sort === column) return { sort: column, dir: current.dir === "asc" ? "desc" : "asc" };
  return { sort: column, dir: ASCENDING_FIRST.has(column) ? "asc" : "desc" };
}
