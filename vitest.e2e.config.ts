import "./tests/node20-polyfills.ts";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/e2e/**/*.test.ts"],
    pool: "forks",
    // One Chromium and one app per file; files run one after another on a 2-core machine.
    fileParallelism: false,
    testTimeout: 60_000,
    // A browser under load (2 cores, a server and Chromium) needs more than the 1 s default.
    expect: { poll: { timeout: 10_000, interval: 100 } },
    hookTimeout: 120_000,
  },
});
