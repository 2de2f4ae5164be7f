// The stock walk of module stock_history (docs/metrics.md §2, §3, §9), in the app: each product's
// closing stock reconstructed backwards from today's stock over the last 365 days, as sparse runs
// (rows of product_stock_history), and the per-product sums the modules' figures are built from (days
// out of stock, stock-days, the last 90 days' units, and the weekly units and days out of stock of
// σd's 13 weeks and of XYZ's 52 weeks). The sales come from the run's pass over the order lines
// (order-lines-pass.ts), so no order line is read here.
//
// The rule is the one the module's statement used to follow (kept in docs/metrics.md §2):
//
// - A product's rows are its days with completed order lines (their units summed, even to 0), its
//   days with receipts, its start row (on the window start or its life start, whichever is later,
//   when that is not after D0) and its end row on D0 + 1, which carries its stock on hand.
// - Closing stock of a day = on hand + units sold − units received over the later days.
// - Each day with a row starts a run that lasts until the day before the next row; the run's stock
//   is that day's closing stock and its sold_first_day that day's units sold (0 without sales).
// - A run with stock ≤ 0 is out of stock on every day but its first when that day had sales.
//
// Every sum here is of whole units or days: exact in doubles below 2^53, which is checked.
import {
  binaryCopyHeader,
  binaryCopyTrailer,
  int4Field as field,
  PG_EPOCH_DAYS,
} from "../../db/binary-copy.ts";
import type { OrderLines } from "../order-lines-pass.ts";

/** Days in the window: D0 − 364 … D0 (offset 0 … 364); the end row is on offset 365. */
const DAYS = 365;
const END = DAYS;
/** XYZ's weeks (§9) and σd's (§3). */
const WEEKS_52 = 52;
const WEEKS_13 = 13;

export interface StockWalkInput {
  /** D0 as a pass day (days since 1970-01-01). */
  d0: number;
  /** The run's pass over the order lines (its completed lines of the window are the sales). */
  lines: OrderLines;
  /** Every product to walk, ascending by pid (their runs come out in that order). */
  products: { pid: number; onHand: number; lifeStart: number | null }[];
  /**
   * Receipts per product and day: units received (≥ 0 normally), in ascending pid order (as the
   * products); days outside the window are left out.
   */
  receipts: { pid: number; day: number; units: number }[];
  /** Bulk orders (§3) of the last 90 days: left out of σd's weekly units. */
  bulk: { pid: number; day: number; units: number }[];
}

/** A product's sums; null where the statement's aggregate had no row to sum. */
export interface StockWalkFigures {
  pid: number;
  /** Days out of stock in the 365 days (null: no run out of stock). */
  oos365: number | null;
  /** Days out of stock in the last 90 days (null: no run out of stock in them). */
  oos90: number | null;
  /** Σ max(stock, 0) × days over the runs (null: no run). */
  stockDays: number | null;
  /** Units sold on the runs' first days of the last 90 days (null: no run starting in them). */
  sx90: number | null;
  /** σd (§3): of the product's full weeks of the 13, those out of stock (4 days or more). */
  out13: number;
  /** σd: Σ and Σ² of the in-stock weeks' units (bulk orders left out, at least 0). */
  sw13: number;
  sww13: number;
  /** σd: the smallest of those weekly terms (null: no in-stock week with a row). */
  min13: number | null;
  /** XYZ (§9): of the product's full weeks of the 52, those out of stock. */
  out52: number;
  /** XYZ: Σ and Σ² of the in-stock weeks' units (each at least 0). */
  sx52: number;
  sxx52: number;
}

/**
 * The runs of a walk kept in memory (pid, first and last day as offsets from the window's first day,
 * stock), in the order they were written: the run's module stock_series reads them from here instead
 * of streaming product_stock_history back out of the database (≈ 12 bytes a run, ≈ 12 MB for the
 * million runs of the 50k set).
 */
export class StockRuns {
  n = 0;
  pid = new Int32Array(1 << 16);
  from = new Int16Array(1 << 16);
  to = new Int16Array(1 << 16);
  stock = new Int32Array(1 << 16);

  push(pid: number, from: number, to: number, stock: number): void {
    if (this.n === this.pid.length) {
      const grow = <T extends Int32Array | Int16Array>(a: T, b: T): T => {
        b.set(a);
        return b;
      };
      const size = 2 * this.n;
      this.pid = grow(this.pid, new Int32Array(size));
      this.from = grow(this.from, new Int16Array(size));
      this.to = grow(this.to, new Int16Array(size));
      this.stock = grow(this.stock, new Int32Array(size));
    }
    const i = this.n++;
    this.pid[i] = pid;
    this.from[i] = from;
    this.to[i] = to;
    this.stock[i] = stock;
  }
}

/** Bytes of a run as binary COPY input: a field count and five int4 fields of 4 + 4 bytes. */
const RUN_BYTES = 2 + 5 * 8;
const CHUNK_RUNS = Math.floor((1 << 20) / RUN_BYTES);

/**
 * The runs of a walk written as binary COPY input of product_stock_history (pid, valid_from,
 * valid_to, stock, sold_first_day) as they come, in chunks of about 1 MB: the million runs of the 50k
 * set are never all in memory.
 */
class RunWriter {
  private buf = Buffer.allocUnsafe(CHUNK_RUNS * RUN_BYTES);
  private o = 0;
  /** Runs written so far. */
  n = 0;

  /** `firstDay`: the window's first day (days since 1970-01-01), which offsets count from. */
  constructor(private readonly firstDay: number) {}

  push(pid: number, from: number, to: number, stock: number, sold: number): void {
    if (stock < -(2 ** 31) || stock >= 2 ** 31)
      throw new Error(`The stock of product ${pid} comes to ${stock}, beyond a 32-bit whole number`);
    const b = this.buf;
    const o = this.o;
    b[o] = 0;
    b[o + 1] = 5;
    field(b, o + 2, pid);
    field(b, o + 10, this.firstDay + from - PG_EPOCH_DAYS);
    field(b, o + 18, this.firstDay + to - PG_EPOCH_DAYS);
    field(b, o + 26, stock);
    field(b, o + 34, sold);
    this.o = o + RUN_BYTES;
    this.n++;
  }

  /** Whether the chunk is (nearly) full: take() it before a product's runs may overflow it. */
  get full(): boolean {
    return this.o > this.buf.length - (DAYS + 1) * RUN_BYTES;
  }

  /** The chunk written so far; writing goes on in a new one. */
  take(): Buffer {
    const out = this.buf.subarray(0, this.o);
    this.buf = Buffer.allocUnsafe(CHUNK_RUNS * RUN_BYTES);
    this.o = 0;
    return out;
  }
}

/** The full weeks since the life start (SQL's integer division truncates toward zero). */
function fullWeeks(d0: number, lifeStart: number | null, cap: number): number {
  if (lifeStart === null) return 0;
  return Math.min(cap, Math.max(0, Math.trunc((d0 - lifeStart + 1) / 7)));
}

function safe(value: number, pid: number): number {
  if (!Number.isSafeInteger(value))
    throw new Error(`The stock history of product ${pid} comes to more than 2^53`);
  return value;
}

/**
 * Walks every product, yielding its runs as binary COPY input of product_stock_history in (pid,
 * valid_from) order (products in the order given), and adding each product's sums to `figures` as it
 * goes (all of them once the last chunk is taken); with `keep`, its runs too.
 */
export function* walkStock(
  input: StockWalkInput,
  figures: StockWalkFigures[],
  keep?: StockRuns,
): Generator<Buffer> {
  const { d0, lines, products } = input;
  const w = d0 - (DAYS - 1);
  const nIdx = lines.pids.length;

  // The window's completed lines grouped by product (a counting sort): their day offset and units.
  const count = new Int32Array(nIdx + 1);
  for (const c of lines.chunks) {
    const { product, day, done } = c;
    for (let i = 0; i < c.n; i++) if (done[i] && day[i]! >= w) count[product[i]! + 1]!++;
  }
  for (let p = 0; p < nIdx; p++) count[p + 1]! += count[p]!;
  const start = count.slice();
  const lineDay = new Uint16Array(count[nIdx]!);
  const lineUnits = new Int32Array(count[nIdx]!);
  for (const c of lines.chunks) {
    const { product, day, done, quantity } = c;
    for (let i = 0; i < c.n; i++) {
      if (!done[i] || day[i]! < w) continue;
      const j = start[product[i]!]!++;
      lineDay[j] = day[i]! - w;
      lineUnits[j] = quantity[i]!;
    }
  }

  // Receipts and bulk orders by pid (few: a list per product that has any).
  // Receipts are read alongside the products, both in pid order.
  const receipts = input.receipts;
  for (let i = 1; i < receipts.length; i++)
    if (receipts[i]!.pid < receipts[i - 1]!.pid)
      throw new Error("walkStock: receipts must come in pid order");
  let nextReceipt = 0;
  const bulkOf = new Map<number, Float64Array>();
  for (const b of input.bulk) {
    const k = Math.trunc((d0 - b.day) / 7);
    if (k < 0 || k >= WEEKS_13) continue;
    const weeks = bulkOf.get(b.pid) ?? new Float64Array(WEEKS_13);
    bulkOf.set(b.pid, weeks);
    weeks[k]! += b.units;
  }

  // Per day of the product being walked: its units sold, received and whether it has a row. A
  // day's cells belong to the product whose generation `seen` holds, so nothing is cleared.
  const seen = new Int32Array(DAYS);
  const hasSale = new Uint8Array(DAYS);
  const sold = new Int32Array(DAYS);
  const received = new Int32Array(DAYS);
  const weekOut = new Int32Array(WEEKS_52);
  const weekUnits = new Float64Array(WEEKS_52);
  const weekRow13 = new Uint8Array(WEEKS_13);
  // The product's runs as walked (latest first), written out oldest first: the input then comes in
  // the primary key's order (pid, valid_from), which the key's build finds already sorted.
  const runFrom = new Int32Array(DAYS);
  const runTo = new Int32Array(DAYS);
  const runStock = new Float64Array(DAYS);
  const runSold = new Int32Array(DAYS);
  const d90 = DAYS - 90; // offset of D0 − 89
  const weekOf = (off: number) => Math.trunc((DAYS - 1 - off) / 7);

  const runs = new RunWriter(w);
  yield binaryCopyHeader();
  let gen = 0;
  let first = END;
  /** Marks a day of the product being walked as having a row: its cells are reset on first sight. */
  const row = (off: number) => {
    if (seen[off] !== gen) {
      seen[off] = gen;
      sold[off] = 0;
      received[off] = 0;
      hasSale[off] = 0;
      if (off < first) first = off;
    }
  };
  for (const { pid, onHand, lifeStart } of products) {
    if (runs.full) yield runs.take();
    gen++;
    first = END;
    const idx = lines.indexOf.get(pid);
    if (idx !== undefined) {
      for (let j = count[idx]!; j < count[idx + 1]!; j++) {
        const off = lineDay[j]!;
        row(off);
        hasSale[off] = 1;
        sold[off]! += lineUnits[j]!;
      }
    }
    while (nextReceipt < receipts.length && receipts[nextReceipt]!.pid < pid) nextReceipt++;
    for (; nextReceipt < receipts.length && receipts[nextReceipt]!.pid === pid; nextReceipt++) {
      const r = receipts[nextReceipt]!;
      const off = r.day - w;
      if (off < 0 || off >= DAYS) continue;
      row(off);
      received[off]! += r.units;
    }
    if (lifeStart !== null && lifeStart <= d0) {
      const off = Math.max(lifeStart - w, 0);
      row(off);
    }

    weekOut.fill(0);
    weekUnits.fill(0);
    weekRow13.fill(0);
    let runsHere = 0;
    let oos365 = 0;
    let anyOos = 0;
    let oos90 = 0;
    let anyOos90 = 0;
    let stockDays = 0;
    let sx90 = 0;
    let anySx90 = 0;
    // Backwards from the end row: `stock` is the sum of the later rows (on hand + sold − received).
    let stock = onHand;
    let next = END;
    for (let off = DAYS - 1; off >= first; off--) {
      if (seen[off] !== gen) continue;
      const to = next - 1;
      const s = hasSale[off] ? sold[off]! : 0;
      runFrom[runsHere] = off;
      runTo[runsHere] = to;
      runStock[runsHere] = stock;
      runSold[runsHere] = s;
      runsHere++;
      const days = to - off + 1;
      if (stock > 0) stockDays += stock * days;
      if (off >= d90) {
        sx90 += s;
        anySx90 = 1;
      }
      if (s !== 0 && off >= 1) {
        const k = weekOf(off);
        weekUnits[k]! += s;
        if (k < WEEKS_13) weekRow13[k] = 1;
      }
      if (stock <= 0) {
        const firstIn = s > 0 ? 1 : 0;
        oos365 += days - firstIn;
        anyOos = 1;
        if (to >= d90) {
          oos90 += to - Math.max(off, d90) + 1 - (firstIn && off >= d90 ? 1 : 0);
          anyOos90 = 1;
        }
        // Days out of stock per week (the first day is in stock when it had sales), week by week.
        const a = Math.max(off, 1);
        if (a <= to) {
          for (let k = weekOf(to); k <= weekOf(a); k++) {
            const weekLast = DAYS - 1 - 7 * k;
            const out = Math.min(to, weekLast) - Math.max(a, weekLast - 6) + 1;
            weekOut[k]! += out - (firstIn && a === off && off >= weekLast - 6 ? 1 : 0);
            // (σd's 13 weeks start on D0 − 90: the week numbers below 13 are theirs.)
            if (k < WEEKS_13) weekRow13[k] = 1;
          }
        }
      }
      stock += s - received[off]!;
      next = off;
    }

    for (let r = runsHere - 1; r >= 0; r--) {
      runs.push(pid, runFrom[r]!, runTo[r]!, runStock[r]!, runSold[r]!);
      keep?.push(pid, runFrom[r]!, runTo[r]!, runStock[r]!);
    }

    // σd's weeks (§3): the full weeks since the life start, at most 13.
    const bulk = bulkOf.get(pid);
    const wol = fullWeeks(d0, lifeStart, WEEKS_13);
    let out13 = 0;
    let sw13 = 0;
    let sww13 = 0;
    let min13: number | null = null;
    for (let k = 0; k < wol; k++) {
      if (!weekRow13[k]) continue;
      if (weekOut[k]! >= 4) {
        out13++;
        continue;
      }
      const term = Math.max(weekUnits[k]! - (bulk?.[k] ?? 0), 0);
      sw13 += term;
      sww13 += term * term;
      if (min13 === null || term < min13) min13 = term;
    }
    // XYZ's weeks (§9): the full weeks since the life start, at most 52.
    const nf = fullWeeks(d0, lifeStart, WEEKS_52);
    let out52 = 0;
    let sx52 = 0;
    let sxx52 = 0;
    for (let k = 0; k < nf; k++) {
      if (weekOut[k]! >= 4) {
        out52++;
        continue;
      }
      const x = Math.max(weekUnits[k]!, 0);
      sx52 += x;
      sxx52 += x * x;
    }
    figures.push({
      pid,
      oos365: anyOos ? oos365 : null,
      oos90: anyOos90 ? oos90 : null,
      stockDays: runsHere ? safe(stockDays, pid) : null,
      sx90: anySx90 ? safe(sx90, pid) : null,
      out13,
      sw13: safe(sw13, pid),
      sww13: safe(sww13, pid),
      min13,
      out52,
      sx52: safe(sx52, pid),
      sxx52: safe(sxx52, pid),
    });
  }
  yield runs.take();
  yield binaryCopyTrailer();
}
