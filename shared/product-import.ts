// Create Products (/import): the product fields a supplier's columns map to, the import's and its
// rows' shapes, and the request schemas. Shared by the page and the server.
import { z } from "zod";
import { idSchema, int, text } from "./input.ts";

/** Largest file accepted (bytes) and most data rows read from it. */
export const IMPORT_MAX_BYTES = 20 * 1024 * 1024;
export const IMPORT_MAX_ROWS = 50_000;
/** Created products get pids from here up (the shop system's own pids stay below). */
export const CREATED_PID_START = 2_000_000_000;

export type FieldKind = "text" | "money" | "decimal" | "int" | "option" | "options" | "barcode";

export interface ImportField {
  key: ImportFieldKey;
  label: string;
  kind: FieldKind;
  required?: boolean;
  /** Longest text accepted */
  max?: number;
  /** Filled from the import template when the file leaves it empty */
  fromTemplate?: boolean;
  /** Header names (lower case) that map to this field without asking */
  synonyms: readonly string[];
}

export const IMPORT_FIELD_KEYS = [
  "title",
  "sku",
  "barcode",
  "company",
  "supplier",
  "line",
  "description",
  "price",
  "msrp",
  "cost_each",
  "qty_per_unit",
  "case_qty",
  "hts_code",
  "weight",
  "length",
  "width",
  "height",
  "tax_cat",
  "size_cat",
  "ship_restrictions",
  "categories",
] as const;
export type ImportFieldKey = (typeof IMPORT_FIELD_KEYS)[number];

/** The product fields, in the grid's column order. */
export const IMPORT_FIELDS: readonly ImportField[] = [
  {
    key: "title",
    label: "Title",
    kind: "text",
    required: true,
    max: 255,
    synonyms: ["title", "name", "product name", "product title", "item name", "product", "item description"],
  },
  {
    key: "sku",
    label: "SKU",
    kind: "text",
    required: true,
    max: 64,
    synonyms: [
      "sku",
      "item #",
      "item no",
      "item number",
      "item",
      "part number",
      "part #",
      "style",
      "mpn",
      "article",
    ],
  },
  {
    key: "barcode",
    label: "Barcode",
    kind: "barcode",
    max: 14,
    synonyms: ["barcode", "upc", "ean", "gtin", "upc code", "ean code", "upc/ean", "bar code"],
  },
  {
    key: "company",
    label: "Company",
    kind: "option",
    required: true,
    synonyms: ["company", "brand", "brand name", "manufacturer", "brand_id"],
  },
  {
    key: "supplier",
    label: "Supplier",
    kind: "option",
    fromTemplate: true,
    synonyms: ["supplier", "vendor", "vendor name", "supplier name", "vendor_id", "distributor"],
  },
  { key: "line", label: "Line", kind: "text", max: 100, synonyms: ["line", "collection", "series", "range"] },
  {
    key: "description",
    label: "Description",
    kind: "text",
    max: 10_000,
    fromTemplate: true,
    synonyms: ["description", "long description", "details", "product description", "body", "body html"],
  },
  {
    key: "price",
    label: "Price",
    kind: "money",
    required: true,
    synonyms: ["price", "retail", "retail price", "sell price", "selling price", "our price", "sale price"],
  },
  {
    key: "msrp",
    label: "MSRP",
    kind: "money",
    fromTemplate: true,
    synonyms: ["msrp", "rrp", "srp", "list price", "suggested retail", "regular price", "regular_price"],
  },
  {
    key: "cost_each",
    label: "Cost Each",
    kind: "money",
    fromTemplate: true,
    synonyms: [
      "cost",
      "cost each",
      "wholesale",
      "wholesale price",
      "unit cost",
      "cost price",
      "cost_price",
      "net price",
    ],
  },
  {
    key: "qty_per_unit",
    label: "Quantity per Unit",
    kind: "int",
    fromTemplate: true,
    synonyms: ["qty per unit", "quantity per unit", "moq", "min order", "minimum order", "min qty", "pack"],
  },
  {
    key: "case_qty",
    label: "Case Quantity",
    kind: "int",
    fromTemplate: true,
    synonyms: ["case qty", "case quantity", "case pack", "inner", "carton qty", "case"],
  },
  {
    key: "hts_code",
    label: "HTS Code",
    kind: "text",
    max: 20,
    fromTemplate: true,
    synonyms: ["hts", "hts code", "tariff code", "harmonized code", "harmonized_tariff_code", "hs code"],
  },
  {
    key: "weight",
    label: "Weight (oz)",
    kind: "decimal",
    fromTemplate: true,
    synonyms: ["weight", "weight (oz)", "weight oz", "wt"],
  },
  {
    key: "length",
    label: "Length (in)",
    kind: "decimal",
    fromTemplate: true,
    synonyms: ["length", "length (in)", "l"],
  },
  {
    key: "width",
    label: "Width (in)",
    kind: "decimal",
    fromTemplate: true,
    synonyms: ["width", "width (in)", "w"],
  },
  {
    key: "height",
    label: "Height (in)",
    kind: "decimal",
    fromTemplate: true,
    synonyms: ["height", "height (in)", "h", "depth"],
  },
  {
    key: "tax_cat",
    label: "Tax Category",
    kind: "option",
    fromTemplate: true,
    synonyms: ["tax category", "tax cat", "tax code", "tax_code", "tax class"],
  },
  {
    key: "size_cat",
    label: "Size Category",
    kind: "option",
    fromTemplate: true,
    synonyms: ["size", "size category", "size cat", "size_cat"],
  },
  {
    key: "ship_restrictions",
    label: "Shipping Restrictions",
    kind: "option",
    fromTemplate: true,
    synonyms: ["shipping restriction", "shipping restrictions", "ship restrictions", "shipping"],
  },
  {
    key: "categories",
    label: "Categories",
    kind: "options",
    fromTemplate: true,
    synonyms: ["categories", "category", "theme", "themes", "product category"],
  },
];

export const IMPORT_FIELD_BY_KEY: Readonly<Record<ImportFieldKey, ImportField>> = Object.fromEntries(
  IMPORT_FIELDS.map((f) => [f.key, f]),
) as Record<ImportFieldKey, ImportField>;

export const ImportFieldKeySchema = z.enum(IMPORT_FIELD_KEYS);

export type Severity = "error" | "warning";

/** One rule's finding on one cell: the row, the column (product field), the value and a plain message. */
export interface Finding {
  field: ImportFieldKey | "row";
  value: string | null;
  message: string;
  severity: Severity;
  /** Which check found it: "rules", or the name of a validation step that plugged in */
  source: string;
}

export const IMPORT_STATUSES = ["draft", "checked", "submitted", "exported"] as const;
export type ImportStatus = (typeof IMPORT_STATUSES)[number];

export type ImageRef = { source: "library" | "upload"; id: number };

export interface ImportRow {
  row_id: number;
  /** Effective values by field (file, template or edit), as text; null when empty */
  values: Partial<Record<ImportFieldKey, string | null>>;
  from_template: ImportFieldKey[];
  edited: ImportFieldKey[];
  findings: Finding[];
  error_count: number;
  warning_count: number;
  images: (ImageRef & { url: string; thumbnail_url: string; filename: string })[];
  created_pid: number | null;
}

export interface ImportCounts {
  rows: number;
  error_rows: number;
  warning_rows: number;
  valid_rows: number;
  created: number;
}

export interface ProductImport {
  id: number;
  status: ImportStatus;
  owner: { id: number; username: string };
  filename: string;
  file_type: "csv" | "xlsx";
  file_size: number;
  encoding: string | null;
  delimiter: string | null;
  sheet: string | null;
  sheets: string[];
  /** The file's header row */
  columns: string[];
  /** The file's first rows as read (cells in header order), for the mapping's preview */
  preview: string[][];
  company: string | null;
  product_type: string | null;
  template_id: number | null;
  /** header → product field, null for a column not imported */
  mapping: Record<string, ImportFieldKey | null>;
  /** How each header was matched: "saved", "template", "exact", "synonym", "user" or "none" */
  mapping_source: Record<string, string>;
  counts: ImportCounts;
  summary: DryRunSummary | null;
  validation: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
  submitted_at: Date | null;
  exported_at: Date | null;
}

export interface ImportListItem {
  id: number;
  status: ImportStatus;
  owner: { id: number; username: string };
  filename: string;
  company: string | null;
  company_label: string | null;
  product_type: string | null;
  counts: ImportCounts;
  created_at: Date;
  updated_at: Date;
  submitted_at: Date | null;
}

export interface DryRunSummary {
  /** Rows that would become products */
  would_create: number;
  blocked: number;
  with_warnings: number;
  deleted: number;
  /** How many rows each error blocks, most first */
  blocked_by: { field: string; message: string; rows: number }[];
  warnings_by: { field: string; message: string; rows: number }[];
  /** Rows that have at least one image */
  with_images: number;
  /** Set after a submit: the pids given */
  first_pid?: number | null;
  last_pid?: number | null;
  /** Set once the rows a submit left go on in a new draft import (productImport.continueWithRowsLeft) */
  continued_in?: number;
  at: Date;
}

/** How far a submit has got (productImport.progress), for the page's progress bar. */
export interface ImportProgress {
  step: "submit";
  /** checking: every row checked again; creating: products written; exporting: EXPORT_DIR; done; failed */
  phase: "checking" | "creating" | "exporting" | "done" | "failed";
  /** Rows handled so far in this phase, of `total` */
  done: number;
  total: number;
  at: Date;
}

export interface CreatedProductItem {
  pid: number;
  import_id: number;
  title: string;
  sku: string;
  barcode: string | null;
  price: number;
  created_at: Date;
  shop_pid: number | null;
  matched_at: Date | null;
}

// ---------------------------------------------------------------------------------------------
// Requests

export const ImportIdSchema = idSchema;

const optionalText = (max: number) =>
  z.preprocess(
    (v) => (v === "" || v === undefined ? null : typeof v === "number" ? String(v) : v),
    text({ max }).nullable(),
  );

export const MappingSchema = z
  .record(z.string().max(500), ImportFieldKeySchema.nullable())
  .refine((m) => Object.keys(m).length <= 500, "at most 500 columns");

export const ImportSettingsSchema = z.object({
  company: optionalText(20).optional(),
  product_type: optionalText(200).optional(),
  /** A template to fill from (otherwise the one for company × product type, if any); null: none */
  template_id: z.preprocess((v) => (v === "" ? null : v), idSchema.nullable()).optional(),
  mapping: MappingSchema.optional(),
});
export type ImportSettings = z.infer<typeof ImportSettingsSchema>;

export const RowsQuerySchema = z.object({
  page: int({ min: 1, max: 100_000 }).default(1),
  pageSize: int({ min: 1, max: 1000 }).default(100),
  errors_only: z
    .preprocess(
      (v) => (v === "true" || v === "1" ? true : v === "false" || v === "0" ? false : v),
      z.boolean(),
    )
    .default(false),
  /** rows whose values contain this text (any field) */
  q: text({ max: 200 }).optional(),
});

const cellValue = z.preprocess(
  (v) => (typeof v === "number" ? String(v) : v),
  z.string().max(10_000, { error: "at most 10000 characters" }).nullable(),
);

export const ImageRefSchema = z.object({ source: z.enum(["library", "upload"]), id: idSchema });

export const RowPatchSchema = z.object({
  values: z.partialRecord(ImportFieldKeySchema, cellValue).optional(),
  images: z.array(ImageRefSchema).max(20).optional(),
});
export type RowPatch = z.infer<typeof RowPatchSchema>;

export const BulkEditSchema = z.discriminatedUnion("action", [
  z.object({ action: z.literal("fill_down"), field: ImportFieldKeySchema, row_id: idSchema }),
  z.object({
    action: z.literal("replace"),
    field: ImportFieldKeySchema.nullable(),
    find: z.string().min(1, "find: enter the text to find").max(500),
    replace: z.string().max(500),
    match_case: z.boolean().default(false),
  }),
  z.object({ action: z.literal("delete_rows"), row_ids: z.array(idSchema).min(1).max(50_000) }),
]);
export type BulkEdit = z.infer<typeof BulkEditSchema>;

export const ListImportsSchema = z.object({
  page: int({ min: 1, max: 100_000 }).default(1),
  pageSize: int({ min: 1, max: 200 }).default(25),
});

/** Spreadsheets run a cell that starts with one of these as a formula. */
export function neutraliseFormula(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}
