// CopyRowsQuery (server/db/copy-rows.ts) against a socket stand-in: the server's bytes as PostgreSQL
// sends them for a COPY … TO STDOUT (FORMAT binary), cut into chunks at every place, with messages
// the server may send at any time in between. The rows must come out whole and in order, those
// messages and everything from CopyDone on must reach pg's own reader intact, and the socket must be
// pg's again at the end. (tests/integration/binary-copy.test.ts runs it against PostgreSQL.)
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { BinaryRowWriter, int4At } from "../../server/db/binary-copy.ts";
import { CopyRowsQuery } from "../../server/db/copy-rows.ts";

function message(code: string, body: Buffer): Buffer {
  const b = Buffer.alloc(5 + body.length);
  b[0] = code.charCodeAt(0);
  b.writeUInt32BE(4 + body.length, 1);
  body.copy(b, 5);
  return b;
}

/** A socket whose one 'data' reader stands for pg's; what reaches it is kept. */
function socket() {
  const stream = new EventEmitter() as EventEmitter & { listeners(e: "data"): ((c: Buffer) => void)[] };
  const toPg: Buffer[] = [];
  const pg = (chunk: Buffer) => toPg.push(chunk);
  stream.on("data", pg);
  const sent: string[] = [];
  const connection = { stream, query: (text: string) => sent.push(text) } as never;
  return { stream, toPg, pg, sent, connection };
}

/** Rows 0 … n − 1 of one int4 column, one CopyData message each (header with the first). */
function copyData(n: number, width = 0): Buffer[] {
  const out = new BinaryRowWriter(64);
  const messages: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    out.row(2);
    out.int4(i);
    out.text("x".repeat(width));
    messages.push(message("d", out.take()));
  }
  messages.push(message("d", out.end()));
  return messages;
}

const notice = message("N", Buffer.from("SNOTICE\0Mhello\0\0"));
const parameter = message("S", Buffer.from("TimeZone\0UTC\0"));
const tail = Buffer.concat([
  message("c", Buffer.alloc(0)),
  message("C", Buffer.from("COPY 12\0")),
  message("Z", Buffer.from("I")),
]);

describe("CopyRowsQuery", () => {
  it("reads every row however the socket cuts the bytes, and passes the other messages to pg", async () => {
    const data = copyData(12);
    const bytes = Buffer.concat([
      message("H", Buffer.from([1, 0, 2, 0, 1, 0, 1])),
      notice,
      ...data.slice(0, 6),
      parameter,
      ...data.slice(6),
      tail,
    ]);
    for (let cut1 = 1; cut1 < bytes.length; cut1++) {
      for (const cut2 of [cut1 + 1, cut1 + 4, bytes.length]) {
        if (cut2 > bytes.length) continue;
        const s = socket();
        const rows: number[] = [];
        const q = new CopyRowsQuery("COPY x TO STDOUT", 2, (buf, at) => rows.push(int4At(buf, at[0]!)));
        expect(q.submit(s.connection)).toBeUndefined();
        for (const piece of [bytes.subarray(0, cut1), bytes.subarray(cut1, cut2), bytes.subarray(cut2)])
          if (piece.length) s.stream.emit("data", piece);
        expect(rows, `cut at ${cut1}, ${cut2}`).toEqual(Array.from({ length: 12 }, (_, i) => i));
        expect(Buffer.concat(s.toPg)).toEqual(Buffer.concat([notice, parameter, tail]));
        expect(s.stream.listeners("data")).toEqual([s.pg]);
        expect(s.sent).toEqual(["COPY x TO STDOUT"]);
        q.handleReadyForQuery();
        await expect(q.done).resolves.toBe(12);
      }
    }
  });

  it("reads a row far larger than the socket's chunks", async () => {
    const data = copyData(3, 3_000_000);
    const bytes = Buffer.concat([message("H", Buffer.from([1, 0, 2, 0, 1, 0, 1])), ...data, tail]);
    const s = socket();
    const widths: number[] = [];
    const q = new CopyRowsQuery("COPY x TO STDOUT", 2, (buf, at) => widths.push(int4At(buf, at[1]! - 4)));
    q.submit(s.connection);
    for (let o = 0; o < bytes.length; o += 65_536) s.stream.emit("data", bytes.subarray(o, o + 65_536));
    q.handleReadyForQuery();
    await expect(q.done).resolves.toBe(3);
    expect(widths).toEqual([3_000_000, 3_000_000, 3_000_000]);
    expect(Buffer.concat(s.toPg)).toEqual(tail);
  });

  it("fails without taking the socket when it cannot tell pg's reader", () => {
    const s = socket();
    const other = () => {};
    s.stream.on("data", other);
    const q = new CopyRowsQuery("COPY x TO STDOUT", 2, () => {});
    expect(q.submit(s.connection)).toBeInstanceOf(Error);
    expect(s.stream.listeners("data")).toEqual([s.pg, other]);
    expect(s.sent).toEqual([]);
  });

  it("answers the server's error, a row it cannot read, or a statement that is not a COPY out", async () => {
    const failing = new CopyRowsQuery("COPY x TO STDOUT", 2, () => {});
    failing.submit(socket().connection);
    failing.handleError(new Error("division by zero"));
    await expect(failing.done).rejects.toThrow("division by zero");

    // Rows of two fields read as three: the error once the server has ended the statement.
    const s = socket();
    const misread = new CopyRowsQuery("COPY x TO STDOUT", 3, () => {});
    misread.submit(s.connection);
    s.stream.emit("data", Buffer.concat([...copyData(2), tail]));
    expect(Buffer.concat(s.toPg)).toEqual(tail);
    misread.handleReadyForQuery();
    await expect(misread.done).rejects.toThrow(/2 fields where 3/);

    const select = new CopyRowsQuery("SELECT 1", 1, () => {});
    select.submit(socket().connection);
    select.handleRowDescription();
    select.handleDataRow();
    select.handleReadyForQuery();
    await expect(select.done).rejects.toThrow(/not a COPY/);
  });
});
