// Long work in the app during a run gives the event loop a turn now and then. A Full Reset on
// PostgreSQL has two connections served by this one thread: while a module works through the 3M
// order lines or 50k products in one go (0.4–0.8 s on the large demo set), the other connection's
// answers wait unread and its next statement unsent, so its database process idles (the run's
// connection lost ≈ 0.8 s so to the sales series' loop alone). A turn costs a few microseconds.
import { setImmediate as nextTurn } from "node:timers/promises";

/** How long work in the app runs at most before it lets the event loop turn, in milliseconds. */
export const PACE_MS = 10;

/**
 * A pacer for one piece of long work: `await pace()` now and then (every chunk of lines, every
 * thousand products) turns the event loop when PACE_MS have passed since the last turn, and
 * otherwise returns at once.
 */
export function pacer(ms = PACE_MS): () => Promise<void> {
  let last = performance.now();
  return async () => {
    const now = performance.now();
    if (now - last < ms) return;
    await nextTurn();
    last = performance.now();
  };
}
