// A Full Reset's load of order_lines.csv in one read (on PostgreSQL): the app reads the file's
// lines itself, hands them to the database as binary COPY (no text for it to parse: ≈ 1.2 s of its
// CPU less for 3M lines) and, from the same values, builds the calculation's pass over the order
// lines (order-lines-pass.ts) as they go by, so the run does not stream 3M lines back out of the
// table once it is loaded (≈ 2 s at the start of the calculation).
//
// It takes only what it can read exactly as PostgreSQL's CSV COPY would store it: whole numbers,
// amounts with at most two decimals, ISO timestamps (a zone, or none when the source's zone is UTC)
// with at most three decimals of a second, the three statuses, no empty required field. A file with
// anything else (or a line the database refuses) is loaded as before, by the database's own COPY,
// which names the line and the column of a bad value: the binary rows sent so far are ended, the
// table emptied, and loadFresh() starts over (the "unfit" answer).

import { BinaryRowWriter } from "../db/binary-copy.ts";
import type { SqlConnection } from "../db/database.ts";
import { DayOrders, type OrderLines, orderSetBits, PassLines, productIndex } from "./order-lines-pass.ts";
import type { DataSource } from "./source.ts";
import { type TableDef, targetOf } from "./tables.ts";

const DAY_MS = 86_400_000;
/** Pids below this are remembered in a flat bitmap rather than a Set. */
const FLAT_PIDS = 1 << 24;
/** Bytes of the file read between two turns of the event loop. */
const SLICE = 128 * 1024;

/** The file's columns of order_lines.csv the binary rows carry, in this order (tables.ts). */
const FILE_NAMES = [
  "line_id",
  "order_number",
  "pid",
  "order_date",
  "quantity",
  "price",
  "discount",
  "status",
];
/** The one of them a file may leave out (its default, 0, is sent). */
const DISCOUNT = FILE_NAMES.indexOf("discount");

/**
 * The pass built during the load, before the products are known: each stored line's product is
 * still its pid (OrderLines.chunks[…].product), and `seen` holds every pid of every line.
 */
export class LoadedPass {
  constructor(
    /** The as-of moment the lines were cut at (ms). */
    readonly asOfMs: number,
    private readonly lines: PassLines,
    private readonly seenFlat: Uint8Array,
    private readonly seenOther: Set<number>,
    private readonly ordersByDay: Map<number, number>,
  ) {}

  /**
   * The pass (OrderLines) for the products now in `products` (the run's new table), or null when a
   * line names a pid that is not among them: then the run streams the pass from the table (which
   * counts them) and checks the references as it would have.
   */
  async resolve(conn: SqlConnection): Promise<OrderLines | null> {
    const { pids, indexOf, flat } = await productIndex(conn);
    const indexAt = (pid: number) =>
      flat && pid >= 0 && pid < flat.length ? flat[pid]! : (indexOf.get(pid) ?? -1);
    for (const pid of this.seenOther) if (!indexOf.has(pid)) return null;
    for (let pid = 0; pid < this.seenFlat.length; pid++)
      if (this.seenFlat[pid] && indexAt(pid) < 0) return null;
    const { chunks, lines, discounts } = this.lines;
    for (const chunk of chunks) {
      const product = chunk.product;
      for (let j = 0; j < chunk.n; j++) product[j] = indexAt(product[j]!);
    }
    return { pids, indexOf, chunks, lines, unknownPids: 0, ordersByDay: this.ordersByDay, discounts };
  }
}

/** Why a file is loaded by the database's own COPY instead (for the log and the tests). */
export class Unfit {
  constructor(readonly reason: string) {}
}

enum Ch {
  Quote = 0x22,
  Comma = 0x2c,
  Minus = 0x2d,
  Plus = 0x2b,
  Dot = 0x2e,
  Zero = 0x30,
  Colon = 0x3a,
  T = 0x54,
  Z = 0x5a,
  Space = 0x20,
  Cr = 0x0d,
  Lf = 0x0a,
  Backslash = 0x5c,
}

/** A whole number of buf[s, e) (optional minus, 1–10 digits) within int4, or NaN. */
export function readInt4(buf: Buffer, s: number, e: number): number {
  let i = s;
  const negative = buf[i] === Ch.Minus;
  if (negative) i++;
  if (i === e || e - i > 10) return Number.NaN;
  let v = 0;
  for (; i < e; i++) {
    const c = buf[i]! - Ch.Zero;
    if (c < 0 || c > 9) return Number.NaN;
    v = v * 10 + c;
  }
  v = negative ? -v : v;
  return v > 2147483647 || v < -2147483648 ? Number.NaN : v;
}

/** An amount of buf[s, e) (optional minus, whole digits, at most two decimals) in cents, |v| < 10^10, or NaN. */
export function readCents(buf: Buffer, s: number, e: number): number {
  let i = s;
  const negative = buf[i] === Ch.Minus;
  if (negative) i++;
  let whole = 0;
  let digits = 0;
  for (; i < e && buf[i] !== Ch.Dot; i++) {
    const c = buf[i]! - Ch.Zero;
    if (c < 0 || c > 9) return Number.NaN;
    whole = whole * 10 + c;
    digits++;
  }
  if (digits > 10 || whole >= 1e10) return Number.NaN;
  let cents = whole * 100;
  if (i < e) {
    // buf[i] is the point: one or two decimals after it.
    const places = e - i - 1;
    if (places < 1 || places > 2) return Number.NaN;
    const d1 = buf[i + 1]! - Ch.Zero;
    const d2 = places === 2 ? buf[i + 2]! - Ch.Zero : 0;
    if (d1 < 0 || d1 > 9 || d2 < 0 || d2 > 9) return Number.NaN;
    cents += d1 * 10 + d2;
  } else if (digits === 0) return Number.NaN;
  return negative ? -cents : cents;
}

const digit2 = (buf: Buffer, i: number): number => {
  const a = buf[i]! - Ch.Zero;
  const b = buf[i + 1]! - Ch.Zero;
  return a < 0 || a > 9 || b < 0 || b > 9 ? -1 : a * 10 + b;
};

/**
 * An ISO timestamp of buf[s, e) in ms since 1970 UTC: YYYY-MM-DD, optionally followed by T or a
 * space and HH:MM[:SS[.f{1,3}]], optionally followed by Z or ±HH[[:]MM]. Without a zone it is read as
 * UTC only when `utc` (the source's zone is UTC). NaN for anything else, as for a date that does not
 * exist (2025-02-30) or a time PostgreSQL reads otherwise (24:00, a leap second).
 */
export function readTimestampMs(buf: Buffer, s: number, e: number, utc: boolean): number {
  if (e - s < 10 || buf[s + 4] !== Ch.Minus || buf[s + 7] !== Ch.Minus) return Number.NaN;
  const y1 = digit2(buf, s);
  const y2 = digit2(buf, s + 2);
  const month = digit2(buf, s + 5);
  const day = digit2(buf, s + 8);
  if (y1 < 0 || y2 < 0 || month < 1 || month > 12 || day < 1) return Number.NaN;
  const year = y1 * 100 + y2;
  if (year < 1000) return Number.NaN;
  let i = s + 10;
  let hour = 0;
  let minute = 0;
  let second = 0;
  let ms = 0;
  if (i < e && (buf[i] === Ch.T || buf[i] === Ch.Space)) {
    if (e - i < 6 || buf[i + 3] !== Ch.Colon) return Number.NaN;
    hour = digit2(buf, i + 1);
    minute = digit2(buf, i + 4);
    if (hour < 0 || hour > 23 || minute < 0 || minute > 59) return Number.NaN;
    i += 6;
    if (i < e && buf[i] === Ch.Colon) {
      if (e - i < 3) return Number.NaN;
      second = digit2(buf, i + 1);
      if (second < 0 || second > 59) return Number.NaN;
      i += 3;
      if (i < e && buf[i] === Ch.Dot) {
        i++;
        let places = 0;
        for (; i < e && places < 4; i++, places++) {
          const c = buf[i]! - Ch.Zero;
          if (c < 0 || c > 9) break;
          ms = ms * 10 + c;
        }
        if (places === 0 || places > 3) return Number.NaN;
        ms *= places === 1 ? 100 : places === 2 ? 10 : 1;
      }
    }
  }
  let offsetMin = 0;
  if (i === e) {
    if (!utc) return Number.NaN;
  } else if (buf[i] === Ch.Z && i + 1 === e) {
    // UTC
  } else if (buf[i] === Ch.Plus || buf[i] === Ch.Minus) {
    const sign = buf[i] === Ch.Minus ? -1 : 1;
    const rest = e - i - 1;
    const oh = rest >= 2 ? digit2(buf, i + 1) : -1;
    let om = 0;
    if (rest === 2) om = 0;
    else if (rest === 4) om = digit2(buf, i + 3);
    else if (rest === 5 && buf[i + 3] === Ch.Colon) om = digit2(buf, i + 4);
    else return Number.NaN;
    if (oh < 0 || oh > 15 || om < 0 || om > 59) return Number.NaN;
    offsetMin = sign * (oh * 60 + om);
  } else return Number.NaN;
  // A day past the month's end is not a date PostgreSQL takes.
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (month === 2 ? (leap ? 29 : 28) : MONTH_DAYS[month]!)) return Number.NaN;
  const t =
    daysFromCivil(year, month, day) * DAY_MS + ((hour * 60 + minute - offsetMin) * 60 + second) * 1000 + ms;
  return t;
}

const MONTH_DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days from 1970-01-01 to year-month-day (proleptic Gregorian; H. Hinnant's days_from_civil). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

const STATUS_COMPLETED = Buffer.from("completed");
const STATUS_RETURNED = Buffer.from("returned");
const STATUS_CANCELLED = Buffer.from("cancelled");
function equalsAt(buf: Buffer, s: number, e: number, word: Buffer): boolean {
  if (e - s !== word.length) return false;
  for (let i = 0; i < word.length; i++) if (buf[s + i] !== word[i]) return false;
  return true;
}

/** Splits one CSV line with quotes into its fields' bytes (quotes removed, "" as "), or null if unbalanced. */
function quotedFields(line: Buffer): Buffer[] | null {
  const out: Buffer[] = [];
  let i = 0;
  const n = line.length;
  for (;;) {
    if (line[i] === Ch.Quote) {
      const parts: Buffer[] = [];
      let from = i + 1;
      let j = from;
      for (;;) {
        if (j >= n) return null;
        if (line[j] === Ch.Quote) {
          if (line[j + 1] === Ch.Quote) {
            parts.push(line.subarray(from, j + 1));
            j += 2;
            from = j;
            continue;
          }
          parts.push(line.subarray(from, j));
          break;
        }
        j++;
      }
      out.push(Buffer.concat(parts));
      i = j + 1;
      if (i === n) return out;
      if (line[i] !== Ch.Comma) return null;
      i++;
    } else {
      let j = i;
      while (j < n && line[j] !== Ch.Comma) {
        if (line[j] === Ch.Quote) return null;
        j++;
      }
      out.push(line.subarray(i, j));
      if (j === n) return out;
      i = j + 1;
    }
  }
}

/**
 * Loads order_lines.csv into `target` (the new table, empty, every column NOT NULL) by binary COPY, and builds the pass as of `passAsOf` (null: no pass, the load only).
 * Answers the rows and the pass, or Unfit (the table is emptied again).
 */
export async function loadOrderLinesBinary(opts: {
  conn: SqlConnection;
  source: DataSource;
  def: TableDef;
  schema: string;
  /** SOURCE_TIMEZONE is UTC: a timestamp without a zone is UTC. */
  utc: boolean;
  passAsOf: Date | null;
  signal?: AbortSignal;
  onProgress?: (bytes: number, total: number | undefined) => void;
}): Promise<{ rows: number; pass: LoadedPass | null } | Unfit> {
  const { conn, def, utc } = opts;
  const opened = await opts.source.open(def.file);
  const slot = FILE_NAMES.map(() => -1);
  for (const [i, name] of opened.header.entries()) {
    const k = FILE_NAMES.indexOf(name);
    if (k < 0 || slot[k] !== -1) {
      await (opened.body as AsyncGenerator<Buffer>).return?.(undefined);
      return new Unfit(`column ${name}`);
    }
    slot[k] = i;
  }
  if (slot.some((s, k) => s < 0 && k !== DISCOUNT)) {
    await (opened.body as AsyncGenerator<Buffer>).return?.(undefined);
    return new Unfit("a required column is missing");
  }
  const width = opened.header.length;
  const asOfMs = opts.passAsOf?.getTime() ?? Number.NaN;
  const pass = opts.passAsOf !== null;

  // The pass's arrays (as order-lines-pass.ts builds them), each line's product still its pid.
  const passLines = new PassLines();
  // About 65 bytes a line and two lines an order in a shop's export: the set's size from the file's.
  const orders = new DayOrders(orderSetBits((opened.size ?? 0) / 65 / 2));
  let seenFlat = new Uint8Array(1 << 16);
  const seenOther = new Set<number>();

  let unfit = null as Unfit | null;
  const starts = new Int32Array(width);
  const ends = new Int32Array(width);
  // Room for the binary rows of a slice (≈ 1.4 × its bytes) without growing.
  const out = new BinaryRowWriter(4 * SLICE);

  /** One line's fields buf[starts[k], ends[k]) → a binary row and the pass; false when unfit. */
  const [cId, cNumber, cPid, cDate, cQty, cPrice, cDiscount, cStatus] = slot as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const take = (buf: Buffer, lineNo: number): boolean => {
    const id = readInt4(buf, starts[cId]!, ends[cId]!);
    const pid = readInt4(buf, starts[cPid]!, ends[cPid]!);
    const quantity = readInt4(buf, starts[cQty]!, ends[cQty]!);
    const priceC = readCents(buf, starts[cPrice]!, ends[cPrice]!);
    let discountC = 0;
    if (cDiscount >= 0 && ends[cDiscount]! > starts[cDiscount]!)
      discountC = readCents(buf, starts[cDiscount]!, ends[cDiscount]!);
    const ms = readTimestampMs(buf, starts[cDate]!, ends[cDate]!, utc);
    const ns = starts[cNumber]!;
    const ne = ends[cNumber]!;
    const ss = starts[cStatus]!;
    const se = ends[cStatus]!;
    const completed = equalsAt(buf, ss, se, STATUS_COMPLETED);
    const returned = !completed && equalsAt(buf, ss, se, STATUS_RETURNED);
    if (
      Number.isNaN(id + pid + quantity + priceC + discountC + ms) ||
      ne === ns ||
      !(completed || returned || equalsAt(buf, ss, se, STATUS_CANCELLED))
    ) {
      unfit = new Unfit(`line ${lineNo}`);
      return false;
    }
    out.row(8);
    out.int4(id);
    out.bytes(buf, ns, ne);
    out.int4(pid);
    out.timestampMs(ms);
    out.int4(quantity);
    out.numeric(priceC, 2);
    out.numeric(discountC, 2);
    out.bytes(buf, ss, se);
    if (!pass) return true;
    if (pid >= 0 && pid < FLAT_PIDS) {
      if (pid >= seenFlat.length) {
        let size = seenFlat.length;
        while (size <= pid) size *= 2;
        const grown = new Uint8Array(size);
        grown.set(seenFlat);
        seenFlat = grown;
      }
      seenFlat[pid] = 1;
    } else seenOther.add(pid);
    if ((!completed && !returned) || ms > asOfMs) return true;
    const d = Math.floor(ms / DAY_MS);
    if (completed) {
      // A 64-bit hash of the order number (two 32-bit lanes), for DayOrders.
      let h1 = 0x811c9dc5;
      let h2 = 0x9747b28c ^ (ne - ns);
      for (let i = ns; i < ne; i++) {
        const c = buf[i]!;
        h1 = Math.imul(h1 ^ c, 0x01000193);
        h2 = Math.imul(h2 ^ c, 0x5bd1e995);
        h2 ^= h2 >>> 13;
      }
      h1 ^= h1 >>> 16;
      h1 = Math.imul(h1, 0x85ebca6b);
      h1 ^= h1 >>> 13;
      h1 = Math.imul(h1, 0xc2b2ae35);
      h1 ^= h1 >>> 16;
      h2 ^= h2 >>> 16;
      h2 = Math.imul(h2, 0x7feb352d);
      h2 ^= h2 >>> 15;
      h2 = Math.imul(h2, 0x846ca68b);
      h2 ^= h2 >>> 16;
      orders.add(d, h1 | 0, h2 | 0);
    }
    const amount = quantity * priceC - discountC;
    if (!Number.isSafeInteger(amount)) {
      unfit = new Unfit(`line ${lineNo}: amount`);
      return false;
    }
    passLines.push(pid, d, completed ? 1 : 0, quantity, amount, discountC);
    return true;
  };

  /** Finds the fields of line buf[s, e) (no line end); false when it cannot be read here. */
  const split = (buf: Buffer, s: number, e: number): boolean => {
    let k = 0;
    let from = s;
    for (let i = s; i < e; i++) {
      const c = buf[i]!;
      if (c === Ch.Comma) {
        if (k === width - 1) return false;
        starts[k] = from;
        ends[k++] = i;
        from = i + 1;
      } else if (c === Ch.Quote || c === Ch.Cr || c === Ch.Backslash) return false;
    }
    if (k !== width - 1) return false;
    starts[k] = from;
    ends[k] = e;
    return true;
  };

  /** A line with quotes: its fields unquoted into one buffer. */
  const splitQuoted = (line: Buffer): Buffer | null => {
    const fields = quotedFields(line);
    if (!fields || fields.length !== width) return null;
    const joined = Buffer.concat(fields);
    let o = 0;
    for (const [k, f] of fields.entries()) {
      starts[k] = o;
      o += f.length;
      ends[k] = o;
    }
    return joined;
  };

  let lineNo = 0;
  let bytesRead = 0;
  async function* rows(): AsyncGenerator<Buffer> {
    let carry: Buffer | null = null;
    let header = true;
    // Line ends as the header's (PostgreSQL refuses a file that mixes \n and \r\n): with \r\n,
    // every line ends so but perhaps the last.
    let crlf = false;
    const line = (buf: Buffer, s: number, e: number, last = false): boolean => {
      lineNo++;
      if (header) {
        header = false;
        crlf = e > s && buf[e - 1] === Ch.Cr;
        return true;
      }
      if (crlf) {
        if (e > s && buf[e - 1] === Ch.Cr) e--;
        else if (!last) {
          unfit = new Unfit(`line ${lineNo}: line end`);
          return false;
        }
      }
      if (e === s) {
        unfit = new Unfit(`line ${lineNo}: empty`);
        return false;
      }
      if (split(buf, s, e)) return take(buf, lineNo);
      const text = buf.subarray(s, e);
      if (text.includes(Ch.Cr) || text.includes(Ch.Backslash)) {
        unfit = new Unfit(`line ${lineNo}`);
        return false;
      }
      const joined = splitQuoted(text);
      if (!joined) {
        unfit = new Unfit(`line ${lineNo}: quotes`);
        return false;
      }
      return take(joined, lineNo);
    };
    for await (const piece of opened.body) {
      if (opts.signal?.aborted) throw opts.signal.reason ?? new Error("aborted");
      bytesRead += piece.length;
      const buf = piece;
      let s = 0;
      if (carry) {
        // The line the last piece ended in: joined on its own (not the whole piece to it, which
        // copied every piece once more and made the garbage collector run for the copies).
        const nl = buf.indexOf(Ch.Lf);
        if (nl < 0) {
          carry = Buffer.concat([carry, buf]);
          continue;
        }
        const joined = Buffer.concat([carry, buf.subarray(0, nl)]);
        carry = null;
        if (!line(joined, 0, joined.length)) break;
        s = nl + 1;
      }
      // In slices of about SLICE bytes, each followed by a turn of the event loop: the run's other
      // connection and the server go on meanwhile (a whole piece at once held them ≈ 10 ms a time).
      for (let until = s + SLICE; ; until += SLICE) {
        for (;;) {
          const nl = buf.indexOf(Ch.Lf, s);
          if (nl < 0 || !line(buf, s, nl)) break;
          s = nl + 1;
          if (s >= until) break;
        }
        if (unfit || s < until) break;
        yield out.take();
        await new Promise((resolve) => setImmediate(resolve));
      }
      if (unfit) break;
      if (s < buf.length) carry = Buffer.from(buf.subarray(s));
      opts.onProgress?.(bytesRead, opened.size);
      yield out.take();
    }
    if (!unfit && carry && carry.length > 0) line(carry, 0, carry.length, true);
    // Unfit or not, the binary input ends well: the rows so far are loaded, then emptied again.
    yield out.end();
  }

  let loaded: number;
  try {
    loaded = await conn.copyCsv({
      schema: opts.schema,
      table: def.table,
      columns: FILE_NAMES.map((name) => targetOf(def.columns.find((c) => c.name === name)!)),
      source: rows(),
      header: false,
      binary: true,
      signal: opts.signal,
    });
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    await (opened.body as AsyncGenerator<Buffer>).return?.(undefined);
    return new Unfit(`the database refused a line (${(err as Error).message})`);
  }
  if (unfit) {
    await (opened.body as AsyncGenerator<Buffer>).return?.(undefined);
    return unfit;
  }
  return {
    rows: loaded,
    pass: pass ? new LoadedPass(asOfMs, passLines, seenFlat, seenOther, orders.perDay) : null,
  };
}
