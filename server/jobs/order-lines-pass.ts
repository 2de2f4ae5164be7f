// One pass over the order lines for the calculation modules that add them up in the app (the
// forecast's weekly sums, the dashboards' daily series, the product search's units sold): the
// completed and returned lines up to the as-of moment are streamed out of the database once (binary
// COPY) into typed arrays, ≈ 21 bytes a line (≈ 62 MB for the 3M lines of the large demo set), and
// each of those modules loops over the arrays instead of running a grouped statement of its own.
//
// The arrays are kept for the run (CalcContext.shared) from the first module that asks until every
// module of the run that reads them (CalcModule.readsOrderLines) has ended, on either connection of
// a Full Reset (RunShared.moduleDone); a module that runs without a run's context (a test, a
// benchmark of one module) streams them itself, with the same figures.
import { centsAt, int4At, int8At, PG_EPOCH_DAYS } from "../db/binary-copy.ts";
import type { SqlConnection } from "../db/database.ts";
import type { LoadedPass } from "./order-lines-load.ts";
import type { StockRuns } from "./planning/stock-walk.ts";

const DAY_US = 86_400_000_000;

const DAY_MS = 86_400_000;
/** Pids below this are looked up in a flat array (4 bytes each) rather than a Map. */
const FLAT_PIDS = 1 << 24;

/** A moment's UTC day as the pass counts days (days since 1970-01-01). */
export const passDay = (moment: Date): number => Math.floor(moment.getTime() / DAY_MS);

/** A day of the pass as YYYY-MM-DD. */
export const passDayText = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);

/**
 * Lines per chunk of the arrays (so no copy of a large array as the stream grows): line number j
 * (OrderLines.discounts) is row j & (CHUNK − 1) of chunk j >> CHUNK_BITS.
 */
export const CHUNK_BITS = 18;
const CHUNK = 1 << CHUNK_BITS;

export interface LineChunk {
  /** Lines in this chunk. */
  n: number;
  /** The line's product as an index into OrderLines.pids. */
  product: Int32Array;
  /** The line's UTC day, in days since 1970-01-01. */
  day: Int32Array;
  /** 1 for a completed line, 0 for a returned one. */
  done: Uint8Array;
  quantity: Int32Array;
  /** quantity × price − discount in cents (exact: prices and discounts have two decimals). */
  amountC: Float64Array;
}

export interface OrderLines {
  /** Every product's pid, ascending; a line's product is an index into it. */
  pids: Int32Array;
  /** The product index of each pid. */
  indexOf: Map<number, number>;
  chunks: LineChunk[];
  /** Lines in all. */
  lines: number;
  /**
   * Lines of the table (any status, any day) whose pid is not among the products: the pass reads
   * every line's pid, so it answers the load's reference check (order_lines → products) too.
   */
  unknownPids: number;
  /**
   * Orders per UTC day (days since 1970-01-01): the distinct order numbers with a completed line
   * that day, told apart by a 64-bit hash of the number (DayOrders).
   */
  ordersByDay: Map<number, number>;
  /**
   * The lines with a discount (a few percent of them): their number in stream order (chunk ×
   * CHUNK + row), ascending, and the discount in cents. A line's shelf price × quantity is its
   * amount plus its discount.
   */
  discounts: { n: number; line: Int32Array; cents: Float64Array };
}

/**
 * The distinct (day, order number) pairs of the completed lines, each order number by its 64-bit
 * hash (PostgreSQL's hashtextextended, seed 0), counting each day's pairs as they come. Two
 * different order numbers of one day would have to share all 64 bits to be counted once: for a day
 * of 10,000 orders the chance is about 3 in 10^12. (Counted by the database instead, a hashed
 * DISTINCT over the 2.8M completed lines of the large demo set took 1.7–2.6 s of its CPU; strings
 * for 1.3M order numbers would cost the app a few hundred MB.)
 *
 * Lines come in day order in a shop's export (by order, by date), so while they do, only the
 * current day's pairs are looked up: an open-addressing set of that day in typed arrays, small
 * enough to stay in the processor's cache (one set of all 1.3M pairs, 32 MB, made a cache miss of
 * nearly every new order: a tenth of the pass). Every new pair is also appended to a list; should a
 * day come back after another (lines out of day order), the pairs so far go into one set of all
 * days (≈ 16 bytes a slot; 1.3M orders over two years take 2M slots) and it serves from then on.
 */
export class DayOrders {
  /** The pair added last: an order's lines mostly come one after another, so most adds stop here. */
  private lastDay = 0;
  private lastHi = 0;
  private lastLo = 0;
  private any = false;
  private readonly counts = new Map<number, number>();
  /** New pairs of day `pendingDay` not yet added to `counts` (lines come mostly in day order). */
  private pendingDay = 0;
  private pending = 0;

  // While days come in order: the current day, its set (slot k is daySlots[3k … 3k + 2]: stamp,
  // hi, lo; used when its stamp is `stamp`, so a new day needs no clearing), the days before it,
  // and every pair so far (log[3j … 3j + 2]: day, hi, lo).
  private day = 0;
  private stamp = 0;
  private daySlots = new Int32Array(3 << 12);
  private dayMask = (1 << 12) - 1;
  private daySize = 0;
  private readonly closed = new Set<number>();
  private log: Int32Array | null = new Int32Array(3 << 16);
  private logged = 0;

  // Once a day came back: one set of every pair (slot k is slots[4k … 4k + 3]: used (0/1), day,
  // hi, lo: one cache line per probe, not four), of at least 2^bits slots.
  private slots: Int32Array | null = null;
  private mask = 0;
  private size = 0;
  private readonly bits: number;

  /** Each day's distinct orders so far. */
  get perDay(): Map<number, number> {
    if (this.pending) {
      this.counts.set(this.pendingDay, (this.counts.get(this.pendingDay) ?? 0) + this.pending);
      this.pending = 0;
    }
    return this.counts;
  }

  /** `bits`: the size of the set of all days, should one be needed (orderSetBits). */
  constructor(bits = 16) {
    this.bits = bits;
  }

  /** Adds order (hi, lo) on `day`; counts it for the day the first time the pair is seen. */
  add(day: number, hi: number, lo: number): void {
    if (this.any && lo === this.lastLo && hi === this.lastHi && day === this.lastDay) return;
    const first = !this.any;
    this.any = true;
    this.lastDay = day;
    this.lastHi = hi;
    this.lastLo = lo;
    if (this.slots === null) {
      if (first || day !== this.day) {
        if (!first) this.closed.add(this.day);
        if (this.closed.has(day)) this.allDays();
        else {
          this.day = day;
          this.stamp++;
          this.daySize = 0;
        }
      }
    }
    if (this.slots !== null) {
      if (!this.insert(day, hi, lo)) return;
      if (++this.size * 4 > (this.mask + 1) * 3) this.grow();
    } else {
      if (!this.insertDay(hi, lo)) return;
      this.append(day, hi, lo);
      if (++this.daySize * 4 > (this.dayMask + 1) * 3) this.growDay();
    }
    if (day !== this.pendingDay || this.pending === 0) {
      if (this.pending)
        this.counts.set(this.pendingDay, (this.counts.get(this.pendingDay) ?? 0) + this.pending);
      this.pendingDay = day;
      this.pending = 0;
    }
    this.pending++;
  }

  private insertDay(hi: number, lo: number): boolean {
    const { daySlots, dayMask, stamp } = this;
    // The hash is uniform already.
    let i = lo & dayMask;
    for (;;) {
      const at = i * 3;
      if (daySlots[at] !== stamp) {
        daySlots[at] = stamp;
        daySlots[at + 1] = hi;
        daySlots[at + 2] = lo;
        return true;
      }
      if (daySlots[at + 2] === lo && daySlots[at + 1] === hi) return false;
      i = (i + 1) & dayMask;
    }
  }

  /** Doubles the day's set: its pairs are the last daySize of the list. */
  private growDay(): void {
    this.dayMask = 2 * (this.dayMask + 1) - 1;
    this.daySlots = new Int32Array(3 * (this.dayMask + 1));
    this.stamp = 1;
    const log = this.log!;
    for (let j = this.logged - this.daySize; j < this.logged; j++)
      this.insertDay(log[3 * j + 1]!, log[3 * j + 2]!);
  }

  private append(day: number, hi: number, lo: number): void {
    let log = this.log!;
    if (3 * this.logged === log.length) {
      const grown = new Int32Array(2 * log.length);
      grown.set(log);
      this.log = log = grown;
    }
    const at = 3 * this.logged++;
    log[at] = day;
    log[at + 1] = hi;
    log[at + 2] = lo;
  }

  /** A day came back: every pair so far into one set of all days, which serves from now on. */
  private allDays(): void {
    const log = this.log!;
    let bits = this.bits;
    while ((1 << bits) * 3 < this.logged * 4) bits++;
    this.slots = new Int32Array(4 << bits);
    this.mask = (1 << bits) - 1;
    for (let j = 0; j < this.logged; j++) this.insert(log[3 * j]!, log[3 * j + 1]!, log[3 * j + 2]!);
    this.size = this.logged;
    this.log = null;
    this.daySlots = new Int32Array(0);
    this.closed.clear();
  }

  private insert(day: number, hi: number, lo: number): boolean {
    const { slots, mask } = this;
    // The day is mixed in so one order's days spread too.
    let i = (lo ^ Math.imul(day, 0x9e3779b1)) & mask;
    for (;;) {
      const at = i << 2;
      if (slots![at] === 0) {
        slots![at] = 1;
        slots![at + 1] = day;
        slots![at + 2] = hi;
        slots![at + 3] = lo;
        return true;
      }
      if (slots![at + 3] === lo && slots![at + 2] === hi && slots![at + 1] === day) return false;
      i = (i + 1) & mask;
    }
  }

  private grow(): void {
    const old = this.slots!;
    this.slots = new Int32Array(2 * old.length);
    this.mask = 2 * (this.mask + 1) - 1;
    for (let at = 0; at < old.length; at += 4)
      if (old[at]) this.insert(old[at + 1]!, old[at + 2]!, old[at + 3]!);
  }
}

/** DayOrders' size (bits) for about `pairs` pairs at most three quarters full: 2^16 to 2^24 slots. */
export function orderSetBits(pairs: number): number {
  const slots = Math.max(1, Math.ceil((pairs * 4) / 3));
  return Math.min(24, Math.max(16, Math.ceil(Math.log2(slots))));
}

/** A run's shared state between its calculation modules (CalcContext.shared). */
export class RunShared {
  private lines = new Map<number, Promise<OrderLines>>();
  /** Module stock_history's runs, as it wrote them to product_stock_history, for stock_series. */
  private stockRuns: { asOf: number; runs: StockRuns } | null = null;
  /** From the first pass that ended: whether every order line's pid was among the products. */
  private pidsKnown: boolean | null = null;
  /** The run's modules that read the pass and have not ended yet (null: kept to the end). */
  private readers: Set<string> | null;

  /** `readers`: the names of the run's modules that read the pass; without, it is kept until dropped. */
  constructor(readers?: Iterable<string>) {
    this.readers = readers ? new Set(readers) : null;
  }

  /**
   * Hands over the pass a Full Reset built while it loaded the order lines (order-lines-load.ts):
   * the first module that asks for the lines as of the same moment gets it, once its pids are
   * looked up among the products (or, should a line name an unknown pid, the pass streamed as usual).
   */
  preload(pass: LoadedPass): void {
    this.preloaded = pass;
  }

  private preloaded: LoadedPass | null = null;

  /** The order lines up to asOf, streamed on `conn` the first time they are asked for. */
  orderLines(conn: SqlConnection, asOf: Date): Promise<OrderLines> {
    const key = asOf.getTime();
    let p = this.lines.get(key);
    if (!p) {
      const loaded = this.preloaded?.asOfMs === key ? this.preloaded : null;
      this.preloaded = null;
      p = loaded
        ? loaded.resolve(conn).then((l) => l ?? streamOrderLines(conn, asOf))
        : streamOrderLines(conn, asOf);
      // A failed pass is not kept: the next module that asks streams again (and fails on its own).
      p.then(
        (l) => {
          this.pidsKnown ??= l.unknownPids === 0;
        },
        () => this.lines.delete(key),
      );
      this.lines.set(key, p);
    }
    return p;
  }

  /**
   * Whether every line of the order lines the run reads names a known product: true or false once
   * a pass has ended (kept after its arrays are dropped), null before (or when none streamed).
   */
  everyLinePidKnown(): boolean | null {
    return this.pidsKnown;
  }

  /**
   * Keeps the runs module stock_history wrote to product_stock_history as of asOf (replacing any kept
   * before), for module stock_series, which runs later in the same transaction: no module between
   * them writes that table.
   */
  keepStockRuns(asOf: Date, runs: StockRuns): void {
    this.stockRuns = { asOf: asOf.getTime(), runs };
  }

  /** The runs kept as of asOf, once: they are dropped as they are handed over (or with the run). */
  takeStockRuns(asOf: Date): StockRuns | null {
    const kept = this.stockRuns;
    this.stockRuns = null;
    return kept?.asOf === asOf.getTime() ? kept.runs : null;
  }

  /** Says that a module of the run ended (or failed): after the last reader, the arrays go. */
  moduleDone(name: string): void {
    if (!this.readers?.delete(name) || this.readers.size > 0) return;
    this.lines.clear();
    this.preloaded = null;
  }
}

/** The lines up to asOf: from the run's shared pass when there is one, else streamed now. */
export function orderLinesOf(ctx: {
  conn: SqlConnection;
  asOf: Date;
  shared?: RunShared;
}): Promise<OrderLines> {
  return ctx.shared ? ctx.shared.orderLines(ctx.conn, ctx.asOf) : streamOrderLines(ctx.conn, ctx.asOf);
}

function newChunk(): LineChunk {
  return {
    n: 0,
    product: new Int32Array(CHUNK),
    day: new Int32Array(CHUNK),
    done: new Uint8Array(CHUNK),
    quantity: new Int32Array(CHUNK),
    amountC: new Float64Array(CHUNK),
  };
}

/** The pass's line arrays as they are filled, one line after another (streamed or read from the file). */
export class PassLines {
  readonly chunks: LineChunk[] = [newChunk()];
  private chunk = this.chunks[0]!;
  /** Lines so far. */
  lines = 0;
  discounts: OrderLines["discounts"] = {
    n: 0,
    line: new Int32Array(1 << 14),
    cents: new Float64Array(1 << 14),
  };

  /** A line: its product, UTC day, 1 completed / 0 returned, quantity, amount and discount in cents. */
  push(
    product: number,
    day: number,
    done: number,
    quantity: number,
    amountC: number,
    discountC: number,
  ): void {
    if (this.chunk.n === CHUNK) {
      this.chunk = newChunk();
      this.chunks.push(this.chunk);
    }
    const chunk = this.chunk;
    const j = chunk.n++;
    chunk.product[j] = product;
    chunk.day[j] = day;
    chunk.done[j] = done;
    chunk.quantity[j] = quantity;
    chunk.amountC[j] = amountC;
    if (discountC !== 0) {
      let discounts = this.discounts;
      if (discounts.n === discounts.line.length) {
        const line = new Int32Array(2 * discounts.n);
        const cents = new Float64Array(2 * discounts.n);
        line.set(discounts.line);
        cents.set(discounts.cents);
        discounts = { n: discounts.n, line, cents };
        this.discounts = discounts;
      }
      discounts.line[discounts.n] = this.lines;
      discounts.cents[discounts.n++] = discountC;
    }
    this.lines++;
  }
}

/**
 * The products of the table `products` (as the connection's search path finds it) in pid order:
 * `pids`, each pid's index (`indexOf`), and when the pids allow, a flat array pid → index (−1: none;
 * a Map lookup per line was a tenth of the pass).
 */
export async function productIndex(
  conn: SqlConnection,
): Promise<{ pids: Int32Array; indexOf: Map<number, number>; flat: Int32Array | null }> {
  const products = await conn.query<{ pid: number }>("SELECT pid FROM products ORDER BY pid");
  const pids = Int32Array.from(products, (p) => p.pid);
  const indexOf = new Map<number, number>();
  for (let i = 0; i < pids.length; i++) indexOf.set(pids[i]!, i);
  const maxPid = pids.length ? pids[pids.length - 1]! : 0;
  const flat =
    pids.length && pids[0]! >= 0 && maxPid < FLAT_PIDS ? new Int32Array(maxPid + 1).fill(-1) : null;
  if (flat) for (let i = 0; i < pids.length; i++) flat[pids[i]!] = i;
  return { pids, indexOf, flat };
}

/**
 * Streams every completed and returned line up to asOf (its product, UTC day, status, quantity,
 * amount; the orders of each day). The other lines (cancelled, later than asOf) come too, for their
 * pid only: a pid not among the products is counted (unknownPids) wherever it is.
 */
export async function streamOrderLines(conn: SqlConnection, asOf: Date): Promise<OrderLines> {
  const { pids, indexOf, flat } = await productIndex(conn);
  const maxPid = flat ? flat.length - 1 : 0;
  const out = new PassLines();
  let unknownPids = 0;
  // The set of (day, order) pairs sized from the table's row count as last analyzed (half as many
  // orders as lines, room to spare): one table of the size its growing would reach, without
  // rehashing its way there (for the 1.3M orders of the large demo set the pass's app CPU fell by
  // ≈ 0.8 s: every rehash also allocated new arrays of 1, 2, 4, … 32 MB).
  const [estimate] = await conn.query<{ lines: number }>(
    "SELECT GREATEST(reltuples, 0)::float8 AS lines FROM pg_class WHERE oid = to_regclass('order_lines')",
  );
  const orders = new DayOrders(orderSetBits(Number(estimate?.lines ?? 0) / 2));
  // The columns as stored (the day and the amount are worked out here: in the statement, the date
  // conversion and the numeric arithmetic cost the database about as much as the rest of it),
  // decoded straight into the arrays (copyOutRows: nothing allocated per line).
  await conn.copyOutRows(
    `COPY (
         SELECT pid, order_date,
                CASE WHEN order_date > '${asOf.toISOString()}'::timestamptz THEN 2
                     WHEN status = 'completed' THEN 1 WHEN status = 'returned' THEN 0 ELSE 2 END,
                quantity, price, discount, hashtextextended(order_number, 0)
         FROM order_lines
       ) TO STDOUT (FORMAT binary)`,
    7,
    (buf, at) => {
      const pid = int4At(buf, at[0]!);
      const i = flat ? (pid >= 0 && pid <= maxPid ? flat[pid]! : -1) : (indexOf.get(pid) ?? -1);
      if (i < 0) {
        unknownPids++;
        return;
      }
      const done = int4At(buf, at[2]!);
      if (done === 2) return; // cancelled, or after asOf
      // UTC day: microseconds since 2000-01-01 → days since 1970-01-01 (10,957 days apart).
      const d = Math.floor(int8At(buf, at[1]!) / DAY_US) + PG_EPOCH_DAYS;
      if (done === 1) orders.add(d, int4At(buf, at[6]!), int4At(buf, at[6]! + 4));
      const q = int4At(buf, at[3]!);
      // Whole cents, exact below 2^53 (as the database's int8 would be below 2^63).
      const discount = centsAt(buf, at[5]!);
      const amount = q * centsAt(buf, at[4]!) - discount;
      if (!Number.isSafeInteger(amount))
        throw new Error(`An order line of product ${pid} comes to more than 2^53 cents`);
      out.push(i, d, done, q, amount, discount);
    },
  );
  const { chunks, lines, discounts } = out;
  return { pids, indexOf, chunks, lines, unknownPids, ordersByDay: orders.perDay, discounts };
}
