// `npm run db:migrate`: applies pending migrations (and the permission catalogue) without serving.
import { ConfigError, loadConfig } from "../server/config.ts";
import { openDatabase } from "../server/db/database.ts";
import { migrate } from "../server/db/migrate.ts";
import { syncPermissionCatalogue } from "../server/modules/auth/auth.service.ts";

try {
  const config = loadConfig();
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 });
  try {
    const log = { info: (m: string) => console.log(m), warn: (m: string) => console.warn(`warning: ${m}`) };
    const { applied, alreadyApplied } = await migrate(db, { logger: log });
    await syncPermissionCatalogue(db);
    console.log(
      `${applied.length} migration(s) applied, ${alreadyApplied} already applied (${db.kind === "postgres" ? "PostgreSQL" : `PGlite in ${config.dataDir}`})`,
    );
  } finally {
    await db.close();
  }
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : (err as Error).message);
  process.exit(1);
}
