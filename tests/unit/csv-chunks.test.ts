import { describe, expect, it } from "vitest";
import { csvChunks } from "../../server/db/database.ts";

async function* from(...parts: string[]) {
  for (const p of parts) yield Buffer.from(p);
}

async function collect(source: AsyncIterable<Buffer>, size: number) {
  const out: { text: string; lines: number }[] = [];
  for await (const { chunk, lines } of csvChunks(source, size)) out.push({ text: chunk.toString(), lines });
  return out;
}

describe("csvChunks (COPY input for PGlite)", () => {
  it("cuts only at line ends outside quotes and counts physical lines", async () => {
    const csv = 'a,b\n1,"x\ny"\n2,z\n3,"q ""quoted""\n"\n';
    const chunks = await collect(from(csv), 5);
    expect(chunks.map((c) => c.text).join("")).toBe(csv);
    for (const c of chunks) {
      expect(c.text.endsWith("\n")).toBe(true);
      // No chunk ends inside a quoted field: quotes balance within each chunk.
      expect((c.text.match(/"/g) ?? []).length % 2).toBe(0);
    }
    expect(chunks.reduce((n, c) => n + c.lines, 0)).toBe(6);
  });

  it("keeps a record whole across input buffers and counts a last line without a newline", async () => {
    const chunks = await collect(from('h\n1,"ab', 'c\nd"\n2'), 1);
    expect(chunks.map((c) => c.text)).toEqual(["h\n", '1,"abc\nd"\n', "2"]);
    expect(chunks.map((c) => c.lines)).toEqual([1, 2, 1]);
  });
});
