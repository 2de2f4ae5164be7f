// Runs `prisma generate` without Prisma's native schema engine (it cannot be downloaded here and
// generate does not need it). The variable is set for this one command only: set globally it would
// turn `prisma migrate deploy` into a silent no-op (see README, "Migrations").
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
// In a production-only install (npm ci --omit=dev) the CLI is absent and the client was generated
// at build time: nothing to do.
if (process.argv.includes("--if-present") && !fs.existsSync(path.join(root, "node_modules/prisma")))
  process.exit(0);
const res = spawnSync("npx", ["--no-install", "prisma", "generate"], {
  cwd: root,
  stdio: ["ignore", "pipe", "inherit"],
  env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: "/bin/false", PRISMA_HIDE_UPDATE_MESSAGE: "1" },
});
if (res.status !== 0) {
  process.stdout.write(res.stdout ?? "");
  process.exit(res.status ?? 1);
}
console.log("Prisma client generated (server/db/generated)");
