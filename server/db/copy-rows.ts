// `COPY (…) TO STDOUT (FORMAT binary)` on a node-postgres client, its rows read in place from the
// socket's chunks (BinaryRowReader) as they arrive. pg-copy-streams' copy-to stream, which copyOut
// uses, cuts every CopyData message (one per row) out of the socket's bytes and joins them again
// into the chunks it pushes, then a reader cuts the rows out again: over the 3M order lines of a
// Full Reset's pass that bookkeeping cost the app about as much CPU as decoding the rows. This
// query follows the protocol the same way pg-copy-streams does (PostgreSQL's documented COPY
// sub-protocol): it takes the connection's socket over from pg's parser for the CopyOutResponse and
// the CopyData messages, passes the messages the server may send at any time (a notice, a
// notification, a parameter's new value) on to pg's parser whole, and hands everything from
// CopyDone on (or an ErrorResponse, or any other message) back to it, so pg reads the
// CommandComplete, ErrorResponse and ReadyForQuery as for any query.
import { BinaryRowReader } from "./binary-copy.ts";

const COPY_DATA = 0x64; // 'd'
const COPY_OUT_RESPONSE = 0x48; // 'H'
/** Messages the server may send at any time: NoticeResponse, NotificationResponse, ParameterStatus. */
const ASYNC_MESSAGES = new Set([0x4e, 0x41, 0x53]);

/** What pg's Client gives a submitted query: its connection, whose socket is `stream`. */
interface PgConnection {
  stream: NodeJS.ReadableStream & { listeners(event: "data"): ((chunk: Buffer) => void)[] };
  query(text: string): void;
  sendCopyFail?(message: string): void;
}

/** A query object for pg's `client.query()` (a "Submittable"); `done` settles when pg is done with it. */
export class CopyRowsQuery {
  readonly done: Promise<number>;
  private resolve!: (rows: number) => void;
  private reject!: (err: unknown) => void;
  private readonly reader: BinaryRowReader;
  private connection: PgConnection | null = null;
  private pgOnData: ((chunk: Buffer) => void) | null = null;
  /**
   * A protocol message cut between the socket's chunks: its pieces so far (joined once, when it is
   * whole: a message larger than many chunks is not copied again for each of them), their bytes,
   * and the bytes it needs (0 while its 5-byte head is not complete).
   */
  private pieces: Buffer[] = [];
  private pieceBytes = 0;
  private need = 0;
  /** Why the rows could not be read (the statement runs to its end regardless). */
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

  /** Called by pg when the query's turn comes; an error returned (not thrown) fails the query. */
  submit(connection: PgConnection): Error | undefined {
    const listeners = connection.stream.listeners("data");
    if (listeners.length !== 1) return new Error("copy rows: the connection's socket has no single reader");
    this.connection = connection;
    this.pgOnData = listeners[0]!;
    connection.stream.removeListener("data", this.pgOnData);
    connection.stream.on("data", this.onData);
    connection.query(this.text);
    return undefined;
  }

  private readonly onData = (chunk: Buffer): void => {
    let buf = chunk;
    if (this.pieceBytes > 0) {
      this.pieces.push(chunk);
      this.pieceBytes += chunk.length;
      if (this.need === 0 && this.pieceBytes >= 5) {
        const head = Buffer.concat(this.pieces, 5);
        this.need = 1 + head.readUInt32BE(1);
      }
      if (this.need === 0 || this.pieceBytes < this.need) return;
      buf = Buffer.concat(this.pieces, this.pieceBytes);
      this.pieces = [];
      this.pieceBytes = 0;
      this.need = 0;
    }
    let o = 0;
    const n = buf.length;
    while (o + 5 <= n) {
      const code = buf[o]!;
      if (code !== COPY_DATA && code !== COPY_OUT_RESPONSE && !ASYNC_MESSAGES.has(code)) {
        // CopyDone, an ErrorResponse (or anything else): pg reads the rest.
        this.handBack(buf.subarray(o));
        return;
      }
      const end = o + 1 + buf.readUInt32BE(o + 1);
      if (end > n) {
        this.need = end - o;
        break;
      }
      if (code === COPY_DATA) {
        // A row that fails to decode stops the reading (the messages are still consumed, so the
        // connection stays in step); the error is answered once PostgreSQL ends the query.
        if (this.failure === null) {
          try {
            this.reader.feed(buf, o + 5, end);
          } catch (err) {
            this.failure = err;
          }
        }
      } else if (code !== COPY_OUT_RESPONSE) this.pgOnData!(buf.subarray(o, end));
      o = end;
    }
    if (o < n) {
      this.pieces = [buf.subarray(o)];
      this.pieceBytes = n - o;
    }
  };

  private handBack(rest: Buffer): void {
    const stream = this.connection!.stream;
    stream.removeListener("data", this.onData);
    stream.on("data", this.pgOnData!);
    if (rest.length) this.pgOnData!(rest);
  }

  // pg calls these as for its own queries. An error of the server's or of the connection settles the
  // query at once with that error (pg sends no other query on the connection before its
  // ReadyForQuery).
  handleError(err: unknown): void {
    this.failure = err;
    this.reject(err);
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

  // A statement that is not a COPY … TO STDOUT: an error once it ends, never a crash inside pg.
  private notCopyOut(): void {
    this.failure ??= new Error("copy rows: the statement is not a COPY … TO STDOUT");
  }

  handleRowDescription(): void {
    this.notCopyOut();
  }

  handleDataRow(): void {}

  handleEmptyQuery(): void {
    this.notCopyOut();
  }

  handleCopyInResponse(connection: PgConnection): void {
    this.notCopyOut();
    connection.sendCopyFail?.("copy rows reads COPY … TO STDOUT only");
  }

  handlePortalSuspended(): void {}
}
