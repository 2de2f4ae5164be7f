import type { AppConfig } from "./config.ts";
import type { Database } from "./db/database.ts";
import { migrate } from "./db/migrate.ts";
import { ensureAdminUser, syncPermissionCatalogue } from "./modules/auth/auth.service.ts";
import { seedGlobalSettings } from "./modules/config/config.service.ts";

type Logger = { info(msg: string): void; warn(msg: string): void };

/** Everything a database needs before the app serves: migrations, permission catalogue, first admin. */
export async function prepareDatabase(db: Database, config: AppConfig, log: Logger): Promise<void> {
  const { applied } = await migrate(db, { logger: log });
  if (applied.length === 0) log.info("Database schema is up to date");
  await syncPermissionCatalogue(db);
  await seedGlobalSettings(db);
  const admin = await ensureAdminUser(db, config);
  if (admin.created && admin.generatedPassword) {
    // Printed once, on the start that created the account; it is not stored anywhere in clear.
    log.warn(
      `Created admin user "${config.adminUsername}" with generated password: ${admin.generatedPassword}  ` +
        "(set ADMIN_PASSWORD to choose it; change it after signing in)",
    );
  } else if (admin.created) {
    log.info(`Created admin user "${config.adminUsername}" with the password from ADMIN_PASSWORD`);
  }
}
