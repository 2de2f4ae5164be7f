import { describe, expect, it } from "vitest";
import { readBinaryCopy } from "../../server/db/binary-copy.ts";
import { scaledToDecimal } from "../../server/jobs/series.ts";

/** PostgreSQL's binary COPY output for rows of (int4, int8, text). */
function encode(rows: [number | null, number | null, string | null][]): Buffer {
  const parts: Buffer[] = [Buffer.from("PGCOPY\n\xff\r\n\0", "latin1"), Buffer.alloc(8)];
  for (const [a, b, c] of rows) {
    const head = Buffer.alloc(2);
    head.writeInt16BE(3);
    parts.push(head);
    const int4 = Buffer.alloc(a === null ? 4 : 8);
    int4.writeInt32BE(a === null ? -1 : 4);
    if (a !== null) int4.writeInt32BE(a, 4);
    parts.push(int4);
    const int8 = Buffer.alloc(b === null ? 4 : 12);
    int8.writeInt32BE(b === null ? -1 : 8);
    if (b !== null) int8.writeBigInt64BE(BigInt(b), 4);
    parts.push(int8);
    const text = c === null ? null : Buffer.from(c, "utf8");
    const len = Buffer.alloc(4);
    len.writeInt32BE(text ? text.length : -1);
    parts.push(len);
    if (text) parts.push(text);
  }
  const trailer = Buffer.alloc(2);
  trailer.writeInt16BE(-1);
  parts.push(trailer);
  return Buffer.concat(parts);
}

async function* inPieces(buf: Buffer, size: number) {
  for (let o = 0; o < buf.length; o += size) yield buf.subarray(o, o + size);
}

describe("readBinaryCopy", () => {
  const rows: [number | null, number | null, string | null][] = [
    [1, 2 ** 53 - 1, "SO-1"],
    [-5, -(2 ** 53 - 1), ""],
    [null, null, null],
    [2147483647, -1, "Ünïcødé ✓"],
  ];
  it("decodes every row whatever the chunk boundaries, NULLs and negatives included", async () => {
    for (const size of [1, 3, 7, 64, 100_000]) {
      const seen: unknown[] = [];
      const n = await readBinaryCopy(inPieces(encode(rows), size), ["int4", "int8", "text"], (r) =>
        seen.push([...r]),
      );
      expect(n).toBe(4);
      expect(seen).toEqual(rows);
    }
  });
  it("refuses an int8 beyond ±2^53, output without its trailer, and rows of another width", async () => {
    await expect(
      readBinaryCopy(inPieces(encode([[1, 2 ** 53, "x"]]), 5), ["int4", "int8", "text"], () => {}),
    ).rejects.toThrow(/2\^53/);
    const cut = encode(rows).subarray(0, 40);
    await expect(readBinaryCopy(inPieces(cut, 8), ["int4", "int8", "text"], () => {})).rejects.toThrow(
      /trailer/,
    );
    await expect(readBinaryCopy(inPieces(encode(rows), 8), ["int4", "int8"], () => {})).rejects.toThrow(
      /3 fields/,
    );
  });
});

describe("scaledToDecimal", () => {
  it("writes cents and rounds 1/10,000 to cents half away from zero, as numeric round() does", () => {
    expect(scaledToDecimal(0, 100, 2)).toBe("0.00");
    expect(scaledToDecimal(5, 100, 2)).toBe("0.05");
    expect(scaledToDecimal(-5, 100, 2)).toBe("-0.05");
    expect(scaledToDecimal(123456, 100, 2)).toBe("1234.56");
    expect(scaledToDecimal(-123456, 100, 2)).toBe("-1234.56");
    expect(scaledToDecimal(12345, 10_000, 2)).toBe("1.23");
    expect(scaledToDecimal(12350, 10_000, 2)).toBe("1.24");
    expect(scaledToDecimal(-12350, 10_000, 2)).toBe("-1.24");
    expect(scaledToDecimal(-49, 10_000, 2)).toBe("0.00");
    expect(scaledToDecimal(-50, 10_000, 2)).toBe("-0.01");
    expect(scaledToDecimal(2 ** 53 - 1, 100, 2)).toBe("90071992547409.91");
  });
});
