// Full Reset by table swap. Each file is COPYed straight into a new table shaped like the live one
// (same columns, types, defaults and NOT NULLs: CREATE TABLE … LIKE) in a schema of its own, the
// live table's indexes and key constraints are built on it under their final names (an index lives
// in its table's schema, so the names do not clash), and inside the run's transaction each live
// table is dropped and its replacement moved into place (ALTER TABLE … SET SCHEMA: a catalog
// change). Nothing is copied twice and no index is maintained row by row.
//
// This path only detects that something is wrong (a COPY error, a CHECK or NOT NULL violation, a
// duplicate key while building a unique index, an unknown reference); it does not describe it. On
// any such failure the run throws RetryWithStaging and the caller redoes the import through the
// staging path of import.ts, which names file, line and column exactly as before (or, should that
// path accept the data after all, applies it). Tables with anything a swap would not carry over
// (triggers, foreign keys, dependent views, grants, …) are not swapped: swapBlocker() says why.
import { CopyError, type SqlConnection } from "../db/database.ts";
import type { CalcModule } from "./calculate.ts";
import { fileColumnsOf, type TableCounts } from "./import.ts";
import { loadOrderLinesBinary, Unfit } from "./order-lines-load.ts";
import type { RunShared } from "./order-lines-pass.ts";
import { SETTINGS_TABLES } from "./planning/context.ts";
import type { DataSource } from "./source.ts";
import type { StepContext, StepProgress } from "./steps.ts";
import { ENUM_COLUMNS, IMPORTED_TABLES, type TableDef, targetOf } from "./tables.ts";

/** Where the replacement tables are built; dropped at the start and the end of every reset. */
export const SWAP_SCHEMA = "import_swap";

/**
 * Where a swap moves the live tables it replaces (swapIn), dropped once the run has committed
 * (dropRetiredSchema): dropping them in the run's transaction freed their files in its COMMIT
 * (≈ 0.2 s for the large demo set's tables), with every swapped table still locked against readers.
 */
export const RETIRED_SCHEMA = "import_retired";

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;
/** The new table of an imported table (or of a module's table built beside: freshTable). */
const freshTable = (table: string) => `${q(SWAP_SCHEMA)}.${q(table)}`;
const fresh = (def: TableDef) => freshTable(def.table);
const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** The data failed a check of the swap path: redo the run through staging for the exact message. */
export class RetryWithStaging extends Error {
  constructor(readonly reason: string) {
    super(`retry with staging: ${reason}`);
    this.name = "RetryWithStaging";
  }
}

/** Errors that mean "the data is bad" (SQLSTATE classes 22 data exception, 23 integrity). */
function isDataError(err: unknown): boolean {
  if (err instanceof CopyError) return true;
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" && (code.startsWith("22") || code.startsWith("23"));
}

async function orRetry<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isDataError(err)) throw new RetryWithStaging(`${what}: ${(err as Error).message}`);
    throw err;
  }
}

/**
 * Why the imported tables cannot be replaced by a swap, or null when they can. A swapped-in table
 * carries columns (with defaults, NOT NULL, collation, storage), CHECK constraints, indexes and key
 * constraints, comments, owner and statistics; anything else must not exist on the live table.
 */
export async function swapBlocker(
  conn: SqlConnection,
  source: DataSource,
  /** Tables of calculation modules built beside and swapped in too (CalcModule.beside). */
  moduleTables: readonly string[] = [],
): Promise<string | null> {
  const tables = [...IMPORTED_TABLES.map((d) => d.table), ...moduleTables];
  const rows = await conn.query<{ table: string; reason: string }>(
    `WITH t AS (
       SELECT c.relname::text AS name, c.*
       FROM pg_class c
       WHERE c.oid = ANY (SELECT to_regclass(quote_ident(x))::oid FROM unnest($1::text[]) x)
     )
     SELECT name AS table, reason FROM t, LATERAL (VALUES
       (relkind <> 'r' OR relpersistence <> 'p' OR relispartition, 'not a plain table'),
       (relhassubclass OR EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = t.oid), 'inheritance'),
       (reloptions IS NOT NULL, 'storage options'),
       (relacl IS NOT NULL, 'grants'),
       (reltablespace <> 0, 'a tablespace'),
       (relowner <> (SELECT oid FROM pg_roles WHERE rolname = current_user), 'another owner'),
       (relrowsecurity OR relforcerowsecurity, 'row security'),
       (relreplident <> 'd', 'a replica identity'),
       (EXISTS (SELECT 1 FROM pg_trigger g WHERE g.tgrelid = t.oid AND NOT g.tgisinternal), 'triggers'),
       (EXISTS (SELECT 1 FROM pg_rewrite r WHERE r.ev_class = t.oid), 'rules'),
       (EXISTS (SELECT 1 FROM pg_constraint k WHERE (k.conrelid = t.oid OR k.confrelid = t.oid)
                  AND k.contype NOT IN ('p', 'u', 'c', 'n')), 'foreign keys or exclusions'),
       (EXISTS (SELECT 1 FROM pg_depend d WHERE d.refobjid = t.oid AND d.refclassid = 'pg_class'::regclass
                  AND d.classid = 'pg_rewrite'::regclass), 'dependent views'),
       (EXISTS (SELECT 1 FROM pg_depend d JOIN pg_class s ON s.oid = d.objid
                WHERE d.refobjid = t.oid AND d.refclassid = 'pg_class'::regclass
                  AND d.classid = 'pg_class'::regclass AND s.relkind = 'S'), 'owned sequences'),
       (EXISTS (SELECT 1 FROM pg_statistic_ext s WHERE s.stxrelid = t.oid), 'extended statistics'),
       (EXISTS (SELECT 1 FROM pg_publication_rel p WHERE p.prrelid = t.oid), 'a publication'),
       (EXISTS (SELECT 1 FROM pg_index x WHERE x.indrelid = t.oid AND x.indisclustered), 'a clustered index'),
       (EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped
                  AND (a.attacl IS NOT NULL OR a.attstattarget > 0
                       -- (options every new column gets, such as pg_attver on some builds, do not count)
                       OR EXISTS (SELECT 1 FROM unnest(a.attoptions) o WHERE o NOT LIKE 'pg\\_%'))),
        'column options or grants')
     ) v(blocked, reason)
     WHERE blocked`,
    [tables],
  );
  if (rows[0]) return `${rows[0].table}: ${rows[0].reason}`;
  const [{ n }] = (await conn.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM unnest($1::text[]) x WHERE to_regclass(quote_ident(x)) IS NOT NULL",
    [tables],
  )) as [{ n: number }];
  if (n !== tables.length) return "an imported or calculated table is missing";
  // Columns the tables do not have would need throwaway columns: the staging path handles those.
  for (const def of IMPORTED_TABLES) {
    let header: string[];
    try {
      const opened = await source.open(def.file);
      header = opened.header;
      await (opened.body as AsyncGenerator<Buffer>).return?.(undefined);
    } catch {
      return `${def.file} cannot be opened`;
    }
    try {
      if (fileColumnsOf(def, header).some((c) => c.startsWith("_extra_")))
        return `${def.file}: extra columns`;
    } catch {
      return `${def.file}: bad header`;
    }
  }
  return null;
}

export async function createSwapSchema(conn: SqlConnection): Promise<void> {
  // (Tables an earlier run retired and a stopped server left behind go too.)
  await conn.exec(
    `DROP SCHEMA IF EXISTS ${q(RETIRED_SCHEMA)} CASCADE; DROP SCHEMA IF EXISTS ${q(SWAP_SCHEMA)} CASCADE;
     CREATE SCHEMA ${q(SWAP_SCHEMA)}`,
  );
}

/** After the run has committed: the live tables its swaps replaced (RETIRED_SCHEMA) are dropped. */
export async function dropRetiredSchema(conn: SqlConnection): Promise<void> {
  await conn.exec(`DROP SCHEMA IF EXISTS ${q(RETIRED_SCHEMA)} CASCADE`);
}

export async function dropSwapSchema(conn: SqlConnection): Promise<void> {
  await conn.exec(`DROP SCHEMA IF EXISTS ${q(SWAP_SCHEMA)} CASCADE`);
}

/**
 * Freezes the forecasting settings for a Full Reset: copies in SWAP_SCHEMA, taken together in one
 * REPEATABLE READ transaction, outside the run's (call it with the live tables in the search path).
 * SWAP_SCHEMA comes first in the search path of both connections while they calculate, so every
 * module of the run reads the same values, whatever staff save meanwhile (it applies from the next
 * run); the copies go with the schema. Never swapped in: only IMPORTED_TABLES and module tables are.
 */
export async function copySettingsFresh(conn: SqlConnection): Promise<void> {
  await conn.transaction(async (tx) => {
    await tx.exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    for (const t of SETTINGS_TABLES) await tx.exec(`CREATE TABLE ${freshTable(t)} AS SELECT * FROM ${q(t)}`);
  });
}

interface LiveColumn {
  name: string;
  notnull: boolean;
}

/** The CHECK constraint of a new table holding what COPY does not check (see loadFresh). */
const CHECK_NAME = "import_check";

/**
 * COPYs one file into its new table and answers the rows. COPY itself rejects a bad number or
 * date and a missing required value; empty fields of columns with a default are filled in (one
 * scan to look for any). What remains (required text not empty, values of an enumeration, and
 * the NOT NULL of defaulted columns) becomes one CHECK constraint added NOT VALID: validateFresh()
 * checks it with a lock that lets readers go on, and completeFresh() then restores the live
 * table's NOT NULLs without another scan and drops it.
 */
export async function loadFresh(
  conn: SqlConnection,
  source: DataSource,
  def: TableDef,
  step: StepContext,
  /** SOURCE_TIMEZONE: a timestamp without a zone is read in it (the session is UTC otherwise). */
  timeZone = "UTC",
): Promise<number> {
  const opened = await source.open(def.file);
  const fileColumns = fileColumnsOf(def, opened.header);
  if (fileColumns.some((c) => c.startsWith("_extra_"))) {
    await (opened.body as AsyncGenerator<Buffer>).return?.(undefined);
    throw new RetryWithStaging(`${def.file}: extra columns`);
  }
  const byName = new Map(def.columns.map((c) => [c.name, c]));
  const live = await conn.query<LiveColumn>(
    `SELECT attname AS name, attnotnull AS notnull FROM pg_attribute
     WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped`,
    [q(def.table)],
  );
  const liveNotNull = new Map(live.map((c) => [c.name, c.notnull]));
  const defaulted = def.columns.filter((c) => c.default !== undefined);
  const defaultedNotNull = defaulted.filter((c) => liveNotNull.get(targetOf(c)));
  // Until the defaults are filled in, an empty field must load as NULL; every other required
  // column rejects NULL during the COPY.
  const alter = [
    ...defaultedNotNull.map((c) => `ALTER ${q(targetOf(c))} DROP NOT NULL`),
    ...def.columns.filter((c) => c.required).map((c) => `ALTER ${q(targetOf(c))} SET NOT NULL`),
  ];
  // No autovacuum while it is built: it would only make the index builds wait.
  await conn.exec(
    `CREATE TABLE ${fresh(def)} (LIKE ${q(def.table)} INCLUDING ALL EXCLUDING INDEXES EXCLUDING STATISTICS)
       WITH (autovacuum_enabled = false);
     ${alter.length ? `ALTER TABLE ${fresh(def)} ${alter.join(", ")}` : ""}`,
  );
  await conn.query("SELECT set_config('TimeZone', $1, false)", [timeZone]);
  const rows = await orRetry(`COPY ${def.file}`, () =>
    conn.copyCsv({
      schema: SWAP_SCHEMA,
      table: def.table,
      columns: fileColumns.map((n) => targetOf(byName.get(n)!)),
      source: opened.body,
      header: true,
      signal: step.signal,
      onProgress: (bytes) => step.progress({ current: bytes, total: opened.size, unit: "bytes" }),
    }),
  ).finally(() => conn.exec("SET TIME ZONE 'UTC'"));
  if (defaulted.length) {
    const empty = defaulted.map((c) => `${q(targetOf(c))} IS NULL`).join(" OR ");
    const [found] = await conn.query<{ any: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM ${fresh(def)} WHERE ${empty}) AS any`,
    );
    if (found?.any) {
      const fill = defaulted.map((c) => `${q(targetOf(c))} = COALESCE(${q(targetOf(c))}, ${c.default})`);
      await conn.exec(`UPDATE ${fresh(def)} SET ${fill.join(", ")} WHERE ${empty}`);
    }
  }
  const checks = [
    ...defaultedNotNull.map((c) => `${q(targetOf(c))} IS NOT NULL`),
    ...def.columns.filter((c) => c.required && c.type === "text").map((c) => `${q(targetOf(c))} <> ''`),
    ...Object.entries(ENUM_COLUMNS[def.file] ?? {}).map(
      ([column, allowed]) =>
        `${q(targetOf(byName.get(column)!))} = ANY (ARRAY[${allowed.map(lit).join(", ")}])`,
    ),
  ];
  if (checks.length) {
    await conn.exec(
      `ALTER TABLE ${fresh(def)} ADD CONSTRAINT ${q(CHECK_NAME)} CHECK (${checks.join(" AND ")}) NOT VALID`,
    );
  }
  return rows;
}

/**
 * loadFresh() of order_lines.csv on PostgreSQL, read by the app (order-lines-load.ts): binary COPY
 * into a new table that keeps the live one's NOT NULLs (the app fills the discount's default and
 * checks the statuses and required text itself, so no CHECK constraint, no scan for empty fields),
 * and the calculation's pass over the lines as of `passAsOf` handed to the run (`shared`). A file
 * the app does not read exactly as the database would goes through loadFresh() as before.
 */
export async function loadFreshOrderLines(
  conn: SqlConnection,
  source: DataSource,
  def: TableDef,
  step: StepContext,
  timeZone: string,
  passAsOf: Date | null,
  shared: RunShared | undefined,
  log?: (message: string) => void,
): Promise<{ rows: number; readBy: "app" | "database" }> {
  await conn.exec(
    `CREATE TABLE ${fresh(def)} (LIKE ${q(def.table)} INCLUDING ALL EXCLUDING INDEXES EXCLUDING STATISTICS)
       WITH (autovacuum_enabled = false)`,
  );
  const result = await loadOrderLinesBinary({
    conn,
    source,
    def,
    schema: SWAP_SCHEMA,
    utc: timeZone === "UTC",
    passAsOf: shared ? passAsOf : null,
    signal: step.signal,
    onProgress: (bytes, total) => step.progress({ current: bytes, total, unit: "bytes" }),
  });
  if (result instanceof Unfit) {
    log?.(`${def.file}: loaded by the database's COPY (${result.reason})`);
    await conn.exec(`DROP TABLE ${fresh(def)}`);
    return { rows: await loadFresh(conn, source, def, step, timeZone), readBy: "database" };
  }
  if (result.pass) shared?.preload(result.pass);
  return { rows: result.rows, readBy: "app" };
}

/**
 * Checks the new table's CHECK constraint (loadFresh) against its rows: one scan, under a lock
 * that lets readers go on (not CREATE INDEX, so one connection does both in turn). A violation is
 * bad data: RetryWithStaging.
 */
export async function validateFresh(conn: SqlConnection, def: TableDef): Promise<void> {
  const [found] = await conn.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_constraint WHERE conrelid = $1::regclass AND conname = $2",
    [fresh(def), CHECK_NAME],
  );
  if (found?.n) {
    await orRetry(`check ${def.file}`, () =>
      conn.exec(`ALTER TABLE ${fresh(def)} VALIDATE CONSTRAINT ${q(CHECK_NAME)}`),
    );
  }
}

/**
 * After validateFresh(): the statements that give the new table the live one's NOT NULLs (the
 * validated constraint proves them, so without a scan) and drop the constraint. They take a lock
 * that keeps readers out: run them where nothing reads the table yet, or in the swap.
 */
export async function completionOf(conn: SqlConnection, def: TableDef): Promise<string[]> {
  const rows = await conn.query<{ sql: string }>(
    `SELECT format('ALTER TABLE %s ALTER %I SET NOT NULL', $1::text, f.attname) AS sql
     FROM pg_attribute f JOIN pg_attribute l ON l.attrelid = $2::regclass AND l.attname = f.attname
     WHERE f.attrelid = $1::regclass AND f.attnum > 0 AND NOT f.attisdropped AND l.attnotnull AND NOT f.attnotnull
     UNION ALL
     SELECT format('ALTER TABLE %s DROP CONSTRAINT %I', $1::text, conname) FROM pg_constraint
     WHERE conrelid = $1::regclass AND conname = $3`,
    [fresh(def), q(def.table), CHECK_NAME],
  );
  return rows.map((r) => r.sql);
}

/**
 * The live table's indexes and key constraints, as statements that build them on the new table:
 * `build` creates the index (a key constraint's as a plain unique index, under the constraint's
 * name), `attach` (for a key constraint) makes that index the constraint, a catalog change only.
 * CREATE INDEX takes a lock that lets readers of the new table go on; attaching takes an
 * exclusive one, so it waits for the swap, where the run takes one anyway.
 */
export interface IndexStatement {
  build: string;
  attach: string | null;
}

async function indexStatements(conn: SqlConnection, table: string): Promise<IndexStatement[]> {
  const rows = await conn.query<{
    name: string;
    definition: string;
    constraint_def: string | null;
    qualified: string;
  }>(
    `SELECT i.relname AS name, pg_get_indexdef(x.indexrelid) AS definition,
            (SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c
             WHERE c.conindid = x.indexrelid AND c.conrelid = x.indrelid AND c.contype IN ('p', 'u')) AS constraint_def,
            format('%I.%I', n.nspname, t.relname) AS qualified
     FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace
     WHERE x.indrelid = $1::regclass
     ORDER BY i.relname`,
    [q(table)],
  );
  return rows.map((ix) => {
    const on = ` ON ${ix.qualified} USING `;
    if (!ix.definition.includes(on)) throw new Error(`cannot rebuild index ${ix.name}: ${ix.definition}`);
    const build = ix.definition.replace(on, ` ON ${freshTable(table)} USING `);
    if (!ix.constraint_def) return { build, attach: null };
    // A plain key (no DEFERRABLE, INCLUDE, …) becomes its index; anything else is built as it is.
    const kind = /^(PRIMARY KEY|UNIQUE) \([^()]*\)$/.exec(ix.constraint_def)?.[1];
    if (!kind) {
      return {
        build: `ALTER TABLE ${freshTable(table)} ADD CONSTRAINT ${q(ix.name)} ${ix.constraint_def}`,
        attach: null,
      };
    }
    return {
      build,
      attach: `ALTER TABLE ${freshTable(table)} ADD CONSTRAINT ${q(ix.name)} ${kind} USING INDEX ${q(ix.name)}`,
    };
  });
}

/** validateFresh() and completionOf() at once, where nothing reads the new table yet. */
export async function settleFresh(conn: SqlConnection, def: TableDef): Promise<void> {
  await validateFresh(conn, def);
  const completion = await completionOf(conn, def);
  if (completion.length) await conn.exec(completion.join(";\n"));
}

/** ANALYZE of a new table: its statistics, before anything plans a query on it. */
export async function analyzeFresh(conn: SqlConnection, def: TableDef): Promise<void> {
  await conn.exec(await analyzeStatement(conn, def.table));
}

/**
 * Free text no query filters, joins, groups or sorts on: no statistics (sorting 30,000 sampled
 * descriptions cost every Full Reset more than the rest of the products' statistics).
 */
const FREE_TEXT: Record<string, readonly string[]> = {
  products: ["description", "image_url", "harmonized_tariff_code"],
  order_lines: ["order_number"],
  // Each product's search result as JSON, read by its pid only
  product_search_rows: ["json"],
};

/**
 * `ANALYZE` of the new table of `table` for the statistics the planner uses: every column but
 * arrays, JSON (their element statistics serve only array and JSON operators, which no query of
 * ours applies to these tables) and FREE_TEXT; a table with none of those gets them all (and an
 * expression index's, which a column list leaves out).
 */
export async function analyzeStatement(conn: SqlConnection, table: string): Promise<string> {
  const columns = await conn.query<{ name: string; skip: boolean }>(
    `SELECT a.attname AS name,
            (t.typcategory = 'A' OR t.typname IN ('json', 'jsonb') OR a.attname = ANY ($2::text[])) AS skip
     FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
     WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped
     ORDER BY a.attnum`,
    [q(table), [...(FREE_TEXT[table] ?? [])]],
  );
  const kept = columns.filter((c) => !c.skip);
  if (kept.length === columns.length) return `ANALYZE ${freshTable(table)}`;
  return `ANALYZE ${freshTable(table)} (${kept.map((c) => q(c.name)).join(", ")})`;
}

/**
 * Builds the live table's indexes and key constraints on the new table (a duplicate key means bad
 * data). With `later`, the plain indexes (not unique, no constraint: they check nothing and no
 * calculation needs them) are handed to it instead, to be built elsewhere before the swap.
 */
export async function indexFresh(
  conn: SqlConnection,
  def: TableDef,
  later?: (build: string) => void,
): Promise<number> {
  const statements = await indexStatements(conn, def.table);
  for (const s of statements) {
    if (later && !s.attach && s.build.startsWith("CREATE INDEX ")) {
      later(s.build);
      continue;
    }
    await orRetry(`index ${def.table}`, () => conn.exec(s.build));
    if (s.attach) await conn.exec(s.attach);
  }
  return statements.length;
}

/** The table whose file is the largest (most of the import, e.g. the order lines). */
export async function largestTable(source: DataSource): Promise<TableDef> {
  let best: { def: TableDef; size: number } | null = null;
  for (const def of IMPORTED_TABLES) {
    const opened = await source.open(def.file);
    await (opened.body as AsyncGenerator<Buffer>).return?.(undefined);
    const size = opened.size ?? 0;
    if (!best || size > best.size) best = { def, size };
  }
  return best!.def;
}

/**
 * One new table loaded on a connection of its own (PostgreSQL), beside the run's: COPY (then
 * `loaded()` answers its rows), ANALYZE, then its CHECK constraint (validateFresh) and, once
 * the run's connection has loaded the other files (`othersLoaded()`), the references to and from
 * it, then its indexes (then `indexed()` answers). The run's connection meanwhile loads the other files and, once
 * `loaded()` answered, checks the other references and runs the calculations on the new tables. Every statement that takes a lock excluding readers
 * (COPY and the checks' ALTER TABLE) ends before `loaded()`; after it only CREATE INDEX runs, which
 * lets readers go on. Key constraints are attached later by the run itself (`attachments()`, in
 * the swap, where it takes an exclusive lock anyway). A duplicate key or bad value fails with
 * RetryWithStaging as the inline path does; cancel() interrupts the statement in progress.
 */
export class BesideLoader {
  private readonly stop = new AbortController();
  private readonly loadedRows: Promise<number>;
  private readonly done: Promise<void>;
  private failure: unknown = null;
  private settled = false;
  private readonly attach: string[] = [];
  private lastProgress: StepProgress | null = null;
  private relay: ((p: StepProgress) => void) | null = null;
  private othersReady!: () => void;
  private readonly others = new Promise<void>((resolve) => {
    this.othersReady = resolve;
  });
  /** Seconds spent loading (COPY, ANALYZE), checking (constraints, references), building the indexes. */
  readonly timings = { load: 0, references: 0, indexes: 0 };
  /** Who read the file: the app (order_lines.csv: loadFreshOrderLines) or the database's CSV COPY. */
  readBy: "app" | "database" = "database";

  /**
   * The indexes still to build: this table's (its keys first), queued as soon as it is loaded, and
   * the plain indexes of the other new tables (buildLater). This table's are built here before
   * its modules, the others once they are done, or by the run's connection whenever it would only
   * wait for this one (for a module run here: moduleDone's helper; at the end: indexed's helper):
   * whoever takes one first builds it.
   */
  private readonly laterIndexes: IndexStatement[] = [];
  /** This table's own indexes among them (queued first). */
  private readonly frontIndexes = new Set<IndexStatement>();
  /** Woken when an index is next added to the shared queue (nextQueued). */
  private queued: { promise: Promise<void>; wake: () => void } | null = null;
  /** Per module run here: its rows, once it is done and its new tables are complete. */
  private readonly moduleRuns = new Map<string, Deferred<number>>();
  /** Seconds each module run here took. */
  readonly moduleSeconds: Record<string, number> = {};

  constructor(
    conn: SqlConnection,
    source: DataSource,
    readonly def: TableDef,
    /** Interrupts the connection's statement in progress (pg_cancel_backend from elsewhere). */
    private readonly interrupt: () => Promise<void>,
    /** Calculation modules (CalcModule.beside) to run here once every table is loaded, and their asOf. */
    modules: {
      list: readonly CalcModule[];
      asOf: (conn: SqlConnection) => Promise<Date>;
      shared?: RunShared;
    } = {
      list: [],
      asOf: async () => new Date(),
    },
    /** SOURCE_TIMEZONE (loadFresh) */
    timeZone = "UTC",
    /**
     * For order_lines.csv: the as-of moment the run's pass over the order lines is built for while
     * the app reads the file (loadFreshOrderLines), when it is known before the load (null: the
     * load only); undefined: loadFresh() as for any file.
     */
    orderLinesPass?: { asOf: Date | null; log?: (message: string) => void },
  ) {
    for (const m of modules.list) this.moduleRuns.set(m.name, deferred<number>());
    const started = performance.now();
    this.loadedRows = (async () => {
      const step: StepContext = {
        signal: this.stop.signal,
        progress: (p) => {
          this.lastProgress = p;
          this.relay?.(p);
        },
      };
      let rows: number;
      if (orderLinesPass && def.file === "order_lines.csv") {
        const load = await loadFreshOrderLines(
          conn,
          source,
          def,
          step,
          timeZone,
          orderLinesPass.asOf,
          modules.shared,
          orderLinesPass.log,
        );
        rows = load.rows;
        this.readBy = load.readBy;
      } else rows = await loadFresh(conn, source, def, step, timeZone);
      this.timings.load = seconds(started);
      return rows;
    })();
    this.done = this.loadedRows
      .then(async () => {
        // Its statistics: after `loaded()`, so the calculation starts without waiting for them (its
        // first reader of the table, the pass over the order lines, is a plain scan), and before
        // any of its indexes is queued (ANALYZE waits for a CREATE INDEX's lock, which the run's
        // connection keeps to its end).
        await analyzeFresh(conn, def);
        this.timings.load = seconds(started);
        // Its checks, and its references (to and from it) once the other tables are there.
        let begun = performance.now();
        await validateFresh(conn, def);
        this.attach.push(...(await completionOf(conn, def)));
        // Its indexes, keys first (a duplicate shows as early as it can), to the front of the
        // shared queue: the run's connection builds them whenever it would only wait for a module
        // run here, and this one builds what is left once its modules are done. A constraint that is
        // not a plain key would lock readers out: it waits for the swap.
        const statements = (await indexStatements(conn, def.table)).sort(
          (x, y) => Number(y.attach !== null) - Number(x.attach !== null),
        );
        for (const s of statements) if (!s.build.startsWith("CREATE ")) this.attach.push(s.build);
        this.queue(
          "front",
          statements.filter((s) => s.build.startsWith("CREATE ")),
        );
        await Promise.race([this.others, abortion(this.stop.signal)]);
        // Its own indexes before the modules: the run's connection starts with the modules whose
        // work is the app's (product_metrics' sums, stock_history's walk), and this one's modules
        // wait on the app too (the forecast's fits), so the database builds them meanwhile instead
        // of at the end (Full Reset 15.6–15.9 → 15.0–15.2 s on the 50k set).
        for (let s = this.laterIndexes[0]; s && this.frontIndexes.has(s); s = this.laterIndexes[0]) {
          this.laterIndexes.shift();
          await this.build(conn, s);
        }
        // The modules first: the run's connection waits for their tables, not for the checks. A
        // module that fails may have tripped over bad data the checks below would name (a
        // duplicate key, say): its error goes to whoever waits for it, and the checks still run,
        // so what fails the work in the end is the data error if there is one.
        let moduleFailure: unknown = null;
        for (const m of modules.list) {
          if (this.stop.signal.aborted) throw new Error("stopped");
          const moduleBegun = performance.now();
          try {
            const rows = await runModuleFresh(conn, m, modules.asOf, modules.shared);
            this.moduleSeconds[m.name] = seconds(moduleBegun);
            this.moduleRuns.get(m.name)!.resolve(rows);
          } catch (err) {
            moduleFailure = err;
            for (const run of this.moduleRuns.values()) run.reject(err);
            break;
          } finally {
            modules.shared?.moduleDone(m.name);
          }
        }
        // The references to and from it. The run's pass over the order lines (order-lines-pass.ts)
        // looked up every line's pid among the new products: when it found them all, the
        // order_lines → products check is answered already (a pid it missed sends the run through
        // staging here, which names the line).
        const pidsKnown = modules.shared?.everyLinePidKnown() === true;
        begun = performance.now();
        await checkFreshReferences(
          conn,
          (from, to) =>
            (from === def || to === def) &&
            !(pidsKnown && from.file === "order_lines.csv" && to.file === "products.csv"),
        );
        this.timings.references = seconds(begun);
        // Then the indexes the run's connection has not taken (all the other tables' plain ones are
        // queued by now: `others` resolved). CREATE INDEX lets that connection go on reading.
        begun = performance.now();
        for (let s = this.laterIndexes.shift(); s; s = this.laterIndexes.shift()) {
          if (this.stop.signal.aborted) throw new Error("index builds stopped");
          await this.build(conn, s);
        }
        this.timings.indexes = seconds(begun);
        if (moduleFailure) throw moduleFailure;
      })
      .catch((err) => {
        this.failure ??= err;
        for (const run of this.moduleRuns.values()) run.reject(err);
      })
      .finally(() => {
        this.settled = true;
      });
  }

  /** Throws what made the work fail, if anything did. */
  throwIfFailed(): void {
    if (this.failure) throw this.failure;
  }

  /** Says that every other new table is loaded and analyzed: its references can be checked. */
  othersLoaded(): void {
    this.othersReady();
  }

  /** The rows loaded, once the table is loaded, checked and analyzed; relays the COPY's progress. */
  async loaded(step: StepContext): Promise<number> {
    if (this.lastProgress) step.progress(this.lastProgress);
    this.relay = (p) => step.progress(p);
    try {
      return await this.loadedRows;
    } finally {
      this.relay = null;
    }
  }

  /** Resolves once the indexes are built. */
  async indexed(helper?: SqlConnection): Promise<number> {
    if (helper) await this.help(helper, this.done);
    await this.done;
    this.throwIfFailed();
    if (this.stop.signal.aborted) throw new Error("index builds stopped");
    return this.attach.length;
  }

  /** After indexed(): the statements that complete the table, for the run's transaction. */
  attachments(): string[] {
    return this.attach;
  }

  /**
   * Until `until` settles, builds on `conn` (the run's connection, which would only wait) the
   * plain indexes handed over that this connection has not taken yet.
   */
  private async help(conn: SqlConnection, until: Promise<unknown>): Promise<void> {
    let settled = false;
    const mark = () => {
      settled = true;
    };
    const ended = until.then(mark, mark);
    while (!settled && !this.stop.signal.aborted) {
      const next = this.laterIndexes.shift();
      // Nothing queued yet: wait for the next index handed over, or for the end.
      if (!next) await Promise.race([ended, this.nextQueued()]);
      else await this.build(conn, next);
    }
  }

  /** Builds an index of the queue on `conn`; a key's constraint is attached in the swap. */
  private async build(conn: SqlConnection, s: IndexStatement): Promise<void> {
    // (A duplicate key's message names the index and the key.)
    await orRetry("index build", () => conn.exec(s.build));
    if (s.attach) this.attach.push(s.attach);
  }

  /**
   * Resolves when an index is next added to the shared queue. One promise for every waiter until
   * then: a waiter that stops waiting (its run ended first) leaves nothing behind.
   */
  private nextQueued(): Promise<void> {
    if (!this.queued) {
      let wake!: () => void;
      const promise = new Promise<void>((resolve) => {
        wake = resolve;
      });
      this.queued = { promise, wake };
    }
    return this.queued.promise;
  }

  private queue(position: "front" | "back", builds: IndexStatement[]): void {
    if (!builds.length) return;
    if (position === "front") {
      this.laterIndexes.unshift(...builds);
      for (const b of builds) this.frontIndexes.add(b);
    } else {
      for (const b of builds) {
        // A GIN index (the products' trigram ones, the largest of the other tables') goes before the
        // B-trees handed over: built last, it ran alone at the end of the run.
        const at = isGin(b) ? this.laterIndexes.findIndex((x) => !this.frontIndexes.has(x) && !isGin(x)) : -1;
        if (at < 0) this.laterIndexes.push(b);
        else this.laterIndexes.splice(at, 0, b);
      }
    }
    const queued = this.queued;
    this.queued = null;
    queued?.wake();
  }

  /**
   * Takes a plain index of another new table (indexFresh's `later`) to build after this table's
   * indexes: off the run's connection, which meanwhile goes on with the next file.
   */
  buildLater(build: string): void {
    this.queue("back", [{ build, attach: null }]);
  }

  /** Whether module `name` runs here. */
  runs(name: string): boolean {
    return this.moduleRuns.has(name);
  }

  /**
   * Waits for module `name` (run here); answers the module's rows. Its new tables stay in
   * SWAP_SCHEMA, which is first in the run's search path, so the later modules read them there; they
   * take the live ones' places with the run's other tables at the end (swapModuleTables), not here:
   * dropping a live table now would hold its readers (the Forecasting page, the dashboards) for the
   * rest of the calculation.
   */
  async moduleDone(name: string, helper?: SqlConnection): Promise<number> {
    const run = this.moduleRuns.get(name)!.promise;
    // Meanwhile the run's connection, which would only wait, builds queued indexes.
    if (helper) await this.help(helper, run);
    return run;
  }

  /** Stops the work: the COPY ends at its next chunk, the statement in progress is interrupted. */
  async cancel(): Promise<void> {
    this.stop.abort();
    // A cancel that reaches the server between two statements is lost: repeat until it ends.
    while (!this.settled) {
      await this.interrupt().catch(() => {});
      await Promise.race([this.done, new Promise((r) => setTimeout(r, 200))]);
    }
  }
}

const seconds = (since: number) => Math.round(performance.now() - since) / 1000;

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(err: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A failure nobody waits for (the run ended first) is not an unhandled rejection.
  promise.catch(() => {});
  return { promise, resolve, reject };
}

/**
 * Runs a calculation module (CalcModule.beside) in a transaction of its own on `conn`, into new
 * tables in SWAP_SCHEMA shaped like its live ones (which it finds first in the search path), and
 * completes them there: the live tables' indexes and key constraints under their final names, and
 * statistics. Nothing reads the new tables before the commit, so the exclusive locks this takes on
 * them bother nobody; the live tables are only read (their shape).
 */
async function runModuleFresh(
  conn: SqlConnection,
  module: CalcModule,
  findAsOf: (conn: SqlConnection) => Promise<Date>,
  shared?: RunShared,
): Promise<number> {
  return conn.transaction(async (tx) => {
    const [{ path }] = (await tx.query<{ path: string }>(
      "SELECT current_setting('search_path') AS path",
    )) as [{ path: string }];
    for (const table of module.tables) {
      await tx.exec(
        `CREATE TABLE ${freshTable(table)} (LIKE ${q(table)} INCLUDING ALL EXCLUDING INDEXES EXCLUDING STATISTICS)
           WITH (autovacuum_enabled = false)`,
      );
    }
    await tx.query("SELECT set_config('search_path', $1, true)", [`${SWAP_SCHEMA}, ${path}`]);
    const asOf = await findAsOf(tx);
    const rows = await module.run({ conn: tx, asOf, shared });
    await tx.query("SELECT set_config('search_path', $1, true)", [path]);
    for (const table of module.tables) {
      for (const s of await indexStatements(tx, table)) {
        await tx.exec(s.build);
        if (s.attach) await tx.exec(s.attach);
      }
      // (Unless the module analyzed it itself. pg_stats, not pg_statistic: that one only a
      // superuser may read.)
      const [analyzed] = await tx.query<{ any: boolean }>(
        "SELECT EXISTS (SELECT 1 FROM pg_stats WHERE schemaname = $1 AND tablename = $2) AS any",
        [SWAP_SCHEMA, table],
      );
      if (!analyzed?.any) await tx.exec(await analyzeStatement(tx, table));
    }
    return rows;
  });
}

const isGin = (s: IndexStatement) => / USING gin /i.test(s.build);

/** Rejects once the signal is aborted. */
function abortion(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const fail = () => reject(new Error("stopped"));
    if (signal.aborted) fail();
    else signal.addEventListener("abort", fail, { once: true });
  });
}

/**
 * Every reference of the new data must point at a row of the new data. `which` picks the
 * references to check (by the referring and the referenced table); default all.
 */
export async function checkFreshReferences(
  conn: SqlConnection,
  which: (from: TableDef, to: TableDef) => boolean = () => true,
): Promise<number> {
  const byFile = new Map(IMPORTED_TABLES.map((d) => [d.file, d]));
  let checked = 0;
  for (const def of IMPORTED_TABLES) {
    const col = (name: string, d: TableDef) => q(targetOf(d.columns.find((c) => c.name === name)!));
    for (const ref of def.references) {
      const target = byFile.get(ref.table)!;
      if (!which(def, target)) continue;
      const bad = await conn.query(
        `SELECT 1 FROM ${fresh(def)} s WHERE s.${col(ref.column, def)} IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM ${fresh(target)} r WHERE r.${col(ref.key, target)} = s.${col(ref.column, def)})
         LIMIT 1`,
      );
      if (bad.length) throw new RetryWithStaging(`${def.file}: unknown ${ref.column}`);
      checked++;
    }
  }
  return checked;
}

/**
 * The calculation tables a Full Reset fills in its transaction (the modules it runs on its own
 * connection) are new tables in SWAP_SCHEMA too, shaped like the live ones with the live indexes
 * and key constraints under their names, created before the modules run (call this with the live
 * tables first in the search path). The modules then TRUNCATE, fill and UPDATE those, and the
 * live tables are left alone until swapModuleTables: readers keep reading the last calculation,
 * without waiting, until the run commits (a TRUNCATE or DROP INDEX on a live table would hold
 * every reader of it for the whole calculation phase).
 */
export async function createFreshModuleTables(tx: SqlConnection, tables: readonly string[]): Promise<void> {
  for (const table of tables) {
    const indexes = await indexStatements(tx, table);
    await tx.exec(
      `CREATE TABLE ${freshTable(table)} (LIKE ${q(table)} INCLUDING ALL EXCLUDING INDEXES EXCLUDING STATISTICS)
         WITH (autovacuum_enabled = false)`,
    );
    for (const s of indexes) {
      await tx.exec(s.build);
      if (s.attach) await tx.exec(s.attach);
    }
  }
}

/**
 * Takes the exclusive locks the swap needs on the live tables, all at once, before any swap. A
 * reader that joins several of them (the products list reads product_metrics, products, vendors,
 * brands) takes its shared locks one by one; a run that took its exclusive ones one by one could
 * hold one a reader waits for while waiting for one that reader holds: a deadlock, which PostgreSQL
 * breaks by failing one of the two (the run, possibly). Instead the run waits at most a moment for
 * all of them together; when it cannot have them, it lets go of the ones it got and tries again,
 * so readers finish and no cycle forms.
 */
export async function lockForSwap(tx: SqlConnection, tables: readonly string[]): Promise<void> {
  if (tables.length === 0) return;
  const list = [...new Set(tables)].map(q).join(", ");
  for (let attempt = 0; ; attempt++) {
    await tx.exec("SAVEPOINT swap_locks");
    try {
      // Below deadlock_timeout (1 s), so the run gives way before a deadlock is even looked for;
      // longer after many tries, so a steady stream of readers cannot starve the run.
      await tx.exec(
        `SET LOCAL lock_timeout = '${attempt < 40 ? 200 : 2000}ms'; LOCK TABLE ${list} IN ACCESS EXCLUSIVE MODE`,
      );
      await tx.exec("RELEASE SAVEPOINT swap_locks; SET LOCAL lock_timeout TO DEFAULT");
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== "55P03") throw err;
      await tx.exec("ROLLBACK TO SAVEPOINT swap_locks");
      await new Promise((r) => setTimeout(r, 10 + Math.random() * 40));
    }
  }
}

/** Inside the run's transaction: the calculation tables of createFreshModuleTables take the live ones' places. */
export async function swapModuleTables(tx: SqlConnection, tables: readonly string[]): Promise<void> {
  for (const table of tables) await swapIn(tx, table, []);
}

/**
 * Inside the run's transaction: the new table takes the live one's place, after `attach` (the
 * IndexBuilder's attachments) made its key indexes its constraints.
 */
export async function swapTable(
  tx: SqlConnection,
  def: TableDef,
  rows: number,
  attach: readonly string[] = [],
): Promise<TableCounts> {
  await swapIn(tx, def.table, attach);
  return { added: rows, updated: 0, deleted: 0, skipped: 0, total: rows };
}

/**
 * The new table `table` of SWAP_SCHEMA takes the place of the live one: the first of that name in
 * the search path's other schemas (the run's transaction may have SWAP_SCHEMA in front).
 */
async function swapIn(tx: SqlConnection, table: string, attach: readonly string[]): Promise<void> {
  if (attach.length) await tx.exec(attach.join(";\n"));
  // The live table, and whether anything outside it depends on it or on its row type (a view, a
  // key of another table: pg_depend's normal dependencies) or it owns a sequence.
  const [live] = await tx.query<{ schema: string; held: boolean }>(
    `SELECT n.nspname AS schema,
       EXISTS (SELECT 1 FROM pg_depend d
               WHERE ((d.refclassid = 'pg_class'::regclass AND d.refobjid = c.oid)
                      OR (d.refclassid = 'pg_type'::regclass AND d.refobjid = c.reltype))
                 AND d.deptype = 'n')
       OR EXISTS (SELECT 1 FROM pg_depend d JOIN pg_class s ON s.oid = d.objid
                  WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
                    AND d.refobjid = c.oid AND s.relkind = 'S') AS held
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relname = $1 AND n.nspname NOT IN ($2, $3) AND n.nspname = ANY (current_schemas(false))
     ORDER BY array_position(current_schemas(false), n.nspname) LIMIT 1`,
    [table, SWAP_SCHEMA, RETIRED_SCHEMA],
  );
  if (!live) throw new Error(`swap: no live table ${table}`);
  // The live table moves out of the way, into RETIRED_SCHEMA. One that something depends on is
  // dropped instead, without CASCADE: the run fails and rolls back, as it should.
  const out = live.held
    ? `DROP TABLE ${q(live.schema)}.${q(table)}`
    : `CREATE SCHEMA IF NOT EXISTS ${q(RETIRED_SCHEMA)};
       ALTER TABLE ${q(live.schema)}.${q(table)} SET SCHEMA ${q(RETIRED_SCHEMA)}`;
  await tx.exec(
    `${out};
     ALTER TABLE ${freshTable(table)} SET SCHEMA ${q(live.schema)};
     ALTER TABLE ${q(live.schema)}.${q(table)} RESET (autovacuum_enabled)`,
  );
}
