// The /forecasting view in the URL (level, page, search, filters, sort, tab, selected row), so a
// link reproduces it. zod/mini: route search schemas load with the first bundle.

import { optionalParam as opt, textParam } from "@client/lib/search-params.ts";
import {
  EXCEPTION_KINDS,
  FORECAST_LEVELS,
  FORECAST_METHODS,
  FORECAST_SORTS,
  type ForecastListInput,
  XYZ_CLASSES,
} from "@shared/forecasting.ts";
import { ABC_CLASSES, PRODUCT_STATUSES, SORT_DIRECTIONS } from "@shared/metrics.ts";
import * as z from "zod/mini";

const idParam = z.coerce.number().check(z.int(), z.minimum(1), z.maximum(2_147_483_647));

export const FORECAST_TABS = ["grid", "overrides", "accuracy", "exceptions"] as const;

/** A bad value of one parameter is dropped (the default applies) instead of failing the page. */
export const ForecastingSearchSchema = z.object({
  tab: opt(z.enum(FORECAST_TABS)),
  level: opt(z.enum(FORECAST_LEVELS)),
  page: opt(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(1_000_000))),
  q: textParam(),
  vendor: opt(idParam),
  brand: opt(idParam),
  category: opt(idParam),
  abc: opt(z.enum(ABC_CLASSES)),
  xyz: opt(z.enum(XYZ_CLASSES)),
  status: opt(z.enum(PRODUCT_STATUSES)),
  method: opt(z.enum(FORECAST_METHODS)),
  overridden: opt(z.enum(["yes", "no"])),
  bigError: opt(z.enum(["yes"])),
  sort: opt(z.enum(FORECAST_SORTS)),
  dir: opt(z.enum(SORT_DIRECTIONS)),
  /** The row whose chart is shown (a pid on the products level) */
  selected: opt(idParam),
  accuracy: opt(z.enum(["product", "category", "abc", "method"])),
  /** The exceptions list shown */
  exception: opt(z.enum(EXCEPTION_KINDS)),
});
export type ForecastingSearch = z.infer<typeof ForecastingSearchSchema>;

export const GRID_PAGE_SIZE = 50;

export function gridInputOf(s: ForecastingSearch): ForecastListInput {
  return {
    level: s.level ?? "product",
    page: s.page ?? 1,
    pageSize: GRID_PAGE_SIZE,
    search: s.q?.trim() || undefined,
    vendorId: s.vendor,
    brandId: s.brand,
    categoryId: s.category,
    abc: s.abc,
    xyz: s.xyz,
    status: s.status,
    method: s.method,
    hasOverride: s.overridden === "yes" ? true : s.overridden === "no" ? false : undefined,
    bigError: s.bigError === "yes" ? true : undefined,
    sort: s.sort ?? "forecast_value",
    dir: s.dir ?? "desc",
  };
}

/** Leaves empty values out of the URL. */
export function cleanSearch(s: ForecastingSearch): ForecastingSearch {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s))
    if (v !== undefined && v !== "" && !(k === "page" && v === 1)) out[k] = v;
  return out as ForecastingSearch;
}
