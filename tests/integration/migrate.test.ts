import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MIGRATIONS_DIR, MigrationError, migrate, readMigrations } from "../../server/db/migrate.ts";
import { createTestDatabase, type TestDatabase, testBackend } from "../helpers/db.ts";

interface Row {
  id: string;
  checksum: string;
  migration_name: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
  applied_steps_count: number;
  logs: string | null;
}

describe(`migrator (${testBackend})`, () => {
  let tdb: TestDatabase;
  beforeAll(async () => {
    tdb = await createTestDatabase({ migrated: false });
  });
  afterAll(() => tdb.drop());

  async function rows(): Promise<Row[]> {
    const conn = await tdb.db.connect();
    try {
      return await conn.query<Row>(`SELECT * FROM "_prisma_migrations" ORDER BY migration_name, started_at`);
    } finally {
      await conn.release();
    }
  }

  it("applies every migration once and records it the way Prisma does", async () => {
    const files = readMigrations();
    expect(files.length).toBeGreaterThan(0);
    const first = await migrate(tdb.db);
    expect(first.applied).toEqual(files.map((f) => f.name));

    const recorded = await rows();
    expect(recorded.map((r) => r.migration_name)).toEqual(files.map((f) => f.name));
    for (const r of recorded) {
      const sql = fs.readFileSync(path.join(MIGRATIONS_DIR, r.migration_name, "migration.sql"));
      expect(r.checksum).toBe(createHash("sha256").update(sql).digest("hex"));
      expect(r.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(r.finished_at).toBeInstanceOf(Date);
      expect(r.rolled_back_at).toBeNull();
      expect(r.applied_steps_count).toBe(1);
    }
    // The schema is really there.
    const count = await tdb.db.prisma.user.count();
    expect(count).toBe(0);

    const second = await migrate(tdb.db);
    expect(second.applied).toEqual([]);
    expect(second.alreadyApplied).toBe(files.length);
  });

  it("rolls back a failing migration, records it as rolled back, and applies it once fixed", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "migrations-"));
    fs.cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    const bad = path.join(dir, "99990101000000_broken");
    fs.mkdirSync(bad);
    fs.writeFileSync(
      path.join(bad, "migration.sql"),
      `CREATE TABLE half_done (id int);\nSELECT no_such_function();\n`,
    );

    await expect(migrate(tdb.db, { dir })).rejects.toThrow(MigrationError);
    await expect(migrate(tdb.db, { dir })).rejects.toThrow(
      /99990101000000_broken failed and was rolled back/,
    );
    const conn = await tdb.db.connect();
    const tables = await conn.query(`SELECT 1 FROM information_schema.tables WHERE table_name = 'half_done'`);
    await conn.release();
    expect(tables).toHaveLength(0);
    const broken = (await rows()).filter((r) => r.migration_name === "99990101000000_broken");
    expect(broken.length).toBeGreaterThan(0);
    expect(broken.every((r) => r.rolled_back_at !== null && r.finished_at === null)).toBe(true);
    expect(broken[0]!.logs).toMatch(/no_such_function/);

    fs.writeFileSync(path.join(bad, "migration.sql"), `CREATE TABLE half_done (id int);\n`);
    const fixed = await migrate(tdb.db, { dir });
    expect(fixed.applied).toEqual(["99990101000000_broken"]);

    // A script with its own COMMIT may have half-applied: it stays failed until a person resolves it.
    const own = path.join(dir, "99990102000000_own_transaction");
    fs.mkdirSync(own);
    fs.writeFileSync(
      path.join(own, "migration.sql"),
      "BEGIN;\nCREATE TABLE first_half (id int);\nCOMMIT;\nSELECT no_such_function();\n",
    );
    await expect(migrate(tdb.db, { dir })).rejects.toThrow(/99990102000000_own_transaction failed/);
    const failed = (await rows()).find((r) => r.migration_name === "99990102000000_own_transaction")!;
    expect(failed).toMatchObject({ finished_at: null, rolled_back_at: null });
    await expect(migrate(tdb.db, { dir })).rejects.toThrow(/started but did not finish/);
    fs.rmSync(dir, { recursive: true });
  });
});

describe.runIf(testBackend === "postgres")("two migrators at once (postgres)", () => {
  let tdb: TestDatabase;
  beforeAll(async () => {
    tdb = await createTestDatabase({ migrated: false });
  });
  afterAll(() => tdb.drop());

  it("lets exactly one apply the migrations while the other waits for it", async () => {
    const other = await tdb.openAnother();
    const [a, b] = await Promise.all([migrate(tdb.db), migrate(other)]);
    const files = readMigrations();
    expect([...a.applied, ...b.applied].sort()).toEqual(files.map((f) => f.name).sort());
    expect([a.applied.length, b.applied.length].sort()).toEqual([0, files.length]);
    const conn = await tdb.db.connect();
    const recorded = await conn.query(`SELECT migration_name FROM "_prisma_migrations"`);
    await conn.release();
    expect(recorded).toHaveLength(files.length);
  });
});

describe.runIf(testBackend === "pglite")("two migrators at once (embedded)", () => {
  it("serialises concurrent calls on the single embedded connection", async () => {
    const tdb = await createTestDatabase({ migrated: false });
    const [a, b] = await Promise.all([migrate(tdb.db), migrate(tdb.db)]);
    expect(a.applied.length + b.applied.length).toBe(readMigrations().length);
    await tdb.drop();
  });
});
