import { randomBytes } from "node:crypto";
import pg from "pg";
import { type Database, openDatabase, type SqlConnection } from "../../server/db/database.ts";
import { migrate } from "../../server/db/migrate.ts";
import { syncPermissionCatalogue } from "../../server/modules/auth/auth.service.ts";

/** "postgres" when TEST_DATABASE_URL names a server, else "pglite" (embedded, in memory). */
export const testBackend: "postgres" | "pglite" = process.env.TEST_DATABASE_URL ? "postgres" : "pglite";

export interface TestDatabase {
  db: Database;
  /** Set on PostgreSQL: the URL of this file's own database. */
  url?: string;
  /** Opens another connection pool to the same database (PostgreSQL only). */
  openAnother(): Promise<Database>;
  drop(): Promise<void>;
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * A database of this test file's own, migrated unless `migrated: false`. On PostgreSQL it is a new
 * database (Prisma's migrations name the public schema, so per-file schemas would not isolate).
 */
export async function createTestDatabase(
  opts: {
    migrated?: boolean;
    /** PostgreSQL: a role without superuser rights (made if missing) that owns the database and connects. */
    owner?: string;
  } = {},
): Promise<TestDatabase> {
  const migrated = opts.migrated ?? true;
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    const db = await openDatabase({});
    if (migrated) {
      await migrate(db);
      await syncPermissionCatalogue(db);
    }
    return {
      db,
      openAnother: () => Promise.reject(new Error("PGlite has a single connection")),
      drop: () => db.close(),
    };
  }
  const name = `bo_test_${process.pid}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  if (opts.owner) {
    await admin.query(
      `DO $$ BEGIN CREATE ROLE ${opts.owner} LOGIN NOSUPERUSER; EXCEPTION WHEN duplicate_object THEN NULL; END $$`,
    );
    await admin.query(`CREATE DATABASE ${name} OWNER ${opts.owner}`);
  } else await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  let url = withDatabase(adminUrl, name);
  if (opts.owner) {
    const u = new URL(url);
    u.username = opts.owner;
    u.password = "";
    url = u.toString();
  }
  const others: Database[] = [];
  const db = await openDatabase({ databaseUrl: url, poolSize: 5 });
  if (migrated) {
    await migrate(db);
    await syncPermissionCatalogue(db);
  }
  return {
    db,
    url,
    async openAnother() {
      const other = await openDatabase({ databaseUrl: url, poolSize: 5 });
      others.push(other);
      return other;
    },
    async drop() {
      await Promise.all([db, ...others].map((d) => d.close().catch(() => {})));
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

const ROLLBACK = new Error("rollback");

/** Runs fn in a transaction on conn that is rolled back afterwards; answers fn's result. */
export async function rolledBack<T>(conn: SqlConnection, fn: (tx: SqlConnection) => Promise<T>): Promise<T> {
  let result: T | undefined;
  await conn
    .transaction(async (tx) => {
      result = await fn(tx);
      throw ROLLBACK;
    })
    .catch((err) => {
      if (err !== ROLLBACK) throw err;
    });
  return result as T;
}
