// Reads a supplier's file: what it is is decided by its bytes (never its name), the text encoding
// and the CSV delimiter are detected, an XLSX sheet is read with exceljs. The answer is the header
// row and the data rows as text, in the file's order.
import { Readable } from "node:stream";
import { parse as parseCsv } from "csv-parse";
import ExcelJS from "exceljs";
import iconv from "iconv-lite";
import { IMPORT_MAX_BYTES, IMPORT_MAX_ROWS } from "../../../shared/product-import.ts";
import { AppError, badRequest } from "../../errors.ts";

export interface ParsedFile {
  fileType: "csv" | "xlsx";
  encoding: string | null;
  delimiter: string | null;
  sheet: string | null;
  sheets: string[];
  headers: string[];
  rows: string[][];
}

export const XLS_MESSAGE = "Save the sheet as .xlsx and upload it again";
const NOT_A_SHEET =
  "The file is not a CSV or XLSX spreadsheet: its content was checked, whatever its name says";

function megabytes(n: number) {
  return `${Math.round(n / (1024 * 1024))} MB`;
}

/** What the bytes are: an XLSX workbook (a ZIP holding xl/), an old binary .xls, text, or something else. */
export function sniffFileType(data: Buffer): "xlsx" | "xls" | "text" | "other" {
  if (data.length >= 8 && data.readUInt32BE(0) === 0xd0cf11e0 && data.readUInt32BE(4) === 0xa1b11ae1)
    return "xls";
  if (data.length >= 4 && data[0] === 0x50 && data[1] === 0x4b && data[2] === 0x03 && data[3] === 0x04) {
    // An Office Open XML workbook names its parts in plain text in the ZIP's headers.
    const head = data.subarray(0, Math.min(data.length, 64 * 1024)).toString("latin1");
    if (head.includes("xl/")) return "xlsx";
    // A Word document or a presentation is Office Open XML too, but no workbook.
    if (head.includes("word/") || head.includes("ppt/")) return "other";
    return head.includes("[Content_Types].xml") ? "xlsx" : "other";
  }
  // Documents that are text at heart but no sheet: a PDF, RTF, HTML or XML.
  const start = data
    .subarray(0, 256)
    .toString("latin1")
    .replace(/^\uFEFF|^\xEF\xBB\xBF/, "")
    .trimStart();
  if (/^(%PDF-|\{\\rtf|<\?xml|<!doctype html|<html)/i.test(start)) return "other";
  // Text has no NUL bytes and few control characters.
  const sample = data.subarray(0, Math.min(data.length, 64 * 1024));
  let control = 0;
  for (const b of sample) {
    if (b === 0) return "other";
    if (b < 0x09 || (b > 0x0d && b < 0x20)) control++;
  }
  return control > sample.length / 100 ? "other" : "text";
}

/**
 * Valid UTF-8 sequences of two or more bytes, and bytes that start no valid sequence: a file with
 * more of the first is UTF-8 with a few stray bytes, not Windows-1252.
 */
function utf8Evidence(bytes: Uint8Array): { multibyte: number; invalid: number } {
  let multibyte = 0;
  let invalid = 0;
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i]!;
    const n =
      b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (n === 1) {
      i++;
      continue;
    }
    let ok = n > 0 && i + n <= bytes.length;
    for (let k = 1; ok && k < n; k++) ok = (bytes[i + k]! & 0xc0) === 0x80;
    if (ok) {
      multibyte++;
      i += n;
    } else {
      invalid++;
      i++;
    }
  }
  return { multibyte, invalid };
}

/**
 * UTF-8 when the bytes are valid UTF-8 (a BOM is dropped); UTF-8 too when its multi-byte sequences
 * outnumber the stray bytes (each shown as U+FFFD, "�"); else Windows-1252 (an older Excel's "CSV"),
 * decoded with iconv-lite: Node 20's own TextDecoder reads "windows-1252" as Latin-1 since 20.18.3,
 * which turns “ ” – ™ € into invisible control characters.
 */
export function decodeText(data: Buffer): { text: string; encoding: "utf-8" | "windows-1252" } {
  let bytes = data;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
  try {
    return { text: new TextDecoder("utf-8", { fatal: true }).decode(bytes), encoding: "utf-8" };
  } catch {
    const { multibyte, invalid } = utf8Evidence(bytes);
    if (multibyte > invalid) return { text: new TextDecoder("utf-8").decode(bytes), encoding: "utf-8" };
    return { text: iconv.decode(bytes, "windows-1252"), encoding: "windows-1252" };
  }
}

const DELIMITERS = [",", ";", "\t", "|"] as const;

/** The delimiter that splits the first lines most consistently (outside quotes). */
export function detectDelimiter(text: string): string {
  const lines: string[] = [];
  let current = "";
  let inQuote = false;
  for (let i = 0; i < text.length && lines.length < 20; i++) {
    const c = text[i]!;
    if (c === '"') inQuote = !inQuote;
    if ((c === "\n" || c === "\r") && !inQuote) {
      if (current.trim()) lines.push(current);
      current = "";
    } else current += c;
  }
  if (current.trim() && lines.length < 20) lines.push(current);
  let best: string = ",";
  let bestScore = 0;
  for (const d of DELIMITERS) {
    const counts = lines.map((l) => {
      let n = 0;
      let q = false;
      for (const c of l) {
        if (c === '"') q = !q;
        else if (c === d && !q) n++;
      }
      return n;
    });
    const first = counts[0] ?? 0;
    if (first === 0) continue;
    // Lines that agree with the header's count weigh most.
    const agreeing = counts.filter((n) => n === first).length;
    const score = agreeing * 1000 + first;
    if (score > bestScore) {
      best = d;
      bestScore = score;
    }
  }
  return best;
}

function checkHeader(headers: string[]): string[] {
  const names = headers.map((h) => h.trim());
  while (names.length && names[names.length - 1] === "") names.pop();
  if (names.length === 0 || names.every((n) => n === ""))
    throw badRequest("The file has no header row: its first row must name the columns", "file");
  // A first row of numbers, prices or barcodes is data, not column names.
  const dataLike = names.filter((n) => /^[-+$€£]?\d[\d.,\s]*$/.test(n)).length;
  if (dataLike > 0 && dataLike >= names.filter((n) => n !== "").length / 2)
    throw badRequest("The file has no header row: its first row holds values, not column names", "file");
  return names.map((n, i) => n || `Column ${i + 1}`);
}

function tooManyRows(): AppError {
  return new AppError(
    "PAYLOAD_TOO_LARGE",
    `The file has more than ${IMPORT_MAX_ROWS.toLocaleString("en-US")} rows: split it into smaller files`,
  );
}

async function parseCsvText(
  text: string,
  delimiter: string,
): Promise<{ headers: string[]; rows: string[][] }> {
  const parser = Readable.from([text]).pipe(
    parseCsv({
      delimiter,
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: true,
      bom: true,
    }),
  );
  let headers: string[] | null = null;
  const rows: string[][] = [];
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      if (!headers) {
        headers = checkHeader(record);
        continue;
      }
      if (record.every((c) => c.trim() === "")) continue;
      if (rows.length >= IMPORT_MAX_ROWS) {
        parser.destroy();
        throw tooManyRows();
      }
      rows.push(record.map((c) => c.trim()));
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    const e = err as { message?: string; lines?: number };
    throw badRequest(
      `The CSV file cannot be read${e.lines ? ` at line ${e.lines}` : ""}: ${e.message ?? "malformed"}`,
      "file",
    );
  }
  if (!headers) throw badRequest("The file has no header row: its first row must name the columns", "file");
  return { headers, rows };
}

/** A cell as the text a person sees in the sheet. */
function cellText(value: ExcelJS.CellValue): string {
  if (value == null) return "";
  if (value instanceof Date) return value.toISOString().slice(0, 10);
  if (typeof value === "object") {
    if ("richText" in value) return value.richText.map((r) => r.text).join("");
    if ("text" in value && typeof value.text === "string") return value.text;
    if ("result" in value) return cellText((value as { result?: ExcelJS.CellValue }).result ?? null);
    if ("error" in value) return "";
    return "";
  }
  return String(value);
}

async function parseXlsx(
  data: Buffer,
  sheetName: string | undefined,
): Promise<{ headers: string[]; rows: string[][]; sheet: string; sheets: string[] }> {
  const workbook = new ExcelJS.Workbook();
  try {
    await workbook.xlsx.load(data as unknown as ArrayBuffer);
  } catch {
    throw badRequest("The XLSX workbook is damaged or cannot be read", "file");
  }
  const sheets = workbook.worksheets.map((w) => w.name);
  if (sheets.length === 0) throw badRequest("The workbook has no sheets", "file");
  const ws = sheetName ? workbook.getWorksheet(sheetName) : workbook.worksheets[0];
  if (!ws)
    throw badRequest(
      `The workbook has no sheet named "${sheetName}" (sheets: ${sheets.join(", ")})`,
      "sheet",
    );
  let headers: string[] | null = null;
  const rows: string[][] = [];
  let failure: AppError | null = null;
  ws.eachRow({ includeEmpty: false }, (row) => {
    if (failure) return;
    const values: string[] = [];
    const count = Math.max(row.cellCount, headers?.length ?? 0);
    for (let c = 1; c <= count; c++) values.push(cellText(row.getCell(c).value).trim());
    if (!headers) {
      try {
        headers = checkHeader(values);
      } catch (err) {
        failure = err as AppError;
      }
      return;
    }
    if (values.every((v) => v === "")) return;
    if (rows.length >= IMPORT_MAX_ROWS) {
      failure = tooManyRows();
      return;
    }
    rows.push(values);
  });
  if (failure) throw failure;
  if (!headers) throw badRequest(`The sheet "${ws.name}" is empty: it has no header row`, "file");
  return { headers, rows, sheet: ws.name, sheets };
}

/** Reads an uploaded file; every refusal is a 4xx that says what to do. */
export async function parseUpload(data: Buffer, opts: { sheet?: string } = {}): Promise<ParsedFile> {
  if (data.length === 0) throw badRequest("The file is empty", "file");
  if (data.length > IMPORT_MAX_BYTES)
    throw new AppError(
      "PAYLOAD_TOO_LARGE",
      `The file is larger than the ${megabytes(IMPORT_MAX_BYTES)} limit`,
    );
  const kind = sniffFileType(data);
  if (kind === "xls") throw new AppError("UNSUPPORTED_MEDIA_TYPE", XLS_MESSAGE);
  if (kind === "other") throw new AppError("UNSUPPORTED_MEDIA_TYPE", NOT_A_SHEET);
  if (kind === "xlsx") {
    const x = await parseXlsx(data, opts.sheet);
    if (x.rows.length === 0)
      throw badRequest(
        `The sheet "${x.sheet}" has a header row but no data rows (sheets: ${x.sheets.join(", ")})`,
        "file",
      );
    return { fileType: "xlsx", encoding: null, delimiter: null, ...x };
  }
  const { text, encoding } = decodeText(data);
  if (!text.trim()) throw badRequest("The file is empty", "file");
  const delimiter = detectDelimiter(text);
  const { headers, rows } = await parseCsvText(text, delimiter);
  if (rows.length === 0) throw badRequest("The file has a header row but no data rows", "file");
  return { fileType: "csv", encoding, delimiter, sheet: null, sheets: [], headers, rows };
}
