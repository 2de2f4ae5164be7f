// Import templates (spec sections 3 "Import template", "Field options", "Product search result";
// 5 "Template form"; 7 "Import templates"). Shared by the form and the server.
import { z } from "zod";
import { decimal, INT4_MAX, idSchema, int, text } from "./input.ts";

/** Spec section 9: defaults of a new template. */
export const DEFAULT_TAX_CAT = 0;
export const DEFAULT_SHIP_RESTRICTION = "0";
export const TAX_CAT_FALLBACK_LABEL = "Not Specifically Set";
/** Spec section 3: only these category types are offered in the template form. */
export const TEMPLATE_CATEGORY_TYPES = [10, 11, 12, 13] as const;
/** Spec section 9: the product search dialog pages its results 500 at a time. */
export const PRODUCT_SEARCH_PAGE_SIZE = 500;
/** The server answers at most this many products per search. */
export const PRODUCT_SEARCH_LIMIT = 5000;

/**
 * Parses a PostgreSQL array literal such as `{a,b}`, `{"a b","c"}` or `{}` into its items.
 * Answers null when the text is not such a literal.
 */
export function parseArrayLiteral(text: string): string[] | null {
  const s = text.trim();
  if (!s.startsWith("{") || !s.endsWith("}")) return null;
  const body = s.slice(1, -1);
  if (body.trim() === "") return [];
  const items: string[] = [];
  let i = 0;
  while (i <= body.length) {
    while (body[i] === " ") i++;
    let item = "";
    if (body[i] === '"') {
      i++;
      let closed = false;
      while (i < body.length) {
        const c = body[i]!;
        if (c === "\\") {
          item += body[i + 1] ?? "";
          i += 2;
        } else if (c === '"') {
          closed = true;
          i++;
          break;
        } else {
          item += c;
          i++;
        }
      }
      if (!closed) return null;
      while (body[i] === " ") i++;
    } else {
      const end = body.indexOf(",", i);
      item = (end === -1 ? body.slice(i) : body.slice(i, end)).trim();
      if (item === "" || /["{}\\]/.test(item)) return null;
      i = end === -1 ? body.length : end;
    }
    items.push(item);
    if (i >= body.length) break;
    if (body[i] !== ",") return null;
    i++;
  }
  return items;
}

/** The database array literal of spec section 5: items quoted when `quoted`, `{}` when empty. */
export function toArrayLiteral(items: readonly string[], quoted: boolean): string {
  const inner = items.map((v) => (quoted ? `"${v.replace(/(["\\])/g, "\\$1")}"` : v)).join(",");
  return `{${inner}}`;
}

/** A list given as an array, a JSON array text, or a database array literal. */
const listField = z.preprocess(
  (v, ctx) => {
    if (v === undefined || v === null || Array.isArray(v)) return v;
    if (typeof v !== "string") return v;
    const s = v.trim();
    if (s === "") return [];
    if (s.startsWith("[")) {
      try {
        return JSON.parse(s);
      } catch {
        ctx.addIssue({ code: "custom", message: "is not a valid JSON array" });
        return z.NEVER;
      }
    }
    const items = parseArrayLiteral(s);
    if (items === null) {
      ctx.addIssue({ code: "custom", message: "must be a list such as {a,b} or a JSON array" });
      return z.NEVER;
    }
    return items;
  },
  z.array(z.union([z.string(), z.number()]).transform((x) => String(x).trim())).max(500),
);

/** Blank (null, undefined, "") means absent. */
const blankToUndefined = (v: unknown) =>
  v === null || v === undefined || (typeof v === "string" && v.trim() === "") ? undefined : v;

/** A whole number for an `integer` column, as a number or numeric text; blank means absent. */
const intField = () => z.preprocess(blankToUndefined, int({ min: 0 }).optional());
/** A number for a `numeric(precision, scale)` column, as a number or numeric text; blank means absent. */
const decimalField = (precision: number, scale: number) =>
  z.preprocess(blankToUndefined, decimal(precision, scale).optional());

/** Optional text: trimmed, empty means absent. */
const textField = (max: number) =>
  z.preprocess(
    (v) => (v === null || v === undefined || (typeof v === "string" && v.trim() === "") ? undefined : v),
    z
      .union([z.string(), z.number()])
      .transform((x) => String(x).trim())
      .pipe(z.string().max(max))
      .optional(),
  );

export const TemplateInputSchema = z.object({
  company: z.preprocess(
    (v) => (typeof v === "number" ? String(v) : v),
    text({ max: 200, required: "Company is required" }),
  ),
  product_type: text({ max: 200, required: "Product Type is required" }),
  supplier: intField(),
  msrp: decimalField(12, 2),
  cost_each: decimalField(12, 2),
  qty_per_unit: intField(),
  case_qty: intField(),
  hts_code: textField(50),
  description: textField(10_000),
  weight: decimalField(10, 2),
  length: decimalField(10, 2),
  width: decimalField(10, 2),
  height: decimalField(10, 2),
  tax_cat: intField(),
  size_cat: textField(50),
  categories: listField.optional(),
  ship_restrictions: listField.optional(),
});
export type TemplateInput = z.input<typeof TemplateInputSchema>;
export type TemplateData = z.output<typeof TemplateInputSchema>;

export const TemplateIdSchema = idSchema;

export interface Template {
  id: number;
  company: string;
  product_type: string;
  supplier: number | null;
  msrp: number | null;
  cost_each: number | null;
  qty_per_unit: number | null;
  case_qty: number | null;
  hts_code: string | null;
  description: string | null;
  weight: number | null;
  length: number | null;
  width: number | null;
  height: number | null;
  tax_cat: number;
  size_cat: string | null;
  categories: string[];
  ship_restrictions: string[];
  created_at: Date;
  updated_at: Date;
}

export interface FieldOption {
  value: string;
  label: string;
}
export interface CategoryOption extends FieldOption {
  type: number;
  level: number;
}
export interface FieldOptions {
  companies: FieldOption[];
  suppliers: FieldOption[];
  shippingRestrictions: FieldOption[];
  taxCategories: FieldOption[];
  sizes: FieldOption[];
  categories: CategoryOption[];
}

/** Spec section 2 "Product search dialog": the date filter values. */
export const DATE_RANGES = ["none", "1week", "1month", "2months", "3months", "6months", "1year"] as const;
export type DateRange = (typeof DATE_RANGES)[number];
export const DATE_RANGE_LABELS: Record<DateRange, string> = {
  none: "Any Time",
  "1week": "Last week",
  "1month": "Last month",
  "2months": "Last 2 months",
  "3months": "Last 3 months",
  "6months": "Last 6 months",
  "1year": "Last year",
};

export const ProductSearchInputSchema = z.object({
  /** The trimmed text, or '*' for any product (narrowed by the filters). */
  q: z.string().trim().max(200).optional(),
  /** A brand id; absent or 'all' means any company. */
  company: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v === "" || v === "all" ? undefined : v))
    .pipe(
      z
        .string()
        .refine((v) => /^\d{1,10}$/.test(v) && Number(v) <= INT4_MAX, {
          message: `must be a company id (a whole number from 0 to ${INT4_MAX})`,
        })
        .optional(),
    ),
  dateRange: z.enum(DATE_RANGES, { error: `must be one of ${DATE_RANGES.join(", ")}` }).optional(),
});
export type ProductSearchInput = z.input<typeof ProductSearchInputSchema>;

export interface ProductSearchResult {
  pid: number;
  title: string;
  brand: string | null;
  brand_id: number | null;
  line: string | null;
  price: number;
  total_sold: number;
  /** YYYY-MM-DD */
  first_received: string | null;
  /** YYYY-MM-DD */
  date_last_sold: string | null;
  supplier: number | null;
  regular_price: number | null;
  cost_price: number | null;
  moq: number;
  case_qty: number;
  harmonized_tariff_code: string | null;
  description: string | null;
  weight: number | null;
  length: number | null;
  width: number | null;
  height: number | null;
  tax_code: string;
  size_cat: string | null;
  shipping_restrictions: string;
  /** Category ids, as the field options' values. */
  categories: string[];
}

export const PidSchema = idSchema;
