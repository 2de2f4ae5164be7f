// The template form's values and how they travel (spec sections 3 "Mapping a product to a
// template", 4 "Template form", 5 "Template form").
// (A relative import: the unit tests load this module without the app's path aliases.)
import {
  DEFAULT_SHIP_RESTRICTION,
  DEFAULT_TAX_CAT,
  type FieldOption,
  type ProductSearchResult,
  TEMPLATE_CATEGORY_TYPES,
  type Template,
  toArrayLiteral,
} from "../../../shared/templates.ts";

/**
 * A product's categories that a template can carry: the types the template form offers
 * (TEMPLATE_CATEGORY_TYPES), and, when the form's list is known, only categories in it. The rest
 * (warehouse zones, internal groups) are left out and counted for a quiet note.
 */
export function templateCategoriesOf(
  entries: readonly { value: string; type: number }[],
  offered?: readonly { value: string }[],
): { values: string[]; leftOut: number; note: string | null } {
  const types = TEMPLATE_CATEGORY_TYPES as readonly number[];
  const known = offered ? new Set(offered.map((o) => o.value)) : null;
  const values = entries
    .filter((c) => types.includes(c.type) && (!known || known.has(c.value)))
    .map((c) => c.value);
  const leftOut = entries.length - values.length;
  const note =
    leftOut === 0
      ? null
      : leftOut === 1
        ? "1 category of this product is not a template category and was left out"
        : `${leftOut} categories of this product are not template categories and were left out`;
  return { values, leftOut, note };
}

export type TemplateMode = "create" | "edit" | "copy" | "fromProduct";

export const TEMPLATE_TITLES: Record<TemplateMode, string> = {
  edit: "Edit Template",
  copy: "Copy Template",
  fromProduct: "Create Template from Product",
  create: "Create Template",
};

const UNIQUE_HINT = "Company and Product Type combination must be unique.";
export function templateDescription(mode: TemplateMode): string {
  return mode === "edit"
    ? `Edit an existing template. ${UNIQUE_HINT}`
    : `Create a new template for importing products. ${UNIQUE_HINT}`;
}

/** What the inputs hold: text for every input, a list for categories. */
export interface TemplateFormValues {
  company: string;
  product_type: string;
  supplier: string;
  msrp: string;
  cost_each: string;
  qty_per_unit: string;
  case_qty: string;
  hts_code: string;
  description: string;
  weight: string;
  length: string;
  width: string;
  height: string;
  tax_cat: string;
  size_cat: string;
  categories: string[];
  /** One restriction (spec: a list with only one selectable). */
  ship_restrictions: string;
}

export const NUMBER_FIELDS = [
  "msrp",
  "cost_each",
  "qty_per_unit",
  "case_qty",
  "weight",
  "length",
  "width",
  "height",
] as const;

export function emptyTemplateForm(): TemplateFormValues {
  return {
    company: "",
    product_type: "",
    supplier: "",
    msrp: "",
    cost_each: "",
    qty_per_unit: "",
    case_qty: "",
    hts_code: "",
    description: "",
    weight: "",
    length: "",
    width: "",
    height: "",
    tax_cat: String(DEFAULT_TAX_CAT),
    size_cat: "",
    categories: [],
    ship_restrictions: DEFAULT_SHIP_RESTRICTION,
  };
}

const text = (v: unknown): string => (v === null || v === undefined ? "" : String(v));

export function templateToForm(t: Template): TemplateFormValues {
  return {
    company: t.company,
    product_type: t.product_type,
    supplier: text(t.supplier),
    msrp: text(t.msrp),
    cost_each: text(t.cost_each),
    qty_per_unit: text(t.qty_per_unit),
    case_qty: text(t.case_qty),
    hts_code: text(t.hts_code),
    description: text(t.description),
    weight: text(t.weight),
    length: text(t.length),
    width: text(t.width),
    height: text(t.height),
    tax_cat: text(t.tax_cat),
    size_cat: text(t.size_cat),
    categories: [...t.categories],
    ship_restrictions: t.ship_restrictions[0] ?? DEFAULT_SHIP_RESTRICTION,
  };
}

/** A copy keeps every field but the product type, which the user must enter anew. */
export function copyOfTemplate(t: Template): TemplateFormValues {
  return { ...templateToForm(t), product_type: "" };
}

/** Spec section 3 "Mapping a product to a template", plus the categories loaded separately. */
export function productToForm(p: ProductSearchResult, categories: readonly string[]): TemplateFormValues {
  return {
    ...emptyTemplateForm(),
    company: text(p.brand_id),
    product_type: "",
    supplier: text(p.supplier),
    msrp: text(p.regular_price),
    cost_each: text(p.cost_price),
    qty_per_unit: text(p.moq),
    case_qty: text(p.case_qty),
    hts_code: text(p.harmonized_tariff_code),
    description: text(p.description),
    weight: text(p.weight),
    length: text(p.length),
    width: text(p.width),
    height: text(p.height),
    tax_cat: text(p.tax_code) || String(DEFAULT_TAX_CAT),
    size_cat: text(p.size_cat),
    categories: [...categories],
    ship_restrictions: text(p.shipping_restrictions) || DEFAULT_SHIP_RESTRICTION,
  };
}

export type TemplatePayload = Record<string, string | number>;

/**
 * Spec section 5: empty values are omitted, number inputs become numbers (an empty one is left
 * out), tax_cat and supplier are numbers, company is text, and the lists are database array
 * literals ({"a","b"} for categories, {0} for the restriction, {} when empty).
 */
export function toTemplatePayload(v: TemplateFormValues): TemplatePayload {
  const out: TemplatePayload = {};
  const put = (key: string, value: string | number | undefined) => {
    if (value === undefined || value === "" || (typeof value === "number" && Number.isNaN(value))) return;
    out[key] = value;
  };
  const num = (s: string) => (s.trim() === "" ? undefined : Number(s));
  put("company", v.company.trim());
  put("product_type", v.product_type.trim());
  put("supplier", num(v.supplier));
  for (const key of NUMBER_FIELDS) put(key, num(v[key]));
  put("hts_code", v.hts_code.trim());
  put("description", v.description.trim());
  put("tax_cat", num(v.tax_cat));
  put("size_cat", v.size_cat.trim());
  out.categories = toArrayLiteral(v.categories, true);
  out.ship_restrictions = toArrayLiteral(v.ship_restrictions ? [v.ship_restrictions] : [], false);
  return out;
}

/** Company and Product Type are required (spec section 5). */
export function isTemplateFormComplete(v: TemplateFormValues): boolean {
  return v.company.trim() !== "" && v.product_type.trim() !== "";
}

/** The company label, falling back to the raw value (spec section 2). */
export function companyLabel(companies: readonly FieldOption[] | undefined, value: string | null): string {
  if (!value) return "";
  return companies?.find((c) => c.value === value)?.label ?? value;
}
