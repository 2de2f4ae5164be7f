// The Purchase Orders page's state in the URL: the tab, the workspace's filters and the PO list's
// filters, page and sort, so a link (and a dashboard tile) reproduces the view.

import { optionalParam as opt, textParam } from "@client/lib/search-params.ts";
import { ABC_CLASSES, PRODUCT_STATUSES } from "@shared/metrics.ts";
import { PO_SORTS, PO_STATUSES, type PoListInput, type ReplenishmentInput } from "@shared/purchasing.ts";
import * as z from "zod/mini";

const idParam = z.coerce.number().check(z.int(), z.minimum(1), z.maximum(2_147_483_647));
const pageParam = z.coerce.number().check(z.int(), z.minimum(1), z.maximum(1_000_000));
const dayParam = z.string().check(z.regex(/^\d{4}-\d{2}-\d{2}$/));
const flag = z.coerce.boolean();

/** A bad value of one parameter is dropped (the default applies) instead of failing the page. */
export const PurchaseOrdersSearchSchema = z.object({
  tab: opt(z.enum(["orders", "replenishment"])),
  // PO list
  page: opt(pageParam),
  q: textParam(),
  status: opt(z.enum(PO_STATUSES)),
  vendor: opt(idParam),
  overdue: opt(flag),
  open: opt(flag),
  due_week: opt(flag),
  late_for_stockout: opt(flag),
  from: opt(dayParam),
  to: opt(dayParam),
  sort: opt(z.enum(PO_SORTS)),
  dir: opt(z.enum(["asc", "desc"])),
  // Workspace
  w_vendor: opt(idParam),
  w_brand: opt(idParam),
  w_category: opt(idParam),
  w_status: opt(z.enum(PRODUCT_STATUSES)),
  w_abc: opt(z.enum(ABC_CLASSES)),
  w_q: textParam(),
  w_page: opt(pageParam),
});
export type PurchaseOrdersSearch = z.infer<typeof PurchaseOrdersSearchSchema>;

export const LIST_PAGE_SIZE = 50;
/** Lines per workspace page: a large vendor's lines in one (virtualised) scroll. */
export const WORKSPACE_PAGE_SIZE = 250;

export function listInputOf(s: PurchaseOrdersSearch): PoListInput {
  return {
    page: s.page ?? 1,
    pageSize: LIST_PAGE_SIZE,
    q: s.q?.trim() || undefined,
    status: s.status,
    vendor_id: s.vendor,
    overdue: s.overdue || undefined,
    open: s.open || undefined,
    due_week: s.due_week || undefined,
    late_for_stockout: s.late_for_stockout || undefined,
    from: s.from,
    to: s.to,
    sort: s.sort ?? "date_ordered",
    dir: s.dir ?? "desc",
  };
}

export function workspaceInputOf(s: PurchaseOrdersSearch): ReplenishmentInput {
  return {
    vendor_id: s.w_vendor,
    brand_id: s.w_brand,
    category_id: s.w_category,
    status: s.w_status,
    abc: s.w_abc,
    q: s.w_q?.trim() || undefined,
    page: s.w_page ?? 1,
    pageSize: WORKSPACE_PAGE_SIZE,
  };
}

/** Drops empty and default values, so the plain /purchase-orders is the default view. */
export function cleanSearch(s: PurchaseOrdersSearch): PurchaseOrdersSearch {
  const out: PurchaseOrdersSearch = {};
  for (const [k, v] of Object.entries(s) as [keyof PurchaseOrdersSearch, unknown][]) {
    if (v === undefined || v === "" || v === false) continue;
    if ((k === "page" || k === "w_page") && v === 1) continue;
    (out as Record<string, unknown>)[k] = typeof v === "string" ? v.trim() : v;
  }
  return out;
}
