// The /products list state in the URL (page, search, filters, sort), so a link reproduces the view.
// zod/mini: route search schemas load with the first bundle, so they stay small.

import { textParam } from "@client/lib/search-params.ts";
import {
  ABC_CLASSES,
  AGING_BUCKET_KEYS,
  COVER_BUCKET_KEYS,
  MAX_NO_SALES_DAYS,
  PRODUCT_METRIC_SORTS,
  PRODUCT_STATUSES,
  type ProductMetricSort,
  type ProductMetricsListInput,
  type ProductStatus,
  parseStatusList,
  RECEIPT_MONTH_RE,
  SORT_DIRECTIONS,
  type SortDirection,
  XYZ_CLASSES,
} from "@shared/metrics.ts";
import * as z from "zod/mini";

export const DEFAULT_SORT: ProductMetricSort = "reorder_value";
export const DEFAULT_DIR: SortDirection = "desc";

const idParam = z.coerce.number().check(z.int(), z.minimum(1), z.maximum(2_147_483_647));
/** "1" or "true" (a link's flag); anything else leaves the filter off. */
const flagParam = z.pipe(
  z.union([z.string(), z.number(), z.boolean()]),
  z.transform((v) => (v === true || v === 1 || v === "1" || v === "true" ? 1 : undefined)),
);

/** The valid statuses of a status parameter, comma-separated, or undefined when none. */
function statusParam(value: string): string | undefined {
  const { statuses } = parseStatusList(
    value.split(",").filter((s) => (PRODUCT_STATUSES as readonly string[]).includes(s)),
  );
  return statuses.length ? statuses.join(",") : undefined;
}

/** The statuses a URL state filters by. */
export function statusesOf(search: ProductsSearch): ProductStatus[] {
  return search.status ? parseStatusList(search.status).statuses : [];
}

/** A bad value of one parameter is dropped (the default applies) instead of failing the page. */
export const ProductsSearchSchema = z.object({
  page: z.catch(z.optional(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(1_000_000))), undefined),
  q: textParam(),
  /** One status or several, comma-separated ("critical,reorder"); unknown ones are dropped. */
  status: z.catch(
    z.optional(
      z.pipe(
        z.string().check(z.maxLength(200)),
        z.transform((v) => statusParam(v)),
      ),
    ),
    undefined,
  ),
  abc: z.catch(z.optional(z.enum(ABC_CLASSES)), undefined),
  /** XYZ class (the Analytics page's ABC × XYZ matrix links with abc and xyz) */
  xyz: z.catch(z.optional(z.enum(XYZ_CLASSES)), undefined),
  /** Only this vendor's / brand's products (the links of the Vendors and Brands pages). */
  vendor: z.catch(z.optional(idParam), undefined),
  brand: z.catch(z.optional(idParam), undefined),
  /** "Show non-merchandise": also list postage, fees, services and gift cards. */
  nonMerchandise: z.catch(z.optional(z.boolean()), undefined),
  /** A product category and its subtree */
  category: z.catch(z.optional(idParam), undefined),
  /** The Dashboard's filters: runs out before an order placed today arrives, nothing on hand, no sale in N days */
  stockout_before_arrival: z.catch(z.optional(flagParam), undefined),
  out_of_stock: z.catch(z.optional(flagParam), undefined),
  no_sales_days: z.catch(
    z.optional(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(MAX_NO_SALES_DAYS))),
    undefined,
  ),
  /** The Analytics page's buckets: days of cover, stock age since receipt, receipt month (YYYY-MM) */
  cover: z.catch(z.optional(z.enum(COVER_BUCKET_KEYS)), undefined),
  aging: z.catch(z.optional(z.enum(AGING_BUCKET_KEYS)), undefined),
  received_month: z.catch(z.optional(z.string().check(z.regex(RECEIPT_MONTH_RE))), undefined),
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
    xyz: search.xyz,
    vendorId: search.vendor,
    brandId: search.brand,
    nonMerchandise: search.nonMerchandise === true,
    category: search.category,
    stockoutBeforeArrival: search.stockout_before_arrival ? true : undefined,
    outOfStock: search.out_of_stock ? true : undefined,
    noSalesDays: search.no_sales_days,
    cover: search.cover,
    aging: search.aging,
    receivedMonth: search.received_month,
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
  if (search.xyz) out.xyz = search.xyz;
  if (search.vendor) out.vendor = search.vendor;
  if (search.brand) out.brand = search.brand;
  if (search.nonMerchandise) out.nonMerchandise = true;
  if (search.category) out.category = search.category;
  if (search.stockout_before_arrival) out.stockout_before_arrival = 1;
  if (search.out_of_stock) out.out_of_stock = 1;
  if (search.no_sales_days) out.no_sales_days = search.no_sales_days;
  if (search.cover) out.cover = search.cover;
  if (search.aging) out.aging = search.aging;
  if (search.received_month) out.received_month = search.received_month;
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

/** The filter part of a URL state (no page, no sort): what a "selection of products" is. */
function filterPart(search: ProductsSearch): ProductsSearch {
  const { page: _p, sort: _s, dir: _d, ...filter } = cleanSearch(search);
  return filter;
}

/**
 * The Products page's filter as one URL parameter (the Discount Simulator's `filter`), e.g.
 * "status=overstocked&no_sales_days=90"; empty for the unfiltered list.
 */
export function filterToParam(search: ProductsSearch): string {
  return new URLSearchParams(
    Object.entries(filterPart(search)).map(([k, v]) => [k, String(v)] as [string, string]),
  ).toString();
}

/** The filter back from filterToParam's text (bad values dropped, as the page's URL does). */
export function filterFromParam(text: string): ProductsSearch {
  const raw: Record<string, unknown> = Object.fromEntries(new URLSearchParams(text));
  if ("nonMerchandise" in raw) raw.nonMerchandise = raw.nonMerchandise === "true";
  return filterPart(ProductsSearchSchema.parse(raw));
}
