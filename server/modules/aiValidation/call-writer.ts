// Stores model calls and cache entries off the calls' path: a call takes an id from a block
// reserved ahead on the table's sequence, queues its record and goes on; the queue is written every
// few milliseconds (or at once when it is long) as one statement over a raw connection (one JSON
// parameter for the calls, one for the cache entries), and at the end of a run the run waits for
// what it queued (`drain`). A write that fails is tried again with back-off, the records kept in
// the queue; a record the database refuses on its own (after the others were stored without it)
// is reported to `log` and dropped, so it cannot hold up the rest.
import type { Database } from "../../db/database.ts";

export interface CallRecord {
  kind: string;
  batch_id: number | null;
  import_id: number | null;
  row_ids: number[];
  replay_of: number | null;
  company: string | null;
  product_type: string | null;
  template_id: number | null;
  prompt_versions: unknown;
  base_url: string;
  model: string;
  mode: string | null;
  status: string;
  latency_ms: number;
  tokens_in: number;
  tokens_out: number;
  cost: number;
  fields_checked: number;
  issues_found: number;
  layers: unknown;
  request: unknown;
  response_raw: string | null;
  verdicts: unknown;
  error: string | null;
  attempts: unknown;
  timings: unknown;
  created_by: number | null;
}

export interface CacheRecord {
  key: string;
  verdict: unknown;
  call_id: number;
}

const TEXT = [
  "kind",
  "company",
  "product_type",
  "base_url",
  "model",
  "mode",
  "status",
  "response_raw",
  "error",
];
const INT = [
  "id",
  "batch_id",
  "import_id",
  "replay_of",
  "template_id",
  "latency_ms",
  "tokens_in",
  "tokens_out",
];
const MORE_INT = ["fields_checked", "issues_found", "created_by"];
const JSONB = ["prompt_versions", "layers", "request", "attempts", "timings"];

const CALLS_SELECT = `SELECT ${[
  ...TEXT.map((c) => `e.j->>'${c}'`),
  ...[...INT, ...MORE_INT].map((c) => `(e.j->>'${c}')::int`),
  ...JSONB.map((c) => `e.j->'${c}'`),
  "(e.j->>'cost')::numeric",
  "NULLIF(e.j->'verdicts', 'null'::jsonb)",
  "ARRAY(SELECT jsonb_array_elements_text(e.j->'row_ids')::int)",
  "now()",
].join(", ")}
  FROM jsonb_array_elements($1::jsonb) AS e(j)`;

/** Calls ($1, a JSON array of records with their ids) and cache entries ($2) in one statement. */
const INSERT_SQL = `
  WITH calls AS (
    INSERT INTO ai_validation_calls (${[...TEXT, ...INT, ...MORE_INT, ...JSONB, "cost", "verdicts", "row_ids", "finished_at"].join(", ")})
    ${CALLS_SELECT}
    RETURNING 1
  )
  INSERT INTO ai_validation_cache (key, verdict, call_id)
  SELECT x.key, x.verdict, x.call_id FROM jsonb_to_recordset($2::jsonb) AS x(key text, verdict jsonb, call_id int)
  ON CONFLICT (key) DO NOTHING`;

const RESERVE_SQL = `SELECT nextval(pg_get_serial_sequence('ai_validation_calls', 'id'))::int AS id FROM generate_series(1, $1)`;

/** Text PostgreSQL cannot hold (NUL) is dropped from what an endpoint sent, not the whole record. */
const json = (value: unknown) => {
  const text = JSON.stringify(value);
  // The scan for a NUL only where one can be (most writes have none).
  return text.includes("\\u0000") ? text.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, "$1") : text;
};

/** Failed writes in a row after which `drain` reports the error (the records stay queued). */
const MAX_FAILURES = 5;

export interface CallWriterOptions {
  /** How long a record may wait for the next write (ms). */
  flushMs?: number;
  /** Records that make a write start at once. */
  maxBatch?: number;
  /** Ids reserved per round trip. */
  reserve?: number;
  log?: (err: unknown) => void;
}

type Call = CallRecord & { id: number };

export class CallWriter {
  private readonly flushMs: number;
  private readonly maxBatch: number;
  private readonly reserveCount: number;
  private ids: number[] = [];
  private reserving: Promise<void> | null = null;
  private calls: Call[] = [];
  private cache: CacheRecord[] = [];
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> | null = null;
  private failures = 0;
  private lastError: unknown = null;
  private readonly queuedAt = new Map<number, number>();
  /** Told, for each call written, how long it waited in the queue and the write (ms). */
  observe: ((storedAfterMs: number) => void) | null = null;

  constructor(
    private readonly db: Database,
    opts: CallWriterOptions = {},
    private readonly log: (err: unknown) => void = opts.log ?? (() => {}),
  ) {
    this.flushMs = opts.flushMs ?? 10;
    this.maxBatch = opts.maxBatch ?? 200;
    this.reserveCount = opts.reserve ?? 64;
  }

  /** Records waiting to be written. */
  get pending(): number {
    return this.calls.length + this.cache.length;
  }

  /**
   * A new call's id. Ids come in blocks, one round trip each, and the next block is asked for while
   * half of this one is left, so a steady run's calls never wait for one (only the very first call,
   * or a burst larger than half a block).
   */
  async nextId(): Promise<number> {
    while (this.ids.length === 0) await this.refill();
    const id = this.ids.shift()!;
    if (this.ids.length < this.reserveCount / 2) void this.refill().catch(this.log);
    return id;
  }

  private refill(): Promise<void> {
    this.reserving ??= this.reserve().finally(() => {
      this.reserving = null;
    });
    return this.reserving;
  }

  private async reserve(): Promise<void> {
    const conn = await this.db.connect();
    try {
      const rows = await conn.query<{ id: number }>(RESERVE_SQL, [this.reserveCount]);
      this.ids.push(...rows.map((r) => r.id));
    } finally {
      await conn.release();
    }
  }

  /** Queues a call (its id from `nextId`) and its rows' cache entries for the next write. */
  add(call: Call | null, cache: CacheRecord[] = []): void {
    if (call) {
      this.calls.push(call);
      if (this.observe) this.queuedAt.set(call.id, performance.now());
    }
    if (cache.length) this.cache.push(...cache);
    if (this.pending >= this.maxBatch) this.kick(0);
    else this.kick(this.flushMs);
  }

  /** Stores a call now and answers its id (a replay, a connection test: one call, awaited). */
  async write(record: CallRecord): Promise<number> {
    const id = await this.nextId();
    this.add({ ...record, id });
    await this.drain();
    return id;
  }

  /**
   * Waits until everything queued so far is written. Rejects when the database keeps refusing
   * (the records stay queued and are tried again with the next ones).
   */
  async drain(): Promise<void> {
    while (this.pending > 0 || this.writing) {
      await this.start();
      if (this.pending > 0 && this.failures >= MAX_FAILURES) throw this.lastError;
    }
  }

  private kick(ms: number) {
    if (this.writing) return; // the write in progress takes what was queued meanwhile
    if (this.timer && ms > 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.start(), ms);
  }

  private start(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (!this.writing) {
      const writing = this.flush().finally(() => {
        this.writing = null;
        if (this.pending > 0 && this.failures < MAX_FAILURES) this.kick(this.flushMs);
      });
      this.writing = writing;
    }
    return this.writing;
  }

  private async flush(): Promise<void> {
    // A new run of writes tries again even after the last one gave up.
    if (this.failures >= MAX_FAILURES) this.failures = MAX_FAILURES - 1;
    while (this.pending > 0) {
      const calls = this.calls.splice(0, this.maxBatch);
      const cache = this.cache.splice(0, this.maxBatch * 20);
      try {
        await this.insert(calls, cache);
        this.failures = 0;
        continue;
      } catch (err) {
        this.failures++;
        this.lastError = err;
      }
      // One record the database refuses would fail every write it is in: when several fail
      // together twice, each goes on its own; those refused alone while others go in are dropped
      // (and logged). When none goes in, the database is the trouble: all wait and try again.
      const refused =
        calls.length + cache.length > 1 && this.failures >= 2 ? await this.oneByOne(calls, cache) : null;
      if (refused === null) {
        this.calls.unshift(...calls);
        this.cache.unshift(...cache);
        if (this.failures >= MAX_FAILURES) return;
        await new Promise((r) => setTimeout(r, 50 * 2 ** this.failures));
      }
    }
  }

  /** Writes the records one by one: null when none went in (they are left to the caller). */
  private async oneByOne(calls: Call[], cache: CacheRecord[]): Promise<unknown[] | null> {
    const refused: [string, unknown][] = [];
    let stored = 0;
    for (const c of calls)
      await this.insert([c], []).then(
        () => stored++,
        (err) => refused.push([`AI call ${c.id} not stored`, err]),
      );
    for (const c of cache)
      await this.insert([], [c]).then(
        () => stored++,
        (err) => refused.push(["AI cache entry not stored", err]),
      );
    if (stored === 0) return null;
    for (const [what, err] of refused)
      this.log(new Error(`${what}: ${err instanceof Error ? err.message : err}`));
    this.failures = 0;
    return refused;
  }

  private async insert(calls: Call[], cache: CacheRecord[]) {
    const conn = await this.db.connect();
    try {
      await conn.execute(INSERT_SQL, [json(calls), json(cache)]);
      if (this.observe) {
        const now = performance.now();
        for (const c of calls) {
          const at = this.queuedAt.get(c.id);
          this.queuedAt.delete(c.id);
          if (at !== undefined) this.observe(now - at);
        }
      }
    } finally {
      await conn.release();
    }
  }
}
