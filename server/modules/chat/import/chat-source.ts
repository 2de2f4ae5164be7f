// Reads the mongoexport files of a Rocket.Chat database (docs/chat-format.md), one document at a
// time and in constant memory: JSON lines line by line, a --jsonArray file through a streaming JSON
// parser. Extended JSON, canonical or relaxed ($oid, $date, $binary, $numberLong…), is decoded by
// the bson package's EJSON.
import fs from "node:fs";
import path from "node:path";
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
  /** What the reader's prefilter answered for the line (JSON lines), if it has one. */
  hint?: unknown;
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

const UPDATED_AT_BYTES = Buffer.from('"_updatedAt":{"$date":');
const NUMBER_LONG_BYTES = Buffer.from('{"$numberLong":"');
const OID_BYTES = Buffer.from('{"_id":{"$oid":"');
const ID_BYTES = Buffer.from('{"_id":"');

/** A line's key as lineKey() reads it: the 53-bit hash of its _id (hashId) and its _updatedAt. */
export interface LineKey {
  hash: number;
  version: number;
}

/**
 * quickKey() over a line's bytes, without making a string of it: fills `out` with the hash of the
 * _id (the same as hashId() of quickKey()'s id) and the _updatedAt in ms, and answers true; or
 * false when the line is not one of the plain shapes read here (then the caller decodes the line
 * and asks quickKey(), which reads a few more shapes, or parses it). Whenever this answers true,
 * quickKey() of the line's text gives the same id and version. The line is buf[start, end).
 */
export function lineKey(buf: Buffer, start: number, end: number, out: LineKey): boolean {
  // The _id: a plain ASCII string (no escapes), or an ObjectId's 24 hex digits.
  let i: number;
  let idEnd: number;
  if (startsWith(buf, start, end, ID_BYTES)) {
    i = start + ID_BYTES.length;
    idEnd = i;
    while (idEnd < end) {
      const c = buf[idEnd]!;
      if (c === 0x22) break;
      if (c === 0x5c || c < 0x20 || c >= 0x80) return false;
      idEnd++;
    }
    if (idEnd >= end || idEnd === i) return false;
    if (buf[idEnd + 1] !== 0x2c && buf[idEnd + 1] !== 0x7d) return false;
  } else if (startsWith(buf, start, end, OID_BYTES)) {
    i = start + OID_BYTES.length;
    idEnd = i + 24;
    if (idEnd + 2 >= end || buf[idEnd] !== 0x22 || buf[idEnd + 1] !== 0x7d) return false;
    if (buf[idEnd + 2] !== 0x2c && buf[idEnd + 2] !== 0x7d) return false;
    for (let j = i; j < idEnd; j++) if (!isHex(buf[j]!)) return false;
  } else return false;
  // FNV-1a as hashId() computes it (over UTF-16 code units, which ASCII bytes are).
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let j = i; j < idEnd; j++) {
    const c = buf[j]!;
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
  }
  const hash = (a >>> 0) * 0x200000 + ((b >>> 0) & 0x1fffff);

  // Exactly one "_updatedAt":{"$date":…} in the line, in one of Extended JSON's three date forms.
  const line = buf.subarray(start, end);
  const at = line.indexOf(UPDATED_AT_BYTES);
  if (at < 0) return false;
  let p = at + UPDATED_AT_BYTES.length;
  let version: number;
  const c = line[p];
  if (c === 0x22) {
    const q = line.indexOf(0x22, p + 1);
    if (q < 0 || q === p + 1) return false;
    for (let j = p + 1; j < q; j++) if (line[j] === 0x5c) return false;
    version = isoMillis(line, p + 1, q);
    if (Number.isNaN(version)) return false;
    p = q + 1;
  } else if (c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39)) {
    const q = digitsEnd(line, c === 0x2d ? p + 1 : p);
    if (q < 0) return false;
    version = Number(line.toString("latin1", p, q));
    p = q;
  } else if (startsWith(line, p, line.length, NUMBER_LONG_BYTES)) {
    const from = p + NUMBER_LONG_BYTES.length;
    const q = digitsEnd(line, line[from] === 0x2d ? from + 1 : from);
    if (q < 0 || line[q] !== 0x22 || line[q + 1] !== 0x7d) return false;
    version = Number(line.toString("latin1", from, q));
    p = q + 2;
  } else return false;
  if (line[p] !== 0x7d || !Number.isFinite(version)) return false;
  if (line.indexOf(UPDATED_AT_BYTES, p + 1) >= 0) return false;
  out.hash = hash;
  out.version = version;
  return true;
}

function startsWith(buf: Uint8Array, at: number, end: number, prefix: Uint8Array): boolean {
  if (end - at < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (buf[at + i] !== prefix[i]) return false;
  return true;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

/** The end of a run of at least one digit from `from`; -1 when there is none. */
function digitsEnd(buf: Uint8Array, from: number): number {
  let q = from;
  while (q < buf.length && buf[q]! >= 0x30 && buf[q]! <= 0x39) q++;
  return q === from ? -1 : q;
}

// No closures in this per-line code: tsx (esbuild's keepNames) names every function made, at a
// cost of ~0.4 µs each.
function twoDigits(buf: Buffer, at: number): number {
  return (buf[at]! - 0x30) * 10 + buf[at + 1]! - 0x30;
}

const ISO_DIGITS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18];

/**
 * Date.parse() of the ISO text buf[from, to): "YYYY-MM-DDTHH:MM:SS[.mmm]Z" worked out here, other
 * ASCII forms (and a day past the 28th, a year before 1000) through Date.parse itself; NaN for
 * text that is not ASCII (left to quickKey()).
 */
function isoMillis(buf: Buffer, from: number, to: number): number {
  const len = to - from;
  let plain = (len === 20 || len === 24) && buf[to - 1] === 0x5a;
  if (plain) {
    for (const k of ISO_DIGITS) {
      const v = buf[from + k]! - 0x30;
      if (v < 0 || v > 9) plain = false;
    }
    plain &&=
      buf[from + 4] === 0x2d &&
      buf[from + 7] === 0x2d &&
      buf[from + 10] === 0x54 &&
      buf[from + 13] === 0x3a &&
      buf[from + 16] === 0x3a;
    if (plain && len === 24) {
      plain = buf[from + 19] === 0x2e;
      for (let k = 20; k < 23; k++) {
        const v = buf[from + k]! - 0x30;
        if (v < 0 || v > 9) plain = false;
      }
    }
  }
  if (plain) {
    const year = twoDigits(buf, from) * 100 + twoDigits(buf, from + 2);
    const month = twoDigits(buf, from + 5);
    const day = twoDigits(buf, from + 8);
    const hour = twoDigits(buf, from + 11);
    const minute = twoDigits(buf, from + 14);
    const second = twoDigits(buf, from + 17);
    const ms = len === 24 ? twoDigits(buf, from + 20) * 10 + buf[from + 22]! - 0x30 : 0;
    if (
      year >= 1000 &&
      month >= 1 &&
      month <= 12 &&
      day >= 1 &&
      day <= 28 &&
      hour <= 23 &&
      minute <= 59 &&
      second <= 59
    )
      return Date.UTC(year, month - 1, day, hour, minute, second, ms);
  }
  for (let j = from; j < to; j++) if (buf[j]! >= 0x80) return Number.NaN;
  return Date.parse(buf.toString("latin1", from, to));
}

/** What a line prefilter answers for a line to leave out unread (see ReadOptions.prefilter). */
export const SKIP: unique symbol = Symbol("skip");

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
    readonly hint?: unknown,
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
  /**
   * Looks at each line of a JSON lines file (buf[start, end), a line starting with "{") before it
   * is decoded to text: SKIP leaves the line out unread; anything else is kept as the document's
   * `hint`. Not called for a --jsonArray file.
   */
  prefilter?: (buf: Buffer, start: number, end: number) => unknown;
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
        for await (const item of pipeline as AsyncIterable<{
          key: number;
          value: unknown;
        }>) {
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
      // Split into lines on the bytes: a line is decoded to text only when it is kept (newline
      // bytes never occur inside a UTF-8 sequence, so a line's bytes are whole characters).
      let at = 0;
      let first = true;
      // The start of a line that runs past the chunk read so far.
      let carry: Buffer[] = [];
      const line = (buf: Buffer, start: number, end: number, batch: RawDocument[]) => {
        at++;
        if (end > start && buf[end - 1] === 13) end--;
        if (buf[start] !== 0x7b) {
          const text = buf.toString("utf8", start, end);
          if (text.trim() !== "") batch.push(new LineDocument(text, at, cf.file));
          return;
        }
        const hint = opts.prefilter?.(buf, start, end);
        if (hint !== SKIP) batch.push(new LineDocument(buf.toString("utf8", start, end), at, cf.file, hint));
      };
      for await (let chunk of stream as AsyncIterable<Buffer>) {
        if (opts.signal?.aborted) throw opts.signal.reason ?? new Error("aborted");
        bytes += chunk.length;
        if (first) {
          first = false;
          // A byte order mark before the first line.
          if (chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) chunk = chunk.subarray(3);
        }
        const batch: RawDocument[] = [];
        let start = 0;
        let nl = chunk.indexOf(10);
        if (nl >= 0 && carry.length) {
          carry.push(chunk.subarray(0, nl));
          const whole = Buffer.concat(carry);
          carry = [];
          line(whole, 0, whole.length, batch);
          start = nl + 1;
          nl = chunk.indexOf(10, start);
        }
        while (nl >= 0) {
          line(chunk, start, nl, batch);
          start = nl + 1;
          nl = chunk.indexOf(10, start);
        }
        // Copied: a slice would keep the whole chunk alive.
        if (start < chunk.length) carry.push(Buffer.from(chunk.subarray(start)));
        opts.onProgress?.(bytes);
        if (batch.length) yield batch;
      }
      if (carry.length) {
        const whole = Buffer.concat(carry);
        const batch: RawDocument[] = [];
        line(whole, 0, whole.length, batch);
        if (batch.length) yield batch;
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
