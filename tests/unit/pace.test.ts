import { describe, expect, it } from "vitest";
import { pacer } from "../../server/db/pace.ts";

const busy = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // work in the app, holding the event loop
  }
};

describe("pacer (long work in the app lets the event loop turn)", () => {
  it("lets waiting callbacks run once its time has passed, and not before", async () => {
    const pace = pacer(10);
    let ran = 0;
    setImmediate(() => ran++);
    // Within the time: returns at once, the callback still waits.
    busy(2);
    await pace();
    expect(ran).toBe(0);
    // After it: a turn of the event loop, the callback has run.
    busy(12);
    await pace();
    expect(ran).toBe(1);
    // And it counts again from that turn.
    setImmediate(() => ran++);
    await pace();
    expect(ran).toBe(1);
  });
});
