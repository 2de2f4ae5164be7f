// The Dashboard in Chromium over a small demo data set written for today and calculated by a real
// Full Reset: the empty state before any run, the tiles with the API's counts, a tile opening the
// Products page on the same filter and total, the KPI period switch, a user holding only
// access:dashboard (figures, no links), and the phone layout.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateDemoData } from "../../scripts/lib/demo-data.ts";
import type { DashboardSummary } from "../../shared/dashboard.ts";
import { type E2E, startE2E } from "./harness.ts";

const SHOTS = process.env.E2E_SCREENSHOTS;

describe("Dashboard in Chromium", () => {
  let e: E2E;
  let dir: string;
  let token: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "dashboard-e2e-"));
    await generateDemoData({ out: dir, products: 120, years: 2, seed: 14 });
    e = await startE2E({ SOURCE_DIR: dir });
    token = (await e.t.login("admin")).token;
    await e.t.createUser("viewer", ["access:dashboard"]);
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
    await page.waitForTimeout(300);
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  };

  it("says there is no data yet, with the way to Data Management for those allowed", async () => {
    const page = await open("/dashboard");
    const empty = page.getByTestId("dashboard-empty");
    await empty.getByText("No data yet: run a full update or reset").waitFor();
    expect(await empty.getByRole("link", { name: "Open Data Management" }).getAttribute("href")).toBe(
      "/settings?tab=data",
    );
    const viewer = await open("/dashboard", "viewer");
    await viewer.getByTestId("dashboard-empty").waitFor();
    expect(await viewer.getByTestId("dashboard-empty").getByRole("link").count()).toBe(0);
  });

  describe("after a Full Reset", () => {
    let api: DashboardSummary;
    beforeAll(async () => {
      await e.t.app.services.dataOps.start("reset", null);
      await e.t.app.services.dataOps.idle();
      const res = await fetch(`${e.t.url}/api/dashboard`, { headers: { authorization: `Bearer ${token}` } });
      api = (await res.json()) as DashboardSummary;
      expect(api.has_data).toBe(true);
    }, 120_000);

    it("shows the as-of day, every tile with the API's count, and the KPIs", async () => {
      const page = await open("/dashboard");
      await page.getByTestId("as-of").waitFor();
      expect(await page.getByTestId("as-of").textContent()).toMatch(/^as of \d{4}-\d\d-\d\d \d\d:\d\d$/);
      await expect
        .poll(() =>
          page.getByTestId("tile").evaluateAll((els) => els.map((el) => el.getAttribute("data-key"))),
        )
        .toEqual(api.tiles.map((t) => t.key));
      for (const tile of api.tiles) {
        const count = await page
          .locator(`[data-testid="tile"][data-key="${tile.key}"] [data-testid="tile-count"]`)
          .textContent();
        expect(count, tile.key).toBe(tile.count.toLocaleString("en-US"));
      }
      expect(await page.getByTestId("kpi").count()).toBe(9);
      await page.getByText(/^Last 7 days/).waitFor();
      await page.getByRole("button", { name: "30 days" }).click();
      await page.getByText(/^Last 30 days/).waitFor();
      await page.getByTestId("sales-chart").locator("svg").first().waitFor();
      await page.getByTestId("stock-value-chart").waitFor();
      await page.getByTestId("status-value-chart").waitFor();
      await shot(page, "dashboard-desktop");
    });

    it("opens a tile's list: the Products page with the same filter and total", async () => {
      const tile = api.tiles.find((t) => t.count > 0 && t.count <= 50) ?? api.tiles.find((t) => t.count > 0)!;
      const page = await open("/dashboard");
      await page.locator(`a[data-testid="tile"][data-key="${tile.key}"]`).click();
      await page.waitForURL((u) => u.pathname === "/products");
      const url = new URL(page.url());
      for (const [k, v] of Object.entries(tile.search)) expect(url.searchParams.get(k), k).toBe(v);
      const noun = tile.count === 1 ? "product" : "products";
      await expect
        .poll(() => page.getByTestId("paging-summary").textContent())
        .toMatch(new RegExp(`of ${tile.count.toLocaleString("en-US")} ${noun}$`));
    });

    it("shows a user with only access:dashboard the figures and no links", async () => {
      const page = await open("/dashboard", "viewer");
      await page.getByTestId("tile").first().waitFor();
      expect(await page.locator('a[data-testid="tile"]').count()).toBe(0);
      expect(await page.getByTestId("tile").count()).toBe(api.tiles.length);
      expect(await page.getByTestId("kpi").count()).toBe(9);
      expect(await page.getByRole("link", { name: "Open Data Management" }).count()).toBe(0);
    });

    it("fits a phone's width", async () => {
      const page = await open("/dashboard", "admin", 390);
      await page.getByTestId("tile").first().waitFor();
      await page.getByTestId("sales-chart").waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      await shot(page, "dashboard-phone");
    });
  });
});
