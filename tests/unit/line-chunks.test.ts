// The COPY input of the calculation modules: CSV lines written into chunks of about 1 MB.
import { describe, expect, it } from "vitest";
import { lineChunks } from "../../server/jobs/series.ts";

async function collect(lines: Iterable<string>) {
  const chunks: Buffer[] = [];
  for await (const c of lineChunks(lines)) chunks.push(Buffer.from(c));
  return chunks;
}

describe("lineChunks", () => {
  it("gives back every byte of the lines in order, in chunks of at most 1 MB", async () => {
    const lines = Array.from({ length: 60_000 }, (_, i) => `${i},Café ☕ ${"x".repeat(i % 40)},${i * 3}\n`);
    const chunks = await collect(lines);
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(1 << 20);
    expect(Buffer.concat(chunks).toString("utf8")).toBe(lines.join(""));
  });

  it("keeps a line that does not fit whole, and one longer than a chunk", async () => {
    const long = `${"é".repeat(700_000)}\n`; // 1.4 MB of UTF-8
    const lines = ["a\n", "b".repeat((1 << 20) - 3) + "\n", "c\n", long, "d\n"];
    const chunks = await collect(lines);
    expect(Buffer.concat(chunks).toString("utf8")).toBe(lines.join(""));
    // No line is cut between two chunks.
    for (const c of chunks) expect(c.toString("utf8").endsWith("\n")).toBe(true);
  });

  it("gives nothing for no lines", async () => {
    expect(await collect([])).toEqual([]);
  });
});
