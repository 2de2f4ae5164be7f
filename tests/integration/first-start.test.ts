// The first start's import (demo data on an empty database) is queued before the server listens:
// the data operations' status reports it active from the first request, and a Full Update started
// meanwhile gets 409, the same answer as while the Full Reset runs.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../server/config.ts";
import { bootstrapDemoData, queueFirstImport } from "../../server/jobs/demo-bootstrap.ts";
import { type AppServices, closeServices, createServices } from "../../server/services.ts";
import { createTestDatabase, type TestDatabase, testBackend } from "../helpers/db.ts";
import { FIXTURE_DIR } from "../helpers/pipeline.ts";

describe(`the first start's import (${testBackend})`, () => {
  let tdb: TestDatabase;
  let services: AppServices;
  let sourceDir: string;
  beforeAll(async () => {
    tdb = await createTestDatabase();
    sourceDir = fs.mkdtempSync(path.join(os.tmpdir(), "first-start-"));
    const config = loadConfig({
      SOURCE_DIR: sourceDir,
      CHAT_SOURCE_DIR: path.join(sourceDir, "chat"),
      DEMO_DATA: "1",
      LOG_LEVEL: "silent",
    });
    services = await createServices(tdb.db, config);
    await services.dataOps.init();
  });
  afterAll(async () => {
    await closeServices(services);
    await tdb.drop();
    fs.rmSync(sourceDir, { recursive: true, force: true });
  });

  it("is active from before the first request until the Full Reset ends", async () => {
    expect((await services.dataOps.status()).active).toBe(false);
    await queueFirstImport(services);
    // What /csv/status answers as soon as the server listens.
    const queued = await services.dataOps.status();
    expect(queued).toMatchObject({ active: true, progress: { type: "reset", status: "running" } });
    await expect(services.dataOps.start("update", null)).rejects.toMatchObject({ kind: "CONFLICT" });

    let release!: () => void;
    const writing = new Promise<void>((r) => {
      release = r;
    });
    const log = { info: () => {}, warn: () => {} };
    const boot = bootstrapDemoData(services, log, async (dir) => {
      // Still active while the demo files are written (before the run is recorded).
      expect((await services.dataOps.status()).active).toBe(true);
      await writing;
      for (const f of fs.readdirSync(FIXTURE_DIR))
        fs.copyFileSync(path.join(FIXTURE_DIR, f), path.join(dir, f));
    });
    await new Promise((r) => setTimeout(r, 200));
    expect((await services.dataOps.status()).active).toBe(true);
    await expect(services.dataOps.start("update", null)).rejects.toMatchObject({ kind: "CONFLICT" });
    release();
    await boot;
    await services.dataOps.idle();
    const runs = await tdb.db.prisma.dataRun.findMany({ where: { type: "reset" }, select: { status: true } });
    expect(runs).toEqual([{ status: "completed" }]);
    // Nothing is queued any more: a Full Update may start.
    const { run_id } = await services.dataOps.start("update", null);
    expect(run_id).toBeGreaterThan(0);
    await services.dataOps.idle();
  });
});
