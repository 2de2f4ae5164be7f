import "./tests/node20-polyfills.ts";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/unit/**/*.test.ts", "tests/integration/**/*.test.ts"],
    // Each integration file opens its own database (a fresh PostgreSQL database or an in-memory PGlite).
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
