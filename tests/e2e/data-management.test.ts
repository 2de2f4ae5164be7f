// The Data Management tab (spec section 2 "Data Management screen", section 4 "Data operations") in
// Chromium, over the small fixture source. A step delay makes each run last a few seconds, so it can
// be watched, joined and cancelled.
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2E, startE2E } from "./harness.ts";

const RESET_TEXT =
  "This will completely reset the database, delete all data, and reimport everything from scratch. This action cannot be undone.";

describe("Data Management in Chromium", () => {
  let e: E2E;
  let token: string;

  beforeAll(async () => {
    e = await startE2E({
      SOURCE_DIR: path.resolve("tests/fixtures/source-small"),
      PIPELINE_STEP_DELAY_MS: "150",
    });
    token = (await e.t.login("admin")).token;
  });
  afterAll(() => e?.close());

  const api = (route: string, method = "GET") =>
    fetch(`${e.t.url}${route}`, { method, headers: { authorization: `Bearer ${token}` } });

  /** Waits until no data operation runs (runs of one test must not leak into the next). */
  async function waitIdle() {
    await expect
      .poll(async () => ((await (await api("/csv/status")).json()) as { active: boolean }).active, {
        timeout: 30_000,
        interval: 200,
      })
      .toBe(false);
  }

  async function openDataTab(): Promise<Page> {
    const { page } = await e.newPage({ width: 1440, height: 1000 });
    await e.signIn(page, "admin");
    await page.goto("/settings?tab=data");
    await page.getByRole("button", { name: "Run Full Update" }).waitFor();
    return page;
  }

  /** A toast whose title is exactly `text`. */
  const toast = (page: Page, text: string) =>
    page
      .locator("[data-sonner-toast] [data-title]")
      .filter({ hasText: new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`) });
  const logLines = (page: Page) => page.getByTestId("script-output-line");
  /** The raw JSON text of a log line (after its time, step and status). */
  const rawOf = async (line: ReturnType<typeof logLines>) =>
    JSON.parse((await line.getByTestId("script-output-raw").textContent()) ?? "") as Record<string, unknown>;
  const runButtons = (page: Page) => ({
    update: page.getByTestId("update-button"),
    reset: page.getByTestId("reset-button"),
  });

  it("shows every empty state before the first run, and no output panel", async () => {
    const page = await openDataTab();
    await page
      .getByText("No imports have been performed yet. Run a full update or reset to import data.")
      .waitFor();
    await page
      .getByText("No metrics have been calculated yet. Run a full update or reset to calculate metrics.")
      .waitFor();
    await page.getByText("No table data available yet. Run a full update or reset.").waitFor();
    await page.getByText("No import history available", { exact: true }).waitFor();
    await page.getByText("No calculation history available", { exact: true }).waitFor();
    expect(await page.getByTestId("script-output").count()).toBe(0);
    expect(await page.getByText("Import latest data and recalculate all metrics").isVisible()).toBe(true);
    expect(
      await page.getByText("Reset database, reimport all data, and recalculate metrics").isVisible(),
    ).toBe(true);
    expect(await page.getByRole("heading", { name: "History & Status" }).isVisible()).toBe(true);
  });

  it("runs a full update: busy button, both buttons disabled, live JSON log, toast, history and counts", async () => {
    const page = await openDataTab();
    await page.getByRole("button", { name: "Run Full Update" }).click();

    const busy = page.getByRole("button", { name: "Updating..." });
    await busy.waitFor();
    expect(await busy.isDisabled()).toBe(true);
    expect(await runButtons(page).reset.isDisabled()).toBe(true);
    expect(await page.getByTestId("script-output-title").textContent()).toBe("Running full update...");
    expect(await page.getByRole("button", { name: "Cancel full update" }).isVisible()).toBe(true);
    // The log panel is the spec's 400px scrolling box.
    const box = await page.getByTestId("script-output-log").boundingBox();
    expect(box?.height).toBe(400);

    // The log fills with each progress message's raw JSON text.
    await expect.poll(() => logLines(page).count()).toBeGreaterThan(5);
    const first = await rawOf(logLines(page).first());
    expect(first).toMatchObject({ type: "update", status: "running" });
    await page.getByTestId("run-progress").waitFor();

    await toast(page, "Update completed successfully").waitFor({ timeout: 30_000 });
    expect(await page.getByRole("button", { name: "Run Full Update" }).isEnabled()).toBe(true);
    expect(await runButtons(page).reset.isEnabled()).toBe(true);
    expect(await page.getByRole("button", { name: "Cancel full update" }).count()).toBe(0);
    // The output stays, under its idle title; the last line is the final message.
    expect(await page.getByTestId("script-output-title").textContent()).toBe("Process output");
    const last = await rawOf(logLines(page).last());
    expect(last).toMatchObject({ status: "complete", operation: "Full update complete" });

    // Recent Imports: a completed (green) row; expanded, its steps and per-table details.
    const row = page.getByTestId("import-history-row").first();
    await expect.poll(() => row.getAttribute("data-status")).toBe("completed");
    expect(await row.getByTestId("status-badge").getAttribute("data-color")).toBe("green");
    await row.getByTestId("import-history-toggle").click();
    const detail = page.getByTestId("run-detail").first();
    await detail.getByTestId("run-steps").getByText("Load products.csv", { exact: true }).waitFor();
    const products = detail.locator('[data-testid="run-details-tables"] tr[data-name="products"]');
    expect((await products.locator("td").allTextContents()).map((s) => s.trim())).toEqual([
      "products",
      "3",
      "0",
      "0",
      "0",
      "3",
    ]);
    expect(await detail.getByTestId("step-timings").getByText("Load products.csv").count()).toBe(1);

    // Recent Calculations, status lists and table counts filled in.
    await expect
      .poll(() => page.getByTestId("calculation-history-row").first().getAttribute("data-status"))
      .toBe("completed");
    await page
      .getByTestId("import-times")
      .locator('[data-name="products"]')
      .getByText(/^\d+m ago$/)
      .waitFor();
    await page.getByTestId("calculation-times").locator('[data-name="product_metrics"]').waitFor();
    const productCount = page.locator('[data-testid="counts-core-row"][data-name="products"]');
    await expect.poll(() => productCount.textContent()).toBe("products3");
    await page.getByText("Core Tables", { exact: true }).waitFor();
    await page.getByText("Metrics Tables", { exact: true }).waitFor();
    await page.getByText("Config Tables", { exact: true }).waitFor();

    // Manual refresh.
    await page.getByTestId("history-refresh").click();
    await toast(page, "All data refreshed").waitFor();
    await waitIdle();
  });

  it("shows each message as a line with its time, step and status, pretty-printed when opened, none missing", async () => {
    const page = await openDataTab();
    await page.getByRole("button", { name: "Run Full Update" }).click();
    await toast(page, "Update completed successfully").waitFor({ timeout: 30_000 });
    const lines = logLines(page);
    const count = await lines.count();
    expect(count).toBeGreaterThan(5);
    const shown = await lines.evaluateAll((els) =>
      els.map((el) => ({
        prefix: el.querySelector('[data-testid="script-output-prefix"]')?.textContent ?? "",
        raw: el.querySelector('[data-testid="script-output-raw"]')?.textContent ?? "",
      })),
    );
    const events = shown.map(
      (l) => JSON.parse(l.raw) as { seq: number; status: string; step_index: number; step_count: number },
    );
    for (const [i, line] of shown.entries()) {
      const ev = events[i]!;
      // "12:34:56 step 3/9 running " before the raw message.
      expect(line.prefix).toMatch(
        new RegExp(`^\\d{2}:\\d{2}:\\d{2} step ${ev.step_index}/${ev.step_count} ${ev.status} $`),
      );
    }
    // Every message of the run, in order: the sequence numbers run 1, 2, 3, … without a gap.
    expect(events.map((ev) => ev.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)?.status).toBe("complete");
    // Opening a line shows its JSON pretty-printed; the raw line stays visible above it.
    const line = lines.nth(2);
    const pretty = line.getByTestId("script-output-json");
    expect(await pretty.isVisible()).toBe(false);
    await line.locator("summary").click();
    await pretty.waitFor();
    expect(await pretty.textContent()).toBe(JSON.stringify(events[2], null, 2));
    expect(await line.getByTestId("script-output-raw").isVisible()).toBe(true);
    await waitIdle();
  });
  it("asks before a full reset, and cancels it with the X button", async () => {
    const page = await openDataTab();
    await page.getByRole("button", { name: "Full Reset", exact: true }).click();
    const dialog = page.getByRole("alertdialog");
    await dialog.getByRole("heading", { name: "Are you absolutely sure?" }).waitFor();
    expect(await dialog.getByText(RESET_TEXT, { exact: true }).isVisible()).toBe(true);

    // Cancel closes the dialog and starts nothing.
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
    expect(await page.getByRole("button", { name: "Resetting..." }).count()).toBe(0);

    await page.getByRole("button", { name: "Full Reset", exact: true }).click();
    await dialog.getByRole("button", { name: "Continue" }).click();
    const busy = page.getByRole("button", { name: "Resetting..." });
    await busy.waitFor();
    expect(await busy.isDisabled()).toBe(true);
    expect(await runButtons(page).update.isDisabled()).toBe(true);
    expect(await page.getByTestId("script-output-title").textContent()).toBe("Running full reset...");
    // Cancelled during the calculations: on the embedded database their transaction holds the one
    // connection, and the cancel request must still get through at once.
    await expect
      .poll(() => logLines(page).filter({ hasText: "Calculate " }).count(), { timeout: 30_000 })
      .toBeGreaterThan(0);
    await page.getByRole("button", { name: "Cancel full reset" }).click();
    await toast(page, "Operation cancelled").waitFor({ timeout: 15_000 });
    await toast(page, "Reset cancelled").waitFor({ timeout: 15_000 });
    await page.getByRole("button", { name: "Full Reset", exact: true }).waitFor();
    expect(await runButtons(page).update.isEnabled()).toBe(true);

    const row = page.getByTestId("import-history-row").first();
    await expect.poll(() => row.getAttribute("data-status")).toBe("cancelled");
    const badge = row.getByTestId("status-badge");
    expect(await badge.textContent()).toBe("cancelled");
    expect(await badge.getAttribute("data-color")).toBe("yellow");
    // The data of the completed update is still there.
    const productCount = page.locator('[data-testid="counts-core-row"][data-name="products"]');
    expect(await productCount.textContent()).toBe("products3");
    await waitIdle();
  });

  it("switches into the running state when someone else starts a run", async () => {
    const page = await openDataTab();
    await page.getByTestId("import-history-row").first().waitFor();
    const res = await api("/csv/full-update", "POST");
    expect(res.status).toBe(200);

    await page.getByRole("button", { name: "Updating..." }).waitFor();
    expect(await runButtons(page).reset.isDisabled()).toBe(true);
    expect(await page.getByTestId("script-output-title").textContent()).toBe("Running full update...");
    await toast(page, "Update completed successfully").waitFor({ timeout: 30_000 });
    expect(await page.getByRole("button", { name: "Run Full Update" }).isEnabled()).toBe(true);
    await waitIdle();
  });

  it("reattaches to a run already active when the page opens", async () => {
    const { page } = await e.newPage({ width: 1440, height: 1000 });
    await e.signIn(page, "admin");
    await page.goto("/settings?tab=users");
    await page.getByTestId("settings-panel-users").waitFor();

    expect((await api("/csv/full-update", "POST")).status).toBe(200);
    await page.getByTestId("settings-tab-data").click();

    const connected = page.getByText("[Connected to running update process]", { exact: true });
    await connected.waitFor();
    expect(await page.getByRole("button", { name: "Updating..." }).isDisabled()).toBe(true);
    // The connection notice comes first, then the run's messages.
    expect(await logLines(page).first().textContent()).toBe("[Connected to running update process]");
    await toast(page, "Update completed successfully").waitFor({ timeout: 30_000 });
    await waitIdle();
  });

  it("reconnects when the progress stream drops during a run, and still sees it end", async () => {
    const page = await openDataTab();
    await page.getByRole("button", { name: "Run Full Update" }).click();
    await expect.poll(() => logLines(page).count()).toBeGreaterThan(2);
    const streams: number[] = [];
    page.on("request", (r) => {
      if (r.url().includes("/trpc/dataOps.progress")) streams.push(Date.now());
    });
    const droppedAt = Date.now();
    e.t.app.server.closeAllConnections();
    await page.getByTestId("stream-reconnecting").waitFor();
    await toast(page, "Update completed successfully").waitFor({ timeout: 30_000 });
    expect(await page.getByTestId("stream-reconnecting").count()).toBe(0);
    expect(await page.getByRole("button", { name: "Run Full Update" }).isEnabled()).toBe(true);
    // The browser's EventSource reconnected once, about 3 s after the drop.
    expect(streams.length).toBe(1);
    expect(streams[0]! - droppedAt).toBeGreaterThanOrEqual(2_500);
    await waitIdle();
  });

  it("shows a section's load error and names the failed request", async () => {
    const { page } = await e.newPage({ width: 1440, height: 1000 });
    await e.signIn(page, "admin");
    // Turn the import history part of the batched tRPC answer into a server error.
    await page.route(
      (url) => url.pathname.startsWith("/trpc/") && url.pathname.includes("dataOps.importHistory"),
      async (route) => {
        const response = await route.fetch();
        const names = decodeURIComponent(
          new URL(route.request().url()).pathname.slice("/trpc/".length),
        ).split(",");
        const body = (await response.json()) as unknown[];
        const i = names.indexOf("dataOps.importHistory");
        body[i] = {
          error: {
            json: {
              message: "boom",
              code: -32603,
              data: { code: "INTERNAL_SERVER_ERROR", httpStatus: 500, path: "dataOps.importHistory" },
            },
          },
        };
        await route.fulfill({ response, status: 207, json: body });
      },
    );
    await page.goto("/settings?tab=data");
    await page.getByText("Failed to load import history. Please try refreshing.").waitFor();
    await toast(page, "Failed to load data: Failed requests: dataOps.importHistory (500)").waitFor();
    // The other parts still show.
    await page.getByTestId("calculation-history-row").first().waitFor();

    await page.getByTestId("history-refresh").click();
    await toast(page, "Failed to refresh data").waitFor();
  });
});
