// The demo chat archive written on a first start: no message lies after the moment it was written.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { EJSON } from "bson";
import { afterAll, describe, expect, it } from "vitest";
import { generateChatDemo } from "../../scripts/lib/chat-demo.ts";

describe("demo chat archive", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chat-demo-"));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("holds no message from later than the moment it is written, whatever the hour", async () => {
    const before = Date.now();
    await generateChatDemo({ out: dir, messages: 400, years: 1, withFiles: false });
    const after = Date.now();
    const lines = fs
      .readFileSync(path.join(dir, "rocketchat_message.json"), "utf8")
      .split("\n")
      .filter(Boolean);
    expect(lines.length).toBeGreaterThan(0);
    const latest = Math.max(...lines.map((l) => (EJSON.parse(l) as { ts: Date }).ts.getTime()));
    expect(latest).toBeLessThanOrEqual(after);
    // and the archive still reaches up to today (the last message within the last day)
    expect(latest).toBeGreaterThan(before - 86_400_000);
  });
});
