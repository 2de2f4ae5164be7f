// Import templates, the field options every content screen reads, and the product search that
// prefills a template (spec sections 2 "Import Templates screen", 3, 7 "Import templates").
import {
  type CategoryOption,
  type DateRange,
  DEFAULT_SHIP_RESTRICTION,
  DEFAULT_TAX_CAT,
  type FieldOption,
  type FieldOptions,
  PRODUCT_SEARCH_LIMIT,
  type ProductSearchInputSchema,
  type ProductSearchResult,
  TAX_CAT_FALLBACK_LABEL,
  type Template,
  type TemplateData,
} from "../../../shared/templates.ts";
import type { Database } from "../../db/database.ts";
import { Prisma } from "../../db/generated/client.ts";
import { badRequest, conflict, notFound } from "../../errors.ts";

type ProductSearch = import("zod").output<typeof ProductSearchInputSchema>;

const num = (v: Prisma.Decimal | number | null | undefined): number | null => (v == null ? null : Number(v));

/** A unique-constraint violation, as Prisma reports it over either driver adapter. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string }; message?: string };
  return e?.code === "P2002" || e?.cause?.code === "23505" || /Unique constraint/i.test(e?.message ?? "");
}

/** Companies are brand ids sent as text; a value that names no brand is refused. */
export async function assertCompanyExists(prisma: Prisma.TransactionClient, company: string): Promise<void> {
  const id = /^\d{1,9}$/.test(company) ? Number(company) : null;
  const found = id === null ? null : await prisma.brand.findUnique({ where: { id }, select: { id: true } });
  if (!found) throw badRequest(`Unknown company "${company}"`, "company");
}

// ---------------------------------------------------------------------------------------------
// Field options

export async function getFieldOptions(db: Database): Promise<FieldOptions> {
  const [brands, vendors, categories, restrictions, taxes, sizes] = await Promise.all([
    db.prisma.brand.findMany({ orderBy: [{ name: "asc" }, { id: "asc" }] }),
    db.prisma.vendor.findMany({
      orderBy: [{ name: "asc" }, { id: "asc" }],
      select: { id: true, name: true },
    }),
    db.prisma.category.findMany({ orderBy: [{ name: "asc" }, { id: "asc" }] }),
    db.prisma.shippingRestriction.findMany({ orderBy: { code: "asc" } }),
    db.prisma.taxCategory.findMany({ orderBy: { code: "asc" } }),
    db.prisma.size.findMany({ orderBy: { code: "asc" } }),
  ]);
  const byCode = (a: FieldOption, b: FieldOption) =>
    a.value.localeCompare(b.value, undefined, { numeric: true });
  const taxCategories: FieldOption[] = taxes.map((t) => ({
    value: t.code,
    label: t.code === "0" && !t.label.trim() ? TAX_CAT_FALLBACK_LABEL : t.label,
  }));
  // Spec section 3: tax category '0' is the default and reads 'Not Specifically Set' when unnamed.
  if (!taxCategories.some((t) => t.value === "0"))
    taxCategories.unshift({ value: "0", label: TAX_CAT_FALLBACK_LABEL });
  return {
    companies: brands.map((b) => ({ value: String(b.id), label: b.name })),
    suppliers: vendors.map((v) => ({ value: String(v.id), label: v.name })),
    categories: categories.map(
      (c): CategoryOption => ({ value: String(c.id), label: c.name, type: c.type, level: c.level }),
    ),
    shippingRestrictions: restrictions.map((r) => ({ value: r.code, label: r.label })).sort(byCode),
    taxCategories: taxCategories.sort(byCode),
    sizes: sizes.map((s) => ({ value: s.code, label: s.label })),
  };
}

// ---------------------------------------------------------------------------------------------
// Templates

type TemplateRow = Awaited<ReturnType<Database["prisma"]["importTemplate"]["findFirstOrThrow"]>>;

function toTemplate(r: TemplateRow): Template {
  return {
    id: r.id,
    company: r.company,
    product_type: r.productType,
    supplier: r.supplier,
    msrp: num(r.msrp),
    cost_each: num(r.costEach),
    qty_per_unit: r.qtyPerUnit,
    case_qty: r.caseQty,
    hts_code: r.htsCode,
    description: r.description,
    weight: num(r.weight),
    length: num(r.length),
    width: num(r.width),
    height: num(r.height),
    tax_cat: r.taxCat,
    size_cat: r.sizeCat,
    categories: r.categories,
    ship_restrictions: r.shipRestrictions,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
}

/** Every column from the input; an omitted field is empty (or its spec section 9 default). */
function toColumns(input: TemplateData) {
  const ship = (input.ship_restrictions ?? []).filter(Boolean);
  return {
    company: input.company,
    productType: input.product_type,
    supplier: input.supplier ?? null,
    msrp: input.msrp ?? null,
    costEach: input.cost_each ?? null,
    qtyPerUnit: input.qty_per_unit ?? null,
    caseQty: input.case_qty ?? null,
    htsCode: input.hts_code ?? null,
    description: input.description ?? null,
    weight: input.weight ?? null,
    length: input.length ?? null,
    width: input.width ?? null,
    height: input.height ?? null,
    taxCat: input.tax_cat ?? DEFAULT_TAX_CAT,
    sizeCat: input.size_cat ?? null,
    categories: [...new Set((input.categories ?? []).filter(Boolean))],
    shipRestrictions: ship.length ? ship : [DEFAULT_SHIP_RESTRICTION],
  };
}

function duplicateMessage(company: string, productType: string): string {
  return `A template for company ${company} and product type "${productType}" already exists`;
}

async function assertReferences(db: Database, input: TemplateData, previous?: TemplateRow) {
  if (!previous || previous.company !== input.company) await assertCompanyExists(db.prisma, input.company);
  if (input.supplier != null && input.supplier !== previous?.supplier) {
    const v = await db.prisma.vendor.findUnique({ where: { id: input.supplier }, select: { id: true } });
    if (!v) throw badRequest(`Unknown supplier ${input.supplier}`, "supplier");
  }
  if ((input.ship_restrictions ?? []).length > 1)
    throw badRequest("Only one shipping restriction may be selected", "ship_restrictions");
}

export async function listTemplates(db: Database): Promise<Template[]> {
  const rows = await db.prisma.importTemplate.findMany({
    orderBy: [{ company: "asc" }, { productType: "asc" }],
  });
  return rows.map(toTemplate);
}

export async function getTemplate(db: Database, id: number): Promise<Template> {
  const row = await db.prisma.importTemplate.findUnique({ where: { id } });
  if (!row) throw notFound(`Template ${id} not found`);
  return toTemplate(row);
}

async function assertUnique(db: Database, input: TemplateData, exceptId?: number) {
  const clash = await db.prisma.importTemplate.findFirst({
    where: { company: input.company, productType: input.product_type, NOT: exceptId ? { id: exceptId } : {} },
    select: { id: true },
  });
  if (clash) throw conflict(duplicateMessage(input.company, input.product_type));
}

export async function createTemplate(db: Database, input: TemplateData): Promise<Template> {
  await assertReferences(db, input);
  await assertUnique(db, input);
  try {
    return toTemplate(await db.prisma.importTemplate.create({ data: toColumns(input) }));
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(duplicateMessage(input.company, input.product_type));
    throw err;
  }
}

/** Replaces every field (an omitted one becomes empty), as the form sends the whole template. */
export async function updateTemplate(db: Database, id: number, input: TemplateData): Promise<Template> {
  const previous = await db.prisma.importTemplate.findUnique({ where: { id } });
  if (!previous) throw notFound(`Template ${id} not found`);
  await assertReferences(db, input, previous);
  await assertUnique(db, input, id);
  try {
    return toTemplate(await db.prisma.importTemplate.update({ where: { id }, data: toColumns(input) }));
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(duplicateMessage(input.company, input.product_type));
    throw err;
  }
}

export async function deleteTemplate(db: Database, id: number): Promise<{ success: true; id: number }> {
  const { count } = await db.prisma.importTemplate.deleteMany({ where: { id } });
  if (count === 0) throw notFound(`Template ${id} not found`);
  return { success: true, id };
}

// ---------------------------------------------------------------------------------------------
// Product search

const INTERVAL: Record<Exclude<DateRange, "none">, string> = {
  "1week": "7 days",
  "1month": "1 month",
  "2months": "2 months",
  "3months": "3 months",
  "6months": "6 months",
  "1year": "1 year",
};

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * Products whose title, SKU or barcode contains the text (or whose pid is it), best matches first:
 * exact pid/SKU/barcode, exact title, title starting with it, a title word starting with it, then
 * any other match; ties go to the better seller. '*' (or no text) means any product, narrowed by
 * the company and date filters. At most PRODUCT_SEARCH_LIMIT rows.
 */
export async function searchProducts(db: Database, input: ProductSearch): Promise<ProductSearchResult[]> {
  const text = input.q && input.q !== "*" ? input.q : null;
  const conditions: Prisma.Sql[] = [];
  let lowered = Prisma.empty;
  let order = Prisma.sql`ORDER BY p.first_received DESC NULLS LAST, p.pid DESC`;
  if (text) {
    const escaped = likeEscape(text);
    const pid = /^\d{1,9}$/.test(text) ? Number(text) : null;
    // The match uses ILIKE on the columns themselves, which the trigram indexes serve.
    conditions.push(Prisma.sql`(p.title ILIKE ${`%${escaped}%`} OR p.sku ILIKE ${`%${escaped}%`}
      OR p.barcode ILIKE ${`%${escaped}%`} ${pid === null ? Prisma.empty : Prisma.sql`OR p.pid = ${pid}`})`);
    // The rank compares lower-cased copies made once per row (OFFSET 0 keeps the planner from
    // inlining, and so repeating, the lower() calls), with plain LIKE.
    lowered = Prisma.sql`CROSS JOIN LATERAL (SELECT lower(p.title) AS title, lower(coalesce(p.sku, '')) AS sku,
      lower(coalesce(p.barcode, '')) AS barcode OFFSET 0) l`;
    const rank = Prisma.sql`CASE
      WHEN ${pid === null ? Prisma.sql`false` : Prisma.sql`p.pid = ${pid}`}
        OR l.sku = lower(${text}) OR l.barcode = lower(${text}) THEN 0
      WHEN l.title = lower(${text}) THEN 1
      WHEN l.title LIKE lower(${`${escaped}%`}) THEN 2
      WHEN l.title LIKE lower(${`% ${escaped}%`}) THEN 3
      WHEN l.sku LIKE lower(${`${escaped}%`}) OR l.barcode LIKE lower(${`${escaped}%`}) THEN 4
      ELSE 5 END`;
    order = Prisma.sql`ORDER BY ${rank}, coalesce(m.total_sold, 0) DESC, p.pid`;
  }
  if (input.company) conditions.push(Prisma.sql`p.brand_id = ${Number(input.company)}`);
  if (input.dateRange && input.dateRange !== "none") {
    conditions.push(
      Prisma.sql`p.first_received >= (current_date - ${INTERVAL[input.dateRange]}::interval)::date`,
    );
  }
  const where = conditions.length ? Prisma.sql`WHERE ${Prisma.join(conditions, " AND ")}` : Prisma.empty;

  // Two statements: the ranked ids, then their rows as one JSON text. Each plans cheaply and
  // predictably (one statement with a per-row categories subquery made PostgreSQL spend 250 ms on
  // JIT compilation on a freshly loaded table), and one JSON value parses far faster than
  // thousands of rows of columns.
  const hits = await db.prisma.$queryRaw<{ pid: number }[]>`
    SELECT p.pid FROM products p LEFT JOIN product_metrics m ON m.pid = p.pid ${lowered}
    ${where} ${order} LIMIT ${PRODUCT_SEARCH_LIMIT}`;
  if (hits.length === 0) return [];
  const pids = hits.map((h) => h.pid);
  const [{ json }] = (await db.prisma.$queryRaw<{ json: string }[]>`
    SELECT coalesce(json_agg(r), '[]')::text AS json FROM (
      SELECT p.pid, p.title, b.name AS brand, p.brand_id, p.line, p.price::float8 AS price,
        coalesce(m.total_sold, 0) AS total_sold,
        to_char(p.first_received, 'YYYY-MM-DD') AS first_received,
        to_char(m.date_last_sold, 'YYYY-MM-DD') AS date_last_sold,
        p.vendor_id AS supplier, p.regular_price::float8 AS regular_price, p.cost_price::float8 AS cost_price,
        p.moq, p.case_qty, p.harmonized_tariff_code, p.description,
        p.weight::float8 AS weight, p.length::float8 AS length, p.width::float8 AS width,
        p.height::float8 AS height, p.tax_code, p.size_cat, p.shipping_restrictions,
        coalesce(c.ids, '{}') AS categories
      FROM products p
      LEFT JOIN brands b ON b.id = p.brand_id
      LEFT JOIN product_metrics m ON m.pid = p.pid
      LEFT JOIN (
        SELECT pid, array_agg(category_id::text ORDER BY category_id) AS ids
        FROM product_categories WHERE pid = ANY(${pids}::int[]) GROUP BY pid
      ) c ON c.pid = p.pid
      WHERE p.pid = ANY(${pids}::int[])
    ) r`) as [{ json: string }];
  const byPid = new Map((JSON.parse(json) as ProductSearchResult[]).map((r) => [r.pid, r]));
  return pids.flatMap((pid) => byPid.get(pid) ?? []);
}

/** The product's categories as field-option entries (spec section 7: entries with a value). */
export async function getProductCategories(db: Database, pid: number): Promise<CategoryOption[]> {
  const product = await db.prisma.product.findUnique({ where: { pid }, select: { pid: true } });
  if (!product) throw notFound(`Product ${pid} not found`);
  const rows = await db.prisma.$queryRaw<{ id: number; name: string; type: number; level: number }[]>`
    SELECT c.id, c.name, c.type, c.level FROM product_categories pc
    JOIN categories c ON c.id = pc.category_id
    WHERE pc.pid = ${pid} ORDER BY c.level, c.name, c.id`;
  return rows.map((c) => ({ value: String(c.id), label: c.name, type: c.type, level: c.level }));
}
