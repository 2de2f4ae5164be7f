// The AI Validation Debug page in Chromium, against the loopback chat-completions server: the
// runs list with its filters, a run's detail (layers, request, raw response, verdicts), a replay
// with an edited layer beside the original, "Save as prompt", the connection test on the page and
// on the AI Prompts tab, and the phone layout.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, goodVerdicts, startFakeModel } from "../helpers/fake-model.ts";
import { type E2E, startE2E } from "./harness.ts";

const SHOTS = process.env.E2E_SCREENSHOTS;

describe("AI Validation Debug in Chromium", () => {
  let e: E2E;
  let model: FakeModel;
  let firstCall: number;

  beforeAll(async () => {
    model = await startFakeModel();
    e = await startE2E({
      SOURCE_DIR: path.resolve("tests/fixtures/source-small"),
      AI_BASE_URL: model.url,
      AI_MODEL: "fake-model",
      AI_RETRY_BASE_MS: "10",
      AI_PRICE_INPUT_PER_MTOK: "2.5",
      AI_PRICE_OUTPUT_PER_MTOK: "10",
    });
    await e.t.app.services.dataOps.start("reset", null);
    await e.t.app.services.dataOps.idle();
    await e.t.tdb.db.prisma.aiPrompt.create({
      data: { promptText: "Titles use title case.", promptType: "general" },
    });
    const results = await e.t.app.services.ai.validateRows(
      [
        { row_id: 1, values: { title: "red stapler", price: "12.00" } },
        { row_id: 2, values: { title: "Blue Pen", price: "0" } },
      ],
      { company: "1", importId: 3 },
    );
    firstCall = results[0]!.call_id!;
    model.behave(() => ({ status: 503, json: { error: { message: "overloaded" } } }));
    await e.t.app.services.ai.validateRows([{ row_id: 3, values: { title: "Eraser" } }]);
    model.behave(goodVerdicts);
  }, 120_000);
  afterAll(async () => {
    await e?.close();
    await model?.close();
  });

  it("lists runs, filters them and opens one with everything sent and received", async () => {
    const { page } = await e.newPage({ width: 1440, height: 1000 });
    await e.signIn(page, "admin");
    await page.goto("/ai-validation/debug");
    await page.getByTestId("ai-endpoint").getByText("fake-model").waitFor();
    const rows = page.getByTestId("run-row");
    await expect.poll(() => rows.count()).toBe(3);
    await page.getByTestId("latency-chart").waitFor();
    await page.getByLabel("Statuses").click();
    await page.getByRole("option", { name: "Failed" }).click();
    await expect.poll(() => rows.count()).toBe(1);
    await expect(rows.first().textContent()).resolves.toContain("The endpoint failed (HTTP 503)");
    expect(page.url()).toContain("status=failed");
    if (SHOTS) await page.screenshot({ path: path.join(SHOTS, "ai-debug-list.png"), fullPage: true });

    await page.goto(`/ai-validation/debug?run=${firstCall}`);
    const detail = page.getByTestId("run-detail");
    await detail.getByText(`Run #${firstCall}`).waitFor();
    await expect(page.getByTestId("run-summary").textContent()).resolves.toContain("Import 3");
    await expect(page.getByTestId("layer-general").textContent()).resolves.toContain(
      "Titles use title case.",
    );
    await expect(page.getByTestId("layer-template").textContent()).resolves.toContain(
      "Company: Paper Co (id 1)",
    );
    const verdicts = page.getByTestId("verdicts");
    await verdicts.getByText("Red Stapler").waitFor();
    await verdicts.getByText("Title should be in title case").waitFor();
    await page.getByText("Request (messages and parameters)").click();
    await expect(page.getByTestId("request-json").textContent()).resolves.toContain('"response_format"');
    await page.getByText("Raw response").click();
    await expect(page.getByTestId("response-raw").textContent()).resolves.toContain("chat.completion");
    // Each attempt shows the endpoint's own id for the request, to quote to its support.
    await expect(
      page.getByTestId("attempts").getByTestId("attempt-request-id").first().textContent(),
    ).resolves.toMatch(/^req_fake_\d+$/);
    if (SHOTS) await page.screenshot({ path: path.join(SHOTS, "ai-debug-run.png"), fullPage: true });
  });

  it("replays with an edited layer beside the original and saves the layer as the general prompt", async () => {
    const { page } = await e.newPage({ width: 1440, height: 1000 });
    await e.signIn(page, "admin");
    await page.goto(`/ai-validation/debug?run=${firstCall}`);
    await page.getByRole("button", { name: "Replay…" }).click();
    const editor = page.getByTestId("replay-editor");
    await editor.getByLabel("General prompt").fill("Titles use title case. Be brief.");
    await editor.getByLabel("Model").fill("other-model");
    model.requests.length = 0;
    await editor.getByRole("button", { name: "Run replay" }).click();
    const sides = page.getByTestId("side-by-side");
    await sides.getByText(`Original #${firstCall}`).waitFor();
    await sides.getByText(/^Replay #\d+$/).waitFor();
    await sides.getByText("edited").waitFor();
    const sent = model.requests.find((r) => r.path === "/v1/chat/completions")!.body!;
    expect(sent.model).toBe("other-model");
    expect(sent.messages[1]!.content).toContain("Be brief.");
    // The replay changed no stored prompt; saving does.
    const before = await e.t.tdb.db.prisma.aiPrompt.findFirstOrThrow({ where: { promptType: "general" } });
    expect(before.promptText).toBe("Titles use title case.");
    await editor.getByRole("button", { name: "Save as prompt" }).click();
    await page.locator("[data-sonner-toast]").getByText("Prompt updated successfully").waitFor();
    const after = await e.t.tdb.db.prisma.aiPrompt.findFirstOrThrow({ where: { promptType: "general" } });
    expect(after).toMatchObject({ promptText: "Titles use title case. Be brief.", version: 2 });
    if (SHOTS) await page.screenshot({ path: path.join(SHOTS, "ai-debug-replay.png"), fullPage: true });
  });

  it("tests the connection from the debug page and the AI Prompts tab, naming a failed step", async () => {
    const { page } = await e.newPage({ width: 1280, height: 900 });
    await e.signIn(page, "admin");
    await page.goto("/ai-validation/debug");
    await page.getByRole("button", { name: "Test connection" }).click();
    const result = page.getByTestId("test-connection-result");
    await result.getByText("Connected: fake-model answered in mode json_schema").waitFor();
    await expect(page.getByTestId("step-structured").textContent()).resolves.toContain("Verdicts parsed");

    model.modelsReply = { status: 401, json: { error: { message: "bad key" } } };
    await page.goto("/settings?tab=prompts");
    const card = page.getByTestId("ai-model-card");
    await card.getByText("These prompts are sent to fake-model").waitFor();
    await card.getByRole("button", { name: "Test connection" }).click();
    await card.getByText(/^Authentication failed/).waitFor();
    model.modelsReply = null;
  });

  it("keeps the runs list usable at 390 px and hides the test from users without prompt management", async () => {
    await e.t.createUser("debugger", ["access:ai_validation_debug"]);
    const { page } = await e.newPage({ width: 390, height: 844 });
    await e.signIn(page, "debugger");
    await page.goto("/ai-validation/debug");
    await expect.poll(() => page.getByTestId("run-row").count()).toBeGreaterThan(2);
    expect(await page.getByRole("button", { name: "Test connection" }).count()).toBe(0);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(1);
    if (SHOTS) await page.screenshot({ path: path.join(SHOTS, "ai-debug-390.png"), fullPage: true });
  });
});
