// The AI step's call slots: at most AI_CONCURRENCY calls in flight, their starts spaced by at least
// CALL_START_GAP_MS so that answers do not arrive (and queue on the event loop) all at once.
import { describe, expect, it } from "vitest";
import { CALL_START_GAP_MS, Semaphore } from "../../server/modules/aiValidation/aiValidation.service.ts";

describe("the AI calls' slots", () => {
  it("hold at most the limit at once and hand slots out at least the gap apart", async () => {
    const slots = new Semaphore(3, 20);
    const starts: number[] = [];
    let inFlight = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 9 }, async () => {
        const release = await slots.acquire();
        starts.push(performance.now());
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((r) => setTimeout(r, 70));
        inFlight--;
        release();
      }),
    );
    expect(starts).toHaveLength(9);
    expect(most).toBe(3);
    // Timers may fire up to a millisecond early.
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(19);
  });

  it("space the calls' starts by default", async () => {
    expect(CALL_START_GAP_MS).toBeGreaterThan(0);
    const slots = new Semaphore(8);
    const starts: number[] = [];
    const releases = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const release = await slots.acquire();
        starts.push(performance.now());
        return release;
      }),
    );
    for (const release of releases) release();
    expect(starts.at(-1)! - starts[0]!).toBeGreaterThanOrEqual(3 * CALL_START_GAP_MS - 3);
  });

  it("do not hand a slot out twice when a call releases twice", async () => {
    const slots = new Semaphore(1, 0);
    const first = await slots.acquire();
    const order: string[] = [];
    const second = slots.acquire().then((r) => {
      order.push("second");
      return r;
    });
    const third = slots.acquire().then((r) => {
      order.push("third");
      return r;
    });
    first();
    first();
    await new Promise((r) => setTimeout(r, 20));
    expect(order).toEqual(["second"]);
    (await second)();
    (await third)();
    expect(order).toEqual(["second", "third"]);
  });
});
