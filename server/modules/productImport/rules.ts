// The rule checks of an import row, and the values a row gives. Pure functions: the service loads
// the context (field options, the template, duplicates in the file, the catalogue and earlier
// imports) and stores what comes out.
import {
  type Finding,
  IMPORT_FIELD_BY_KEY,
  IMPORT_FIELDS,
  type ImportFieldKey,
} from "../../../shared/product-import.ts";
import type { FieldOptions, Template } from "../../../shared/templates.ts";
import { TEMPLATE_CATEGORY_TYPES } from "../../../shared/templates.ts";

export type Values = Partial<Record<ImportFieldKey, string | null>>;

/** Field options as case-insensitive lookups: label or value → value. */
export interface OptionLookups {
  company: Map<string, string>;
  supplier: Map<string, string>;
  tax_cat: Map<string, string>;
  size_cat: Map<string, string>;
  ship_restrictions: Map<string, string>;
  categories: Map<string, string>;
}

export function buildLookups(options: FieldOptions): OptionLookups {
  const lookup = (list: { value: string; label: string }[]) => {
    const m = new Map<string, string>();
    // Labels first, so a value that equals another entry's label still finds its own entry.
    for (const o of list) m.set(o.label.trim().toLowerCase(), o.value);
    for (const o of list) m.set(o.value.trim().toLowerCase(), o.value);
    return m;
  };
  const types = TEMPLATE_CATEGORY_TYPES as readonly number[];
  return {
    company: lookup(options.companies),
    supplier: lookup(options.suppliers),
    tax_cat: lookup(options.taxCategories),
    size_cat: lookup(options.sizes),
    ship_restrictions: lookup(options.shippingRestrictions),
    categories: lookup(options.categories.filter((c) => types.includes(c.type))),
  };
}

/** The template's value of a field as text, or null. */
export function templateValue(template: Template | null, field: ImportFieldKey): string | null {
  if (!template) return null;
  const v = (() => {
    switch (field) {
      case "supplier":
        return template.supplier;
      case "msrp":
        return template.msrp;
      case "cost_each":
        return template.cost_each;
      case "qty_per_unit":
        return template.qty_per_unit;
      case "case_qty":
        return template.case_qty;
      case "hts_code":
        return template.hts_code;
      case "description":
        return template.description;
      case "weight":
        return template.weight;
      case "length":
        return template.length;
      case "width":
        return template.width;
      case "height":
        return template.height;
      case "tax_cat":
        return template.tax_cat;
      case "size_cat":
        return template.size_cat;
      case "ship_restrictions":
        return template.ship_restrictions[0] ?? null;
      case "categories":
        return template.categories.length ? template.categories.join(", ") : null;
      default:
        return null;
    }
  })();
  return v == null || String(v).trim() === "" ? null : String(v);
}

export interface DeriveInput {
  headers: string[];
  mapping: Record<string, ImportFieldKey | null>;
  template: Template | null;
  company: string | null;
}

/** Column index per field (the first mapped column wins). */
export function fieldColumns(headers: string[], mapping: Record<string, ImportFieldKey | null>) {
  const cols = new Map<ImportFieldKey, number>();
  headers.forEach((h, i) => {
    const f = mapping[h];
    if (f && !cols.has(f)) cols.set(f, i);
  });
  return cols;
}

/**
 * A row's values: the user's edit, else the file's cell, else (for the fields a template holds)
 * the template's value, else the import's company.
 */
export function deriveValues(
  raw: string[],
  edits: Values,
  cols: Map<ImportFieldKey, number>,
  input: DeriveInput,
): { values: Values; fromTemplate: ImportFieldKey[] } {
  const values: Values = {};
  const fromTemplate: ImportFieldKey[] = [];
  for (const f of IMPORT_FIELDS) {
    if (Object.hasOwn(edits, f.key)) {
      const e = edits[f.key];
      values[f.key] = e == null || e.trim() === "" ? null : e;
      continue;
    }
    const col = cols.get(f.key);
    const cell = col === undefined ? "" : (raw[col] ?? "").trim();
    if (cell !== "") {
      values[f.key] = cell;
      continue;
    }
    const t =
      f.key === "company" ? input.company : f.fromTemplate ? templateValue(input.template, f.key) : null;
    if (t != null) {
      values[f.key] = t;
      fromTemplate.push(f.key);
    } else values[f.key] = null;
  }
  return { values, fromTemplate };
}

// ---------------------------------------------------------------------------------------------
// Value rules

/** A number as suppliers write it: "$1,234.50", "12.5", " 3 ". null when it is not one. */
export function parseNumber(text: string): number | null {
  let s = text
    .trim()
    .replace(/^[$€£]\s*/, "")
    .replace(/\s*(USD|EUR|GBP)$/i, "");
  if (/^-?\d{1,3}(,\d{3})+(\.\d+)?$/.test(s)) s = s.replace(/,/g, "");
  if (!/^-?(\d+\.?\d*|\.\d+)$/.test(s)) return null;
  return Number(s);
}

function decimals(text: string): number {
  const m = /\.(\d+)$/.exec(text.trim().replace(/,/g, ""));
  return m ? m[1]!.replace(/0+$/, "").length : 0;
}

/** The digits of a barcode as written ("0 12345-67890 5" → "012345678905"), or null when it has other characters. */
export function barcodeDigits(text: string): string | null {
  const s = text.trim().replace(/[\s-]/g, "");
  return /^\d+$/.test(s) ? s : null;
}

/** GS1 check digit of UPC-A, EAN-8, EAN-13 and GTIN-14. */
export function hasValidCheckDigit(digits: string): boolean {
  let sum = 0;
  const body = digits.slice(0, -1);
  for (let i = 0; i < body.length; i++) {
    const d = Number(body[body.length - 1 - i]);
    sum += i % 2 === 0 ? d * 3 : d;
  }
  return (10 - (sum % 10)) % 10 === Number(digits[digits.length - 1]);
}

const BARCODE_KINDS: Record<number, string> = { 8: "EAN-8", 12: "UPC", 13: "EAN-13", 14: "GTIN-14" };
const DANGEROUS_HTML = /<\s*(script|iframe|object|embed|style|form|link|meta)\b|\bon[a-z]+\s*=|javascript:/i;
const ANY_TAG = /<\/?[a-z][^>]*>/i;

/** Text without its HTML tags and entities, whitespace folded. */
export function stripHtml(text: string): string {
  return text
    .replace(/<br\s*\/?>/gi, "\n")
    .replace(/<\/p>/gi, "\n")
    .replace(/<[^>]*>/g, "")
    .replace(/&nbsp;/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/[ \t]+/g, " ")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** A product as the created products store takes it (numbers as numbers, options as their values). */
export interface NormalisedProduct {
  title: string;
  sku: string;
  barcode: string | null;
  brandId: number | null;
  vendorId: number | null;
  line: string | null;
  description: string | null;
  price: number;
  regularPrice: number | null;
  costPrice: number | null;
  moq: number;
  caseQty: number;
  harmonizedTariffCode: string | null;
  weight: number | null;
  length: number | null;
  width: number | null;
  height: number | null;
  taxCode: string;
  sizeCat: string | null;
  shippingRestrictions: string;
  categories: number[];
}

/** Where else a SKU or barcode is already used: other rows of this file, the catalogue, earlier imports. */
export interface DuplicateLookup {
  skuRows(key: string): number[];
  barcodeRows(key: string): number[];
  skuInCatalogue(key: string): number | undefined;
  barcodeInCatalogue(key: string): number | undefined;
  skuCreated(key: string): { pid: number; importId: number } | undefined;
  barcodeCreated(key: string): { pid: number; importId: number } | undefined;
}

export function skuKey(v: string | null | undefined): string | null {
  const s = v?.trim().toLowerCase();
  return s ? s : null;
}
export function barcodeKey(v: string | null | undefined): string | null {
  if (!v?.trim()) return null;
  return barcodeDigits(v) ?? v.trim().toLowerCase();
}

function rowList(ids: number[]): string {
  const shown = ids.slice(0, 5).join(", ");
  return ids.length > 5 ? `${shown} and ${ids.length - 5} more` : shown;
}

/** Runs every rule on one row. */
export function checkRow(
  rowId: number,
  values: Values,
  lookups: OptionLookups,
  dup: DuplicateLookup,
): { findings: Finding[]; product: NormalisedProduct | null } {
  const findings: Finding[] = [];
  const add = (field: ImportFieldKey, message: string, severity: Finding["severity"] = "error") =>
    findings.push({ field, value: values[field] ?? null, message, severity, source: "rules" });
  const out: Partial<NormalisedProduct> = {};

  for (const f of IMPORT_FIELDS) {
    const v = values[f.key];
    if (v == null || v.trim() === "") {
      if (f.required) add(f.key, `${f.label} is required`);
      continue;
    }
    const value = v.trim();
    if (f.max && value.length > f.max && f.kind !== "barcode")
      add(f.key, `${f.label} is ${value.length} characters long; at most ${f.max} are allowed`);
  }

  // Texts
  const title = values.title?.trim();
  if (title) {
    if (ANY_TAG.test(title)) add("title", "HTML is not allowed in the title: remove the tags");
    out.title = title;
  }
  const sku = values.sku?.trim();
  if (sku) {
    out.sku = sku;
    const key = sku.toLowerCase();
    const others = dup.skuRows(key).filter((r) => r !== rowId);
    if (others.length) add("sku", `SKU "${sku}" is also on row ${rowList(others)} of this file`);
    const pid = dup.skuInCatalogue(key);
    if (pid !== undefined) add("sku", `SKU "${sku}" already exists in the catalogue (pid ${pid})`);
    const created = dup.skuCreated(key);
    if (created)
      add("sku", `SKU "${sku}" was already created by import #${created.importId} (pid ${created.pid})`);
  }
  out.line = values.line?.trim() || null;
  out.harmonizedTariffCode = values.hts_code?.trim() || null;
  const description = values.description?.trim();
  out.description = description || null;
  if (description) {
    if (DANGEROUS_HTML.test(description)) {
      add(
        "description",
        "Description contains a script, an embedded object or an event handler: it is refused, remove it",
      );
    } else if (ANY_TAG.test(description)) {
      add("description", "HTML tags in the description will be stripped (plain text is kept)", "warning");
      out.description = stripHtml(description);
    }
  }

  // Barcode
  const barcode = values.barcode?.trim();
  out.barcode = null;
  if (barcode) {
    const digits = barcodeDigits(barcode);
    if (!digits) add("barcode", `Barcode "${barcode}" must contain only digits`);
    else if (!BARCODE_KINDS[digits.length]) {
      const hint =
        digits.length === 11 || digits.length === 7 ? " (a spreadsheet may have dropped a leading zero)" : "";
      add("barcode", `Barcode has ${digits.length} digits: a UPC has 12, an EAN 8 or 13, a GTIN 14${hint}`);
    } else if (!hasValidCheckDigit(digits))
      add(
        "barcode",
        `Barcode "${barcode}" has a wrong check digit: it is not a valid ${BARCODE_KINDS[digits.length]}`,
      );
    else {
      out.barcode = digits;
      const others = dup.barcodeRows(digits).filter((r) => r !== rowId);
      if (others.length) add("barcode", `Barcode ${digits} is also on row ${rowList(others)} of this file`);
      const pid = dup.barcodeInCatalogue(digits);
      if (pid !== undefined) add("barcode", `Barcode ${digits} already exists in the catalogue (pid ${pid})`);
      const created = dup.barcodeCreated(digits);
      if (created)
        add(
          "barcode",
          `Barcode ${digits} was already created by import #${created.importId} (pid ${created.pid})`,
        );
    }
  }

  // Numbers
  const money = (field: "price" | "msrp" | "cost_each"): number | null => {
    const v = values[field];
    if (v == null || v.trim() === "") return null;
    const n = parseNumber(v);
    const label = IMPORT_FIELD_BY_KEY[field].label;
    if (n === null) {
      add(
        field,
        `${label} "${v}" is not a number${/\d,\d{1,2}$/.test(v) ? " (use a dot for decimals)" : ""}`,
      );
      return null;
    }
    if (n < 0) add(field, `${label} cannot be negative`);
    else if (decimals(v) > 2) add(field, `${label} has more than 2 decimals`);
    else if (n >= 10_000_000_000) add(field, `${label} is too large`);
    else return n;
    return null;
  };
  const price = money("price");
  const msrp = money("msrp");
  const cost = money("cost_each");
  if (price !== null) out.price = price;
  out.regularPrice = msrp;
  out.costPrice = cost;
  if (price !== null && price === 0) add("price", "Price is 0", "warning");
  if (price !== null && cost !== null && price < cost)
    add("price", `Price ${price.toFixed(2)} is below the cost ${cost.toFixed(2)}`, "warning");
  if (price !== null && msrp !== null && msrp < price)
    add("msrp", `MSRP ${msrp.toFixed(2)} is below the price ${price.toFixed(2)}`, "warning");

  const whole = (field: "qty_per_unit" | "case_qty"): number => {
    const v = values[field];
    if (v == null || v.trim() === "") return 1;
    const n = parseNumber(v);
    if (n === null || !Number.isInteger(n) || n < 1 || n > 1_000_000) {
      add(field, `${IMPORT_FIELD_BY_KEY[field].label} must be a whole number of at least 1`);
      return 1;
    }
    return n;
  };
  out.moq = whole("qty_per_unit");
  out.caseQty = whole("case_qty");

  for (const field of ["weight", "length", "width", "height"] as const) {
    const v = values[field];
    out[field] = null;
    if (v == null || v.trim() === "") continue;
    const n = parseNumber(v);
    const label = IMPORT_FIELD_BY_KEY[field].label;
    if (n === null) add(field, `${label} "${v}" is not a number`);
    else if (n <= 0) add(field, `${label} must be more than 0`);
    else if (n >= 100_000_000) add(field, `${label} is too large`);
    else {
      if (decimals(v) > 2) add(field, `${label} will be rounded to 2 decimals`, "warning");
      out[field] = Math.round(n * 100) / 100;
    }
  }

  // Field options
  const option = (field: "company" | "supplier" | "tax_cat" | "size_cat" | "ship_restrictions") => {
    const v = values[field]?.trim();
    if (!v) return null;
    const found = lookups[field].get(v.toLowerCase());
    if (found === undefined) {
      add(field, `${IMPORT_FIELD_BY_KEY[field].label} "${v}" is not one of the field options`);
      return null;
    }
    return found;
  };
  const company = option("company");
  out.brandId = company === null ? null : Number(company);
  const supplier = option("supplier");
  out.vendorId = supplier === null ? null : Number(supplier);
  out.taxCode = option("tax_cat") ?? "0";
  out.sizeCat = option("size_cat");
  out.shippingRestrictions = option("ship_restrictions") ?? "0";
  out.categories = [];
  const cats = values.categories?.trim();
  if (cats) {
    const unknown: string[] = [];
    for (const part of cats
      .split(/[,;|]/)
      .map((p) => p.trim())
      .filter(Boolean)) {
      const found = lookups.categories.get(part.toLowerCase());
      if (found === undefined) unknown.push(part);
      else if (!out.categories.includes(Number(found))) out.categories.push(Number(found));
    }
    if (unknown.length)
      add(
        "categories",
        `Unknown categor${unknown.length > 1 ? "ies" : "y"}: ${unknown.map((u) => `"${u}"`).join(", ")}`,
      );
  }

  const blocked = findings.some((f) => f.severity === "error");
  return { findings, product: blocked ? null : (out as NormalisedProduct) };
}

// ---------------------------------------------------------------------------------------------
// Column mapping

const normaliseHeader = (h: string) =>
  h
    .trim()
    .toLowerCase()
    .replace(/[_\s]+/g, " ")
    .replace(/\s*[:.]$/, "");

/** The file's header row as a key for saved mappings. */
export function headerKey(headers: string[]): string {
  return headers.map((h) => h.trim().toLowerCase()).join("\t");
}

/**
 * Matches headers to fields: a saved mapping for the same headers first, then exact field names
 * and labels, then synonyms. Each field is given to one column at most.
 */
export function autoMap(
  headers: string[],
  saved: Record<string, ImportFieldKey | null> | null,
): { mapping: Record<string, ImportFieldKey | null>; source: Record<string, string> } {
  const mapping: Record<string, ImportFieldKey | null> = {};
  const source: Record<string, string> = {};
  const used = new Set<ImportFieldKey>();
  if (saved) {
    for (const h of headers) {
      if (Object.hasOwn(saved, h)) {
        const f = saved[h] ?? null;
        if (f && used.has(f)) continue;
        mapping[h] = f;
        source[h] = "saved";
        if (f) used.add(f);
      }
    }
  }
  const pass = (match: (h: string) => ImportFieldKey | undefined, name: string) => {
    for (const h of headers) {
      if (Object.hasOwn(mapping, h)) continue;
      const f = match(normaliseHeader(h));
      if (f && !used.has(f)) {
        mapping[h] = f;
        source[h] = name;
        used.add(f);
      }
    }
  };
  pass(
    (n) => IMPORT_FIELDS.find((f) => f.key === n.replace(/ /g, "_") || f.label.toLowerCase() === n)?.key,
    "exact",
  );
  pass((n) => IMPORT_FIELDS.find((f) => f.synonyms.includes(n))?.key, "synonym");
  for (const h of headers) {
    if (!Object.hasOwn(mapping, h)) {
      mapping[h] = null;
      source[h] = "none";
    }
  }
  return { mapping, source };
}
