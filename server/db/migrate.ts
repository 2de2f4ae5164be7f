import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Database, SqlConnection } from "./database.ts";

export const MIGRATIONS_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../../prisma/migrations",
);

/** Arbitrary constant shared by every instance of this app: only one migrator runs at a time. */
const MIGRATION_LOCK_KEY = 72_707_369;

export interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrateResult {
  applied: string[];
  alreadyApplied: number;
}

type Logger = { info(msg: string): void; warn(msg: string): void };

export function readMigrations(dir = MIGRATIONS_DIR): MigrationFile[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && fs.existsSync(path.join(dir, d.name, "migration.sql")))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const buf = fs.readFileSync(path.join(dir, name, "migration.sql"));
      return { name, sql: buf.toString("utf8"), checksum: createHash("sha256").update(buf).digest("hex") };
    });
}

// Prisma's own DDL for its bookkeeping table, so `prisma migrate status/deploy` agree with us.
const CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

interface MigrationRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

export class MigrationError extends Error {}

/**
 * Applies pending migrations in name order, each in its own transaction, under a Postgres
 * advisory lock so concurrent starts wait for one another instead of racing.
 */
export async function migrate(
  db: Database,
  opts: { dir?: string; logger?: Logger } = {},
): Promise<MigrateResult> {
  // The advisory lock is re-entrant within one session, and embedded PGlite has only one session:
  // serialise callers in this process too.
  const previous = inProcess.get(db) ?? Promise.resolve();
  const run = previous.catch(() => {}).then(() => migrateLocked(db, opts));
  inProcess.set(db, run);
  return run;
}

const inProcess = new WeakMap<Database, Promise<unknown>>();

async function migrateLocked(db: Database, opts: { dir?: string; logger?: Logger }): Promise<MigrateResult> {
  const files = readMigrations(opts.dir);
  const log = opts.logger ?? { info: () => {}, warn: () => {} };
  const conn = await db.connect();
  try {
    await conn.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
    try {
      return await applyPending(conn, files, log);
    } finally {
      await conn.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await conn.release();
  }
}

async function applyPending(
  conn: SqlConnection,
  files: MigrationFile[],
  log: Logger,
): Promise<MigrateResult> {
  await conn.exec(CREATE_MIGRATIONS_TABLE);
  const rows = await conn.query<MigrationRow>(
    `SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at`,
  );
  const failed = rows.find((r) => r.finished_at === null && r.rolled_back_at === null);
  if (failed) {
    throw new MigrationError(
      `Migration ${failed.migration_name} started but did not finish. Inspect the database, then mark it ` +
        `rolled back (prisma migrate resolve --rolled-back ${failed.migration_name}) and start again.`,
    );
  }
  const applied = new Map(
    rows.filter((r) => r.finished_at !== null && r.rolled_back_at === null).map((r) => [r.migration_name, r]),
  );
  const known = new Set(files.map((f) => f.name));
  for (const name of applied.keys()) {
    if (!known.has(name))
      log.warn(`Migration ${name} is applied in the database but missing from prisma/migrations`);
  }

  const done: string[] = [];
  for (const file of files) {
    const row = applied.get(file.name);
    if (row) {
      if (row.checksum !== file.checksum) {
        log.warn(`Migration ${file.name} was modified after it was applied (checksum differs)`);
      }
      continue;
    }
    const id = randomUUID();
    await conn.query(
      `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count)
       VALUES ($1, $2, $3, now(), 0)`,
      [id, file.checksum, file.name],
    );
    // A script with its own transaction control cannot be wrapped: run it as it is and, if it
    // fails, leave it failed for a person to inspect, exactly as Prisma does.
    if (/^\s*(BEGIN|COMMIT|START\s+TRANSACTION|ROLLBACK)\b/im.test(file.sql)) {
      try {
        await conn.exec(file.sql);
      } catch (err) {
        await conn.query(`UPDATE "_prisma_migrations" SET logs = $2 WHERE id = $1`, [
          id,
          String((err as Error).message),
        ]);
        throw new MigrationError(`Migration ${file.name} failed: ${(err as Error).message}`);
      }
      await conn.query(
        `UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1`,
        [id],
      );
      log.info(`Applied migration ${file.name}`);
      done.push(file.name);
      continue;
    }
    try {
      await conn.transaction(async (tx) => {
        await tx.exec(file.sql);
        await tx.query(
          `UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1`,
          [id],
        );
      });
    } catch (err) {
      // The transaction undid the migration's changes, so record it as rolled back: the next start
      // retries it once the file is fixed, as after `prisma migrate resolve --rolled-back`.
      await conn.query(`UPDATE "_prisma_migrations" SET rolled_back_at = now(), logs = $2 WHERE id = $1`, [
        id,
        String((err as Error).message),
      ]);
      throw new MigrationError(
        `Migration ${file.name} failed and was rolled back: ${(err as Error).message}`,
      );
    }
    log.info(`Applied migration ${file.name}`);
    done.push(file.name);
  }
  return { applied: done, alreadyApplied: applied.size };
}
