// The AI step of Create Products against the loopback chat-completions server: an estimate before
// it starts, a run over the rows that passed the rule checks with progress over SSE, the verdicts
// as warnings on the rows, accepting (re-checked) and dismissing suggestions, the import's history,
// a failed call that does not block the row, the cache on a second run, and who may do it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AI_NOT_CONFIGURED } from "../../shared/ai-validation.ts";
import type { ImportRow, ProductImport } from "../../shared/product-import.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { testBackend } from "../helpers/db.ts";
import { type FakeModel, goodVerdicts, rowsOf, startFakeModel } from "../helpers/fake-model.ts";
import { FIXTURE_DIR } from "../helpers/pipeline.ts";

const CSV = [
  "sku,title,price,cost_each",
  "AI-1,red stapler,12.00,5.00",
  "AI-2,Blue Pen,2.50,1.00",
  "AI-3,Missing Price,,1.00",
  "AI-4,green folder,0,1.00",
].join("\n");

interface Progress {
  status: string;
  total?: number;
  done?: number;
  cached?: number;
  saved?: boolean;
}

describe(`AI validation of an import (${testBackend})`, () => {
  let model: FakeModel;
  let t: TestApp;
  let h: Record<string, string>;
  let imp: ProductImport;

  beforeAll(async () => {
    model = await startFakeModel();
    t = await startTestApp({
      env: {
        SOURCE_DIR: FIXTURE_DIR,
        AI_BASE_URL: model.url,
        AI_MODEL: "fake-model",
        AI_RETRY_BASE_MS: "10",
        AI_MAX_ATTEMPTS: "2",
        AI_PRICE_INPUT_PER_MTOK: "1",
        AI_PRICE_OUTPUT_PER_MTOK: "2",
      },
    });
    await t.app.services.dataOps.start("reset", null);
    await t.app.services.dataOps.idle();
    await t.createUser("creator", ["access:import", "create:products"]);
    await t.createUser("viewer", ["access:import"]);
    h = { authorization: `Bearer ${(await t.login("creator")).token}` };
    const fd = new FormData();
    fd.append("company", "1");
    fd.append("file", new Blob([CSV]), "ai.csv");
    const res = await fetch(`${t.url}/api/product-imports`, { method: "POST", headers: h, body: fd });
    expect(res.status, await res.clone().text()).toBe(201);
    imp = (await res.json()) as ProductImport;
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await model?.close();
  });

  const post = (path: string, body: unknown = {}, headers = h) =>
    fetch(`${t.url}/api/product-imports/${imp.id}${path}`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const rows = async (): Promise<ImportRow[]> =>
    (
      (await (
        await fetch(`${t.url}/api/product-imports/${imp.id}/rows?pageSize=100`, { headers: h })
      ).json()) as {
        items: ImportRow[];
      }
    ).items;
  const ai = (r: ImportRow) =>
    r.findings.filter((f) => f.source === "ai") as (ImportRow["findings"][number] & {
      suggestion?: string | null;
    })[];

  /** Reads the progress stream to its end. */
  async function progress(): Promise<Progress[]> {
    const res = await fetch(`${t.url}/api/product-imports/${imp.id}/ai-validate/progress`, { headers: h });
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const text = await res.text();
    return text
      .split("\n\n")
      .filter((b) => b.startsWith("data: "))
      .map((b) => JSON.parse(b.slice(6)) as Progress);
  }

  it("estimates the run: rows that passed the rule checks, calls, tokens and cost", async () => {
    const est = await (await post("/ai-validate/estimate")).json();
    expect(est).toMatchObject({
      configured: true,
      rows: 3,
      skipped_rows: 1,
      cached_rows: 0,
      calls: 3,
      model: "fake-model",
    });
    expect(est.tokens_in).toBeGreaterThan(100);
    expect(est.cost).toBeGreaterThan(0);
  });

  it("runs over the rows that passed the rules, streams progress, and puts the verdicts on the rows as warnings", async () => {
    const res = await post("/ai-validate");
    expect(res.status).toBe(200);
    const started = await res.json();
    expect(started).toMatchObject({ configured: true, run_id: expect.any(Number), rows: 3, skipped_rows: 1 });
    const events = await progress();
    expect(events.at(-1)).toMatchObject({ status: "done", total: 3, done: 3, saved: true });
    const sent = model.requests
      .filter((r) => r.path === "/v1/chat/completions")
      .map((r) => r.body!.messages[1]!.content);
    expect(sent.some((c) => c.includes("Missing Price"))).toBe(false);

    const [r1, r2, r3, r4] = await rows();
    expect(ai(r1!)).toEqual([
      expect.objectContaining({
        field: "title",
        value: "red stapler",
        message: "Title should be in title case",
        severity: "warning",
        source: "ai",
        suggestion: "Red Stapler",
      }),
    ]);
    expect(r1!.error_count).toBe(0);
    expect(r1!.warning_count).toBeGreaterThanOrEqual(1);
    expect(ai(r2!)).toEqual([]);
    expect(ai(r3!)).toEqual([]);
    expect(r3!.error_count).toBeGreaterThan(0);
    expect(
      ai(r4!)
        .map((f) => f.field)
        .sort(),
    ).toEqual(["price", "title"]);

    const status = await (
      await fetch(`${t.url}/api/product-imports/${imp.id}/ai-validate`, { headers: h })
    ).json();
    expect(status.last).toMatchObject({
      run_id: started.run_id,
      rows: 3,
      checked: 3,
      failed: 0,
      issues: 3,
      status: "done",
    });
    expect(status.last.cost).toBeGreaterThan(0);
  });

  it("accepts a suggestion: the value is written, the rules run again, the other findings stay, history records it", async () => {
    const res = await post("/ai-suggestions", { action: "accept", row_id: 1, field: "title" });
    expect(await res.json()).toEqual({ changed: 1 });
    const [r1, , , r4] = await rows();
    expect(r1!.values.title).toBe("Red Stapler");
    expect(ai(r1!)).toEqual([]);
    expect(ai(r4!)).toHaveLength(2);
    const missing = await post("/ai-suggestions", { action: "accept", row_id: 1, field: "title" });
    expect(missing.status).toBe(404);

    // Dismissing the price finding of row 4 (no suggestion to accept) keeps its title finding.
    expect(await (await post("/ai-suggestions", { action: "dismiss", field: "price" })).json()).toEqual({
      changed: 1,
    });
    expect(ai((await rows())[3]!).map((f) => f.field)).toEqual(["title"]);
    // Accepting the whole title column takes the rest.
    expect(await (await post("/ai-suggestions", { action: "accept", field: "title" })).json()).toEqual({
      changed: 1,
    });
    expect((await rows())[3]!.values.title).toBe("Green Folder");

    const { history } = await (
      await fetch(`${t.url}/api/product-imports/${imp.id}/ai-validate`, { headers: h })
    ).json();
    expect(
      history.accepted.map((a: { row_id: number; from: string; to: string }) => [a.row_id, a.from, a.to]),
    ).toEqual([
      [1, "red stapler", "Red Stapler"],
      [4, "green folder", "Green Folder"],
    ]);
    expect(history.dismissed).toEqual([expect.objectContaining({ row_id: 4, field: "price" })]);
  });

  it("asks again only about rows whose values changed", async () => {
    model.requests.length = 0;
    await post("/ai-validate", { rows: [1, 2] });
    const events = await progress();
    expect(events.at(-1)).toMatchObject({ status: "done", total: 2, cached: 1, saved: true });
    expect(model.requests.filter((r) => r.path === "/v1/chat/completions")).toHaveLength(1);
  });

  it("ends a failed call as an 'AI check failed' warning that does not block the row", async () => {
    model.behave(() => ({ status: 503, json: { error: { message: "overloaded" } } }));
    try {
      await post("/ai-validate", { rows: [2] });
      await progress();
    } finally {
      model.behave(goodVerdicts);
    }
    // Row 2's values did not change, so the cache answers it: use a changed value.
    const patch = await fetch(`${t.url}/api/product-imports/${imp.id}/rows/2`, {
      method: "PATCH",
      headers: { ...h, "content-type": "application/json" },
      body: JSON.stringify({ values: { title: "Blue Pen Fine" } }),
    });
    expect(patch.status).toBe(200);
    model.behave(() => ({ status: 503, json: { error: { message: "overloaded" } } }));
    try {
      await post("/ai-validate", { rows: [2] });
      await progress();
    } finally {
      model.behave(goodVerdicts);
    }
    const r2 = (await rows())[1]!;
    expect(ai(r2)).toEqual([
      expect.objectContaining({
        field: "row",
        severity: "warning",
        message: "AI check failed: The endpoint failed (HTTP 503)",
      }),
    ]);
    expect(r2.error_count).toBe(0);
    const dry = await (await post("/dry-run")).json();
    expect(JSON.stringify(dry)).not.toContain(
      'AI check failed: The endpoint failed (HTTP 503)","severity":"error',
    );
  });

  it("cancels a running validation: the call in flight is aborted, the rows keep what they had, history says cancelled", async () => {
    // New values, so the cache cannot answer; the model takes 20 s to answer each.
    for (const [row, title] of [
      [1, "orange stapler"],
      [4, "purple folder"],
    ] as const) {
      const patch = await fetch(`${t.url}/api/product-imports/${imp.id}/rows/${row}`, {
        method: "PATCH",
        headers: { ...h, "content-type": "application/json" },
        body: JSON.stringify({ values: { title } }),
      });
      expect(patch.status).toBe(200);
    }
    const before = await rows();
    const chats = () => model.requests.filter((r) => r.path === "/v1/chat/completions").length;
    const asked = chats();
    model.behave((req) => ({ ...goodVerdicts(req), delayMs: 20_000 }));
    try {
      const started = await (await post("/ai-validate", { rows: [1, 4] })).json();
      expect(started).toMatchObject({ configured: true, rows: 2, run_id: expect.any(Number) });
      // Both calls are with the model (AI_CONCURRENCY 4): the run is waiting on them.
      await expect.poll(chats, { timeout: 10_000 }).toBe(asked + 2);
      const viewer = { authorization: `Bearer ${(await t.login("viewer")).token}` };
      expect((await post("/ai-validate/cancel", {}, viewer)).status).toBe(403);

      const t0 = Date.now();
      const cancel = await post("/ai-validate/cancel");
      expect(cancel.status, await cancel.clone().text()).toBe(200);
      expect(await cancel.json()).toEqual({ success: true, run_id: started.run_id });
      const events = await progress();
      // Ended long before the model would have answered: the calls in flight were aborted.
      expect(Date.now() - t0).toBeLessThan(15_000);
      expect(events.at(-1)).toMatchObject({ status: "cancelled", total: 2, saved: true });

      const again = await post("/ai-validate/cancel");
      expect(again.status).toBe(409);
      expect((await again.json()).message).toBe(`No AI validation is running for import ${imp.id}`);
    } finally {
      model.behave(goodVerdicts);
    }
    // No verdict arrived: the rows keep the AI findings they had, and no "AI check failed" is added.
    const after = await rows();
    for (const i of [0, 3]) {
      expect(ai(after[i]!)).toEqual(ai(before[i]!));
      expect(ai(after[i]!).some((f) => f.message.startsWith("AI check failed"))).toBe(false);
    }
    const status = await (
      await fetch(`${t.url}/api/product-imports/${imp.id}/ai-validate`, { headers: h })
    ).json();
    expect(status.running).toBeNull();
    expect(status.last).toMatchObject({ status: "cancelled", rows: 2 });
    const batch = await t.tdb.db.prisma.aiValidationBatch.findUnique({ where: { id: status.last.run_id } });
    expect(batch?.status).toBe("cancelled");
    // The aborted calls are kept for the debug page, each with the attempt that was cut short.
    const calls = await t.tdb.db.prisma.aiValidationCall.findMany({ where: { batchId: batch!.id } });
    expect(calls).toHaveLength(2);
    for (const c of calls) {
      expect(c.error).toBe("Cancelled");
      expect(c.attempts).toEqual([expect.objectContaining({ attempt: 1, outcome: "cancelled" })]);
    }
    // A new run after a cancel works (and now the model answers).
    await post("/ai-validate", { rows: [1] });
    expect((await progress()).at(-1)).toMatchObject({ status: "done", saved: true });
    expect(ai((await rows())[0]!)).toEqual([
      expect.objectContaining({ field: "title", suggestion: "Orange Stapler" }),
    ]);
  }, 60_000);

  it("writes each row's verdicts into the rows as they arrive, before the run ends", async () => {
    for (const [row, title] of [
      [1, "teal stapler"],
      [4, "grey folder"],
    ] as const) {
      const patch = await fetch(`${t.url}/api/product-imports/${imp.id}/rows/${row}`, {
        method: "PATCH",
        headers: { ...h, "content-type": "application/json" },
        body: JSON.stringify({ values: { title } }),
      });
      expect(patch.status).toBe(200);
    }
    const before4 = ai((await rows())[3]!);
    // Row 1 is answered at once, row 4 after 20 s.
    model.behave((req) => ({
      ...goodVerdicts(req),
      delayMs: rowsOf(req.body).some((r) => r.row_id === 4) ? 20_000 : 0,
    }));
    try {
      const started = await (await post("/ai-validate", { rows: [1, 4] })).json();
      expect(started).toMatchObject({ rows: 2 });
      await expect
        .poll(async () => ai((await rows())[0]!).map((f) => f.suggestion), { timeout: 10_000 })
        .toEqual(["Teal Stapler"]);
      // The run is still going; row 4 has not changed. The progress says one row's verdicts are
      // in the rows (what the page watches to read the grid again).
      const running = async () =>
        (await (await fetch(`${t.url}/api/product-imports/${imp.id}/ai-validate`, { headers: h })).json())
          .running;
      await expect.poll(running, { timeout: 5_000 }).toMatchObject({ written: 1 });
      expect(await running()).toMatchObject({ status: "running", done: 1, total: 2, written: 1 });
      expect(ai((await rows())[3]!)).toEqual(before4);
      expect((await post("/ai-validate/cancel")).status).toBe(200);
      expect((await progress()).at(-1)).toMatchObject({ status: "cancelled", saved: true });
    } finally {
      model.behave(goodVerdicts);
    }
    // What arrived before the cancel stays.
    expect(ai((await rows())[0]!).map((f) => f.suggestion)).toEqual(["Teal Stapler"]);
    expect(ai((await rows())[3]!)).toEqual(before4);
  }, 60_000);

  it("keeps a row edited during a run free of the verdict on its old value", async () => {
    const patch = (title: string) =>
      fetch(`${t.url}/api/product-imports/${imp.id}/rows/2`, {
        method: "PATCH",
        headers: { ...h, "content-type": "application/json" },
        body: JSON.stringify({ values: { title } }),
      });
    expect((await patch("violet pen case")).status).toBe(200);
    let asked!: () => void;
    const wasAsked = new Promise<void>((resolve) => {
      asked = resolve;
    });
    model.behave((req) => {
      asked();
      return { ...goodVerdicts(req), delayMs: 1_500 };
    });
    try {
      expect((await post("/ai-validate", { rows: [2] })).status).toBe(200);
      await wasAsked;
      // While the model thinks about "violet pen case", the buyer writes the title they want.
      expect((await patch("VIOLET PEN CASE (buyer's title)")).status).toBe(200);
      expect((await progress()).at(-1)).toMatchObject({ status: "done", saved: true });
    } finally {
      model.behave(goodVerdicts);
    }
    const row2 = (await rows())[1]!;
    expect(row2.values.title).toBe("VIOLET PEN CASE (buyer's title)");
    // The verdict asked about the old title ("Violet Pen Case") is not put on the new one.
    expect(ai(row2)).toEqual([]);
  }, 60_000);

  it("refuses bad input and users without create:products", async () => {
    const viewer = { authorization: `Bearer ${(await t.login("viewer")).token}` };
    expect((await post("/ai-validate", {}, viewer)).status).toBe(403);
    const bad = await post("/ai-validate", { rows: ["x"] });
    expect(bad.status).toBe(400);
    expect((await bad.json()).message).toMatch(/^rows\.0: /);
    const unknownRow = await post("/ai-validate", { rows: [999] });
    expect(unknownRow.status).toBe(404);
    const noField = await post("/ai-suggestions", { action: "accept", row_id: 1 });
    expect(noField.status).toBe(400);
    expect((await post("/ai-suggestions", { action: "maybe" })).status).toBe(400);
  });

  it("without AI_BASE_URL the step says plainly that it is not configured", async () => {
    const off = await startTestApp({ tdb: t.tdb });
    try {
      const res = await fetch(`${off.url}/api/product-imports/${imp.id}/ai-validate`, {
        method: "POST",
        headers: { ...h, "content-type": "application/json" },
        body: "{}",
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ configured: false, message: AI_NOT_CONFIGURED, run_id: null });
    } finally {
      await off.close();
    }
  });
});
