import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { from as copyFrom, to as copyTo } from "pg-copy-streams";
import lockfile from "proper-lockfile";
import { readBinaryRows } from "./binary-copy.ts";
import { CopyRowsQuery } from "./copy-rows.ts";
import { PrismaClient } from "./generated/client.ts";
import { pacer } from "./pace.ts";

export type { PrismaClient };

/** A connection for raw SQL that Prisma does not express: migrations, advisory locks, COPY. */
export interface SqlConnection {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs a script of one or more statements without parameters. */
  exec(sql: string): Promise<void>;
  /** Runs one statement and answers the number of rows it affected. */
  execute(sql: string, params?: unknown[]): Promise<number>;
  /**
   * Runs fn in one transaction. On embedded PGlite this also keeps every other query of the
   * process waiting until it ends, so keep it short.
   */
  transaction<T>(fn: (tx: SqlConnection) => Promise<T>): Promise<T>;
  /**
   * Streams CSV text into `table (columns)` with COPY, in constant memory. `header` skips the first
   * line. Errors are CopyError with the 1-based line of the input.
   */
  copyCsv(opts: CopyCsvOptions): Promise<number>;
  /**
   * Runs `COPY (query) TO STDOUT` (the statement is given whole, with its options, e.g.
   * `(FORMAT binary)`) and yields its output in chunks as they arrive: a result of millions of rows
   * read in constant memory (PostgreSQL), or at once (PGlite, in-process). COPY takes no
   * parameters: the statement must hold its values as literals the caller built.
   */
  copyOut(copySql: string): AsyncIterable<Buffer>;
  /**
   * Runs `COPY (query) TO STDOUT (FORMAT binary)` of `fields` columns and hands each row to `onRow`
   * undecoded, as BinaryRowReader does (offsets valid only during the call); answers the number of
   * rows. On PostgreSQL the rows are read in place from the socket's chunks (copy-rows.ts), the
   * cheapest way to stream millions of rows into the app.
   */
  copyOutRows(copySql: string, fields: number, onRow: (buf: Buffer, at: Int32Array) => void): Promise<number>;
  /** Gives the connection back; `destroy` closes it instead (its session state is unknown). */
  release(destroy?: boolean): Promise<void>;
}

export interface CopyCsvOptions {
  /** The table's schema; default the search path */
  schema?: string;
  table: string;
  columns: readonly string[];
  source: AsyncIterable<Buffer> | Iterable<Buffer>;
  header: boolean;
  signal?: AbortSignal;
  /** Called after each chunk with the bytes consumed so far. */
  onProgress?: (bytes: number) => void;
  /**
   * The source is PostgreSQL's binary COPY format (binary-copy.ts, binaryCopyRows) instead of CSV:
   * `header` must be false; an error names no line.
   */
  binary?: boolean;
}

/** A COPY that failed on a row: the database's message plus where in the input. */
export class CopyError extends Error {
  constructor(
    message: string,
    readonly line: number | undefined,
    readonly column: string | undefined,
    readonly value: string | undefined,
    readonly code: string | undefined,
    readonly detail: string | undefined,
  ) {
    super(message);
    this.name = "CopyError";
  }
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

// FORCE_NULL: an empty field is NULL whether or not it was quoted.
function copySql(
  table: string,
  columns: readonly string[],
  header: boolean,
  from: string,
  schema?: string,
  binary = false,
): string {
  const cols = columns.map(quoteIdent).join(", ");
  const target = schema ? `${quoteIdent(schema)}.${quoteIdent(table)}` : quoteIdent(table);
  if (binary) return `COPY ${target} (${cols}) FROM ${from} WITH (FORMAT binary)`;
  return `COPY ${target} (${cols}) FROM ${from} WITH (FORMAT csv, HEADER ${header ? "true" : "false"}, FORCE_NULL (${cols}))`;
}

/** Turns PostgreSQL's COPY error ("CONTEXT: COPY t, line 3, column price: "12,5"") into a CopyError. */
function toCopyError(err: unknown, lineOffset = 0): unknown {
  const e = err as { message?: string; where?: string; code?: string; detail?: string };
  const where = e.where ?? "";
  const m = /COPY [^,]+, line (\d+)(?:, column ([^:]+)(?:: "(.*)")?)?/s.exec(where);
  if (!m) return err;
  return new CopyError(e.message ?? "COPY failed", Number(m[1]) + lineOffset, m[2], m[3], e.code, e.detail);
}

export interface Database {
  kind: "postgres" | "pglite";
  /** The server's URL (PostgreSQL only), for connections of their own such as LISTEN. */
  url?: string;
  prisma: PrismaClient;
  /** A connection of its own (PostgreSQL) or the single embedded one (PGlite). */
  connect(): Promise<SqlConnection>;
  /**
   * Embedded PGlite only: while a transaction holds the one connection (a data run's apply and
   * calculations), a way into that transaction for a short read that must not wait for its end
   * (the session lookup that lets staff cancel the run). Nothing else can commit meanwhile, so the
   * read sees the latest committed rows of any table the transaction does not write: no
   * transaction on the embedded database may write users, sessions or permissions. Null when no
   * transaction is open.
   */
  heldTransaction?(): SqlConnection | null;
  close(): Promise<void>;
}

export class DataDirInUseError extends Error {}

/** Who holds the embedded database: written beside proper-lockfile's lock directory. */
interface LockOwner {
  pid: number;
  hostname: string;
  since: string;
}

function readOwner(file: string): LockOwner | null {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as LockOwner;
  } catch {
    return null;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * One process per DATA_DIR. The lock is proper-lockfile's (a directory refreshed every 10 s, stale
 * after a minute); beside it, the owner's pid and host. A process killed with -9 leaves the lock
 * behind: when its owner ran on this host and is gone, the lock is taken over at once instead of
 * refusing restarts for a minute.
 */
async function lockDataDir(dataDir: string, pgdata: string): Promise<() => Promise<void>> {
  const ownerFile = `${pgdata}.owner.json`;
  const lock = () =>
    // PGlite runs SQL on this thread, so a long statement delays the lock's refresh: allow a
    // minute before another process may call it stale, and only warn if that ever happened.
    lockfile.lock(pgdata, {
      stale: 60_000,
      update: 10_000,
      realpath: false,
      onCompromised: (err) => console.warn(`warning: the DATA_DIR lock was compromised: ${err.message}`),
    });
  let release: () => Promise<void>;
  try {
    release = await lock();
  } catch (err) {
    if ((err as { code?: string }).code !== "ELOCKED") throw err;
    const owner = readOwner(ownerFile);
    const stale =
      owner !== null &&
      owner.hostname === os.hostname() &&
      owner.pid !== process.pid &&
      !processAlive(owner.pid);
    if (!stale) {
      const who = owner ? ` (pid ${owner.pid} on ${owner.hostname}, since ${owner.since})` : "";
      const stop =
        owner?.hostname === os.hostname() ? `Stop it first (kill ${owner.pid})` : "Stop that process first";
      throw new DataDirInUseError(
        `Another process is already using the embedded database in ${dataDir}${who}. ` +
          `${stop}, use a different DATA_DIR, or set DATABASE_URL to share a PostgreSQL server.`,
      );
    }
    // Its owner is gone (killed, crashed): take the lock over.
    fs.rmSync(`${pgdata}.lock`, { recursive: true, force: true });
    release = await lock().catch((e: unknown) => {
      if ((e as { code?: string }).code !== "ELOCKED") throw e;
      throw new DataDirInUseError(
        `Another process has just started using the embedded database in ${dataDir}.`,
      );
    });
  }
  const mine: LockOwner = { pid: process.pid, hostname: os.hostname(), since: new Date().toISOString() };
  fs.writeFileSync(ownerFile, JSON.stringify(mine));
  return async () => {
    if (readOwner(ownerFile)?.pid === process.pid) fs.rmSync(ownerFile, { force: true });
    await release();
  };
}

const LOST = Symbol("connectionLost");

/**
 * Every connection a pool hands out (to Prisma, to db.connect(), to the progress bus) gets an
 * `error` listener the moment the pool opens it: a connection the server terminates while it is
 * checked out (a failover, a restart of PostgreSQL, pg_terminate_backend, a proxy timeout) would
 * otherwise raise an unhandled `error` event and end the process. The statement in progress fails
 * with the error instead; the pool drops the connection and opens a new one for the next caller.
 */
export function guardPool(pool: pg.Pool): void {
  pool.on("error", () => {});
  pool.on("connect", (client) => {
    client.on("error", (err) => {
      (client as unknown as Record<symbol, Error>)[LOST] = err;
    });
  });
}

function connectionLost(client: pg.PoolClient): boolean {
  return Boolean((client as unknown as Record<symbol, Error>)[LOST]);
}

/**
 * Whether an error means the database connection went away (rather than a statement failing):
 * PostgreSQL's admin/crash shutdown codes, connection exceptions, or the driver's own words.
 */
export function isConnectionLoss(err: unknown): boolean {
  for (
    let e = err as { code?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 5;
    depth++
  ) {
    const code = typeof e.code === "string" ? e.code : "";
    if (
      /^(57P0[1-3]|08\w{3}|P1001|P1017)$/.test(code) ||
      ["ECONNRESET", "ECONNREFUSED", "EPIPE"].includes(code)
    )
      return true;
    const message = typeof e.message === "string" ? e.message : "";
    if (
      /Connection terminated|terminating connection|connection (is )?closed|Client has encountered a connection error|server closed the connection/i.test(
        message,
      )
    )
      return true;
    e = e.cause as typeof e;
  }
  return false;
}

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
  // Sessions run in UTC whatever the server's default: day windows and date arithmetic are UTC days.
  const pool = new pg.Pool({
    connectionString: url,
    max,
    application_name: "back-office",
    options: "-c TimeZone=UTC",
  });
  guardPool(pool);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  return {
    kind: "postgres",
    url,
    prisma,
    async connect() {
      const client = await pool.connect();
      const conn: SqlConnection = {
        async query(sql, params) {
          const res = await client.query(sql, params as unknown[] | undefined);
          return res.rows;
        },
        async exec(sql) {
          await client.query(sql);
        },
        async execute(sql, params) {
          const res = await client.query(sql, params as unknown[] | undefined);
          return res.rowCount ?? 0;
        },
        async transaction(fn) {
          await client.query("BEGIN");
          try {
            const result = await fn(conn);
            await client.query("COMMIT");
            return result;
          } catch (err) {
            await client.query("ROLLBACK").catch(() => {});
            throw err;
          }
        },
        async copyCsv({ schema, table, columns, source, header, signal, onProgress, binary }) {
          const stream = client.query(copyFrom(copySql(table, columns, header, "STDIN", schema, binary)));
          let bytes = 0;
          // Rows made in the app (a generator working through every product or line) let the event
          // loop turn between chunks now and then (pace.ts).
          const pace = pacer();
          async function* counted() {
            for await (const chunk of source) {
              if (signal?.aborted) throw signal.reason ?? new Error("aborted");
              bytes += chunk.length;
              onProgress?.(bytes);
              yield chunk;
              await pace();
            }
          }
          try {
            await pipeline(Readable.from(counted()), stream);
          } catch (err) {
            throw toCopyError(err);
          }
          return Number(stream.rowCount ?? 0);
        },
        copyOut(sql) {
          return client.query(copyTo(sql)) as AsyncIterable<Buffer>;
        },
        copyOutRows(sql, fields, onRow) {
          const query = new CopyRowsQuery(sql, fields, onRow);
          client.query(query as unknown as pg.Submittable);
          return query.done;
        },
        async release(destroy) {
          // A connection that failed (terminated by the server, network lost) is closed, never reused.
          client.release(destroy || connectionLost(client) ? true : undefined);
        },
      };
      return conn;
    },
    async close() {
      await prisma.$disconnect();
      await pool.end();
    },
  };
}

async function openPglite(dataDir: string | undefined): Promise<Database> {
  // Loaded only here: on PostgreSQL the embedded database's code would cost the process ≈ 38 MB of
  // memory for nothing (measured on Node 20, docs/performance.md).
  const [{ PGlite }, { pg_trgm }, { PrismaPGlite }] = await Promise.all([
    import("@electric-sql/pglite"),
    import("@electric-sql/pglite/contrib/pg_trgm"),
    import("pglite-prisma-adapter"),
  ]);
  // Extensions the migrations create (pg_trgm: product search); PostgreSQL ships them as contrib.
  const PGLITE_EXTENSIONS = { pg_trgm };
  let releaseLock: (() => Promise<void>) | undefined;
  let pglite: PGlite;
  if (dataDir) {
    fs.mkdirSync(dataDir, { recursive: true });
    const pgdata = path.join(dataDir, "pgdata");
    fs.mkdirSync(pgdata, { recursive: true });
    releaseLock = await lockDataDir(dataDir, pgdata);
    pglite = new PGlite(pgdata, { extensions: PGLITE_EXTENSIONS });
  } else {
    pglite = new PGlite({ extensions: PGLITE_EXTENSIONS });
  }
  await pglite.waitReady;
  await pglite.exec("SET TIME ZONE 'UTC'");
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(pglite) });
  const held: { tx: SqlConnection | null } = { tx: null };
  const connection = pgliteConnection(pglite, false, held);
  return {
    kind: "pglite",
    prisma,
    async connect() {
      return connection;
    },
    heldTransaction: () => held.tx,
    async close() {
      await prisma.$disconnect();
      await pglite.close();
      await releaseLock?.();
    },
  };
}

type PgliteQueryable = Pick<PGlite, "query" | "exec">;

function pgliteConnection(
  pg: PgliteQueryable,
  inTransaction = false,
  held?: { tx: SqlConnection | null },
): SqlConnection {
  const conn: SqlConnection = {
    async query(sql, params) {
      const res = await pg.query(sql, params as unknown[] | undefined);
      return res.rows as never[];
    },
    async exec(sql) {
      await pg.exec(sql);
    },
    async execute(sql, params) {
      const res = await pg.query(sql, params as unknown[] | undefined);
      return res.affectedRows ?? 0;
    },
    async transaction(fn) {
      if (inTransaction) return fn(conn);
      return (pg as PGlite).transaction(async (tx) => {
        const inner = pgliteConnection(tx as unknown as PgliteQueryable, true);
        if (held) held.tx = inner;
        try {
          return await fn(inner);
        } finally {
          if (held?.tx === inner) held.tx = null;
        }
      });
    },
    async copyCsv({ schema, table, columns, source, header, signal, onProgress, binary }) {
      if (binary) {
        // Binary input cannot be cut at line ends: one Blob of the whole input.
        const parts: Buffer[] = [];
        for await (const chunk of source) {
          if (signal?.aborted) throw signal.reason ?? new Error("aborted");
          parts.push(chunk);
        }
        const res = await pg.query(copySql(table, columns, false, "'/dev/blob'", schema, true), [], {
          blob: new Blob(parts as unknown as BlobPart[]),
        });
        onProgress?.(parts.reduce((n, p) => n + p.length, 0));
        return res.affectedRows ?? 0;
      }
      // PGlite reads COPY input from a Blob: feed it in chunks cut at line ends outside quotes,
      // so memory stays bounded whatever the file size.
      let rows = 0;
      let bytes = 0;
      let linesBefore = 0;
      let first = true;
      for await (const { chunk, lines } of csvChunks(source, 8 * 1024 * 1024)) {
        if (signal?.aborted) throw signal.reason ?? new Error("aborted");
        const withHeader = first && header;
        try {
          const res = await pg.query(copySql(table, columns, withHeader, "'/dev/blob'", schema), [], {
            blob: new Blob([chunk as unknown as BlobPart]),
          });
          rows += res.affectedRows ?? 0;
        } catch (err) {
          throw toCopyError(err, linesBefore);
        }
        first = false;
        linesBefore += lines;
        bytes += chunk.length;
        onProgress?.(bytes);
      }
      return rows;
    },
    async *copyOut(sql) {
      // PGlite writes COPY output to a Blob: TO STDOUT becomes TO '/dev/blob'.
      const res = await pg.query(sql.replace(/\bTO\s+STDOUT\b/i, "TO '/dev/blob'"));
      if (res.blob) yield Buffer.from(await res.blob.arrayBuffer());
    },
    copyOutRows(sql, fields, onRow) {
      return readBinaryRows(conn.copyOut(sql), fields, onRow);
    },
    async release() {},
  };
  return conn;
}

/**
 * Re-chunks a CSV byte stream into pieces of about `size` bytes that end at a line end outside
 * quotes (RFC 4180: a quote toggles quoting, "" inside quotes toggles twice), counting lines.
 */
export async function* csvChunks(
  source: AsyncIterable<Buffer> | Iterable<Buffer>,
  size: number,
): AsyncGenerator<{ chunk: Buffer; lines: number }> {
  // `lines` counts every newline (as PostgreSQL's COPY numbers lines), quoted or not; chunks are
  // cut only at newlines outside quotes.
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let inQuote = false;
  let lines = 0;
  let cutAt = -1;
  let linesAtCut = 0;
  for await (const buf of source) {
    const base = pendingBytes;
    for (let i = 0; i < buf.length; i++) {
      const c = buf[i];
      if (c === 0x22) inQuote = !inQuote;
      else if (c === 0x0a) {
        lines++;
        if (!inQuote) {
          cutAt = base + i + 1;
          linesAtCut = lines;
        }
      }
    }
    pending.push(buf);
    pendingBytes += buf.length;
    if (pendingBytes >= size && cutAt > 0) {
      const all = Buffer.concat(pending);
      yield { chunk: all.subarray(0, cutAt), lines: linesAtCut };
      const rest = all.subarray(cutAt);
      pending = rest.length ? [Buffer.from(rest)] : [];
      pendingBytes = rest.length;
      lines -= linesAtCut;
      cutAt = -1;
      linesAtCut = 0;
    }
  }
  if (pendingBytes > 0) {
    const all = Buffer.concat(pending);
    yield { chunk: all, lines: lines + (all[all.length - 1] === 0x0a ? 0 : 1) };
  }
}
