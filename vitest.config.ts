import "./tests/node20-polyfills.ts";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/unit/**/*.test.ts", "tests/integration/**/*.test.ts"],
    // Each integration file opens its own database (a fresh PostgreSQL database or an in-memory PGlite).
    pool: "forks",
    // Generous: on a 2-core machine shared with other work a first PGlite start or a child process can take 30 s.
    testTimeout: 90_000,
    hookTimeout: 120_000,
  },
});
