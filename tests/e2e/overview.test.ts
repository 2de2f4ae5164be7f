// The Overview in Chromium over a small demo data set calculated by a real Full Reset: the empty
// state before any run, the KPIs and breakdowns as the API has them, switching the period (the URL
// and the figures follow), a row opening the filtered Products page, a user holding only
// access:overview (figures, no links, no export), and the phone layout.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateDemoData } from "../../scripts/lib/demo-data.ts";
import type { OverviewSummary } from "../../shared/analytics.ts";
import { type E2E, startE2E } from "./harness.ts";

const SHOTS = process.env.E2E_SCREENSHOTS;

describe("Overview in Chromium", () => {
  let e: E2E;
  let dir: string;
  let token: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "overview-e2e-"));
    await generateDemoData({ out: dir, products: 120, years: 2, seed: 14 });
    e = await startE2E({ SOURCE_DIR: dir });
    token = (await e.t.login("admin")).token;
    await e.t.createUser("viewer", ["access:overview"]);
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
  async function api(input: object): Promise<OverviewSummary> {
    const url = `${e.t.url}/trpc/analytics.overview?input=${encodeURIComponent(JSON.stringify({ json: input }))}`;
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    return (await res.json()).result.data.json as OverviewSummary;
  }

  it("says there is no data yet, with the way to Data Management for those allowed", async () => {
    const page = await open("/overview");
    const empty = page.getByTestId("dashboard-empty");
    await empty.getByText("No data yet: run a full update or reset").waitFor();
    expect(await empty.getByRole("link", { name: "Open Data Management" }).getAttribute("href")).toBe(
      "/settings?tab=data",
    );
    const viewer = await open("/overview", "viewer");
    await viewer.getByTestId("dashboard-empty").waitFor();
    expect(await viewer.getByTestId("dashboard-empty").getByRole("link").count()).toBe(0);
  });

  describe("after a Full Reset", () => {
    beforeAll(async () => {
      await e.t.app.services.dataOps.start("reset", null);
      await e.t.app.services.dataOps.idle();
    }, 120_000);

    it("shows the KPIs and the category tree, switches the period, and opens a row's products", async () => {
      const month = await api({ period: "30d" });
      const page = await open("/overview");
      await page.getByTestId("as-of").waitFor();
      expect(await page.getByTestId("kpi").count()).toBe(month.kpis.length);
      const sales = (o: OverviewSummary) => o.kpis.find((k) => k.key === "revenue")!.current!;
      const salesText = () =>
        page.locator('[data-testid="kpi"][data-key="revenue"] [data-testid="kpi-value"]').textContent();
      const money = (v: number) => `$${Math.round(v).toLocaleString("en-US")}`;
      await expect.poll(salesText).toBe(money(sales(month)));
      // A figure's name says how it is computed on a tap too (a phone has no hover).
      await page.locator('[data-testid="kpi"][data-key="revenue"] [data-testid="kpi-label"]').click();
      await expect
        .poll(() => page.getByTestId("kpi-how").textContent())
        .toContain(month.kpis.find((k) => k.key === "revenue")!.how);
      await page.keyboard.press("Escape");
      const roots = month.breakdowns.category.filter((r) => r.parent_id === null);
      await expect.poll(() => page.getByTestId("breakdown-row").count()).toBe(roots.length);
      await shot(page, "overview-desktop");

      // Another period: the URL keeps it, the figures are the API's for it.
      const year = await api({ period: "365d", compare: "last_year" });
      await page.locator('[data-period="365d"]').click();
      await page.locator('[data-compare="last_year"]').click();
      await page.waitForURL(
        (u) => u.searchParams.get("period") === "365d" && u.searchParams.get("compare") === "last_year",
      );
      await expect.poll(salesText).toBe(money(sales(year)));
      await page.getByTestId("period-line").getByText("Last 365 days").waitFor();

      // A custom range.
      const to = year.period!.current.to;
      await page.locator('[data-period="custom"]').click();
      // Choosing "Custom range" opens on a whole range (the last 30 days), not on an error.
      await page.waitForURL((u) => u.searchParams.get("period") === "custom" && u.searchParams.has("from"));
      await expect.poll(salesText).toBe(money(sales(month)));
      await page.getByTestId("period-from").fill(year.period!.current.from.replace(/^(\d{4})/, (y) => y));
      await page.getByTestId("period-to").fill(to);
      await page.getByTestId("period-apply").click();
      await page.waitForURL(
        (u) => u.searchParams.get("period") === "custom" && u.searchParams.get("to") === to,
      );

      // Brands: a row opens the Products page filtered to that brand.
      await page.getByRole("tab", { name: "Brands" }).click();
      const first = page.getByTestId("breakdown-brand").getByTestId("breakdown-link").first();
      const href = await first.getAttribute("href");
      expect(href).toMatch(/^\/products\?brand=\d+$/);
      await first.click();
      await page.waitForURL((u) => u.pathname === "/products" && u.searchParams.has("brand"));
    });

    it("shows a user with only access:overview the figures, no links and no export", async () => {
      const page = await open("/overview", "viewer");
      await page.getByTestId("kpi").first().waitFor();
      await page.getByTestId("breakdown-row").first().waitFor();
      expect(await page.getByTestId("breakdown-link").count()).toBe(0);
      expect(await page.getByTestId("export-csv").count()).toBe(0);
      const admin = await open("/overview");
      await admin.getByTestId("export-csv").first().waitFor();
    });

    it("fits a phone's width", async () => {
      const page = await open("/overview", "admin", 390);
      await page.getByTestId("kpi").first().waitFor();
      await page.getByTestId("breakdown-row").first().waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      await shot(page, "overview-phone");
    });
  });
});
