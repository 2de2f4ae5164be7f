// Create Products in Chromium with the sample supplier file of docs/examples, over a small demo
// data set: upload → map the supplier's columns → fix the bad barcode in the grid (and find it
// there after a reload) → add an image from the library → dry run → submit → download the ZIP;
// then the same import at 390 px wide, and a workbook's sheet chosen from the upload card.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import ExcelJS from "exceljs";
import { unzipSync } from "fflate";
import type { Page } from "playwright-core";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateDemoData } from "../../scripts/lib/demo-data.ts";
import { type E2E, startE2E } from "./harness.ts";

const SAMPLE = path.resolve("docs/examples/supplier-price-list.csv");
const SHOTS = process.env.E2E_SCREENSHOTS;

describe("Create Products in Chromium", () => {
  let e: E2E;
  let sourceDir: string;
  let imageDir: string;
  let brand: { id: number; name: string };
  let libraryImageId: number;
  let importId: number;

  beforeAll(async () => {
    sourceDir = fs.mkdtempSync(path.join(os.tmpdir(), "bo-e2e-demo-"));
    imageDir = fs.mkdtempSync(path.join(os.tmpdir(), "bo-e2e-images-"));
    await generateDemoData({ out: sourceDir, products: 200, years: 1, seed: 7 });
    e = await startE2E({ SOURCE_DIR: sourceDir, IMAGE_DIR: imageDir, DEMO_DATA: "0" });
    await e.t.app.services.dataOps.start("reset", null);
    await e.t.app.services.dataOps.idle();
    brand = await e.t.tdb.db.prisma.brand.findFirstOrThrow({ orderBy: { name: "asc" } });
    await e.t.createUser("creator", ["access:import", "create:products"]);
    await e.t.createUser("looker", ["access:import"]);
    const admin = await e.t.login("admin");
    const fd = new FormData();
    fd.append("name", "Maple Mill swatch");
    fd.append("is_global", "true");
    const png = await sharp({ create: { width: 200, height: 200, channels: 3, background: "#b45309" } })
      .png()
      .toBuffer();
    fd.append("image", new Blob([new Uint8Array(png)], { type: "image/png" }), "swatch.png");
    const res = await fetch(`${e.t.url}/api/reusable-images/upload`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin.token}` },
      body: fd,
    });
    expect(res.status).toBe(201);
    libraryImageId = (await res.json()).id;
  });
  afterAll(async () => {
    await e?.close();
    for (const d of [sourceDir, imageDir]) fs.rmSync(d, { recursive: true, force: true });
  });

  const shot = async (page: Page, name: string) => {
    if (SHOTS) await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  };
  const toast = (page: Page, text: string) =>
    page.locator("[data-sonner-toast] [data-title]").filter({ hasText: text }).last();

  it("shows a user without create:products the imports, with no upload and no pointer to one", async () => {
    const { page } = await e.newPage({ width: 1280, height: 800 });
    await e.signIn(page, "looker");
    await page.goto("/import");
    await page.getByText("No imports yet").waitFor();
    expect(await page.locator('input[type="file"]').count()).toBe(0);
    expect(await page.getByText("upload a supplier's file above").count()).toBe(0);
    await page.getByText("needs the Create Products permission").waitFor();
  });

  it("uploads the sample, maps it, fixes the barcode, adds a library image, dry-runs, submits and downloads the export", async () => {
    const { page } = await e.newPage({ width: 1440, height: 1000 });
    await e.signIn(page, "creator");
    await page.goto("/import");
    await page.getByText("No imports yet").waitFor();

    // 1–2. Upload with company and product type
    await page.getByTestId("import-file-input").setInputFiles(SAMPLE);
    await page.getByTestId("import-company").click();
    await page.getByPlaceholder("Search companies...").fill(brand.name);
    await page.getByRole("option", { name: brand.name, exact: true }).click();
    await page.getByTestId("import-product-type").fill("12x12 Paper");
    await page.getByTestId("start-import").click();
    await page.waitForURL(/step=map/);
    importId = Number(new URL(page.url()).searchParams.get("id"));
    await expect
      .poll(() => page.getByTestId("file-facts").textContent())
      .toContain("CSV · UTF-8 · delimiter comma · 10 rows");

    // 3. Map: the supplier's "Description" is the product name and "Notes" the description.
    await expect.poll(() => page.getByTestId("map-field-UPC").textContent()).toBe("Barcode");
    await expect.poll(() => page.getByTestId("map-field-Wholesale").textContent()).toBe("Cost Each");
    await expect.poll(() => page.getByTestId("map-field-Description").textContent()).toBe("Description");
    await page.getByTestId("mapping-missing").getByText("Not mapped yet: Title").waitFor();
    await page.getByTestId("map-field-Description").click();
    await page.getByRole("option", { name: /^Title \*/ }).click();
    await page.getByTestId("map-field-Notes").click();
    await page.getByRole("option", { name: /^Description/ }).click();
    // A field takes one column: choosing Title for UPC moves it there, and back again.
    await page.getByTestId("map-field-UPC").click();
    await page.getByRole("option", { name: /^Title \*/ }).click();
    await expect.poll(() => page.getByTestId("map-field-Description").textContent()).toBe("Not imported");
    await page.getByText('Title moved from "Description" to "UPC"').waitFor();
    await page.getByTestId("map-field-Description").click();
    await page.getByRole("option", { name: /^Title \*/ }).click();
    await page.getByTestId("map-field-UPC").click();
    await page.getByRole("option", { name: /^Barcode/ }).click();
    await expect.poll(() => page.getByTestId("map-field-UPC").textContent()).toBe("Barcode");
    await shot(page, "create-products-map");
    await page.getByTestId("save-mapping").click();
    await page.waitForURL(/step=edit/);

    // 4–5. The grid shows the findings on their cells; fix the bad barcode.
    const barcode = page.getByTestId("cell-4-barcode");
    await expect.poll(() => barcode.getAttribute("data-state")).toBe("error");
    expect(await barcode.getAttribute("title")).toContain("wrong check digit");
    expect(await page.getByTestId("cell-2-sku").getAttribute("data-state")).toBe("error");
    expect(await page.getByTestId("cell-8-price").getAttribute("data-state")).toBe("error");
    expect(await page.getByTestId("cell-5-description").getAttribute("data-state")).toBe("warning");
    await barcode.click();
    await page.getByTestId("cell-editor").fill("800000612049");
    await page.getByTestId("cell-editor").press("Enter");
    await page.getByTestId("row-ok-4").waitFor();
    await shot(page, "create-products-grid");
    // Saved on the server: a reload finds it.
    await page.reload();
    await page.getByTestId("row-ok-4").waitFor();
    expect(await page.getByTestId("cell-4-barcode").textContent()).toBe("800000612049");

    // Only rows with errors: the duplicate SKUs and the missing price.
    await page.getByTestId("errors-only").click();
    await expect.poll(() => page.locator("[data-testid^='grid-row-']").count()).toBe(3);
    await page.getByTestId("errors-only").click();
    await expect.poll(() => page.locator("[data-testid^='grid-row-']").count()).toBe(10);

    // 6. An image from the library for the first product
    await page.getByTestId("images-1").click();
    await page.getByTestId(`library-image-${libraryImageId}`).click();
    await page.getByTestId("row-images").locator("img").first().waitFor();
    await page.getByRole("button", { name: "Done" }).click();
    await page.getByTestId("images-1").locator("img").waitFor();

    // 7. Dry run
    await page.getByRole("tab", { name: "3. Dry run & submit" }).click();
    await page.getByTestId("dry-run-empty").waitFor();
    await page.getByTestId("dry-run").click();
    const summary = page.getByTestId("dry-run-summary");
    await summary.getByText("products would be created").waitFor();
    expect(await summary.textContent()).toMatch(
      /7 products would be created, 3 rows are blocked by errors, 1 has warnings only, 1 has images/,
    );
    await summary.getByText("Price is required").waitFor();
    await summary.getByText('SKU "…" is also on row … of this file').waitFor();
    await page.getByTestId("dry-run-chart").locator("svg").first().waitFor();
    await shot(page, "create-products-dry-run");
    expect(await e.t.tdb.db.prisma.createdProduct.count()).toBe(0);

    // 8. Submit
    await page.getByTestId("submit-import").click();
    await page.getByRole("alertdialog").getByRole("button", { name: "Submit" }).click();
    await toast(page, "7 products created").waitFor();
    await page.getByTestId("created-products").getByText("2000000000").waitFor();
    expect(await page.getByTestId("import-status").textContent()).toBe("Submitted");

    // Download the export
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByTestId("download-export").click(),
    ]);
    const file = await download.path();
    const files = unzipSync(new Uint8Array(fs.readFileSync(file!)));
    expect(Object.keys(files).sort()).toEqual([
      "images/2000000000-1.png",
      "product_categories.csv",
      "products.csv",
    ]);
    const csv = Buffer.from(files["products.csv"]!).toString("utf8").trim().split("\n");
    expect(csv).toHaveLength(8);
    expect(csv[1]).toContain("2000000000,Maple Mill 12x12 Cardstock - Cranberry,MM-1201,800000612018");
    await shot(page, "create-products-submitted");

    // The 3 blocked rows go on in a new import, to be fixed and submitted there.
    await page.getByTestId("continue-rest").click();
    await page.waitForURL(
      (u) => u.searchParams.get("id") !== String(importId) && u.searchParams.get("step") === "edit",
    );
    await expect.poll(() => page.getByTestId("import-status").textContent()).toBe("Checked");
    await page.goto(`/import?id=${importId}&step=review`);
    await page.getByTestId("continued-in").waitFor();
  });

  it("saves what was typed in a cell that scrolls out of view before it was saved", async () => {
    const { token } = await e.t.login("creator");
    const auth = { authorization: `Bearer ${token}` };
    const csv = [
      "SKU,Title,Price,Description",
      ...Array.from(
        { length: 300 },
        (_, i) => `SC-${i + 1},Scroll Pen ${i + 1},1.00,Plain description ${i + 1}`,
      ),
    ].join("\n");
    const fd = new FormData();
    fd.append("company", String(brand.id));
    fd.append("file", new Blob([csv]), "scroll.csv");
    const res = await fetch(`${e.t.url}/api/product-imports`, { method: "POST", headers: auth, body: fd });
    expect(res.status).toBe(201);
    const imp = (await res.json()) as { id: number };
    const { page } = await e.newPage();
    await e.signIn(page, "creator");
    await page.goto(`/import?id=${imp.id}&step=map`);
    await page.getByTestId("save-mapping").click();
    await page.waitForURL(/step=edit/);
    await page.getByTestId("cell-2-description").click();
    await page.getByTestId("cell-editor").fill("Edited then scrolled away");
    // The grid draws only the rows in view: row 2 leaves the page, then comes back.
    const grid = page.getByTestId("import-grid");
    await grid.evaluate((el) => {
      el.scrollTop = el.scrollHeight;
    });
    await page.getByTestId("cell-300-title").waitFor();
    await grid.evaluate((el) => {
      el.scrollTop = 0;
    });
    const description = async () => {
      const rows = await fetch(`${e.t.url}/api/product-imports/${imp.id}/rows?pageSize=5`, { headers: auth });
      const body = (await rows.json()) as { items: { row_id: number; values: Record<string, string> }[] };
      return body.items.find((r) => r.row_id === 2)!.values.description;
    };
    await expect.poll(description).toBe("Edited then scrolled away");
    await expect
      .poll(() => page.getByTestId("cell-2-description").textContent())
      .toContain("Edited then scrolled away");
  });

  it("reads at 390 px wide: the grid scrolls inside its box and the page does not overflow", async () => {
    const { page } = await e.newPage({ width: 390, height: 844 });
    await e.signIn(page, "creator");
    await page.goto(`/import?id=${importId}&step=edit`);
    await page.getByTestId("cell-1-title").waitFor();
    const widths = await page.evaluate(() => ({
      doc: document.documentElement.scrollWidth,
      grid: document.querySelector("[data-testid='import-grid']")!.clientWidth,
    }));
    expect(widths.doc).toBeLessThanOrEqual(390);
    expect(widths.grid).toBeLessThanOrEqual(390);
    await shot(page, "create-products-390-grid");
    await page.goto(`/import?id=${importId}&step=review`);
    await page.getByTestId("dry-run-summary").waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await shot(page, "create-products-390-review");
    await page.goto("/import");
    await page.getByTestId(`import-row-${importId}`).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await shot(page, "create-products-390-list");
  });

  it("lists an XLSX workbook's sheets on the upload card and reads the one chosen (390 px wide)", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bo-e2e-sheets-"));
    try {
      const workbook = new ExcelJS.Workbook();
      const notes = workbook.addWorksheet("Notes");
      notes.addRow(["Note", "By"]);
      notes.addRow(["Prices valid until June", "Sales"]);
      const products = workbook.addWorksheet("Products");
      products.addRow(["SKU", "Title", "Price"]);
      products.addRow(["WB-1", "Workbook Pen Blue", "1.50"]);
      products.addRow(["WB-2", "Workbook Pen Red", "1.60"]);
      products.addRow(["WB-3", "Workbook Pen Green", "1.70"]);
      const file = path.join(dir, "two-sheets.xlsx");
      await workbook.xlsx.writeFile(file);

      const { page } = await e.newPage({ width: 390, height: 844 });
      await e.signIn(page, "creator");
      await page.goto("/import");
      await page.getByTestId("import-file-input").setInputFiles(file);
      // The picker, labelled "Sheet", starts on the first sheet and offers both.
      const picker = page.getByRole("combobox", { name: "Sheet" });
      await expect.poll(() => picker.textContent()).toBe("Notes");
      await picker.click();
      const options = page.getByRole("option");
      await expect.poll(() => options.allTextContents()).toEqual(["Notes", "Products"]);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await page.getByRole("option", { name: "Products" }).click();
      await expect.poll(() => picker.textContent()).toBe("Products");
      await shot(page, "create-products-390-sheet-picker");
      await page.getByTestId("start-import").click();
      await page.waitForURL(/step=map/);
      await expect
        .poll(() => page.getByTestId("file-facts").textContent())
        .toContain("XLSX · sheet “Products” · 3 rows");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
