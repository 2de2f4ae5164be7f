import type { AppConfig } from "./config.ts";
import type { Database } from "./db/database.ts";
import { LoginLimiter } from "./modules/auth/auth.service.ts";

/** Long-lived things every procedure and route may use; built once per app. */
export interface AppServices {
  db: Database;
  config: AppConfig;
  loginLimiter: LoginLimiter;
}

export function createServices(db: Database, config: AppConfig): AppServices {
  return { db, config, loginLimiter: new LoginLimiter(config.loginLimits) };
}
