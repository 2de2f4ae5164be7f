// Import phase: every file is COPYed into a typed TEMP staging table (COPY itself rejects bad
// numbers and dates, naming line and column), checked (required columns, duplicates, enumerations,
// references), and only then applied to the live tables with set-based SQL.
import { CopyError, type SqlConnection } from "../db/database.ts";
import type { DataSource } from "./source.ts";
import { SourceError } from "./source.ts";
import type { StepContext } from "./steps.ts";
import { type ColumnDef, ENUM_COLUMNS, IMPORTED_TABLES, type TableDef, targetOf } from "./tables.ts";

export interface TableCounts {
  added: number;
  updated: number;
  deleted: number;
  skipped: number;
  total: number;
}

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;
const stagingOf = (def: TableDef) => `stg_${def.table}`;
const TYPE_WORDS: Record<ColumnDef["type"], string> = {
  int: "a whole number",
  decimal: "a decimal number",
  bool: "true or false",
  date: "a date (YYYY-MM-DD)",
  timestamp: "a timestamp (YYYY-MM-DDTHH:MM:SSZ)",
  text: "text",
};

function describeCopyError(def: TableDef, err: CopyError): string {
  const where = `${def.file} line ${err.line ?? "?"}`;
  const column = def.columns.find((c) => c.name === err.column);
  switch (err.code) {
    case "22P02": // invalid_text_representation
    case "22007": // invalid_datetime_format
    case "22008": // datetime_field_overflow
      return `${where}, column ${err.column}: "${err.value}" is not ${column ? TYPE_WORDS[column.type] : "valid"}`;
    case "22003": // numeric_value_out_of_range
      return `${where}, column ${err.column}: "${err.value}" is out of range`;
    case "23502": {
      // not_null_violation: the message names the column
      const col = /column "([^"]+)"/.exec(err.message)?.[1] ?? err.column;
      return `${where}, column ${col}: a value is required`;
    }
    case "23505": {
      const key = /Key \((.+)\)=\((.+)\) already exists/.exec(err.detail ?? "");
      const column = key?.[1] ?? def.key.join(", ");
      const what = def.key.join(", ") === column ? "duplicate key" : "duplicate value";
      return `${where}, column ${column}: ${what} ${key?.[2] ?? ""} (already on an earlier line)`;
    }
    case "22P04": // bad_copy_file_format (missing/extra columns on a line)
      return `${where}: ${err.message}`;
    default:
      return `${where}${err.column ? `, column ${err.column}` : ""}: ${err.message}`;
  }
}

/**
 * Checks a file's header (no repeated or missing required column) and answers its columns in file
 * order: the CSV name of each known column, `_extra_<i>` for a column the table does not have.
 */
export function fileColumnsOf(def: TableDef, header: readonly string[]): string[] {
  const known = new Map(def.columns.map((c) => [c.name, c]));
  const seen = new Set<string>();
  for (const name of header) {
    if (known.has(name) && seen.has(name))
      throw new SourceError(`${def.file} line 1: column ${name} appears twice`);
    seen.add(name);
  }
  const missing = def.columns.filter((c) => c.required && !seen.has(c.name));
  if (missing.length) {
    throw new SourceError(
      `${def.file} line 1: missing required column ${missing.map((c) => c.name).join(", ")}`,
    );
  }
  // Columns in file order; unknown ones land in throwaway text columns.
  return header.map((name, i) => (known.has(name) ? name : `_extra_${i}`));
}

/** Loads one file into its staging table; answers the number of rows. */
async function stageFile(
  conn: SqlConnection,
  source: DataSource,
  def: TableDef,
  step: StepContext,
): Promise<number> {
  const opened = await source.open(def.file);
  const fileColumns = fileColumnsOf(def, opened.header);
  const extraNames = fileColumns.filter((n) => n.startsWith("_extra_"));
  const staging = stagingOf(def);
  const columnSql = def.columns.map(
    (c) => `${q(c.name)} ${c.sql}${c.required ? " NOT NULL" : ""}${c.unique ? " UNIQUE" : ""}`,
  );
  await conn.exec(`DROP TABLE IF EXISTS ${q(staging)};
    CREATE TEMP TABLE ${q(staging)} (
      _line bigserial,
      ${[...columnSql, ...extraNames.map((n) => `${q(n)} text`)].join(",\n      ")},
      PRIMARY KEY (${def.key.map(q).join(", ")})
    )`);
  let rows: number;
  try {
    rows = await conn.copyCsv({
      table: staging,
      columns: fileColumns,
      source: opened.body,
      header: true,
      signal: step.signal,
      onProgress: (bytes) => step.progress({ current: bytes, total: opened.size, unit: "bytes" }),
    });
  } catch (err) {
    if (err instanceof CopyError) throw new SourceError(describeCopyError(def, err));
    throw err;
  }
  // One scan for what COPY cannot check: empty required text and values outside an enumeration.
  const checks: { sql: string; message: (line: string, value: string) => string }[] = [
    ...def.columns
      .filter((c) => c.required && c.type === "text")
      .map((c) => ({
        sql: `${q(c.name)} = ''`,
        message: (line: string) => `${def.file} line ${line}, column ${c.name}: a value is required`,
      })),
    ...Object.entries(ENUM_COLUMNS[def.file] ?? {}).map(([column, allowed]) => ({
      sql: `${q(column)} <> ALL(ARRAY[${allowed.map((a) => `'${a.replace(/'/g, "''")}'`).join(", ")}])`,
      message: (line: string, value: string) =>
        `${def.file} line ${line}, column ${column}: "${value}" is not one of ${allowed.join(", ")}`,
    })),
  ];
  if (checks.length) {
    const failing = checks.map((c, i) => `CASE WHEN ${c.sql} THEN ${i} END`).join(", ");
    const valueCase = checks
      .map((c, i) => {
        const col = /^"((?:[^"]|"")+)"/.exec(c.sql)![0];
        return `WHEN ${c.sql} THEN ${col}::text /* ${i} */`;
      })
      .join(" ");
    const bad = await conn.query<{ line: string; check: number; value: string }>(
      `SELECT _line AS line, COALESCE(${failing}) AS check, CASE ${valueCase} END AS value
       FROM ${q(staging)} WHERE ${checks.map((c) => `(${c.sql})`).join(" OR ")} ORDER BY _line LIMIT 1`,
    );
    if (bad[0]) {
      const line = await lineOfRecord(source, def.file, Number(bad[0].line));
      throw new SourceError(checks[bad[0].check]!.message(String(line), bad[0].value));
    }
  }
  return rows;
}

export async function stageAll(
  conn: SqlConnection,
  source: DataSource,
  step: (name: string, fn: (ctx: StepContext) => Promise<number>) => Promise<number>,
): Promise<Record<string, number>> {
  const staged: Record<string, number> = {};
  for (const def of IMPORTED_TABLES) {
    staged[def.table] = await step(`Load ${def.file}`, (ctx) => stageFile(conn, source, def, ctx));
  }
  return staged;
}

/** Every reference must point at a row of the new data (not the old), so the result is consistent. */
export async function checkReferences(conn: SqlConnection, source: DataSource): Promise<number> {
  const byFile = new Map(IMPORTED_TABLES.map((d) => [d.file, d]));
  let checked = 0;
  for (const def of IMPORTED_TABLES) {
    for (const ref of def.references) {
      const target = byFile.get(ref.table)!;
      const bad = await conn.query<{ line: string; value: string }>(
        `SELECT s._line AS line, s.${q(ref.column)}::text AS value FROM ${q(stagingOf(def))} s
         WHERE s.${q(ref.column)} IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM ${q(stagingOf(target))} r WHERE r.${q(ref.key)} = s.${q(ref.column)})
         ORDER BY s._line LIMIT 1`,
      );
      if (bad[0]) {
        const line = await lineOfRecord(source, def.file, Number(bad[0].line));
        throw new SourceError(
          `${def.file} line ${line}, column ${ref.column}: ${bad[0].value} does not match any ${ref.key} in ${ref.table}`,
        );
      }
      checked++;
    }
  }
  return checked;
}

function sourceExpr(c: ColumnDef, alias = "s"): string {
  const col = `${alias}.${q(c.name)}`;
  return c.default !== undefined ? `COALESCE(${col}, ${c.default})` : col;
}

/**
 * Full Reset of one table: replace every row. Runs inside the run's transaction. The table's indexes
 * are dropped and rebuilt around the load (building an index once, sorted, is several times faster
 * than maintaining it row by row); their exact definitions are read back from the catalog, so names
 * and columns stay what the migrations made.
 */
export async function replaceTable(conn: SqlConnection, def: TableDef): Promise<TableCounts> {
  const cols = def.columns.map((c) => q(targetOf(c))).join(", ");
  // TRUNCATE: fast, and readers wait for the commit instead of seeing a half-filled table.
  await conn.exec(`TRUNCATE ${q(def.table)}`);
  const indexes = await conn.query<{ name: string; definition: string; constraint_def: string | null }>(
    `SELECT i.relname AS name, pg_get_indexdef(x.indexrelid) AS definition,
            (SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c WHERE c.conindid = x.indexrelid AND c.contype = 'p') AS constraint_def
     FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
     WHERE x.indrelid = $1::regclass`,
    [def.table],
  );
  for (const ix of indexes) {
    await conn.exec(
      ix.constraint_def
        ? `ALTER TABLE ${q(def.table)} DROP CONSTRAINT ${q(ix.name)}`
        : `DROP INDEX ${q(ix.name)}`,
    );
  }
  const added = await conn.execute(
    `INSERT INTO ${q(def.table)} (${cols}) SELECT ${def.columns.map((c) => sourceExpr(c)).join(", ")} FROM ${q(stagingOf(def))} s`,
  );
  for (const ix of indexes) {
    await conn.exec(
      ix.constraint_def
        ? `ALTER TABLE ${q(def.table)} ADD CONSTRAINT ${q(ix.name)} ${ix.constraint_def}`
        : ix.definition,
    );
  }
  return { added, updated: 0, deleted: 0, skipped: 0, total: added };
}

/** Full Update of one table: delete vanished keys, update changed rows, add new ones. */
export async function mergeTable(conn: SqlConnection, def: TableDef): Promise<TableCounts> {
  const staging = q(stagingOf(def));
  const live = q(def.table);
  const keyCols = def.columns.filter((c) => def.key.includes(c.name));
  const valueCols = def.columns.filter((c) => !def.key.includes(c.name));
  const match = keyCols.map((c) => `l.${q(targetOf(c))} = s.${q(c.name)}`).join(" AND ");

  const deleted = await conn.execute(
    `DELETE FROM ${live} l WHERE NOT EXISTS (SELECT 1 FROM ${staging} s WHERE ${match})`,
  );
  let updated = 0;
  if (valueCols.length) {
    const set = valueCols.map((c) => `${q(targetOf(c))} = ${sourceExpr(c)}`).join(", ");
    const liveRow = valueCols.map((c) => `l.${q(targetOf(c))}`).join(", ");
    const srcRow = valueCols.map((c) => sourceExpr(c)).join(", ");
    updated = await conn.execute(
      `UPDATE ${live} l SET ${set} FROM ${staging} s WHERE ${match} AND (${liveRow}) IS DISTINCT FROM (${srcRow})`,
    );
  }
  const cols = def.columns.map((c) => q(targetOf(c))).join(", ");
  const added = await conn.execute(
    `INSERT INTO ${live} (${cols}) SELECT ${def.columns.map((c) => sourceExpr(c)).join(", ")} FROM ${staging} s
     WHERE NOT EXISTS (SELECT 1 FROM ${live} l WHERE ${match})`,
  );
  const [{ total }] = (await conn.query<{ total: string }>(`SELECT count(*) AS total FROM ${staging}`)) as [
    { total: string },
  ];
  const n = Number(total);
  return { added, updated, deleted, skipped: n - added - updated, total: n };
}

export async function recordSync(conn: SqlConnection, tables: readonly string[], at: Date): Promise<void> {
  await conn.query(
    `INSERT INTO sync_status (table_name, last_sync_timestamp) SELECT unnest($1::text[]), $2
     ON CONFLICT (table_name) DO UPDATE SET last_sync_timestamp = EXCLUDED.last_sync_timestamp`,
    [tables, at],
  );
}

export async function dropStaging(conn: SqlConnection): Promise<void> {
  await conn.exec(IMPORTED_TABLES.map((d) => `DROP TABLE IF EXISTS ${q(stagingOf(d))};`).join("\n"));
}

/**
 * The file line where data record `record` (1 = the first after the header) starts. Records and
 * lines differ once a quoted field holds a newline; only error messages need this, so it rescans.
 */
export async function lineOfRecord(source: DataSource, file: string, record: number): Promise<number> {
  const { body } = await source.open(file);
  let records = 0; // complete records so far, the header included
  let lines = 1;
  let inQuote = false;
  for await (const chunk of body) {
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i];
      if (c === 0x22) inQuote = !inQuote;
      else if (c === 0x0a) {
        lines++;
        if (!inQuote && ++records === record) {
          await (body as AsyncGenerator<Buffer>).return?.(undefined);
          return lines;
        }
      }
    }
  }
  return record + 1;
}
