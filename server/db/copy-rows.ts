// `COPY (…) TO STDOUT (FORMAT binary)` on a node-postgres client, its rows read in place from the
// socket's chunks (BinaryRowReader) as they arrive. pg-copy-streams' copy-to stream, which copyOut
// uses, cuts every CopyData message (one per row) out of the socket's bytes and joins them again
// into the chunks it pushes, then a reader cuts the rows out again: over the 3M order lines of a
// Full Reset's pass that bookkeeping cost the app about as much CPU as decoding the rows. This
// query follows the protocol the same way pg-copy-streams does (PostgreSQL's documented COPY
// sub-protocol): it takes the connection's socket over from pg's parser for the CopyOutResponse and
// the CopyData messages, and hands everything from CopyDone on (or an ErrorResponse) back to it, so
// pg reads the CommandComplete, ErrorResponse and ReadyForQuery as for any query.
import { BinaryRowReader } from "./binary-copy.ts";

const COPY_DATA = 0x64; // 'd'
const COPY_OUT_RESPONSE = 0x48; // 'H'
const NOTICE = 0x4e; // 'N'
const PARAMETER_STATUS = 0x53; // 'S'
const NOTIFICATION = 0x41; // 'A'

/** What pg's Client gives a submitted query: its connection, whose socket is `stream`. */
interface PgConnection {
  stream: NodeJS.ReadableStream & { listeners(event: "data"): ((chunk: Buffer) => void)[] };
  query(text: string): void;
}

/** A query object for pg's `client.query()` (a "Submittable"); `done` settles when pg is done with it. */
export class CopyRowsQuery {
  readonly done: Promise<number>;
  private resolve!: (rows: number) => void;
  private reject!: (err: unknown) => void;
  private readonly reader: BinaryRowReader;
  private connection: PgConnection | null = null;
  private pgOnData: ((chunk: Buffer) => void) | null = null;
  /** A protocol message cut between two of the socket's chunks: its first bytes. */
  private carry: Buffer | null = null;
  private failure: unknown = null;

  constructor(
    private readonly text: string,
    fields: number,
    onRow: (buf: Buffer, at: Int32Array) => void,
  ) {
    this.reader = new BinaryRowReader(fields, onRow);
    this.done = new Promise<number>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // Settled by pg's ReadyForQuery or error; a caller that never awaits must not crash the process.
    this.done.catch(() => {});
  }

  submit(connection: PgConnection): void {
    this.connection = connection;
    const listeners = connection.stream.listeners("data");
    if (listeners.length !== 1) throw new Error("copy rows: the connection's socket has no single reader");
    this.pgOnData = listeners[0]!;
    connection.stream.removeListener("data", this.pgOnData);
    connection.stream.on("data", this.onData);
    connection.query(this.text);
  }

  private readonly onData = (chunk: Buffer): void => {
    const buf = this.carry ? Buffer.concat([this.carry, chunk]) : chunk;
    this.carry = null;
    let o = 0;
    const n = buf.length;
    while (o + 5 <= n) {
      const code = buf[o]!;
      if (
        code !== COPY_DATA &&
        code !== COPY_OUT_RESPONSE &&
        code !== NOTICE &&
        code !== PARAMETER_STATUS &&
        code !== NOTIFICATION
      ) {
        // CopyDone, an ErrorResponse (or anything else): pg reads the rest.
        this.handBack(buf.subarray(o));
        return;
      }
      const end = o + 1 + buf.readUInt32BE(o + 1);
      if (end > n) break;
      // A row that fails to decode stops the reading (the messages are still consumed, so the
      // connection stays in step); the error is answered once PostgreSQL ends the query.
      if (code === COPY_DATA && this.failure === null) {
        try {
          this.reader.feed(buf, o + 5, end);
        } catch (err) {
          this.failure = err;
        }
      }
      o = end;
    }
    if (o < n) this.carry = buf.subarray(o);
  };

  private handBack(rest: Buffer): void {
    const stream = this.connection!.stream;
    stream.removeListener("data", this.onData);
    stream.on("data", this.pgOnData!);
    if (rest.length) this.pgOnData!(rest);
  }

  // pg calls these as for its own queries: an error (the server's, or a lost connection) settles the
  // query at once; pg sends no other query on the connection before its ReadyForQuery.
  handleError(err: unknown): void {
    this.failure ??= err;
    this.reject(this.failure);
  }

  handleCommandComplete(): void {}

  handleReadyForQuery(): void {
    if (this.failure !== null) {
      this.reject(this.failure);
      return;
    }
    try {
      this.resolve(this.reader.finish());
    } catch (err) {
      this.reject(err);
    }
  }
}
