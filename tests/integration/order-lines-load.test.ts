// A Full Reset on PostgreSQL reads order_lines.csv in the app (server/jobs/order-lines-load.ts):
// binary COPY into the new table, and the calculation's pass over the lines built on the way. A
// file the app does not read exactly as the database would goes through the database's own COPY
// and the pass streamed from the table, as before. Both ways must end in the same tables, to the
// byte: the same demo data is loaded twice, the second time with one timestamp written in a form
// only the database reads (microseconds), and every table the run fills is compared.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateDemoData } from "../../scripts/lib/demo-data.ts";
import { createTestDatabase, type TestDatabase, testBackend } from "../helpers/db.ts";
import { pipeline } from "../helpers/pipeline.ts";

const TABLES = [
  "order_lines",
  "product_metrics",
  "product_stock_history",
  "product_forecasts",
  "product_forecast_accuracy",
  "product_elasticities",
  "sales_daily",
  "product_sales_weekly",
  "product_search",
  "product_search_rows",
  "brand_metrics",
  "category_metrics",
  "stock_value_weekly",
];

/** Lines demo data lacks, each in a form the app reads itself (the fixture's as-of: 2026-06-30 12:00 UTC). */
const EXTRA = [
  // A quoted order number with a comma, a time with an offset, no discount
  '900001,"SO-9,1",PID,2026-06-20 10:00:00+02:00,2,3.5,,completed',
  // No zone (the source's zone is UTC), a discount with one decimal
  "900002,SO-9002,PID,2026-06-21 09:30:00,3,4.00,0.5,completed",
  // A date alone; a correction (negative quantity); a return; a cancelled line
  "900003,SO-9003,PID,2026-06-22,1,2.25,0.00,completed",
  "900004,SO-9004,PID,2026-06-23T08:00:00.25Z,-2,2.25,0.00,completed",
  "900005,SO-9005,PID,2026-06-24T08:00:00Z,1,2.25,0.00,returned",
  "900006,SO-9006,PID,2026-06-25T08:00:00Z,5,2.25,0.00,cancelled",
  // After the as-of moment: loaded, not counted
  "900007,SO-9007,PID,2026-06-30T12:00:00.001Z,4,2.25,0.00,completed",
];

describe.skipIf(testBackend !== "postgres")("order lines read in the app during a Full Reset", () => {
  const dirs: string[] = [];
  let tdb: TestDatabase;
  beforeAll(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "order-lines-load-"));
    dirs.push(dir);
    await generateDemoData({
      out: dir,
      products: 300,
      years: 2,
      orderLines: 30_000,
      seed: 11,
      today: new Date("2026-07-01T00:00:00Z"),
    });
    const file = path.join(dir, "order_lines.csv");
    const text = fs.readFileSync(file, "utf8");
    const pid = text.split("\n")[1]!.split(",")[2]!;
    fs.writeFileSync(
      file,
      `${text.replace(/\n?$/, "\n")}${EXTRA.map((l) => l.replace("PID", pid)).join("\n")}\n`,
    );
    // The same data, its first line's time with microseconds: only the database reads that.
    const slow = fs.mkdtempSync(path.join(os.tmpdir(), "order-lines-load-db-"));
    dirs.push(slow);
    for (const f of fs.readdirSync(dir)) fs.copyFileSync(path.join(dir, f), path.join(slow, f));
    const lines = fs.readFileSync(path.join(slow, "order_lines.csv"), "utf8").split("\n");
    lines[1] = lines[1]!.replace(/T(\d\d:\d\d:\d\d)Z/, "T$1.000000Z");
    fs.writeFileSync(path.join(slow, "order_lines.csv"), lines.join("\n"));
    tdb = await createTestDatabase();
  }, 300_000);
  afterAll(async () => {
    await tdb?.drop();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  async function resetAndHash(
    dir: string,
  ): Promise<{ hashes: Record<string, string>; log: string[]; readBy: unknown }> {
    const log: string[] = [];
    const p = await pipeline(tdb.db, () => dir, {
      log: { info: (m) => log.push(m), error: (_o, m) => log.push(m) },
    });
    try {
      const end = await p.run("reset");
      expect(end.status, JSON.stringify(end).slice(0, 800)).toBe("complete");
    } finally {
      await p.close();
    }
    const hashes: Record<string, string> = {};
    for (const t of TABLES) {
      const [row] = await tdb.db.prisma.$queryRawUnsafe<{ h: string }[]>(
        `SELECT count(*) || ' ' || coalesce(md5(string_agg(j, '|' ORDER BY j)), '-') AS h
         FROM (SELECT (to_jsonb(x) - 'calculated_at')::text AS j FROM "${t}" x) s`,
      );
      hashes[t] = row!.h;
    }
    // The run's history says who read the order lines.
    const [run] = await tdb.db.prisma.$queryRawUnsafe<{ read_by: unknown }[]>(
      "SELECT additional_info->'details'->'beside'->>'read_by' AS read_by FROM import_history ORDER BY id DESC LIMIT 1",
    );
    return { hashes, log, readBy: run?.read_by };
  }

  /** A copy of the demo data with its order lines edited. */
  function variant(edit: (text: string) => string): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "order-lines-load-v-"));
    dirs.push(dir);
    for (const f of fs.readdirSync(dirs[0]!)) fs.copyFileSync(path.join(dirs[0]!, f), path.join(dir, f));
    const file = path.join(dir, "order_lines.csv");
    fs.writeFileSync(file, edit(fs.readFileSync(file, "utf8")));
    return dir;
  }

  let fastHashes: Record<string, string> = {};

  it("fills every table exactly as the database's own COPY and pass do", async () => {
    const fast = await resetAndHash(dirs[0]!);
    fastHashes = fast.hashes;
    expect(fast.readBy).toBe("app");
    expect(fast.log.filter((m) => m.includes("loaded by the database's COPY"))).toEqual([]);
    const slow = await resetAndHash(dirs[1]!);
    expect(slow.readBy).toBe("database");
    expect(slow.log.some((m) => m.includes("order_lines.csv: loaded by the database's COPY (line 2)"))).toBe(
      true,
    );
    const fileLines = fs
      .readFileSync(path.join(dirs[0]!, "order_lines.csv"), "utf8")
      .trimEnd()
      .split("\n").length;
    expect(fast.hashes.order_lines).toMatch(new RegExp(`^${fileLines - 1} `));
    expect(fast.hashes).toEqual(slow.hashes);
    // The extra lines as the database stores them.
    const rows = await tdb.db.prisma.$queryRawUnsafe<
      { id: number; order_number: string; at: string; discount: string }[]
    >(
      `SELECT id, order_number, to_char(order_date AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS') AS at,
              discount::text FROM order_lines WHERE id >= 900001 ORDER BY id`,
    );
    expect(rows.map((r) => [r.id, r.order_number, r.at, r.discount])).toEqual([
      [900001, "SO-9,1", "2026-06-20 08:00:00.000", "0.00"],
      [900002, "SO-9002", "2026-06-21 09:30:00.000", "0.50"],
      [900003, "SO-9003", "2026-06-22 00:00:00.000", "0.00"],
      [900004, "SO-9004", "2026-06-23 08:00:00.250", "0.00"],
      [900005, "SO-9005", "2026-06-24 08:00:00.000", "0.00"],
      [900006, "SO-9006", "2026-06-25 08:00:00.000", "0.00"],
      [900007, "SO-9007", "2026-06-30 12:00:00.001", "0.00"],
    ]);
  }, 300_000);

  it("reads a file with Windows line ends the same; one stray carriage return fails as the database says", async () => {
    const crlf = await resetAndHash(variant((t) => t.replace(/\n/g, "\r\n")));
    expect(crlf.log.filter((m) => m.includes("loaded by the database's COPY"))).toEqual([]);
    expect(crlf.readBy).toBe("app");
    expect(crlf.hashes).toEqual(fastHashes);

    const dir = variant((t) => t.replace(/\n(900003,)/, "\r\n$1"));
    const p = await pipeline(tdb.db, () => dir);
    try {
      const end = await p.run("reset");
      expect(end.status).toBe("error");
      expect(end.error).toMatch(/^order_lines\.csv line \d+: unquoted carriage return found in data/);
    } finally {
      await p.close();
    }
  }, 300_000);

  it("runs as a role that is not a superuser (the app's usual database user)", async () => {
    const owned = await createTestDatabase({ owner: "bo_test_owner" });
    try {
      const p = await pipeline(owned.db, () => dirs[0]!);
      try {
        const end = await p.run("reset");
        expect(end.status, JSON.stringify(end).slice(0, 500)).toBe("complete");
      } finally {
        await p.close();
      }
      const [run] = await owned.db.prisma.$queryRawUnsafe<{ read_by: unknown; su: boolean }[]>(
        `SELECT additional_info->'details'->'beside'->>'read_by' AS read_by,
                (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS su
         FROM import_history ORDER BY id DESC LIMIT 1`,
      );
      expect(run).toEqual({ read_by: "app", su: false });
    } finally {
      await owned.drop();
    }
  }, 300_000);
});
