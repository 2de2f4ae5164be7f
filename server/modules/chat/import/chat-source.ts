// Reads the mongoexport files of a Rocket.Chat database (docs/chat-format.md), one document at a
// time and in constant memory: JSON lines line by line, a --jsonArray file through a streaming JSON
// parser. Extended JSON, canonical or relaxed ($oid, $date, $binary, $numberLong…), is decoded by
// the bson package's EJSON.
import fs from "node:fs";
import path from "node:path";
import { StringDecoder } from "node:string_decoder";
import { Binary, EJSON, ObjectId } from "bson";
import chain from "stream-chain";
import { parser } from "stream-json";
import { streamArray } from "stream-json/streamers/stream-array.js";
import { SourceError } from "../../../jobs/source.ts";

/** The collections the archive reads, in import order. */
export const CHAT_COLLECTIONS = [
  "users",
  "rocketchat_room",
  "rocketchat_subscription",
  "rocketchat_avatars.files",
  "rocketchat_avatars.chunks",
  "rocketchat_uploads.files",
  "rocketchat_uploads.chunks",
  "rocketchat_message",
] as const;
export type ChatCollection = (typeof CHAT_COLLECTIONS)[number];
/** Collections an archive must have; the GridFS ones are optional. */
export const REQUIRED_COLLECTIONS: readonly ChatCollection[] = [
  "users",
  "rocketchat_room",
  "rocketchat_subscription",
  "rocketchat_message",
];

/** One bad document: the file, where in it, and what is wrong. Fails the import as a whole. */
export class ChatDocumentError extends SourceError {
  constructor(
    readonly file: string,
    /** "line 12" (JSON lines) or "document 12" (a --jsonArray file) */
    readonly position: string,
    readonly problem: string,
  ) {
    super(`${file} ${position}: ${problem}`);
  }
}

/** A document's field is missing or of the wrong kind. */
export class FieldError extends Error {}

export interface RawDocument {
  /** The document as JSON.parse gives it: Extended JSON wrappers not yet decoded. */
  raw: Record<string, unknown>;
  /** 1-based line (JSON lines) or element number (array). */
  at: number;
  /** Read from a --jsonArray file: `at` counts documents, not lines. */
  array: boolean;
  /** The line's text (JSON lines): decode() parses it with EJSON directly. */
  text?: string;
}

// mongoexport writes _id first; _updatedAt is one of Extended JSON's three date forms.
const LEADING_ID = /^\{"_id":(?:"((?:[^"\\]|\\.)*)"|\{"\$oid":"([0-9a-fA-F]{24})"\})[,}]/;
const UPDATED_AT = /"_updatedAt":\{"\$date":(?:"([^"\\]+)"|(-?\d+)|\{"\$numberLong":"(-?\d+)"\})\}/g;

/**
 * A line's _id and _updatedAt (ms) read from its text without parsing it, to skip an unchanged
 * document at the cost of two pattern matches. Only for the plain shapes mongoexport writes: an
 * escaped id, no _updatedAt, or more than one (a nested document's) answers null, and the caller
 * parses the line instead. Deciding to skip is all this is used for; documents read are decoded
 * by EJSON.
 */
export function quickKey(text: string): { id: string; version: number } | null {
  const id = LEADING_ID.exec(text);
  if (!id || id[1]?.includes("\\")) return null;
  UPDATED_AT.lastIndex = 0;
  const first = UPDATED_AT.exec(text);
  if (!first || UPDATED_AT.exec(text)) return null;
  const version = first[1] !== undefined ? Date.parse(first[1]) : Number(first[2] ?? first[3]);
  if (!Number.isFinite(version)) return null;
  return { id: id[1] ?? id[2]!, version };
}

/**
 * A line of a JSON lines file, parsed only when its `raw` is asked for: a first import decodes
 * every document with EJSON straight from the text and never needs the plain parse.
 */
class LineDocument implements RawDocument {
  private parsed: Record<string, unknown> | null = null;
  readonly array = false;
  constructor(
    readonly text: string,
    readonly at: number,
    private readonly file: string,
  ) {}
  get raw(): Record<string, unknown> {
    if (this.parsed) return this.parsed;
    let value: unknown;
    try {
      value = JSON.parse(this.text);
    } catch (err) {
      throw new ChatDocumentError(this.file, `line ${this.at}`, `not valid JSON (${errorText(err)})`);
    }
    if (!isPlainObject(value)) throw new ChatDocumentError(this.file, `line ${this.at}`, "not a JSON object");
    this.parsed = value;
    return value;
  }
}

/** Where a document is, for messages: "line 12" or "document 12". */
export function positionOf(doc: RawDocument): string {
  return `${doc.array ? "document" : "line"} ${doc.at}`;
}

export interface CollectionFile {
  collection: ChatCollection;
  file: string;
  full: string;
  size: number;
}

/** The export file of a collection: <name>.json or <name>.jsonl in dir; null when there is none. */
export async function findCollectionFile(
  dir: string,
  collection: ChatCollection,
): Promise<CollectionFile | null> {
  for (const ext of [".json", ".jsonl", ".ndjson"]) {
    const full = path.join(dir, collection + ext);
    try {
      const stat = await fs.promises.stat(full);
      if (stat.isFile()) return { collection, file: collection + ext, full, size: stat.size };
    } catch {}
  }
  return null;
}

/** Whether the file is a JSON array (mongoexport --jsonArray): its first non-blank byte is "[". */
async function isJsonArray(full: string): Promise<boolean> {
  const handle = await fs.promises.open(full, "r");
  try {
    const buf = Buffer.alloc(4096);
    let pos = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) return false;
      for (let i = 0; i < bytesRead; i++) {
        const c = buf[i]!;
        // BOM, spaces, tabs, newlines
        if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0xef || c === 0xbb || c === 0xbf)
          continue;
        return c === 0x5b;
      }
      pos += bytesRead;
    }
  } finally {
    await handle.close();
  }
}

export interface ReadOptions {
  signal?: AbortSignal;
  /** Bytes read so far, now and then. */
  onProgress?: (bytes: number) => void;
}

/**
 * Every document of a collection file, undecoded (see decode()), in batches (one per chunk read:
 * an await per batch, not per document). Position: line for JSON lines, element number for an
 * array. A line or element that is not a JSON object is a ChatDocumentError.
 */
export async function* readDocuments(
  cf: CollectionFile,
  opts: ReadOptions = {},
): AsyncGenerator<RawDocument[]> {
  // Decided before the stream starts flowing.
  const array = await isJsonArray(cf.full);
  const stream = fs.createReadStream(cf.full, { highWaterMark: 1 << 18 });
  let bytes = 0;
  try {
    if (array) {
      const pipeline = chain([stream, parser(), streamArray()]);
      stream.on("data", (chunk) => {
        bytes += chunk.length;
      });
      let at = 0;
      let batch: RawDocument[] = [];
      try {
        for await (const item of pipeline as AsyncIterable<{ key: number; value: unknown }>) {
          at = item.key + 1;
          if (!isPlainObject(item.value))
            throw new ChatDocumentError(cf.file, `document ${at}`, "not a JSON object");
          batch.push({ raw: item.value, at, array: true });
          if (batch.length >= 2000) {
            if (opts.signal?.aborted) throw opts.signal.reason ?? new Error("aborted");
            opts.onProgress?.(bytes);
            yield batch;
            batch = [];
          }
        }
      } catch (err) {
        if (err instanceof ChatDocumentError || opts.signal?.aborted) throw err;
        throw new ChatDocumentError(cf.file, `after document ${at}`, `not valid JSON (${errorText(err)})`);
      } finally {
        pipeline.destroy();
      }
      if (batch.length) yield batch;
    } else {
      const decoder = new StringDecoder("utf8");
      let carry = "";
      let at = 0;
      const parseLine = (line: string, batch: RawDocument[]) => {
        at++;
        if (line.length === 0 || line.trim() === "") return;
        batch.push(new LineDocument(line, at, cf.file));
      };
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        if (opts.signal?.aborted) throw opts.signal.reason ?? new Error("aborted");
        bytes += chunk.length;
        const text = carry + decoder.write(chunk);
        const batch: RawDocument[] = [];
        let start = 0;
        for (;;) {
          const nl = text.indexOf("\n", start);
          if (nl < 0) break;
          const end = nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
          parseLine(text.slice(start, end), batch);
          start = nl + 1;
        }
        carry = text.slice(start);
        opts.onProgress?.(bytes);
        if (batch.length) yield batch;
      }
      const rest = carry + decoder.end();
      if (rest.trim() !== "") {
        const batch: RawDocument[] = [];
        parseLine(rest.replace(/\r$/, ""), batch);
        yield batch;
      }
    }
    opts.onProgress?.(bytes);
  } finally {
    stream.destroy();
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Decodes a whole document's Extended JSON (canonical or relaxed) into plain values: from the
 * line's text with EJSON.parse when there is one (about twice as fast as deserializing the parsed
 * object, which EJSON does by printing it again), else from the parsed object.
 */
export function decode(doc: RawDocument): Record<string, unknown> {
  let value: unknown;
  try {
    value =
      doc.text !== undefined
        ? EJSON.parse(doc.text, { relaxed: true })
        : EJSON.deserialize(doc.raw, { relaxed: true });
  } catch (err) {
    if (doc.text !== undefined) void doc.raw; // not JSON at all: its own error
    throw new FieldError(`bad Extended JSON (${errorText(err)})`);
  }
  if (!isPlainObject(value)) throw new FieldError("not a JSON object");
  return value;
}

/** Decodes one Extended JSON value (e.g. only _id and _updatedAt, to decide whether to read the rest). */
export function decodeValue(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  try {
    return (EJSON.deserialize({ v: value }, { relaxed: true }) as { v: unknown }).v;
  } catch (err) {
    throw new FieldError(`bad Extended JSON (${errorText(err)})`);
  }
}

// Field readers over a decoded document. They throw FieldError naming the field.

/** An id: a string or an ObjectId (as its hex text). */
export function idOf(value: unknown, field: string, required: true): string;
export function idOf(value: unknown, field: string, required?: false): string | null;
export function idOf(value: unknown, field: string, required = false): string | null {
  if (value === undefined || value === null || value === "") {
    if (required) throw new FieldError(`${field}: missing`);
    return null;
  }
  if (typeof value === "string") return value;
  if (value instanceof ObjectId) return value.toHexString();
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  throw new FieldError(`${field}: not an id (${describe(value)})`);
}

export function text(value: unknown, field: string, required = false): string | null {
  if (value === undefined || value === null) {
    if (required) throw new FieldError(`${field}: missing`);
    return null;
  }
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  throw new FieldError(`${field}: not a text (${describe(value)})`);
}

export function date(value: unknown, field: string, required: true): Date;
export function date(value: unknown, field: string, required?: false): Date | null;
export function date(value: unknown, field: string, required = false): Date | null {
  if (value === undefined || value === null) {
    if (required) throw new FieldError(`${field}: missing`);
    return null;
  }
  const d =
    value instanceof Date
      ? value
      : typeof value === "string" && /^\d{4}-\d\d-\d\d/.test(value)
        ? new Date(value)
        : null;
  if (!d || Number.isNaN(d.getTime())) throw new FieldError(`${field}: not a date (${describe(value)})`);
  return d;
}

export function int(value: unknown, field: string): number | null {
  if (value === undefined || value === null) return null;
  const n = typeof value === "number" ? value : typeof value === "bigint" ? Number(value) : Number.NaN;
  if (!Number.isFinite(n)) {
    // a Long or Int32 wrapper
    const v = (value as { valueOf?: () => unknown }).valueOf?.();
    if (typeof v === "number" && Number.isFinite(v)) return Math.trunc(v);
    throw new FieldError(`${field}: not a number (${describe(value)})`);
  }
  return Math.trunc(n);
}

export function bool(value: unknown): boolean {
  return value === true || value === "true" || value === 1;
}

export function bytes(value: unknown, field: string): Buffer {
  if (value instanceof Binary) return Buffer.from(value.buffer);
  if (value instanceof Uint8Array) return Buffer.from(value);
  throw new FieldError(`${field}: not binary data (${describe(value)})`);
}

export function object(value: unknown): Record<string, unknown> | null {
  return isPlainObject(value) ? value : null;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (value instanceof Date) return "a date";
  if (typeof value === "object") return "an object";
  const s = JSON.stringify(value) ?? String(value);
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}
