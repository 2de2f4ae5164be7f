// Purchasing (docs/api.md "Purchasing", docs/metrics.md "Purchase orders"): the replenishment
// workspace and purchase orders, the contract between server/modules/purchasing and the screens.
// Numbers are plain JS numbers; dates are "YYYY-MM-DD" strings (UTC days).
import { z } from "zod";
import { decimal, idSchema, int, text } from "./input.ts";
import { ABC_CLASSES, PRODUCT_STATUSES } from "./metrics.ts";

export const PO_STATUSES = ["draft", "ordered", "partial", "received", "closed", "cancelled"] as const;
export type PoStatus = (typeof PO_STATUSES)[number];
export const PO_STATUS_LABELS: Record<PoStatus, string> = {
  draft: "Draft",
  ordered: "Ordered",
  partial: "Partially received",
  received: "Received",
  closed: "Closed short",
  cancelled: "Cancelled",
};
/** Statuses whose open quantity is on order (app POs; imported ones the same less `closed`). */
export const OPEN_PO_STATUSES: readonly PoStatus[] = ["ordered", "partial"];

/** A purchase order's number: an imported PO's po_id ("40213") or an app PO's "A" + sequence. */
export const poNumberSchema = z
  .string({ error: "must be a purchase-order number" })
  .trim()
  .regex(/^A?\d{1,10}$/, { error: "must be a purchase-order number such as 40213 or A1042" });

/** The most units one PO line (or one receipt of it) may hold. */
export const MAX_LINE_QTY = 10_000_000;
const qty = int({ min: 1, max: MAX_LINE_QTY });
const optionalDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, { error: "must be a date YYYY-MM-DD" })
  // A real calendar day: Date.parse takes 2026-02-30 (as 2 March), so the day must come back unchanged.
  .refine(
    (d) => {
      const t = Date.parse(`${d}T00:00:00Z`);
      return !Number.isNaN(t) && new Date(t).toISOString().slice(0, 10) === d;
    },
    { error: "must be a real date" },
  );

const boolParam = z.preprocess(
  (v) => (v === "true" || v === "1" ? true : v === "false" || v === "0" ? false : v),
  z.boolean({ error: "must be true or false" }),
);

export const PAGE_SIZE = 50;

// ---------------------------------------------------------------------------------------------
// Replenishment workspace

export const replenishmentInput = z.object({
  vendor_id: idSchema.optional(),
  brand_id: idSchema.optional(),
  category_id: idSchema.optional(),
  status: z.enum(PRODUCT_STATUSES).optional(),
  abc: z.enum(ABC_CLASSES).optional(),
  q: text({ max: 200 }).optional(),
  page: int({ min: 1, max: 1_000_000 }).default(1),
  pageSize: int({ min: 1, max: 500 }).default(PAGE_SIZE),
});
export type ReplenishmentInput = z.input<typeof replenishmentInput>;

export interface VendorTermsValues {
  min_order_value: number | null;
  min_order_qty: number | null;
  free_freight_threshold: number | null;
}

export interface VendorSummary extends VendorTermsValues {
  vendor_id: number;
  vendor: string;
  lines: number;
  /** Lines not covered by an open PO: the ones a draft would take */
  open_lines: number;
  units: number;
  order_value: number;
  /** Units and value of the open lines: what drafts would order now */
  open_units: number;
  open_value: number;
  lead_time_measured: number | null;
  lead_time_quoted: number | null;
  on_time_rate: number | null;
  fill_rate: number | null;
  /** Whether the suggested order (uncovered lines) reaches each term; null when the term is unset */
  reaches_min_value: boolean | null;
  reaches_min_qty: boolean | null;
  reaches_free_freight: boolean | null;
}

export interface ReplenishmentLine {
  pid: number;
  title: string;
  sku: string | null;
  vendor_id: number;
  vendor: string;
  brand: string | null;
  status: string | null;
  abc_class: string | null;
  on_hand: number;
  on_order: number;
  days_of_cover: number | null;
  stockout_date: string | null;
  suggested_qty: number;
  /** The planning explanation's reorder rounding, e.g. "need 48.8 → MOQ 24 → case 12 → 60" */
  why: string;
  moq: number;
  case_qty: number;
  cost: number;
  line_value: number;
  /** The open PO that already has this product for this vendor, e.g. "A1042" or "40213" */
  covered_by: string | null;
}

export interface ReplenishmentPage {
  as_of: string;
  vendors: VendorSummary[];
  items: ReplenishmentLine[];
  total: number;
  page: number;
  pageSize: number;
}

/** A brand or category the workspace can filter by, with its number of lines to order. */
export interface FacetOption {
  id: number;
  label: string;
  lines: number;
}
export interface ReplenishmentFacets {
  brands: FacetOption[];
  categories: FacetOption[];
}

export const vendorTermsInput = z.object({
  min_order_value: decimal(14, 2).nullable().optional(),
  min_order_qty: int({ min: 0, max: 10_000_000 }).nullable().optional(),
  free_freight_threshold: decimal(14, 2).nullable().optional(),
});
export type VendorTermsInput = z.infer<typeof vendorTermsInput>;

export const fromSuggestionsInput = z.object({
  vendor_ids: z.array(idSchema).max(10_000).optional(),
  pids: z.array(idSchema).max(100_000).optional(),
  /** Products of the selected vendors left out (unticked in the workspace) */
  exclude_pids: z.array(idSchema).max(100_000).optional(),
  /** Quantities the buyer typed over the suggestion (re-rounded to MOQ and case) */
  quantities: z
    .array(z.object({ pid: idSchema, qty }))
    .max(100_000)
    .optional(),
  /** Add quantity to the lines with the fewest days of cover until each vendor's minimums are reached */
  top_up: z.boolean().optional(),
});
export type FromSuggestionsInput = z.infer<typeof fromSuggestionsInput>;

export interface DraftPreviewLine {
  pid: number;
  title: string;
  qty: number;
  /** Units "Top up to the vendor minimum" added */
  top_up: number;
  cost_each: number;
  value: number;
  days_of_cover: number | null;
}
export interface DraftPreview {
  vendor_id: number;
  vendor: string;
  lines: DraftPreviewLine[];
  units: number;
  value: number;
  /** Products left out because an open PO already has them */
  covered: { pid: number; number: string }[];
  min_order_value: number | null;
  min_order_qty: number | null;
}
export interface CreatedDraft {
  number: string;
  vendor_id: number;
  vendor: string;
  lines: number;
  units: number;
  value: number;
}
export interface FromSuggestionsResult {
  created: CreatedDraft[];
  /** Products not added because an open PO already has them */
  covered: { pid: number; number: string }[];
}

// ---------------------------------------------------------------------------------------------
// Purchase orders

export const PO_SORTS = ["number", "vendor", "status", "date_ordered", "date_expected"] as const;

export const poListInput = z.object({
  page: int({ min: 1, max: 1_000_000 }).default(1),
  pageSize: int({ min: 1, max: 500 }).default(PAGE_SIZE),
  status: z.enum(PO_STATUSES).optional(),
  vendor_id: idSchema.optional(),
  overdue: boolParam.optional(),
  /** Open POs expected from the as-of day through 7 days later */
  due_week: boolParam.optional(),
  /** Open POs (ordered or partial) */
  open: boolParam.optional(),
  /** Open POs with a product whose stock-out date comes before the PO's expected date */
  late_for_stockout: boolParam.optional(),
  /** Open POs expected on or before 7 days after the as-of day (overdue ones included) */
  due: boolParam.optional(),
  from: optionalDate.optional(),
  to: optionalDate.optional(),
  q: text({ max: 200 }).optional(),
  sort: z.enum(PO_SORTS).default("date_ordered"),
  dir: z.enum(["asc", "desc"]).default("desc"),
});
export type PoListInput = z.input<typeof poListInput>;

export interface PoListItem {
  number: string;
  source: "imported" | "app";
  vendor_id: number;
  vendor: string;
  status: PoStatus;
  lines: number;
  units: number;
  value: number;
  date_ordered: string | null;
  date_expected: string | null;
  received_units: number;
  /** Received ÷ ordered units, 0–1; null without lines */
  received_pct: number | null;
  overdue: boolean;
  /** Once received: whether the first receipt came on or before the expected date */
  on_time: boolean | null;
}
export interface PoListPage {
  items: PoListItem[];
  total: number;
  page: number;
  pageSize: number;
  as_of: string;
}

export interface PoLine {
  po_line_id: number;
  pid: number;
  title: string | null;
  sku: string | null;
  ordered_qty: number;
  received_qty: number;
  open_qty: number;
  cost_each: number;
  value: number;
  moq: number;
  case_qty: number;
}
export interface PoReceipt {
  id: number;
  po_line_id: number;
  pid: number;
  qty: number;
  received_date: string;
  recorded_by: string | null;
}
export interface PoHistoryEntry {
  at: string;
  user: string | null;
  action: string;
  details: Record<string, unknown> | null;
}
export interface PoDetail {
  number: string;
  source: "imported" | "app";
  status: PoStatus;
  vendor: { vendor_id: number; name: string; email: string | null; phone: string | null };
  date_ordered: string | null;
  date_expected: string | null;
  notes: string | null;
  reason: string | null;
  version: number;
  created_by: string | null;
  created_at: string | null;
  /** For an app PO the shop system echoed: the imported PO's number ("now in the shop system as 40213") */
  superseded_by: string | null;
  /** For an imported PO that echoes an app PO: that PO's number */
  reference: string | null;
  overdue: boolean;
  lines: PoLine[];
  receipts: PoReceipt[];
  history: PoHistoryEntry[];
  units: number;
  value: number;
  received_units: number;
}

export const poUpdateInput = z.object({
  /** The version read; a PO changed since then is a 409 */
  version: int({ min: 1 }).optional(),
  date_expected: optionalDate.nullable().optional(),
  notes: text({ max: 2000 }).nullable().optional(),
  lines: z
    .array(
      z.object({
        pid: idSchema,
        qty,
        cost_each: decimal(12, 4).optional(),
      }),
    )
    .max(10_000)
    .optional(),
});
export type PoUpdateInput = z.infer<typeof poUpdateInput>;

export interface PoRounding {
  pid: number;
  requested: number;
  qty: number;
  /** e.g. "50 → MOQ 24 → case 12 → 60"; null when nothing changed */
  rounding: string | null;
}
export interface PoUpdateResult {
  po: PoDetail;
  rounded: PoRounding[];
}

export const receiptInput = z.object({
  received_date: optionalDate.optional(),
  confirm_over_receipt: z.boolean().optional(),
  lines: z
    .array(z.object({ po_line_id: idSchema, qty }))
    .min(1, { error: "at least one line is required" })
    .max(10_000),
});
export type ReceiptInput = z.infer<typeof receiptInput>;

export const reasonInput = z.object({
  reason: text({ max: 500, required: "a reason is required" }),
});
export type ReasonInput = z.infer<typeof reasonInput>;

/** MOQ then whole cases: the rounding planning applies to a reorder quantity. */
export function roundToPack(requested: number, moq: number, caseQty: number): PoRounding["qty"] {
  const m = Math.max(moq, 1);
  const c = Math.max(caseQty, 1);
  return Math.ceil(Math.max(requested, m) / c) * c;
}

export function roundingText(requested: number, moq: number, caseQty: number): string | null {
  const q = roundToPack(requested, moq, caseQty);
  if (q === requested) return null;
  return `${requested} → MOQ ${Math.max(moq, 1)} → case ${Math.max(caseQty, 1)} → ${q}`;
}

// ---------------------------------------------------------------------------------------------
// Dashboard tiles (/dashboard and /small): each is the PO list's filter, its count the list's total.

export const PO_TILE_KEYS = ["po_overdue", "po_due_week", "po_open_value", "po_late_for_stockout"] as const;
export interface PoTile {
  key: (typeof PO_TILE_KEYS)[number];
  label: string;
  /** Purchase orders: the total of the list the tile opens */
  count: number;
  /** Open value at cost (ordered − received units × cost each) of those POs */
  value: number;
  value_label: string;
  how: string;
  tone: "danger" | "warning" | "info";
  /** The /purchase-orders URL parameters of the same filter */
  search: Record<string, string>;
  href: string;
}
