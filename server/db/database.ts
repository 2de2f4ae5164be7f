import fs from "node:fs";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import lockfile from "proper-lockfile";
import { PrismaClient } from "./generated/client.ts";

export type { PrismaClient };

/** A connection for raw SQL that Prisma does not express: migrations, advisory locks, COPY. */
export interface SqlConnection {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs a script of one or more statements without parameters. */
  exec(sql: string): Promise<void>;
  release(): Promise<void>;
}

export interface Database {
  kind: "postgres" | "pglite";
  prisma: PrismaClient;
  /** A connection of its own (PostgreSQL) or the single embedded one (PGlite). */
  connect(): Promise<SqlConnection>;
  close(): Promise<void>;
}

export class DataDirInUseError extends Error {}

export interface OpenDatabaseOptions {
  databaseUrl?: string;
  /** Embedded mode: where PGlite keeps its files. Omit both for an in-memory PGlite (tests). */
  dataDir?: string;
  poolSize?: number;
}

export async function openDatabase(opts: OpenDatabaseOptions): Promise<Database> {
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl, opts.poolSize ?? 10);
  return openPglite(opts.dataDir);
}

function openPostgres(url: string, max: number): Database {
  const pool = new pg.Pool({ connectionString: url, max, application_name: "back-office" });
  // A dropped idle connection must not crash the process; the pool replaces it.
  pool.on("error", () => {});
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  return {
    kind: "postgres",
    prisma,
    async connect() {
      const client = await pool.connect();
      return {
        async query(sql, params) {
          const res = await client.query(sql, params as unknown[] | undefined);
          return res.rows;
        },
        async exec(sql) {
          await client.query(sql);
        },
        async release() {
          client.release();
        },
      };
    },
    async close() {
      await prisma.$disconnect();
      await pool.end();
    },
  };
}

async function openPglite(dataDir: string | undefined): Promise<Database> {
  let releaseLock: (() => Promise<void>) | undefined;
  let pglite: PGlite;
  if (dataDir) {
    fs.mkdirSync(dataDir, { recursive: true });
    const pgdata = path.join(dataDir, "pgdata");
    fs.mkdirSync(pgdata, { recursive: true });
    try {
      releaseLock = await lockfile.lock(pgdata, { stale: 15_000, update: 5_000, realpath: false });
    } catch (err) {
      if ((err as { code?: string }).code === "ELOCKED") {
        throw new DataDirInUseError(
          `Another process is already using the embedded database in ${dataDir}. ` +
            "Stop that process first, use a different DATA_DIR, or set DATABASE_URL to share a PostgreSQL server.",
        );
      }
      throw err;
    }
    pglite = new PGlite(pgdata);
  } else {
    pglite = new PGlite();
  }
  await pglite.waitReady;
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(pglite) });
  const connection: SqlConnection = {
    async query(sql, params) {
      const res = await pglite.query(sql, params as unknown[] | undefined);
      return res.rows as never[];
    },
    async exec(sql) {
      await pglite.exec(sql);
    },
    async release() {},
  };
  return {
    kind: "pglite",
    prisma,
    async connect() {
      return connection;
    },
    async close() {
      await prisma.$disconnect();
      await pglite.close();
      await releaseLock?.();
    },
  };
}
