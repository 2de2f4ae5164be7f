// The promotion dips' measurement runs in the background (docs/metrics.md §16.2): after a failed
// measurement, simulations' nudges leave it alone for a while instead of each paying seconds of
// database time again, while a run's completion always tries; and a run about to swap its tables
// stops a measurement in progress instead of waiting for it (PostgreSQL: PGlite has one connection).
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  abortPromotionDips,
  ensurePromotionDips,
  promotionDipsSettled,
  refreshPromotionDips,
} from "../../server/modules/discounts/promotion-dip.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { testBackend } from "../helpers/db.ts";
import { FIXTURE_DIR } from "../helpers/pipeline.ts";

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe(`the promotion dips in the background (${testBackend})`, () => {
  let t: TestApp;
  let auth: Record<string, string>;
  beforeAll(async () => {
    t = await startTestApp({ env: { SOURCE_DIR: FIXTURE_DIR } });
    auth = { authorization: `Bearer ${(await t.login("admin")).token}` };
    const res = await t.app.inject({ method: "POST", url: "/csv/full-reset", headers: auth });
    expect(res.statusCode).toBe(200);
    const id = res.json().run_id as number;
    for (;;) {
      const run = await t.tdb.db.prisma.dataRun.findUniqueOrThrow({ where: { id } });
      if (run.status !== "running") {
        expect(run.status).toBe("completed");
        break;
      }
      await wait(100);
    }
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  const mark = async () =>
    (
      await t.tdb.db.prisma.$queryRawUnsafe<{ at: Date | null }[]>(
        "SELECT (SELECT last_calculation_timestamp FROM calculate_status WHERE module_name = 'promotion_dips') AS at",
      )
    )[0]!.at;
  const elasticityAt = async () =>
    (
      await t.tdb.db.prisma.$queryRawUnsafe<{ at: Date }[]>(
        "SELECT last_calculation_timestamp AS at FROM calculate_status WHERE module_name = 'elasticity'",
      )
    )[0]!.at;
  const forget = () =>
    t.tdb.db.prisma.$executeRawUnsafe("DELETE FROM calculate_status WHERE module_name = 'promotion_dips'");

  it("after the run, the dips are measured for its calculation", async () => {
    // The server starts the measurement once the run is complete (its after-import step).
    for (let i = 0; i < 200 && (await mark()) === null; i++) await wait(50);
    await promotionDipsSettled(t.tdb.db);
    expect(await mark()).toEqual(await elasticityAt());
  });

  it("after a failure, nudges wait before trying again; a run's completion (force) always tries", async () => {
    await promotionDipsSettled(t.tdb.db);
    await forget();
    // The measurement fails while its table is missing.
    await t.tdb.db.prisma.$executeRawUnsafe("ALTER TABLE category_promotion_dips RENAME TO dips_away");
    const errors: unknown[] = [];
    const onError = (err: unknown) => errors.push(err);
    try {
      await refreshPromotionDips(t.tdb.db, onError);
      expect(errors).toHaveLength(1);
      // A simulation's nudge right after: left alone (no second failure, nothing measured).
      await refreshPromotionDips(t.tdb.db, onError);
      expect(errors).toHaveLength(1);
      // A run's completion tries anyway (and fails again here).
      await refreshPromotionDips(t.tdb.db, onError, { force: true });
      expect(errors).toHaveLength(2);
    } finally {
      await t.tdb.db.prisma.$executeRawUnsafe("ALTER TABLE dips_away RENAME TO category_promotion_dips");
    }
    // Mended: a nudge still waits out the back-off, so nothing is measured yet…
    await refreshPromotionDips(t.tdb.db, onError);
    expect(await mark()).toBeNull();
    // …a forced try measures, and a success ends the back-off.
    await refreshPromotionDips(t.tdb.db, onError, { force: true });
    expect(errors).toHaveLength(2);
    expect(await mark()).toEqual(await elasticityAt());
    await forget();
    await refreshPromotionDips(t.tdb.db, onError);
    expect(await mark()).toEqual(await elasticityAt());
  });

  it.skipIf(testBackend !== "postgres")(
    "a run does not wait for a measurement in progress: it stops it, and measures again after",
    async () => {
      // A measurement held in the middle: it has read the order lines (its transaction holds them)
      // and waits to write its table, which another session keeps locked.
      const blocker = new pg.Client({ connectionString: t.tdb.url });
      await blocker.connect();
      try {
        await blocker.query("BEGIN");
        await blocker.query("LOCK TABLE category_promotion_dips IN EXCLUSIVE MODE");
        await forget();
        const errors: unknown[] = [];
        const measuring = refreshPromotionDips(t.tdb.db, (err) => errors.push(err), { force: true });
        for (let i = 0; ; i++) {
          // Waiting for a lock while it holds the order lines it has read.
          const { rows } = await blocker.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid
             WHERE a.wait_event_type = 'Lock' AND l.granted AND l.relation = 'order_lines'::regclass`,
          );
          if (rows[0].n > 0) break;
          if (i > 500) throw new Error("the measurement never reached its write");
          await wait(20);
        }
        // A Full Reset replaces order_lines: its swap needs the table to itself. It completes while
        // the blocked measurement would have held it up for as long as the lock above stays.
        const res = await t.app.inject({ method: "POST", url: "/csv/full-reset", headers: auth });
        const id = res.json().run_id as number;
        const started = Date.now();
        let status = "running";
        while (status === "running" && Date.now() - started < 60_000) {
          await wait(100);
          status = (await t.tdb.db.prisma.dataRun.findUniqueOrThrow({ where: { id } })).status;
        }
        expect(status).toBe("completed");
        // The stopped measurement is not a failure, and wrote nothing.
        await measuring;
        expect(errors).toEqual([]);
      } finally {
        await blocker.query("ROLLBACK").catch(() => undefined);
        await blocker.end();
      }
      // The run's completion measures its own calculation once the table is free.
      await promotionDipsSettled(t.tdb.db);
      await ensurePromotionDips(t.tdb.db);
      expect(await mark()).toEqual(await elasticityAt());
    },
    120_000,
  );
  it.skipIf(testBackend !== "postgres")(
    "a measurement cancelled by anything but a run (an operator, a statement timeout) is a failure",
    async () => {
      await promotionDipsSettled(t.tdb.db);
      const blocker = new pg.Client({ connectionString: t.tdb.url });
      await blocker.connect();
      const errors: unknown[] = [];
      try {
        await blocker.query("BEGIN");
        await blocker.query("LOCK TABLE category_promotion_dips IN EXCLUSIVE MODE");
        await forget();
        const measuring = refreshPromotionDips(t.tdb.db, (err) => errors.push(err), { force: true });
        // An operator cancels the measurement's statement while it waits for the table.
        for (let i = 0; ; i++) {
          const { rows } = await blocker.query(
            `SELECT count(pg_cancel_backend(a.pid))::int AS n FROM pg_stat_activity a
             WHERE a.wait_event_type = 'Lock' AND a.pid <> pg_backend_pid() AND a.datname = current_database()`,
          );
          if (rows[0].n > 0) break;
          if (i > 500) throw new Error("the measurement never reached its write");
          await wait(20);
        }
        await measuring;
      } finally {
        await blocker.query("ROLLBACK").catch(() => undefined);
        await blocker.end();
      }
      expect(errors).toHaveLength(1);
      expect(String((errors[0] as Error).message)).toMatch(/cancel/);
      // Nothing was measured; the next forced try measures.
      expect(await mark()).toBeNull();
      await refreshPromotionDips(t.tdb.db, undefined, { force: true });
      expect(await mark()).toEqual(await elasticityAt());
    },
    60_000,
  );
  it.skipIf(testBackend !== "pglite")(
    "on the embedded database, a run about to swap does not wait for a measurement queued behind its transaction",
    async () => {
      const db = t.tdb.db;
      await promotionDipsSettled(db);
      await forget();
      const conn = await db.connect();
      // A simulation's nudge during a run: its measurement waits for the run's transaction (the one
      // connection); the run's step before the swap must not wait for it in turn.
      await conn.transaction(async () => {
        void refreshPromotionDips(db, undefined, { force: true });
        await Promise.race([
          abortPromotionDips(db),
          wait(5_000).then(() => {
            throw new Error("the step before the swap waited for a measurement queued behind the run");
          }),
        ]);
      });
      // Once the transaction ends the measurement runs.
      await promotionDipsSettled(db);
      expect(await mark()).toEqual(await elasticityAt());
    },
    30_000,
  );
});
