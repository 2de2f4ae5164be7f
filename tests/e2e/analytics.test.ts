// The Analytics page in Chromium over a small demo data set calculated by a real Full Reset: the
// empty state before any run, every chart with its note, an ABC × XYZ cell opening the Products page
// filtered by both classes, a days-of-cover, stock-aging and receipt-month bucket each opening
// its products (as many as the bucket says), a user holding only access:analytics (charts, no links, no CSV), and the
// phone layout.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateDemoData } from "../../scripts/lib/demo-data.ts";
import { type E2E, startE2E } from "./harness.ts";

const SHOTS = process.env.E2E_SCREENSHOTS;
const CHARTS = 10;

describe("Analytics in Chromium", () => {
  let e: E2E;
  let dir: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "analytics-e2e-"));
    await generateDemoData({ out: dir, products: 120, years: 2, seed: 14 });
    e = await startE2E({ SOURCE_DIR: dir });
    await e.t.createUser("viewer", ["access:analytics"]);
    if (SHOTS) fs.mkdirSync(SHOTS, { recursive: true });
  });
  afterAll(async () => {
    await e?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  async function open(url: string, user = "admin", width = 1280): Promise<Page> {
    const { page } = await e.newPage({ width, height: 900 });
    await e.signIn(page, user);
    await page.goto(url);
    return page;
  }
  const shot = async (page: Page, name: string) => {
    if (!SHOTS) return;
    await page.waitForTimeout(500);
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  };

  it("says there is no data yet", async () => {
    const page = await open("/analytics");
    await page.getByTestId("dashboard-empty").getByText("No data yet: run a full update or reset").waitFor();
    const viewer = await open("/analytics", "viewer");
    await viewer.getByTestId("dashboard-empty").waitFor();
    expect(await viewer.getByTestId("dashboard-empty").getByRole("link").count()).toBe(0);
  });

  describe("after a Full Reset", () => {
    beforeAll(async () => {
      await e.t.app.services.dataOps.start("reset", null);
      await e.t.app.services.dataOps.idle();
    }, 120_000);

    it("shows every chart with its note and CSV link; a matrix cell opens its products", async () => {
      const page = await open("/analytics");
      await expect.poll(() => page.getByTestId("analytics-chart").count()).toBe(CHARTS);
      expect(await page.getByTestId("chart-how").count()).toBe(CHARTS);
      await expect.poll(() => page.getByTestId("export-csv").count()).toBe(CHARTS);
      await page.getByTestId("sales-trend-chart").waitFor();
      await page.getByTestId("aging-chart").waitFor();
      await page.getByTestId("dead-stock").waitFor();
      // Stock value over time, split by top-level category.
      await page.locator('[data-chart="stock_value"]').getByRole("button", { name: "By category" }).click();
      await page.getByTestId("stock-value-category-chart").locator("svg").first().waitFor();
      // The Sales period: switching it keeps it in the URL.
      await page.locator('[data-period="90d"]').click();
      await page.waitForURL((u) => u.searchParams.get("period") === "90d");
      await shot(page, "analytics-desktop");
      const cell = page.getByTestId("matrix-link").first();
      const href = await cell.getAttribute("href");
      expect(href).toMatch(/^\/products\?abc=[ABC]&xyz=[XYZ]$/);
      await cell.click();
      await page.waitForURL(
        (u) => u.pathname === "/products" && u.searchParams.has("xyz") && u.searchParams.has("abc"),
      );
      await page.locator('[data-testid="flag-filter"][data-flag="xyz"]').waitFor();
    });

    it("a days-of-cover, a stock-aging and a receipt-month bucket each open their products, as many as the bucket says", async () => {
      const page = await open("/analytics");
      for (const [chart, item] of [
        ["cover", "bucket"],
        ["aging", "bucket"],
        ["sell_through", "receipt-month"],
      ] as const) {
        const card = page.locator(`[data-chart="${chart}"]`);
        await card.getByTestId(item).first().waitFor();
        // The first bucket holding products (its line reads "label: N products, …").
        const lines = await card.getByTestId(item).allTextContents();
        const at = lines.findIndex((l) => /: [1-9][\d,]* products?,/.test(l));
        expect(at, `${chart}: ${lines.join(" | ")}`).toBeGreaterThanOrEqual(0);
        const count = /: ([\d,]+) products?,/.exec(lines[at]!)![1]!;
        await card.getByTestId(item).nth(at).getByTestId("drill-link").click();
        await page.waitForURL((u) => u.pathname === "/products");
        const noun = count === "1" ? "product" : "products";
        await expect
          .poll(() => page.getByTestId("paging-summary").textContent())
          .toMatch(new RegExp(`of ${count} ${noun}$`));
        await page.goBack();
        await page.waitForURL((u) => u.pathname === "/analytics");
      }
    });

    it("shows a user with only access:analytics the charts, no links and no CSV", async () => {
      const page = await open("/analytics", "viewer");
      await expect.poll(() => page.getByTestId("analytics-chart").count()).toBe(CHARTS);
      await page.getByTestId("dead-stock").waitFor();
      await page.getByTestId("mover").first().waitFor();
      expect(await page.getByTestId("export-csv").count()).toBe(0);
      expect(await page.getByTestId("matrix-link").locator("xpath=self::a").count()).toBe(0);
      expect(await page.locator('a[data-testid="drill-link"]').count()).toBe(0);
    });

    it("fits a phone's width", async () => {
      const page = await open("/analytics", "admin", 390);
      await expect.poll(() => page.getByTestId("analytics-chart").count()).toBe(CHARTS);
      await page.getByTestId("dead-stock").waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      // No value-axis label is cut by its chart's left edge (e.g. "$120,000" lost its "$").
      const cut = await page.evaluate(() =>
        [...document.querySelectorAll(".recharts-yAxis .recharts-cartesian-axis-tick-value")]
          .filter((t) => {
            const svg = t.closest("svg.recharts-surface");
            return svg && t.getBoundingClientRect().left < svg.getBoundingClientRect().left - 0.5;
          })
          .map((t) => t.textContent),
      );
      expect(cut).toEqual([]);
      await shot(page, "analytics-phone");
    });
  });
});
