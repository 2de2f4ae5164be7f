// Every problem of a run's source data at once (docs/data-format.md "When the data is bad"): up to
// MAX_FINDINGS findings, grouped by file and kind, stored in the import history's
// additional_info.findings. Good files keep the fast typed COPY; only a file whose COPY fails is
// re-read here: its records go into an all-text table, each value is checked with the column
// type's own input function (so exactly what COPY accepts passes), and the rows without a problem
// are loaded into the typed staging table, so the other files' references can still be checked.

import {
  FINDING_KINDS,
  type Finding,
  type FindingKind,
  type FindingsRecord,
  MAX_FINDINGS,
} from "../../shared/data-ops.ts";
import type { SqlConnection } from "../db/database.ts";
import { SourceError } from "./source.ts";

export type { Finding, FindingKind, FindingsRecord };

export class Findings {
  readonly list: Finding[] = [];
  truncated = false;

  /** `files`: the files in the order they are read, which is the order of the groups. */
  constructor(private readonly files: readonly string[] = []) {}

  /** How many more may be stored. */
  get room(): number {
    return MAX_FINDINGS - this.list.length;
  }

  add(f: Finding): void {
    if (this.list.length < MAX_FINDINGS) this.list.push(f);
    else this.truncated = true;
  }

  /** Adds the rows a query found with LIMIT room + 1 (the extra one only marks truncation). */
  addAll(found: Finding[]): void {
    for (const f of found) this.add(f);
  }

  get any(): boolean {
    return this.list.length > 0;
  }

  record(): FindingsRecord {
    const groups = new Map<string, FindingsRecord["groups"][number]>();
    for (const f of this.list) {
      const key = `${f.file}\u0000${f.kind}`;
      let g = groups.get(key);
      if (!g) {
        g = { file: f.file, kind: f.kind, count: 0, findings: [] };
        groups.set(key, g);
      }
      g.count++;
      g.findings.push({ line: f.line, column: f.column, value: f.value, message: f.message });
    }
    for (const g of groups.values()) g.findings.sort((a, b) => a.line - b.line);
    const fileRank = (f: string) => {
      const i = this.files.indexOf(f);
      return i < 0 ? this.files.length : i;
    };
    return {
      count: this.list.length,
      truncated: this.truncated,
      limit: MAX_FINDINGS,
      groups: [...groups.values()].sort(
        (a, b) =>
          fileRank(a.file) - fileRank(b.file) ||
          FINDING_KINDS.indexOf(a.kind) - FINDING_KINDS.indexOf(b.kind),
      ),
    };
  }

  /** The run's error: the one problem, or the first with how many more there are. */
  error(): SourceFindingsError {
    const order = new Map(this.files.map((f, i) => [f, i]));
    const sorted = [...this.list].sort(
      (a, b) => (order.get(a.file) ?? 99) - (order.get(b.file) ?? 99) || a.line - b.line,
    );
    const first = sorted[0]!;
    const more = this.list.length - 1;
    const message =
      more === 0 && !this.truncated
        ? first.message
        : `${first.message} (and ${this.truncated ? "more than " : ""}${more} more ${more === 1 && !this.truncated ? "problem" : "problems"} in the source data: see the run's findings)`;
    return new SourceFindingsError(message, this.record());
  }
}

export class SourceFindingsError extends SourceError {
  constructor(
    message: string,
    readonly findings: FindingsRecord,
  ) {
    super(message);
  }
}

/** One CSV record: the file line it starts on and its fields (null: empty, as COPY's FORCE_NULL). */
export interface CsvRecord {
  line: number;
  fields: (string | null)[];
}

/**
 * Splits a CSV byte stream (RFC 4180, as PostgreSQL's COPY reads it) into records with the line
 * each starts on. A quote left open at the end is reported through `onUnclosed`.
 */
export async function* csvRecords(
  body: AsyncIterable<Buffer>,
  onUnclosed: (line: number) => void,
): AsyncGenerator<CsvRecord> {
  const decoder = new TextDecoder("utf-8");
  let fields: (string | null)[] = [];
  let field = "";
  let inQuote = false;
  let afterQuote = false; // a quote inside quotes: the closing one, or the first of ""
  let cr = false; // a carriage return outside quotes, not yet known to end the line
  let line = 1;
  let startLine = 1;
  let any = false; // the current record has a character
  const endField = () => {
    fields.push(field === "" ? null : field);
    field = "";
  };
  const endRecord = (): CsvRecord => {
    let r: CsvRecord;
    if (any) {
      endField();
      r = { line: startLine, fields };
    } else r = { line: startLine, fields: [] }; // an empty line
    fields = [];
    field = "";
    any = false;
    return r;
  };
  const consume = function* (text: string): Generator<CsvRecord> {
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (inQuote) {
        if (afterQuote) {
          afterQuote = false;
          if (c === '"') {
            field += '"';
            continue;
          }
          inQuote = false; // that was the closing quote: c is read below, outside quotes
        } else if (c === '"') {
          afterQuote = true;
          continue;
        } else {
          if (c === "\n") line++;
          field += c;
          continue;
        }
      }
      if (cr) {
        cr = false;
        if (c !== "\n") field += "\r";
      }
      if (!any && field === "" && fields.length === 0) startLine = line;
      if (c === "\n") {
        line++;
        yield endRecord();
        continue;
      }
      if (c === "\r") {
        cr = true;
        continue;
      }
      any = true;
      if (c === ",") endField();
      else if (c === '"' && field === "") inQuote = true;
      else field += c;
    }
  };
  for await (const chunk of body) yield* consume(decoder.decode(chunk, { stream: true }));
  yield* consume(decoder.decode());
  if (inQuote && !afterQuote) onUnclosed(startLine);
  else if (any) yield endRecord();
}

const csvField = (v: string | null) => (v === null ? "" : `"${v.replace(/"/g, '""')}"`);

/** Records as CSV lines for COPY into the all-text table (the file line first). */
export async function* recordsAsCsv(
  records: AsyncIterable<CsvRecord>,
  width: number,
  onBadWidth: (r: CsvRecord) => void,
): AsyncGenerator<Buffer> {
  let parts: string[] = [];
  let size = 0;
  for await (const r of records) {
    if (r.fields.length !== width) {
      onBadWidth(r);
      continue;
    }
    const text = `${r.line},${r.fields.map(csvField).join(",")}\n`;
    parts.push(text);
    size += text.length;
    if (size > 1 << 20) {
      yield Buffer.from(parts.join(""), "utf8");
      parts = [];
      size = 0;
    }
  }
  if (parts.length) yield Buffer.from(parts.join(""), "utf8");
}

/**
 * A validity check per SQL type, in the session's temp schema: the SQLSTATE its input function
 * raises for `v` (22P02 not valid, 22003 out of range, …), or null when `v` is valid.
 */
export async function createTypeChecks(
  conn: SqlConnection,
  sqlTypes: readonly string[],
): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (const [i, sql] of [...new Set(sqlTypes)].entries()) {
    const name = `pg_temp.bo_input_error_${i}`;
    await conn.exec(`CREATE OR REPLACE FUNCTION ${name}(v text) RETURNS text LANGUAGE plpgsql AS $f$
      BEGIN PERFORM v::${sql}; RETURN NULL;
      EXCEPTION WHEN others THEN RETURN SQLSTATE; END $f$`);
    names.set(sql, name);
  }
  return names;
}
