// The sheets of an XLSX workbook, read in the browser before the upload so the user can choose one.
// Only xl/workbook.xml is inflated, and its <sheet> elements are read without a DOM so that the
// same code runs in node.
import { unzipSync } from "fflate";

export interface WorkbookSheet {
  name: string;
  /** state="hidden" or state="veryHidden" in the workbook */
  hidden: boolean;
}

const WORKBOOK = "xl/workbook.xml";

/** True when the bytes start like a ZIP archive (an XLSX is one). */
export function looksLikeZip(bytes: Uint8Array): boolean {
  return (
    bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04
  );
}

/**
 * The workbook's sheets in workbook order, or null when the bytes are not a readable XLSX (not a
 * ZIP, a damaged ZIP, no xl/workbook.xml in it, or no named sheet listed there).
 */
export function readSheetNames(bytes: Uint8Array): WorkbookSheet[] | null {
  let xml: string;
  try {
    const files = unzipSync(bytes, { filter: (f) => f.name === WORKBOOK });
    const data = files[WORKBOOK];
    if (!data) return null;
    xml = new TextDecoder("utf-8").decode(data);
  } catch {
    return null;
  }
  const sheets = parseWorkbookSheets(xml);
  return sheets.length > 0 ? sheets : null;
}

// A <sheet> (or <x:sheet>) start tag; attribute values may hold ">" so they are matched whole.
const SHEET_TAG = /<(?:[A-Za-z_][\w.-]*:)?sheet((?:\s+[^\s=/>]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*\/?>/g;
const ATTRIBUTE = /([^\s=/>]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;

/** The sheets listed in the text of an xl/workbook.xml. */
export function parseWorkbookSheets(xml: string): WorkbookSheet[] {
  const text = xml.replace(/<!--[\s\S]*?-->/g, "");
  const sheets: WorkbookSheet[] = [];
  for (const tag of text.matchAll(SHEET_TAG)) {
    let name: string | null = null;
    let state = "visible";
    for (const attr of (tag[1] ?? "").matchAll(ATTRIBUTE)) {
      const value = decodeAttribute(attr[2] ?? attr[3] ?? "");
      if (attr[1] === "name") name = value;
      else if (attr[1] === "state") state = value;
    }
    if (name) sheets.push({ name, hidden: state === "hidden" || state === "veryHidden" });
  }
  return sheets;
}

const NAMED: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

/** An attribute value as XML reads it: literal white space normalized, then entities decoded. */
function decodeAttribute(raw: string): string {
  return raw
    .replace(/[\t\n\r]/g, " ")
    .replace(/&(?:#(\d+)|#x([0-9a-fA-F]+)|(amp|lt|gt|quot|apos));/g, (whole, dec, hex, named) => {
      if (named) return NAMED[named as string] ?? whole;
      const code = dec ? Number.parseInt(dec as string, 10) : Number.parseInt(hex as string, 16);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    });
}
