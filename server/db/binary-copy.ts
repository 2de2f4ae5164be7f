// Reads the output of `COPY (…) TO STDOUT (FORMAT binary)` (PostgreSQL's documented binary COPY
// format: an 11-byte signature, flags and a header extension, then per row a 16-bit field count and
// per field a 32-bit length, −1 for NULL, and the value in network byte order; a count of −1 ends
// it). Used where a calculation streams millions of narrow rows into the app (SqlConnection.copyOutRows)
// instead of aggregating them with many grouping passes in SQL.
import type { SqlConnection } from "./database.ts";

/**
 * The column types a binary COPY here may carry. "cents" is a numeric with at most two decimals,
 * answered as whole cents (an error for a NaN, an infinity, a third decimal or beyond ±2^53 cents);
 * "timestamptz" is answered as microseconds since 2000-01-01 00:00 UTC (PostgreSQL's epoch).
 */
export type BinaryColumn = "int4" | "int8" | "float8" | "text" | "cents" | "timestamptz";

export type BinaryValue = number | string | null;

const SIGNATURE = Buffer.from("PGCOPY\n\xff\r\n\0", "latin1");

/** Days from 1970-01-01 to 2000-01-01: a binary date counts its days from PostgreSQL's epoch. */
export const PG_EPOCH_DAYS = 10_957;

/** The start of binary COPY input: the signature, no flags, no header extension. */
export function binaryCopyHeader(): Buffer {
  const header = Buffer.alloc(SIGNATURE.length + 8);
  SIGNATURE.copy(header);
  return header;
}

/** The end of binary COPY input: a field count of −1. */
export const binaryCopyTrailer = (): Buffer => Buffer.from([0xff, 0xff]);
const TWO_32 = 4_294_967_296;

/** An int4 field of binary COPY input at offset o (8 bytes): its length (4) and value, big-endian. */
export function int4Field(b: Buffer, o: number, v: number): void {
  b[o] = 0;
  b[o + 1] = 0;
  b[o + 2] = 0;
  b[o + 3] = 4;
  b[o + 4] = v >>> 24;
  b[o + 5] = (v >>> 16) & 255;
  b[o + 6] = (v >>> 8) & 255;
  b[o + 7] = v & 255;
}

/**
 * ⌊a ÷ unit⌋ exactly for whole numbers 0 ≤ a < 2^53 (unit > 0): the quotient from floating point,
 * corrected by the rest (a rounded a ÷ unit near 2^53 may land on the next whole number).
 */
export function wholeQuotient(a: number, unit: number): number {
  const q = Math.floor(a / unit);
  const r = a - q * unit;
  return r < 0 ? q - 1 : r >= unit ? q + 1 : q;
}

/** PostgreSQL's type OID of float8, which a binary float8[] names for its elements. */
const FLOAT8_OID = 701;

/**
 * Writes rows of binary COPY input into chunks of about `chunkBytes` (the header first): row(n)
 * starts a row of n fields, then one call per field. Cheaper than CSV on both sides for numbers: no
 * number is formatted here nor parsed by the database. A float8 is written with its exact bits, as
 * CSV's shortest round-trip text gives it, except −0, written as 0 (as String(−0) is "0").
 */
export class BinaryRowWriter {
  /** The slab the chunks are cut from: the current chunk is buf[start, o). */
  private buf: Buffer;
  private start = 0;
  private o: number;
  private readonly chunkBytes: number;
  private readonly slabBytes: number;
  /** numeric's scratch: at most 4 base-10,000 digits below 2^53. */
  private readonly digits = new Int32Array(5);

  /**
   * Chunks are cut one after another from slabs of `slabBytes` (at least 4 × `chunkBytes`): a new
   * buffer per chunk made the garbage collector run for memory that was mostly never written.
   */
  constructor(chunkBytes = 1 << 20, slabBytes = 8 << 20) {
    this.chunkBytes = chunkBytes;
    this.slabBytes = Math.max(slabBytes, 4 * chunkBytes);
    this.buf = Buffer.allocUnsafe(this.slabBytes);
    this.o = binaryCopyHeader().copy(this.buf, 0);
  }

  /** Whether a chunk is ready to take (the rows written so far fill most of it). */
  get full(): boolean {
    return this.o - this.start >= this.chunkBytes - 4096;
  }

  /** The bytes written since the last take (a view of the slab, never written again). */
  take(): Buffer {
    const out = this.buf.subarray(this.start, this.o);
    if (this.buf.length - this.o < this.chunkBytes) {
      this.buf = Buffer.allocUnsafe(this.slabBytes);
      this.o = 0;
    }
    this.start = this.o;
    return out;
  }

  /** The last bytes, with the trailer (nothing is written after it). */
  end(): Buffer {
    this.room(2);
    this.o = this.buf.writeInt16BE(-1, this.o);
    const out = this.buf.subarray(this.start, this.o);
    this.buf = Buffer.alloc(0);
    this.start = 0;
    this.o = 0;
    return out;
  }

  /** Room for `bytes` more after o: the current chunk moves to a new slab when this one is full. */
  private room(bytes: number): void {
    if (this.o + bytes <= this.buf.length) return;
    const used = this.o - this.start;
    const grown = Buffer.allocUnsafe(Math.max(this.slabBytes, 2 * (used + bytes)));
    this.buf.copy(grown, 0, this.start, this.o);
    this.buf = grown;
    this.start = 0;
    this.o = used;
  }

  row(fields: number): void {
    this.room(2);
    this.o = this.buf.writeInt16BE(fields, this.o);
  }

  null(): void {
    this.room(4);
    this.o = this.buf.writeInt32BE(-1, this.o);
  }

  int4(v: number): void {
    if (v !== (v | 0)) throw new Error(`binary COPY: ${v} is not a 32-bit whole number`);
    this.room(8);
    int4Field(this.buf, this.o, v);
    this.o += 8;
  }

  bool(v: boolean): void {
    this.room(5);
    this.o = this.buf.writeInt32BE(1, this.o);
    this.buf[this.o++] = v ? 1 : 0;
  }

  float8(v: number | null): void {
    if (v === null) {
      this.null();
      return;
    }
    this.room(12);
    this.o = this.buf.writeInt32BE(8, this.o);
    this.o = this.buf.writeDoubleBE(v === 0 ? 0 : v, this.o);
  }

  text(v: string): void {
    const bytes = Buffer.byteLength(v);
    this.room(4 + bytes);
    this.o = this.buf.writeInt32BE(bytes, this.o);
    this.o += this.buf.write(v, this.o);
  }

  /** A text field of the UTF-8 bytes src[start, end), as they are (the database checks the encoding). */
  bytes(src: Buffer, start: number, end: number): void {
    const n = end - start;
    this.room(4 + n);
    const b = this.buf;
    let o = this.buf.writeInt32BE(n, this.o);
    // Short texts byte by byte: a native copy per field costs more than the bytes.
    if (n <= 32) for (let i = start; i < end; i++) b[o++] = src[i]!;
    else o += src.copy(b, o, start, end);
    this.o = o;
  }

  /** A timestamptz, given in whole milliseconds since 1970-01-01 00:00 UTC (|ms| < 2^53 ÷ 1,000). */
  timestampMs(ms: number): void {
    // Microseconds since 2000-01-01 00:00 UTC, as two 32-bit halves (exact below 2^53).
    const us = (ms - PG_EPOCH_DAYS * 86_400_000) * 1000;
    if (!Number.isSafeInteger(us)) throw new Error(`binary COPY: ${ms} ms is out of range`);
    const hi = Math.floor(us / TWO_32);
    this.room(12);
    this.o = this.buf.writeInt32BE(8, this.o);
    this.o = this.buf.writeInt32BE(hi, this.o);
    this.o = this.buf.writeUInt32BE(us - hi * TWO_32, this.o);
  }

  /** A date, given in days since 1970-01-01. */
  date(day: number): void {
    if (!Number.isInteger(day)) throw new Error(`binary COPY: ${day} is not a whole day`);
    this.room(8);
    this.o = this.buf.writeInt32BE(4, this.o);
    this.o = this.buf.writeInt32BE(day - PG_EPOCH_DAYS, this.o);
  }

  /**
   * The numeric units × 10^−places exactly (`units` a safe integer, `places` 0 … 4), with `places`
   * decimals shown: in base-10,000 digits, the whole part's and one for the fraction.
   */
  numeric(units: number, places: number): void {
    // Amounts in cents below 10,000.00 (nearly every price and discount): a whole part of at most
    // one base-10,000 digit, written directly; the same bytes as below.
    if (places === 2 && units >= 0 && units < 1_000_000 && units === Math.floor(units)) {
      const whole = Math.floor(units / 100);
      const n = whole > 0 ? 1 : 0;
      this.room(16);
      const b = this.buf;
      const o = this.o;
      b[o] = 0;
      b[o + 1] = 0;
      b[o + 2] = 0;
      b[o + 3] = 10 + 2 * n;
      b[o + 4] = 0;
      b[o + 5] = n + 1;
      b[o + 6] = n ? 0 : 255;
      b[o + 7] = n ? 0 : 255;
      b[o + 8] = 0;
      b[o + 9] = 0;
      b[o + 10] = 0;
      b[o + 11] = 2;
      let at = o + 12;
      if (n) {
        b[at++] = whole >> 8;
        b[at++] = whole & 255;
      }
      const f = (units - whole * 100) * 100;
      b[at++] = f >> 8;
      b[at++] = f & 255;
      this.o = at;
      return;
    }
    if (!Number.isSafeInteger(units))
      throw new Error(`binary COPY: ${units} is not a whole number below 2^53`);
    if (!Number.isInteger(places) || places < 0 || places > 4)
      throw new Error(`binary COPY: a numeric with ${places} decimals (0 … 4 here)`);
    const unit = 10 ** places;
    const a = Math.abs(units);
    const whole = wholeQuotient(a, unit);
    const frac = a - whole * unit;
    // The whole part's base-10,000 digits, last first ((w − its last digit) ÷ 10,000 is exact, where
    // a rounded w ÷ 10,000 near 2^53 might not be), then the fraction's.
    const digits = this.digits;
    let n = 0;
    for (let w = whole; w > 0; w = (w - (w % 10_000)) / 10_000) digits[n++] = w % 10_000;
    const weight = n - 1;
    this.room(14 + 2 * n);
    const b = this.buf;
    let o = this.o;
    const bytes = 10 + 2 * n;
    b[o] = 0;
    b[o + 1] = 0;
    b[o + 2] = bytes >> 8;
    b[o + 3] = bytes & 255;
    b[o + 4] = 0;
    b[o + 5] = n + 1;
    b[o + 6] = (weight >> 8) & 255;
    b[o + 7] = weight & 255;
    b[o + 8] = units < 0 ? 0x40 : 0;
    b[o + 9] = 0;
    b[o + 10] = 0;
    b[o + 11] = places;
    o += 12;
    for (let i = n - 1; i >= 0; i--) {
      b[o++] = digits[i]! >> 8;
      b[o++] = digits[i]! & 255;
    }
    const f = frac * 10 ** (4 - places);
    b[o++] = f >> 8;
    b[o++] = f & 255;
    this.o = o;
  }

  /** A one-dimensional float8[] (lower bound 1) of `values`, none of them NULL. */
  float8Array(values: ArrayLike<number>): void {
    const n = values.length;
    this.room(24 + 12 * n);
    const b = this.buf;
    let o = b.writeInt32BE(20 + 12 * n, this.o);
    o = b.writeInt32BE(1, o); // dimensions
    o = b.writeInt32BE(0, o); // no NULLs
    o = b.writeInt32BE(FLOAT8_OID, o);
    o = b.writeInt32BE(n, o);
    o = b.writeInt32BE(1, o); // lower bound
    for (let i = 0; i < n; i++) {
      o = b.writeInt32BE(8, o);
      const v = values[i]!;
      o = b.writeDoubleBE(v === 0 ? 0 : v, o);
    }
    this.o = o;
  }
}

/**
 * Reads binary COPY output fed to it in pieces, in order (feed), without decoding the rows: `onRow`
 * gets a buffer and, per field, the offset of its value in it (−1 for NULL), to decode what it needs
 * with int4At, int8At, centsAt (no array of boxed values per row: millions of rows allocate
 * nothing). The offsets are valid only during the call. A row is read in place from the piece that
 * holds it whole; only a row (or the header) cut between pieces is copied.
 */
export class BinaryRowReader {
  /** Rows read so far. */
  rows = 0;
  /** Whether the trailer was read (anything fed after it is ignored). */
  ended = false;
  private readonly at: Int32Array;
  private rest: Buffer | null = null;
  private headerRead = false;

  constructor(
    private readonly fields: number,
    private readonly onRow: (buf: Buffer, at: Int32Array) => void,
  ) {
    this.at = new Int32Array(fields);
  }

  /** Reads the bytes chunk[start, end), which follow those fed before. */
  feed(chunk: Buffer, start = 0, end = chunk.length): void {
    if (this.ended) return;
    let buf = chunk;
    let o = start;
    let n = end;
    if (this.rest) {
      buf = Buffer.concat([this.rest, chunk.subarray(start, end)]);
      this.rest = null;
      o = 0;
      n = buf.length;
    }
    if (!this.headerRead) {
      if (n - o < 19) {
        this.rest = buf.subarray(o, n);
        return;
      }
      if (!buf.subarray(o, o + 11).equals(SIGNATURE)) throw new Error("binary COPY: not PGCOPY output");
      const extension = buf.readInt32BE(o + 15);
      if (n - o < 19 + extension) {
        this.rest = buf.subarray(o, n);
        return;
      }
      o += 19 + extension;
      this.headerRead = true;
    }
    const { fields, at, onRow } = this;
    while (o + 2 <= n) {
      const count = int16At(buf, o);
      if (count === -1) {
        this.ended = true;
        return;
      }
      if (count !== fields)
        throw new Error(`binary COPY: a row of ${count} fields where ${fields} were expected`);
      // The whole row must be here before any of it is decoded.
      let e = o + 2;
      let complete = true;
      for (let i = 0; i < fields; i++) {
        if (e + 4 > n) {
          complete = false;
          break;
        }
        const len = int4At(buf, e);
        at[i] = len === -1 ? -1 : e + 4;
        e += 4 + (len > 0 ? len : 0);
        if (e > n) {
          complete = false;
          break;
        }
      }
      if (!complete) break;
      o = e;
      this.rows++;
      onRow(buf, at);
    }
    if (o < n) this.rest = buf.subarray(o, n);
  }

  /** After the last piece: an error when the output ended before its trailer. */
  finish(): number {
    if (!this.ended) throw new Error("binary COPY: the output ended before its trailer");
    return this.rows;
  }
}

/**
 * Reads the rows of a binary COPY of `fields` columns from `source` (BinaryRowReader), draining it
 * to its end. Answers the number of rows.
 */
export async function readBinaryRows(
  source: AsyncIterable<Buffer>,
  fields: number,
  onRow: (buf: Buffer, at: Int32Array) => void,
): Promise<number> {
  const reader = new BinaryRowReader(fields, onRow);
  // After the trailer nothing is read, but the source is drained (a pg COPY stream left half-read
  // would leave its connection mid-protocol).
  for await (const chunk of source) reader.feed(chunk);
  return reader.finish();
}

// The readers below take the bytes themselves: Buffer's readInt32BE and kin check their arguments
// on every call, which over millions of rows cost more than the decoding. Offsets come from
// readBinaryRows, which checked that the row's bytes are there.

/** An int4 value at offset p. */
export function int4At(buf: Buffer, p: number): number {
  return (buf[p]! << 24) | (buf[p + 1]! << 16) | (buf[p + 2]! << 8) | buf[p + 3]!;
}

function int16At(buf: Buffer, p: number): number {
  return ((buf[p]! << 24) | (buf[p + 1]! << 16)) >> 16;
}

/** An int8 (or timestamptz, in microseconds since 2000-01-01) value at offset p: must be below ±2^53. */
export function int8At(buf: Buffer, p: number): number {
  const hi = int4At(buf, p);
  if (hi >= 0x200000 || hi < -0x200000) throw new Error("binary COPY: an int8 beyond ±2^53");
  return hi * TWO_32 + (int4At(buf, p + 4) >>> 0);
}

/**
 * A row handler for BinaryRowReader that decodes each row of columns `types` into one array (the
 * same array each time: copy what you keep) for `onRow`. int8 values must be safe integers (|v| <
 * 2^53): a larger one is an error, never a silently rounded figure.
 */
function decodedRows(
  types: readonly BinaryColumn[],
  onRow: (row: BinaryValue[]) => void,
): (buf: Buffer, at: Int32Array) => void {
  const row: BinaryValue[] = new Array(types.length).fill(null);
  return (buf, at) => {
    for (let i = 0; i < types.length; i++) {
      const p = at[i]!;
      if (p === -1) {
        row[i] = null;
        continue;
      }
      const type = types[i];
      if (type === "int4") row[i] = buf.readInt32BE(p);
      else if (type === "cents") row[i] = centsAt(buf, p);
      else if (type === "int8" || type === "timestamptz") row[i] = int8At(buf, p);
      else if (type === "float8") row[i] = buf.readDoubleBE(p);
      else row[i] = buf.toString("utf8", p, p + buf.readInt32BE(p - 4));
    }
    onRow(row);
  };
}

/** Decodes the rows of a binary COPY output `source` (decodedRows). Answers the number of rows. */
export function readBinaryCopy(
  source: AsyncIterable<Buffer>,
  types: readonly BinaryColumn[],
  onRow: (row: BinaryValue[]) => void,
): Promise<number> {
  return readBinaryRows(source, types.length, decodedRows(types, onRow));
}

/**
 * Runs `COPY (query) TO STDOUT (FORMAT binary)` on `conn` (SqlConnection.copyOutRows) and decodes
 * its rows (decodedRows). Answers the number of rows.
 */
export function copyOutDecoded(
  conn: Pick<SqlConnection, "copyOutRows">,
  copySql: string,
  types: readonly BinaryColumn[],
  onRow: (row: BinaryValue[]) => void,
): Promise<number> {
  return conn.copyOutRows(copySql, types.length, decodedRows(types, onRow));
}

/** Powers of 10,000 times 100: a base-10,000 digit's worth in cents at weight 0, 1, 2, 3. */
const DIGIT_CENTS = [100, 1_000_000, 10_000_000_000, 100_000_000_000_000];

/**
 * A numeric in binary form (count of base-10,000 digits, weight of the first, sign, display scale,
 * the digits) as whole cents, exactly: its digits after the point must be whole hundredths.
 */
export function centsAt(buf: Buffer, p: number): number {
  const digits = int16At(buf, p);
  const weight = int16At(buf, p + 2);
  const sign = (buf[p + 4]! << 8) | buf[p + 5]!;
  if (sign !== 0 && sign !== 0x4000) throw new Error("binary COPY: a numeric that is not a number");
  let cents = 0;
  for (let i = 0; i < digits; i++) {
    const d = int16At(buf, p + 8 + 2 * i);
    const e = weight - i;
    if (e >= 0 && e < DIGIT_CENTS.length) cents += d * DIGIT_CENTS[e]!;
    else if (e === -1 && d % 100 === 0) cents += d / 100;
    else if (d !== 0) throw new Error("binary COPY: a numeric beyond whole cents or ±2^53 cents");
  }
  if (!Number.isSafeInteger(cents)) throw new Error("binary COPY: a numeric beyond ±2^53 cents");
  return sign === 0x4000 ? -cents : cents;
}
