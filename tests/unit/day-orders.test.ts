import { describe, expect, it } from "vitest";
import { DayOrders, orderSetBits } from "../../server/jobs/order-lines-pass.ts";

describe("DayOrders (orders per day in the pass over the order lines)", () => {
  it("counts each order once a day, an order on two days on both, and keeps its counts as it grows", () => {
    const set = new DayOrders(2); // 4 slots: grows many times below
    const days = [20_000, 20_001, 20_002];
    // 3,000 orders a day (hashes that differ in one half only, or in the other), each added twice.
    for (const d of days)
      for (let k = 0; k < 3000; k++) {
        set.add(d, k, 7);
        set.add(d, -1, k);
        set.add(d, k, 7);
      }
    // The same order number (hash) on another day is another order of that day.
    set.add(20_003, 5, 7);
    set.add(20_003, 5, 7);
    expect([...set.perDay]).toEqual([
      [20_000, 6000],
      [20_001, 6000],
      [20_002, 6000],
      [20_003, 1],
    ]);
  });

  it("counts an order whose day and hash are all zeros, first or after a repeat", () => {
    const set = new DayOrders(2);
    set.add(0, 0, 0);
    set.add(0, 0, 0);
    set.add(1, 0, 0);
    set.add(0, 0, 0);
    expect([...set.perDay]).toEqual([
      [0, 1],
      [1, 1],
    ]);
  });

  it("counts as a set of every (day, order) would, whether the days come in order or come back", () => {
    // A small deterministic generator (xorshift) for the lines.
    let seed = 12345;
    const next = () => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return seed >>> 0;
    };
    const lines: [number, number, number][] = [];
    // 40 days in order, each with up to 12,000 lines of orders of 1–3 lines drawn from 5,000 order
    // numbers: most days' sets grow, an order comes back later the same day (not right after
    // itself), and the same hash comes on several days.
    for (let d = 0; d < 40; d++) {
      const orders = 1 + (next() % 12000);
      for (let k = 0; k < orders; k++) {
        const o = next() % 5000;
        for (let l = 1 + (next() % 3); l > 0; l--) lines.push([19_000 + d, o, ~o]);
      }
    }
    // Then lines of days seen before (a late correction), repeats and new orders among them, and
    // the days in order again.
    const late: [number, number, number][] = [];
    for (let k = 0; k < 5000; k++) {
      const d = 19_000 + (next() % 45);
      const o = next() % 25000;
      late.push([d, o, ~o]);
    }
    const reference = (all: [number, number, number][]) => {
      const seen = new Map<number, Set<number>>();
      for (const [d, hi] of all) {
        if (!seen.has(d)) seen.set(d, new Set());
        seen.get(d)!.add(hi);
      }
      return new Map([...seen].map(([d, set]) => [d, set.size]));
    };
    for (const all of [lines, [...lines, ...late]]) {
      const set = new DayOrders(16);
      for (const [d, hi, lo] of all) set.add(d, hi, lo);
      const expected = reference(all);
      expect(new Map([...set.perDay].filter(([, n]) => n > 0))).toEqual(expected);
    }
  });

  it("is sized for its expected pairs at most three quarters full, within 2^16 … 2^24 slots", () => {
    // The large demo set: 2.96M lines, so ≈ 1.48M pairs expected: 2^21 slots (2.1M) holds them.
    expect(orderSetBits(1_480_000)).toBe(21);
    expect(2 ** orderSetBits(1_480_000) * 0.75).toBeGreaterThanOrEqual(1_480_000);
    expect(2 ** 20 * 0.75).toBeLessThan(1_480_000);
    // A table never analyzed (reltuples −1, read as 0) or a small one: the smallest size.
    expect(orderSetBits(0)).toBe(16);
    expect(orderSetBits(1000)).toBe(16);
    // Beyond 2^24 × ¾ pairs the set starts at its largest and grows as it needs.
    expect(orderSetBits(1e9)).toBe(24);
  });
});
