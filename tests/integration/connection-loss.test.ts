// Losing the database connections during a run (a failover, a restart of PostgreSQL, a proxy
// timeout: here pg_terminate_backend on every connection of the app) must not end the process:
// the run ends as failed with "the database connection was lost", the previous data is intact,
// the server keeps serving, and the next run works. PostgreSQL only (PGlite is in-process).
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { testBackend } from "../helpers/db.ts";
import { FIXTURE_DIR } from "../helpers/pipeline.ts";

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(testBackend !== "postgres")("a lost database connection during a run", () => {
  let t: TestApp;
  let auth: Record<string, string>;
  let admin: pg.Client;
  beforeAll(async () => {
    t = await startTestApp({ env: { SOURCE_DIR: FIXTURE_DIR, PIPELINE_STEP_DELAY_MS: "100" } });
    auth = { authorization: `Bearer ${(await t.login("admin")).token}` };
    admin = new pg.Client({ connectionString: t.tdb.url, application_name: "test-admin" });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await t?.close();
  });

  /** The run's row as the database holds it (read on the test's own connection). */
  async function runRow(id: number) {
    const { rows } = await admin.query("SELECT status, error FROM data_runs WHERE id = $1", [id]);
    return rows[0] as { status: string; error: string | null };
  }
  async function untilEnded(id: number) {
    for (let i = 0; i < 600; i++) {
      const row = await runRow(id);
      if (row.status !== "running") return row;
      await wait(100);
    }
    throw new Error(`run ${id} did not end`);
  }
  async function start(type: "full-reset" | "full-update") {
    const res = await fetch(`${t.url}/csv/${type}`, { method: "POST", headers: auth });
    expect(res.status).toBe(200);
    return ((await res.json()) as { run_id: number }).run_id;
  }
  const snapshot = async () =>
    (
      await admin.query(
        `SELECT (SELECT count(*) FROM products)::int AS products, (SELECT count(*) FROM order_lines)::int AS lines,
                (SELECT max(calculated_at) FROM product_metrics) AS calculated`,
      )
    ).rows[0];

  it("fails the run, keeps the data and the server, and the next run works", async () => {
    expect((await untilEnded(await start("full-reset"))).status).toBe("completed");
    const before = await snapshot();

    for (const type of ["full-reset", "full-update"] as const) {
      const id = await start(type);
      // Mid-run: past the first steps.
      for (let i = 0; i < 200; i++) {
        const { rows } = await admin.query(
          "SELECT count(*)::int AS n FROM data_run_events WHERE run_id = $1",
          [id],
        );
        if (rows[0].n >= 6) break;
        await wait(50);
      }
      const { rows: killed } = await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      );
      expect(killed.length).toBeGreaterThan(0);

      const ended = await untilEnded(id);
      expect(ended.status, type).toBe("failed");
      expect(ended.error, type).toMatch(/^The database connection was lost during the run/);
      expect(await snapshot(), type).toEqual(before);

      // Still serving, from the database too.
      expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
      let ready = 0;
      for (let i = 0; i < 20 && ready !== 200; i++) {
        ready = (await fetch(`${t.url}/readyz`)).status;
        if (ready !== 200) await wait(100);
      }
      expect(ready).toBe(200);
      const settings = await fetch(`${t.url}/config/global`, { headers: auth });
      expect(settings.status).toBe(200);
    }

    // The next runs work.
    expect((await untilEnded(await start("full-update"))).status).toBe("completed");
    expect((await untilEnded(await start("full-reset"))).status).toBe("completed");
  }, 180_000);
});
