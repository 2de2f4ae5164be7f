// Real exports in Chromium: the Products page hides non-merchandise products unless "Show
// non-merchandise" is on (a URL parameter), and the Products page, the product page and Data
// Management warn when the data's newest sale is old (the fixture's is 2026-06-30).
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2E, startE2E } from "./harness.ts";

const FIXTURE = path.resolve("tests/fixtures/source-real-exports");
const NEWEST = "2026-06-30";

describe("real exports in Chromium", () => {
  let e: E2E;

  beforeAll(async () => {
    e = await startE2E({ SOURCE_DIR: FIXTURE });
    await e.t.app.services.dataOps.start("reset", null);
    await e.t.app.services.dataOps.idle();
  });
  afterAll(async () => {
    await e?.close();
  });

  async function open(url: string, width = 1280): Promise<Page> {
    const { page } = await e.newPage({ width, height: 900 });
    await e.signIn(page, "admin");
    await page.goto(url);
    return page;
  }
  const rowPids = (page: Page) =>
    page
      .getByTestId("products-row")
      .evaluateAll((els) => els.map((el) => Number(el.getAttribute("data-pid"))));

  it("hides non-merchandise products until the filter is on, and keeps the filter in the URL", async () => {
    const page = await open("/products?sort=title&dir=asc");
    await expect.poll(() => rowPids(page)).toEqual([1001, 1002, 3001]);
    await page.getByTestId("non-merchandise-filter").click();
    await expect.poll(() => rowPids(page)).toEqual([1001, 2002, 2003, 1002, 3001, 2001]);
    expect(new URL(page.url()).searchParams.get("nonMerchandise")).toBe("true");
    await expect
      .poll(() => page.getByTestId("product-kind").allTextContents())
      .toEqual(["Gift card", "Service", "Fee"]);
    // A link with the parameter opens with it on.
    const again = await open("/products?sort=title&dir=asc&nonMerchandise=true", 390);
    await expect.poll(() => again.getByTestId("products-row").count()).toBe(6);
  });

  it("warns about old data on the Products page, the product page and Data Management", async () => {
    const today = new Date().toISOString().slice(0, 10);
    const days = Math.round(
      (Date.parse(`${today}T00:00:00Z`) - Date.parse(`${NEWEST}T00:00:00Z`)) / 86_400_000,
    );
    const text = `The newest sale in the data is from ${NEWEST}, ${days} days ago: the sales windows may be empty. Set 'Calculate as of' to the latest data in Global Settings, or check the data source.`;
    for (const url of ["/products", "/products/1001", "/settings?tab=data"]) {
      const page = await open(url);
      await expect
        .poll(() => page.getByTestId("stale-data-warning").textContent(), { timeout: 15_000 })
        .toBe(text);
    }
  });

  it("Create Template from Product carries only template categories, with a quiet note for the rest", async () => {
    // Product 1001 is in Paper (type 10), Cardstock (11) and the warehouse zone "Zone A" (20).
    const page = await open("/settings?tab=templates", 1280);
    await page.getByRole("button", { name: "Create from Product" }).click();
    const dialog = page.getByTestId("product-search-dialog");
    await dialog.getByLabel("Search products").fill("Cardstock White");
    await dialog.getByLabel("Search products").press("Enter");
    await dialog.getByTestId("product-row").first().click();
    await dialog.getByRole("heading", { name: "Create Template from Product" }).waitFor();
    const chips = await dialog.getByTestId("tpl-categories").innerText();
    expect(chips).toMatch(/Paper[\s\S]*Cardstock|Cardstock[\s\S]*Paper/);
    expect(chips).not.toMatch(/900|Zone A/);
    expect(await dialog.getByTestId("tpl-categories-note").innerText()).toBe(
      "1 category of this product is not a template category and was left out",
    );
  });
});
