// Reads while a run calculates: the calculation tables are built beside the live ones and swapped
// in at the commit, so a reader of product_metrics (the products list) never waits for the
// calculation phase of a Full Reset or a Full Update. PostgreSQL only (embedded PGlite has one
// connection: there every read waits for the run's transaction by construction).
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { testBackend } from "../helpers/db.ts";
import { FIXTURE_DIR } from "../helpers/pipeline.ts";

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(testBackend !== "postgres")("reads during a run's calculations", () => {
  let t: TestApp;
  let auth: Record<string, string>;
  let reader: pg.Client;
  beforeAll(async () => {
    t = await startTestApp({ env: { SOURCE_DIR: FIXTURE_DIR, PIPELINE_STEP_DELAY_MS: "400" } });
    auth = { authorization: `Bearer ${(await t.login("admin")).token}` };
    reader = new pg.Client({ connectionString: t.tdb.url });
    await reader.connect();
  });
  afterAll(async () => {
    await reader?.end();
    await t?.close();
  });

  async function start(type: "full-reset" | "full-update") {
    const res = await fetch(`${t.url}/csv/${type}`, { method: "POST", headers: auth });
    return ((await res.json()) as { run_id: number }).run_id;
  }
  async function status(id: number) {
    return (await reader.query("SELECT status FROM data_runs WHERE id = $1", [id])).rows[0].status as string;
  }

  it.each(["full-reset", "full-update"] as const)(
    "a %s holds no reader of product_metrics",
    async (type) => {
      if ((await reader.query("SELECT count(*)::int AS n FROM product_metrics")).rows[0].n === 0) {
        const first = await start("full-reset");
        while ((await status(first)) === "running") await wait(100);
      }
      const before = (
        await reader.query("SELECT count(*)::int AS n, max(calculated_at) AS at FROM product_metrics")
      ).rows[0];
      const id = await start(type);
      let readsInCalculation = 0;
      while ((await status(id)) === "running") {
        // The step the run is in now (this instance's own record; the stored one lags behind).
        const step =
          t.app.services.dataOps.latestEvent(type === "full-reset" ? "reset" : "update")?.step ?? "";
        // While the run calculates, a read answers at once (it would wait for the run's locks and
        // fail after 300 ms), with the last calculation's figures.
        if (/^(Calculate|Index metrics)/.test(step)) {
          // A reader that would wait behind the run's locks fails after 300 ms instead.
          await reader.query("BEGIN");
          await reader.query("SET LOCAL lock_timeout = '300ms'");
          const read = await reader
            .query("SELECT count(*)::int AS n, max(calculated_at) AS at FROM product_metrics")
            .then(async (r) => {
              // So do the tables a Full Reset's second connection fills (the forecasts, the daily
              // sales series): they are swapped in at the commit with the rest, not at their
              // module's place in the order.
              await reader.query("SELECT count(*) FROM product_forecasts");
              await reader.query("SELECT count(*) FROM sales_daily");
              return r;
            })
            .finally(() => reader.query("COMMIT"));
          readsInCalculation++;
          // The last calculation's figures, unless the run committed since its step was stored.
          if (read.rows[0].at.getTime() !== before.at.getTime()) {
            const committed = await reader.query(
              "SELECT max(last_calculation_timestamp) > $1 AS yes FROM calculate_status",
              [before.at],
            );
            expect(committed.rows[0].yes).toBe(true);
          } else expect(read.rows[0]).toEqual(before);
        }
        // The products list answers throughout (the swap at the end waits for readers, not the reverse).
        const list = await fetch(
          `${t.url}/trpc/metrics.products?input=${encodeURIComponent(JSON.stringify({ json: { page: 1 } }))}`,
          { headers: auth },
        );
        expect(list.status).toBe(200);
        await wait(100);
      }
      expect(await status(id)).toBe("completed");
      expect(readsInCalculation).toBeGreaterThan(3);
      const after = (await reader.query("SELECT max(calculated_at) AS at FROM product_metrics")).rows[0];
      expect(after.at.getTime()).toBeGreaterThan(before.at.getTime());
    },
    120_000,
  );
});
