import { describe, expect, it } from "vitest";
import { DayOrders } from "../../server/jobs/order-lines-pass.ts";

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
});
