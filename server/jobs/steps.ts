// Runs a job as named steps: times each, records rows affected, reports progress, and stops at the
// next step boundary (or the next COPY chunk) once the job is cancelled.

export interface StepResult {
  name: string;
  /** seconds */
  duration: number;
  rowsAffected: number;
  status: "completed" | "failed" | "cancelled";
}

export interface StepProgress {
  current: number;
  total?: number;
  unit?: string;
}

export interface StepContext {
  signal: AbortSignal;
  progress(p: StepProgress): void;
}

export class CancelledError extends Error {
  constructor() {
    super("Operation cancelled");
    this.name = "CancelledError";
  }
}

export interface StepRunnerOptions {
  signal: AbortSignal;
  /** Test hook: wait this long before each step, so a cancel can arrive mid-run. */
  delayMs?: number;
  onStepStart(name: string, index: number): void;
  onStepProgress(name: string, p: StepProgress): void;
  onStepEnd(result: StepResult): void;
}

export class StepRunner {
  readonly results: StepResult[] = [];
  private index = 0;
  constructor(private readonly opts: StepRunnerOptions) {}

  throwIfCancelled(): void {
    if (this.opts.signal.aborted) throw new CancelledError();
  }

  async run(name: string, fn: (ctx: StepContext) => Promise<number>): Promise<number> {
    this.throwIfCancelled();
    if (this.opts.delayMs) await abortableDelay(this.opts.delayMs, this.opts.signal);
    this.throwIfCancelled();
    this.opts.onStepStart(name, this.index++);
    const started = performance.now();
    const finish = (status: StepResult["status"], rowsAffected: number) => {
      const result = { name, duration: round3((performance.now() - started) / 1000), rowsAffected, status };
      this.results.push(result);
      this.opts.onStepEnd(result);
    };
    try {
      const rows = await fn({ signal: this.opts.signal, progress: (p) => this.opts.onStepProgress(name, p) });
      finish("completed", rows);
      return rows;
    } catch (err) {
      const cancelled = this.opts.signal.aborted;
      finish(cancelled ? "cancelled" : "failed", 0);
      throw cancelled ? new CancelledError() : err;
    }
  }

  get timings(): Record<string, number> {
    return Object.fromEntries(this.results.map((r) => [r.name, r.duration]));
  }
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
