// Template Management, AI Prompts and Reusable Images in Chromium (spec section 2), over the small
// fixture source: a template from a searched product, a copy and its duplicate error; the three
// prompt types with the type options locking; an image dropped, previewed, made global and deleted.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2E, startE2E } from "./harness.ts";

const SHOTS = process.env.E2E_SCREENSHOTS;

describe("Content management in Chromium", () => {
  let e: E2E;
  let imageDir: string;

  beforeAll(async () => {
    imageDir = fs.mkdtempSync(path.join(os.tmpdir(), "bo-e2e-images-"));
    e = await startE2E({ SOURCE_DIR: path.resolve("tests/fixtures/source-small"), IMAGE_DIR: imageDir });
    await e.t.app.services.dataOps.start("reset", null);
    await e.t.app.services.dataOps.idle();
  });
  afterAll(async () => {
    await e?.close();
    fs.rmSync(imageDir, { recursive: true, force: true });
  });

  async function openTab(tab: string, ready: string): Promise<Page> {
    const { page } = await e.newPage({ width: 1440, height: 1000 });
    await e.signIn(page, "admin");
    await page.goto(`/settings?tab=${tab}`);
    await page.getByTestId(ready).waitFor();
    return page;
  }

  const toast = (page: Page, text: string) =>
    page.locator("[data-sonner-toast] [data-title]").filter({ hasText: text }).last();
  const shot = async (page: Page, name: string) => {
    if (SHOTS) await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
  };
  /** Opens a searchable select and picks the option with this label. */
  async function choose(page: Page, testId: string, label: string) {
    await page.getByTestId(testId).click();
    await page
      .getByPlaceholder(/^Search .*\.\.\.$/)
      .last()
      .fill(label);
    await page.getByRole("option", { name: label, exact: true }).click();
  }

  it("creates a template from a searched product, copies it and hits the duplicate error", async () => {
    const page = await openTab("templates", "template-management");
    await page.getByText("No templates found").waitFor();
    await page.getByRole("button", { name: "Create from Product" }).click();
    const dialog = page.getByTestId("product-search-dialog");
    await dialog.getByText("Use the search field or filters to find products").waitFor();
    await dialog.getByLabel("Search products").fill("cardstock");
    await dialog.getByLabel("Search products").press("Enter");
    await dialog.getByText("1 products found").waitFor();
    const row = dialog.getByTestId("product-row");
    await expect.poll(() => row.first().innerText()).toContain("Cardstock 12x12 - Blue");
    expect(await row.first().innerText()).toContain("$1.50");
    await shot(page, "template-search");

    // The company filter hides the Company column and shows a badge with Clear All.
    await dialog.getByLabel("Filter by Company").click();
    await page.getByRole("option", { name: "Ink Works" }).click();
    await dialog.getByText("No products found matching your criteria").waitFor();
    await dialog.getByTestId("active-filters").getByText("Company: Ink Works").waitFor();
    await dialog.getByRole("button", { name: "Clear All" }).click();
    await dialog.getByText("1 products found").waitFor();

    await row.first().click();
    await dialog.getByRole("heading", { name: "Create Template from Product" }).waitFor();
    expect(await dialog.getByTestId("tpl-company").innerText()).toContain("Paper Co");
    expect(await dialog.getByTestId("tpl-supplier").innerText()).toContain("Vendor A");
    expect(await dialog.getByLabel("MSRP").inputValue()).toBe("2");
    expect(await dialog.getByLabel("Case Quantity").inputValue()).toBe("25");
    expect(await dialog.getByTestId("tpl-categories").innerText()).toMatch(
      /Paper[\s\S]*Cardstock|Cardstock[\s\S]*Paper/,
    );
    expect(await dialog.getByLabel("Product Type*").inputValue()).toBe("");
    // Company and Product Type are required.
    await dialog.getByRole("button", { name: "Create Template" }).click();
    await toast(page, "Validation failed").waitFor();
    await shot(page, "template-from-product");
    await dialog.getByLabel("Product Type*").fill("12x12 Paper");
    await dialog.getByRole("button", { name: "Create Template" }).click();
    await toast(page, "Template created successfully").waitFor();
    await dialog.waitFor({ state: "hidden" });
    const rows = page.getByTestId("template-row");
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().innerText()).toMatch(/Paper Co\s+12x12 Paper/);

    // Copy: same fields, empty product type; the same type again is a duplicate.
    await rows.first().getByRole("button", { name: "Copy" }).click();
    const form = page.getByTestId("template-dialog");
    await form.getByRole("heading", { name: "Copy Template" }).waitFor();
    expect(await form.getByLabel("Product Type*").inputValue()).toBe("");
    expect(await form.getByLabel("HTS Code").inputValue()).toBe("4802.56");
    await form.getByLabel("Product Type*").fill("12x12 Paper");
    await form.getByRole("button", { name: "Create Template" }).click();
    await toast(page, "Failed to save template").waitFor();
    await page
      .locator("[data-sonner-toast] [data-description]")
      .filter({ hasText: 'A template for company 1 and product type "12x12 Paper" already exists' })
      .waitFor();
    await shot(page, "template-duplicate");
    await form.getByLabel("Product Type*").fill("Cardstock Packs");
    await form.getByRole("button", { name: "Create Template" }).click();
    await toast(page, "Template created successfully").waitFor();
    await expect.poll(() => rows.count()).toBe(2);

    // Edit keeps the id: the title and button say so.
    await rows.first().getByRole("button", { name: "Edit" }).click();
    await form.getByRole("heading", { name: "Edit Template" }).waitFor();
    await form.getByRole("button", { name: "Update Template" }).click();
    await toast(page, "Template updated successfully").waitFor();

    await page.getByLabel("Search templates").fill("packs");
    await expect.poll(() => rows.count()).toBe(1);
    await page.getByLabel("Search templates").fill("");
    await shot(page, "templates");
    await rows.first().getByRole("button", { name: "Delete" }).click();
    await page.getByRole("alertdialog").getByText("Are you sure you want to delete this template?").waitFor();
    await page.getByRole("button", { name: "Delete", exact: true }).last().click();
    await toast(page, "Template deleted successfully").waitFor();
    await expect.poll(() => rows.count()).toBe(1);
  });

  it("creates general, system and company prompts while the type options lock", async () => {
    const page = await openTab("prompts", "ai-prompts");
    await page.getByText("No prompts found").waitFor();
    const dialog = page.getByTestId("prompt-dialog");
    const typeTrigger = dialog.getByTestId("prompt-type");

    await page.getByRole("button", { name: "Create New Prompt" }).click();
    await dialog.getByRole("heading", { name: "Create New Prompt" }).waitFor();
    expect(await typeTrigger.innerText()).toContain("General");
    await dialog.getByRole("button", { name: "Create Prompt" }).click();
    await dialog.getByText("Prompt text is required").waitFor();
    await dialog.getByLabel("Prompt Text").fill("Check every title for spelling.");
    await dialog.getByRole("button", { name: "Create Prompt" }).click();
    await toast(page, "Prompt created successfully").waitFor();
    await dialog.waitFor({ state: "hidden" });

    await page.getByRole("button", { name: "Create New Prompt" }).click();
    await dialog
      .getByText(
        "A general prompt already exists. You can create a system prompt or company-specific prompts.",
      )
      .waitFor();
    expect(await typeTrigger.innerText()).toContain("System");
    await typeTrigger.click();
    expect(await page.getByRole("option", { name: "General" }).getAttribute("aria-disabled")).toBe("true");
    await page.getByRole("option", { name: "System" }).click();
    await dialog.getByLabel("Prompt Text").fill("You are a careful product data reviewer.");
    await dialog.getByRole("button", { name: "Create Prompt" }).click();
    await toast(page, "Prompt created successfully").waitFor();
    await dialog.waitFor({ state: "hidden" });

    await page.getByRole("button", { name: "Create New Prompt" }).click();
    await dialog
      .getByText("General and system prompts already exist. You can only create company-specific prompts.")
      .waitFor();
    expect(await typeTrigger.innerText()).toContain("Company Specific");
    expect(await typeTrigger.isDisabled()).toBe(true);
    await dialog.getByRole("button", { name: "Create Prompt" }).click();
    await dialog.getByText("Company is required for company-specific prompts").waitFor();
    await choose(page, "prompt-company", "Ink Works");
    await dialog.getByLabel("Prompt Text").fill("Ink Works: colour names follow the swatch card.");
    await shot(page, "prompt-dialog");
    await dialog.getByRole("button", { name: "Create Prompt" }).click();
    await toast(page, "Prompt created successfully").waitFor();

    const rows = page.getByTestId("prompt-row");
    await expect.poll(() => rows.count()).toBe(3);
    // Type descending, then company ascending.
    expect((await rows.allInnerTexts()).map((r) => r.split(/\s+/)[0])).toEqual([
      "System",
      "General",
      "Company",
    ]);
    expect(await rows.nth(2).innerText()).toContain("Ink Works");
    await shot(page, "prompts");

    // Editing the general prompt keeps its own type available.
    await rows.nth(1).getByRole("button", { name: "Edit" }).click();
    await dialog.getByRole("heading", { name: "Edit Prompt" }).waitFor();
    expect(await typeTrigger.isDisabled()).toBe(false);
    await dialog.getByLabel("Prompt Text").fill("Check every title and price.");
    await dialog.getByRole("button", { name: "Update Prompt" }).click();
    await toast(page, "Prompt updated successfully").waitFor();

    // Its history: both texts, newest first, the current one marked.
    await rows.nth(1).getByRole("button", { name: "History" }).click();
    const history = page.getByTestId("prompt-history");
    const versions = history.getByTestId("prompt-version");
    await expect.poll(() => versions.count()).toBe(2);
    expect(await versions.nth(0).innerText()).toMatch(/^Version 2\s+Current/);
    expect(await versions.nth(0).innerText()).toContain("Check every title and price.");
    expect(await versions.nth(1).innerText()).toMatch(/^Version 1/);
    expect(await versions.nth(1).innerText()).toContain("Check every title for spelling.");
    expect(await versions.nth(1).innerText()).not.toContain("Current");
    await page.keyboard.press("Escape");
    await history.waitFor({ state: "hidden" });

    await rows.nth(2).getByRole("button", { name: "Delete" }).click();
    await page.getByRole("alertdialog").getByText("Are you sure you want to delete this prompt?").waitFor();
    await page.getByRole("button", { name: "Delete", exact: true }).last().click();
    await toast(page, "Prompt deleted successfully").waitFor();
    await expect.poll(() => rows.count()).toBe(2);
  });

  it("uploads an image by drag-and-drop, previews it, makes it global and deletes it", async () => {
    const png = await sharp({ create: { width: 320, height: 200, channels: 4, background: "#e4572e" } })
      .composite([
        {
          input: Buffer.from(
            '<svg width="320" height="200"><circle cx="160" cy="100" r="70" fill="#29335c"/></svg>',
          ),
        },
      ])
      .png()
      .toBuffer();
    const page = await openTab("images", "reusable-images");
    await page.getByText("No images found").waitFor();
    await page.getByRole("button", { name: "Upload New Image" }).click();
    const dialog = page.getByTestId("image-dialog");
    const zone = dialog.getByTestId("image-dropzone");
    expect(await zone.getAttribute("data-state")).toBe("idle");

    await dialog.getByRole("button", { name: "Upload Image" }).click();
    await dialog.getByText("Image name is required").waitFor();
    await dialog.getByLabel("Image Name").fill("Brand badge");
    await dialog.getByRole("button", { name: "Upload Image" }).click();
    await toast(page, "Please select an image file").waitFor();

    // Drag a file over the zone, then drop it: a DataTransfer built in the page.
    await zone.evaluate(async (el, base64) => {
      const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
      const data = new DataTransfer();
      data.items.add(new File([bytes], "badge.png", { type: "image/png" }));
      el.dispatchEvent(new DragEvent("dragenter", { bubbles: true, dataTransfer: data }));
      await new Promise((r) => setTimeout(r, 50));
      el.setAttribute("data-seen-state", el.getAttribute("data-state") ?? "");
      el.dispatchEvent(new DragEvent("drop", { bubbles: true, dataTransfer: data }));
    }, png.toString("base64"));
    expect(await zone.getAttribute("data-seen-state")).toBe("drag-active");
    await dialog.getByTestId("selected-file-name").filter({ hasText: "badge.png" }).waitFor();
    expect(await zone.getAttribute("data-state")).toBe("file-selected");

    await dialog.getByRole("button", { name: "Upload Image" }).click();
    await dialog.getByText("Company is required when the image is not global").waitFor();
    await choose(page, "image-company", "Paper Co");
    await shot(page, "image-upload");
    await dialog.getByRole("button", { name: "Upload Image" }).click();
    await toast(page, "Image uploaded successfully").waitFor();
    await dialog.waitFor({ state: "hidden" });

    const row = page.getByTestId("image-row");
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.first().innerText()).toMatch(/Brand badge\s+Company Specific\s+Paper Co\s+\d+\.\d KB/);
    const thumb = row.first().locator("img");
    await expect.poll(() => thumb.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(160);
    await shot(page, "images");

    await row.first().getByRole("button", { name: "Preview", exact: true }).click();
    const preview = page.getByTestId("image-preview");
    await preview.getByText("Company specific image for Paper Co").waitFor();
    await expect
      .poll(() => preview.locator("img").evaluate((img: HTMLImageElement) => img.naturalWidth))
      .toBe(320);
    expect(await preview.innerText()).toMatch(/badge\.png[\s\S]*image\/png/);
    await shot(page, "image-preview");
    await page.keyboard.press("Escape");
    await preview.waitFor({ state: "hidden" });

    await row.first().getByRole("button", { name: "Edit" }).click();
    await dialog.getByRole("heading", { name: "Edit Image" }).waitFor();
    expect(await dialog.getByTestId("image-dropzone").count()).toBe(0);
    await dialog.getByLabel("Available for all companies").click();
    await dialog.getByTestId("image-company").waitFor({ state: "detached" });
    await dialog.getByRole("button", { name: "Update Image" }).click();
    await toast(page, "Image updated successfully").waitFor();
    await expect.poll(() => row.first().innerText()).toMatch(/Brand badge\s+Global\s+N\/A/);

    await row.first().getByRole("button", { name: "Delete" }).click();
    await page.getByRole("alertdialog").getByText("Are you sure you want to delete this image?").waitFor();
    await page.getByRole("button", { name: "Delete", exact: true }).last().click();
    await toast(page, "Image deleted successfully").waitFor();
    await page.getByText("No images found").waitFor();
  });
});
