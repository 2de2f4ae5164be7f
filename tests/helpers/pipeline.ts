import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Database } from "../../server/db/database.ts";
import { DataOps } from "../../server/jobs/data-ops.ts";
import { createProgressBus, type ProgressBus, type ProgressEvent } from "../../server/jobs/progress-bus.ts";
import { CsvFolderSource } from "../../server/jobs/source.ts";

export const FIXTURE_DIR = path.resolve("tests/fixtures/source-small");
/** The fixture's dates are relative to this moment. */
export const FIXTURE_AS_OF = new Date("2026-06-30T12:00:00Z");

/** A writable copy of the small fixture, to edit per test. */
export function copyFixture(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "source-"));
  fs.cpSync(FIXTURE_DIR, dir, { recursive: true });
  return dir;
}

export function editFile(dir: string, file: string, edit: (text: string) => string): void {
  const p = path.join(dir, file);
  fs.writeFileSync(p, edit(fs.readFileSync(p, "utf8")));
}

export interface PipelineHarness {
  ops: DataOps;
  bus: ProgressBus;
  events: ProgressEvent[];
  /** Starts a run and waits for its end; answers the final event. */
  run(type: "update" | "reset"): Promise<ProgressEvent>;
  /** The final event of a run (waits for it: the bus may deliver it after the run has ended). */
  final(runId: number): Promise<ProgressEvent>;
  close(): Promise<void>;
}

export async function pipeline(
  db: Database,
  sourceDir: () => string,
  opts: {
    stepDelayMs?: number;
    /** SOURCE_TIMEZONE */
    sourceTimeZone?: string;
    log?: { info(msg: string): void; error(obj: unknown, msg: string): void };
    /** The runs' as-of moment (default FIXTURE_AS_OF) */
    asOf?: Date;
  } = {},
): Promise<PipelineHarness> {
  const bus = await createProgressBus(db.url);
  const ops = new DataOps({
    db,
    bus,
    source: () => new CsvFolderSource(sourceDir()),
    asOf: () => opts.asOf ?? FIXTURE_AS_OF,
    stepDelayMs: opts.stepDelayMs,
    sourceTimeZone: opts.sourceTimeZone,
    log: opts.log,
  });
  await ops.init();
  const events: ProgressEvent[] = [];
  ops.onProgress((e) => events.push(e));
  const harness: PipelineHarness = {
    ops,
    bus,
    events,
    async run(type) {
      const { run_id } = await ops.start(type, null);
      await ops.idle();
      return harness.final(run_id);
    },
    async final(runId) {
      // The bus may deliver asynchronously (NOTIFY): wait for the final event of this run.
      const until = Date.now() + 10_000;
      while (Date.now() < until) {
        const last = events.findLast((e) => e.run_id === runId && e.status !== "running");
        if (last) return last;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`run ${runId} sent no final event`);
    },
    async close() {
      await ops.close();
      await bus.close();
    },
  };
  return harness;
}
