// The binary COPY decoder's numeric and timestamp columns (server/db/binary-copy.ts) against the
// database's own output, and the pass over the order lines built on them (order-lines-pass.ts): its
// UTC days and whole-cent amounts must be what the database's date conversion and numeric arithmetic
// give.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BinaryRowWriter, int4At, int8At, readBinaryCopy } from "../../server/db/binary-copy.ts";
import type { SqlConnection } from "../../server/db/database.ts";
import { RunShared, streamOrderLines } from "../../server/jobs/order-lines-pass.ts";
import { createTestDatabase, type TestDatabase, testBackend } from "../helpers/db.ts";

describe(`binary COPY of numerics and timestamps (${testBackend})`, () => {
  let tdb: TestDatabase;
  let conn: SqlConnection;
  beforeAll(async () => {
    tdb = await createTestDatabase();
    conn = await tdb.db.connect();
  });
  afterAll(async () => {
    await conn?.release();
    await tdb?.drop();
  });

  const read = async (sql: string, types: Parameters<typeof readBinaryCopy>[1]) => {
    const rows: unknown[][] = [];
    await readBinaryCopy(conn.copyOut(`COPY (${sql}) TO STDOUT (FORMAT binary)`), types, (r) =>
      rows.push([...r]),
    );
    return rows;
  };

  it("reads numerics with up to two decimals as whole cents, and timestamps as microseconds since 2000", async () => {
    const values = [
      "0",
      "0.01",
      "-0.01",
      "0.10",
      "12.34",
      "-12.3",
      "100.5",
      "10000",
      "1234567.89",
      "9999999999.99",
    ];
    const rows = await read(
      `SELECT v::numeric(12,2), v::numeric FROM unnest(ARRAY[${values.map((v) => `'${v}'`).join(",")}]) v`,
      ["cents", "cents"],
    );
    const cents = values.map((v) => Math.round(Number(v) * 100));
    expect(rows).toEqual(cents.map((c) => [c, c]));
    const times = await read(
      `SELECT t::timestamptz FROM unnest(ARRAY['2000-01-01 00:00Z', '1999-12-31 23:00Z', '2026-03-01 23:59:59.999Z', '2026-03-02 00:00:00.001+01']) t`,
      ["timestamptz"],
    );
    expect(times.map((r) => r[0])).toEqual([
      0,
      -3_600_000_000,
      (Date.parse("2026-03-01T23:59:59.999Z") - Date.parse("2000-01-01T00:00:00Z")) * 1000,
      (Date.parse("2026-03-01T23:00:00.001Z") - Date.parse("2000-01-01T00:00:00Z")) * 1000,
    ]);
  });

  it("refuses a third decimal and a NaN rather than round them", async () => {
    await expect(read("SELECT 1.234::numeric", ["cents"])).rejects.toThrow(/whole cents/);
    await expect(read("SELECT 'NaN'::numeric", ["cents"])).rejects.toThrow(/not a number/);
  });

  it("gives each order line the database's UTC day and quantity × price − discount in cents", async () => {
    await conn.exec(`
      INSERT INTO products (pid, title, price, stock_quantity, created_at)
      VALUES (1, 'One', 1, 0, now()), (2, 'Two', 1, 0, now());
      INSERT INTO order_lines (id, order_number, pid, order_date, quantity, price, discount, status) VALUES
        (1, 'A', 1, '2026-02-28 23:59:59.999+00', 3, 19.99, 0.97, 'completed'),
        (2, 'B', 2, '2026-03-01 00:30:00+02', -2, 4.50, 0, 'completed'),
        (3, 'C', 1, '2026-03-01 12:00:00+00', 1, 1234567.89, 0.01, 'returned'),
        (4, 'D', 2, '2026-03-01 12:00:00+00', 5, 2.00, 0, 'cancelled'),
        (5, 'E', 1, '2026-03-02 00:00:00+00', 1, 1.00, 0, 'completed'),
        (9, 'A', 2, '2026-02-28 10:00:00+00', 1, 1.00, 0, 'completed');`);
    const pass = await streamOrderLines(conn, new Date("2026-03-01T23:59:59Z"));
    const expected = await conn.query<{ pid: number; day: number; done: number; q: number; cents: string }>(
      `SELECT pid, ((order_date AT TIME ZONE 'UTC')::date - DATE '1970-01-01') AS day,
         (status = 'completed')::int AS done, quantity AS q, ((quantity * price - discount) * 100)::int8::text AS cents
       FROM order_lines WHERE status IN ('completed', 'returned') AND order_date <= '2026-03-01T23:59:59Z'
       ORDER BY id`,
    );
    const c = pass.chunks[0]!;
    const got = Array.from({ length: c.n }, (_, j) => ({
      pid: pass.pids[c.product[j]!],
      day: c.day[j],
      done: c.done[j],
      q: c.quantity[j],
      cents: String(c.amountC[j]),
    }));
    expect(pass.lines).toBe(4);
    // Orders per UTC day: A (two lines) and B on Feb 28; C is a return, D cancelled, E after asOf.
    expect([...pass.ordersByDay]).toEqual([[Date.UTC(2026, 1, 28) / 86_400_000, 2]]);
    expect(got).toEqual(expected);
    // The discounted lines keep their discount aside (line number in stream order, cents).
    expect(pass.discounts.n).toBe(2);
    expect(Array.from(pass.discounts.line.subarray(0, 2))).toEqual([0, 2]);
    expect(Array.from(pass.discounts.cents.subarray(0, 2))).toEqual([97, 1]);
    expect(pass.unknownPids).toBe(0);
    // A pid that is not among the products is counted wherever its line is (a cancelled line, a line
    // after the as-of day, a completed one): the pass answers the import's reference check.
    await conn.exec(`
      INSERT INTO order_lines (id, order_number, pid, order_date, quantity, price, discount, status) VALUES
        (6, 'F', 9, '2026-02-01 12:00:00+00', 1, 1.00, 0, 'cancelled'),
        (7, 'G', 8, '2026-03-05 12:00:00+00', 1, 1.00, 0, 'completed'),
        (8, 'H', 7, '2026-02-01 12:00:00+00', 1, 1.00, 0, 'returned');`);
    const again = await streamOrderLines(conn, new Date("2026-03-01T23:59:59Z"));
    expect(again.unknownPids).toBe(3);
    expect(again.lines).toBe(4);
  });

  it("takes binary COPY input (the stock walk's runs are written so) on both databases", async () => {
    await conn.exec("CREATE TEMP TABLE bin_in (a int, d date)");
    // Rows (int4, date as days since 2000-01-01), in two chunks cut inside a row.
    const row = (a: number, d: number) => {
      const b = Buffer.alloc(18);
      b.writeInt16BE(2, 0);
      b.writeInt32BE(4, 2);
      b.writeInt32BE(a, 6);
      b.writeInt32BE(4, 10);
      b.writeInt32BE(d, 14);
      return b;
    };
    const header = Buffer.alloc(19);
    header.write("PGCOPY\n\xff\r\n\0", "latin1");
    const trailer = Buffer.from([0xff, 0xff]);
    const all = Buffer.concat([header, row(-2147483648, -1), row(7, 9556), trailer]);
    const n = await conn.copyCsv({
      table: "bin_in",
      columns: ["a", "d"],
      source: [all.subarray(0, 30), all.subarray(30)],
      header: false,
      binary: true,
    });
    expect(n).toBe(2);
    const back = await conn.query("SELECT a, to_char(d, 'YYYY-MM-DD') AS d FROM bin_in ORDER BY a");
    expect(back).toEqual([
      { a: -2147483648, d: "1999-12-31" },
      { a: 7, d: "2026-03-01" },
    ]);
  });

  it("keeps a run's pass for its modules until the last module that reads it has ended", async () => {
    const asOf = new Date("2026-03-01T23:59:59Z");
    const shared = new RunShared(["forecast", "sales_series"]);
    const first = shared.orderLines(conn, asOf);
    expect(shared.orderLines(conn, asOf)).toBe(first);
    shared.moduleDone("planning"); // not a reader
    shared.moduleDone("forecast");
    expect(shared.orderLines(conn, asOf)).toBe(first);
    shared.moduleDone("sales_series");
    const again = shared.orderLines(conn, asOf);
    expect(again).not.toBe(first);
    expect((await again).lines).toBe((await first).lines);
  });

  // copyOutRows reads PostgreSQL's rows in place from the socket (copy-rows.ts): rows of every size
  // across the socket's chunks, a row larger than a chunk, and the connection still in step after
  // each way it can fail.
  const rowsOf = async (sql: string) => {
    const got: [number, number, string | null][] = [];
    const n = await conn.copyOutRows(`COPY (${sql}) TO STDOUT (FORMAT binary)`, 3, (buf, at) => {
      const len = at[2] === -1 ? 0 : int4At(buf, at[2]! - 4);
      got.push([
        int4At(buf, at[0]!),
        int8At(buf, at[1]!),
        at[2] === -1 ? null : buf.toString("utf8", at[2]!, at[2]! + len),
      ]);
    });
    return { n, got };
  };

  it("streams rows of every size whole, as COPY wrote them", async () => {
    const sql = `SELECT g, g::int8 * 1000003, CASE WHEN g % 97 = 0 THEN NULL WHEN g = 777 THEN repeat('é', 400000)
      ELSE repeat(chr(65 + g % 26), g % 300) END FROM generate_series(1, 30000) g`;
    const { n, got } = await rowsOf(sql);
    expect(n).toBe(30_000);
    const expected: unknown[][] = [];
    await readBinaryCopy(
      conn.copyOut(`COPY (${sql}) TO STDOUT (FORMAT binary)`),
      ["int4", "int8", "text"],
      (r) => expected.push([...r]),
    );
    expect(got).toEqual(expected);
    expect(got[776]![2]).toHaveLength(400_000);
    expect(got[96]![2]).toBeNull();
    // The connection goes on as before.
    expect(await conn.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
  });

  it("fails with the database's error, or the reader's, and leaves the connection usable", async () => {
    await expect(rowsOf("SELECT nope FROM nowhere")).rejects.toThrow(/nowhere/);
    expect(await conn.query("SELECT 2 AS two")).toEqual([{ two: 2 }]);
    // An error after rows were sent.
    await expect(
      rowsOf("SELECT g, 1 / (20000 - g)::int8, 'x' FROM generate_series(1, 30000) g"),
    ).rejects.toThrow(/division by zero/);
    expect(await conn.query("SELECT 3 AS three")).toEqual([{ three: 3 }]);
    // A row of the wrong shape, and a row handler that throws: the rest is read to its end.
    await expect(
      conn.copyOutRows(
        "COPY (SELECT g FROM generate_series(1, 5000) g) TO STDOUT (FORMAT binary)",
        3,
        () => {},
      ),
    ).rejects.toThrow(/1 fields where 3/);
    let seen = 0;
    await expect(
      conn.copyOutRows(
        "COPY (SELECT g FROM generate_series(1, 50000) g) TO STDOUT (FORMAT binary)",
        1,
        () => {
          if (++seen === 10) throw new Error("stop here");
        },
      ),
    ).rejects.toThrow("stop here");
    expect(seen).toBe(10);
    expect(await conn.query("SELECT 4 AS four")).toEqual([{ four: 4 }]);
    // A statement that is not a COPY out.
    await expect(conn.copyOutRows("SELECT 1", 1, () => {})).rejects.toThrow();
    expect(await conn.query("SELECT 5 AS five")).toEqual([{ five: 5 }]);
  });

  it("streams on through notices the statement raises", async () => {
    await conn.exec(`CREATE FUNCTION pg_temp.noisy(i int) RETURNS int LANGUAGE plpgsql AS $$
      BEGIN IF i % 1000 = 0 THEN RAISE NOTICE 'row %', i; END IF; RETURN i; END $$`);
    const seen: number[] = [];
    const n = await conn.copyOutRows(
      "COPY (SELECT pg_temp.noisy(g) FROM generate_series(1, 20000) g) TO STDOUT (FORMAT binary)",
      1,
      (buf, at) => seen.push(int4At(buf, at[0]!)),
    );
    expect(n).toBe(20_000);
    expect(seen).toEqual(Array.from({ length: 20_000 }, (_, i) => i + 1));
    expect(await conn.query("SELECT 6 AS six")).toEqual([{ six: 6 }]);
  });

  it("writes binary COPY input of ints, booleans, text, float8 and float8[] as the database reads them", async () => {
    await conn.exec("CREATE TEMP TABLE bin_rows (a int, b bool, t text, f float8, arr float8[])");
    // A small chunk size, so rows cross chunks and a long array grows the buffer.
    const out = new BinaryRowWriter(64);
    const chunks: Buffer[] = [];
    const floats = [0.1, -0, 1 / 3, 1e21, -2.5e-300, Number.NaN, Number.POSITIVE_INFINITY];
    floats.forEach((f, i) => {
      out.row(5);
      out.int4(i - 1);
      out.bool(i % 2 === 0);
      out.text(i === 0 ? 'é🎨 "quoted", comma' : `row ${i}`);
      out.float8(i === 3 ? null : f);
      if (i === 4) out.null();
      else out.float8Array(i === 2 ? Array.from({ length: 500 }, (_, k) => k / 7) : [f, -0, 2]);
      if (out.full) chunks.push(out.take());
    });
    chunks.push(out.end());
    const n = await conn.copyCsv({
      table: "bin_rows",
      columns: ["a", "b", "t", "f", "arr"],
      source: chunks,
      header: false,
      binary: true,
    });
    expect(n).toBe(floats.length);
    const back = await conn.query<{ a: number; b: boolean; t: string; f: string | null; arr: string | null }>(
      "SELECT a, b, t, f::text AS f, arr::text AS arr FROM bin_rows ORDER BY a",
    );
    expect(back.map((r) => r.t)).toEqual([
      'é🎨 "quoted", comma',
      "row 1",
      "row 2",
      "row 3",
      "row 4",
      "row 5",
      "row 6",
    ]);
    expect(back.map((r) => r.b)).toEqual([true, false, true, false, true, false, true]);
    // The same text as CSV input of String(f) gives (−0 as 0).
    expect(back.map((r) => r.f)).toEqual([
      "0.1",
      "0",
      "0.3333333333333333",
      null,
      "-2.5e-300",
      "NaN",
      "Infinity",
    ]);
    expect(back[0]!.arr).toBe("{0.1,0,2}");
    expect(back[4]!.arr).toBeNull();
    const long = await conn.query<{ n: number; last: number }>(
      "SELECT array_length(arr, 1) AS n, arr[500] AS last FROM bin_rows WHERE a = 1",
    );
    expect(long).toEqual([{ n: 500, last: 499 / 7 }]);
  });

  it("writes numerics from whole units exactly, and dates, as the database reads them", async () => {
    await conn.exec("CREATE TEMP TABLE bin_num (i int, n numeric, m numeric(14,2), d date)");
    // (Cents from 0 to 9,999.99 take a shorter way: 5, 1,234, 9,999, 10,000, 999,999 among them.)
    const units = [
      0, 1, -1, 5, 99, 100, -100, 1234, 9999, 10000, 123456, 999999, 1000000, -123456, 100000000, 99999999,
      9007199254740991, -9007199254740991,
    ];
    const text = (u: number, places: number) => {
      const a = BigInt(Math.abs(u))
        .toString()
        .padStart(places + 1, "0");
      const t = places ? `${a.slice(0, -places)}.${a.slice(-places)}` : a;
      return u < 0 ? `-${t}` : t;
    };
    const out = new BinaryRowWriter(64);
    const chunks: Buffer[] = [];
    units.forEach((u, i) => {
      for (const places of [0, 2, 4]) {
        out.row(4);
        out.int4(i * 10 + places);
        out.numeric(u, places);
        if (Math.abs(u) < 10 ** 12) out.numeric(u, 2);
        else out.null();
        out.date(20_000 + i - 11_000);
        if (out.full) chunks.push(out.take());
      }
    });
    chunks.push(out.end());
    await conn.copyCsv({
      table: "bin_num",
      columns: ["i", "n", "m", "d"],
      source: chunks,
      header: false,
      binary: true,
    });
    const back = await conn.query<{ i: number; n: string; m: string | null; d: string }>(
      "SELECT i, n::text AS n, m::text AS m, to_char(d, 'YYYY-MM-DD') AS d FROM bin_num ORDER BY i",
    );
    expect(back).toEqual(
      units.flatMap((u, i) =>
        [0, 2, 4].map((places) => ({
          i: i * 10 + places,
          n: text(u, places),
          m: Math.abs(u) < 10 ** 12 ? text(u, 2) : null,
          d: new Date((20_000 + i - 11_000) * 86_400_000).toISOString().slice(0, 10),
        })),
      ),
    );
    expect(() => new BinaryRowWriter().numeric(0.5, 2)).toThrow(/whole number/);
  });
});
