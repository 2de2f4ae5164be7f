// The imported tables: where each comes from (docs/data-format.md), its columns with the live
// table's SQL types (staging uses the same types, so COPY itself validates and rounds every value),
// its key and the references the importer checks.

import { PRODUCT_KINDS } from "../../shared/metrics.ts";

export type ColumnType = "int" | "decimal" | "bool" | "date" | "timestamp" | "text";

export interface ColumnDef {
  /** Header name in the CSV file */
  name: string;
  /** Column in the live table, when it differs */
  target?: string;
  type: ColumnType;
  /** SQL type of the live column */
  sql: string;
  required?: boolean;
  /** Unique in the live table too: staging enforces it, so COPY names the line */
  unique?: boolean;
  /** SQL literal used when the field is empty */
  default?: string;
}

export interface ReferenceDef {
  column: string;
  /** Imported table (by file name) and its key column (CSV name) */
  table: string;
  key: string;
}

export interface TableDef {
  /** Live table */
  table: string;
  file: string;
  /** Key columns (CSV names) */
  key: string[];
  columns: ColumnDef[];
  references: ReferenceDef[];
}

const int = (name: string, more: Partial<ColumnDef> = {}): ColumnDef => ({
  name,
  type: "int",
  sql: "integer",
  ...more,
});
const text = (name: string, more: Partial<ColumnDef> = {}): ColumnDef => ({
  name,
  type: "text",
  sql: "text",
  ...more,
});
const money = (name: string, more: Partial<ColumnDef> = {}): ColumnDef => ({
  name,
  type: "decimal",
  sql: "numeric(12,2)",
  ...more,
});
const cost = (name: string, more: Partial<ColumnDef> = {}): ColumnDef => ({
  name,
  type: "decimal",
  sql: "numeric(12,4)",
  ...more,
});
const measure = (name: string): ColumnDef => ({ name, type: "decimal", sql: "numeric(10,2)" });
const bool = (name: string, dflt: boolean): ColumnDef => ({
  name,
  type: "bool",
  sql: "boolean",
  default: String(dflt),
});
const date = (name: string, more: Partial<ColumnDef> = {}): ColumnDef => ({
  name,
  type: "date",
  sql: "date",
  ...more,
});
const timestamp = (name: string, more: Partial<ColumnDef> = {}): ColumnDef => ({
  name,
  type: "timestamp",
  sql: "timestamptz(3)",
  ...more,
});
const lookup = (table: string, file: string): TableDef => ({
  table,
  file,
  key: ["code"],
  columns: [text("code", { required: true }), text("label", { required: true })],
  references: [],
});

/** In dependency order: a table comes after every table it references. */
export const IMPORTED_TABLES: readonly TableDef[] = [
  {
    table: "brands",
    file: "brands.csv",
    key: ["brand_id"],
    columns: [int("brand_id", { target: "id", required: true }), text("name", { required: true })],
    references: [],
  },
  {
    table: "vendors",
    file: "vendors.csv",
    key: ["vendor_id"],
    columns: [
      int("vendor_id", { target: "id", required: true }),
      text("name", { required: true, unique: true }),
      text("email"),
      text("phone"),
      int("lead_time_days"),
    ],
    references: [],
  },
  {
    table: "categories",
    file: "categories.csv",
    key: ["category_id"],
    columns: [
      int("category_id", { target: "id", required: true }),
      int("parent_id"),
      text("name", { required: true }),
      int("type", { required: true }),
      int("level", { required: true }),
    ],
    references: [{ column: "parent_id", table: "categories.csv", key: "category_id" }],
  },
  lookup("tax_categories", "tax_categories.csv"),
  lookup("sizes", "sizes.csv"),
  lookup("shipping_restrictions", "shipping_restrictions.csv"),
  {
    table: "products",
    file: "products.csv",
    key: ["pid"],
    columns: [
      int("pid", { required: true }),
      text("title", { required: true }),
      text("sku"),
      text("barcode"),
      int("brand_id"),
      int("vendor_id"),
      text("line"),
      text("description"),
      money("price", { required: true }),
      money("regular_price"),
      cost("cost_price"),
      int("stock_quantity", { required: true }),
      int("moq", { default: "1" }),
      int("case_qty", { default: "1" }),
      text("harmonized_tariff_code"),
      measure("weight"),
      measure("length"),
      measure("width"),
      measure("height"),
      text("tax_code", { default: "'0'" }),
      text("size_cat"),
      text("shipping_restrictions", { default: "'0'" }),
      bool("visible", true),
      bool("replenishable", true),
      bool("discontinued", false),
      timestamp("created_at", { required: true }),
      date("first_received"),
      text("image_url"),
      text("kind", { default: "'merchandise'" }),
    ],
    references: [
      { column: "brand_id", table: "brands.csv", key: "brand_id" },
      { column: "vendor_id", table: "vendors.csv", key: "vendor_id" },
      { column: "tax_code", table: "tax_categories.csv", key: "code" },
      { column: "size_cat", table: "sizes.csv", key: "code" },
      { column: "shipping_restrictions", table: "shipping_restrictions.csv", key: "code" },
    ],
  },
  {
    table: "product_categories",
    file: "product_categories.csv",
    key: ["pid", "category_id"],
    columns: [int("pid", { required: true }), int("category_id", { required: true })],
    references: [
      { column: "pid", table: "products.csv", key: "pid" },
      { column: "category_id", table: "categories.csv", key: "category_id" },
    ],
  },
  {
    table: "order_lines",
    file: "order_lines.csv",
    key: ["line_id"],
    columns: [
      int("line_id", { target: "id", required: true }),
      text("order_number", { required: true }),
      int("pid", { required: true }),
      timestamp("order_date", { required: true }),
      int("quantity", { required: true }),
      money("price", { required: true }),
      money("discount", { default: "0" }),
      text("status", { required: true }),
    ],
    references: [{ column: "pid", table: "products.csv", key: "pid" }],
  },
  {
    table: "purchase_orders",
    file: "purchase_orders.csv",
    key: ["po_id"],
    columns: [
      int("po_id", { target: "id", required: true }),
      int("vendor_id", { required: true }),
      text("status", { required: true }),
      date("date_ordered", { required: true }),
      date("date_expected"),
      text("reference"),
    ],
    references: [{ column: "vendor_id", table: "vendors.csv", key: "vendor_id" }],
  },
  {
    table: "po_lines",
    file: "po_lines.csv",
    key: ["po_line_id"],
    columns: [
      int("po_line_id", { target: "id", required: true }),
      int("po_id", { required: true }),
      int("pid", { required: true }),
      int("ordered_qty", { required: true }),
      cost("cost_each", { required: true }),
    ],
    references: [
      { column: "po_id", table: "purchase_orders.csv", key: "po_id" },
      { column: "pid", table: "products.csv", key: "pid" },
    ],
  },
  {
    table: "receivings",
    file: "receivings.csv",
    key: ["receiving_id"],
    columns: [
      int("receiving_id", { target: "id", required: true }),
      int("po_line_id", { required: true }),
      date("received_date", { required: true }),
      int("qty", { required: true }),
      cost("cost_each"),
    ],
    references: [{ column: "po_line_id", table: "po_lines.csv", key: "po_line_id" }],
  },
];

/** Allowed values of text columns that are enumerations. */
export const ENUM_COLUMNS: Record<string, Record<string, readonly string[]>> = {
  "products.csv": { kind: PRODUCT_KINDS },
  "order_lines.csv": { status: ["completed", "cancelled", "returned"] },
  "purchase_orders.csv": { status: ["draft", "ordered", "partial", "received", "cancelled"] },
};

export const targetOf = (c: ColumnDef) => c.target ?? c.name;
