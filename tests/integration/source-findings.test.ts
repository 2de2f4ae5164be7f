// Every problem of the source data at once (issue 13 point 6, docs/data-format.md "When the data is
// bad"): a run reports up to 1,000 findings grouped by file and kind in its import history's
// additional_info.findings and as CSV; the fast COPY stays for good files. Also the timestamp forms
// real exports use, read in SOURCE_TIMEZONE when they carry no zone.
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../server/config.ts";
import type { FindingsRecord } from "../../shared/data-ops.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createTestDatabase, type TestDatabase, testBackend } from "../helpers/db.ts";
import { copyFixture, editFile, type PipelineHarness, pipeline } from "../helpers/pipeline.ts";

/** The small fixture with seven problems in three files (and one line that is fine but names a bad product). */
function badFixture(): string {
  const dir = copyFixture();
  editFile(dir, "products.csv", (t) =>
    t
      .replace("1002,Ink Pad Black,IP-1,,2,11,Inks,,5.00", '1002,Ink Pad Black,IP-1,,2,11,Inks,,"12,5"')
      .replace("2024-06-01T00:00:00Z", "2024-13-01 10:00:00"),
  );
  editFile(
    dir,
    "order_lines.csv",
    (t) =>
      `${t
        .replace("2,SO-1,1002,2026-06-29T10:00:00Z,1,", "2,SO-1,1002,2026-06-29T10:00:00Z,2.5,")
        .replace("4,1.50,0,cancelled", "4,1.50,0,refunded")
        .replace("8,SO-7,1003,", "8,SO-7,9999,")}3,SO-9,1001,2026-06-11T10:00:00Z,1,1.50,,completed\n`,
  );
  editFile(dir, "po_lines.csv", (t) => `${t}5005,503,1001,5\n`);
  return dir;
}

const EXPECTED = [
  ["products.csv", "type", 3, "price", 'products.csv line 3, column price: "12,5" is not a decimal number'],
  [
    "products.csv",
    "type",
    4,
    "created_at",
    'products.csv line 4, column created_at: "2024-13-01 10:00:00" is not a timestamp (YYYY-MM-DD HH:MM:SS, with or without T, Z or an offset)',
  ],
  [
    "order_lines.csv",
    "type",
    3,
    "quantity",
    'order_lines.csv line 3, column quantity: "2.5" is not a whole number',
  ],
  [
    "order_lines.csv",
    "enumeration",
    7,
    "status",
    'order_lines.csv line 7, column status: "refunded" is not one of completed, cancelled, returned',
  ],
  [
    "order_lines.csv",
    "duplicate",
    10,
    "line_id",
    "order_lines.csv line 10, column line_id: duplicate key 3 (already on an earlier line)",
  ],
  [
    "order_lines.csv",
    "reference",
    9,
    "pid",
    "order_lines.csv line 9, column pid: 9999 does not match any pid in products.csv",
  ],
  ["po_lines.csv", "format", 7, "", "po_lines.csv line 7: 4 values where the header has 5 columns"],
] as const;

const flat = (f: FindingsRecord) =>
  f.groups.flatMap((g) => g.findings.map((x) => [g.file, g.kind, x.line, x.column, x.message]));

describe(`every problem of the source data at once (${testBackend})`, () => {
  let tdb: TestDatabase;
  let p: PipelineHarness;
  let dir = "";

  beforeAll(async () => {
    tdb = await createTestDatabase();
    p = await pipeline(tdb.db, () => dir);
    dir = copyFixture();
    expect((await p.run("reset")).status).toBe("complete");
  }, 120_000);
  afterAll(async () => {
    await p.close();
    await tdb.drop();
  });

  const lastImport = () => tdb.db.prisma.importHistory.findFirstOrThrow({ orderBy: { id: "desc" } });
  const snapshot = async () => ({
    products: await tdb.db.prisma.product.findMany({ orderBy: { pid: "asc" } }),
    orders: await tdb.db.prisma.orderLine.findMany({ orderBy: { id: "asc" } }),
  });

  for (const type of ["update", "reset"] as const) {
    it(`a Full ${type === "update" ? "Update" : "Reset"} reports all seven problems of three files in one run and changes nothing`, async () => {
      const before = await snapshot();
      dir = badFixture();
      const final = await p.run(type);
      const first = EXPECTED[0][4];
      expect(final).toMatchObject({
        status: "error",
        error: `${first} (and 6 more problems in the source data: see the run's findings)`,
      });
      const imp = await lastImport();
      expect(imp.status).toBe("failed");
      const findings = (imp.additionalInfo as unknown as { findings: FindingsRecord }).findings;
      expect(findings).toMatchObject({ count: 7, truncated: false, limit: 1000 });
      // Grouped by file and kind, each group in line order.
      expect(findings.groups.map((g) => [g.file, g.kind, g.count])).toEqual([
        ["products.csv", "type", 2],
        ["order_lines.csv", "type", 1],
        ["order_lines.csv", "enumeration", 1],
        ["order_lines.csv", "duplicate", 1],
        ["order_lines.csv", "reference", 1],
        ["po_lines.csv", "format", 1],
      ]);
      expect(flat(findings).sort()).toEqual(EXPECTED.map((e) => [...e]).sort());
      // The value is kept with each finding.
      expect(findings.groups[0]!.findings[0]).toMatchObject({ value: "12,5" });
      expect(await snapshot()).toEqual(before);
    });
  }

  it("stops at 1,000 findings and says there are more", async () => {
    dir = copyFixture();
    editFile(
      dir,
      "order_lines.csv",
      (t) =>
        t +
        Array.from(
          { length: 1200 },
          (_, i) => `${1000 + i},SO-X${i},1001,2026-06-01T10:00:00Z,one,1.50,,completed\n`,
        ).join(""),
    );
    const final = await p.run("update");
    expect(final.error).toBe(
      'order_lines.csv line 10, column quantity: "one" is not a whole number (and more than 999 more problems in the source data: see the run\'s findings)',
    );
    const findings = ((await lastImport()).additionalInfo as unknown as { findings: FindingsRecord })
      .findings;
    expect(findings).toMatchObject({ count: 1000, truncated: true });
    expect(findings.groups).toHaveLength(1);
    expect(findings.groups[0]!.findings.at(-1)!.line).toBe(1009);
  });

  it("a good file still loads with COPY: a run with only good files has no findings", async () => {
    dir = copyFixture();
    expect((await p.run("update")).status).toBe("complete");
    expect((await lastImport()).additionalInfo).not.toHaveProperty("findings");
  });
});

describe(`timestamp forms and SOURCE_TIMEZONE (${testBackend})`, () => {
  let tdb: TestDatabase;
  let p: PipelineHarness;
  let dir = "";
  beforeAll(async () => {
    tdb = await createTestDatabase();
    p = await pipeline(tdb.db, () => dir, { sourceTimeZone: "Europe/Berlin" });
  });
  afterAll(async () => {
    await p.close();
    await tdb.drop();
  });

  for (const type of ["reset", "update"] as const) {
    it(`reads each form (${type}); a time without a zone is in SOURCE_TIMEZONE (Berlin, UTC+2 in summer)`, async () => {
      dir = copyFixture();
      editFile(dir, "order_lines.csv", (t) =>
        t
          .replace("1,SO-1,1001,2026-06-29T10:00:00Z", "1,SO-1,1001,2026-06-29 10:00:00")
          .replace("2,SO-1,1002,2026-06-29T10:00:00Z", "2,SO-1,1002,2026-06-29T10:00:00")
          .replace("3,SO-2,1001,2026-06-10T10:00:00Z", "3,SO-2,1001,2026-06-10 10:00:00Z")
          .replace("4,SO-3,1001,2026-05-01T10:00:00Z", "4,SO-3,1001,2026-05-01 10:00:00+05:00")
          .replace("5,SO-4,1001,2025-12-01T10:00:00Z", "5,SO-4,1001,2025-12-01T10:00:00-03:30"),
      );
      editFile(dir, "products.csv", (t) => t.replace("2025-01-01T00:00:00Z", "2025-01-01 00:00:00"));
      expect((await p.run(type)).status).toBe("complete");
      const lines = await tdb.db.prisma.orderLine.findMany({
        where: { id: { lte: 5 } },
        orderBy: { id: "asc" },
        select: { orderDate: true },
      });
      expect(lines.map((l) => l.orderDate.toISOString())).toEqual([
        "2026-06-29T08:00:00.000Z",
        "2026-06-29T08:00:00.000Z",
        "2026-06-10T10:00:00.000Z",
        "2026-05-01T05:00:00.000Z",
        "2025-12-01T13:30:00.000Z",
      ]);
      // Winter: Berlin is UTC+1.
      const p1001 = await tdb.db.prisma.product.findUniqueOrThrow({ where: { pid: 1001 } });
      expect(p1001.createdAt.toISOString()).toBe("2024-12-31T23:00:00.000Z");
      // The calculations still count days in UTC.
      const [tz] = await tdb.db.prisma.$queryRawUnsafe<{ units: number }[]>(
        "SELECT units_7d::int AS units FROM product_metrics WHERE pid = 1001",
      );
      expect(tz!.units).toBe(3);
    });
  }

  it("SOURCE_TIMEZONE must be an IANA name: anything else stops the start, naming the variable", () => {
    expect(loadConfig({ SOURCE_TIMEZONE: "America/New_York" }).sourceTimeZone).toBe("America/New_York");
    expect(loadConfig({}).sourceTimeZone).toBe("UTC");
    for (const bad of ["Mars/Base", "+02:00", "CEST later"]) {
      expect(() => loadConfig({ SOURCE_TIMEZONE: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ SOURCE_TIMEZONE: bad })).toThrow(
        /SOURCE_TIMEZONE: must be an IANA time zone/,
      );
    }
  });
});

describe(`the findings CSV (${testBackend})`, () => {
  let t: TestApp;
  let dir: string;
  let id: number;
  beforeAll(async () => {
    dir = badFixture();
    t = await startTestApp({ env: { SOURCE_DIR: dir, DEMO_DATA: "0" } });
    await t.createUser("operator", ["access:settings", "settings:data_management"]);
    await t.createUser("viewer", ["access:settings", "access:products"]);
    const { token } = await t.login("operator");
    const res = await fetch(`${t.url}/api/csv/full-update`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    const until = Date.now() + 60_000;
    while (Date.now() < until) {
      const run = await t.tdb.db.prisma.importHistory.findFirst({ orderBy: { id: "desc" } });
      if (run && run.status !== "running") {
        id = run.id;
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(id).toBeGreaterThan(0);
  }, 120_000);
  afterAll(async () => {
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const get = async (url: string, user = "operator") => {
    const { token } = await t.login(user);
    return fetch(`${t.url}${url}`, { headers: { authorization: `Bearer ${token}` } });
  };

  for (const prefix of ["", "/api"]) {
    it(`GET ${prefix}/csv/history/import/{id}/findings.csv lists every finding`, async () => {
      const res = await get(`${prefix}/csv/history/import/${id}/findings.csv`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/csv/);
      expect(res.headers.get("content-disposition")).toBe(`attachment; filename="import-${id}-findings.csv"`);
      const text = (await res.text()).replace(/^\uFEFF/, "");
      const lines = text.trimEnd().split("\r\n");
      expect(lines[0]).toBe("file,kind,line,column,value,message");
      expect(lines).toHaveLength(1 + EXPECTED.length);
      expect(lines).toContain(
        'products.csv,type,3,price,"12,5","products.csv line 3, column price: ""12,5"" is not a decimal number"',
      );
      expect(lines).toContain(
        "po_lines.csv,format,7,,,po_lines.csv line 7: 4 values where the header has 5 columns",
      );
    });
  }

  it("the history lists the findings too, and the download needs settings:data_management", async () => {
    const hist = await get("/api/csv/history/import");
    const [run] = (await hist.json()) as { id: number; additional_info: { findings: FindingsRecord } }[];
    expect(run!.id).toBe(id);
    expect(run!.additional_info.findings.count).toBe(7);
    expect((await get(`/api/csv/history/import/${id}/findings.csv`, "viewer")).status).toBe(403);
    expect((await fetch(`${t.url}/api/csv/history/import/${id}/findings.csv`)).status).toBe(401);
    const missing = await get(`/api/csv/history/import/${id + 1000}/findings.csv`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ message: `Import run ${id + 1000} does not exist` });
    expect((await get("/api/csv/history/import/abc/findings.csv")).status).toBe(400);
  });
});
