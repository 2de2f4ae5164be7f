// The Discount Simulator in Chromium: simulate 25% off a category, compare it with 40% off on the
// chart (axis titles, the promotion's weeks shaded), save one as a promotion and find it in the list
// with its predicted revenue; a planner without create:promotions may simulate but not save; the
// page fits a 390 px wide screen.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateDemoData } from "../../scripts/lib/demo-data.ts";
import { formatCurrency } from "../../shared/format.ts";
import { type E2E, startE2E } from "./harness.ts";

const SHOTS = process.env.E2E_SHOTS;

describe("Discount Simulator in Chromium", () => {
  let e: E2E;
  let dir: string;
  let category: { id: number; name: string };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "discounts-e2e-"));
    await generateDemoData({ out: dir, products: 200, years: 2, seed: 11 });
    e = await startE2E({ SOURCE_DIR: dir });
    await e.t.app.services.dataOps.start("reset", null);
    await e.t.app.services.dataOps.idle();
    // The leaf category with the most products.
    const [row] = await e.t.tdb.db.prisma.$queryRawUnsafe<{ id: number; name: string }[]>(
      `SELECT c.id, c.name FROM categories c JOIN product_categories pc ON pc.category_id = c.id
       WHERE NOT EXISTS (SELECT 1 FROM categories k WHERE k.parent_id = c.id)
       GROUP BY c.id, c.name ORDER BY count(*) DESC, c.id LIMIT 1`,
    );
    category = row!;
    await e.t.createUser("planner", ["access:discount_simulator"]);
    if (SHOTS) fs.mkdirSync(SHOTS, { recursive: true });
  }, 180_000);
  afterAll(async () => {
    await e?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  async function open(user = "admin", width = 1280): Promise<Page> {
    const { page } = await e.newPage({ width, height: 900 });
    await e.signIn(page, user);
    await page.goto("/discount-simulator");
    await page.getByRole("heading", { name: "Discount Simulator" }).waitFor();
    return page;
  }
  const shot = async (page: Page, name: string) => {
    if (!SHOTS) return;
    await page.waitForTimeout(300);
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  };

  it("simulates 25% off a category, compares 40% off on the chart, and saves the first as a promotion", async () => {
    const page = await open();
    await page.locator("#scope-id").selectOption(String(category.id));
    await page.getByLabel("Scenario 1 discount %").fill("25");
    await page.getByRole("button", { name: "Add scenario" }).click();
    await page.getByLabel("Scenario 2 discount %").fill("40");
    await page.getByRole("button", { name: "Simulate" }).click();
    const results = page.getByTestId("results");
    await results.waitFor();
    // The run is in the URL: a reload (or the link, sent on) runs it again.
    await expect.poll(() => new URL(page.url()).searchParams.get("scenarios")).toBe("25,40");
    expect(new URL(page.url()).searchParams.get("category_id")).toBe(String(category.id));
    await page.reload();
    await results.waitFor();
    expect(await page.getByLabel("Scenario 2 discount %").inputValue()).toBe("40");
    // Both scenarios are lines beside the baseline, in the units chart and in the stock chart.
    for (const chart of ["chart-units", "chart-stock"]) {
      const legend = page.getByTestId(chart).locator(".recharts-legend-item-text");
      await expect
        .poll(async () => (await legend.allTextContents()).sort())
        .toEqual(["25% off", "40% off", "Baseline"]);
      expect(await page.getByTestId(chart).locator(".recharts-line").count()).toBe(3);
    }
    // Each chart names its axes, and shades the run's days (the URL's from..to) as "Promotion".
    const from = new URL(page.url()).searchParams.get("from")!;
    const to = new URL(page.url()).searchParams.get("to")!;
    const day = (d: string) =>
      new Date(`${d}T00:00:00Z`).toLocaleDateString("en-US", {
        month: "short",
        day: "numeric",
        year: "numeric",
        timeZone: "UTC",
      });
    for (const [chart, yTitle] of [
      ["chart-units", "Units per week"],
      ["chart-stock", "Units in stock"],
    ] as const) {
      const fig = page.getByTestId(chart);
      expect((await fig.locator(".recharts-label").allTextContents()).sort()).toEqual(
        ["Promotion", "Week", yTitle].sort(),
      );
      expect(await fig.getByTestId("chart-promotion-key").textContent()).toBe(
        `Promotion: ${day(from)} to ${day(to)}`,
      );
      // The band lies inside the plot, neither missing nor the whole width: the chart starts before
      // the promotion and runs 4 weeks past its end.
      const band = await fig.locator(".recharts-reference-area-rect").boundingBox();
      const plot = await fig.locator(".recharts-cartesian-grid").boundingBox();
      expect(band!.width).toBeGreaterThan(0);
      expect(band!.x).toBeGreaterThan(plot!.x + 1);
      expect(band!.x + band!.width).toBeLessThan(plot!.x + plot!.width - 1);
    }
    // The totals: 25% off sells more units than the baseline.
    const totals = page.getByTestId("totals");
    const unitsRow = totals.locator("tr", { hasText: "Units" });
    const [base, scen] = (await unitsRow.locator("td").allTextContents()).map((t) =>
      Number(t.replace(/,/g, "")),
    );
    expect(scen!).toBeGreaterThan(base!);
    expect(await page.getByTestId("product-row").count()).toBeGreaterThan(0);
    // The dip after the promotion, as the category's history shows it (docs/metrics.md §16.2).
    expect(await page.getByTestId("dip-after").textContent()).toMatch(
      /^(dip after the promotion: −[\d.]+ % for \d weeks?, from \d+ past promotions?: the chart's weeks after the end date show it\.|no dip seen in the history\.)$/,
    );
    // Switching the table to the 40% scenario shows its prices.
    await page.getByRole("tab", { name: "40% off" }).click();
    await expect
      .poll(() => page.getByRole("tab", { name: "40% off" }).getAttribute("aria-selected"))
      .toBe("true");
    await page.getByRole("tab", { name: "25% off" }).click();
    await shot(page, "discount-simulator");

    // A form edited after the run does not change what is saved: the result shown is 25% off.
    await page.getByLabel("Scenario 1 discount %").fill("45");
    await page.getByPlaceholder("Promotion name").fill("Category sale");
    await page.getByRole("button", { name: "Save promotion" }).click();
    await page.getByText('Promotion "Category sale" saved').waitFor();
    const promo = page.getByTestId("promotion-row").filter({ hasText: "Category sale" });
    await promo.waitFor();
    await expect.poll(() => promo.textContent()).toContain("Planned");
    expect(await promo.textContent()).toContain("25% off");
    // Its details say what was predicted in money, from the rows it stored.
    const [money] = await e.t.tdb.db.prisma.$queryRawUnsafe<{ predicted: number; baseline: number }[]>(
      `SELECT round(sum(price * predicted_units::numeric), 2)::float8 AS predicted,
         round(sum(base_price * baseline_units::numeric), 2)::float8 AS baseline FROM promotion_products`,
    );
    expect(money!.predicted).toBeGreaterThan(money!.baseline);
    await promo.getByRole("button", { name: "Details" }).click();
    const revenue = page.getByTestId("promotion-revenue");
    await revenue.waitFor();
    expect(await revenue.textContent()).toBe(
      `Predicted revenue ${formatCurrency(money!.predicted)} at the promotional prices, against a baseline of ${formatCurrency(money!.baseline)} at the base prices (+${formatCurrency(Math.round((money!.predicted - money!.baseline) * 100) / 100)}).`,
    );
    await promo.getByRole("button", { name: "Hide" }).click();
    const saved = await e.t.tdb.db.prisma.$queryRawUnsafe<{ name: string; n: number }[]>(
      "SELECT p.name, (SELECT count(*)::int FROM promotion_products pp WHERE pp.promotion_id = p.id) AS n FROM promotions p",
    );
    expect(saved).toHaveLength(1);
    expect(saved[0]!.n).toBeGreaterThan(0);
    const [pct] = await e.t.tdb.db.prisma.$queryRawUnsafe<{ d: number }[]>(
      "SELECT discount_pct::float8 AS d FROM promotions",
    );
    expect(pct!.d).toBe(25);
    // A form that cannot run takes the old result away with its message.
    await page.locator("#scope-id").selectOption("");
    await page.getByRole("button", { name: "Simulate" }).click();
    await page.getByText("Choose a category.").waitFor();
    await results.waitFor({ state: "detached" });
    await page.locator("#scope-id").selectOption(String(category.id));
    await page.getByLabel("Scenario 1 discount %").fill("25");

    // The promotion is a layer of the forecast: its products' promoted weeks carry it on the
    // Forecasting page (violet cells, a Promotion line, the product chart lists it).
    const [promoted] = await e.t.tdb.db.prisma.$queryRawUnsafe<{ pid: number; title: string }[]>(
      `SELECT pp.pid, p.title FROM promotion_products pp JOIN products p ON p.pid = pp.pid
       JOIN product_forecasts f ON f.pid = pp.pid WHERE f.weekly[1] > 0 ORDER BY f.weekly[1] DESC, pp.pid LIMIT 1`,
    );
    expect(promoted).toBeDefined();
    await page.goto(`/forecasting?q=${promoted!.pid}&selected=${promoted!.pid}`);
    const fcRow = page.locator(
      `[data-testid="forecast-row"][data-level="product"][data-id="${promoted!.pid}"]`,
    );
    await fcRow.waitFor();
    await expect.poll(() => fcRow.locator('[data-promotion="true"]').count()).toBeGreaterThan(0);
    await fcRow.getByRole("button", { name: `Expand ${promoted!.title}` }).click();
    await page.locator('[data-testid="forecast-subrow"][data-line="Promotion"]').waitFor();
    await page.getByTestId("forecast-promotion").filter({ hasText: 'Promotion "Category sale"' }).waitFor();
    await shot(page, "forecasting-promotion");
    await page.goto("/discount-simulator");
    await promo.waitFor();

    // Edit it before it starts, then cancel it.
    await promo.getByRole("button", { name: "Edit" }).click();
    await page.getByRole("form", { name: "Edit Category sale" }).getByLabel("Discount %").fill("30");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByText('Promotion "Category sale" updated').waitFor();
    await expect.poll(() => promo.textContent()).toContain("30% off");
    await promo.getByRole("button", { name: "Cancel" }).click();
    // Asked first.
    await page.getByRole("alertdialog").getByRole("button", { name: "Cancel promotion" }).click();
    await expect.poll(() => promo.textContent()).toContain("Cancelled");
    // Cancelled: the Forecasting page no longer carries it.
    await page.goto(`/forecasting?q=${promoted!.pid}`);
    await fcRow.waitFor();
    await expect.poll(() => fcRow.locator('[data-promotion="true"]').count()).toBe(0);
  });

  it("opens the simulator from the Products page's filter with that selection, and says where it came from", async () => {
    const { page } = await e.newPage({ width: 1280, height: 900 });
    await e.signIn(page, "admin");
    await page.goto(`/products?category=${category.id}&no_sales_days=3`);
    await page.getByTestId("products-page").waitFor();
    const link = page.getByTestId("simulate-selection");
    await expect.poll(() => link.textContent()).toBe("Simulate a discount on these products");
    await link.click();
    await page.getByRole("heading", { name: "Discount Simulator" }).waitFor();
    expect(new URL(page.url()).searchParams.get("filter")).toBe(`category=${category.id}&no_sales_days=3`);
    // The same products the Products list shows for that filter.
    const [{ n }] = (await e.t.tdb.db.prisma.$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM product_metrics m JOIN products p ON p.pid = m.pid
       WHERE p.kind = 'merchandise'
         AND (m.date_last_sold IS NULL OR m.date_last_sold <= (m.calculated_at AT TIME ZONE 'UTC')::date - 3)
         AND m.pid IN (SELECT pid FROM product_categories WHERE category_id IN (
           WITH RECURSIVE sub(id) AS (SELECT $1::int UNION SELECT c.id FROM categories c JOIN sub ON c.parent_id = sub.id)
           SELECT id FROM sub))`,
      category.id,
    )) as [{ n: number }];
    const note = page.getByTestId("filter-scope");
    await note.getByText(`category ${category.name} · no sale in the last 3 days`).waitFor();
    if (n === 0) {
      await note.getByText("it matches no product.").waitFor();
      return;
    }
    await expect
      .poll(() => page.getByTestId("filter-scope-count").textContent())
      .toBe(`${n} product${n === 1 ? "" : "s"}.`);
    expect(await page.locator("#scope-kind").inputValue()).toBe("products");
    const ids = (await page.locator("#scope-pids").inputValue()).split(", ");
    expect(ids).toHaveLength(n);
    await page.getByRole("button", { name: "Simulate" }).click();
    await page.getByTestId("results").waitFor();
    await shot(page, "discount-simulator-from-products");
  });

  it("lets a planner simulate but not save, and fits a 390 px screen", async () => {
    const page = await open("planner", 390);
    await page.locator("#scope-id").selectOption(String(category.id));
    await page.getByRole("button", { name: "Simulate" }).click();
    await page.getByTestId("results").waitFor();
    await page
      .getByText("Saving a scenario as a promotion needs the Create Promotions permission.")
      .waitFor();
    expect(await page.getByPlaceholder("Promotion name").count()).toBe(0);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(1);
    await shot(page, "discount-simulator-390");
    // What is not a product ID is named, not dropped; "25%" is read as 25.
    await page.locator("#scope-kind").selectOption("products");
    await page.locator("#scope-pids").fill("abc, 12.5");
    await page.getByRole("button", { name: "Simulate" }).click();
    await page.getByText("Not a product ID: abc, 12.5.").waitFor();
    await page.getByTestId("results").waitFor({ state: "detached" });
  });
});
