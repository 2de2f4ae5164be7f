// Bulk writes of an import's rows. Tens of thousands of rows go through COPY (CSV text streamed
// to the database, no JSON document of the whole batch to build and parse); a handful go through
// one UPDATE. A row's check_hash (a hash of what its check wrote) lets a re-check skip the rows
// whose result did not change, so re-checking an untouched import writes nothing.
import { hash } from "node:crypto";
import type { Finding, ImportFieldKey } from "../../../shared/product-import.ts";
import type { Database, SqlConnection } from "../../db/database.ts";
import type { Values } from "./rules.ts";

/** What a rule check writes for one row. */
export interface CheckedRowOut {
  rowId: number;
  values: Values;
  fromTemplate: ImportFieldKey[];
  findings: Finding[];
  skuKey: string | null;
  barcodeKey: string | null;
  hash: string;
}

export function severityCounts(findings: Finding[]): { errors: number; warnings: number } {
  let errors = 0;
  let warnings = 0;
  for (const f of findings) {
    if (f.severity === "error") errors++;
    else if (f.severity === "warning") warnings++;
  }
  return { errors, warnings };
}

/** The hash of a check's output (values, template fields, findings, keys): equal hashes, equal rows. */
export function checkHash(r: Omit<CheckedRowOut, "hash" | "rowId">): string {
  return hash(
    "sha1",
    JSON.stringify([r.values, r.fromTemplate, r.findings, r.skuKey, r.barcodeKey]),
    "base64",
  );
}

/** One CSV field for COPY … (FORMAT csv, FORCE_NULL): null is an empty field. */
function field(v: string | number | null | undefined): string {
  if (v == null) return "";
  const s = typeof v === "number" ? String(v) : v;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** A text[] literal of plain words (field keys). */
export function textArray(list: readonly string[]): string {
  return `{${list.join(",")}}`;
}

/** The lines of `items` as CSV, about `per` lines a chunk, built as they are read. */
export async function* csvChunks<T>(
  items: Iterable<T>,
  line: (item: T) => (string | number | null | undefined)[],
  per = 1000,
): AsyncGenerator<Buffer> {
  let parts: string[] = [];
  for (const item of items) {
    parts.push(line(item).map(field).join(","));
    if (parts.length >= per) {
      yield Buffer.from(`${parts.join("\n")}\n`);
      parts = [];
    }
  }
  if (parts.length) yield Buffer.from(`${parts.join("\n")}\n`);
}

/** Runs fn on a connection of its own (PostgreSQL) or the embedded one (PGlite). */
export async function withConnection<T>(db: Database, fn: (conn: SqlConnection) => Promise<T>): Promise<T> {
  const conn = await db.connect();
  let failed = false;
  try {
    return await fn(conn);
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    await conn.release(failed);
  }
}

/** From this many rows on, a bulk write refreshes the table's statistics (see analyzeAfterBulk). */
export const ANALYZE_FROM_ROWS = 5000;

/**
 * Refreshes a table's planner statistics after a bulk write of `rows` rows, so the next queries
 * are planned for what the table now holds rather than for it as it was (autovacuum may be slow
 * to do it, or off). A sample of the table: a fraction of a second for 50,000 rows.
 */
export async function analyzeAfterBulk(db: Database, table: string, rows: number): Promise<void> {
  if (rows < ANALYZE_FROM_ROWS) return;
  // Only an optimisation: the write it follows has succeeded whatever happens here.
  await withConnection(db, (conn) => conn.exec(`ANALYZE ${table}`)).catch(() => {});
}

const CHECKED_COLUMNS = [
  "row_id",
  "values",
  "from_template",
  "findings",
  "error_count",
  "warning_count",
  "sku_key",
  "barcode_key",
  "check_hash",
] as const;

function checkedLine(c: CheckedRowOut) {
  const n = severityCounts(c.findings);
  return [
    c.rowId,
    JSON.stringify(c.values),
    textArray(c.fromTemplate),
    JSON.stringify(c.findings),
    n.errors,
    n.warnings,
    c.skuKey,
    c.barcodeKey,
    c.hash,
  ];
}

/** New rows of an import, with the file's cells and their check. */
export async function insertCheckedRows(
  tx: SqlConnection,
  importId: number,
  rows: Iterable<{ raw: string[]; checked: CheckedRowOut }>,
): Promise<number> {
  return tx.copyCsv({
    table: "product_import_rows",
    columns: ["import_id", "raw", ...CHECKED_COLUMNS],
    header: false,
    source: csvChunks(rows, (r) => [importId, JSON.stringify(r.raw), ...checkedLine(r.checked)]),
  });
}

/** Rows this many or fewer are written with one UPDATE of a JSON list; more go through COPY. */
const SMALL = 500;

const SET_CHECKED = `
  validation = CASE WHEN r."values" = x."values" THEN r.validation ELSE '{}'::jsonb END,
  "values" = x."values", from_template = x.from_template, findings = x.findings,
  error_count = x.error_count, warning_count = x.warning_count,
  sku_key = x.sku_key, barcode_key = x.barcode_key, check_hash = x.check_hash`;

/**
 * Writes checked rows back (inside the caller's transaction); a row whose values changed loses the
 * validation steps' findings.
 */
export async function storeCheckedRows(
  tx: SqlConnection,
  importId: number,
  rows: CheckedRowOut[],
): Promise<void> {
  if (rows.length === 0) return;
  if (rows.length <= SMALL) {
    const payload = rows.map((c) => {
      const n = severityCounts(c.findings);
      return {
        row_id: c.rowId,
        values: c.values,
        from_template: c.fromTemplate,
        findings: c.findings,
        error_count: n.errors,
        warning_count: n.warnings,
        sku_key: c.skuKey,
        barcode_key: c.barcodeKey,
        check_hash: c.hash,
      };
    });
    await tx.execute(
      `UPDATE product_import_rows r SET ${SET_CHECKED}
         FROM jsonb_to_recordset($2::jsonb) AS x(row_id int, "values" jsonb, from_template text[],
              findings jsonb, error_count int, warning_count int, sku_key text, barcode_key text,
              check_hash text)
        WHERE r.import_id = $1 AND r.row_id = x.row_id`,
      [importId, JSON.stringify(payload)],
    );
    return;
  }
  await tx.exec(
    `CREATE TEMP TABLE product_import_rows_in (row_id int PRIMARY KEY, "values" jsonb,
       from_template text[], findings jsonb, error_count int, warning_count int, sku_key text,
       barcode_key text, check_hash text) ON COMMIT DROP`,
  );
  await tx.copyCsv({
    table: "product_import_rows_in",
    columns: CHECKED_COLUMNS,
    header: false,
    source: csvChunks(rows, checkedLine),
  });
  await tx.exec("ANALYZE product_import_rows_in");
  await tx.execute(
    `UPDATE product_import_rows r SET ${SET_CHECKED}
       FROM product_import_rows_in x
      WHERE r.import_id = $1 AND r.row_id = x.row_id`,
    [importId],
  );
  await tx.exec("DROP TABLE product_import_rows_in");
}
