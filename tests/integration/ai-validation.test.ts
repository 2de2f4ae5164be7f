// AI validation against a real chat-completions server on loopback (tests/helpers/fake-model.ts):
// prompt layers and versions, each structured-output mode, caching, retries, cost, redaction,
// the connection test, replay, retention and who may call what.
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { type CallRecord, CallWriter } from "../../server/modules/aiValidation/call-writer.ts";
import { AI_NOT_CONFIGURED, type AiCallDetail } from "../../shared/ai-validation.ts";
import { ADMIN, startTestApp, type TestApp } from "../helpers/app.ts";
import { testBackend } from "../helpers/db.ts";
import {
  completion,
  type FakeModel,
  goodVerdicts,
  startFakeModel,
  verdictsFor,
} from "../helpers/fake-model.ts";
import { FIXTURE_DIR } from "../helpers/pipeline.ts";

const KEY = "sk-test-secret-4242";
const SAME_ORIGIN = { host: "backoffice.test", origin: "http://backoffice.test" };

describe(`AI validation (${testBackend})`, () => {
  let model: FakeModel;
  let t: TestApp;
  let admin: Record<string, string>;

  beforeAll(async () => {
    model = await startFakeModel();
    t = await startTestApp({
      env: {
        SOURCE_DIR: FIXTURE_DIR,
        AI_BASE_URL: model.url,
        AI_MODEL: "fake-model",
        AI_API_KEY: KEY,
        AI_TIMEOUT_MS: "1000",
        AI_RETRY_BASE_MS: "10",
        AI_MAX_ATTEMPTS: "3",
        AI_CONCURRENCY: "2",
        AI_PRICE_INPUT_PER_MTOK: "2.5",
        AI_PRICE_OUTPUT_PER_MTOK: "10",
      },
    });
    await t.app.services.dataOps.start("reset", null);
    await t.app.services.dataOps.idle();
    admin = { authorization: `Bearer ${(await t.login(ADMIN.username)).token}` };
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await model?.close();
  });
  beforeEach(() => {
    model.behave(goodVerdicts);
    model.requests.length = 0;
    t.app.services.ai.client!.resetModes();
  });

  const ai = () => t.app.services.ai;
  const get = async (url: string, headers = admin) => t.app.inject({ method: "GET", url, headers });
  const run = async (id: number): Promise<AiCallDetail> =>
    (await get(`/api/ai-validation/runs/${id}`)).json();
  const chats = () => model.requests.filter((r) => r.path === "/v1/chat/completions");
  let rowSeq = 1000;
  /** A row nobody asked about before (so the cache cannot answer it). */
  const freshRow = (values: Record<string, unknown> = {}) => ({
    row_id: ++rowSeq,
    values: { title: `blue pen ${rowSeq}`, price: "2.50", ...values },
  });

  it("assembles the prompt in layers from the stored prompts, with their versions", async () => {
    const post = (payload: object) =>
      t.app.inject({ method: "POST", url: "/api/ai-prompts", headers: admin, payload });
    const system = (
      await post({ prompt_text: "You are a careful merchandiser.", prompt_type: "system" })
    ).json();
    const general = (await post({ prompt_text: "Titles use title case.", prompt_type: "general" })).json();
    const company = (
      await post({
        prompt_text: "Paper Co sells paper in reams.",
        prompt_type: "company_specific",
        company: "1",
      })
    ).json();

    const [result] = await ai().validateRows([freshRow()], {
      company: "1",
      productType: "Notebook",
      importId: 7,
    });
    expect(result!.status).toBe("ok");
    expect(result!.fields.find((f) => f.field === "title")).toMatchObject({
      ok: false,
      suggestion: expect.stringMatching(/^Blue Pen/),
    });

    const sent = chats()[0]!.body!;
    expect(sent.messages[0]!.role).toBe("system");
    expect(sent.messages[0]!.content).toContain("You are a careful merchandiser.");
    const user = sent.messages[1]!.content;
    const order = [
      "Titles use title case.",
      "Paper Co sells paper in reams.",
      "Company: Paper Co (id 1)",
      "Product type: Notebook",
      `"row_id":${rowSeq}`,
    ];
    const positions = order.map((s) => user.indexOf(s));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);

    const detail = await run(result!.call_id!);
    expect(detail.layers.map((l) => l.key)).toEqual(["system", "general", "company", "template", "row"]);
    expect(detail.prompt_versions).toEqual({
      system: { id: system.id, version: 1 },
      general: { id: general.id, version: 1 },
      company: { id: company.id, version: 1 },
    });
    expect(detail).toMatchObject({
      import_id: 7,
      company: "1",
      company_name: "Paper Co",
      product_type: "Notebook",
      status: "ok",
    });
    expect(detail.request.messages).toEqual(sent.messages);

    // Editing a prompt makes a new version, and the next call names it; the old text is kept.
    await t.app.inject({
      method: "PUT",
      url: `/api/ai-prompts/${general.id}`,
      headers: admin,
      payload: { prompt_text: "Titles use title case; no shouting.", prompt_type: "general", company: null },
    });
    const [again] = await ai().validateRows([freshRow()], { company: "1" });
    expect((await run(again!.call_id!)).prompt_versions.general).toEqual({ id: general.id, version: 2 });
    const history = await t.tdb.db.prisma.aiPromptVersion.findMany({
      where: { promptId: general.id },
      orderBy: { version: "asc" },
    });
    expect(history.map((h) => [h.version, h.promptText])).toEqual([
      [1, "Titles use title case."],
      [2, "Titles use title case; no shouting."],
    ]);
  });

  it("asks for json_schema first and records the mode that answered", async () => {
    const [r] = await ai().validateRows([freshRow()]);
    const body = chats()[0]!.body!;
    expect(body.response_format).toMatchObject({ type: "json_schema", json_schema: { strict: true } });
    expect(body.stream).toBe(false);
    expect((await run(r!.call_id!)).mode).toBe("json_schema");
  });

  it("falls back to json_object when json_schema is refused", async () => {
    model.behave((req) =>
      req.body.response_format?.type === "json_schema"
        ? { status: 400, json: { error: { message: "response_format json_schema is not supported" } } }
        : goodVerdicts(req),
    );
    const [r] = await ai().validateRows([freshRow()]);
    expect(r!.status).toBe("ok");
    const detail = await run(r!.call_id!);
    expect(detail.mode).toBe("json_object");
    expect(detail.attempts.map((a) => [a.mode, a.outcome])).toEqual([
      ["json_schema", "unsupported_mode"],
      ["json_object", "ok"],
    ]);
    expect(detail.attempts[0]!.error_body).toContain("not supported");
    // The mode that worked is where the next call starts.
    model.requests.length = 0;
    await ai().validateRows([freshRow()]);
    expect(chats().map((c) => c.body!.response_format?.type)).toEqual(["json_object"]);
  });

  it("falls back to prompt only and reads JSON wrapped in prose", async () => {
    model.behave(({ body }) =>
      body.response_format
        ? { status: 400, json: { error: { message: "unknown field response_format" } } }
        : {
            json: completion(
              `Sure! Here is my review:\n\`\`\`json\n${JSON.stringify(verdictsFor(body))}\n\`\`\`\nLet me know if you need more.`,
            ),
          },
    );
    const [r] = await ai().validateRows([freshRow({ price: "0" })]);
    expect(r!.status).toBe("ok");
    expect(r!.fields.find((f) => f.field === "price")).toMatchObject({
      ok: false,
      issue: expect.stringContaining("price of 0"),
    });
    const detail = await run(r!.call_id!);
    expect(detail.mode).toBe("prompt");
    expect(detail.request.response_format).toBeUndefined();
    expect(detail.response_raw).toContain("Sure! Here is my review");
  });

  it("answers a row asked again from the cache, and asks again when a prompt changes", async () => {
    const rows = [freshRow(), freshRow()];
    const first = await ai().validateRows(rows, { company: "2" });
    expect(first.map((r) => r.status)).toEqual(["ok", "ok"]);
    expect(chats()).toHaveLength(2);
    model.requests.length = 0;
    const second = await ai().validateRows(rows, { company: "2" });
    expect(second.map((r) => r.status)).toEqual(["cached", "cached"]);
    expect(second[0]!.fields).toEqual(first[0]!.fields);
    expect(chats()).toHaveLength(0);
    // An unrelated edit elsewhere changes nothing; the estimate knows both rows are answered.
    const estimate = await ai().estimate(rows, { company: "2" });
    expect(estimate).toMatchObject({ cached_rows: 2, calls: 0, cost: 0 });
    await t.app.inject({
      method: "POST",
      url: "/api/ai-prompts",
      headers: admin,
      payload: { prompt_text: "Ink Works: inks in ml.", prompt_type: "company_specific", company: "2" },
    });
    const third = await ai().validateRows(rows, { company: "2" });
    expect(third.map((r) => r.status)).toEqual(["ok", "ok"]);
    expect(chats()).toHaveLength(2);
  });

  it("retries a 429 and succeeds, keeping each attempt and its HTTP body", async () => {
    model.behave((req) =>
      req.n === 1
        ? { status: 429, headers: { "retry-after": "0" }, json: { error: { message: "Rate limit reached" } } }
        : goodVerdicts(req),
    );
    const [r] = await ai().validateRows([freshRow()]);
    expect(r!.status).toBe("ok");
    const detail = await run(r!.call_id!);
    expect(detail.attempts.map((a) => [a.outcome, a.http_status ?? null])).toEqual([
      ["rate_limited", 429],
      ["ok", null],
    ]);
    expect(detail.attempts[0]!.error_body).toContain("Rate limit reached");
    // The endpoint's own id of each request (its x-request-id), from the error and from the answer.
    expect(detail.attempts.map((a) => a.request_id)).toEqual(["req_fake_1", "req_fake_2"]);
  });

  it("ends as a per-row 'AI check failed' after bounded retries: 5xx, timeout, malformed JSON", async () => {
    model.behave(() => ({ status: 503, json: { error: { message: "overloaded" } } }));
    const [a] = await ai().validateRows([freshRow()]);
    expect(a).toMatchObject({ status: "failed", error: "AI check failed: The endpoint failed (HTTP 503)" });
    expect(chats()).toHaveLength(3);

    model.requests.length = 0;
    model.behave((req) => ({ ...goodVerdicts(req), delayMs: 1500 }));
    const [b] = await ai().validateRows([freshRow()]);
    expect(b!.error).toBe("AI check failed: The model did not answer within 1000 ms (AI_TIMEOUT_MS)");
    expect((await run(b!.call_id!)).attempts.map((x) => x.outcome)).toEqual([
      "timeout",
      "timeout",
      "timeout",
    ]);

    model.behave(() => ({ json: completion('{"rows": [ {"row_id": 1, "fields": [ oops') }));
    const [c] = await ai().validateRows([freshRow()]);
    expect(c!.error).toMatch(/^AI check failed: Unparseable answer: /);
    const detail = await run(c!.call_id!);
    expect(detail).toMatchObject({ status: "failed", mode: null });
    expect(detail.response_raw).toContain("oops");
  }, 30_000);

  it("counts tokens and cost from the usage and the configured prices", async () => {
    model.behave(({ body }) => ({
      json: completion(JSON.stringify(verdictsFor(body)), { prompt_tokens: 1000, completion_tokens: 200 }),
    }));
    const batch = await ai().startBatch([freshRow(), freshRow()]);
    await batch.results;
    // 2 calls × (1000 × 2.5 + 200 × 10) / 1e6
    expect(batch.progress).toMatchObject({
      status: "done",
      done: 2,
      tokens_in: 2000,
      tokens_out: 400,
      cost: 0.009,
    });
    const list = (await get(`/api/ai-validation/runs?search=${rowSeq}`)).json();
    expect(list.items[0]).toMatchObject({ tokens_in: 1000, tokens_out: 200, cost: 0.0045 });
    const estimate = await ai().estimate([freshRow()]);
    expect(estimate.calls).toBe(1);
    expect(estimate.tokens_in).toBeGreaterThan(50);
    expect(estimate.cost).toBeCloseTo((estimate.tokens_in * 2.5 + estimate.tokens_out * 10) / 1e6, 6);
  });

  it("sends the key but never stores or shows it, even when the endpoint echoes it", async () => {
    model.behave(({ headers }) => ({
      status: 401,
      json: { error: { message: `Incorrect API key provided: ${String(headers.authorization)}` } },
    }));
    const [r] = await ai().validateRows([freshRow()]);
    expect(chats()[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(r!.error).toBe(
      "AI check failed: The endpoint refused the credentials (HTTP 401): check AI_API_KEY",
    );
    const res = await get(`/api/ai-validation/runs/${r!.call_id}`);
    expect(res.body).not.toContain(KEY);
    expect(res.body).toContain("[redacted]");
    const stored = await t.tdb.db.prisma.$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM ai_validation_calls WHERE row_to_json(ai_validation_calls)::text LIKE '%${KEY}%'`,
    );
    expect(stored[0]!.n).toBe(0);
  });

  it("tests the connection step by step and names the step that failed", async () => {
    const ok = (
      await t.app.inject({ method: "POST", url: "/api/ai-validation/test-connection", headers: admin })
    ).json();
    expect(ok).toMatchObject({ ok: true, configured: true, model: "fake-model", mode: "json_schema" });
    expect(ok.models).toEqual(["fake-model", "other-model"]);
    expect(ok.steps.map((s: { step: string; ok: boolean }) => [s.step, s.ok])).toEqual([
      ["connect", true],
      ["auth", true],
      ["models", true],
      ["model", true],
      ["structured", true],
    ]);
    expect((await run(ok.call_id)).kind).toBe("test");

    model.modelsReply = { status: 401, json: { error: { message: "bad key" } } };
    const denied = await ai().testConnection(null);
    expect(denied.ok).toBe(false);
    expect(denied.steps.at(-1)).toMatchObject({ step: "auth", ok: false });
    expect(denied.message).toMatch(/^Authentication failed/);

    model.modelsReply = null;
    model.models = ["other-model"];
    model.behave(() => ({ status: 404, json: { error: { message: "model 'fake-model' not found" } } }));
    const missing = await ai().testConnection(null);
    expect(missing.steps.find((s) => s.step === "model")).toMatchObject({ ok: false });
    expect(missing.message).toMatch(/^Model not found/);
    model.models = ["fake-model", "other-model"];

    model.behave(() => ({ json: completion("I think the product looks fine.") }));
    const bad = await ai().testConnection(null);
    expect(bad.steps.at(-1)).toMatchObject({ step: "structured", ok: false });
    expect(bad.message).toMatch(/not usable JSON/);
  }, 30_000);

  it("replays a run with an edited layer and another model, beside the original, changing nothing else", async () => {
    const [r] = await ai().validateRows([freshRow()], { company: "1", importId: 9 });
    const promptsBefore = await t.tdb.db.prisma.aiPrompt.findMany({ orderBy: { id: "asc" } });
    model.requests.length = 0;
    const res = await t.app.inject({
      method: "POST",
      url: `/api/ai-validation/runs/${r!.call_id}/replay`,
      headers: admin,
      payload: { layers: { general: "Be strict about units." }, model: "other-model" },
    });
    expect(res.statusCode).toBe(200);
    const replay = res.json() as AiCallDetail;
    expect(replay).toMatchObject({
      kind: "replay",
      replay_of: r!.call_id,
      model: "other-model",
      import_id: 9,
      status: "ok",
    });
    expect(replay.layers.find((l) => l.key === "general")!.content).toBe("Be strict about units.");
    expect(replay.prompt_versions.general).toBeUndefined();
    expect(replay.prompt_versions.company).toBeDefined();
    const sent = chats()[0]!.body!;
    expect(sent.model).toBe("other-model");
    expect(sent.messages[1]!.content).toContain("Be strict about units.");
    expect(await t.tdb.db.prisma.aiPrompt.findMany({ orderBy: { id: "asc" } })).toEqual(promptsBefore);
    const missing = await t.app.inject({
      method: "POST",
      url: "/api/ai-validation/runs/999999/replay",
      headers: admin,
      payload: {},
    });
    expect(missing.statusCode).toBe(404);
  });

  it("lists runs with filters, search and paging", async () => {
    const all = (await get("/api/ai-validation/runs?pageSize=5")).json();
    expect(all.items).toHaveLength(5);
    expect(all.total).toBeGreaterThan(10);
    const failed = (await get("/api/ai-validation/runs?status=failed&pageSize=200")).json();
    expect(failed.items.length).toBeGreaterThan(0);
    expect(failed.items.every((i: { status: string }) => i.status === "failed")).toBe(true);
    const replays = (await get("/api/ai-validation/runs?kind=replay")).json();
    expect(replays.items.every((i: { kind: string }) => i.kind === "replay")).toBe(true);
    const byModel = (await get("/api/ai-validation/runs?search=other-model")).json();
    expect(byModel.items.map((i: { model: string }) => i.model)).toContain("other-model");
    const bad = await get("/api/ai-validation/runs?status=weird");
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/^status: /);
  });

  it("deletes calls older than AI_LOG_RETENTION_DAYS", async () => {
    const [r] = await ai().validateRows([freshRow()]);
    await t.tdb.db.prisma.aiValidationCall.update({
      where: { id: r!.call_id! },
      data: { createdAt: new Date(Date.now() - 31 * 86_400_000) },
    });
    const kept = await t.tdb.db.prisma.aiValidationCall.count();
    expect(await ai().purgeOld()).toBe(1);
    expect(await t.tdb.db.prisma.aiValidationCall.count()).toBe(kept - 1);
    expect((await get(`/api/ai-validation/runs/${r!.call_id}`)).statusCode).toBe(404);
  });

  it("stores every call of a run (and its cache entries) by the time its results are in", async () => {
    const rows = Array.from({ length: 12 }, () => freshRow());
    const results = await ai().validateRows(rows);
    const ids = results.map((r) => r.call_id!);
    expect(new Set(ids).size).toBe(12);
    // Every call and cache entry is in the database once the results are (no wait for a flush).
    const stored = await t.tdb.db.prisma.aiValidationCall.findMany({ where: { id: { in: ids } } });
    expect(stored.map((c) => c.id).sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
    expect(stored.every((c) => c.status === "ok" && c.layers !== null)).toBe(true);
    const again = await ai().validateRows(rows);
    expect(again.every((r) => r.status === "cached")).toBe(true);
  });

  it("keeps the calls a write would lose to one record the database refuses, and names that one", async () => {
    const logged: string[] = [];
    const writer = new CallWriter(t.tdb.db, { log: (e) => logged.push(String(e)) });
    const record = (tokens: number): CallRecord => ({
      kind: "test",
      batch_id: null,
      import_id: null,
      row_ids: [1],
      replay_of: null,
      company: null,
      product_type: null,
      template_id: null,
      prompt_versions: {},
      base_url: "http://127.0.0.1/v1",
      model: "writer-test",
      mode: "json_object",
      status: "ok",
      latency_ms: 1,
      tokens_in: tokens,
      tokens_out: 1,
      cost: 0,
      fields_checked: 1,
      issues_found: 0,
      layers: [],
      request: {},
      // PostgreSQL holds no NUL in text: it is dropped, not the record.
      response_raw: "an answer with a \u0000 in it",
      verdicts: null,
      error: null,
      attempts: [],
      timings: {},
      created_by: null,
    });
    const good = [await writer.nextId(), await writer.nextId(), await writer.nextId()];
    const bad = await writer.nextId();
    writer.add({ ...record(10), id: good[0]! });
    writer.add({ ...record(2 ** 40), id: bad }); // out of the int column's range
    writer.add({ ...record(10), id: good[1]! }, [
      { key: `writer-test-${bad}`, verdict: {}, call_id: good[1]! },
    ]);
    writer.add({ ...record(10), id: good[2]! });
    await writer.drain();
    const stored = await t.tdb.db.prisma.aiValidationCall.findMany({
      where: { model: "writer-test", id: { in: [...good, bad] } },
    });
    expect(stored.map((c) => c.id).sort((a, b) => a - b)).toEqual(good);
    expect(stored[0]!.responseRaw).toBe("an answer with a  in it");
    expect(await t.tdb.db.prisma.aiValidationCache.count({ where: { key: `writer-test-${bad}` } })).toBe(1);
    expect(logged).toEqual([expect.stringMatching(new RegExp(`AI call ${bad} not stored: .*out of range`))]);
  });

  it("asks for the next block of call ids while half of this one is left, so calls do not wait for one", async () => {
    const writer = new CallWriter(t.tdb.db, { reserve: 4 });
    const last = async () =>
      Number(
        (
          await t.tdb.db.prisma.$queryRawUnsafe<{ v: bigint }[]>(
            "SELECT last_value AS v FROM ai_validation_calls_id_seq",
          )
        )[0]!.v,
      );
    const first = await writer.nextId();
    expect(await last()).toBe(first + 3); // one block of 4
    await writer.nextId();
    await writer.nextId(); // one id left of four: the next block is asked for now
    await vi.waitFor(async () => expect(await last()).toBe(first + 7));
    const ids = [await writer.nextId(), await writer.nextId(), await writer.nextId()];
    expect(ids).toEqual([first + 3, first + 4, first + 5]);
  });

  it("lets only the right users see runs and test the connection", async () => {
    await t.createUser("importer", ["create:products"]);
    await t.createUser("debugger", ["access:ai_validation_debug"]);
    const importer = { cookie: (await t.login("importer")).cookie, ...SAME_ORIGIN };
    const debug = { cookie: (await t.login("debugger")).cookie, ...SAME_ORIGIN };
    expect((await get("/api/ai-validation/runs", importer)).statusCode).toBe(403);
    expect((await get("/api/ai-validation/runs", debug)).statusCode).toBe(200);
    const test = (h: Record<string, string>) =>
      t.app.inject({ method: "POST", url: "/api/ai-validation/test-connection", headers: h });
    expect((await test(debug)).statusCode).toBe(403);
    expect((await get("/api/ai-validation/status", importer)).json()).toMatchObject({
      configured: true,
      model: "fake-model",
    });
    expect((await get("/api/ai-validation/status", importer)).body).not.toContain(KEY);
  });

  it("without AI_BASE_URL says plainly that AI validation is not configured", async () => {
    const off = await startTestApp({ tdb: t.tdb, listen: false });
    try {
      expect(off.app.services.ai.status()).toMatchObject({ configured: false, message: AI_NOT_CONFIGURED });
      const res = await off.app.inject({
        method: "POST",
        url: "/api/ai-validation/test-connection",
        headers: admin,
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ ok: false, configured: false, message: AI_NOT_CONFIGURED });
      expect((await off.app.services.ai.estimate([freshRow()])).configured).toBe(false);
    } finally {
      await off.close();
    }
  });

  it("sends no Authorization header to an endpoint configured without a key (Ollama, vLLM)", async () => {
    const keyless = await startTestApp({
      tdb: t.tdb,
      listen: false,
      env: { AI_BASE_URL: model.url, AI_MODEL: "fake-model", AI_RETRY_BASE_MS: "10" },
    });
    try {
      model.requests.length = 0;
      const [r] = await keyless.app.services.ai.validateRows([freshRow()]);
      expect(r!.status).toBe("ok");
      expect(chats()[0]!.headers.authorization).toBeUndefined();
    } finally {
      await keyless.close();
    }
  });
});
