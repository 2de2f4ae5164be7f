// Import phase: every file is COPYed into a typed TEMP staging table (COPY itself rejects bad
// numbers and dates, naming line and column), checked (required columns, duplicates, enumerations,
// references), and only then applied to the live tables with set-based SQL.
import { CopyError, type SqlConnection } from "../db/database.ts";
import {
  createTypeChecks,
  csvRecords,
  type Finding,
  type FindingKind,
  type Findings,
  recordsAsCsv,
} from "./findings.ts";
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
/** A re-read file's valid key values (restageWithFindings). */
const keysOf = (def: TableDef) => `stgk_${def.table}`;
const TYPE_WORDS: Record<ColumnDef["type"], string> = {
  int: "a whole number",
  decimal: "a decimal number",
  bool: "true or false",
  date: "a date (YYYY-MM-DD)",
  timestamp: "a timestamp (YYYY-MM-DD HH:MM:SS, with or without T, Z or an offset)",
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

/** Staged files whose `_line` is already the file's line (they were re-read), not the record number. */
export interface StagedFiles {
  /** File name → true when `_line` holds file lines */
  loaded: Map<string, boolean>;
}

/**
 * Loads one file into its staging table; answers the number of rows. Problems go to `findings`:
 * a file whose typed COPY fails is re-read to find every problem (restageWithFindings); the rows
 * without one are still staged, so the other files' references can be checked against them.
 */
async function stageFile(
  conn: SqlConnection,
  source: DataSource,
  def: TableDef,
  step: StepContext,
  findings: Findings,
  staged: StagedFiles,
  timeZone: string,
): Promise<number> {
  let opened: Awaited<ReturnType<DataSource["open"]>>;
  let fileColumns: string[];
  try {
    opened = await source.open(def.file);
    fileColumns = fileColumnsOf(def, opened.header);
  } catch (err) {
    if (!(err instanceof SourceError)) throw err;
    const header = /^\S+ line 1: /.test(err.message);
    findings.add({
      file: def.file,
      line: header ? 1 : 0,
      column: "",
      value: "",
      kind: header ? "columns" : "file",
      message: err.message,
    });
    return 0;
  }
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
  // A timestamp without a zone is read in SOURCE_TIMEZONE; the calculations work in UTC.
  await conn.query("SELECT set_config('TimeZone', $1, false)", [timeZone]);
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
    if (!(err instanceof CopyError)) throw err;
    if (step.signal?.aborted) throw err;
    // Only now is the file read again, to find every problem in it.
    rows = await restageWithFindings(conn, source, def, fileColumns, findings, describeCopyError(def, err));
    staged.loaded.set(def.file, true);
    return rows;
  } finally {
    await conn.exec("SET TIME ZONE 'UTC'");
  }
  staged.loaded.set(def.file, false);
  // One scan for what COPY cannot check: empty required text and values outside an enumeration.
  const checks = valueChecks(def, (c) => q(c));
  if (checks.length && !findings.truncated) {
    const found = await conn.query<{ line: string; check: number; value: string }>(
      `SELECT s.line, c.i AS check, c.value FROM (
         SELECT _line AS line, ${checks.map((c, i) => `CASE WHEN ${c.sql} THEN ${c.value} END AS v${i}`).join(", ")}
         FROM ${q(staging)} WHERE ${checks.map((c) => `(${c.sql})`).join(" OR ")}
         ORDER BY _line LIMIT ${findings.room + 1}) s
       CROSS JOIN LATERAL (VALUES ${checks.map((_, i) => `(${i}, s.v${i})`).join(", ")}) c(i, value)
       WHERE c.value IS NOT NULL ORDER BY s.line, c.i`,
    );
    const lines = await linesOfRecords(
      source,
      def.file,
      found.map((f) => Number(f.line)),
    );
    findings.addAll(
      found.map((f) => {
        const c = checks[f.check]!;
        const line = lines.get(Number(f.line)) ?? Number(f.line) + 1;
        return {
          file: def.file,
          line,
          column: c.column,
          value: f.value,
          kind: c.kind,
          message: c.message(line, f.value),
        };
      }),
    );
  }
  return rows;
}

interface ValueCheck {
  column: string;
  kind: FindingKind;
  /** True for a row with the problem */
  sql: string;
  /** The offending value as text (non-null where `sql` is true) */
  value: string;
  message: (line: number, value: string) => string;
}

/** Required text that is empty and values outside an enumeration (COPY checks neither). */
function valueChecks(def: TableDef, col: (name: string) => string): ValueCheck[] {
  return [
    ...def.columns
      .filter((c) => c.required && c.type === "text")
      .map((c) => ({
        column: c.name,
        kind: "required" as const,
        sql: `${col(c.name)} = ''`,
        value: `''`,
        message: (line: number) => `${def.file} line ${line}, column ${c.name}: a value is required`,
      })),
    ...Object.entries(ENUM_COLUMNS[def.file] ?? {}).map(([column, allowed]) => ({
      column,
      kind: "enumeration" as const,
      sql: `${col(column)} <> ALL(ARRAY[${allowed.map((a) => `'${a.replace(/'/g, "''")}'`).join(", ")}])`,
      value: `${col(column)}::text`,
      message: (line: number, value: string) =>
        `${def.file} line ${line}, column ${column}: "${value}" is not one of ${allowed.join(", ")}`,
    })),
  ];
}

/**
 * A file whose typed COPY failed: read it again record by record into an all-text table, find
 * every problem (malformed lines, values the column type refuses, missing required values,
 * values outside an enumeration, duplicate keys and unique values), then stage the rows without
 * a problem (the first of duplicates). `_line` holds the file line from here on.
 */
async function restageWithFindings(
  conn: SqlConnection,
  source: DataSource,
  def: TableDef,
  fileColumns: string[],
  findings: Findings,
  copyMessage: string,
): Promise<number> {
  const staging = q(stagingOf(def));
  const text = q(`stgt_${def.table}`);
  const before = findings.list.length;
  await conn.exec(`TRUNCATE ${staging};
    DROP TABLE IF EXISTS ${text};
    CREATE TEMP TABLE ${text} (_line bigint, ${fileColumns.map((n) => `${q(n)} text`).join(", ")})`);
  const opened = await source.open(def.file);
  const add = (line: number, kind: FindingKind, message: string, column = "", value = "") =>
    findings.add({ file: def.file, line, column, value, kind, message });
  let header = true;
  async function* body() {
    for await (const r of csvRecords(opened.body, (line) =>
      add(
        line,
        "format",
        `${def.file} line ${line}: a quoted value is not closed before the end of the file`,
      ),
    )) {
      if (header) {
        header = false;
        continue;
      }
      yield r;
    }
  }
  await conn.copyCsv({
    table: `stgt_${def.table}`,
    columns: ["_line", ...fileColumns],
    source: recordsAsCsv(body(), fileColumns.length, (r) =>
      add(
        r.line,
        "format",
        r.fields.length === 0
          ? `${def.file} line ${r.line}: an empty line`
          : `${def.file} line ${r.line}: ${r.fields.length} values where the header has ${fileColumns.length} columns`,
      ),
    ),
    header: false,
  });
  const typed = def.columns.filter((c) => c.type !== "text" && fileColumns.includes(c.name));
  const checkFn = await createTypeChecks(
    conn,
    typed.map((c) => c.sql),
  );
  const present = new Set(fileColumns);
  // Value problems, one query per column, in line order.
  for (const c of def.columns) {
    if (findings.truncated) break;
    if (!present.has(c.name)) {
      if (c.required) {
        // (fileColumnsOf already refused a missing required column)
      }
      continue;
    }
    const col = q(c.name);
    if (c.type !== "text") {
      const bad = await conn.query<{ line: string; value: string; code: string }>(
        `SELECT _line AS line, ${col} AS value, code FROM (
           SELECT _line, ${col}, ${checkFn.get(c.sql)}(${col}) AS code FROM ${text} WHERE ${col} IS NOT NULL) x
         WHERE code IS NOT NULL ORDER BY _line LIMIT ${findings.room + 1}`,
      );
      for (const b of bad) {
        const line = Number(b.line);
        const range = b.code === "22003";
        add(
          line,
          range ? "range" : "type",
          range
            ? `${def.file} line ${line}, column ${c.name}: "${b.value}" is out of range`
            : `${def.file} line ${line}, column ${c.name}: "${b.value}" is not ${TYPE_WORDS[c.type]}`,
          c.name,
          b.value,
        );
      }
    }
    if (c.required) {
      const bad = await conn.query<{ line: string }>(
        `SELECT _line AS line FROM ${text} WHERE ${col} IS NULL ORDER BY _line LIMIT ${findings.room + 1}`,
      );
      for (const b of bad)
        add(
          Number(b.line),
          "required",
          `${def.file} line ${b.line}, column ${c.name}: a value is required`,
          c.name,
        );
    }
  }
  for (const check of valueChecks(def, q)) {
    if (findings.truncated) break;
    if (!present.has(check.column)) continue;
    const bad = await conn.query<{ line: string; value: string }>(
      `SELECT _line AS line, ${check.value} AS value FROM ${text} WHERE ${check.sql} ORDER BY _line LIMIT ${findings.room + 1}`,
    );
    for (const b of bad) {
      const line = Number(b.line);
      add(line, check.kind, check.message(line, b.value), check.column, b.value);
    }
  }
  // Rows whose every value is valid (typed values as the column reads them).
  const valid = [
    ...def.columns.filter((c) => c.required).map((c) => `${q(c.name)} IS NOT NULL`),
    ...typed.map((c) => `${checkFn.get(c.sql)}(${q(c.name)}) IS NULL`),
  ];
  const cast = (c: ColumnDef) => `${q(c.name)}::${c.sql}`;
  // Duplicate keys and unique values among the valid rows: every line after the first.
  const uniques: { cols: ColumnDef[]; what: string }[] = [
    { cols: def.key.map((k) => def.columns.find((c) => c.name === k)!), what: "duplicate key" },
    ...def.columns.filter((c) => c.unique).map((c) => ({ cols: [c], what: "duplicate value" })),
  ];
  for (const u of uniques) {
    if (findings.truncated) break;
    if (!u.cols.every((c) => present.has(c.name))) continue;
    const key = u.cols.map(cast).join(", ");
    const bad = await conn.query<{ line: string; value: string }>(
      `SELECT _line AS line, value FROM (
         SELECT _line, concat_ws(', ', ${u.cols.map((c) => `${cast(c)}::text`).join(", ")}) AS value,
                row_number() OVER (PARTITION BY ${key} ORDER BY _line) AS n
         FROM ${text} WHERE ${[...valid, ...u.cols.map((c) => `${q(c.name)} IS NOT NULL`)].join(" AND ")}) x
       WHERE n > 1 ORDER BY _line LIMIT ${findings.room + 1}`,
    );
    const column = u.cols.map((c) => c.name).join(", ");
    for (const b of bad)
      add(
        Number(b.line),
        "duplicate",
        `${def.file} line ${b.line}, column ${column}: ${u.what} ${b.value} (already on an earlier line)`,
        column,
        b.value,
      );
  }
  if (findings.list.length === before && !findings.truncated) {
    // The re-read found nothing COPY refused (should not happen): report COPY's own message.
    const line = Number(/ line (\d+)/.exec(copyMessage)?.[1] ?? 0);
    add(line, "format", copyMessage);
  }
  const rows = await conn.execute(
    `INSERT INTO ${staging} (_line, ${fileColumns.map(q).join(", ")})
     SELECT _line, ${fileColumns
       .map((n) => {
         const c = def.columns.find((d) => d.name === n);
         return c && c.type !== "text" ? cast(c) : q(n);
       })
       .join(", ")}
     FROM ${text} WHERE ${valid.length ? valid.join(" AND ") : "true"} ORDER BY _line
     ON CONFLICT DO NOTHING`,
  );
  // Every valid key value, whatever else is wrong on its line: another file's reference to a row
  // with a bad price is not a problem of its own (checkReferences reads this table).
  if (def.key.length === 1) {
    const k = def.columns.find((c) => c.name === def.key[0])!;
    const keys = q(keysOf(def));
    await conn.exec(`DROP TABLE IF EXISTS ${keys};
      CREATE TEMP TABLE ${keys} AS SELECT DISTINCT ${cast(k)} AS ${q(k.name)} FROM ${text}
      WHERE ${q(k.name)} IS NOT NULL${k.type !== "text" ? ` AND ${checkFn.get(k.sql)}(${q(k.name)}) IS NULL` : ""};
      CREATE INDEX ON ${keys} (${q(k.name)})`);
  }
  await conn.exec(`DROP TABLE IF EXISTS ${text}`);
  return rows;
}

export async function stageAll(
  conn: SqlConnection,
  source: DataSource,
  step: (name: string, fn: (ctx: StepContext) => Promise<number>) => Promise<number>,
  findings: Findings,
  timeZone = "UTC",
): Promise<StagedFiles> {
  const staged: StagedFiles = { loaded: new Map() };
  for (const def of IMPORTED_TABLES) {
    await step(`Load ${def.file}`, (ctx) => stageFile(conn, source, def, ctx, findings, staged, timeZone));
  }
  return staged;
}

/** Every reference must point at a row of the new data (not the old), so the result is consistent. */
export async function checkReferences(
  conn: SqlConnection,
  source: DataSource,
  findings: Findings,
  staged: StagedFiles,
): Promise<number> {
  const byFile = new Map(IMPORTED_TABLES.map((d) => [d.file, d]));
  let checked = 0;
  for (const def of IMPORTED_TABLES) {
    for (const ref of def.references) {
      const target = byFile.get(ref.table)!;
      // A file that could not be staged at all has no rows to check or to match.
      if (!staged.loaded.has(def.file) || !staged.loaded.has(target.file)) continue;
      if (findings.truncated) break;
      const bad = await conn.query<{ line: string; value: string }>(
        `SELECT s._line AS line, s.${q(ref.column)}::text AS value FROM ${q(stagingOf(def))} s
         WHERE s.${q(ref.column)} IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM ${q(staged.loaded.get(target.file) && target.key.length === 1 ? keysOf(target) : stagingOf(target))} r
                           WHERE r.${q(ref.key)} = s.${q(ref.column)})
         ORDER BY s._line LIMIT ${findings.room + 1}`,
      );
      const fileLines = staged.loaded.get(def.file);
      const lines = fileLines
        ? null
        : await linesOfRecords(
            source,
            def.file,
            bad.map((b) => Number(b.line)),
          );
      findings.addAll(
        bad.map((b): Finding => {
          const line = lines ? (lines.get(Number(b.line)) ?? Number(b.line) + 1) : Number(b.line);
          return {
            file: def.file,
            line,
            column: ref.column,
            value: b.value,
            kind: "reference",
            message: `${def.file} line ${line}, column ${ref.column}: ${b.value} does not match any ${ref.key} in ${ref.table}`,
          };
        }),
      );
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
  await conn.exec(
    IMPORTED_TABLES.map(
      (d) =>
        `DROP TABLE IF EXISTS ${q(stagingOf(d))}; DROP TABLE IF EXISTS ${q(keysOf(d))}; DROP TABLE IF EXISTS ${q(`stgt_${d.table}`)};`,
    ).join("\n"),
  );
}

/**
 * The file lines where data records start (1 = the first record after the header). Records and
 * lines differ once a quoted field holds a newline; only findings need this, so it rescans once.
 */
export async function linesOfRecords(
  source: DataSource,
  file: string,
  records: readonly number[],
): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  if (!records.length) return out;
  const wanted = new Set(records);
  const last = Math.max(...records);
  const { body } = await source.open(file);
  let done = 0; // complete records so far, the header included
  let lines = 1;
  let inQuote = false;
  for await (const chunk of body) {
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i];
      if (c === 0x22) inQuote = !inQuote;
      else if (c === 0x0a) {
        lines++;
        if (!inQuote) {
          done++;
          if (wanted.has(done)) out.set(done, lines);
          if (done >= last) {
            await (body as AsyncGenerator<Buffer>).return?.(undefined);
            return out;
          }
        }
      }
    }
  }
  return out;
}
