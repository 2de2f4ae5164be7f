// Reads the output of `COPY (…) TO STDOUT (FORMAT binary)` (PostgreSQL's documented binary COPY
// format: an 11-byte signature, flags and a header extension, then per row a 16-bit field count and
// per field a 32-bit length, −1 for NULL, and the value in network byte order; a count of −1 ends
// it). Used where a calculation streams millions of narrow rows into the app (SqlConnection.copyOut)
// instead of aggregating them with many grouping passes in SQL.

/**
 * The column types a binary COPY here may carry. "cents" is a numeric with at most two decimals,
 * answered as whole cents (an error for a NaN, an infinity, a third decimal or beyond ±2^53 cents);
 * "timestamptz" is answered as microseconds since 2000-01-01 00:00 UTC (PostgreSQL's epoch).
 */
export type BinaryColumn = "int4" | "int8" | "float8" | "text" | "cents" | "timestamptz";

export type BinaryValue = number | string | null;

const SIGNATURE = Buffer.from("PGCOPY\n\xff\r\n\0", "latin1");
const TWO_32 = 4_294_967_296;

/**
 * Decodes the rows of a binary COPY whose columns have `types`, calling `onRow` with one array per
 * row (the same array each time: copy what you keep). int8 values must be safe integers (|v| <
 * 2^53): a larger one is an error, never a silently rounded figure. Answers the number of rows.
 */
export async function readBinaryCopy(
  source: AsyncIterable<Buffer>,
  types: readonly BinaryColumn[],
  onRow: (row: BinaryValue[]) => void,
): Promise<number> {
  const row: BinaryValue[] = new Array(types.length).fill(null);
  let rest: Buffer | null = null;
  let headerRead = false;
  let ended = false;
  let rows = 0;
  for await (const chunk of source) {
    // After the trailer nothing is read, but the source is drained (a pg COPY stream left
    // half-read would leave its connection mid-protocol).
    if (ended) continue;
    const buf: Buffer = rest ? Buffer.concat([rest, chunk]) : chunk;
    rest = null;
    let o = 0;
    if (!headerRead) {
      if (buf.length < 19) {
        rest = buf;
        continue;
      }
      if (!buf.subarray(0, 11).equals(SIGNATURE)) throw new Error("binary COPY: not PGCOPY output");
      const extension = buf.readInt32BE(15);
      if (buf.length < 19 + extension) {
        rest = buf;
        continue;
      }
      o = 19 + extension;
      headerRead = true;
    }
    const n = buf.length;
    while (o + 2 <= n) {
      const fields = buf.readInt16BE(o);
      if (fields === -1) {
        ended = true;
        o += 2;
        break;
      }
      if (fields !== types.length)
        throw new Error(`binary COPY: a row of ${fields} fields where ${types.length} were expected`);
      // The whole row must be here before any of it is decoded.
      let end = o + 2;
      let complete = true;
      for (let i = 0; i < fields; i++) {
        if (end + 4 > n) {
          complete = false;
          break;
        }
        const len = buf.readInt32BE(end);
        end += 4 + (len > 0 ? len : 0);
        if (end > n) {
          complete = false;
          break;
        }
      }
      if (!complete) break;
      let p = o + 2;
      for (let i = 0; i < fields; i++) {
        const len = buf.readInt32BE(p);
        p += 4;
        if (len === -1) {
          row[i] = null;
          continue;
        }
        const type = types[i];
        if (type === "int4") row[i] = buf.readInt32BE(p);
        else if (type === "cents") row[i] = centsOf(buf, p);
        else if (type === "int8" || type === "timestamptz") {
          const hi = buf.readInt32BE(p);
          if (hi >= 0x200000 || hi < -0x200000) throw new Error("binary COPY: an int8 beyond ±2^53");
          row[i] = hi * TWO_32 + buf.readUInt32BE(p + 4);
        } else if (type === "float8") row[i] = buf.readDoubleBE(p);
        else row[i] = buf.toString("utf8", p, p + len);
        p += len;
      }
      o = end;
      rows++;
      onRow(row);
    }
    if (!ended && o < n) rest = buf.subarray(o);
  }
  if (!ended) throw new Error("binary COPY: the output ended before its trailer");
  return rows;
}

/** Powers of 10,000 times 100: a base-10,000 digit's worth in cents at weight 0, 1, 2, 3. */
const DIGIT_CENTS = [100, 1_000_000, 10_000_000_000, 100_000_000_000_000];

/**
 * A numeric in binary form (count of base-10,000 digits, weight of the first, sign, display scale,
 * the digits) as whole cents, exactly: its digits after the point must be whole hundredths.
 */
function centsOf(buf: Buffer, p: number): number {
  const digits = buf.readInt16BE(p);
  const weight = buf.readInt16BE(p + 2);
  const sign = buf.readUInt16BE(p + 4);
  if (sign !== 0 && sign !== 0x4000) throw new Error("binary COPY: a numeric that is not a number");
  let cents = 0;
  for (let i = 0; i < digits; i++) {
    const d = buf.readInt16BE(p + 8 + 2 * i);
    const e = weight - i;
    if (e >= 0 && e < DIGIT_CENTS.length) cents += d * DIGIT_CENTS[e]!;
    else if (e === -1 && d % 100 === 0) cents += d / 100;
    else if (d !== 0) throw new Error("binary COPY: a numeric beyond whole cents or ±2^53 cents");
  }
  if (!Number.isSafeInteger(cents)) throw new Error("binary COPY: a numeric beyond ±2^53 cents");
  return sign === 0x4000 ? -cents : cents;
}

/** Days from 1970-01-01 to 2000-01-01, PostgreSQL's epoch of a binary date. */
const PG_EPOCH_DAYS = 10_957;

/**
 * Writes `rows` rows of int4 columns as binary COPY input, in chunks of about 1 MB: `value(i, c)` is
 * row i's column c, a whole number of 32 bits (a "date" column's value is its day since
 * 1970-01-01). Binary input costs the database far less than CSV: no text to parse.
 */
export function* binaryCopyRows(
  types: readonly ("int4" | "date")[],
  rows: number,
  value: (row: number, column: number) => number,
): Generator<Buffer> {
  const rowBytes = 2 + 8 * types.length;
  const perChunk = Math.max(1, Math.floor((1 << 20) / rowBytes));
  const header = Buffer.alloc(19);
  SIGNATURE.copy(header);
  yield header;
  for (let first = 0; first < rows; first += perChunk) {
    const last = Math.min(rows, first + perChunk);
    const buf = Buffer.allocUnsafe((last - first) * rowBytes);
    let o = 0;
    for (let i = first; i < last; i++) {
      buf.writeInt16BE(types.length, o);
      o += 2;
      for (let c = 0; c < types.length; c++) {
        const v = value(i, c);
        if (!Number.isInteger(v) || v < -(2 ** 31) || v >= 2 ** 31)
          throw new Error(`binary COPY: ${v} is not a 32-bit whole number`);
        buf.writeInt32BE(4, o);
        buf.writeInt32BE(types[c] === "date" ? v - PG_EPOCH_DAYS : v, o + 4);
        o += 8;
      }
    }
    yield buf;
  }
  const trailer = Buffer.alloc(2);
  trailer.writeInt16BE(-1);
  yield trailer;
}
