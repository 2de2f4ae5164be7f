// `npm run docs:permissions`: rewrites docs/permissions.md.
import fs from "node:fs";
import { buildApp } from "../server/app.ts";
import { loadConfig } from "../server/config.ts";
import { openDatabase } from "../server/db/database.ts";
import { renderPermissionsDoc } from "./lib/permissions-doc.ts";

const db = await openDatabase({});
const app = await buildApp({
  config: loadConfig({ LOG_LEVEL: "silent", CLIENT_DIST: "/nonexistent" }),
  db,
  logger: false,
});
await app.ready();
fs.writeFileSync(new URL("../docs/permissions.md", import.meta.url), renderPermissionsDoc(app));
await app.close();
await db.close();
console.log("docs/permissions.md written");
