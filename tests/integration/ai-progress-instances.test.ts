// An import's AI validation seen from a second app instance on the same PostgreSQL database (as
// behind a load balancer): the progress stream and the status follow a run the first instance is
// doing (LISTEN/NOTIFY, like the data operations' progress), a run cannot be started twice, and a
// cancel sent to the second instance stops the run on the first. PostgreSQL only: embedded PGlite
// is one process by construction.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProductImport } from "../../shared/product-import.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { testBackend } from "../helpers/db.ts";
import { type FakeModel, goodVerdicts, startFakeModel } from "../helpers/fake-model.ts";
import { FIXTURE_DIR } from "../helpers/pipeline.ts";

const CSV = [
  "sku,title,price,cost_each",
  "MI-1,red stapler,12.00,5.00",
  "MI-2,Blue Pen,2.50,1.00",
  "MI-3,green folder,3.00,1.00",
].join("\n");

interface Progress {
  status: string;
  batch_id?: number;
  total?: number;
  done?: number;
  saved?: boolean;
}

describe.skipIf(testBackend !== "postgres")("AI validation across two app instances", () => {
  let model: FakeModel;
  let a: TestApp;
  let b: TestApp;
  let h: Record<string, string>;
  let imp: ProductImport;

  beforeAll(async () => {
    model = await startFakeModel();
    const env = {
      SOURCE_DIR: FIXTURE_DIR,
      AI_BASE_URL: model.url,
      AI_MODEL: "fake-model",
      AI_CONCURRENCY: "1",
      AI_RETRY_BASE_MS: "10",
    };
    a = await startTestApp({ env });
    await a.app.services.dataOps.start("reset", null);
    await a.app.services.dataOps.idle();
    b = await startTestApp({ tdb: a.tdb, env });
    await a.createUser("creator", ["access:import", "create:products"]);
    h = { authorization: `Bearer ${(await a.login("creator")).token}` };
    const fd = new FormData();
    fd.append("company", "1");
    fd.append("file", new Blob([CSV]), "instances.csv");
    const res = await fetch(`${a.url}/api/product-imports`, { method: "POST", headers: h, body: fd });
    expect(res.status, await res.clone().text()).toBe(201);
    imp = (await res.json()) as ProductImport;
  }, 120_000);
  afterAll(async () => {
    await b?.app.close();
    await a?.close();
    await model?.close();
  });

  const post = (app: TestApp, path: string, body: unknown = {}) =>
    fetch(`${app.url}/api/product-imports/${imp.id}${path}`, {
      method: "POST",
      headers: { ...h, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const status = async (app: TestApp) =>
    (await (await fetch(`${app.url}/api/product-imports/${imp.id}/ai-validate`, { headers: h })).json()) as {
      running: Progress | null;
      last: { run_id: number; status: string } | null;
    };
  /** Reads an instance's progress stream to its end. */
  async function progress(app: TestApp): Promise<Progress[]> {
    const res = await fetch(`${app.url}/api/product-imports/${imp.id}/ai-validate/progress`, { headers: h });
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    return (await res.text())
      .split("\n\n")
      .filter((x) => x.startsWith("data: "))
      .map((x) => JSON.parse(x.slice(6)) as Progress);
  }

  it("the second instance streams the progress of a run the first is doing, row by row, to the saved verdicts", async () => {
    expect(await progress(b)).toEqual([{ status: "idle", import_id: imp.id }]);
    model.behave((req) => ({ ...goodVerdicts(req), delayMs: 700 }));
    const started = (await (await post(a, "/ai-validate")).json()) as { run_id: number; rows: number };
    expect(started.rows).toBe(3);
    const seen = await progress(b);
    expect(seen[0]).toMatchObject({ batch_id: started.run_id, status: "running", total: 3 });
    // One call at a time: the stream shows the rows as they are done, not only the end.
    const done = seen.map((p) => p.done ?? 0);
    expect(done.some((d) => d > 0 && d < 3)).toBe(true);
    expect(done).toEqual([...done].sort((x, y) => x - y));
    expect(seen.at(-1)).toMatchObject({ batch_id: started.run_id, status: "done", done: 3, saved: true });
    // The verdicts are in the rows for both instances; both statuses name the run as the last.
    expect((await status(b)).last).toMatchObject({ run_id: started.run_id, status: "done" });
    expect((await status(b)).running).toBeNull();
    // A finished run's stream on the second instance: its last state, saved.
    expect((await progress(b)).at(-1)).toMatchObject({ batch_id: started.run_id, saved: true });
  }, 60_000);

  it("a run on the first instance shows as running on the second, cannot be started twice, and the second cancels it", async () => {
    // New values, so the cache cannot answer; each call takes 20 s.
    for (const [row, title] of [
      [1, "orange stapler"],
      [3, "purple folder"],
    ] as const) {
      const res = await fetch(`${a.url}/api/product-imports/${imp.id}/rows/${row}`, {
        method: "PATCH",
        headers: { ...h, "content-type": "application/json" },
        body: JSON.stringify({ values: { title } }),
      });
      expect(res.status).toBe(200);
    }
    model.behave((req) => ({ ...goodVerdicts(req), delayMs: 20_000 }));
    try {
      const started = (await (await post(a, "/ai-validate", { rows: [1, 3] })).json()) as { run_id: number };
      await expect
        .poll(async () => (await status(b)).running?.batch_id, { timeout: 10_000 })
        .toBe(started.run_id);
      const twice = await post(b, "/ai-validate", { rows: [1] });
      expect(twice.status).toBe(409);
      expect(await twice.text()).toContain(`run ${started.run_id} is already running`);

      const t0 = Date.now();
      const stream = progress(a);
      const cancel = await post(b, "/ai-validate/cancel");
      expect(cancel.status, await cancel.clone().text()).toBe(200);
      expect(await cancel.json()).toEqual({ success: true, run_id: started.run_id });
      const events = await stream;
      expect(Date.now() - t0).toBeLessThan(15_000);
      expect(events.at(-1)).toMatchObject({ batch_id: started.run_id, status: "cancelled", saved: true });
      await expect.poll(async () => (await status(b)).running, { timeout: 5_000 }).toBeNull();
      expect((await status(b)).last).toMatchObject({ run_id: started.run_id, status: "cancelled" });
      expect((await post(b, "/ai-validate/cancel")).status).toBe(409);
    } finally {
      model.behave(goodVerdicts);
    }
  }, 60_000);
});
