// The stock walk of module stock_history (server/jobs/planning/stock-walk.ts) on two products worked
// out by hand from docs/metrics.md §2: S(d − 1) = S(d) − received(d) + sold(d), a run per day with a
// row, a run with stock ≤ 0 out of stock on every day but a first day with sales.
import { describe, expect, it } from "vitest";
import type { OrderLines } from "../../server/jobs/order-lines-pass.ts";
import { type StockWalkFigures, walkStock } from "../../server/jobs/planning/stock-walk.ts";

const D0 = Date.parse("2026-03-01") / 86_400_000;
const W = D0 - 364;

/** A pass holding these completed (or returned) lines. */
function passOf(
  pids: number[],
  lines: { pid: number; day: number; q: number; done?: boolean }[],
): OrderLines {
  const n = lines.length;
  const chunk = {
    n,
    product: Int32Array.from(lines, (l) => pids.indexOf(l.pid)),
    day: Int32Array.from(lines, (l) => l.day),
    done: Uint8Array.from(lines, (l) => (l.done === false ? 0 : 1)),
    quantity: Int32Array.from(lines, (l) => l.q),
    amountC: new Float64Array(n),
  };
  return {
    pids: Int32Array.from(pids),
    indexOf: new Map(pids.map((p, i) => [p, i])),
    chunks: [chunk],
    lines: n,
    unknownPids: 0,
    ordersByDay: new Map(),
    discounts: { n: 0, line: new Int32Array(0), cents: new Float64Array(0) },
  };
}

/** The runs decoded from the binary COPY input, as (pid, from, to, stock, sold) with days as offsets from D0. */
function decode(chunks: Buffer[]): number[][] {
  const all = Buffer.concat(chunks);
  expect(all.subarray(0, 11).toString("latin1")).toBe("PGCOPY\n\xff\r\n\0");
  const runs: number[][] = [];
  let o = 19;
  while (all.readInt16BE(o) !== -1) {
    expect(all.readInt16BE(o)).toBe(5);
    const v = [0, 1, 2, 3, 4].map((i) => all.readInt32BE(o + 2 + 8 * i + 4));
    const day = (pgDay: number) => pgDay + 10_957 - D0; // PostgreSQL's days since 2000 → offset from D0
    runs.push([v[0]!, day(v[1]!), day(v[2]!), v[3]!, v[4]!]);
    o += 42;
  }
  expect(o + 2).toBe(all.length);
  return runs;
}

describe("walkStock", () => {
  it("walks back from stock on hand: runs, days out of stock, weekly sums", () => {
    const figures: StockWalkFigures[] = [];
    const chunks = [
      ...walkStock(
        {
          d0: D0,
          lines: passOf(
            [1, 2, 3],
            [
              { pid: 1, day: D0 - 2, q: 3 },
              { pid: 1, day: D0, q: 2 },
              { pid: 1, day: D0, q: -1 }, // a correction: the day's sales are 1
              { pid: 2, day: D0 - 15, q: 2 },
              { pid: 2, day: D0 - 1, q: 5, done: false }, // returned: not a sale, no row
              { pid: 1, day: W - 1, q: 9 }, // before the 365 days: not walked
            ],
          ),
          products: [
            { pid: 1, onHand: 5, lifeStart: D0 - 10 },
            { pid: 2, onHand: 0, lifeStart: D0 - 20 },
            { pid: 3, onHand: 4, lifeStart: D0 + 3 }, // a life start after D0: no start row
          ],
          receipts: [{ pid: 1, day: D0 - 5, units: 4 }],
          bulk: [],
        },
        figures,
      ),
    ];
    // Product 1: S(D0) = 5, S(D0−1) = 6, S(D0−3) = 9, S(D0−6) = 5 (before the receipt of 4).
    // Product 2: S = 0 from its sale on D0 − 15 on (out of stock but on that first day), 2 before.
    // In the primary key's order (pid, valid_from).
    expect(decode(chunks)).toEqual([
      [1, -10, -6, 5, 0],
      [1, -5, -3, 9, 0],
      [1, -2, -1, 6, 3],
      [1, 0, 0, 5, 1],
      [2, -20, -16, 2, 0],
      [2, -15, 0, 0, 2],
    ]);
    expect(figures).toEqual([
      {
        pid: 1,
        oos365: null,
        oos90: null,
        stockDays: 5 * 5 + 9 * 3 + 6 * 2 + 5 * 1,
        sx90: 4,
        // One full week since its life start (D0 − 6 … D0): in stock, 3 + 1 units.
        out13: 0,
        sw13: 4,
        sww13: 16,
        min13: 4,
        out52: 0,
        sx52: 4,
        sxx52: 16,
      },
      {
        pid: 2,
        oos365: 15,
        oos90: 15,
        stockDays: 2 * 5,
        sx90: 2,
        // Three full weeks: weeks 0 and 1 out of stock (7 days each), week 2 out on 1 day and sold 2.
        out13: 2,
        sw13: 2,
        sww13: 4,
        min13: 2,
        out52: 2,
        sx52: 2,
        sxx52: 4,
      },
      {
        pid: 3,
        oos365: null,
        oos90: null,
        stockDays: null,
        sx90: null,
        out13: 0,
        sw13: 0,
        sww13: 0,
        min13: null,
        out52: 0,
        sx52: 0,
        sxx52: 0,
      },
    ]);
  });
});
