// AI validation: asks the configured language model for per-field verdicts on rows of new
// products, with the stored prompts, at most AI_CONCURRENCY calls at once, caching each row's
// answer by a hash of what was asked. Every call is stored (never the key) so the AI Validation
// Debug page can show and replay it; calls older than AI_LOG_RETENTION_DAYS are deleted.
import { createHash } from "node:crypto";
import { EventEmitter, setMaxListeners } from "node:events";
import {
  AI_NOT_CONFIGURED,
  type AiCallDetail,
  type AiCallKind,
  type AiCallPage,
  type AiCallStatus,
  type AiCallSummary,
  type AiMode,
  type AiStatus,
  type CallAttempt,
  type CallTimings,
  callCost,
  type FieldVerdict,
  type ListCallsInput,
  ListCallsInputSchema,
  type PromptLayer,
  type PromptVersions,
  type ReplayInput,
  ReplayInputSchema,
  type RowVerdict,
  type TestConnectionResult,
  type TestConnectionStep,
} from "../../../shared/ai-validation.ts";
import type { AiConfig, AppConfig } from "../../config.ts";
import type { Database } from "../../db/database.ts";
import type { Prisma } from "../../db/generated/client.ts";
import { badRequest, notFound } from "../../errors.ts";
import type { ProgressBus } from "../../jobs/progress-bus.ts";
import { getFieldOptions } from "../templates/templates.service.ts";
import { type CallRecord, CallWriter } from "./call-writer.ts";
import { type ChatMessage, type ModelCallResult, ModelClient } from "./model-client.ts";
import {
  buildLayers,
  LayerBuilder,
  layersToMessages,
  loadPromptSet,
  type PromptSet,
  type RowInput,
  type TemplateContext,
} from "./prompt.ts";

export type { RowInput } from "./prompt.ts";

/** Where rows come from and who asked: stored with each call. */
export interface ValidationContext {
  importId?: number | null;
  /** The import's company (brand id as text); a row's own `company` value wins. */
  company?: string | null;
  productType?: string | null;
  templateId?: number | null;
  userId?: number | null;
}

export interface RowResult {
  row_id: number;
  /** ok: verdicts from the model; cached: the same question answered before; failed: see error. */
  status: "ok" | "cached" | "failed";
  fields: FieldVerdict[];
  /** "AI check failed: …" when status is failed. */
  error: string | null;
  call_id: number | null;
}

export interface BatchProgress {
  batch_id: number;
  status: "running" | "done" | "cancelled" | "failed";
  total: number;
  done: number;
  failed: number;
  cached: number;
  tokens_in: number;
  tokens_out: number;
  cost: number;
  /** Set on the last event of an import's run: the verdicts are in the import's rows. */
  saved?: boolean;
  /** An import's run: rows whose verdicts are written into the import's rows so far. */
  written?: number;
}

export interface Estimate {
  configured: boolean;
  rows: number;
  cached_rows: number;
  calls: number;
  tokens_in: number;
  tokens_out: number;
  cost: number;
  model: string | null;
}

export interface Batch {
  id: number;
  importId: number | null;
  /** When an import's run has written its verdicts into the rows. */
  savedAt?: Date;
  progress: BatchProgress;
  events: EventEmitter<{ progress: [BatchProgress] }>;
  results: Promise<RowResult[]>;
  cancel(): void;
  /** Tells the listeners of a change to `progress` (at most every PROGRESS_MS while running). */
  changed(): void;
}

/** The least time between two progress events of a run (the last change is always told). */
const PROGRESS_MS = 100;

/**
 * The least time between two calls' starts (ms). Calls started together answer together when the
 * model's latency is steady: their answers then queue behind each other on the event loop, and the
 * last of a burst of eight waits for the other seven to be parsed and delivered (and the server's
 * other requests wait for all eight). Slots handed out at least this far apart keep the calls spread
 * from the first burst on; a run's throughput is unchanged while the model takes longer than
 * AI_CONCURRENCY × this gap (8 × 6 ms = 48 ms) to answer.
 */
export const CALL_START_GAP_MS = 6;

/**
 * Counts a slot for each call in flight; callers beyond the limit wait in order. A freed slot goes
 * to the next caller on `setImmediate`, after the I/O already waiting: answers that arrived
 * together are each finished (parsed, delivered) before new requests are built and sent, instead
 * of the last of them waiting behind the others' next requests. Slots are handed out at least
 * `gapMs` apart (CALL_START_GAP_MS).
 */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  /** When the last slot was handed out (performance.now()). */
  private lastGrant = -Infinity;
  /** Whether the next slot's hand-out is scheduled (a timer or an immediate). */
  private scheduled = false;
  constructor(
    private readonly limit: number,
    private readonly gapMs = CALL_START_GAP_MS,
  ) {}
  async acquire(): Promise<() => void> {
    if (this.active < this.limit && this.waiting.length === 0 && this.gapPassed()) {
      this.active++;
      this.lastGrant = performance.now();
    } else {
      await new Promise<void>((resolve) => {
        this.waiting.push(resolve);
        this.schedule();
      });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      this.schedule();
    };
  }
  private gapPassed(): boolean {
    return performance.now() - this.lastGrant >= this.gapMs;
  }
  /** Hands the next slot to the first waiter: after the I/O already waiting, once the gap has passed. */
  private schedule(): void {
    if (this.scheduled || this.waiting.length === 0 || this.active >= this.limit) return;
    const wait = Math.max(0, this.gapMs - (performance.now() - this.lastGrant));
    const grant = () => {
      this.scheduled = false;
      if (this.waiting.length === 0 || this.active >= this.limit) return;
      if (!this.gapPassed()) return this.schedule();
      this.active++;
      this.lastGrant = performance.now();
      this.waiting.shift()!();
      this.schedule();
    };
    // One pending hand-out at a time: a second release does not schedule another.
    this.scheduled = true;
    if (wait > 0) setTimeout(grant, wait);
    else setImmediate(grant);
  }
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** The base URL as shown and stored: no credentials, query or fragment. */
function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    u.search = "";
    u.hash = "";
    return u.toString().replace(/\/$/, "");
  } catch {
    return url;
  }
}

const EXPECTED_OUTPUT_TOKENS_PER_FIELD = 30;

export interface AiValidationOptions {
  maxAttempts?: number;
  retryBaseMs?: number;
  /**
   * Fans each run's progress out to the other app instances on the database (PostgreSQL
   * LISTEN/NOTIFY, as the data operations' progress) and takes their cancel requests.
   */
  bus?: ProgressBus;
  /** Where a call record the database refused is reported. */
  log?: (err: unknown) => void;
}

/** A run's progress as the database holds it: what another instance than the one running it sees. */
export interface StoredBatch {
  progress: BatchProgress;
  import_id: number | null;
  startedAt: Date;
}

export class AiValidation {
  readonly client: ModelClient | null;
  private readonly slots: Semaphore;
  readonly writer: CallWriter;
  private readonly batches = new Map<number, Batch>();
  private readonly retention: NodeJS.Timeout;
  private readonly firstSweep: NodeJS.Timeout;
  private readonly bus: ProgressBus | null;
  private readonly offCancel: () => void;
  /**
   * Told of each validation call's timings once its verdicts are delivered (the bench reads the
   * app's own share from it): `total_ms` from the call's slot to its rows' results handed on
   * (prompt assembly, the client, HTTP, parsing, results, the queued call record), `model_ms` the
   * HTTP exchange as the client saw it, `server_ms` the endpoint's own time as it reported it,
   * `request_ids` the endpoint's ids of the call's attempts.
   */
  observe:
    | ((t: {
        total_ms: number;
        model_ms: number;
        server_ms: number | null;
        wait_ms: number;
        slot_ms: number;
        request_ids: string[];
      }) => void)
    | null = null;

  constructor(
    private readonly db: Database,
    private readonly config: AppConfig,
    opts: AiValidationOptions = {},
  ) {
    this.client = config.ai
      ? new ModelClient(config.ai, {
          maxAttempts: opts.maxAttempts ?? config.aiMaxAttempts,
          retryBaseMs: opts.retryBaseMs ?? config.aiRetryBaseMs,
        })
      : null;
    this.slots = new Semaphore(config.ai?.concurrency ?? 1);
    this.writer = new CallWriter(db, { log: opts.log });
    this.retention = setInterval(() => void this.purgeOld().catch(() => {}), 3_600_000);
    this.retention.unref();
    this.firstSweep = setTimeout(() => void this.purgeOld().catch(() => {}), 10_000);
    this.firstSweep.unref();
    this.bus = opts.bus ?? null;
    // A cancel asked on another instance reaches the one running the batch.
    this.offCancel = this.bus?.onAiCancel((id) => this.batches.get(id)?.cancel()) ?? (() => {});
  }

  /** Subscribes to the progress of runs on every instance (this one included). */
  onRemoteProgress(fn: (p: BatchProgress & { import_id: number | null }) => void): () => void {
    if (!this.bus) return () => {};
    return this.bus.onAi((e) => fn(e as unknown as BatchProgress & { import_id: number | null }));
  }

  /** Asks the instance running batch `id` to cancel it. */
  async requestCancel(id: number): Promise<void> {
    const local = this.batches.get(id);
    if (local) local.cancel();
    else await this.bus?.requestAiCancel(id);
  }

  /** An import's latest run as stored (by whichever instance runs or ran it), or null. */
  async storedBatchFor(importId: number): Promise<StoredBatch | null> {
    const b = await this.db.prisma.aiValidationBatch.findFirst({
      where: { importId },
      orderBy: { id: "desc" },
    });
    if (!b) return null;
    return {
      import_id: b.importId,
      startedAt: b.startedAt,
      progress: {
        batch_id: b.id,
        status: b.status as BatchProgress["status"],
        total: b.totalRows,
        done: b.doneRows,
        failed: b.failedRows,
        cached: b.cachedRows,
        tokens_in: b.tokensIn,
        tokens_out: b.tokensOut,
        cost: Number(b.cost),
      },
    };
  }

  get ai(): AiConfig | null {
    return this.config.ai;
  }

  status(): AiStatus {
    const ai = this.config.ai;
    return {
      configured: ai !== null,
      message: ai ? null : AI_NOT_CONFIGURED,
      base_url: ai ? safeUrl(ai.baseUrl) : null,
      model: ai?.model ?? null,
      concurrency: ai?.concurrency ?? 0,
      rows_per_call: ai?.rowsPerCall ?? 0,
      price_input_per_mtok: ai?.priceInputPerMTok ?? 0,
      price_output_per_mtok: ai?.priceOutputPerMTok ?? 0,
      retention_days: this.config.aiLogRetentionDays,
    };
  }

  /** Cancels the runs in progress and stores what their calls queued (waits at most `maxMs`). */
  async close(maxMs = 10_000): Promise<void> {
    clearInterval(this.retention);
    clearTimeout(this.firstSweep);
    this.offCancel();
    for (const b of this.batches.values()) b.cancel();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.batches.values()].map((b) => b.results)).then(() => this.writer.drain()),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, maxMs);
      }),
    ]).catch(() => {});
    clearTimeout(timer);
  }

  getBatch(id: number): Batch | undefined {
    return this.batches.get(id);
  }

  /** The run in progress on this instance for an import, if any. */
  runningBatchFor(importId: number): Batch | undefined {
    for (const b of this.batches.values())
      if (b.importId === importId && b.progress.status === "running") return b;
    return undefined;
  }

  /** The latest run of an import on this instance (running or finished in the last minute). */
  latestBatchFor(importId: number): Batch | undefined {
    let latest: Batch | undefined;
    for (const b of this.batches.values())
      if (b.importId === importId && (!latest || b.id > latest.id)) latest = b;
    return latest;
  }

  /** Calls and cache entries older than AI_LOG_RETENTION_DAYS go. Returns the calls deleted. */
  async purgeOld(now = new Date()): Promise<number> {
    const before = new Date(now.getTime() - this.config.aiLogRetentionDays * 86_400_000);
    const calls = await this.db.prisma.aiValidationCall.deleteMany({ where: { createdAt: { lt: before } } });
    await this.db.prisma.aiValidationCache.deleteMany({ where: { createdAt: { lt: before } } });
    await this.db.prisma.aiValidationBatch.deleteMany({
      where: { startedAt: { lt: before }, status: { not: "running" } },
    });
    return calls.count;
  }

  // ---- planning a run --------------------------------------------------------------------

  private async templateContexts(ctx: ValidationContext, companies: Set<string | null>) {
    const fieldOptions = await getFieldOptions(this.db);
    const names = new Map(fieldOptions.companies.map((c) => [c.value, c.label]));
    const contexts = new Map<string | null, TemplateContext>();
    for (const company of companies) {
      const template =
        company && ctx.productType
          ? await this.db.prisma.importTemplate.findUnique({
              where: { company_productType: { company, productType: ctx.productType } },
            })
          : null;
      let defaults: Record<string, unknown> | null = null;
      if (template) {
        const { id: _id, createdAt: _c, updatedAt: _u, ...values } = template;
        defaults = Object.fromEntries(
          Object.entries(values)
            .filter(([, v]) => v !== null && !(Array.isArray(v) && v.length === 0))
            .map(([k, v]) => [k, typeof v === "object" && v !== null && !Array.isArray(v) ? String(v) : v]),
        );
      }
      contexts.set(company, {
        company,
        companyName: company ? (names.get(company) ?? null) : null,
        productType: ctx.productType ?? null,
        templateDefaults: defaults,
        fieldOptions,
      });
    }
    return contexts;
  }

  /** Each row with its layers, cache key and call group, in the order given. */
  private async plan(rows: readonly RowInput[], ctx: ValidationContext, model: string) {
    const companyOf = (r: RowInput) => {
      const own = r.values.company;
      return own !== undefined && own !== null && String(own).trim() !== ""
        ? String(own)
        : (ctx.company ?? null);
    };
    const prompts = await loadPromptSet(this.db);
    const contexts = await this.templateContexts(ctx, new Set(rows.map(companyOf)));
    // The layers every row of a company shares are assembled once, not once per row or call.
    const builders = new Map<string | null, LayerBuilder>();
    for (const [company, context] of contexts)
      builders.set(company, new LayerBuilder(prompts, context, model));
    const planned = rows.map((row) => {
      const company = companyOf(row);
      return { row, company, key: sha256(builders.get(company)!.keyText(row)) };
    });
    return { planned, builders };
  }

  async estimate(rows: readonly RowInput[], ctx: ValidationContext = {}): Promise<Estimate> {
    const ai = this.config.ai;
    if (!ai)
      return {
        configured: false,
        rows: rows.length,
        cached_rows: 0,
        calls: 0,
        tokens_in: 0,
        tokens_out: 0,
        cost: 0,
        model: null,
      };
    const { planned, builders } = await this.plan(rows, ctx, ai.model);
    const hits = await this.cachedKeys(planned.map((p) => p.key));
    const todo = planned.filter((p) => !hits.has(p.key));
    const groups = this.group(todo, ai.rowsPerCall);
    let tokensIn = 0;
    let tokensOut = 0;
    for (const g of groups) {
      const { messages } = builders.get(g[0]!.company)!.build(g.map((p) => p.row));
      const chars = messages.reduce((n, m) => n + m.content.length, 0);
      tokensIn += Math.ceil(chars / 4);
      tokensOut +=
        g.reduce((n, p) => n + Object.keys(p.row.values).length, 0) * EXPECTED_OUTPUT_TOKENS_PER_FIELD;
    }
    return {
      configured: true,
      rows: rows.length,
      cached_rows: planned.length - todo.length,
      calls: groups.length,
      tokens_in: tokensIn,
      tokens_out: tokensOut,
      cost: callCost(tokensIn, tokensOut, ai.priceInputPerMTok, ai.priceOutputPerMTok),
      model: ai.model,
    };
  }

  private async cachedKeys(keys: string[]): Promise<Map<string, { verdict: RowVerdict; callId: number }>> {
    const found = new Map<string, { verdict: RowVerdict; callId: number }>();
    for (let i = 0; i < keys.length; i += 1000) {
      const rows = await this.db.prisma.aiValidationCache.findMany({
        where: { key: { in: keys.slice(i, i + 1000) } },
        select: { key: true, verdict: true, callId: true },
      });
      for (const r of rows)
        found.set(r.key, { verdict: r.verdict as unknown as RowVerdict, callId: r.callId });
    }
    return found;
  }

  /** Rows of one company together, at most `size` per call. */
  private group<T extends { company: string | null }>(items: T[], size: number): T[][] {
    const byCompany = new Map<string | null, T[]>();
    for (const p of items) {
      const list = byCompany.get(p.company) ?? [];
      list.push(p);
      byCompany.set(p.company, list);
    }
    const groups: T[][] = [];
    for (const list of byCompany.values())
      for (let i = 0; i < list.length; i += size) groups.push(list.slice(i, i + size));
    return groups;
  }

  // ---- running -----------------------------------------------------------------------------

  /**
   * Starts validating rows: answers already cached cost nothing, the rest go to the model in
   * calls of AI_ROWS_PER_CALL rows, at most AI_CONCURRENCY at once across the server. Never
   * rejects: a row whose call failed ends as `failed` with "AI check failed: …".
   */
  async startBatch(
    rows: readonly RowInput[],
    ctx: ValidationContext = {},
    /** Told of the rows each call (or the cache) answered, as they arrive. */
    onResults?: (results: RowResult[]) => void,
  ): Promise<Batch> {
    const ai = this.config.ai;
    const client = this.client;
    if (!ai || !client) throw badRequest(AI_NOT_CONFIGURED);
    const { planned, builders } = await this.plan(rows, ctx, ai.model);
    const stored = await this.db.prisma.aiValidationBatch.create({
      data: {
        importId: ctx.importId ?? null,
        status: "running",
        totalRows: rows.length,
        model: ai.model,
        startedBy: ctx.userId ?? null,
      },
    });
    const abort = new AbortController();
    // Every call of the batch listens to the one signal.
    setMaxListeners(0, abort.signal);
    const events = new EventEmitter<{ progress: [BatchProgress] }>();
    const progress: BatchProgress = {
      batch_id: stored.id,
      status: "running",
      total: rows.length,
      done: 0,
      failed: 0,
      cached: 0,
      tokens_in: 0,
      tokens_out: 0,
      cost: 0,
    };
    const results = new Map<number, RowResult>();
    const hits = await this.cachedKeys(planned.map((p) => p.key));
    for (const p of planned) {
      const hit = hits.get(p.key);
      if (!hit) continue;
      results.set(p.row.row_id, {
        row_id: p.row.row_id,
        status: "cached",
        fields: hit.verdict.fields,
        error: null,
        call_id: hit.callId,
      });
      progress.done++;
      progress.cached++;
    }
    if (onResults && results.size) onResults([...results.values()]);
    const groups = this.group(
      planned.filter((p) => !results.has(p.row.row_id)),
      ai.rowsPerCall,
    );
    // Progress is told at most every PROGRESS_MS (the last change always), not once per call: each
    // event goes to the SSE streams and, with several instances, out as a NOTIFY. The batch's row
    // (what other instances read) is written at most every half second and at the end.
    let lastWrite = 0;
    let progressTimer: NodeJS.Timeout | null = null;
    const storeProgress = async (final: boolean) => {
      const now = Date.now();
      if (!final && now - lastWrite < 500) return;
      lastWrite = now;
      await this.db.prisma.aiValidationBatch
        .update({
          where: { id: stored.id },
          data: {
            status: progress.status,
            doneRows: progress.done,
            failedRows: progress.failed,
            cachedRows: progress.cached,
            tokensIn: progress.tokens_in,
            tokensOut: progress.tokens_out,
            cost: progress.cost,
            ...(final ? { finishedAt: new Date() } : {}),
          },
        })
        .catch(() => {});
    };
    const emitNow = () => {
      if (progressTimer) clearTimeout(progressTimer);
      progressTimer = null;
      events.emit("progress", { ...progress });
    };
    const changed = () => {
      progressTimer ??= setTimeout(() => {
        emitNow();
        void storeProgress(false);
      }, PROGRESS_MS);
    };

    const runGroup = async (group: (typeof groups)[number]) => {
      const company = group[0]!.company;
      const builder = builders.get(company)!;
      const call = await this.call({
        kind: "validation",
        build: () => builder.build(group.map((p) => p.row)),
        rowIds: group.map((p) => p.row.row_id),
        ctx: { ...ctx, company },
        batchId: stored.id,
        signal: abort.signal,
      });
      if (abort.signal.aborted && !call.result.ok) return;
      progress.tokens_in += call.result.tokensIn;
      progress.tokens_out += call.result.tokensOut;
      progress.cost = Math.round((progress.cost + call.cost) * 1e6) / 1e6;
      const byRow = new Map((call.result.verdicts ?? []).map((v) => [v.row_id, v]));
      const cacheRows: { key: string; verdict: RowVerdict; call_id: number }[] = [];
      for (const p of group) {
        const verdict = byRow.get(p.row.row_id);
        if (verdict) {
          results.set(p.row.row_id, {
            row_id: p.row.row_id,
            status: "ok",
            fields: verdict.fields,
            error: null,
            call_id: call.id,
          });
          cacheRows.push({ key: p.key, verdict, call_id: call.id });
        } else {
          progress.failed++;
          results.set(p.row.row_id, {
            row_id: p.row.row_id,
            status: "failed",
            fields: [],
            error: `AI check failed: ${call.result.ok ? "the model gave no verdict for this row" : call.result.error}`,
            call_id: call.id,
          });
        }
        progress.done++;
      }
      // The cache entries go with the call's record, in the writer's next statement.
      this.writer.add(null, cacheRows);
      onResults?.(group.map((p) => results.get(p.row.row_id)!));
      changed();
      if (this.observe) {
        const t = call.timings;
        this.observe({
          total_ms: performance.now() - call.started,
          model_ms: t.model_ms,
          server_ms: call.result.serverMs,
          wait_ms: call.result.waitMs,
          slot_ms: call.slotMs,
          request_ids: call.result.attempts.flatMap((a) => (a.request_id ? [a.request_id] : [])),
        });
      }
    };

    const finished = (async () => {
      try {
        // As many workers as calls may run at once, each taking the next group when it is done
        // (not a promise per group waiting for a slot from the start).
        let next = 0;
        const worker = async () => {
          while (next < groups.length && !abort.signal.aborted) await runGroup(groups[next++]!);
        };
        await Promise.all(Array.from({ length: Math.min(groups.length, ai.concurrency) }, worker));
        progress.status = abort.signal.aborted ? "cancelled" : "done";
      } catch (err) {
        progress.status = "failed";
        await this.db.prisma.aiValidationBatch
          .update({
            where: { id: stored.id },
            data: { error: err instanceof Error ? err.message : String(err) },
          })
          .catch(() => {});
      }
      // Every call and cache entry of the run is stored before the run counts as ended.
      await this.writer.drain().catch(async (err) => {
        await this.db.prisma.aiValidationBatch
          .update({
            where: { id: stored.id },
            data: {
              error: `Some calls are not stored yet: ${err instanceof Error ? err.message : String(err)}`,
            },
          })
          .catch(() => {});
      });
      emitNow();
      await storeProgress(true);
      setTimeout(() => this.batches.delete(stored.id), 60_000).unref();
      return rows.map(
        (r) =>
          results.get(r.row_id) ?? {
            row_id: r.row_id,
            status: "failed" as const,
            fields: [],
            error: "AI check failed: cancelled before this row was checked",
            call_id: null,
          },
      );
    })();

    const batch: Batch = {
      id: stored.id,
      importId: ctx.importId ?? null,
      progress,
      events,
      results: finished,
      cancel: () => abort.abort(),
      changed: () => {
        if (progress.status === "running") changed();
        else emitNow();
      },
    };
    this.batches.set(stored.id, batch);
    if (this.bus) {
      const bus = this.bus;
      const importId = ctx.importId ?? null;
      events.on("progress", (p) => void bus.publishAi({ ...p, import_id: importId }).catch(() => {}));
    }
    queueMicrotask(() => events.emit("progress", { ...progress }));
    return batch;
  }

  /** Validates rows and waits for the answers. */
  async validateRows(rows: readonly RowInput[], ctx: ValidationContext = {}): Promise<RowResult[]> {
    return (await this.startBatch(rows, ctx)).results;
  }

  /**
   * One model call, waiting for a slot (the prompt is assembled once it has one), recorded whatever
   * happened. A run's calls queue their records for the writer's next statement and go on (the run
   * waits for them at its end); `wait` stores it before answering (a replay, a connection test).
   */
  private async call(args: {
    kind: AiCallKind;
    build: () => { layers: PromptLayer[]; versions: PromptVersions; messages?: ChatMessage[] };
    rowIds: number[];
    ctx: ValidationContext;
    batchId?: number | null;
    replayOf?: number | null;
    model?: string;
    signal?: AbortSignal;
    wait?: boolean;
  }): Promise<{
    id: number;
    result: ModelCallResult;
    cost: number;
    timings: CallTimings;
    started: number;
    slotMs: number;
  }> {
    const client = this.client!;
    const ai = this.config.ai!;
    const asked = performance.now();
    const release = await this.slots.acquire();
    let result: ModelCallResult;
    let layers: PromptLayer[];
    let versions: PromptVersions;
    const t0 = performance.now();
    try {
      const built = args.build();
      layers = built.layers;
      versions = built.versions;
      result = await client.validate(built.messages ?? layersToMessages(layers), args.rowIds, {
        model: args.model,
        signal: args.signal,
      });
    } finally {
      release();
    }
    const total = performance.now() - t0;
    const cost = callCost(result.tokensIn, result.tokensOut, ai.priceInputPerMTok, ai.priceOutputPerMTok);
    const verdicts = result.verdicts ?? [];
    const fields = verdicts.reduce((n, v) => n + v.fields.length, 0);
    const issues = verdicts.reduce((n, v) => n + v.fields.filter((f) => !f.ok).length, 0);
    const timings: CallTimings = {
      total_ms: Math.round(total * 10) / 10,
      model_ms: Math.round(result.modelMs * 10) / 10,
      overhead_ms: Math.max(0, Math.round((total - result.modelMs - result.waitMs) * 100) / 100),
    };
    const record: CallRecord = {
      kind: args.kind,
      batch_id: args.batchId ?? null,
      import_id: args.ctx.importId ?? null,
      row_ids: args.rowIds,
      replay_of: args.replayOf ?? null,
      company: args.ctx.company ?? null,
      product_type: args.ctx.productType ?? null,
      template_id: args.ctx.templateId ?? null,
      prompt_versions: versions,
      base_url: safeUrl(ai.baseUrl),
      model: args.model ?? ai.model,
      mode: result.ok ? result.mode : null,
      status: result.ok ? "ok" : "failed",
      latency_ms: Math.round(total),
      tokens_in: result.tokensIn,
      tokens_out: result.tokensOut,
      cost,
      fields_checked: fields,
      issues_found: issues,
      layers,
      request: result.request,
      response_raw: result.responseRaw,
      verdicts: result.verdicts,
      error: result.error,
      attempts: result.attempts,
      timings,
      created_by: args.ctx.userId ?? null,
    };
    let id: number;
    if (args.wait) id = await this.writer.write(record);
    else {
      id = await this.writer.nextId();
      this.writer.add({ ...record, id });
    }
    return { id, result, cost, timings, started: t0, slotMs: t0 - asked };
  }

  // ---- replay and connection test ----------------------------------------------------------

  /** Runs a stored call again with edited layers or another model; changes nothing else. */
  async replay(input: ReplayInput, userId: number | null): Promise<AiCallDetail> {
    if (!this.client) throw badRequest(AI_NOT_CONFIGURED);
    const { id, layers: edits, model } = ReplayInputSchema.parse(input);
    const original = await this.db.prisma.aiValidationCall.findUnique({ where: { id } });
    if (!original) throw notFound(`AI validation run ${id} not found`);
    if (original.kind === "test" && Object.keys(edits).length === 0 && !model) {
      // allowed: a test call replays like any other
    }
    const layers = (original.layers as unknown as PromptLayer[]).map((l) =>
      edits[l.key] !== undefined ? { ...l, content: edits[l.key]! } : l,
    );
    for (const [key, content] of Object.entries(edits))
      if (content !== undefined && !layers.some((l) => l.key === key))
        layers.push({ key: key as PromptLayer["key"], label: key, content });
    const order = ["system", "general", "company", "template", "row"];
    layers.sort((a, b) => order.indexOf(a.key) - order.indexOf(b.key));
    const versions = { ...(original.promptVersions as PromptVersions) };
    for (const key of Object.keys(edits)) delete versions[key as keyof PromptVersions];
    const call = await this.call({
      kind: "replay",
      build: () => ({ layers, versions }),
      wait: true,
      rowIds: original.rowIds,
      ctx: {
        importId: original.importId,
        company: original.company,
        productType: original.productType,
        templateId: original.templateId,
        userId,
      },
      replayOf: original.id,
      model: model ?? original.model,
    });
    return getCall(this.db, call.id);
  }

  async testConnection(userId: number | null): Promise<TestConnectionResult> {
    const ai = this.config.ai;
    const client = this.client;
    const base: TestConnectionResult = {
      ok: false,
      configured: !!ai,
      base_url: ai ? safeUrl(ai.baseUrl) : null,
      model: ai?.model ?? null,
      models: [],
      mode: null,
      steps: [],
      call_id: null,
      message: AI_NOT_CONFIGURED,
    };
    if (!ai || !client) return base;
    const steps: TestConnectionStep[] = [];
    const step = (s: TestConnectionStep["step"], label: string, ok: boolean, detail: string, ms = 0) =>
      steps.push({ step: s, label, ok, detail, ms });
    const finish = (ok: boolean, message: string, extra: Partial<TestConnectionResult> = {}) => ({
      ...base,
      ...extra,
      ok,
      steps,
      message,
    });

    const t0 = performance.now();
    let models: string[] = [];
    try {
      models = await client.listModels();
      const ms = Math.round(performance.now() - t0);
      step("connect", "Connection", true, `Reached ${safeUrl(ai.baseUrl)}`, ms);
      step("auth", "Authentication", true, ai.apiKey ? "The key was accepted" : "No key needed", 0);
      step(
        "models",
        "Models listed",
        true,
        `${models.length} model${models.length === 1 ? "" : "s"} offered`,
        ms,
      );
      step(
        "model",
        "Model",
        models.includes(ai.model),
        models.includes(ai.model)
          ? `${ai.model} is offered`
          : `${ai.model} is not among the models offered${models.length ? ` (${models.slice(0, 10).join(", ")}${models.length > 10 ? ", …" : ""})` : ""}`,
      );
    } catch (err) {
      const ms = Math.round(performance.now() - t0);
      const c = client.classify(err, "prompt");
      if (c.outcome === "connection" || c.outcome === "timeout") {
        step("connect", "Connection", false, c.message, ms);
        return finish(false, `Connection failed: ${c.message}`);
      }
      step("connect", "Connection", true, `Reached ${safeUrl(ai.baseUrl)}`, ms);
      if (c.outcome === "auth") {
        step("auth", "Authentication", false, c.message, 0);
        return finish(false, `Authentication failed: ${c.message}`);
      }
      step("auth", "Authentication", true, "Not refused", 0);
      step("models", "Models listed", false, `The endpoint does not list models: ${c.message}`, ms);
    }

    const sample: RowInput = {
      row_id: 1,
      values: { title: "Connection test product", price: "9.99", description: "A sample row." },
    };
    const prompts: PromptSet = await loadPromptSet(this.db);
    const { layers, versions } = buildLayers(
      prompts,
      { company: null, companyName: null, productType: null, templateDefaults: null, fieldOptions: null },
      [sample],
    );
    const call = await this.call({
      kind: "test",
      build: () => ({ layers, versions }),
      wait: true,
      rowIds: [1],
      ctx: { userId },
    });
    const r = call.result;
    const last = r.attempts.at(-1);
    if (r.ok) {
      // The model answered, so it exists even if the list did not name it.
      const modelStep = steps.find((s) => s.step === "model");
      if (modelStep && !modelStep.ok) {
        modelStep.ok = true;
        modelStep.detail = `${ai.model} is not listed, but it answered`;
      }
      step(
        "structured",
        "Structured answer",
        true,
        `Verdicts parsed (mode ${r.mode})`,
        call.timings.total_ms,
      );
      return finish(true, `Connected: ${ai.model} answered in mode ${r.mode}`, {
        models,
        mode: r.mode as AiMode,
        call_id: call.id,
      });
    }
    const outcome = last?.outcome ?? "error";
    if (outcome === "connection" || outcome === "timeout") {
      const s = steps.find((x) => x.step === "connect");
      if (s) Object.assign(s, { ok: false, detail: r.error ?? "" });
      return finish(false, `Connection failed: ${r.error}`, { models, call_id: call.id });
    }
    if (outcome === "auth") {
      const s = steps.find((x) => x.step === "auth");
      if (s) Object.assign(s, { ok: false, detail: r.error ?? "" });
      return finish(false, `Authentication failed: ${r.error}`, { models, call_id: call.id });
    }
    if (outcome === "not_found") {
      const s = steps.find((x) => x.step === "model");
      if (s) Object.assign(s, { ok: false, detail: r.error ?? "" });
      else step("model", "Model", false, r.error ?? "");
      return finish(false, `Model not found: ${r.error}`, { models, call_id: call.id });
    }
    step("structured", "Structured answer", false, r.error ?? "No usable answer", call.timings.total_ms);
    return finish(false, `The model's answer was not usable JSON: ${r.error}`, { models, call_id: call.id });
  }
}

// ---- reading the log ---------------------------------------------------------------------

/** The columns of the runs list: never the layers, request or response of 50 calls at once. */
const SUMMARY_SELECT = {
  id: true,
  createdAt: true,
  kind: true,
  importId: true,
  batchId: true,
  rowIds: true,
  replayOf: true,
  company: true,
  productType: true,
  templateId: true,
  promptVersions: true,
  model: true,
  mode: true,
  status: true,
  latencyMs: true,
  tokensIn: true,
  tokensOut: true,
  cost: true,
  fieldsChecked: true,
  issuesFound: true,
  error: true,
} satisfies Prisma.AiValidationCallSelect;

type CallRow = Prisma.AiValidationCallGetPayload<{ select: typeof SUMMARY_SELECT }>;

function toSummary(r: CallRow, names: Map<string, string>): AiCallSummary {
  return {
    id: r.id,
    created_at: r.createdAt,
    kind: r.kind as AiCallKind,
    import_id: r.importId,
    batch_id: r.batchId,
    row_ids: r.rowIds,
    replay_of: r.replayOf,
    company: r.company,
    company_name: r.company ? (names.get(r.company) ?? null) : null,
    product_type: r.productType,
    template_id: r.templateId,
    prompt_versions: r.promptVersions as PromptVersions,
    model: r.model,
    mode: r.mode as AiMode | null,
    status: r.status as AiCallStatus,
    latency_ms: r.latencyMs,
    tokens_in: r.tokensIn,
    tokens_out: r.tokensOut,
    cost: Number(r.cost),
    fields_checked: r.fieldsChecked,
    issues_found: r.issuesFound,
    error: r.error,
  };
}

async function brandNames(db: Database, companies: (string | null)[]): Promise<Map<string, string>> {
  const ids = [...new Set(companies.filter((c): c is string => !!c && /^\d{1,9}$/.test(c)).map(Number))];
  if (!ids.length) return new Map();
  const rows = await db.prisma.brand.findMany({
    where: { id: { in: ids } },
    select: { id: true, name: true },
  });
  return new Map(rows.map((b) => [String(b.id), b.name]));
}

export async function listCalls(db: Database, input: ListCallsInput): Promise<AiCallPage> {
  const q = ListCallsInputSchema.parse(input);
  const where: Prisma.AiValidationCallWhereInput = {};
  if (q.status) where.status = q.status;
  if (q.kind) where.kind = q.kind;
  if (q.mode) where.mode = q.mode;
  if (q.import_id) where.importId = q.import_id;
  const search = q.search?.trim();
  if (search) {
    const n = /^\d{1,9}$/.test(search) ? Number(search) : null;
    where.OR = [
      { model: { contains: search, mode: "insensitive" } },
      { company: { equals: search } },
      { productType: { contains: search, mode: "insensitive" } },
      { error: { contains: search, mode: "insensitive" } },
      ...(n !== null ? [{ id: n }, { importId: n }, { rowIds: { has: n } }] : []),
    ];
  }
  const [total, rows] = await Promise.all([
    db.prisma.aiValidationCall.count({ where }),
    db.prisma.aiValidationCall.findMany({
      select: SUMMARY_SELECT,
      where,
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      skip: (q.page - 1) * q.pageSize,
      take: q.pageSize,
    }),
  ]);
  const names = await brandNames(
    db,
    rows.map((r) => r.company),
  );
  return { items: rows.map((r) => toSummary(r, names)), total, page: q.page, pageSize: q.pageSize };
}

export async function getCall(db: Database, id: number): Promise<AiCallDetail> {
  const r = await db.prisma.aiValidationCall.findUnique({ where: { id } });
  if (!r) throw notFound(`AI validation run ${id} not found`);
  const names = await brandNames(db, [r.company]);
  return {
    ...toSummary(r, names),
    base_url: r.baseUrl,
    layers: r.layers as unknown as PromptLayer[],
    request: r.request as AiCallDetail["request"],
    response_raw: r.responseRaw,
    verdicts: (r.verdicts as unknown as RowVerdict[] | null) ?? null,
    attempts: r.attempts as unknown as CallAttempt[],
    timings: r.timings as unknown as CallTimings,
  };
}
