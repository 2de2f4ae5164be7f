// `npm start` calls this first: on a fresh clone right after `npm install` it generates the Prisma
// client and builds the web client when they are missing or older than their sources.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const at = (...p) => path.join(root, ...p);

function newestMtime(target) {
  if (!fs.existsSync(target)) return 0;
  const stat = fs.statSync(target);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = 0;
  for (const entry of fs.readdirSync(target))
    newest = Math.max(newest, newestMtime(path.join(target, entry)));
  return newest;
}

function run(cmd, args) {
  const res = spawnSync(cmd, args, { cwd: root, stdio: "inherit" });
  if (res.status !== 0) process.exit(res.status ?? 1);
}

const generatedAt = newestMtime(at("server/db/generated/client.ts"));
if (generatedAt === 0 || generatedAt < newestMtime(at("prisma/schema.prisma"))) {
  run(process.execPath, [at("scripts/prisma-generate.mjs")]);
}

const builtAt = newestMtime(at("dist/client/index.html"));
const sources = ["client", "shared", "vite.config.ts", "package-lock.json"].map((p) => newestMtime(at(p)));
if (builtAt === 0 || builtAt < Math.max(...sources)) {
  // Once after install (and after client changes): about 30 s on 2 cores. Vite prints its own
  // progress (modules transformed, chunks written) so the wait is visible.
  console.log("Building the web client (once after install; about 30 s)…");
  const t0 = Date.now();
  run("npx", ["--no-install", "vite", "build"]);
  console.log(`Web client built in ${((Date.now() - t0) / 1000).toFixed(1)} s.`);
}
