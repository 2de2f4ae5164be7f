// Rows as CSV text for COPY: fields quoted, NULL as an empty unquoted field (the COPY reads every
// column with FORCE_NULL, so an empty text is NULL too: callers COALESCE where it matters).

export type CsvValue = string | number | boolean | Date | Buffer | readonly string[] | null | undefined;

// PostgreSQL text cannot hold NUL.
const NUL = new RegExp(String.fromCharCode(0), "g");

function arrayLiteral(items: readonly string[]): string {
  return `{${items.map((s) => `"${s.replace(NUL, "").replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`).join(",")}}`;
}

export function csvField(v: CsvValue): string {
  if (v === null || v === undefined) return "";
  let s: string;
  if (typeof v === "string") s = v.replace(NUL, "");
  else if (typeof v === "number") return Number.isFinite(v) ? String(v) : "";
  else if (typeof v === "boolean") return v ? "t" : "f";
  else if (v instanceof Date) return v.toISOString();
  else if (Buffer.isBuffer(v)) return `\\x${v.toString("hex")}`;
  else s = arrayLiteral(v as readonly string[]);
  return `"${s.replace(/"/g, '""')}"`;
}

export function csvLine(values: readonly CsvValue[]): string {
  let out = "";
  for (let i = 0; i < values.length; i++) {
    if (i) out += ",";
    out += csvField(values[i]);
  }
  return `${out}\n`;
}

/** CSV text of batches of rows, as ~256 KB buffers (an await per buffer, not per row). */
export async function* csvBuffers(
  batches: AsyncIterable<readonly (readonly CsvValue[])[]>,
): AsyncGenerator<Buffer> {
  let parts: string[] = [];
  let size = 0;
  for await (const rows of batches) {
    for (const row of rows) {
      const line = csvLine(row);
      parts.push(line);
      size += line.length;
    }
    if (size >= 256 * 1024) {
      yield Buffer.from(parts.join(""), "utf8");
      parts = [];
      size = 0;
    }
  }
  if (parts.length) yield Buffer.from(parts.join(""), "utf8");
}
