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
import type { Database, SqlConnection } from "../../db/database.ts";
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

interface OptionLists {
  brands: { id: number; name: string }[];
  vendors: { id: number; name: string }[];
  categories: { id: number; name: string; type: number; level: number }[];
  restrictions: { code: string; label: string }[];
  taxes: { code: string; label: string }[];
  sizes: { code: string; label: string }[];
}

/** Every list in one statement, each in the order the options are shown. */
const OPTION_LISTS_SQL = `SELECT
  (SELECT coalesce(json_agg(json_build_object('id', id, 'name', name) ORDER BY name, id), '[]')
     FROM brands) AS brands,
  (SELECT coalesce(json_agg(json_build_object('id', id, 'name', name) ORDER BY name, id), '[]')
     FROM vendors) AS vendors,
  (SELECT coalesce(json_agg(json_build_object('id', id, 'name', name, 'type', type, 'level', level)
     ORDER BY name, id), '[]') FROM categories) AS categories,
  (SELECT coalesce(json_agg(json_build_object('code', code, 'label', label) ORDER BY code), '[]')
     FROM shipping_restrictions) AS restrictions,
  (SELECT coalesce(json_agg(json_build_object('code', code, 'label', label) ORDER BY code), '[]')
     FROM tax_categories) AS taxes,
  (SELECT coalesce(json_agg(json_build_object('code', code, 'label', label) ORDER BY code), '[]')
     FROM sizes) AS sizes`;

export async function getFieldOptions(db: Database): Promise<FieldOptions> {
  // One statement on a connection of its own rather than six ORM queries: Create Products reads the
  // options on every cell edit, where each round trip counts.
  const conn = await db.connect();
  const [lists] = await conn.query<OptionLists>(OPTION_LISTS_SQL).finally(() => conn.release());
  const { brands, vendors, categories, restrictions, taxes, sizes } = lists!;
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
 * the company and date filters. At most PRODUCT_SEARCH_LIMIT rows, as one JSON array text (the
 * REST route sends it as is).
 *
 * Each product's result and its lower-cased ranking columns are precomputed by the pipeline's
 * calculation phase (server/jobs/product-search.ts: product_search, product_search_keys,
 * product_search_rows); the filters read the products table itself.
 */
export async function searchProductsJson(db: Database, input: ProductSearch): Promise<string> {
  // A connection of its own for the whole search: the pg driver reads thousands of rows and a few
  // MB of text faster than Prisma's raw queries do.
  const conn = await db.connect();
  try {
    const pids = await rankProducts(conn, input);
    if (pids.length === 0) return "[]";
    // The ready rows in rank order, concatenated here. Each one is looked up through the primary
    // key in the order of the array (up to 5,000 index probes beat reading all 50k rows for a merge
    // or hash join); a scan of one array with no join returns its elements in order, and the pids
    // sent back prove it (a different order falls back to placing each row by its pid).
    const rows = await conn.query<{ pid: number; json: string | null }>(
      `SELECT u.pid, (SELECT r.json FROM product_search_rows r WHERE r.pid = u.pid) AS json
       FROM unnest($1::int[]) u(pid)`,
      [pids],
    );
    let inOrder = rows.length === pids.length;
    for (let i = 0; inOrder && i < rows.length; i++) inOrder = rows[i]!.pid === pids[i];
    let parts: (string | null | undefined)[] = rows.map((r) => r.json);
    if (!inOrder) {
      const byPid = new Map(rows.map((r) => [r.pid, r.json]));
      parts = pids.map((pid) => byPid.get(pid));
    }
    return `[${parts.filter((j): j is string => j != null).join(",")}]`;
  } finally {
    await conn.release();
  }
}

export async function searchProducts(db: Database, input: ProductSearch): Promise<ProductSearchResult[]> {
  return JSON.parse(await searchProductsJson(db, input)) as ProductSearchResult[];
}

/** The pids of the answer, in rank order. */
async function rankProducts(conn: SqlConnection, input: ProductSearch): Promise<number[]> {
  const text = input.q && input.q !== "*" ? input.q : null;
  const filters: Prisma.Sql[] = [];
  if (input.company) filters.push(Prisma.sql`p.brand_id = ${Number(input.company)}`);
  if (input.dateRange && input.dateRange !== "none") {
    filters.push(
      Prisma.sql`p.first_received >= (current_date - ${INTERVAL[input.dateRange]}::interval)::date`,
    );
  }
  const and = (conditions: Prisma.Sql[]) => Prisma.join(conditions, " AND ");
  const pidsOf = async (query: Prisma.Sql) =>
    (await conn.query<{ pid: number }>(query.text, query.values)).map((h) => h.pid);

  if (!text) {
    const where = filters.length ? Prisma.sql`WHERE ${and(filters)}` : Prisma.empty;
    return pidsOf(Prisma.sql`SELECT p.pid FROM products p ${where}
      ORDER BY p.first_received DESC NULLS LAST, p.pid DESC LIMIT ${PRODUCT_SEARCH_LIMIT}`);
  }

  const escaped = likeEscape(text);
  const pid = /^\d{1,9}$/.test(text) ? Number(text) : null;
  const pidMatch = pid === null ? Prisma.sql`false` : Prisma.sql`s.pid = ${pid}`;
  // The columns of product_search are lower-cased, so plain LIKE against the lower-cased pattern
  // is ILIKE (which lower-cases both sides in a multi-byte database) without the per-row lower().
  const rank = Prisma.sql`CASE
    WHEN ${pidMatch} OR s.sku = lower(${text}) OR s.barcode = lower(${text}) THEN 0
    WHEN s.title = lower(${text}) THEN 1
    WHEN s.title LIKE lower(${`${escaped}%`}) THEN 2
    WHEN s.title LIKE lower(${`% ${escaped}%`}) THEN 3
    WHEN s.sku LIKE lower(${`${escaped}%`}) OR s.barcode LIKE lower(${`${escaped}%`}) THEN 4
    ELSE 5 END`;
  const ranked = (from: Prisma.Sql, match: Prisma.Sql) => Prisma.sql`SELECT s.pid FROM ${from}
    WHERE ${and([match, ...filters])} ORDER BY ${rank}, s.total_sold DESC, s.pid LIMIT ${PRODUCT_SEARCH_LIMIT}`;
  const joined = Prisma.sql`product_search s JOIN products p ON p.pid = s.pid`;
  const short = [...text].length <= 2;

  if (short && !filters.length) {
    // Trigram indexes cannot serve one or two characters, and ranking every product that carries
    // them would cost several times the rest of the search. Every product ranked 0–3 carries the
    // text as a short key (or has it as pid); product_search_keys holds, for each key that fills
    // the answer alone, its first products in rank order (server/jobs/product-search.ts). When
    // they fill it, no other product can make it; a key fewer products carry has no rows there.
    const top = await pidsOf(Prisma.sql`SELECT pid FROM (
        (SELECT k.pid, k.rank, k.total_sold FROM product_search_keys k WHERE k.key = lower(${text})
          ORDER BY k.rank, k.total_sold DESC, k.pid LIMIT ${PRODUCT_SEARCH_LIMIT + 1})
        ${pid === null ? Prisma.empty : Prisma.sql`UNION ALL SELECT s.pid, 0, s.total_sold FROM product_search s WHERE s.pid = ${pid}`}
      ) x GROUP BY pid ORDER BY min(rank), max(total_sold) DESC, pid LIMIT ${PRODUCT_SEARCH_LIMIT}`);
    if (top.length >= PRODUCT_SEARCH_LIMIT) return top;
  }
  const pattern = `%${escaped}%`;
  const match = short
    ? // The narrow lower-cased copy scans faster than the products table.
      Prisma.sql`(s.title LIKE lower(${pattern}) OR s.sku LIKE lower(${pattern})
        OR s.barcode LIKE lower(${pattern}) OR ${pidMatch})`
    : // ILIKE on the products' own columns, which the trigram indexes serve.
      Prisma.sql`(p.title ILIKE ${pattern} OR p.sku ILIKE ${pattern} OR p.barcode ILIKE ${pattern}
        ${pid === null ? Prisma.empty : Prisma.sql`OR p.pid = ${pid}`})`;
  return pidsOf(ranked(short && !filters.length ? Prisma.sql`product_search s` : joined, match));
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
