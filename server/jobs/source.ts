import fs from "node:fs";
import path from "node:path";
import { parse } from "csv-parse/sync";
import { AppError } from "../errors.ts";

/** Where imported data comes from. The CSV folder is the default; a shop database could be another. */
export interface DataSource {
  /** For logs and history: e.g. "CSV folder /srv/exports" */
  readonly description: string;
  /** The file's header names and its whole content (header included) as a byte stream. */
  open(file: string): Promise<OpenedFile>;
}

export interface OpenedFile {
  header: string[];
  body: AsyncIterable<Buffer>;
  /** Size in bytes when known, for progress */
  size?: number;
}

export class SourceError extends AppError {
  constructor(message: string) {
    super("BAD_REQUEST", message);
    this.name = "SourceError";
  }
}

export class CsvFolderSource implements DataSource {
  readonly description: string;
  constructor(private readonly dir: string) {
    this.description = `CSV folder ${dir}`;
  }

  async open(file: string): Promise<OpenedFile> {
    const full = path.join(this.dir, file);
    let size: number;
    try {
      size = (await fs.promises.stat(full)).size;
    } catch {
      throw new SourceError(`${file}: file not found in ${this.dir}`);
    }
    const { header, body } = await splitHeader(
      fs.createReadStream(full, { highWaterMark: 1024 * 1024 }),
      file,
    );
    return { header, body, size };
  }
}

/** Reads the first line (outside quotes) to learn the columns, then replays the whole stream. */
export async function splitHeader(
  stream: AsyncIterable<Buffer>,
  file: string,
): Promise<{ header: string[]; body: AsyncIterable<Buffer> }> {
  const iterator = stream[Symbol.asyncIterator]();
  const seen: Buffer[] = [];
  let end = -1;
  let inQuote = false;
  let total = 0;
  while (end < 0) {
    const next = await iterator.next();
    if (next.done) break;
    let buf = next.value as Buffer;
    // A UTF-8 byte-order mark would become part of the first column name.
    if (seen.length === 0 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) buf = buf.subarray(3);
    for (let i = 0; i < buf.length; i++) {
      if (buf[i] === 0x22) inQuote = !inQuote;
      else if (buf[i] === 0x0a && !inQuote) {
        end = total + i;
        break;
      }
    }
    seen.push(buf);
    total += buf.length;
  }
  const head = Buffer.concat(seen);
  const headerLine = head
    .subarray(0, end < 0 ? head.length : end)
    .toString("utf8")
    .replace(/\r$/, "");
  if (!headerLine.trim()) throw new SourceError(`${file}: the file is empty (no header line)`);
  const [header] = parse(headerLine, { relax_quotes: false }) as string[][];
  const names = (header ?? []).map((h) => h.trim());
  async function* replay() {
    try {
      yield head;
      while (true) {
        const next = await iterator.next();
        if (next.done) return;
        yield next.value as Buffer;
      }
    } finally {
      // Closes the file when the reader stops early (a bad row, a cancel).
      await iterator.return?.();
    }
  }
  return { header: names, body: replay() };
}
