// The URL state of the Brands, Vendors and Categories pages (page, search, sort), so a link
// reproduces the view. zod/mini: route search schemas load with the first bundle, so they stay small.

import { textParam } from "@client/lib/search-params.ts";
import {
  AGGREGATE_SORTS,
  type AggregateKind,
  type AggregateListInput,
  type AggregateSort,
  aggregateSortFits,
  SORT_DIRECTIONS,
  type SortDirection,
} from "@shared/metrics.ts";
import * as z from "zod/mini";

/**
 * The view a plain URL shows: brands and vendors in the chart's order (the biggest sellers of the
 * year first), categories as their tree.
 */
export function defaultSort(kind: AggregateKind): { sort: AggregateSort; dir: SortDirection } {
  return kind === "category" ? { sort: "tree", dir: "asc" } : { sort: "revenue_365d", dir: "desc" };
}

/** A bad value of one parameter is dropped (the default applies) instead of failing the page. */
export const AggregatesSearchSchema = z.object({
  page: z.catch(z.optional(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(1_000_000))), undefined),
  q: textParam(),
  sort: z.catch(z.optional(z.enum(AGGREGATE_SORTS)), undefined),
  dir: z.catch(z.optional(z.enum(SORT_DIRECTIONS)), undefined),
});
export type AggregatesSearch = z.infer<typeof AggregatesSearchSchema>;

/** The sort of a URL state; a sort the kind does not have falls back to the default. */
export function sortOf(
  kind: AggregateKind,
  search: AggregatesSearch,
): { sort: AggregateSort; dir: SortDirection } {
  const fallback = defaultSort(kind);
  if (!search.sort || !aggregateSortFits(kind, search.sort)) return fallback;
  return { sort: search.sort, dir: search.dir ?? (search.sort === fallback.sort ? fallback.dir : "desc") };
}

/** The list query of a URL state (defaults filled in). */
export function listInputOf(
  kind: AggregateKind,
  search: AggregatesSearch,
  pageSize: number,
): AggregateListInput {
  return {
    kind,
    page: search.page ?? 1,
    pageSize,
    search: search.q?.trim() || undefined,
    ...sortOf(kind, search),
  };
}

/** Leaves defaults out of the URL, so the plain /brands is the default view. */
export function cleanSearch(kind: AggregateKind, search: AggregatesSearch): AggregatesSearch {
  const out: AggregatesSearch = {};
  if (search.page && search.page > 1) out.page = search.page;
  if (search.q?.trim()) out.q = search.q.trim();
  const { sort, dir } = sortOf(kind, search);
  const fallback = defaultSort(kind);
  if (sort !== fallback.sort || dir !== fallback.dir) {
    out.sort = sort;
    out.dir = dir;
  }
  return out;
}

/** Columns whose natural first click is lowest first: names A→Z, the tree from its roots, lead times shortest first. */
const ASCENDING_FIRST = new Set<AggregateSort>(["name", "tree", "lead_time_mean"]);

/** A new column starts in its natural direction; the same column flips. */
export function nextSort(
  current: { sort: AggregateSort; dir: SortDirection },
  column: AggregateSort,
): { sort: AggregateSort; dir: SortDirection } {
  if (current.sort === column) return { sort: column, dir: current.dir === "asc" ? "desc" : "asc" };
  return { sort: column, dir: ASCENDING_FIRST.has(column) ? "asc" : "desc" };
}
