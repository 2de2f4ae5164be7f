// Dry run, submit, the export for the shop system, the error report, and the created products store.
import fs from "node:fs/promises";
import path from "node:path";
import { type Zippable, zipSync } from "fflate";
import type { CurrentUser } from "../../../shared/auth.ts";
import { PRODUCT_CSV_COLUMNS } from "../../../shared/data-format.ts";
import {
  type CreatedProductItem,
  type DryRunSummary,
  type Finding,
  IMPORT_FIELD_BY_KEY,
  type ImageRef,
  neutraliseFormula,
  type ProductImport,
} from "../../../shared/product-import.ts";
import type { Database } from "../../db/database.ts";
import { conflict } from "../../errors.ts";
import type { ImageStorage } from "../../storage/image-storage.ts";
import { EXTENSIONS } from "../images/images.service.ts";
import { type ComputedRow, getImport, loadImport, recheckAll } from "./productImport.service.ts";
import { endProgress, setProgress } from "./progress.ts";
import { analyzeAfterBulk, csvChunks, textArray, withConnection } from "./rowstore.ts";
import { fieldColumns } from "./rules.ts";

/** RFC 4180 text: a field with a comma, quote or line break is quoted, quotes doubled. */
export function toCsv(lines: readonly (readonly (string | number)[])[], eol = "\n"): string {
  const field = (v: string | number) => {
    const s = String(v);
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return lines.map((l) => l.map(field).join(",")).join(eol) + eol;
}

/** The columns of products.csv, in docs/data-format.md's order. */
export const EXPORT_PRODUCT_COLUMNS = PRODUCT_CSV_COLUMNS;

interface RowState {
  row_id: number;
  deleted: boolean;
  error_count: number;
  warning_count: number;
  findings: Finding[];
  validation: Record<string, Finding[]>;
  images: ImageRef[];
}

function group(list: { field: string; message: string }[]) {
  const by = new Map<string, { field: string; message: string; rows: number }>();
  for (const f of list) {
    // Messages that quote a value are grouped by their rule's wording.
    const message = f.message
      .replace(/"[^"]*"/g, '"…"')
      .replace(/\b\d{6,}\b/g, "…")
      .replace(/row \d+(?:, \d+)*(?: and \d+ more)?/, "row …");
    const key = `${f.field}\u0000${message}`;
    const g = by.get(key) ?? { field: f.field, message, rows: 0 };
    g.rows++;
    by.set(key, g);
  }
  return [...by.values()].sort((a, b) => b.rows - a.rows).slice(0, 50);
}

function summarise(rows: RowState[]): DryRunSummary {
  const live = rows.filter((r) => !r.deleted);
  const blocked = live.filter((r) => r.error_count > 0);
  const errors: { field: string; message: string }[] = [];
  const warnings: { field: string; message: string }[] = [];
  for (const r of live) {
    const all = [...r.findings, ...Object.values(r.validation).flat()];
    const seenE = new Set<string>();
    const seenW = new Set<string>();
    for (const f of all) {
      const label = f.field === "row" ? "Row" : (IMPORT_FIELD_BY_KEY[f.field]?.label ?? f.field);
      const target = f.severity === "error" ? errors : warnings;
      const seen = f.severity === "error" ? seenE : seenW;
      const key = `${label}:${f.message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      target.push({ field: label, message: f.message });
    }
  }
  return {
    would_create: live.length - blocked.length,
    blocked: blocked.length,
    with_warnings: live.filter((r) => r.error_count === 0 && r.warning_count > 0).length,
    deleted: rows.length - live.length,
    blocked_by: group(errors),
    warnings_by: group(warnings),
    with_images: live.filter((r) => r.error_count === 0 && r.images.length > 0).length,
    at: new Date(),
  };
}

async function rowStates(db: Database, importId: number): Promise<RowState[]> {
  return withConnection(db, (conn) =>
    conn.query<RowState>(
      `SELECT row_id, deleted, error_count, warning_count, findings, validation, images
         FROM product_import_rows WHERE import_id = $1 ORDER BY row_id`,
      [importId],
    ),
  );
}

/** The columns of created_products a submit writes, in the order of createdLine(). */
const CREATED_COLUMNS = [
  "import_id",
  "row_id",
  "title",
  "sku",
  "barcode",
  "brand_id",
  "vendor_id",
  "product_type",
  "line",
  "description",
  "price",
  "regular_price",
  "cost_price",
  "stock_quantity",
  "moq",
  "case_qty",
  "harmonized_tariff_code",
  "weight",
  "length",
  "width",
  "height",
  "tax_code",
  "size_cat",
  "shipping_restrictions",
  "categories",
  "images",
  "kind",
  "created_at",
  "created_by",
] as const;

/** What a submit would create now: every row re-checked against today's catalogue; nothing written to it. */
export async function dryRun(db: Database, user: CurrentUser, id: number): Promise<DryRunSummary> {
  const imp = await loadImport(db, user, id);
  if (imp.status === "submitted" || imp.status === "exported")
    throw conflict(`Import ${id} was already submitted`);
  await recheckAll(db, imp);
  const summary = summarise(await rowStates(db, id));
  await db.prisma.productImport.update({ where: { id }, data: { summary: summary as object } });
  return summary;
}

/**
 * Creates a product for every row without errors, in one transaction: all of them, or (on any
 * failure) none. Pids come from the created products' own range.
 */
export async function submitImport(
  deps: { db: Database; storage: ImageStorage; exportDir: string | null; log?: (err: unknown) => void },
  user: CurrentUser,
  id: number,
): Promise<{ import: ProductImport; summary: DryRunSummary }> {
  const { db } = deps;
  const imp = await loadImport(db, user, id);
  if (imp.status === "submitted" || imp.status === "exported")
    throw conflict(`Import ${id} was already submitted`);
  setProgress(id, { step: "submit", phase: "checking", done: 0, total: imp.row_count });
  try {
    const result = await runSubmit(deps, user, imp);
    endProgress(id, {
      step: "submit",
      phase: "done",
      done: result.summary.would_create,
      total: result.summary.would_create,
    });
    return result;
  } catch (err) {
    endProgress(id, { step: "submit", phase: "failed", done: 0, total: 0 });
    throw err;
  }
}

async function runSubmit(
  deps: { db: Database; storage: ImageStorage; exportDir: string | null; log?: (err: unknown) => void },
  user: CurrentUser,
  imp: Awaited<ReturnType<typeof loadImport>>,
): Promise<{ import: ProductImport; summary: DryRunSummary }> {
  const { db } = deps;
  const id = imp.id;
  const computed = await recheckAll(db, imp);
  const states = await rowStates(db, id);
  const ok = new Map(states.filter((s) => !s.deleted && s.error_count === 0).map((s) => [s.row_id, s]));
  const rows = computed.filter(
    (c): c is ComputedRow & { product: NonNullable<ComputedRow["product"]> } =>
      ok.has(c.rowId) && c.product !== null,
  );
  if (rows.length === 0)
    throw conflict("Nothing to submit: every row has errors (fix them or delete the rows)");
  const images = await resolveImages(
    db,
    id,
    rows.map((r) => ok.get(r.rowId)!.images),
  );
  const now = new Date();
  const summary = summarise(states);
  const total = rows.length;
  setProgress(id, { step: "submit", phase: "creating", done: 0, total });
  const pids = await withConnection(db, (conn) =>
    conn.transaction(async (tx) => {
      // Claims the import: a second submit running at once finds it submitted and stops.
      const claimed = await tx.execute(
        `UPDATE product_imports SET status = 'submitted', submitted_at = $2, submitted_by = $3, updated_at = $2
          WHERE id = $1 AND status IN ('draft', 'checked')`,
        [id, now, user.id],
      );
      if (claimed !== 1) throw conflict(`Import ${id} was already submitted`);
      // One COPY in row order: the pids (created_products' sequence) follow the rows.
      let done = 0;
      const at = now.toISOString();
      await tx.copyCsv({
        table: "created_products",
        columns: CREATED_COLUMNS,
        header: false,
        source: csvChunks(rows.entries(), ([j, r]) => {
          const p = r.product;
          if (++done % 1000 === 0) setProgress(id, { step: "submit", phase: "creating", done, total });
          return [
            id,
            r.rowId,
            p.title,
            p.sku,
            p.barcode,
            p.brandId,
            p.vendorId,
            imp.product_type,
            p.line,
            p.description,
            p.price,
            p.regularPrice,
            p.costPrice,
            0,
            p.moq,
            p.caseQty,
            p.harmonizedTariffCode,
            p.weight,
            p.length,
            p.width,
            p.height,
            p.taxCode,
            p.sizeCat,
            p.shippingRestrictions,
            textArray(p.categories.map(String)),
            JSON.stringify(images[j]),
            "merchandise",
            at,
            user.id,
          ];
        }),
      });
      const [made] = await tx.query<{ n: number; first: number; last: number }>(
        `SELECT count(*)::int AS n, min(pid) AS first, max(pid) AS last FROM created_products WHERE import_id = $1`,
        [id],
      );
      const finalSummary = {
        ...summary,
        would_create: made?.n ?? 0,
        first_pid: made?.first ?? null,
        last_pid: made?.last ?? null,
      };
      await tx.execute(`UPDATE product_imports SET created_count = $2, summary = $3::jsonb WHERE id = $1`, [
        id,
        finalSummary.would_create,
        JSON.stringify(finalSummary),
      ]);
      return finalSummary;
    }),
  );
  await analyzeAfterBulk(db, "created_products", pids.would_create);
  if (deps.exportDir) {
    setProgress(id, {
      step: "submit",
      phase: "exporting",
      done: pids.would_create,
      total: pids.would_create,
    });
    try {
      await writeExportDir(deps, id);
      await db.prisma.productImport.update({
        where: { id },
        data: { status: "exported", exportedAt: new Date() },
      });
    } catch (err) {
      deps.log?.(err);
    }
  }
  return { import: await getImport(db, user, id), summary: pids };
}

interface StoredImage {
  source: "library" | "upload";
  id: number;
  hash: string;
  mime: string;
  filename: string;
}

async function resolveImages(db: Database, importId: number, lists: ImageRef[][]): Promise<StoredImage[][]> {
  const lib = new Set<number>();
  const up = new Set<number>();
  for (const l of lists) for (const i of l) (i.source === "library" ? lib : up).add(i.id);
  const [libRows, upRows] = await Promise.all([
    lib.size ? db.prisma.reusableImage.findMany({ where: { id: { in: [...lib] } } }) : [],
    up.size ? db.prisma.productImportImage.findMany({ where: { id: { in: [...up] }, importId } }) : [],
  ]);
  const libById = new Map(libRows.map((r) => [r.id, r]));
  const upById = new Map(upRows.map((r) => [r.id, r]));
  return lists.map((l) =>
    l.flatMap((i) => {
      const r = i.source === "library" ? libById.get(i.id) : upById.get(i.id);
      return r
        ? [{ source: i.source, id: i.id, hash: r.contentHash, mime: r.mimeType, filename: r.filename }]
        : [];
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// Export

interface CreatedRecord {
  pid: number;
  title: string;
  sku: string;
  barcode: string | null;
  brand_id: number | null;
  vendor_id: number | null;
  line: string | null;
  description: string | null;
  price: string;
  regular_price: string | null;
  cost_price: string | null;
  stock_quantity: number;
  moq: number;
  case_qty: number;
  harmonized_tariff_code: string | null;
  weight: string | null;
  length: string | null;
  width: string | null;
  height: string | null;
  tax_code: string;
  size_cat: string | null;
  shipping_restrictions: string;
  categories: number[];
  images: StoredImage[];
  created_at: Date;
}

function decimalText(v: string | number | null, scale: number): string {
  if (v == null) return "";
  return Number(v).toFixed(scale);
}

/** products.csv, product_categories.csv and the image files, exactly as docs/data-format.md reads them. */
export async function buildExportFiles(
  db: Database,
  storage: ImageStorage,
  importId: number,
): Promise<Record<string, Uint8Array>> {
  const rows = await db.prisma.$queryRawUnsafe<CreatedRecord[]>(
    `SELECT pid, title, sku, barcode, brand_id, vendor_id, line, description, price::text, regular_price::text,
            cost_price::text, stock_quantity, moq, case_qty, harmonized_tariff_code, weight::text, length::text,
            width::text, height::text, tax_code, size_cat, shipping_restrictions, categories, images, created_at
       FROM created_products WHERE import_id = $1 ORDER BY pid`,
    importId,
  );
  const files: Record<string, Uint8Array> = {};
  const productLines: (string | number)[][] = [[...EXPORT_PRODUCT_COLUMNS]];
  const categoryLines: (string | number)[][] = [["pid", "category_id"]];
  for (const r of rows) {
    const imageNames: string[] = [];
    for (const [n, img] of r.images.entries()) {
      const file = await storage.open(img.hash, "original");
      if (!file) continue;
      const chunks: Buffer[] = [];
      for await (const c of file.stream) chunks.push(c as Buffer);
      const name = `images/${r.pid}-${n + 1}.${EXTENSIONS[img.mime] ?? "bin"}`;
      files[name] = new Uint8Array(Buffer.concat(chunks));
      imageNames.push(name);
    }
    productLines.push([
      r.pid,
      r.title,
      r.sku,
      r.barcode ?? "",
      r.brand_id ?? "",
      r.vendor_id ?? "",
      r.line ?? "",
      r.description ?? "",
      decimalText(r.price, 2),
      decimalText(r.regular_price, 2),
      decimalText(r.cost_price, 2),
      r.stock_quantity,
      r.moq,
      r.case_qty,
      r.harmonized_tariff_code ?? "",
      decimalText(r.weight, 2),
      decimalText(r.length, 2),
      decimalText(r.width, 2),
      decimalText(r.height, 2),
      r.tax_code,
      r.size_cat ?? "",
      r.shipping_restrictions,
      "true",
      "true",
      "false",
      r.created_at.toISOString(),
      "",
      imageNames[0] ?? "",
    ]);
    for (const c of r.categories) categoryLines.push([r.pid, c]);
  }
  files["products.csv"] = Buffer.from(toCsv(productLines));
  files["product_categories.csv"] = Buffer.from(toCsv(categoryLines));
  return files;
}

export async function exportZip(
  deps: { db: Database; storage: ImageStorage },
  user: CurrentUser,
  id: number,
): Promise<Buffer> {
  const imp = await loadImport(deps.db, user, id);
  if (imp.status !== "submitted" && imp.status !== "exported")
    throw conflict(`Import ${id} has not been submitted: there is nothing to export yet`);
  const files = await buildExportFiles(deps.db, deps.storage, id);
  const zippable: Zippable = {};
  for (const [name, data] of Object.entries(files))
    zippable[name] = [data, { level: name.endsWith(".csv") ? 6 : 0 }];
  const zip = Buffer.from(zipSync(zippable));
  await deps.db.prisma.productImport.update({
    where: { id },
    data: { status: "exported", exportedAt: imp.exported_at ?? new Date() },
  });
  return zip;
}

async function writeExportDir(
  deps: { db: Database; storage: ImageStorage; exportDir: string | null },
  id: number,
) {
  const files = await buildExportFiles(deps.db, deps.storage, id);
  const dir = path.join(deps.exportDir!, `import-${id}`);
  const tmp = `${dir}.partial`;
  await fs.rm(tmp, { recursive: true, force: true });
  for (const [name, data] of Object.entries(files)) {
    const target = path.join(tmp, name);
    await fs.mkdir(path.dirname(target), { recursive: true });
    await fs.writeFile(target, data);
  }
  await fs.rm(dir, { recursive: true, force: true });
  await fs.rename(tmp, dir);
}

// ---------------------------------------------------------------------------------------------
// Error report

/**
 * The original file's rows with `row_id` and `errors` added, for the supplier to fix and upload
 * again into the same import. A cell of a column mapped to a field edited in the grid shows the
 * edit (the errors are about the row as it stands, so the cells are too). Cells a spreadsheet
 * would run as a formula are prefixed with '.
 */
export async function errorReportCsv(db: Database, user: CurrentUser, id: number): Promise<string> {
  const imp = await loadImport(db, user, id);
  const rows = await db.prisma.$queryRawUnsafe<
    {
      row_id: number;
      raw: string[];
      edits: Record<string, string | null>;
      findings: Finding[];
      validation: Record<string, Finding[]>;
    }[]
  >(
    `SELECT row_id, raw, edits, findings, validation FROM product_import_rows
      WHERE import_id = $1 AND NOT deleted ORDER BY row_id`,
    id,
  );
  // The column each field is read from (as the rows' values are): an edit shows there.
  const fieldOf = new Map([...fieldColumns(imp.headers, imp.mapping.fields)].map(([f, i]) => [i, f]));
  const lines: string[][] = [[...imp.headers, "row_id", "errors"]];
  for (const r of rows) {
    const errors = [...r.findings, ...Object.values(r.validation).flat()]
      .filter((f) => f.severity === "error")
      .map(
        (f) =>
          `${f.field === "row" ? "Row" : (IMPORT_FIELD_BY_KEY[f.field]?.label ?? f.field)}: ${f.message}`,
      )
      .join("; ");
    const cells = imp.headers.map((_, i) => {
      const field = fieldOf.get(i);
      return field && Object.hasOwn(r.edits ?? {}, field) ? (r.edits[field] ?? "") : (r.raw[i] ?? "");
    });
    lines.push([...cells, String(r.row_id), errors]);
  }
  return `\uFEFF${toCsv(
    lines.map((l) => l.map(neutraliseFormula)),
    "\r\n",
  )}`;
}

// ---------------------------------------------------------------------------------------------
// Created products

/**
 * Marks created products that the shop system now has (the source's products carry the same SKU,
 * case-insensitively, or the same barcode): they leave the open list, with the shop's pid shown.
 */
export async function matchCreatedProducts(db: Database): Promise<number> {
  return db.prisma.$executeRawUnsafe(
    `UPDATE created_products c SET shop_pid = m.pid, matched_at = now()
       FROM (
         SELECT DISTINCT ON (c2.pid) c2.pid AS created_pid, p.pid
           FROM created_products c2
           JOIN products p ON lower(p.sku) = lower(c2.sku) OR (c2.barcode IS NOT NULL AND p.barcode = c2.barcode)
          WHERE c2.shop_pid IS NULL
          ORDER BY c2.pid, (p.pid = c2.pid) DESC, p.pid
       ) m
      WHERE c.pid = m.created_pid AND c.shop_pid IS NULL`,
  );
}

export async function listCreatedProducts(
  db: Database,
  user: CurrentUser,
  id: number,
  { open }: { open?: boolean } = {},
): Promise<CreatedProductItem[]> {
  await loadImport(db, user, id);
  await matchCreatedProducts(db);
  const rows = await db.prisma.createdProduct.findMany({
    where: { importId: id, ...(open ? { shopPid: null } : {}) },
    orderBy: { pid: "asc" },
    take: 1000,
    select: {
      pid: true,
      importId: true,
      title: true,
      sku: true,
      barcode: true,
      price: true,
      createdAt: true,
      shopPid: true,
      matchedAt: true,
    },
  });
  return rows.map((r) => ({
    pid: r.pid,
    import_id: r.importId,
    title: r.title,
    sku: r.sku,
    barcode: r.barcode,
    price: Number(r.price),
    created_at: r.createdAt,
    shop_pid: r.shopPid,
    matched_at: r.matchedAt,
  }));
}

/**
 * The rows a submit did not create (they had errors then), as a new import of this user's (mapping confirmed):
 * the same file, settings and mapping, each row with its edits and images, under its own row number.
 * That is how they are fixed and submitted; the submitted import stays as it was.
 */
export async function continueWithRowsLeft(
  db: Database,
  user: CurrentUser,
  id: number,
): Promise<ProductImport> {
  const imp = await loadImport(db, user, id);
  if (imp.status !== "submitted" && imp.status !== "exported")
    throw conflict(`Import ${id} is not submitted: fix its rows where they are`);
  const LEFT = `FROM product_import_rows r
    WHERE r.import_id = $1 AND NOT r.deleted
      AND NOT EXISTS (SELECT 1 FROM created_products c WHERE c.import_id = r.import_id AND c.row_id = r.row_id)`;
  const newId = await db.prisma.$transaction(async (tx) => {
    // Once only: the rows go on in one import (unless that one was discarded). The submitted
    // import's row is locked first, so two clicks at once make one import.
    const [orig] = await tx.$queryRawUnsafe<{ continued_in: number | null }[]>(
      "SELECT (summary->>'continued_in')::int AS continued_in FROM product_imports WHERE id = $1 FOR UPDATE",
      id,
    );
    if (orig?.continued_in) {
      const [earlier] = await tx.$queryRawUnsafe<{ id: number }[]>(
        "SELECT id FROM product_imports WHERE id = $1 AND status <> 'discarded'",
        orig.continued_in,
      );
      if (earlier)
        throw conflict(`The rows left from import ${id} are already in import ${earlier.id}: continue there`);
    }
    const [left] = await tx.$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n ${LEFT}`, id);
    if (!left?.n) throw conflict(`Every row of import ${id} was created: no rows are left to continue with`);
    const [created] = await tx.$queryRawUnsafe<{ id: number }[]>(
      `INSERT INTO product_imports (owner_id, status, filename, file_type, encoding, delimiter, sheet, sheets,
         file_size, file_data, headers, company, product_type, template_id, mapping, row_count)
       SELECT $2, 'checked', left(filename, 200) || ' (rows left from import ' || id || ')', file_type, encoding,
         delimiter, sheet, sheets, file_size, file_data, headers, company, product_type, template_id, mapping, $3
       FROM product_imports WHERE id = $1
       RETURNING id`,
      id,
      user.id,
      left.n,
    );
    const nid = created!.id;
    await tx.$executeRawUnsafe(
      `INSERT INTO product_import_rows (import_id, row_id, raw, edits, "values", from_template, findings, validation,
         error_count, warning_count, sku_key, barcode_key, images, deleted, check_hash)
       SELECT $2, r.row_id, r.raw, r.edits, r."values", r.from_template, r.findings, r.validation, r.error_count,
         r.warning_count, r.sku_key, r.barcode_key, r.images, false, r.check_hash ${LEFT}`,
      id,
      nid,
    );
    // The images uploaded into the old import that these rows show: the same stored files, listed
    // under the new import, and the rows pointed at them.
    const used = await tx.$queryRawUnsafe<{ id: number }[]>(
      `SELECT DISTINCT (e->>'id')::int AS id
       FROM product_import_rows r, jsonb_array_elements(r.images) e
       WHERE r.import_id = $1 AND e->>'source' = 'upload'`,
      nid,
    );
    const map: { old_id: number; new_id: number }[] = [];
    for (const { id: oldId } of used) {
      const [copy] = await tx.$queryRawUnsafe<{ id: number }[]>(
        `INSERT INTO product_import_images (import_id, filename, mime_type, file_size, content_hash)
         SELECT $2, filename, mime_type, file_size, content_hash FROM product_import_images
         WHERE id = $1 AND import_id = $3
         RETURNING id`,
        oldId,
        nid,
        id,
      );
      if (copy) map.push({ old_id: oldId, new_id: copy.id });
    }
    if (map.length) {
      await tx.$executeRawUnsafe(
        `UPDATE product_import_rows r SET images = (
           SELECT jsonb_agg(CASE WHEN x.e->>'source' = 'upload' AND m.new_id IS NOT NULL
                                 THEN jsonb_build_object('source', 'upload', 'id', m.new_id) ELSE x.e END
                            ORDER BY x.ord)
           FROM jsonb_array_elements(r.images) WITH ORDINALITY AS x(e, ord)
           LEFT JOIN jsonb_to_recordset($2::jsonb) AS m(old_id int, new_id int) ON m.old_id = (x.e->>'id')::int
         )
         WHERE r.import_id = $1 AND jsonb_array_length(r.images) > 0`,
        nid,
        JSON.stringify(map),
      );
    }
    await tx.$executeRawUnsafe(
      `UPDATE product_imports SET summary = COALESCE(summary, '{}'::jsonb) || jsonb_build_object('continued_in', $2::int)
       WHERE id = $1`,
      id,
      nid,
    );
    return nid;
  });
  // Checked again against today's catalogue (the rows just created now exist there), and counted.
  await recheckAll(db, await loadImport(db, user, newId));
  return getImport(db, user, newId);
}
