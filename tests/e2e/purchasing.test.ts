// The buyer's flow in Chromium over a small demo data set calculated by a real Full Reset: the
// replenishment workspace → two vendors → drafts → a quantity re-rounded to the case (shown) →
// mark as ordered → the vendor's products show as covered → receive part → partial → close short
// → the PDF downloads (a real PDF naming the vendor). One server and database for the file.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateDemoData } from "../../scripts/lib/demo-data.ts";
import type { PoDetail, ReplenishmentPage } from "../../shared/purchasing.ts";
import { type E2E, startE2E } from "./harness.ts";

describe("Purchasing in Chromium", () => {
  let e: E2E;
  let dir: string;
  let token: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "purchasing-e2e-"));
    await generateDemoData({ out: dir, products: 120, years: 2, seed: 6 });
    e = await startE2E({
      SOURCE_DIR: dir,
      SHOP_NAME: "Paper Corner",
      SHOP_ADDRESS: "1 High Street;Springfield",
    });
    token = (await e.t.login("admin")).token;
    await e.t.app.services.dataOps.start("reset", null);
    await e.t.app.services.dataOps.idle();
    await e.t.createUser("viewer", ["access:purchase_orders"]);
  }, 180_000);
  afterAll(async () => {
    await e?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const api = async <T>(url: string): Promise<T> => {
    const res = await fetch(`${e.t.url}${url}`, { headers: { authorization: `Bearer ${token}` } });
    if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };

  it("workspace → two vendors → drafts → edit → ordered → covered → partial → closed short → PDF", async () => {
    const ws = await api<ReplenishmentPage>("/api/replenishment");
    const vendors = ws.vendors.filter((v) => v.open_lines > 0).slice(0, 2);
    expect(vendors).toHaveLength(2);

    const { page } = await e.newPage({ width: 1400, height: 1000 });
    await e.signIn(page, "admin");
    await page.goto("/purchase-orders?tab=replenishment");
    for (const v of vendors) await page.getByRole("checkbox", { name: `Select vendor ${v.vendor}` }).click();
    await page.getByTestId("selection").getByText("2 vendors, 0 lines selected").waitFor();
    await page.getByTestId("create-drafts").click();
    const dialog = page.getByTestId("draft-preview");
    await expect.poll(() => dialog.getByTestId("preview-vendor").count()).toBe(2);
    await dialog.getByTestId("confirm-create-drafts").click();
    await page.getByText(/^Created A\d+ \(/).waitFor();

    // The drafts are in the list; open the first vendor's.
    await page.goto("/purchase-orders?status=draft");
    await page.getByTestId("po-link").first().waitFor();
    // The demo data may hold imported drafts too (which ones depends on the day it is generated
    // for): the two made here are the app's (numbers A…).
    const drafts = (await page.getByTestId("po-link").allTextContents()).filter((n) => /^A\d+$/.test(n));
    expect(drafts.length).toBe(2);
    const details = await Promise.all(drafts.map((n) => api<PoDetail>(`/api/purchase-orders/${n}`)));
    // A draft with a line packed in cases of more than one unit, to show the rounding.
    const po = details.find((d) => d.lines.some((l) => l.case_qty > 1)) ?? details[0]!;
    const line = po.lines.find((l) => l.case_qty > 1) ?? po.lines[0]!;
    await page.getByRole("link", { name: po.number }).click();
    await page.getByTestId("po-detail").waitFor();
    await page.getByText(po.vendor.name).first().waitFor();

    // Edit a quantity: one more than the current one comes back rounded up to the case.
    const typed = line.ordered_qty + 1;
    const qtyInput = page.getByLabel(`Quantity of ${line.title}`);
    await qtyInput.fill(String(typed));
    // Unsaved lines: the order cannot be sent as last saved without them.
    await page.getByTestId("unsaved-hint").waitFor();
    expect(await page.getByTestId("mark-ordered").isDisabled()).toBe(true);
    // Leaving asks first; staying keeps the edit.
    await page.getByRole("link", { name: "Purchase orders" }).first().click();
    await page.getByRole("alertdialog").getByText("Leave without saving?").waitFor();
    await page.getByRole("button", { name: "Stay" }).click();
    await page.getByRole("alertdialog").waitFor({ state: "detached" });
    expect(new URL(page.url()).pathname).toBe(`/purchase-orders/${po.number}`);
    expect(await qtyInput.inputValue()).toBe(String(typed));
    // A blank cost is the product's cost, not an error.
    await page.getByLabel(`Cost of ${line.title}`).fill("");
    await page.getByTestId("save-lines").click();
    const expected = Math.ceil(Math.max(typed, line.moq) / line.case_qty) * line.case_qty;
    if (expected !== typed) {
      await page
        .getByTestId("rounding")
        .getByText(`Rounded: ${typed} → MOQ ${line.moq} → case ${line.case_qty} → ${expected}`)
        .waitFor();
    }
    await expect.poll(() => qtyInput.inputValue()).toBe(String(expected));
    expect(await page.getByTestId("lines-error").count()).toBe(0);
    await expect.poll(() => page.getByTestId("mark-ordered").isDisabled()).toBe(false);

    // Mark as ordered: the status changes and the vendor's products show as covered.
    await page.getByTestId("mark-ordered").click();
    await page.getByTestId("po-status").getByText("Ordered").waitFor();
    const after = await api<ReplenishmentPage>(
      `/api/replenishment?vendor_id=${po.vendor.vendor_id}&pageSize=500`,
    );
    for (const l of after.items.filter((x) => po.lines.some((pl) => pl.pid === x.pid)))
      expect(l.covered_by).toBe(po.number);
    await page.goto(`/purchase-orders?tab=replenishment&w_vendor=${po.vendor.vendor_id}`);
    await page.getByTestId("workspace-lines").waitFor();
    if (after.items.some((x) => x.covered_by === po.number))
      await page.getByTestId("covered").getByText(`covered by PO ${po.number}`).first().waitFor();

    // Receive part of the first line: partial.
    await page.goto(`/purchase-orders/${po.number}`);
    await page.getByTestId("receive").click();
    const receive = page.getByTestId("receive-dialog");
    // A quantity that is none is named and blocks the receipt (it was dropped without a word).
    await receive.getByLabel(`Received of ${line.title}`).fill("1.5");
    await receive.getByTestId("receive-error").getByText(`${line.title} (1.5)`).waitFor();
    expect(await receive.getByTestId("confirm-receive").isDisabled()).toBe(true);
    await receive.getByLabel(`Received of ${line.title}`).fill("1");
    await receive.getByTestId("confirm-receive").click();
    await page.getByTestId("po-status").getByText("Partially received").waitFor();
    await page.getByTestId("receipt-row").first().waitFor();

    // Close short with a reason.
    await page.getByTestId("close-short").click();
    await page.getByTestId("reason-dialog").getByLabel("Reason").fill("Vendor cannot supply the rest");
    await page.getByTestId("confirm-reason").click();
    await page.getByTestId("po-status").getByText("Closed short").waitFor();
    await page.getByTestId("history").getByText("Closed short").waitFor();
    // Nothing is open on a closed PO: its rest is not coming.
    const openCells = await page
      .getByTestId("po-line")
      .evaluateAll((rows) => rows.map((r) => r.querySelectorAll("td")[3]?.textContent));
    expect(openCells.every((t) => t === "—")).toBe(true);

    // The PDF: a real one, naming the vendor.
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByTestId("download-pdf").click(),
    ]);
    const file = await download.path();
    const bytes = fs.readFileSync(file!);
    expect(bytes.subarray(0, 5).toString("latin1")).toBe("%PDF-");
    const text = bytes.toString("latin1");
    const utf16 = Buffer.from(`\ufeff${po.vendor.name}`, "utf16le").swap16().toString("hex").toUpperCase();
    expect(text.includes(po.vendor.name) || text.toUpperCase().includes(utf16)).toBe(true);
  }, 120_000);

  it("brand and category dropdowns offer what there is to order, filter the lines and live in the URL", async () => {
    const facets = await api<{
      brands: { id: number; label: string; lines: number }[];
      categories: { id: number; label: string; lines: number }[];
    }>("/api/replenishment/facets");
    const all = await api<ReplenishmentPage>("/api/replenishment");
    const brand = facets.brands.find((b) => b.lines < all.total) ?? facets.brands[0]!;
    const category = facets.categories[0]!;
    expect(brand).toBeDefined();
    expect(category).toBeDefined();

    const { page } = await e.newPage({ width: 390, height: 600 });
    await e.signIn(page, "admin");
    await page.goto("/purchase-orders?tab=replenishment");
    await page.getByTestId("workspace-line").first().waitFor();
    const lines = page.getByTestId("workspace-lines");
    const renderedPids = async () =>
      (await page.getByTestId("workspace-line").evaluateAll((rows) => rows.map((r) => r.dataset.pid))).map(
        Number,
      );
    // Virtualised: the page holds every line, the DOM only those in view; scrolling brings the last.
    await expect.poll(() => lines.getAttribute("data-total")).toBe(String(Math.min(all.total, 250)));
    expect(all.total).toBeGreaterThan(20);
    {
      expect((await renderedPids()).length).toBeLessThan(all.total);
      const everything = await api<ReplenishmentPage>("/api/replenishment?pageSize=250");
      const lastPid = everything.items.at(-1)!.pid;
      expect(await renderedPids()).not.toContain(lastPid);
      await page.getByTestId("workspace-scroll").evaluate((el) => el.scrollTo(0, el.scrollHeight));
      await expect.poll(renderedPids).toContain(lastPid);
      await page.getByTestId("workspace-scroll").evaluate((el) => el.scrollTo(0, 0));
    }
    await page.getByTestId("brand-filter").click();
    await page
      .getByTestId("combobox-option")
      .getByText(`${brand.label} (${brand.lines})`, { exact: true })
      .click();
    await expect.poll(() => new URL(page.url()).searchParams.get("w_brand")).toBe(String(brand.id));
    const byBrand = await api<ReplenishmentPage>(`/api/replenishment?brand_id=${brand.id}`);
    expect(byBrand.total).toBe(brand.lines);
    await expect.poll(() => lines.getAttribute("data-total")).toBe(String(Math.min(brand.lines, 250)));
    const brandPids = new Set(byBrand.items.map((l) => l.pid));
    await expect.poll(async () => (await renderedPids()).every((p) => brandPids.has(p))).toBe(true);
    expect((await renderedPids()).length).toBeGreaterThan(0);

    // A link reproduces the view: both filters from the URL, the dropdowns naming them.
    const both = await api<ReplenishmentPage>(
      `/api/replenishment?brand_id=${brand.id}&category_id=${category.id}`,
    );
    await page.goto(`/purchase-orders?tab=replenishment&w_brand=${brand.id}&w_category=${category.id}`);
    await page.getByTestId("brand-filter").getByText(brand.label).waitFor();
    await page.getByTestId("category-filter").getByText(category.label).waitFor();
    if (both.total === 0) await page.getByText("Nothing to order under these filters").waitFor();
    else await expect.poll(() => lines.getAttribute("data-total")).toBe(String(Math.min(both.total, 250)));
    // Clearing the brand keeps the category.
    await page.getByTestId("brand-filter").getByLabel("Clear selection").click();
    await expect.poll(() => new URL(page.url()).searchParams.get("w_brand")).toBeNull();
    expect(new URL(page.url()).searchParams.get("w_category")).toBe(String(category.id));
  }, 60_000);

  it("a user who may only see purchase orders gets no action buttons", async () => {
    const list = await api<{ items: { number: string }[] }>("/api/purchase-orders?status=draft&pageSize=1");
    const { page } = await e.newPage({ width: 390, height: 844 });
    await e.signIn(page, "viewer");
    await page.goto("/purchase-orders?tab=replenishment");
    await page.getByTestId("workspace").waitFor();
    expect(await page.getByTestId("create-drafts").count()).toBe(0);
    const number = list.items[0]?.number;
    await page.goto(`/purchase-orders/${number ?? "1"}`);
    await page.getByTestId("po-detail").waitFor();
    for (const id of ["mark-ordered", "receive", "close-short", "cancel-po", "save-lines"])
      expect(await page.getByTestId(id).count(), id).toBe(0);
  });

  it("the drafts preview fits a phone's width: long product names are cut, the buttons stay in view", async () => {
    const ws = await api<ReplenishmentPage>("/api/replenishment");
    const vendor = [...ws.vendors].sort((a, b) => b.open_lines - a.open_lines)[0]!;
    const { page } = await e.newPage({ width: 390, height: 844 });
    await e.signIn(page, "admin");
    await page.goto("/purchase-orders?tab=replenishment");
    await page.getByRole("checkbox", { name: `Select vendor ${vendor.vendor}` }).click();
    await page.getByTestId("create-drafts").click();
    const dialog = page.getByTestId("draft-preview");
    await dialog.getByTestId("preview-vendor").first().waitFor();
    const widths = await dialog.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
    expect(widths.scroll).toBeLessThanOrEqual(widths.client);
    const box = await dialog.getByTestId("confirm-create-drafts").boundingBox();
    expect(box!.x + box!.width).toBeLessThanOrEqual(390);
    await dialog.getByRole("button", { name: "Cancel" }).click();
  });

  it("a date range that matches no order says so and offers to clear it", async () => {
    const { page } = await e.newPage({ width: 1280, height: 800 });
    await e.signIn(page, "viewer");
    await page.goto("/purchase-orders?from=2026-11-20&to=2026-11-10");
    await page.getByText("No purchase orders match these filters").waitFor();
    await page.getByRole("button", { name: "Clear filters" }).click();
    await page.waitForURL((u) => !u.searchParams.has("from") && !u.searchParams.has("to"));
  });
});
