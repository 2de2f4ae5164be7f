// What the server's log says when a data operation ends: its durations read like the screen's.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { FIXTURE_DIR, type PipelineHarness, pipeline } from "../helpers/pipeline.ts";

describe("data operation log lines", () => {
  let tdb: TestDatabase;
  let p: PipelineHarness;
  const lines: string[] = [];

  beforeAll(async () => {
    tdb = await createTestDatabase();
    p = await pipeline(tdb.db, () => FIXTURE_DIR, {
      log: { info: (msg) => lines.push(msg), error: (_obj, msg) => lines.push(`error: ${msg}`) },
    });
  }, 60_000);
  afterAll(async () => {
    await p?.close();
    await tdb?.drop();
  });

  it("a finished run logs its time in seconds ('in 5.6 s'), not in fractions of a minute", async () => {
    const reset = await p.run("reset");
    const update = await p.run("update");
    expect(lines).toContainEqual(
      expect.stringMatching(new RegExp(`^Full reset ${reset.run_id} completed in \\d+\\.\\d s$`)),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(new RegExp(`^Full update ${update.run_id} completed in \\d+\\.\\d s$`)),
    );
    expect(lines.filter((l) => / min\b/.test(l))).toEqual([]);
  });
});
