// AI validation prompts (spec sections 4 "Prompts", 5 "Prompt form", 7 "AI prompts"): the server
// enforces what the screen shows, over the cookie session with no authorization header.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { promptTypeRules } from "../../shared/prompts.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { testBackend } from "../helpers/db.ts";
import { FIXTURE_DIR } from "../helpers/pipeline.ts";

const SAME_ORIGIN = { host: "backoffice.test", origin: "http://backoffice.test" };

describe(`AI prompts (${testBackend})`, () => {
  let t: TestApp;
  let h: Record<string, string>;

  beforeAll(async () => {
    t = await startTestApp({ env: { SOURCE_DIR: FIXTURE_DIR } });
    await t.app.services.dataOps.start("reset", null);
    await t.app.services.dataOps.idle();
    await t.createUser("prompter", ["settings:prompt_management"]);
    await t.createUser("templater", ["settings:templates"]);
    h = { cookie: (await t.login("prompter")).cookie, ...SAME_ORIGIN };
  });
  afterAll(() => t.close());

  const call = (method: "GET" | "POST" | "PUT" | "DELETE", url: string, payload?: object, headers = h) =>
    t.app.inject({ method, url, headers, payload });

  const ids: Record<string, number> = {};

  it("creates a general prompt and answers it with every field", async () => {
    const res = await call("POST", "/api/ai-prompts", {
      prompt_text: "Check titles.",
      prompt_type: "general",
      company: null,
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      id: expect.any(Number),
      prompt_text: "Check titles.",
      prompt_type: "general",
      company: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    ids.general = res.json().id;
  });

  it("allows at most one general and one system prompt (409)", async () => {
    const again = await call("POST", "/api/ai-prompts", { prompt_text: "x", prompt_type: "general" });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({
      error: "A general prompt already exists; only one is allowed",
      message: "A general prompt already exists; only one is allowed",
    });
    const system = await call("POST", "/api/ai-prompts", { prompt_text: "You are…", prompt_type: "system" });
    expect(system.statusCode).toBe(201);
    ids.system = system.json().id;
    const second = await call("POST", "/api/ai-prompts", { prompt_text: "y", prompt_type: "system" });
    expect(second.statusCode).toBe(409);
    // Changing the system prompt into a second general one is refused too.
    const retype = await call("PUT", `/api/ai-prompts/${ids.system}`, {
      id: ids.system,
      prompt_text: "z",
      prompt_type: "general",
      company: null,
    });
    expect(retype.statusCode).toBe(409);
  });

  it("requires a known company for company_specific, one prompt per company", async () => {
    const missing = await call("POST", "/api/ai-prompts", {
      prompt_text: "x",
      prompt_type: "company_specific",
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().message).toBe("company: Company is required for company-specific prompts");
    const unknown = await call("POST", "/api/ai-prompts", {
      prompt_text: "x",
      prompt_type: "company_specific",
      company: "999",
    });
    expect(unknown.statusCode).toBe(400);
    const ok = await call("POST", "/api/ai-prompts", {
      prompt_text: "Paper Co rules",
      prompt_type: "company_specific",
      company: "1",
    });
    expect(ok.statusCode).toBe(201);
    expect(ok.json()).toMatchObject({ prompt_type: "company_specific", company: "1" });
    ids.paper = ok.json().id;
    const dup = await call("POST", "/api/ai-prompts", {
      prompt_text: "again",
      prompt_type: "company_specific",
      company: "1",
    });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().message).toBe("A prompt for company 1 already exists");
  });

  it("refuses a company on general and system prompts, and empty text (400)", async () => {
    const withCompany = await call("PUT", `/api/ai-prompts/${ids.general}`, {
      prompt_text: "x",
      prompt_type: "general",
      company: "1",
    });
    expect(withCompany.statusCode).toBe(400);
    expect(withCompany.json().message).toMatch(/^company: Company must be empty/);
    const empty = await call("POST", "/api/ai-prompts", {
      prompt_text: "   ",
      prompt_type: "company_specific",
      company: "2",
    });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().message).toBe("prompt_text: Prompt text is required");
    const badType = await call("POST", "/api/ai-prompts", { prompt_text: "x", prompt_type: "other" });
    expect(badType.statusCode).toBe(400);
    expect(badType.json().message).toMatch(/^prompt_type: /);
  });

  it("updates a prompt (keeping its own type is not a clash); a mismatched id is 400, unknown 404", async () => {
    const res = await call("PUT", `/api/ai-prompts/${ids.general}`, {
      id: ids.general,
      prompt_text: "Check titles and prices.",
      prompt_type: "general",
      company: null,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: ids.general, prompt_text: "Check titles and prices." });
    const moved = await call("PUT", `/api/ai-prompts/${ids.paper}`, {
      id: ids.paper,
      prompt_text: "Ink rules",
      prompt_type: "company_specific",
      company: "2",
    });
    expect(moved.json()).toMatchObject({ company: "2" });
    expect(
      (
        await call("PUT", `/api/ai-prompts/${ids.paper}`, {
          id: 1234,
          prompt_text: "x",
          prompt_type: "system",
        })
      ).statusCode,
    ).toBe(400);
    expect(
      (
        await call("PUT", "/api/ai-prompts/99999", {
          prompt_text: "x",
          prompt_type: "company_specific",
          company: "1",
        })
      ).statusCode,
    ).toBe(404);
  });

  it("lists by type descending, then company ascending", async () => {
    await call("POST", "/api/ai-prompts", {
      prompt_text: "Paper",
      prompt_type: "company_specific",
      company: "1",
    });
    const res = await call("GET", "/api/ai-prompts");
    expect(res.statusCode).toBe(200);
    expect(
      res.json().map((p: { prompt_type: string; company: string | null }) => [p.prompt_type, p.company]),
    ).toEqual([
      ["system", null],
      ["general", null],
      ["company_specific", "1"],
      ["company_specific", "2"],
    ]);
  });

  it("deletes; a second delete is 404; after it a general prompt may be created again", async () => {
    const res = await call("DELETE", `/api/ai-prompts/${ids.general}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true, id: ids.general });
    expect((await call("DELETE", `/api/ai-prompts/${ids.general}`)).statusCode).toBe(404);
    expect(
      (await call("POST", "/api/ai-prompts", { prompt_text: "new", prompt_type: "general" })).statusCode,
    ).toBe(201);
  });

  it("keeps every version of a prompt, newest first; a save that changes nothing makes none; a deleted prompt's stay", async () => {
    const paper = await call("GET", `/api/ai-prompts/${ids.paper}/versions`);
    expect(paper.statusCode, paper.body).toBe(200);
    const texts = (r: typeof paper) =>
      (
        r.json() as { versions: { version: number; prompt_text: string; company: string | null }[] }
      ).versions.map((v) => [v.version, v.company, v.prompt_text]);
    const before = texts(paper);
    expect(paper.json().current_version).toBe(before.length);
    expect(before[0]).toEqual([before.length, "2", "Ink rules"]);
    expect(before.length).toBeGreaterThanOrEqual(2);
    // The same text, type and company again: no new version.
    const same = await call("PUT", `/api/ai-prompts/${ids.paper}`, {
      prompt_text: "Ink rules",
      prompt_type: "company_specific",
      company: "2",
    });
    expect(same.statusCode).toBe(200);
    expect(texts(await call("GET", `/api/ai-prompts/${ids.paper}/versions`))).toEqual(before);
    // The general prompt deleted above: its two texts are still there, with no current version.
    const general = await call("GET", `/api/ai-prompts/${ids.general}/versions`);
    expect(general.statusCode).toBe(200);
    expect(general.json().current_version).toBeNull();
    expect(texts(general)).toEqual([
      [2, null, "Check titles and prices."],
      [1, null, "Check titles."],
    ]);
    expect((await call("GET", "/api/ai-prompts/99999/versions")).statusCode).toBe(404);
    const other = { cookie: (await t.login("templater")).cookie, ...SAME_ORIGIN };
    expect((await call("GET", `/api/ai-prompts/${ids.paper}/versions`, undefined, other)).statusCode).toBe(
      403,
    );
  });

  it("needs settings:prompt_management: another tab's user gets 403", async () => {
    const other = { cookie: (await t.login("templater")).cookie, ...SAME_ORIGIN };
    expect((await call("GET", "/api/ai-prompts", undefined, other)).statusCode).toBe(403);
    expect((await call("GET", "/api/ai-prompts", undefined, { ...SAME_ORIGIN })).statusCode).toBe(401);
  });

  it("the tRPC router enforces the same rules", async () => {
    const res = await t.app.inject({
      method: "POST",
      url: "/trpc/prompts.create",
      headers: { ...h, "content-type": "application/json" },
      payload: JSON.stringify({ json: { prompt_text: "dup", prompt_type: "system" } }),
    });
    expect(res.statusCode).toBe(409);
    expect(res.json().error.json.data.code).toBe("CONFLICT");
  });
});

describe("prompt type rules (spec section 4)", () => {
  it("default type, disabled options, lock and hint follow the existing prompts", () => {
    expect(promptTypeRules([])).toEqual({
      disabled: { general: false, system: false, company_specific: false },
      defaultType: "general",
      hint: null,
      locked: false,
    });
    const g = { id: 1, prompt_type: "general" as const };
    const s = { id: 2, prompt_type: "system" as const };
    expect(promptTypeRules([g])).toMatchObject({
      defaultType: "system",
      disabled: { general: true, system: false },
      hint: "A general prompt already exists. You can create a system prompt or company-specific prompts.",
    });
    expect(promptTypeRules([s])).toMatchObject({
      defaultType: "general",
      hint: "A system prompt already exists. You can create a general prompt or company-specific prompts.",
    });
    expect(promptTypeRules([g, s])).toMatchObject({
      defaultType: "company_specific",
      locked: true,
      hint: "General and system prompts already exist. You can only create company-specific prompts.",
    });
    // Editing the general prompt keeps its own type selectable.
    expect(promptTypeRules([g, s], 1).disabled.general).toBe(false);
  });
});
