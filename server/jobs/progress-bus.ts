// Fans data-operation progress out to every subscriber of every app instance: PostgreSQL
// LISTEN/NOTIFY when there is a server (a browser on instance B sees a run started on A), an
// in-process emitter for embedded PGlite (one process by construction).
import { EventEmitter } from "node:events";
import pg from "pg";
import { guardPool } from "../db/database.ts";

export type RunType = "update" | "reset" | "chat";
export type RunStatus = "running" | "complete" | "error" | "cancelled";

/** The progress message of spec section 3, plus what the screen shows of the current step. */
export interface ProgressEvent {
  run_id: number;
  /** Order of the event within its run */
  seq?: number;
  type: RunType;
  status: RunStatus;
  /** e.g. 'Loading products.csv', 'Full update complete' */
  operation: string;
  step?: string;
  step_index?: number;
  step_count?: number;
  /** Spec: "a nested progress object with the same fields", plus how far the current step is. */
  progress?: {
    status: RunStatus;
    operation: string;
    type: RunType;
    error?: string | null;
    current?: number;
    total?: number;
    unit?: string;
    percentage?: number;
  };
  rows?: number;
  elapsed_seconds: number;
  error?: string | null;
  timestamp: string;
}

/**
 * The progress of an AI validation run (server/modules/aiValidation), fanned out like a data
 * operation's, so a browser on another instance sees a run and can cancel it.
 */
export interface AiProgressMessage {
  batch_id: number;
  import_id: number | null;
  status: string;
  saved?: boolean;
  [k: string]: unknown;
}

type Message =
  | { kind: "progress"; event: ProgressEvent }
  | { kind: "cancel"; run_id: number }
  | { kind: "ai"; event: AiProgressMessage }
  | { kind: "ai_cancel"; batch_id: number };

export interface ProgressBus {
  publish(event: ProgressEvent): Promise<void>;
  requestCancel(runId: number): Promise<void>;
  onProgress(fn: (event: ProgressEvent) => void): () => void;
  onCancel(fn: (runId: number) => void): () => void;
  publishAi(event: AiProgressMessage): Promise<void>;
  requestAiCancel(batchId: number): Promise<void>;
  onAi(fn: (event: AiProgressMessage) => void): () => void;
  onAiCancel(fn: (batchId: number) => void): () => void;
  close(): Promise<void>;
}

const CHANNEL = "back_office_data_ops";

class LocalBus implements ProgressBus {
  protected readonly emitter = new EventEmitter().setMaxListeners(0);
  async publish(event: ProgressEvent) {
    this.deliver({ kind: "progress", event });
  }
  async requestCancel(runId: number) {
    this.deliver({ kind: "cancel", run_id: runId });
  }
  async publishAi(event: AiProgressMessage) {
    this.deliver({ kind: "ai", event });
  }
  async requestAiCancel(batchId: number) {
    this.deliver({ kind: "ai_cancel", batch_id: batchId });
  }
  protected deliver(msg: Message) {
    if (msg.kind === "progress") this.emitter.emit("progress", msg.event);
    else if (msg.kind === "cancel") this.emitter.emit("cancel", msg.run_id);
    else if (msg.kind === "ai") this.emitter.emit("ai", msg.event);
    else this.emitter.emit("ai_cancel", msg.batch_id);
  }
  onAi(fn: (event: AiProgressMessage) => void) {
    this.emitter.on("ai", fn);
    return () => void this.emitter.off("ai", fn);
  }
  onAiCancel(fn: (batchId: number) => void) {
    this.emitter.on("ai_cancel", fn);
    return () => void this.emitter.off("ai_cancel", fn);
  }
  onProgress(fn: (event: ProgressEvent) => void) {
    this.emitter.on("progress", fn);
    return () => void this.emitter.off("progress", fn);
  }
  onCancel(fn: (runId: number) => void) {
    this.emitter.on("cancel", fn);
    return () => void this.emitter.off("cancel", fn);
  }
  async close() {
    this.emitter.removeAllListeners();
  }
}

class PostgresBus extends LocalBus {
  private listener: pg.Client | null = null;
  private closed = false;
  private reconnectTimer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly url: string,
    /** One connection: NOTIFYs go out in the order they were published. */
    private readonly notifier: pg.Pool,
  ) {
    super();
  }

  static async connect(url: string): Promise<PostgresBus> {
    const notifier = new pg.Pool({ connectionString: url, max: 1, application_name: "back-office-notify" });
    guardPool(notifier);
    const bus = new PostgresBus(url, notifier);
    await bus.listen();
    return bus;
  }

  /** LISTENs on a connection of its own; if that connection drops, it comes back and listens again. */
  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, application_name: "back-office-listen" });
    const retry = () => {
      if (this.closed || this.listener !== client) return;
      this.listener = null;
      client.end().catch(() => {});
      clearTimeout(this.reconnectTimer);
      this.reconnectTimer = setTimeout(() => this.listen().catch(retry), 1000);
      this.reconnectTimer.unref();
    };
    client.on("error", retry);
    client.on("end", retry);
    client.on("notification", (n) => {
      if (n.channel !== CHANNEL || !n.payload) return;
      try {
        this.deliver(JSON.parse(n.payload) as Message);
      } catch {}
    });
    this.listener = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (err) {
      retry();
      throw err;
    }
  }

  private async notify(msg: Message) {
    // Delivered to every listening instance, this one included, in commit order.
    await this.notifier.query("SELECT pg_notify($1, $2)", [CHANNEL, JSON.stringify(msg)]);
  }
  override async publish(event: ProgressEvent) {
    await this.notify({ kind: "progress", event });
  }
  override async requestCancel(runId: number) {
    await this.notify({ kind: "cancel", run_id: runId });
  }
  override async publishAi(event: AiProgressMessage) {
    await this.notify({ kind: "ai", event });
  }
  override async requestAiCancel(batchId: number) {
    await this.notify({ kind: "ai_cancel", batch_id: batchId });
  }
  override async close() {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    await super.close();
    await this.listener?.end().catch(() => {});
    await this.notifier.end().catch(() => {});
  }
}

export function createProgressBus(databaseUrl: string | undefined): Promise<ProgressBus> {
  return databaseUrl ? PostgresBus.connect(databaseUrl) : Promise.resolve(new LocalBus());
}
