import { buildApp } from "./app.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { DataDirInUseError, openDatabase } from "./db/database.ts";
import { MigrationError } from "./db/migrate.ts";
import { bootstrapDemoData, queueFirstImport } from "./jobs/demo-bootstrap.ts";
import { deleteExpiredSessions } from "./modules/auth/auth.service.ts";
import { prepareDatabase } from "./startup.ts";

async function main() {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }

  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const app = await buildApp({ config, db });
  const log = app.log;
  log.info(
    db.kind === "postgres"
      ? "Using PostgreSQL from DATABASE_URL"
      : `Using embedded PGlite in ${config.dataDir}`,
  );
  await prepareDatabase(db, config, { info: (m) => log.info(m), warn: (m) => log.warn(m) });

  const sweep = setInterval(() => {
    deleteExpiredSessions(db).catch((err) => log.warn({ err }, "expired-session sweep failed"));
  }, 3_600_000);
  sweep.unref();

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    log.info(`${signal} received, shutting down`);
    clearInterval(sweep);
    await app.close().catch(() => {});
    await db.close().catch(() => {});
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));

  await app.services.dataOps.init();
  // The first start's import is reported active from the first request on.
  await queueFirstImport(app.services);
  await app.listen({ port: config.port, host: config.host });
  bootstrapDemoData(app.services, { info: (m) => log.info(m), warn: (m) => log.warn(m) }).catch((err) => {
    app.services.dataOps.unqueue();
    log.error({ err }, "demo data bootstrap failed");
  });
}

main().catch((err) => {
  if (err instanceof DataDirInUseError || err instanceof MigrationError) {
    console.error(err.message);
  } else {
    console.error(err);
  }
  process.exit(1);
});
