// Full Update and Full Reset: one data operation at a time across every instance (a PostgreSQL
// advisory lock held by the run's own connection), with progress events, cancel at the next step
// boundary, and history records. A failed or cancelled run changes nothing: staging happens outside
// the live tables, and the apply + calculations commit in one transaction.

import { formatElapsed } from "../../shared/format.ts";
import { type Database, isConnectionLoss, type SqlConnection } from "../db/database.ts";
import type { Prisma } from "../db/generated/client.ts";
import { conflict } from "../errors.ts";
import { assertRunnableSettings, loadGlobalSettingValues } from "../modules/config/planning-parameters.ts";
import { ABSORB_RECEIPTS_SQL } from "../modules/purchasing/open-orders.ts";
import { CALC_MODULES, type CalcModule, checkModuleOrder, recordCalculation } from "./calculate.ts";
import { Findings, SourceFindingsError } from "./findings.ts";
import {
  checkReferences,
  dropStaging,
  mergeTable,
  recordSync,
  replaceTable,
  stageAll,
  type TableCounts,
} from "./import.ts";
import { RunShared } from "./order-lines-pass.ts";
import { resolveAsOf } from "./planning/as-of.ts";
import { snapshotSettings } from "./planning/context.ts";
import type { ProgressBus, ProgressEvent, RunStatus, RunType } from "./progress-bus.ts";
import {
  analyzeFresh,
  BesideLoader,
  checkFreshReferences,
  copySettingsFresh,
  createFreshModuleTables,
  createSwapSchema,
  dropRetiredSchema,
  dropSwapSchema,
  indexFresh,
  largestTable,
  loadFresh,
  lockForSwap,
  RetryWithStaging,
  SWAP_SCHEMA,
  settleFresh,
  swapBlocker,
  swapModuleTables,
  swapTable,
} from "./reset-swap.ts";
import type { DataSource } from "./source.ts";
import { CancelledError, type StepResult, StepRunner } from "./steps.ts";
import { IMPORTED_TABLES } from "./tables.ts";

const DATA_OPS_LOCK_KEY = 72_707_370;

/**
 * The run's session: UTC dates, memory for big sorts, hash aggregates and index builds, and no JIT
 * (a run's statements each run once, so compiling their expressions costs more than it saves:
 * `bench:modules`, every module, 16.5–16.8 s of database CPU with it, 16.1–16.2 s without).
 */
export const RUN_SESSION_SETTINGS =
  "SET TIME ZONE 'UTC'; SET work_mem = '128MB'; SET maintenance_work_mem = '256MB'; SET jit = off";

/**
 * A Full Reset's two connections: no parallel workers for their index builds and statements (the
 * two connections and the app keep both cores of the reference machine busy already, and a worker
 * only adds its start-up and the leader's merge).
 */
const NO_PARALLEL_WORKERS =
  "SET max_parallel_maintenance_workers = 0; SET max_parallel_workers_per_gather = 0";

/** How long a start waits for the run lock held by a run's housekeeping (takeLock). */
const LOCK_HOUSEKEEPING_MS = 5000;

const LABEL: Record<RunType, string> = { update: "Full update", reset: "Full reset", chat: "Chat import" };

/** The last step of the calculation phase: the metrics tables' plain indexes (dropPlainIndexes). */
export const METRICS_INDEX_STEP = "Index metrics tables";

/**
 * The last module of a run that writes a module table of another (product_metrics: filled by module
 * product_metrics, updated by planning): its plain indexes are built as that module ends.
 */
const LAST_WRITER: Record<string, string> = { product_metrics: "planning" };

export interface DataOpsOptions {
  db: Database;
  bus: ProgressBus;
  source: () => DataSource;
  modules?: readonly CalcModule[];
  /** Test hook: pause before each step (PIPELINE_STEP_DELAY_MS). */
  stepDelayMs?: number;
  /** SOURCE_TIMEZONE: the IANA zone a source timestamp without a zone is read in (default UTC). */
  sourceTimeZone?: string;
  /** Fixed "as of" moment for calculations (tests); default now. */
  asOf?: () => Date;
  log?: { info(msg: string): void; error(obj: unknown, msg: string): void };
  /**
   * After a Full Update or Full Reset has committed: work that reads the new data (the created
   * products the source now carries are marked). A failure is logged; the run stays completed.
   * Gets the run's id.
   */
  afterImport?: (runId: number) => Promise<unknown>;
  /**
   * Just before a Full Update or Full Reset takes the exclusive locks of its swap: background work
   * that reads the live tables for seconds (the promotion dips' measurement) is stopped, so the
   * swap, and the readers queued behind its lock, do not wait for it. A failure is logged.
   */
  beforeSwap?: () => Promise<unknown>;
  /**
   * When a Full Update or Full Reset starts: background work left from the previous run that only
   * pays off for its calculation (warming the pages' figures) gives the new run the machine.
   */
  onRunStart?: () => void;
  /**
   * The "chat" run type: the chat archive import (server/modules/chat/import). It runs on the run's
   * connection through the same steps, progress, cancel and history as the other runs.
   */
  chat?: {
    stepCount: number;
    run(ctx: {
      conn: SqlConnection;
      signal: AbortSignal;
      step: StepRunner["run"];
    }): Promise<{ counts: Record<string, TableCounts>; details: Record<string, Record<string, unknown>> }>;
  };
}

interface ActiveRun {
  runId: number;
  type: RunType;
  /** Set just before the final event: the run's outcome is recorded, only cleanup remains. */
  finished: boolean;
  /**
   * Set once the run's row says completed, before the after-import step: a start arriving then (a
   * script that polls the run's row) waits for the run to end instead of getting a 409.
   */
  recorded?: boolean;
  /** The run connection's server process, so a cancel can interrupt a long statement. */
  backendPid: number;
  abort: AbortController;
  /** Why it was aborted, recorded as the run's error (default: a user's cancel). */
  cancelReason?: string;
  done: Promise<void>;
}

/** A run's error when this instance stopped it because the server is shutting down. */
export const SHUTDOWN_CANCEL_MESSAGE =
  "Cancelled: the server was shut down during the run; nothing was changed. Start it again.";

export interface DataOpsStatus {
  active: boolean;
  progress: ProgressEvent | null;
}

export class DataOps {
  private active: ActiveRun | null = null;
  private starting = false;
  /** The last run's connection given back (after the housekeeping it does once the run is over). */
  private released: Promise<void> = Promise.resolve();
  /**
   * A run this instance will start as soon as it can (the first start's import, queued before the
   * server listens): reported as active from the first request, and other starts get 409 meanwhile.
   */
  private queued: { type: RunType; since: string } | null = null;
  /** The newest event seen per run type, from this instance or (via the bus) any other. */
  private readonly latest = new Map<RunType, ProgressEvent>();
  private readonly unsubscribe: Array<() => void> = [];
  private persistChain: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: DataOpsOptions) {
    checkModuleOrder(opts.modules ?? CALC_MODULES);
    this.unsubscribe.push(
      opts.bus.onProgress((e) => this.remember(e)),
      opts.bus.onCancel((runId) => {
        if (this.active?.runId === runId) this.abortRun(this.active);
      }),
    );
  }

  /** Marks runs left "running" by a stopped server as failed, and loads the last known events. */
  async init(): Promise<void> {
    const { prisma } = this.opts.db;
    const conn = await this.opts.db.connect();
    try {
      const [{ locked }] = (await conn.query<{ locked: boolean }>(
        "SELECT pg_try_advisory_lock($1) AS locked",
        [DATA_OPS_LOCK_KEY],
      )) as [{ locked: boolean }];
      if (locked) {
        try {
          await this.failStaleRuns();
          // New tables of a reset that a stopped server left half built, old ones it left retired.
          await dropSwapSchema(conn);
          await dropRetiredSchema(conn);
        } finally {
          await conn.query("SELECT pg_advisory_unlock($1)", [DATA_OPS_LOCK_KEY]);
        }
      }
    } finally {
      await conn.release();
    }
    for (const type of ["update", "reset", "chat"] as const) {
      const last = await prisma.dataRun.findFirst({
        where: { type },
        orderBy: { id: "desc" },
        select: { lastEvent: true },
      });
      if (last?.lastEvent && !this.latest.has(type))
        this.latest.set(type, last.lastEvent as unknown as ProgressEvent);
    }
  }

  /** The `beforeSwap` option, just before the swap takes its locks; its failure only logs. */
  private async beforeSwap(): Promise<void> {
    await this.opts.beforeSwap?.().catch((err) => this.opts.log?.error({ err }, "before-swap step failed"));
  }

  /** Runs left "running" by a server that stopped become failed, with a final event. */
  private async failStaleRuns(exceptId?: number): Promise<void> {
    const { prisma } = this.opts.db;
    const stale = await prisma.dataRun.findMany({
      where: { status: "running", ...(exceptId ? { id: { not: exceptId } } : {}) },
      select: { id: true },
    });
    if (stale.length) {
      const ids = stale.map((r) => r.id);
      const error = "Interrupted: the server stopped during the run";
      await prisma.$transaction([
        prisma.dataRun.updateMany({
          where: { id: { in: ids } },
          data: { status: "failed", endedAt: new Date(), error },
        }),
        prisma.importHistory.updateMany({
          where: { runId: { in: ids }, status: "running" },
          data: { status: "failed", endTime: new Date(), errorMessage: error },
        }),
        prisma.calculateHistory.updateMany({
          where: { runId: { in: ids }, status: "running" },
          data: { status: "failed", endTime: new Date(), errorMessage: error },
        }),
      ]);
      // Their last stored event still says "running": replace it with the ending.
      for (const run of await prisma.dataRun.findMany({ where: { id: { in: ids } } })) {
        const type = run.type as RunType;
        const event: ProgressEvent = {
          run_id: run.id,
          type,
          status: "error",
          operation: `${LABEL[type]} failed`,
          elapsed_seconds: 0,
          error,
          timestamp: new Date().toISOString(),
          progress: { status: "error", operation: `${LABEL[type]} failed`, type, error },
        };
        await prisma.dataRun.update({
          where: { id: run.id },
          data: { lastEvent: event as unknown as Prisma.InputJsonValue },
        });
        this.remember(event);
      }
    }
  }

  /**
   * Takes the run lock on `conn`. Held by a session with no run running, it is a run's connection
   * (of any instance) doing its housekeeping after the run (start(): dropping the tables its swaps
   * replaced, a fraction of a second): waited for, LOCK_HOUSEKEEPING_MS at most.
   */
  private async takeLock(conn: SqlConnection): Promise<boolean> {
    const deadline = Date.now() + LOCK_HOUSEKEEPING_MS;
    for (;;) {
      const [row] = await conn.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1) AS locked", [
        DATA_OPS_LOCK_KEY,
      ]);
      if (row?.locked) return true;
      const running = await this.opts.db.prisma.dataRun.count({ where: { status: "running" } });
      if (running > 0 || Date.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Whether some session holds the data-operations lock of this database (PostgreSQL: any instance). */
  private async lockIsHeld(): Promise<boolean> {
    const rows = await this.opts.db.prisma.$queryRaw<{ held: boolean }[]>`
      SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted
                     AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                     AND ((classid::bigint << 32) | objid::bigint) = ${DATA_OPS_LOCK_KEY}) AS held`;
    return Boolean(rows[0]?.held);
  }

  /** Queues the first start's run (see `queued`); start(type, …, { queued: true }) takes it up. */
  queue(type: RunType): void {
    this.queued = { type, since: new Date().toISOString() };
  }

  /** Drops the queued run (it was not needed after all). */
  unqueue(): void {
    this.queued = null;
  }

  async status(): Promise<DataOpsStatus> {
    if (this.active && !this.active.finished)
      return { active: true, progress: this.latest.get(this.active.type) ?? null };
    if (this.queued) {
      const { type, since } = this.queued;
      const operation = `${LABEL[type]} queued: preparing the first import`;
      return {
        active: true,
        progress: {
          run_id: 0,
          type,
          status: "running",
          operation,
          elapsed_seconds: Math.round((Date.now() - Date.parse(since)) / 100) / 10,
          error: null,
          timestamp: new Date().toISOString(),
          progress: { status: "running", operation, type, error: null },
        },
      };
    }
    // Another instance may be running one.
    const running = await this.opts.db.prisma.dataRun.findFirst({
      where: { status: "running" },
      orderBy: { id: "desc" },
      select: { type: true, lastEvent: true },
    });
    if (running && !(await this.lockIsHeld())) {
      // Its instance died without cleaning up (the lock went with its connection).
      await this.failStaleRuns();
    } else if (running) {
      const type = running.type as RunType;
      return {
        active: true,
        progress: this.latest.get(type) ?? (running.lastEvent as unknown as ProgressEvent) ?? null,
      };
    }
    const events = [...this.latest.values()].sort((a, b) => b.run_id - a.run_id);
    return { active: false, progress: events[0] ?? null };
  }

  /** Keeps the newest event per run type; NOTIFY may deliver a late one after a newer one. */
  private remember(e: ProgressEvent): void {
    const known = this.latest.get(e.type);
    if (
      !known ||
      e.run_id > known.run_id ||
      (e.run_id === known.run_id && (e.seq ?? 0) >= (known.seq ?? 0))
    ) {
      this.latest.set(e.type, e);
    }
  }

  /** The current state for a new subscriber of one stream. */
  latestEvent(type: RunType): ProgressEvent | null {
    return this.latest.get(type) ?? null;
  }

  onProgress(fn: (e: ProgressEvent) => void): () => void {
    return this.opts.bus.onProgress(fn);
  }

  /**
   * Starts a run. `prepare` runs once this instance holds the run lock, before the run is recorded:
   * work only the instance that runs may do (writing the demo files); should it throw, nothing starts.
   */
  async start(
    type: RunType,
    userId: number | null,
    opts: { prepare?: () => Promise<void>; queued?: boolean } = {},
  ): Promise<{ run_id: number }> {
    // The queued run goes first: others wait for it (and it for nothing else of this instance).
    if (this.queued && !opts.queued) throw conflict("A data operation is already running");
    // A run that already sent its final event is only releasing its connection.
    if ((this.active?.finished || this.active?.recorded) && !this.starting)
      await this.active.done.catch(() => {});
    if (this.active || this.starting) throw conflict("A data operation is already running");
    // The last run's connection may still be dropping the tables it retired, holding the lock.
    await this.released;
    // `starting` is set before the first await after this check: two clicks cannot both pass.
    if (this.active || this.starting) throw conflict("A data operation is already running");
    this.starting = true;
    let handedOver = false;
    const conn = await this.opts.db.connect().catch((err) => {
      this.starting = false;
      throw err;
    });
    try {
      if (!(await this.takeLock(conn))) throw conflict("A data operation is already running");
      try {
        // Holding the lock proves nothing else runs: rows still "running" belong to a dead instance.
        await this.failStaleRuns();
        await opts.prepare?.();
        const [{ pid }] = (await conn.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")) as [
          { pid: number },
        ];
        const run = await this.opts.db.prisma.dataRun.create({
          data: { type, status: "running", startedBy: userId },
        });
        const active: ActiveRun = {
          runId: run.id,
          type,
          finished: false,
          abort: new AbortController(),
          done: Promise.resolve(),
          backendPid: pid,
        };
        this.active = active;
        if (opts.queued) this.queued = null;
        handedOver = true;
        const executed = this.execute(active, conn).catch((err) =>
          this.opts.log?.error({ err }, "data operation bookkeeping failed"),
        );
        // The run is over once it has recorded its end. Its connection goes on, still holding the
        // lock: on PostgreSQL it drops the live tables the run's swaps retired (their files are
        // freed there, after the commit and without the run waiting: ≈ 0.2 s on the large demo
        // set), then leaves nothing of the run on the pooled connection: settings, and above all
        // the lock. The next start waits for that (released); on PGlite the run dropped them itself.
        this.released = executed
          .then(async () => {
            if (this.opts.db.kind === "postgres" && type !== "chat")
              await dropRetiredSchema(conn).catch((err) =>
                this.opts.log?.error({ err }, "dropping the replaced tables failed"),
              );
          })
          .finally(async () => {
            let clean = true;
            await conn.exec("RESET ALL").catch(() => {
              clean = false;
            });
            await conn.query("SELECT pg_advisory_unlock($1)", [DATA_OPS_LOCK_KEY]).catch(() => {
              clean = false;
            });
            await conn.release(!clean);
          })
          .catch((err) => this.opts.log?.error({ err }, "giving back the run's connection failed"));
        active.done = executed.then(() => {
          this.active = null;
        });
        return { run_id: run.id };
      } finally {
        if (!handedOver)
          await conn.query("SELECT pg_advisory_unlock($1)", [DATA_OPS_LOCK_KEY]).catch(() => {});
      }
    } finally {
      this.starting = false;
      if (!handedOver) {
        if (opts.queued) this.queued = null;
        await conn.release();
      }
    }
  }

  /** Cancels the running operation (of this type, when given), wherever it runs. */
  async cancel(type?: RunType): Promise<{ run_id: number }> {
    const local = this.active && !this.active.finished ? this.active : null;
    if (local) {
      if (type && local.type !== type) throw conflict(`No ${LABEL[type].toLowerCase()} is running`);
      // Abort first, in memory: on embedded PGlite the run's transaction may hold the only
      // connection, and the flag below would wait for it.
      this.abortRun(local);
      this.persist(() =>
        this.opts.db.prisma.dataRun.update({ where: { id: local.runId }, data: { cancelRequested: true } }),
      );
      return { run_id: local.runId };
    }
    const running = await this.opts.db.prisma.dataRun.findFirst({
      where: { status: "running" },
      orderBy: { id: "desc" },
      select: { id: true, type: true },
    });
    if (!running || (type && running.type !== type)) {
      throw conflict(type ? `No ${LABEL[type].toLowerCase()} is running` : "No data operation is running");
    }
    // Another instance runs it: it polls this flag and also hears the bus.
    await this.opts.db.prisma.dataRun.update({ where: { id: running.id }, data: { cancelRequested: true } });
    await this.opts.bus.requestCancel(running.id);
    return { run_id: running.id };
  }

  private abortRun(run: ActiveRun, reason?: string): void {
    if (run.abort.signal.aborted) return;
    run.cancelReason = reason;
    run.abort.abort();
    // On PostgreSQL, interrupt the statement in progress (a long COPY or INSERT) instead of
    // waiting for it to end; the transaction rolls back either way.
    if (this.opts.db.kind === "postgres") {
      this.opts.db.prisma.$executeRaw`SELECT pg_cancel_backend(${run.backendPid}::int)`.catch(() => {});
    }
  }

  /** Resolves when no run of this instance is active (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.active) await this.active.done.catch(() => {});
    await this.persistChain.catch(() => {});
  }

  /** Idle, and the last run's connection given back (the tables its swaps replaced dropped). */
  async settled(): Promise<void> {
    await this.idle();
    await this.released;
  }

  async close(): Promise<void> {
    if (this.active) this.abortRun(this.active, SHUTDOWN_CANCEL_MESSAGE);
    await this.settled();
    for (const u of this.unsubscribe) u();
  }

  private async execute(run: ActiveRun, conn: SqlConnection): Promise<void> {
    const { prisma } = this.opts.db;
    const label = LABEL[run.type];
    const started = new Date();
    if (run.type !== "chat") this.opts.onRunStart?.();
    const modules = this.opts.modules ?? CALC_MODULES;
    // Load and apply each table, check references, each module, then the metrics tables' indexes.
    const baseStepCount = IMPORTED_TABLES.length * 2 + 1 + modules.length + 1;
    // (By swap, a Full Reset also has the modules' prepare steps, and on PostgreSQL the wait for
    // the table loaded beside; through staging it has neither.)
    let stepCount =
      run.type === "chat"
        ? (this.opts.chat?.stepCount ?? 1)
        : baseStepCount +
          (run.type === "reset"
            ? modules.filter((m) => m.prepare).length + (this.opts.db.kind === "postgres" ? 1 : 0)
            : 0);
    let currentStep = "";
    let stepIndex = 0;

    let seq = 0;
    let publishChain: Promise<unknown> = Promise.resolve();
    const emit = (status: RunStatus, operation: string, extra: Partial<ProgressEvent> = {}) => {
      const event: ProgressEvent = {
        run_id: run.runId,
        seq: ++seq,
        type: run.type,
        status,
        operation,
        step: currentStep || undefined,
        step_index: stepIndex,
        step_count: stepCount,
        elapsed_seconds: Math.round((Date.now() - started.getTime()) / 100) / 10,
        error: null,
        timestamp: new Date().toISOString(),
        ...extra,
      };
      // A NOTIFY payload is limited to 8000 bytes.
      if (event.error && event.error.length > 1000) event.error = `${event.error.slice(0, 1000)}…`;
      event.progress = { ...event.progress, status, operation, type: run.type, error: event.error };
      this.remember(event);
      // In order, one after another, so no instance sees an older event after a newer one.
      publishChain = publishChain
        .then(() => this.opts.bus.publish(event))
        .catch((err) => this.opts.log?.error({ err }, "progress publish failed"));
      // Stored with the run. Not awaited: on embedded PGlite the run's transaction holds the only
      // connection, so these writes queue up behind it instead of blocking it.
      this.persist(() =>
        prisma.$transaction([
          prisma.dataRunEvent.create({
            data: { runId: run.runId, event: event as unknown as Prisma.InputJsonValue },
          }),
          prisma.dataRun.update({
            where: { id: run.runId },
            data: { lastEvent: event as unknown as Prisma.InputJsonValue },
          }),
        ]),
      );
    };

    let lastProgressAt = 0;
    const steps = new StepRunner({
      signal: run.abort.signal,
      delayMs: this.opts.stepDelayMs,
      onStepStart: (name, index) => {
        currentStep = name;
        stepIndex = index + 1;
        emit("running", `${name}…`);
      },
      onStepProgress: (name, p) => {
        const now = Date.now();
        if (now - lastProgressAt < 250) return;
        lastProgressAt = now;
        const percentage = p.total ? Math.min(100, Math.round((p.current / p.total) * 100)) : undefined;
        emit("running", `${name}…`, {
          progress: { ...p, percentage, status: "running", operation: name, type: run.type },
        });
      },
      onStepEnd: (r) => {
        if (r.status === "completed") emit("running", `${r.name}: done`, { rows: r.rowsAffected });
      },
    });

    // Emitted before the first await, so status() shows the run the moment start() returns.
    emit("running", `Starting ${label.toLowerCase()}`);
    const counts: Record<string, TableCounts> = {};
    // More of the import history's details (the swap's index build timings).
    const extraDetails: Record<string, Record<string, unknown>> = {};
    // The calculation steps: steps.results[calcFrom, calcTo) (calcTo −1 while they run).
    let calcFrom = -1;
    let calcTo = -1;
    let calcStarted = 0;
    const calcSteps = () =>
      calcFrom < 0 ? [] : steps.results.slice(calcFrom, calcTo < 0 ? undefined : calcTo);
    const importStepList = () => {
      const calc = new Set(calcSteps());
      return steps.results.filter((r) => !calc.has(r));
    };
    let importRecord: { id: number } | null = null;
    // With a server, a cancel may come from another instance whose NOTIFY was missed: poll the flag.
    const poll =
      this.opts.db.kind === "postgres"
        ? setInterval(() => {
            prisma.dataRun
              .findUnique({ where: { id: run.runId }, select: { cancelRequested: true } })
              .then((r) => {
                if (r?.cancelRequested) this.abortRun(run);
              })
              .catch(() => {});
          }, 1000)
        : undefined;

    try {
      importRecord = await prisma.importHistory.create({
        data: { runId: run.runId, startTime: started, status: "running", additionalInfo: { type: run.type } },
        select: { id: true },
      });
      // Settings a calculation cannot use stop the run here, before anything changes.
      await assertRunnableSettings(conn);
      await conn.exec(RUN_SESSION_SETTINGS);
      const source = this.opts.source();
      // The day the run calculates as of (docs/metrics.md §0): the run's start, or with
      // calculation_as_of = latest_data the newest sale's day, found once the order lines are
      // loaded (by whichever connection needs it first; both read the same new table).
      const runStart = this.opts.asOf?.() ?? new Date();
      const asOfMode =
        run.type === "chat" ? "today" : (await loadGlobalSettingValues(conn)).calculation_as_of;
      let asOf = runStart;
      let asOfFound: Promise<Date> | null = null;
      // What the modules share in memory, on either connection (the pass over the order lines).
      const shared = new RunShared(modules.filter((m) => m.readsOrderLines).map((m) => m.name));
      const findAsOf = (c: SqlConnection) => {
        asOfFound ??= resolveAsOf(c, asOfMode, runStart);
        return asOfFound;
      };
      let newestDataDay: string | null = null;
      // Every calculation module, in the run's transaction; `check` runs before each. The modules
      // `beside` runs (a Full Reset's second connection) are waited for at their place in the order,
      // and their new tables swapped in there.
      const calculate = async (tx: SqlConnection, check?: () => void, beside?: BesideLoader | null) => {
        calcFrom = steps.results.length;
        calcTo = -1;
        calcStarted = Date.now();
        asOf = await findAsOf(tx);
        // Receipts recorded here before this run started are in the source's stock from now on.
        await tx.query(ABSORB_RECEIPTS_SQL, [started]);
        const away = (m: CalcModule) => Boolean(beside?.runs(m.name));
        const deferred = await dropPlainIndexes(
          tx,
          modules.filter((m) => !away(m)).flatMap((m) => m.tables),
        );
        const anyDeferred = deferred.length > 0;
        // What follows this connection's last module (its tables' indexes, the run's figures): done
        // as soon as that module ends, while the second connection may still run its last ones.
        const finishHere = async () => {
          // The newest sale in the data (for the freshness warnings): product_metrics has each
          // product's last sale up to asOf, which with either mode is the newest up to the run's start.
          const [newest] = await tx.query<{ day: string | null }>(
            "SELECT to_char(max(date_last_sold), 'YYYY-MM-DD') AS day FROM product_metrics",
          );
          newestDataDay = newest?.day ?? null;
          // Corrections of sales (completed lines with a negative quantity) the run counted.
          const [counted] = await tx.query<{ found: boolean }>(
            "SELECT to_regclass('pg_temp.calc_sales_corrections') IS NOT NULL AS found",
          );
          if (counted?.found) {
            const [c] = await tx.query<{ lines: number }>("SELECT lines FROM calc_sales_corrections");
            extraDetails.sales_corrections = { completed_lines_with_negative_quantity: c?.lines ?? 0 };
          }
          if (anyDeferred) {
            await steps.run(METRICS_INDEX_STEP, async () => {
              const n = deferred.length;
              for (const sql of deferred.splice(0)) await tx.exec(sql);
              return n;
            });
          }
        };
        // A table's plain indexes right after the last module that writes it (LAST_WRITER), while
        // the second connection may still be busy, rather than all at the end on this one alone.
        const indexWritten = async (moduleName: string) => {
          const tables = Object.entries(LAST_WRITER)
            .filter(([, writer]) => writer === moduleName)
            .map(([table]) => table);
          for (const table of tables) {
            const onTable = new RegExp(` ON (?:[\\w"]+\\.)?"?${table}"? USING `);
            const on = deferred.filter((sql) => onTable.test(sql));
            for (const sql of on) {
              await tx.exec(sql);
              deferred.splice(deferred.indexOf(sql), 1);
            }
          }
        };
        const lastHere = modules.reduce((last, m, i) => (away(m) ? last : i), -1);
        if (lastHere === -1) await finishHere();
        for (const [i, module] of modules.entries()) {
          await steps.run(`Calculate ${module.name}`, () => {
            check?.();
            return away(module)
              ? beside!.moduleDone(module.name, tx)
              : module
                  .run({ conn: tx, asOf, shared })
                  .then(async (rows) => {
                    await indexWritten(module.name);
                    return rows;
                  })
                  .finally(() => shared.moduleDone(module.name));
          });
          if (i === lastHere) await finishHere();
        }
        calcTo = steps.results.length;
      };
      // Full Reset builds complete new tables and swaps them in (reset-swap.ts); should the data
      // fail a check on the way, or the tables not allow a swap, it goes through staging instead.
      let swapped = false;
      if (run.type === "chat") {
        // The chat archive: its own tables, none of the imported ones, no calculations.
        if (!this.opts.chat) throw new Error("The chat import is not configured");
        const chat = await this.opts.chat.run({
          conn,
          signal: run.abort.signal,
          step: (name, fn) => steps.run(name, fn),
        });
        Object.assign(counts, chat.counts);
        Object.assign(extraDetails, chat.details);
        swapped = true;
      } else if (run.type === "reset") {
        const blocker = await swapBlocker(
          conn,
          source,
          this.opts.db.kind === "postgres" ? modules.filter((m) => m.beside).flatMap((m) => m.tables) : [],
        );
        if (blocker) this.opts.log?.info(`Full reset ${run.runId}: loading through staging (${blocker})`);
        else {
          try {
            await this.resetBySwap({
              run,
              conn,
              source,
              steps,
              counts,
              extraDetails,
              calculate,
              modules,
              asOf: runStart,
              findAsOf,
              shared,
              // With calculation_as_of = today the as-of moment is known before the order lines
              // are: their pass is built as they load (order-lines-load.ts).
              passAsOf: asOfMode === "latest_data" ? null : runStart,
            });
            swapped = true;
          } catch (err) {
            if (!(err instanceof RetryWithStaging)) throw err;
            this.opts.log?.info(`Full reset ${run.runId}: checking through staging (${err.reason})`);
            await dropSwapSchema(conn);
          }
        }
      }
      if (!swapped) {
        stepCount = baseStepCount;
        // Every problem of the data at once (findings.ts): each file is loaded and checked, and
        // the references between the rows that could be loaded; only then does the run fail.
        const findings = new Findings(IMPORTED_TABLES.map((d) => d.file));
        const staged = await stageAll(
          conn,
          source,
          (name, fn) => steps.run(name, fn),
          findings,
          this.opts.sourceTimeZone ?? "UTC",
        );
        await steps.run("Check references", () => checkReferences(conn, source, findings, staged));
        if (findings.any) throw findings.error();
        await conn.transaction(async (tx) => {
          for (const def of IMPORTED_TABLES) {
            const verb = run.type === "reset" ? "Replace" : "Update";
            await steps.run(`${verb} ${def.table}`, async () => {
              const c = run.type === "reset" ? await replaceTable(tx, def) : await mergeTable(tx, def);
              counts[def.table] = c;
              return c.added + c.updated + c.deleted;
            });
          }
          // Fresh statistics for the planner: after a bulk load its estimates would be far off.
          await tx.exec(IMPORTED_TABLES.map((d) => `ANALYZE "${d.table}";`).join("\n"));
          await recordSync(
            tx,
            IMPORTED_TABLES.map((d) => d.table),
            new Date(),
          );
          // Every module reads the settings as they are now, whatever staff save meanwhile.
          await snapshotSettings(tx);
          // The calculations fill new tables, swapped in just before the commit, so readers of the
          // live ones never wait for them (see createFreshModuleTables).
          const moduleTables = modules.flatMap((m) => m.tables);
          await createSwapSchema(tx);
          await createFreshModuleTables(tx, moduleTables);
          const [{ path }] = (await tx.query<{ path: string }>(
            "SELECT current_setting('search_path') AS path",
          )) as [{ path: string }];
          await tx.query("SELECT set_config('search_path', $1, true)", [`${SWAP_SCHEMA}, ${path}`]);
          await calculate(tx);
          await tx.query("SELECT set_config('search_path', $1, true)", [path]);
          await this.beforeSwap();
          await lockForSwap(tx, moduleTables);
          await swapModuleTables(tx, moduleTables);
          await dropSwapSchema(tx);
          await recordCalculation(
            tx,
            modules.map((m) => m.name),
            new Date(),
          );
        });
      }

      const ended = new Date();
      const totals = sumCounts(counts);
      await prisma.importHistory.update({
        where: { id: importRecord.id },
        data: {
          endTime: ended,
          durationMinutes: minutes(started, ended),
          status: "completed",
          recordsAdded: totals.added,
          recordsUpdated: totals.updated,
          recordsDeleted: totals.deleted,
          recordsSkipped: totals.skipped,
          totalProcessed: totals.total,
          additionalInfo: runDetail(run.type, importStepList(), {
            tables: countsDetail(counts),
            ...extraDetails,
          }),
        },
      });
      if (run.type !== "chat")
        await this.recordCalculationHistory(
          run,
          calcSteps(),
          new Date(calcStarted),
          ended,
          "completed",
          counts,
        );
      await prisma.dataRun.update({
        where: { id: run.runId },
        data: {
          status: "completed",
          endedAt: ended,
          ...(run.type === "chat"
            ? {}
            : {
                calculationAsOf: asOfMode,
                asOf,
                asOfDay: new Date(`${asOf.toISOString().slice(0, 10)}T00:00:00Z`),
                newestDataDay: newestDataDay ? new Date(`${newestDataDay}T00:00:00Z`) : null,
              }),
        },
      });
      currentStep = "";
      run.recorded = true;
      if (run.type !== "chat" && this.opts.afterImport)
        await this.opts
          .afterImport(run.runId)
          .catch((err) => this.opts.log?.error({ err }, "after-import step failed"));
      run.finished = true;
      emit("complete", `${label} complete`, { rows: totals.total });
      this.opts.log?.info(
        `${label} ${run.runId} completed in ${formatElapsed(ended.getTime() - started.getTime())}`,
      );
    } catch (err) {
      const cancelled = err instanceof CancelledError || run.abort.signal.aborted;
      const status = cancelled ? "cancelled" : "failed";
      const message = cancelled
        ? (run.cancelReason ?? "Cancelled by user")
        : isConnectionLoss(err)
          ? `The database connection was lost during the run (${errorText(err)}); nothing was changed. Start it again.`
          : errorText(err);
      const ended = new Date();
      if (!cancelled && !(err instanceof Error && err.name === "SourceError")) {
        this.opts.log?.error({ err }, `${label} ${run.runId} failed`);
      }
      const detail = runDetail(run.type, importStepList(), { tables: countsDetail(counts), ...extraDetails });
      // Every problem the run found in the source data (docs/data-format.md).
      if (err instanceof SourceFindingsError)
        (detail as Record<string, unknown>).findings = err.findings as unknown as Prisma.InputJsonValue;
      const record = {
        endTime: ended,
        durationMinutes: minutes(started, ended),
        status,
        errorMessage: message,
      };
      let calcRecorded = false;
      const recordFailure = async () => {
        if (importRecord) {
          await prisma.importHistory.update({
            where: { id: importRecord.id },
            data: { ...record, additionalInfo: detail },
          });
        } else {
          importRecord = await prisma.importHistory.create({
            data: { runId: run.runId, startTime: started, ...record, additionalInfo: detail },
            select: { id: true },
          });
        }
        if (calcFrom >= 0 && !calcRecorded) {
          await this.recordCalculationHistory(run, calcSteps(), ended, ended, status, {}, message);
          calcRecorded = true;
        }
        await prisma.dataRun.update({
          where: { id: run.runId },
          data: { status, endedAt: ended, error: message },
        });
      };
      // After a lost connection the pool's other connections may be gone too: once more, on new ones.
      await recordFailure().catch(async (e: unknown) => {
        if (!isConnectionLoss(e)) throw e;
        await new Promise((r) => setTimeout(r, 1000));
        await recordFailure();
      });
      run.finished = true;
      emit(cancelled ? "cancelled" : "error", cancelled ? `${label} cancelled` : `${label} failed`, {
        error: message,
      });
    } finally {
      clearInterval(poll);
      // Each tried twice: a cancel's interrupt (abortRun, sent from another connection) may reach
      // the run's connection late, in one of these statements.
      const twice = (fn: (c: SqlConnection) => Promise<void>) =>
        fn(conn).catch(() => fn(conn).catch(() => {}));
      await twice(dropStaging);
      if (run.type === "reset") await twice(dropSwapSchema);
      // (On PostgreSQL the run's connection does this once the run is over: start().)
      if (run.type !== "chat" && this.opts.db.kind !== "postgres") await twice(dropRetiredSchema);
      await publishChain;
      await this.persistChain.catch(() => {});
    }
  }

  /**
   * Full Reset by table swap (reset-swap.ts). The run's connection COPYs each file into its new
   * table; on PostgreSQL a second connection builds each new table's statistics and indexes as
   * soon as its COPY has committed, while this one goes on with the next files, the reference
   * checks and, in the run's transaction, the calculations, which read the new tables (they come
   * first in the search path). Only then are the new tables swapped in, in the same transaction:
   * readers see the old data and its old metrics until the commit, and wait only for the swap.
   * Throws RetryWithStaging when the data failed a check (the transaction is rolled back).
   */
  private async resetBySwap(ctx: {
    run: ActiveRun;
    conn: SqlConnection;
    source: DataSource;
    steps: StepRunner;
    counts: Record<string, TableCounts>;
    extraDetails: Record<string, Record<string, unknown>>;
    calculate: (tx: SqlConnection, check?: () => void, beside?: BesideLoader | null) => Promise<void>;
    modules: readonly CalcModule[];
    /** The run's start: the prepare steps' D0 (a module's run() redoes its preparation for another D0). */
    asOf: Date;
    /** The run's asOf, once the order lines are loaded (see execute). */
    findAsOf: (conn: SqlConnection) => Promise<Date>;
    /** The run's shared state (CalcContext.shared), for the modules run beside too. */
    shared: RunShared;
    /** The run's as-of moment when it is known before the order lines are loaded (else null). */
    passAsOf: Date | null;
  }): Promise<void> {
    const { run, conn, source, steps, counts, calculate } = ctx;
    const { db } = this.opts;
    let beside: BesideLoader | null = null;
    let besideConn: SqlConnection | null = null;
    const stopBeside = () => void beside?.cancel();
    try {
      await createSwapSchema(conn);
      // The settings as they are now, for every module of this run on either connection.
      await copySettingsFresh(conn);
      if (db.kind === "postgres") {
        await conn.exec(NO_PARALLEL_WORKERS);
        // The largest file (the order lines) loads and gets its indexes on a second connection.
        const big = await largestTable(source);
        besideConn = await db.connect();
        const [{ pid }] = (await besideConn.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")) as [
          { pid: number },
        ];
        // One process for its statements and index builds: the run's connection needs the other
        // core meanwhile.
        await besideConn.exec(`${RUN_SESSION_SETTINGS}; ${NO_PARALLEL_WORKERS}`);
        // It also runs the modules that read only imported tables (CalcModule.beside), once every
        // table is loaded, while this connection runs the others.
        beside = new BesideLoader(
          besideConn,
          source,
          big,
          async () => {
            await db.prisma.$executeRaw`SELECT pg_cancel_backend(${pid}::int)`;
          },
          { list: ctx.modules.filter((m) => m.beside), asOf: ctx.findAsOf, shared: ctx.shared },
          this.opts.sourceTimeZone ?? "UTC",
          {
            asOf: ctx.passAsOf,
            log: (message) => this.opts.log?.info(`Full reset ${run.runId}: ${message}`),
          },
        );
        run.abort.signal.addEventListener("abort", stopBeside);
      }
      const b = beside;
      const loaded: Record<string, number> = {};
      for (const def of IMPORTED_TABLES) {
        if (def === b?.def) continue;
        loaded[def.table] = await steps.run(`Load ${def.file}`, async (stepCtx) => {
          b?.throwIfFailed();
          const rows = await loadFresh(conn, source, def, stepCtx, this.opts.sourceTimeZone ?? "UTC");
          await settleFresh(conn, def);
          // Statistics at once: the reference checks and the calculations plan on them.
          await analyzeFresh(conn, def);
          // Its plain indexes are built on the second connection, after the largest table's.
          await indexFresh(conn, def, b ? (build) => b.buildLater(build) : undefined);
          return rows;
        });
      }
      b?.othersLoaded();
      await this.orBesideFailure(b, run, () =>
        conn.transaction(async (tx) => {
          const [{ path }] = (await tx.query<{ path: string }>(
            "SELECT current_setting('search_path') AS path",
          )) as [{ path: string }];
          // The calculation tables this connection fills are new ones too, so readers of the live
          // ones never wait for the calculations.
          const moduleTables = ctx.modules.filter((m) => !b?.runs(m.name)).flatMap((m) => m.tables);
          // The second connection's modules' new tables (already in SWAP_SCHEMA): swapped in with the rest.
          const besideTables = ctx.modules.filter((m) => b?.runs(m.name)).flatMap((m) => m.tables);
          await createFreshModuleTables(tx, moduleTables);
          await tx.query("SELECT set_config('search_path', $1, true)", [`${SWAP_SCHEMA}, ${path}`]);
          // What the modules can do with the tables loaded so far, while the largest still loads.
          for (const module of ctx.modules) {
            const prepare = module.prepare;
            // (Not for a module run beside: its run() is on the other connection, where it prepares itself.)
            if (!prepare || b?.runs(module.name) || (b && prepare.reads.includes(b.def.table))) continue;
            await steps.run(`Prepare ${module.name}`, async () => {
              await prepare.run({ conn: tx, asOf: ctx.asOf });
              return 0;
            });
          }
          // The references among those tables (the ones to and from the table loaded beside are
          // checked there).
          await steps.run("Check references", () =>
            checkFreshReferences(tx, (from, to) => from !== b?.def && to !== b?.def),
          );
          if (b) loaded[b.def.table] = await steps.run(`Load ${b.def.file}`, (stepCtx) => b.loaded(stepCtx));
          await calculate(tx, () => b?.throwIfFailed(), b);
          await tx.query("SELECT set_config('search_path', $1, true)", [path]);
          if (b) {
            // Rather than wait for it, this connection builds the plain indexes it was handed and
            // has not started yet.
            await steps.run(`Check and index ${b.def.table}`, () => b.indexed(tx));
            ctx.extraDetails.beside = {
              table: b.def.table,
              read_by: b.readBy,
              load_s: b.timings.load,
              references_s: b.timings.references,
              index_s: b.timings.indexes,
              modules_s: b.moduleSeconds,
            };
          }
          await this.beforeSwap();
          await lockForSwap(tx, [...IMPORTED_TABLES.map((d) => d.table), ...moduleTables, ...besideTables]);
          for (const def of IMPORTED_TABLES) {
            await steps.run(`Replace ${def.table}`, async () => {
              const c = await swapTable(
                tx,
                def,
                loaded[def.table] ?? 0,
                def === b?.def ? b.attachments() : [],
              );
              counts[def.table] = c;
              return c.added;
            });
          }
          await swapModuleTables(tx, [...moduleTables, ...besideTables]);
          await recordSync(
            tx,
            IMPORTED_TABLES.map((d) => d.table),
            new Date(),
          );
          await recordCalculation(
            tx,
            ctx.modules.map((m) => m.name),
            new Date(),
          );
        }),
      );
    } finally {
      run.abort.signal.removeEventListener("abort", stopBeside);
      if (beside) await beside.cancel();
      // Its session settings go with it.
      await besideConn?.release(true);
    }
  }

  /**
   * Runs fn; should it fail while the beside connection is still checking its table (a calculation
   * can trip over a duplicate key before the unique index build finds it), the data error found
   * there is the one to report: RetryWithStaging, so staging names file, line and column.
   */
  private async orBesideFailure(b: BesideLoader | null, run: ActiveRun, fn: () => Promise<void>) {
    try {
      await fn();
    } catch (err) {
      if (b && !(err instanceof RetryWithStaging) && !run.abort.signal.aborted) {
        const found = await b.indexed().then(
          () => null,
          (e: unknown) => e,
        );
        if (found instanceof RetryWithStaging) throw found;
      }
      throw err;
    }
  }

  private async recordCalculationHistory(
    run: ActiveRun,
    calcSteps: StepResult[],
    start: Date,
    end: Date,
    status: string,
    /** After a completed run: its tables' row counts (each table's total is what it now holds). */
    known: Record<string, TableCounts> = {},
    error?: string,
  ) {
    const { prisma } = this.opts.db;
    const [products, metrics, orders, pos] = await Promise.all([
      known.products?.total ?? prisma.product.count(),
      prisma.productMetrics.count(),
      // (Counting 3M order lines again would take a quarter of a second.)
      known.order_lines?.total ?? prisma.orderLine.count(),
      known.purchase_orders?.total ?? prisma.purchaseOrder.count(),
    ]);
    const done = status === "completed";
    return prisma.calculateHistory.create({
      data: {
        runId: run.runId,
        startTime: start,
        endTime: end,
        durationMinutes: minutes(start, end),
        status,
        processedProducts: done ? metrics : 0,
        totalProducts: products,
        processedOrders: done ? orders : 0,
        totalOrders: orders,
        processedPurchaseOrders: done ? pos : 0,
        totalPurchaseOrders: pos,
        errorMessage: error ?? null,
        additionalInfo: runDetail(run.type, calcSteps, {}),
      },
      select: { id: true },
    });
  }

  private persist(write: () => Promise<unknown>) {
    this.persistChain = this.persistChain
      .then(write)
      .catch((err) => this.opts.log?.error({ err }, "progress store failed"));
  }
}

/**
 * The calculation phase refills its tables and updates product_metrics several times over: their
 * plain indexes (not unique, no constraint: nothing a module's statements can depend on) are
 * dropped at its start and built once at its end (METRICS_INDEX_STEP), in the run's transaction,
 * rather than maintained row by row through every INSERT and UPDATE. Answers the statements that
 * build them again, exactly as they were.
 */
export async function dropPlainIndexes(tx: SqlConnection, tables: readonly string[]): Promise<string[]> {
  const rows = await tx.query<{ name: string; definition: string }>(
    `SELECT format('%I.%I', n.nspname, i.relname) AS name, pg_get_indexdef(x.indexrelid) AS definition
     FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_namespace n ON n.oid = i.relnamespace
     WHERE x.indrelid IN (SELECT to_regclass(quote_ident(t)) FROM unnest($1::text[]) t)
       AND NOT x.indisunique AND NOT x.indisexclusion
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)
     ORDER BY 1`,
    [[...new Set(tables)]],
  );
  if (rows.length) await tx.exec(rows.map((r) => `DROP INDEX ${r.name};`).join("\n"));
  return rows.map((r) => r.definition);
}

function minutes(a: Date, b: Date): number {
  return (b.getTime() - a.getTime()) / 60000;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function sumCounts(counts: Record<string, TableCounts>): TableCounts {
  const t = { added: 0, updated: 0, deleted: 0, skipped: 0, total: 0 };
  for (const c of Object.values(counts)) {
    t.added += c.added;
    t.updated += c.updated;
    t.deleted += c.deleted;
    t.skipped += c.skipped;
    t.total += c.total;
  }
  return t;
}

function countsDetail(counts: Record<string, TableCounts>) {
  return Object.fromEntries(Object.entries(counts).map(([table, c]) => [table, { ...c }]));
}

/** The run history detail of spec section 3: completed_steps, details, step_timings. */
function runDetail(
  type: RunType,
  slice: StepResult[],
  details: Record<string, Record<string, unknown>>,
): Prisma.InputJsonValue {
  return {
    type,
    completed_steps: slice.map((s) => ({
      name: s.name,
      duration: s.duration,
      rowsAffected: s.rowsAffected,
      status: s.status,
    })),
    details,
    step_timings: Object.fromEntries(slice.map((s) => [s.name, s.duration])),
  } as Prisma.InputJsonValue;
}
