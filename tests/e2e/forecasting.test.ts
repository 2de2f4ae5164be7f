// The Forecasting page in Chromium over a small demo data set written for today and calculated by
// a real Full Reset: filter to a vendor, override a category by +20 % with a reason (previewed, then
// saved), see the products' final forecast and their reorder quantity change, remove the override;
// the phone layout keeps the page inside 390 px.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateDemoData } from "../../scripts/lib/demo-data.ts";
import type { ExceptionsPage, ForecastGridPage, ForecastListInput } from "../../shared/forecasting.ts";
import { type E2E, startE2E } from "./harness.ts";

describe("Forecasting in Chromium", () => {
  let e: E2E;
  let dir: string;
  let token: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "forecasting-e2e-"));
    await generateDemoData({ out: dir, products: 120, years: 2, seed: 6 });
    e = await startE2E({ SOURCE_DIR: dir });
    token = (await e.t.login("admin")).token;
    await e.t.app.services.dataOps.start("reset", null);
    await e.t.app.services.dataOps.idle();
  }, 180_000);
  afterAll(async () => {
    await e?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  async function rows(input: ForecastListInput): Promise<ForecastGridPage> {
    const url = `${e.t.url}/trpc/forecasting.rows?input=${encodeURIComponent(JSON.stringify({ json: input }))}`;
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    const body = (await res.json()) as { result: { data: { json: ForecastGridPage } } };
    return body.result.data.json;
  }
  const sql = <T>(text: string, ...params: unknown[]) =>
    e.t.tdb.db.prisma.$queryRawUnsafe<T[]>(text, ...params);
  const row = (page: Page, level: string, id: number) =>
    page.locator(`[data-testid="forecast-row"][data-level="${level}"][data-id="${id}"]`);

  it("filters to a vendor, overrides a category by +20 %, shows the final forecast and reorder change, removes it", async () => {
    // A product whose reorder suggestion moves when its forecast rises by a tenth over its horizon
    // (worked out here from its stored figures and MOQ / case rounding), its vendor, its deepest category.
    const [pick] = await sql<{ pid: number; vendor_id: number }>(
      `SELECT m.pid, p.vendor_id FROM product_metrics m JOIN products p ON p.pid = m.pid
       WHERE m.reorder_qty > 0 AND NOT m.is_new AND p.vendor_id IS NOT NULL AND m.horizon_days <= 91
         AND m.status NOT IN ('discontinued', 'excluded')
         AND ceil(GREATEST(ceil(m.forecast_horizon_units * 1.1 + m.safety_stock - (m.on_hand + m.on_order)), GREATEST(p.moq, 1))::numeric
                  / GREATEST(p.case_qty, 1)) * GREATEST(p.case_qty, 1) > m.reorder_qty
       ORDER BY m.forecast_horizon_units DESC, m.pid LIMIT 1`,
    );
    expect(pick).toBeDefined();
    const [vendor] = await sql<{ id: number; name: string }>(
      "SELECT id, name FROM vendors WHERE id = $1",
      pick!.vendor_id,
    );
    const all = await rows({ vendorId: vendor!.id, search: String(pick!.pid) });
    const product = all.items.find((r) => r.id === pick!.pid)!;
    expect(product).toBeDefined();
    const [category] = await sql<{ id: number; name: string }>(
      `SELECT c.id, c.name FROM product_categories pc JOIN categories c ON c.id = pc.category_id
       WHERE pc.pid = $1 ORDER BY c.level DESC, c.id LIMIT 1`,
      product.id,
    );

    const { page } = await e.newPage({ width: 1400, height: 900 });
    await e.signIn(page, "admin");
    await page.goto("/forecasting");
    await page.getByTestId("forecast-grid").waitFor();
    await page.getByLabel("Vendor").selectOption(String(vendor!.id));
    await page.waitForURL((u) => u.searchParams.get("vendor") === String(vendor!.id));
    // The grid's rows are virtual: the rows in view (and a few around them) are drawn, in the API's order.
    const expectedIds = (await rows({ vendorId: vendor!.id })).items.map((r) => r.id);
    await expect
      .poll(async () => {
        const shown = await page
          .getByTestId("forecast-row")
          .evaluateAll((els) => els.map((el) => Number(el.getAttribute("data-id"))));
        return (
          shown.length >= Math.min(expectedIds.length, 10) && shown.every((id, i) => id === expectedIds[i])
        );
      })
      .toBe(true);
    const searchBox = page.getByPlaceholder("Search by name, SKU or ID...");
    await searchBox.fill(String(product.id));
    const before = row(page, "product", product.id);
    await expect
      .poll(() => before.locator('[data-col="reorder"]').innerText())
      .toBe(product.reorder_qty!.toLocaleString("en-US"));
    expect(await before.locator('[data-overridden="true"]').count()).toBe(0);

    // Categories rolled up, still for this vendor; override the product's category.
    await page.getByLabel("Rows").selectOption("category");
    await searchBox.fill(category!.name);
    await row(page, "category", category!.id).waitFor();
    await row(page, "category", category!.id)
      .getByRole("button", { name: `Override ${category!.name}` })
      .click();
    const dialog = page.getByTestId("override-dialog");
    await dialog.getByLabel("Percent").fill("20");
    await dialog.getByRole("button", { name: "Save override" }).click();
    await expect
      .poll(() => dialog.getByTestId("override-error").innerText())
      .toMatch(/reason: a reason is required/);
    await dialog.getByLabel("Reason").fill("Back to school");
    await dialog.getByRole("button", { name: "Preview" }).click();
    await dialog.getByTestId("override-preview").getByText(product.title).waitFor();
    await dialog.getByRole("button", { name: "Save override" }).click();
    await page.getByText(/Override saved for \d+ product/).waitFor();

    // Back on products: the weeks are overridden (+20 %) and the reorder quantity moved.
    await page.getByLabel("Rows").selectOption("product");
    await searchBox.fill(String(product.id));
    const after = row(page, "product", product.id);
    await after.waitFor();
    await expect.poll(() => after.locator('[data-overridden="true"]').count()).toBe(13);
    const api = (await rows({ vendorId: vendor!.id, search: String(product.id) })).items.find(
      (r) => r.id === product.id,
    )!;
    for (const [j, f] of api.final.entries())
      expect(Math.abs(f - product.system[j]! * 1.2)).toBeLessThan(0.02);
    expect(api.reorder_qty).not.toBe(product.reorder_qty);
    await expect
      .poll(() => after.locator('[data-col="reorder"]').innerText())
      .toBe(api.reorder_qty!.toLocaleString("en-US"));
    // The row expands to its system, override, final and last-year lines.
    await after.getByRole("button", { name: `Expand ${product.title}` }).click();
    await page.locator('[data-testid="forecast-subrow"][data-line="Last year"]').waitFor();

    // The override is listed with its reason and removed whole.
    await page.getByRole("tab", { name: "Overrides" }).click();
    const listed = page.getByTestId("override-row").filter({ hasText: "Back to school" });
    await listed.getByText(category!.name).waitFor();
    await listed.getByRole("button", { name: /Remove override/ }).click();
    // Asked first: the forecast of every product it covers changes.
    await page.getByRole("alertdialog").getByRole("button", { name: "Remove override" }).click();
    await page.getByText(/Override removed from \d+ product/).waitFor();
    await page.getByRole("tab", { name: "Forecast" }).click();
    const restored = row(page, "product", product.id);
    await restored.waitFor();
    await expect.poll(() => restored.locator('[data-overridden="true"]').count()).toBe(0);
    await expect
      .poll(() => restored.locator('[data-col="reorder"]').innerText())
      .toBe(product.reorder_qty!.toLocaleString("en-US"));
  });

  it("overrides many ticked rows at once (+10 %), and lists the exceptions with their counts", async () => {
    const { page } = await e.newPage({ width: 1400, height: 900 });
    await e.signIn(page, "admin");
    await page.goto("/forecasting");
    await page.getByTestId("forecast-grid").waitFor();
    const first = (await rows({})).items.slice(0, 2);
    for (const r of first) await row(page, "product", r.id).getByLabel(`Select ${r.title}`).check();
    await page.getByTestId("bulk-bar").getByText("2 products selected").waitFor();
    await page.getByRole("button", { name: "Override selected" }).click();
    const dialog = page.getByTestId("override-dialog");
    await dialog.getByLabel("Percent").fill("10");
    await dialog.getByLabel("Reason").fill("Bulk check");
    await dialog.getByRole("button", { name: "Save override" }).click();
    await page.getByText("Override saved for 2 products").waitFor();
    await expect.poll(() => page.getByTestId("bulk-bar").count()).toBe(0);
    for (const r of first) {
      await expect
        .poll(() => row(page, "product", r.id).locator('[data-overridden="true"]').count())
        .toBe(13);
      const api = (await rows({ search: String(r.id) })).items.find((x) => x.id === r.id)!;
      for (const [j, f] of api.final.entries()) expect(Math.abs(f - r.system[j]! * 1.1)).toBeLessThan(0.02);
    }

    await page.getByRole("tab", { name: "Exceptions" }).click();
    await page.getByTestId("exceptions-table").waitFor();
    const url = `${e.t.url}/api/forecasting/exceptions?kind=bias`;
    const api = (await (
      await fetch(url, { headers: { authorization: `Bearer ${token}` } })
    ).json()) as ExceptionsPage;
    await expect
      .poll(() => page.getByTestId("exception-kind-bias").innerText())
      .toContain(String(api.counts.bias));
    await page.getByTestId("exception-kind-bias").click();
    await page.waitForURL((u) => u.searchParams.get("exception") === "bias");
    await expect.poll(() => page.getByTestId("exception-row").count()).toBe(Math.min(api.total, 50));

    await page.getByRole("tab", { name: "Overrides" }).click();
    const listed = page.getByTestId("override-row").filter({ hasText: "Bulk check" });
    await listed.getByText("2 products").first().waitFor();
    await listed.getByRole("button", { name: /Remove override/ }).click();
    await page.getByRole("alertdialog").getByRole("button", { name: "Remove override" }).click();
    await page.getByText("Override removed from 2 products").waitFor();
  });

  it("fits a 390 px screen: the grid scrolls inside its card, the page does not", async () => {
    const { page } = await e.newPage({ width: 390, height: 844 });
    await e.signIn(page, "admin");
    await page.goto("/forecasting");
    await page.getByTestId("forecast-grid").waitFor();
    await page.getByTestId("forecast-row").first().waitFor();
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(390);
    // A product's chart shows 26 weeks of history on a phone (104 squeezed the forecast), more on a tap.
    const [one] = await sql<{ pid: number }>(
      "SELECT pid FROM product_forecasts WHERE weekly IS NOT NULL ORDER BY pid LIMIT 1",
    );
    await page.goto(`/forecasting?q=${one!.pid}&selected=${one!.pid}`);
    const chart = page.getByTestId("forecast-chart");
    await chart.waitFor();
    expect(await chart.getByRole("button", { name: "26 weeks" }).getAttribute("aria-pressed")).toBe("true");
    await chart.getByRole("button", { name: "2 years" }).click();
    await expect
      .poll(() => chart.getByRole("button", { name: "2 years" }).getAttribute("aria-pressed"))
      .toBe("true");
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  });
});
