// The AI check of Create Products in Chromium, against the loopback chat-completions server: the
// sample supplier file (docs/examples) uploaded and mapped, the estimate, a run with its progress,
// the verdicts on the grid's cells (each row's arriving in place while the run goes on, without a
// reload) and in the suggestions list, a suggestion accepted (the cell
// changes, the rules run again), and the run opened on the AI Validation Debug page.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Behaviour, completion, type FakeModel, rowsOf, startFakeModel } from "../helpers/fake-model.ts";
import { type E2E, startE2E } from "./harness.ts";

const SAMPLE = path.resolve("docs/examples/supplier-price-list.csv");
const SHOTS = process.env.E2E_SCREENSHOTS;
/** How long the model takes with every row but row 1 (row 1 is answered at once). */
const SLOW_MS = 15_000;

/** The fixture model's house style: a comma, not a dash, in titles. */
const houseStyle: Behaviour = ({ body }) => ({
  json: completion(
    JSON.stringify({
      rows: rowsOf(body).map(({ row_id, ...values }) => ({
        row_id,
        fields: Object.entries(values).map(([field, value]) =>
          field === "title" && String(value).includes(" - ")
            ? {
                field,
                ok: false,
                issue: "Use a comma, not a dash, in titles",
                suggestion: String(value).replace(" - ", ", "),
                confidence: 0.9,
              }
            : { field, ok: true, issue: null, suggestion: null, confidence: 0.95 },
        ),
      })),
    }),
  ),
});

describe("AI check of an import in Chromium", () => {
  let e: E2E;
  let model: FakeModel;
  let importId: number;

  beforeAll(async () => {
    model = await startFakeModel();
    model.behave(houseStyle);
    e = await startE2E({
      SOURCE_DIR: path.resolve("tests/fixtures/source-small"),
      AI_BASE_URL: model.url,
      AI_MODEL: "fake-model",
      AI_RETRY_BASE_MS: "10",
      // Every row's call at once: the slow rows all answer after SLOW_MS, not in rounds.
      AI_CONCURRENCY: "16",
      AI_PRICE_INPUT_PER_MTOK: "2.5",
      AI_PRICE_OUTPUT_PER_MTOK: "10",
    });
    await e.t.app.services.dataOps.start("reset", null);
    await e.t.app.services.dataOps.idle();
    await e.t.createUser("creator", ["access:import", "create:products", "access:ai_validation_debug"]);
    const { token } = await e.t.login("creator");
    const fd = new FormData();
    fd.append("company", "1");
    fd.append("product_type", "Cardstock");
    fd.append(
      "file",
      new Blob([new Uint8Array(await import("node:fs").then((fs) => fs.readFileSync(SAMPLE)))]),
      "supplier-price-list.csv",
    );
    const res = await fetch(`${e.t.url}/api/product-imports`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      body: fd,
    });
    expect(res.status).toBe(201);
    importId = (await res.json()).id;
    const mapped = await fetch(`${e.t.url}/api/product-imports/${importId}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({
        mapping: {
          "Item #": "sku",
          Description: "title",
          UPC: "barcode",
          Wholesale: "cost_each",
          Retail: "price",
          MSRP: "msrp",
          "Case Pack": "case_qty",
          "Weight (oz)": "weight",
          Category: "categories",
          Notes: "description",
        },
      }),
    });
    expect(mapped.status, await mapped.clone().text()).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await e?.close();
    await model?.close();
  });

  it("estimates, runs, shows the verdicts, accepts a suggestion and opens the run on the debug page", async () => {
    const { page } = await e.newPage({ width: 1440, height: 1000 });
    await e.signIn(page, "creator");
    await page.goto(`/import?id=${importId}&step=edit`);
    const panel = page.getByTestId("ai-panel");
    await expect
      .poll(() => panel.getByTestId("ai-estimate").textContent())
      .toMatch(/rows? to check .*with errors left out.*estimated \$/);
    // Before the run the cell is plain; the page is marked, so a reload would show.
    const cell = page.getByTestId("cell-1-title");
    expect(await cell.getAttribute("data-state")).toBe("ok");
    expect(await cell.getAttribute("title")).toBeNull();
    await page.evaluate(() => {
      (window as unknown as { __sameDocument: boolean }).__sameDocument = true;
    });
    // Row 1 is answered at once, the others after SLOW_MS: row 1's verdict must reach its cell
    // while the other rows are still with the model.
    model.behave((req) => ({
      ...houseStyle(req),
      delayMs: rowsOf(req.body).some((r) => r.row_id === 1) ? 0 : SLOW_MS,
    }));
    // A slow network for the run's status (what the page watches to read the grid again): the
    // page's first look at the run then comes after row 1 was answered and written, the case that
    // used to leave the cell waiting for the other rows.
    await page.route(/aiValidation\.importStatus/, async (route) => {
      await new Promise((r) => setTimeout(r, 700));
      // The page may have let go of the route meanwhile (unrouted or closed): nothing to continue then.
      await route.continue().catch(() => undefined);
    });
    try {
      const clicked = Date.now();
      await panel.getByRole("button", { name: "Run AI check" }).click();
      await panel.getByTestId("ai-progress").waitFor();
      // Row 1's verdict reaches its cell in place within a few seconds (the page reads the grid
      // again when the run's progress says a row's verdicts are written), long before the others.
      await expect.poll(() => cell.getAttribute("data-state"), { timeout: 8_000 }).toBe("warning");
      expect(Date.now() - clicked).toBeLessThan(SLOW_MS - 2_000);
      // The others are still with the model: the run goes on.
      expect(await panel.getByTestId("ai-progress").textContent()).toMatch(/Checking… 1 of \d+ rows/);
      await panel.getByTestId("ai-last-run").waitFor({ timeout: 60_000 });
    } finally {
      model.behave(houseStyle);
      await page.unroute(/aiValidation\.importStatus/);
    }
    const suggestions = panel.getByTestId("ai-suggestion");
    await expect.poll(() => suggestions.count()).toBeGreaterThan(0);
    await panel.getByText("Maple Mill 12x12 Cardstock, Cranberry").waitFor();
    // The verdict arrives on the grid's cell in place (no reload, no navigation): a warning whose
    // hover text gives the issue and the suggestion.
    await expect.poll(() => cell.getAttribute("data-state")).toBe("warning");
    expect(await cell.getAttribute("title")).toBe(
      "Warning: Use a comma, not a dash, in titles\nSuggested: Maple Mill 12x12 Cardstock, Cranberry",
    );
    expect(
      await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument),
    ).toBe(true);
    if (SHOTS) await page.screenshot({ path: path.join(SHOTS, "ai-import-panel.png"), fullPage: true });

    await panel.getByRole("button", { name: "Accept title of row 1" }).click();
    await expect
      .poll(() => page.getByTestId("cell-1-title").textContent())
      .toBe("Maple Mill 12x12 Cardstock, Cranberry");
    const stored = await e.t.tdb.db.prisma.productImportRow.findFirstOrThrow({
      where: { importId, rowId: 1 },
    });
    expect((stored.values as Record<string, string>).title).toBe("Maple Mill 12x12 Cardstock, Cranberry");

    // The run behind a finding opens on the debug page.
    await panel
      .getByRole("link", { name: /^run #\d+$/ })
      .first()
      .click();
    await page.waitForURL(/\/ai-validation\/debug\?run=\d+/);
    await page.getByTestId("run-summary").getByText(`Import ${importId}`).waitFor();
    await page.getByTestId("verdicts").getByText("Use a comma, not a dash, in titles").first().waitFor();
  });
});
