// Two instances starting at once on one empty database, sharing one data folder: only the one that
// wins the run lock writes the demo files and imports them. PostgreSQL only (embedded mode is one
// process per data folder).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../server/config.ts";
import type { Database } from "../../server/db/database.ts";
import { bootstrapDemoData } from "../../server/jobs/demo-bootstrap.ts";
import { type AppServices, closeServices, createServices } from "../../server/services.ts";
import { createTestDatabase, type TestDatabase, testBackend } from "../helpers/db.ts";
import { FIXTURE_DIR } from "../helpers/pipeline.ts";

describe.skipIf(testBackend !== "postgres")("demo data on a first start of two instances", () => {
  let tdb: TestDatabase;
  let other: Database;
  let sourceDir: string;
  let chatDir: string;
  const instances: AppServices[] = [];
  beforeAll(async () => {
    tdb = await createTestDatabase();
    other = await tdb.openAnother();
    sourceDir = fs.mkdtempSync(path.join(os.tmpdir(), "demo-shared-"));
    chatDir = fs.mkdtempSync(path.join(os.tmpdir(), "demo-chat-shared-"));
    const config = loadConfig({
      SOURCE_DIR: sourceDir,
      CHAT_SOURCE_DIR: chatDir,
      DEMO_DATA: "1",
      LOG_LEVEL: "silent",
    });
    for (const db of [tdb.db, other]) {
      const services = await createServices(db, config);
      await services.dataOps.init();
      instances.push(services);
    }
  });
  afterAll(async () => {
    for (const s of instances) await closeServices(s);
    await tdb.drop();
    fs.rmSync(sourceDir, { recursive: true, force: true });
    fs.rmSync(chatDir, { recursive: true, force: true });
  });

  it("writes the files once and runs one Full Reset (then one chat import)", async () => {
    const writers: number[] = [];
    const log = { info: () => {}, warn: () => {} };
    await Promise.all(
      instances.map((services, i) =>
        bootstrapDemoData(services, log, async (dir) => {
          writers.push(i);
          // Slow enough that both instances would be writing at the same time.
          for (const f of fs.readdirSync(FIXTURE_DIR)) {
            fs.copyFileSync(path.join(FIXTURE_DIR, f), path.join(dir, f));
            await new Promise((r) => setTimeout(r, 50));
          }
        }),
      ),
    );
    for (const s of instances) await s.dataOps.idle();
    expect(writers).toHaveLength(1);
    const runs = await tdb.db.prisma.dataRun.findMany({
      select: { type: true, status: true },
      orderBy: { id: "asc" },
    });
    expect(runs).toEqual([
      { type: "reset", status: "completed" },
      { type: "chat", status: "completed" },
    ]);
    expect(await tdb.db.prisma.product.count()).toBeGreaterThan(0);

    // A later start of either finds the data and does nothing.
    await bootstrapDemoData(instances[1]!, log, async () => {
      writers.push(9);
    });
    expect(writers).toHaveLength(1);
  });
});
