// Create Products: an import from a supplier's file, from upload to checked rows. Each import keeps
// its file, its settings (company, product type, template, column mapping) and its rows; every
// change re-derives the affected rows' values and re-runs the rule checks on the server.
import type { CurrentUser } from "../../../shared/auth.ts";
import { hasPermission } from "../../../shared/permissions.ts";
import {
  type BulkEdit,
  type Finding,
  IMPORT_FIELDS,
  type ImageRef,
  type ImportCounts,
  type ImportFieldKey,
  type ImportListItem,
  type ImportRow,
  type ImportSettings,
  type ImportStatus,
  type ProductImport,
  type RowPatch,
} from "../../../shared/product-import.ts";
import type { Template } from "../../../shared/templates.ts";
import type { Database, SqlConnection } from "../../db/database.ts";
import { badRequest, conflict, forbidden, notFound } from "../../errors.ts";
import { EXTENSIONS, IMAGE_FILE_ROUTE, IMAGE_THUMBNAIL_ROUTE } from "../images/images.service.ts";
import { getFieldOptions, getTemplate } from "../templates/templates.service.ts";
import { emitRowsChecked, IMPORT_COUNTS_SQL, RECOUNT_ROWS_SQL, RECOUNT_SQL } from "./hooks.ts";
import { type ParsedFile, parseUpload } from "./parse.ts";
import {
  analyzeAfterBulk,
  type CheckedRowOut,
  checkHash,
  insertCheckedRows,
  storeCheckedRows,
  withConnection,
} from "./rowstore.ts";
import {
  autoMap,
  barcodeKey,
  buildLookups,
  checkRow,
  type DeriveInput,
  type DuplicateLookup,
  deriveValues,
  fieldColumns,
  headerKey,
  type NormalisedProduct,
  type OptionLookups,
  skuKey,
  type Values,
} from "./rules.ts";

export const IMPORT_READ = ["access:import", "create:products"] as const;
export const IMPORT_WRITE = "create:products" as const;

const TX = { timeout: 180_000, maxWait: 60_000 };
const CHUNK = 5000;

type Log = (err: unknown) => void;

/** Who sees every import rather than only their own. */
export function seesAllImports(user: CurrentUser): boolean {
  return hasPermission(user, "settings:templates");
}

interface ImportRecord {
  id: number;
  owner_id: number;
  owner: string;
  status: ImportStatus;
  filename: string;
  file_type: "csv" | "xlsx";
  file_size: number;
  encoding: string | null;
  delimiter: string | null;
  sheet: string | null;
  sheets: string[];
  headers: string[];
  company: string | null;
  product_type: string | null;
  template_id: number | null;
  mapping: StoredMapping;
  row_count: number;
  error_rows: number;
  warning_rows: number;
  created_count: number;
  summary: ProductImport["summary"];
  validation: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
  submitted_at: Date | null;
  exported_at: Date | null;
}

interface StoredMapping {
  fields: Record<string, ImportFieldKey | null>;
  source: Record<string, string>;
}

const IMPORT_COLUMNS = `i.id, i.owner_id, u.username AS owner, i.status, i.filename, i.file_type, i.file_size,
  i.encoding, i.delimiter, i.sheet, i.sheets, i.headers, i.company, i.product_type, i.template_id, i.mapping,
  i.row_count, i.error_rows, i.warning_rows, i.created_count, i.summary, i.validation, i.created_at,
  i.updated_at, i.submitted_at, i.exported_at`;

function counts(r: {
  row_count: number;
  error_rows: number;
  warning_rows: number;
  created_count: number;
}): ImportCounts {
  return {
    rows: r.row_count,
    error_rows: r.error_rows,
    warning_rows: r.warning_rows,
    valid_rows: r.row_count - r.error_rows,
    created: r.created_count,
  };
}

function toImport(r: ImportRecord, preview: string[][] = []): ProductImport {
  return {
    id: r.id,
    status: r.status,
    owner: { id: r.owner_id, username: r.owner },
    filename: r.filename,
    file_type: r.file_type,
    file_size: r.file_size,
    encoding: r.encoding,
    delimiter: r.delimiter,
    sheet: r.sheet,
    sheets: r.sheets,
    columns: r.headers,
    preview,
    company: r.company,
    product_type: r.product_type,
    template_id: r.template_id,
    mapping: r.mapping.fields,
    mapping_source: r.mapping.source,
    counts: counts(r),
    summary: r.summary,
    validation: r.validation,
    created_at: r.created_at,
    updated_at: r.updated_at,
    submitted_at: r.submitted_at,
    exported_at: r.exported_at,
  };
}

/** The import, when this user may see it (their own, or every import with template management). */
export async function loadImport(db: Database, user: CurrentUser, id: number): Promise<ImportRecord> {
  const [row] = await db.prisma.$queryRawUnsafe<ImportRecord[]>(
    `SELECT ${IMPORT_COLUMNS} FROM product_imports i JOIN users u ON u.id = i.owner_id
      WHERE i.id = $1 AND i.status <> 'discarded'`,
    id,
  );
  if (!row || (row.owner_id !== user.id && !seesAllImports(user))) throw notFound(`Import ${id} not found`);
  return row;
}

function assertEditable(imp: ImportRecord) {
  if (imp.status === "submitted" || imp.status === "exported")
    throw conflict(`Import ${imp.id} was submitted: its rows can no longer be changed`);
}

export async function getImport(db: Database, user: CurrentUser, id: number): Promise<ProductImport> {
  const imp = await loadImport(db, user, id);
  const preview = await db.prisma.$queryRawUnsafe<{ raw: string[] }[]>(
    `SELECT raw FROM product_import_rows WHERE import_id = $1 ORDER BY row_id LIMIT 5`,
    id,
  );
  return toImport(
    imp,
    preview.map((p) => p.raw),
  );
}

export async function listImports(
  db: Database,
  user: CurrentUser,
  { page, pageSize }: { page: number; pageSize: number },
): Promise<{ items: ImportListItem[]; total: number }> {
  const all = seesAllImports(user);
  const where = `i.status <> 'discarded' ${all ? "" : "AND i.owner_id = $3"}`;
  const params: unknown[] = [pageSize, (page - 1) * pageSize, ...(all ? [] : [user.id])];
  const [rows, total] = await Promise.all([
    db.prisma.$queryRawUnsafe<(ImportRecord & { company_label: string | null })[]>(
      `SELECT ${IMPORT_COLUMNS}, b.name AS company_label
         FROM product_imports i JOIN users u ON u.id = i.owner_id
         LEFT JOIN brands b ON i.company ~ '^[0-9]{1,9}$' AND b.id = i.company::int
        WHERE ${where} ORDER BY i.created_at DESC, i.id DESC LIMIT $1 OFFSET $2`,
      ...params,
    ),
    db.prisma.$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM product_imports i WHERE ${where.replace("$3", "$1")}`,
      ...(all ? [] : [user.id]),
    ),
  ]);
  return {
    items: rows.map((r) => ({
      id: r.id,
      status: r.status,
      owner: { id: r.owner_id, username: r.owner },
      filename: r.filename,
      company: r.company,
      company_label: r.company_label,
      product_type: r.product_type,
      counts: counts(r),
      created_at: r.created_at,
      updated_at: r.updated_at,
      submitted_at: r.submitted_at,
    })),
    total: total[0]?.n ?? 0,
  };
}

// ---------------------------------------------------------------------------------------------
// Checking rows

interface CheckContext extends DeriveInput {
  importId: number;
  lookups: OptionLookups;
  cols: Map<ImportFieldKey, number>;
}

async function findTemplate(
  db: Database,
  company: string | null,
  productType: string | null,
  templateId: number | null | undefined,
): Promise<Template | null> {
  if (typeof templateId === "number") return getTemplate(db, templateId);
  if (templateId === null || !company || !productType) return null;
  const found = await db.prisma.importTemplate.findFirst({
    where: { company, productType: { equals: productType.trim(), mode: "insensitive" } },
    select: { id: true },
  });
  return found ? getTemplate(db, found.id) : null;
}

async function checkContext(db: Database, imp: ImportRecord): Promise<CheckContext> {
  const [options, template] = await Promise.all([
    getFieldOptions(db),
    imp.template_id ? getTemplate(db, imp.template_id).catch(() => null) : Promise.resolve(null),
  ]);
  return {
    importId: imp.id,
    headers: imp.headers,
    mapping: imp.mapping.fields,
    template,
    company: imp.company,
    lookups: buildLookups(options),
    cols: fieldColumns(imp.headers, imp.mapping.fields),
  };
}

interface RowInput {
  rowId: number;
  raw: string[];
  edits: Values;
  /** check_hash as stored (null for a new row) */
  hash?: string | null;
}

export interface ComputedRow extends CheckedRowOut {
  product: NormalisedProduct | null;
}

/** Catalogue and earlier imports' SKUs and barcodes among these keys. */
async function catalogueMatches(db: Database, importId: number, skus: string[], barcodes: string[]) {
  // `= ANY(array)`: the expression index on lower(sku) and the barcode index serve a few keys
  // (a cell edit); a whole file's keys are matched with a hash.
  const query = <T>(sql: string, params: unknown[]) =>
    withConnection(db, (conn) => conn.query<T>(sql, params));
  const [catSku, catBarcode, created] = await Promise.all([
    skus.length
      ? query<{ k: string; pid: number }>(
          `SELECT lower(sku) AS k, min(pid) AS pid FROM products WHERE lower(sku) = ANY($1::text[]) GROUP BY 1`,
          [skus],
        )
      : [],
    barcodes.length
      ? query<{ k: string; pid: number }>(
          `SELECT barcode AS k, min(pid) AS pid FROM products WHERE barcode = ANY($1::text[]) GROUP BY 1`,
          [barcodes],
        )
      : [],
    skus.length || barcodes.length
      ? query<{ sku: string; barcode: string | null; pid: number; import_id: number }>(
          `SELECT lower(sku) AS sku, barcode, pid, import_id FROM created_products
            WHERE import_id <> $3 AND (lower(sku) = ANY($1::text[]) OR barcode = ANY($2::text[]))`,
          [skus, barcodes, importId],
        )
      : [],
  ]);
  const createdSku = new Map<string, { pid: number; importId: number }>();
  const createdBarcode = new Map<string, { pid: number; importId: number }>();
  for (const c of created) {
    createdSku.set(c.sku, { pid: c.pid, importId: c.import_id });
    if (c.barcode) createdBarcode.set(c.barcode, { pid: c.pid, importId: c.import_id });
  }
  return {
    sku: new Map(catSku.map((r) => [r.k, r.pid])),
    barcode: new Map(catBarcode.map((r) => [r.k, r.pid])),
    createdSku,
    createdBarcode,
  };
}

/**
 * What checking `rows` needs besides each row: the other rows of the import by key (`inFile`; for
 * a full check, built from the rows themselves) and the catalogue's and earlier imports' matches.
 * Then `check(row)` checks one row, so a caller can check rows as it writes them (an upload's
 * rows go to COPY as they are checked, never all held at once).
 */
async function prepareCheck(
  db: Database,
  ctx: CheckContext,
  rows: RowInput[],
  inFile?: { sku: Map<string, number[]>; barcode: Map<string, number[]> },
): Promise<(row: RowInput) => ComputedRow> {
  const keysOf = (r: RowInput) => {
    const { values } = deriveValues(r.raw, r.edits, ctx.cols, ctx);
    return { sku: skuKey(values.sku), barcode: barcodeKey(values.barcode) };
  };
  const skuSet = new Set<string>();
  const barcodeSet = new Set<string>();
  const fileSku = inFile?.sku ?? new Map<string, number[]>();
  const fileBarcode = inFile?.barcode ?? new Map<string, number[]>();
  for (const r of rows) {
    const k = keysOf(r);
    if (k.sku) skuSet.add(k.sku);
    if (k.barcode) barcodeSet.add(k.barcode);
    if (inFile) continue;
    if (k.sku) {
      const list = fileSku.get(k.sku);
      if (list) list.push(r.rowId);
      else fileSku.set(k.sku, [r.rowId]);
    }
    if (k.barcode) {
      const list = fileBarcode.get(k.barcode);
      if (list) list.push(r.rowId);
      else fileBarcode.set(k.barcode, [r.rowId]);
    }
  }
  const cat = await catalogueMatches(db, ctx.importId, [...skuSet], [...barcodeSet]);
  const dup: DuplicateLookup = {
    skuRows: (k) => fileSku.get(k) ?? [],
    barcodeRows: (k) => fileBarcode.get(k) ?? [],
    skuInCatalogue: (k) => cat.sku.get(k),
    barcodeInCatalogue: (k) => cat.barcode.get(k),
    skuCreated: (k) => cat.createdSku.get(k),
    barcodeCreated: (k) => cat.createdBarcode.get(k),
  };
  return (r) => {
    const d = deriveValues(r.raw, r.edits, ctx.cols, ctx);
    const { findings, product } = checkRow(r.rowId, d.values, ctx.lookups, dup);
    const out = {
      values: d.values,
      fromTemplate: d.fromTemplate,
      findings,
      skuKey: skuKey(d.values.sku),
      barcodeKey: barcodeKey(d.values.barcode),
    };
    return { rowId: r.rowId, ...out, hash: checkHash(out), product };
  };
}

/** Derives and checks `rows` (see prepareCheck). */
async function computeRows(
  db: Database,
  ctx: CheckContext,
  rows: RowInput[],
  inFile?: { sku: Map<string, number[]>; barcode: Map<string, number[]> },
): Promise<ComputedRow[]> {
  const check = await prepareCheck(db, ctx, rows, inFile);
  return rows.map(check);
}

async function loadRowInputs(db: Database, importId: number, rowIds?: number[]): Promise<RowInput[]> {
  const rows = await withConnection(db, (conn) =>
    conn.query<{ row_id: number; raw: string[]; edits: Values; check_hash: string | null }>(
      `SELECT row_id, raw, edits, check_hash FROM product_import_rows
        WHERE import_id = $1 AND NOT deleted ${rowIds ? "AND row_id = ANY($2::int[])" : ""}
        ORDER BY row_id`,
      rowIds ? [importId, rowIds] : [importId],
    ),
  );
  return rows.map((r) => ({ rowId: r.row_id, raw: r.raw, edits: r.edits, hash: r.check_hash }));
}

/** Rows with errors, and rows with warnings only, among `rowIds` (live rows). */
async function rowKinds(tx: SqlConnection, importId: number, rowIds: number[], lock = false) {
  // With `lock`, the rows stay locked to the end of the transaction (in row_id order; every writer
  // takes an import's rows before its product_imports row): an edit of the same rows running at
  // once waits, then reads the counts this one leaves.
  const rows = await tx.query<{ error_count: number; warning_count: number; deleted: boolean }>(
    `SELECT error_count, warning_count, deleted FROM product_import_rows
      WHERE import_id = $1 AND row_id = ANY($2::int[]) ORDER BY row_id ${lock ? "FOR UPDATE" : ""}`,
    [importId, rowIds],
  );
  const live = rows.filter((r) => !r.deleted);
  return {
    errors: live.filter((r) => r.error_count > 0).length,
    warnings: live.filter((r) => r.error_count === 0 && r.warning_count > 0).length,
  };
}

/**
 * Re-derives and re-checks every row of the import (after a settings change, before a submit):
 * reads and checks outside any transaction (an embedded database has one connection), then writes
 * every row in one.
 */
export async function recheckAll(db: Database, imp: ImportRecord): Promise<ComputedRow[]> {
  const [ctx, inputs] = await Promise.all([checkContext(db, imp), loadRowInputs(db, imp.id)]);
  const computed = await computeRows(db, ctx, inputs);
  // Only the rows whose check came out differently are written again.
  const changed = computed.filter((c, i) => c.hash !== inputs[i]!.hash);
  await withConnection(db, (conn) =>
    conn.transaction(async (tx) => {
      await storeCheckedRows(tx, imp.id, changed);
      if (changed.length) await tx.execute(RECOUNT_SQL, [imp.id]);
      await tx.execute(IMPORT_COUNTS_SQL, [imp.id]);
    }),
  );
  return computed;
}

/**
 * Re-checks the given rows and every other row that shares (or shared) a SKU or barcode with them,
 * so a fixed duplicate clears on both rows.
 */
async function recheckRows(
  db: Database,
  imp: ImportRecord,
  rowIds: number[],
  oldKeys: { sku: string[]; barcode: string[] },
) {
  const [ctx, first] = await Promise.all([checkContext(db, imp), loadRowInputs(db, imp.id, rowIds)]);
  // The edited rows' new keys (their values alone, the check comes once below).
  const firstComputed = first.map((r) => {
    const { values } = deriveValues(r.raw, r.edits, ctx.cols, ctx);
    return { rowId: r.rowId, skuKey: skuKey(values.sku), barcodeKey: barcodeKey(values.barcode) };
  });
  const skus = [
    ...new Set([...oldKeys.sku, ...firstComputed.map((c) => c.skuKey)].filter((k): k is string => !!k)),
  ];
  const barcodes = [
    ...new Set(
      [...oldKeys.barcode, ...firstComputed.map((c) => c.barcodeKey)].filter((k): k is string => !!k),
    ),
  ];
  const sharing =
    skus.length || barcodes.length
      ? await withConnection(db, (conn) =>
          conn.query<{ row_id: number; sku_key: string | null; barcode_key: string | null }>(
            `SELECT row_id, sku_key, barcode_key FROM product_import_rows
              WHERE import_id = $1 AND NOT deleted AND (sku_key = ANY($2::text[]) OR barcode_key = ANY($3::text[]))`,
            [imp.id, skus, barcodes],
          ),
        )
      : [];
  // The edited rows' new keys replace their stored ones.
  const keys = new Map(sharing.map((s) => [s.row_id, { sku: s.sku_key, barcode: s.barcode_key }]));
  for (const c of firstComputed) keys.set(c.rowId, { sku: c.skuKey, barcode: c.barcodeKey });
  const sku = new Map<string, number[]>();
  const barcode = new Map<string, number[]>();
  for (const [rowId, k] of keys) {
    if (k.sku) sku.set(k.sku, [...(sku.get(k.sku) ?? []), rowId]);
    if (k.barcode) barcode.set(k.barcode, [...(barcode.get(k.barcode) ?? []), rowId]);
  }
  const affected = [...new Set([...rowIds, ...sharing.map((s) => s.row_id)])];
  const inputs = affected.length === first.length ? first : await loadRowInputs(db, imp.id, affected);
  const computed = await computeRows(db, ctx, inputs, { sku, barcode });
  const changed = computed.filter((c, i) => c.hash !== inputs[i]!.hash);
  if (changed.length)
    await withConnection(db, (conn) =>
      conn.transaction(async (tx) => {
        // The import's counts move by what these rows' counts did (no recount of every row).
        const ids = changed.map((c) => c.rowId);
        const before = await rowKinds(tx, imp.id, ids, true);
        await storeCheckedRows(tx, imp.id, changed);
        await tx.execute(RECOUNT_ROWS_SQL, [imp.id, ids]);
        const after = await rowKinds(tx, imp.id, ids);
        await tx.execute(
          `UPDATE product_imports SET error_rows = error_rows + $2, warning_rows = warning_rows + $3,
                  updated_at = now() WHERE id = $1`,
          [imp.id, after.errors - before.errors, after.warnings - before.warnings],
        );
      }),
    );
  return affected;
}

// ---------------------------------------------------------------------------------------------
// Upload

async function savedMapping(db: Database, headers: string[], supplier: string | null) {
  const key = headerKey(headers);
  const rows = await db.prisma.productImportMapping.findMany({
    where: { headerKey: key },
    orderBy: { updatedAt: "desc" },
  });
  const found = rows.find((r) => r.supplier === (supplier ?? "")) ?? rows[0];
  return (found?.mapping as Record<string, ImportFieldKey | null> | undefined) ?? null;
}

export interface UploadInput {
  filename: string;
  data: Buffer;
  company?: string | null;
  productType?: string | null;
  sheet?: string;
}

async function assertCompany(db: Database, company: string | null | undefined) {
  if (!company) return;
  const id = /^\d{1,9}$/.test(company) ? Number(company) : null;
  const found =
    id === null ? null : await db.prisma.brand.findUnique({ where: { id }, select: { id: true } });
  if (!found) throw badRequest(`Unknown company "${company}": choose one of the field options`, "company");
}

/** Parses the file, maps its columns, checks every row and stores the import with its file. */
export async function createImport(
  db: Database,
  user: CurrentUser,
  input: UploadInput,
  log?: Log,
): Promise<ProductImport> {
  await assertCompany(db, input.company);
  const parsed: ParsedFile = await parseUpload(input.data, { sheet: input.sheet });
  const template = await findTemplate(db, input.company ?? null, input.productType ?? null, undefined);
  const saved = await savedMapping(
    db,
    parsed.headers,
    template?.supplier != null ? String(template.supplier) : null,
  );
  const { mapping, source } = autoMap(parsed.headers, saved);
  const stored: StoredMapping = { fields: mapping, source };
  // The file's bytes go to the driver as they are (a binary parameter), not through the ORM.
  const [created] = await withConnection(db, (conn) =>
    conn.query<{ id: number }>(
      `INSERT INTO product_imports (owner_id, filename, file_type, encoding, delimiter, sheet, sheets,
              file_size, file_data, headers, company, product_type, template_id, mapping)
       VALUES ($1, $2, $3, $4, $5, $6, $7::text[], $8, $9, $10::jsonb, $11, $12, $13, $14::jsonb)
       RETURNING id`,
      [
        user.id,
        cleanName(input.filename),
        parsed.fileType,
        parsed.encoding,
        parsed.delimiter,
        parsed.sheet,
        parsed.sheets,
        input.data.length,
        input.data,
        JSON.stringify(parsed.headers),
        input.company ?? null,
        input.productType?.trim() || null,
        template?.id ?? null,
        JSON.stringify(stored),
      ],
    ),
  );
  if (!created) throw new Error("the import was not stored");
  try {
    const imp = await loadImport(db, user, created.id);
    const ctx = await checkContext(db, imp);
    const inputs = parsed.rows.map((raw, i) => ({ rowId: i + 1, raw, edits: {} }));
    const check = await prepareCheck(db, ctx, inputs);
    // Each row is checked as COPY reads it: the checked rows are never all in memory at once.
    function* checked() {
      for (const input of inputs) yield { raw: input.raw, checked: check(input) };
    }
    await withConnection(db, (conn) =>
      conn.transaction(async (tx) => {
        await insertCheckedRows(tx, created.id, checked());
        await tx.execute(IMPORT_COUNTS_SQL, [created.id]);
      }),
    );
    await analyzeAfterBulk(db, "product_import_rows", inputs.length);
  } catch (err) {
    // Nothing half-written: the import goes with its rows.
    await db.prisma.productImport.delete({ where: { id: created.id } }).catch(() => {});
    await db.prisma.$executeRawUnsafe(`DELETE FROM product_import_rows WHERE import_id = $1`, created.id);
    throw err;
  }
  emitRowsChecked({ db, importId: created.id, rowIds: "all" }, log);
  return getImport(db, user, created.id);
}

function cleanName(name: string): string {
  const base = name
    .split(/[\\/]/)
    .pop()!
    .replace(/[\p{Cc}]/gu, "")
    .trim()
    .slice(0, 255);
  return base || "upload";
}

// ---------------------------------------------------------------------------------------------
// Settings

/**
 * Company, product type, template and mapping. The template is the one chosen, else the one for
 * company × product type; the mapping is remembered for the next file with the same headers.
 */
export async function updateImportSettings(
  db: Database,
  user: CurrentUser,
  id: number,
  settings: ImportSettings,
  log?: Log,
): Promise<ProductImport> {
  const imp = await loadImport(db, user, id);
  assertEditable(imp);
  const company = settings.company !== undefined ? settings.company : imp.company;
  const productType = settings.product_type !== undefined ? settings.product_type : imp.product_type;
  await assertCompany(db, company);
  const template = await findTemplate(
    db,
    company,
    productType,
    settings.template_id !== undefined ? settings.template_id : undefined,
  );
  let stored = imp.mapping;
  if (settings.mapping) {
    const unknown = Object.keys(settings.mapping).filter((h) => !imp.headers.includes(h));
    if (unknown.length)
      throw badRequest(
        `mapping names columns the file does not have: ${unknown.slice(0, 5).join(", ")}`,
        "mapping",
      );
    const fields = { ...imp.mapping.fields, ...settings.mapping };
    const seen = new Map<ImportFieldKey, string>();
    for (const h of imp.headers) {
      const f = fields[h];
      if (!f) continue;
      if (seen.has(f))
        throw badRequest(
          `Columns "${seen.get(f)}" and "${h}" are both mapped to ${f}: map each field once`,
          "mapping",
        );
      seen.set(f, h);
    }
    const source = { ...imp.mapping.source };
    for (const h of Object.keys(settings.mapping))
      if (settings.mapping[h] !== imp.mapping.fields[h]) source[h] = "user";
    stored = { fields, source };
    await db.prisma.productImportMapping.upsert({
      where: {
        supplier_headerKey: {
          supplier: template?.supplier != null ? String(template.supplier) : "",
          headerKey: headerKey(imp.headers),
        },
      },
      create: {
        supplier: template?.supplier != null ? String(template.supplier) : "",
        headerKey: headerKey(imp.headers),
        mapping: fields as object,
      },
      update: { mapping: fields as object },
    });
  }
  await db.prisma.productImport.update({
    where: { id },
    data: {
      company,
      productType: productType?.trim() || null,
      templateId: template?.id ?? null,
      mapping: stored as object,
      status: "checked",
    },
  });
  const updated = await loadImport(db, user, id);
  await recheckAll(db, updated);
  emitRowsChecked({ db, importId: id, rowIds: "all" }, log);
  return getImport(db, user, id);
}

// ---------------------------------------------------------------------------------------------
// Rows

interface RowRecord {
  row_id: number;
  values: Values;
  edits: Values;
  from_template: ImportFieldKey[];
  findings: Finding[];
  validation: Record<string, Finding[]>;
  error_count: number;
  warning_count: number;
  images: ImageRef[];
  created_pid: number | null;
}

async function toRows(db: Database, importId: number, rows: RowRecord[]): Promise<ImportRow[]> {
  const lib = new Set<number>();
  const up = new Set<number>();
  for (const r of rows) for (const i of r.images) (i.source === "library" ? lib : up).add(i.id);
  const [libRows, upRows] = await Promise.all([
    lib.size
      ? db.prisma.reusableImage.findMany({
          where: { id: { in: [...lib] } },
          select: { id: true, contentHash: true, mimeType: true, filename: true },
        })
      : [],
    up.size
      ? db.prisma.productImportImage.findMany({
          where: { id: { in: [...up] }, importId },
          select: { id: true, filename: true },
        })
      : [],
  ]);
  const libById = new Map(libRows.map((l) => [l.id, l]));
  const upById = new Map(upRows.map((u) => [u.id, u]));
  return rows.map((r) => ({
    row_id: r.row_id,
    values: r.values,
    from_template: r.from_template,
    edited: Object.keys(r.edits) as ImportFieldKey[],
    findings: [...r.findings, ...Object.values(r.validation).flat()],
    error_count: r.error_count,
    warning_count: r.warning_count,
    created_pid: r.created_pid,
    images: r.images.flatMap((i) => {
      if (i.source === "library") {
        const l = libById.get(i.id);
        if (!l) return [];
        return [
          {
            ...i,
            filename: l.filename,
            url: `${IMAGE_FILE_ROUTE}/${l.contentHash}.${EXTENSIONS[l.mimeType] ?? "bin"}`,
            thumbnail_url: `${IMAGE_THUMBNAIL_ROUTE}/${l.contentHash}.webp`,
          },
        ];
      }
      const u = upById.get(i.id);
      if (!u) return [];
      return [
        {
          ...i,
          filename: u.filename,
          url: `/api/product-imports/${importId}/images/${i.id}`,
          thumbnail_url: `/api/product-imports/${importId}/images/${i.id}/thumbnail`,
        },
      ];
    }),
  }));
}

/**
 * The rows `where` picks (a page: ORDER BY and LIMIT inside), each with its created product's pid
 * after the submit (created_products' key import_id, row_id), looked up for these rows alone.
 */
function rowsSql(where: string) {
  return `SELECT r.row_id, r."values", r.edits, r.from_template, r.findings, r.validation, r.error_count,
          r.warning_count, r.images,
          (SELECT c.pid FROM created_products c WHERE c.import_id = r.import_id AND c.row_id = r.row_id) AS created_pid
     FROM (SELECT * FROM product_import_rows r WHERE ${where}) r ORDER BY r.row_id`;
}

/** Above this many deleted rows, a page is found by OFFSET rather than from the deleted rows' ids. */
const DELETED_LIMIT = 5000;

/**
 * A page of rows. Its total is the import's stored count (no count of the rows per page), and
 * without a filter the page's first row_id is worked out from the row ids: an import's rows are
 * numbered 1, 2, 3, … (the file's order, then re-uploaded lines), so the n-th live row is n plus
 * the deleted rows before it, and the page is one range of the primary key.
 */
export async function listRows(
  db: Database,
  user: CurrentUser,
  id: number,
  q: { page: number; pageSize: number; errors_only: boolean; q?: string },
): Promise<{ items: ImportRow[]; total: number }> {
  const imp = await loadImport(db, user, id);
  const offset = (q.page - 1) * q.pageSize;
  const { rows, total } = await withConnection(db, async (conn) => {
    if (q.q) {
      const where = `r.import_id = $1 AND NOT r.deleted ${q.errors_only ? "AND r.error_count > 0" : ""}
        AND r."values"::text ILIKE $2`;
      const params = [id, `%${q.q.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`];
      const [rows, n] = await Promise.all([
        conn.query<RowRecord>(
          rowsSql(`${where} ORDER BY r.row_id LIMIT ${q.pageSize} OFFSET ${offset}`),
          params,
        ),
        conn.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM product_import_rows r WHERE ${where}`,
          params,
        ),
      ]);
      return { rows, total: n[0]?.n ?? 0 };
    }
    if (q.errors_only) {
      const rows = await conn.query<RowRecord>(
        rowsSql(`r.import_id = $1 AND NOT r.deleted AND r.error_count > 0
          ORDER BY r.row_id LIMIT ${q.pageSize} OFFSET ${offset}`),
        [id],
      );
      return { rows, total: imp.error_rows };
    }
    const [shape] = await conn.query<{ max: number | null; deleted: number[] | null }>(
      `SELECT (SELECT max(row_id) FROM product_import_rows WHERE import_id = $1) AS max,
              (SELECT array_agg(row_id ORDER BY row_id) FROM (
                 SELECT row_id FROM product_import_rows WHERE import_id = $1 AND deleted
                  ORDER BY row_id LIMIT ${DELETED_LIMIT + 1}) d) AS deleted`,
      [id],
    );
    const deleted = shape?.deleted ?? [];
    const numbered = deleted.length <= DELETED_LIMIT && (shape?.max ?? 0) === imp.row_count + deleted.length;
    if (!numbered) {
      // Row ids with gaps, or many deleted rows: the page by its position.
      const rows = await conn.query<RowRecord>(
        rowsSql(`r.import_id = $1 AND NOT r.deleted ORDER BY r.row_id LIMIT ${q.pageSize} OFFSET ${offset}`),
        [id],
      );
      return { rows, total: imp.row_count };
    }
    if (offset >= imp.row_count) return { rows: [], total: imp.row_count };
    // The row id of the live row at a position (0-based): its number plus the deleted rows up to it.
    const idAt = (position: number) => {
      let rowId = position + 1;
      for (const d of deleted) {
        if (d > rowId) break;
        rowId++;
      }
      return rowId;
    };
    const last = Math.min(offset + q.pageSize, imp.row_count) - 1;
    const rows = await conn.query<RowRecord>(
      rowsSql("r.import_id = $1 AND r.row_id BETWEEN $2 AND $3 AND NOT r.deleted"),
      [id, idAt(offset), idAt(last)],
    );
    return { rows, total: imp.row_count };
  });
  return { items: await toRows(db, id, rows), total };
}

async function getRows(db: Database, importId: number, rowIds: number[]): Promise<ImportRow[]> {
  const rows = await withConnection(db, (conn) =>
    conn.query<RowRecord>(rowsSql("r.import_id = $1 AND r.row_id = ANY($2::int[])"), [importId, rowIds]),
  );
  return toRows(db, importId, rows);
}

async function assertImages(db: Database, imp: ImportRecord, images: ImageRef[]) {
  const lib = images.filter((i) => i.source === "library").map((i) => i.id);
  const up = images.filter((i) => i.source === "upload").map((i) => i.id);
  if (lib.length) {
    const found = await db.prisma.reusableImage.findMany({
      where: { id: { in: lib } },
      select: { id: true, isGlobal: true, company: true },
    });
    for (const id of lib) {
      const f = found.find((x) => x.id === id);
      if (!f) throw badRequest(`Library image ${id} not found`, "images");
      if (!f.isGlobal && imp.company && f.company && f.company !== imp.company)
        throw badRequest(`Library image ${id} belongs to another company`, "images");
    }
  }
  if (up.length) {
    const found = await db.prisma.productImportImage.count({ where: { id: { in: up }, importId: imp.id } });
    if (found !== new Set(up).size)
      throw badRequest("An uploaded image id is not an image of this import", "images");
  }
}

/** Changes cells (and/or the images) of one row, then re-checks it and the rows it shares keys with. */
export async function patchRow(
  db: Database,
  user: CurrentUser,
  id: number,
  rowId: number,
  patch: RowPatch,
  log?: Log,
): Promise<{ row: ImportRow; affected: ImportRow[]; counts: ImportCounts }> {
  const imp = await loadImport(db, user, id);
  assertEditable(imp);
  if (patch.images) await assertImages(db, imp, patch.images);
  // The new cells join the row's earlier edits; the keys it answers are those of its last check.
  const [current] = await withConnection(db, (conn) =>
    conn.query<{ sku_key: string | null; barcode_key: string | null }>(
      `UPDATE product_import_rows SET edits = edits || $3::jsonb ${patch.images ? ", images = $4::jsonb" : ""}
        WHERE import_id = $1 AND row_id = $2 AND NOT deleted
        RETURNING sku_key, barcode_key`,
      [
        id,
        rowId,
        JSON.stringify(patch.values ?? {}),
        ...(patch.images ? [JSON.stringify(patch.images)] : []),
      ],
    ),
  );
  if (!current) throw notFound(`Row ${rowId} not found in import ${id}`);
  const affected = patch.values
    ? await recheckRows(db, imp, [rowId], {
        sku: current.sku_key ? [current.sku_key] : [],
        barcode: current.barcode_key ? [current.barcode_key] : [],
      })
    : [rowId];
  if (patch.values) emitRowsChecked({ db, importId: id, rowIds: [rowId] }, log);
  const [rows, fresh] = await Promise.all([getRows(db, id, affected), loadImport(db, user, id)]);
  return { row: rows.find((r) => r.row_id === rowId)!, affected: rows, counts: counts(fresh) };
}

/** Fill down, find and replace, delete rows: each a server-side change followed by a re-check. */
export async function bulkEdit(
  db: Database,
  user: CurrentUser,
  id: number,
  edit: BulkEdit,
  log?: Log,
): Promise<{ changed: number; counts: ImportCounts }> {
  const imp = await loadImport(db, user, id);
  assertEditable(imp);
  let changed = 0;
  if (edit.action === "delete_rows") {
    changed = await db.prisma.$executeRawUnsafe(
      `UPDATE product_import_rows SET deleted = true
        WHERE import_id = $1 AND NOT deleted AND row_id IN (SELECT (jsonb_array_elements_text($2::jsonb))::int)`,
      id,
      JSON.stringify(edit.row_ids),
    );
  } else if (edit.action === "fill_down") {
    const [source] = await db.prisma.$queryRawUnsafe<{ v: string | null }[]>(
      `SELECT "values"->>$3 AS v FROM product_import_rows WHERE import_id = $1 AND row_id = $2 AND NOT deleted`,
      id,
      edit.row_id,
      edit.field,
    );
    if (!source) throw notFound(`Row ${edit.row_id} not found in import ${id}`);
    changed = await db.prisma.$executeRawUnsafe(
      `UPDATE product_import_rows SET edits = jsonb_set(edits, ARRAY[$3::text], to_jsonb($4::text))
        WHERE import_id = $1 AND NOT deleted AND row_id > $2`,
      id,
      edit.row_id,
      edit.field,
      source.v ?? "",
    );
  } else {
    const fields = edit.field ? [edit.field] : IMPORT_FIELDS.map((f) => f.key);
    const rows = await db.prisma.$queryRawUnsafe<{ row_id: number; values: Values; edits: Values }[]>(
      `SELECT row_id, "values", edits FROM product_import_rows WHERE import_id = $1 AND NOT deleted`,
      id,
    );
    const escaped = edit.find.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const re = new RegExp(escaped, edit.match_case ? "g" : "gi");
    const updates: { row_id: number; edits: Values }[] = [];
    for (const r of rows) {
      let edits: Values | null = null;
      for (const f of fields) {
        const v = r.values[f];
        if (v == null || !re.test(v)) continue;
        re.lastIndex = 0;
        edits ??= { ...r.edits };
        edits[f] = v.replace(re, edit.replace);
        changed++;
      }
      if (edits) updates.push({ row_id: r.row_id, edits });
    }
    for (let i = 0; i < updates.length; i += CHUNK)
      await db.prisma.$executeRawUnsafe(
        `UPDATE product_import_rows r SET edits = x.edits
           FROM jsonb_to_recordset($2::jsonb) AS x(row_id int, edits jsonb)
          WHERE r.import_id = $1 AND r.row_id = x.row_id`,
        id,
        JSON.stringify(updates.slice(i, i + CHUNK)),
      );
  }
  if (changed > 0) {
    await recheckAll(db, imp);
    emitRowsChecked({ db, importId: id, rowIds: "all" }, log);
  }
  return { changed, counts: counts(await loadImport(db, user, id)) };
}

/** Hides the import from the list (its created products, if any, stay). */
export async function discardImport(db: Database, user: CurrentUser, id: number) {
  const imp = await loadImport(db, user, id);
  if (imp.owner_id !== user.id && !seesAllImports(user)) throw forbidden();
  await db.prisma.productImport.update({ where: { id }, data: { status: "discarded" } });
  return { success: true as const, id };
}

export async function getImportFile(db: Database, user: CurrentUser, id: number) {
  await loadImport(db, user, id);
  const row = await db.prisma.productImport.findUniqueOrThrow({
    where: { id },
    select: { fileData: true, filename: true, fileType: true },
  });
  return { data: Buffer.from(row.fileData), filename: row.filename, fileType: row.fileType };
}

// ---------------------------------------------------------------------------------------------
// Re-upload of the error report

export interface ReuploadResult {
  /** Rows that had errors and were replaced by the file's line with their row_id */
  replaced: number;
  /** Lines without a row_id: added as new rows */
  added: number;
  /** Lines whose row_id had no errors (or is unknown): left as they were */
  ignored: number;
  import: ProductImport;
}

/** A cell the error report prefixed with ' so spreadsheets would not run it, as the supplier wrote it. */
function unprefix(v: string): string {
  return /^'[=+\-@\t\r]/.test(v) ? v.slice(1) : v;
}

/**
 * Reads the corrected error report (or any file with a `row_id` column) into the same import: each
 * line whose row_id failed replaces that row (its cells, by column name; the grid's edits of it are
 * dropped), lines without a row_id become new rows, and every row is checked again.
 */
export async function reuploadImport(
  db: Database,
  user: CurrentUser,
  id: number,
  input: { data: Buffer; sheet?: string },
  log?: Log,
): Promise<ReuploadResult> {
  const imp = await loadImport(db, user, id);
  assertEditable(imp);
  const parsed = await parseUpload(input.data, { sheet: input.sheet });
  const rowIdCol = parsed.headers.findIndex((h) => h.trim().toLowerCase() === "row_id");
  if (rowIdCol < 0)
    throw badRequest(
      "The file has no row_id column: upload the error report of this import, corrected",
      "file",
    );
  const colOf = new Map(parsed.headers.map((h, i) => [h, i]));
  const failed = new Set(
    (
      await db.prisma.$queryRawUnsafe<{ row_id: number }[]>(
        `SELECT row_id FROM product_import_rows WHERE import_id = $1 AND NOT deleted AND error_count > 0`,
        id,
      )
    ).map((r) => r.row_id),
  );
  const old = new Map(
    (
      await db.prisma.$queryRawUnsafe<{ row_id: number; raw: string[] }[]>(
        `SELECT row_id, raw FROM product_import_rows WHERE import_id = $1`,
        id,
      )
    ).map((r) => [r.row_id, r.raw]),
  );
  let nextId = Math.max(0, ...old.keys()) + 1;
  const replaced: { row_id: number; raw: string[] }[] = [];
  const added: { row_id: number; raw: string[] }[] = [];
  let ignored = 0;
  for (const line of parsed.rows) {
    const cell = (h: string, fallback: string) => {
      const i = colOf.get(h);
      return i === undefined ? fallback : unprefix(line[i] ?? "");
    };
    const rowIdText = (line[rowIdCol] ?? "").trim();
    if (rowIdText === "") {
      added.push({ row_id: nextId++, raw: imp.headers.map((h) => cell(h, "")) });
      continue;
    }
    const rowId = /^\d{1,9}$/.test(rowIdText) ? Number(rowIdText) : null;
    if (rowId === null || !failed.has(rowId)) {
      ignored++;
      continue;
    }
    const before = old.get(rowId) ?? [];
    replaced.push({ row_id: rowId, raw: imp.headers.map((h, i) => cell(h, before[i] ?? "")) });
    failed.delete(rowId);
  }
  await db.prisma.$transaction(async (tx) => {
    for (let i = 0; i < replaced.length; i += CHUNK)
      await tx.$executeRawUnsafe(
        `UPDATE product_import_rows r SET raw = x.raw, edits = '{}'::jsonb
           FROM jsonb_to_recordset($2::jsonb) AS x(row_id int, raw jsonb)
          WHERE r.import_id = $1 AND r.row_id = x.row_id`,
        id,
        JSON.stringify(replaced.slice(i, i + CHUNK)),
      );
    for (let i = 0; i < added.length; i += CHUNK)
      await tx.$executeRawUnsafe(
        `INSERT INTO product_import_rows (import_id, row_id, raw)
         SELECT $1, x.row_id, x.raw FROM jsonb_to_recordset($2::jsonb) AS x(row_id int, raw jsonb)`,
        id,
        JSON.stringify(added.slice(i, i + CHUNK)),
      );
  }, TX);
  await recheckAll(db, imp);
  emitRowsChecked({ db, importId: id, rowIds: "all" }, log);
  return { replaced: replaced.length, added: added.length, ignored, import: await getImport(db, user, id) };
}
