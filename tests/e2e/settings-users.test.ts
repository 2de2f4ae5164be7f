// Forecasting settings and User Management in Chromium (spec sections 2, 4, 5 and 8 "Settings" and
// "Users"), over the small fixture's products 1001–1003 and vendors "Vendor A" and "Vendor, B".
import fs from "node:fs";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2E, startE2E } from "./harness.ts";

const SHOTS = process.env.E2E_SCREENSHOTS;

describe("settings and users in Chromium", () => {
  let e: E2E;

  beforeAll(async () => {
    e = await startE2E({ SOURCE_DIR: path.resolve("tests/fixtures/source-small") });
    await e.t.app.services.dataOps.start("reset", null);
    await e.t.app.services.dataOps.idle();
    expect(await e.t.tdb.db.prisma.product.count()).toBe(3);
    await e.t.createUser("planner", ["access:settings", "settings:products"]);
    if (SHOTS) fs.mkdirSync(SHOTS, { recursive: true });
  });
  afterAll(() => e?.close());

  /** A toast whose title is exactly `text`. */
  const toast = (page: Page, text: string) =>
    page
      .locator("[data-sonner-toast] [data-title]")
      .filter({ hasText: new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`) });
  /** With E2E_SCREENSHOTS=<dir>: the viewport (grown to the page's height) once animations settle. */
  const shot = async (page: Page, name: string) => {
    if (!SHOTS) return;
    await page.waitForTimeout(350);
    const size = page.viewportSize()!;
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.setViewportSize({ width: size.width, height: Math.max(size.height, height) });
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
    await page.setViewportSize(size);
  };
  const settingsTabs = (page: Page) =>
    page
      .locator('[data-testid^="settings-tab-"]')
      .evaluateAll((els) => els.map((el) => el.getAttribute("data-testid")));

  it("a planner with access:settings and settings:products sees only that tab, and saves a product row", async () => {
    const { page } = await e.newPage({ width: 1440, height: 900 });
    await e.signIn(page, "planner");
    await page.goto("/settings");
    await page.getByTestId("settings-nav").waitFor();
    expect(await settingsTabs(page)).toEqual(["settings-tab-products"]);
    await page
      .getByText("Configure settings for individual products that override global defaults")
      .waitFor();
    const rows = page.getByTestId("product-row");
    await expect.poll(() => rows.count()).toBe(3);
    expect(await rows.evaluateAll((els) => els.map((el) => el.getAttribute("data-pid")))).toEqual([
      "1001",
      "1002",
      "1003",
    ]);
    await page.getByRole("columnheader", { name: "Lead Time (days)" }).waitFor();
    for (const header of [
      "Product ID",
      "Days of Stock",
      "Safety Stock",
      "Forecast Method",
      "Exclude",
      "Actions",
    ])
      expect(await page.getByRole("columnheader", { name: header, exact: true }).count(), header).toBe(1);

    const row = page.locator('[data-testid="product-row"][data-pid="1001"]');
    expect(await row.getByText("Cardstock 12x12 - Blue").isVisible()).toBe(true);
    const save = row.getByRole("button", { name: "Save product 1001" });
    expect(await save.isDisabled()).toBe(true);
    // A blank field shows what it falls back to: Vendor A quotes 14 days.
    const lead = row.getByLabel("Lead time (days) for product 1001");
    expect(await lead.getAttribute("placeholder")).toBe("14");

    // Out of range: marked, and Save stays off.
    await lead.fill("0");
    await row.getByText("must be a whole number, 1 or more, or blank").waitFor();
    expect(await save.isDisabled()).toBe(true);
    await lead.fill("21");
    await row.getByLabel("Safety stock for product 1001").fill("5");
    await row.getByLabel("Forecast method for product 1001").click();
    await page.getByRole("option", { name: "Seasonal" }).click();
    await row.getByRole("checkbox", { name: "Exclude product 1001 from forecasting" }).click();
    expect(await row.getAttribute("data-changed")).toBe("true");
    expect(await save.isEnabled()).toBe(true);
    await shot(page, "products-editing");
    await save.click();
    await toast(page, "Settings updated for product 1001").waitFor();
    await expect.poll(() => save.isDisabled()).toBe(true);
    expect(await row.getAttribute("data-changed")).toBeNull();
    expect(await e.t.tdb.db.prisma.productSetting.findUnique({ where: { pid: 1001 } })).toMatchObject({
      leadTimeDays: 21,
      safetyStock: 5,
      forecastMethod: "seasonal",
      excludeFromForecast: true,
    });
    await row.getByText("Custom").waitFor();
    await shot(page, "products-saved");

    // Editing back to the saved values is no change.
    await lead.fill("22");
    expect(await save.isEnabled()).toBe(true);
    await lead.fill("21");
    expect(await save.isDisabled()).toBe(true);

    // Reset brings the defaults back and reloads the list.
    await row.getByRole("button", { name: "Reset product 1001" }).click();
    await toast(page, "Settings reset for product 1001").waitFor();
    await expect.poll(() => lead.inputValue()).toBe("");
    expect(await e.t.tdb.db.prisma.productSetting.findUnique({ where: { pid: 1001 } })).toBeNull();

    // Search by name or id.
    await page.getByPlaceholder("Search products by ID or name...").fill("ink");
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().getAttribute("data-pid")).toBe("1002");
    await page.getByPlaceholder("Search products by ID or name...").fill("1003");
    await expect.poll(() => rows.first().getAttribute("data-pid")).toBe("1003");
    await page.getByPlaceholder("Search products by ID or name...").fill("zzz");
    await page.getByText("No products match your search").waitFor();

    // Without settings:global the server refuses too, and the tab says so.
    await page.goto("/settings?tab=global");
    await page.getByText("You don't have permission to access Global Settings.").waitFor();
  });

  it("global settings: two cards, the spec's choices, inline rules, Save All Settings", async () => {
    const { page } = await e.newPage({ width: 1440, height: 1000 });
    await e.signIn(page, "admin");
    await page.goto("/settings?tab=global");
    await page.getByText("ABC Classification Settings").waitFor();
    await page.getByText("Configure how products are classified into A, B, and C categories").waitFor();
    await page.getByText("Default Settings", { exact: true }).waitFor();
    await page.getByText("Configure system-wide default values").waitFor();

    const basis = page.getByLabel("ABC Calculation Basis");
    expect(await basis.textContent()).toBe("Revenue (30 days)");
    await basis.click();
    expect(await page.getByRole("option").allTextContents()).toEqual([
      "Revenue (30 days)",
      "Sales Quantity (30 days)",
      "Lifetime Revenue",
    ]);
    await page.getByRole("option", { name: "Sales Quantity (30 days)" }).click();

    const a = page.getByLabel("A Threshold");
    expect([await a.getAttribute("min"), await a.getAttribute("max"), await a.getAttribute("step")]).toEqual([
      "0",
      "1",
      "0.01",
    ]);
    expect(await page.getByLabel("Default Lead Time (days)").getAttribute("min")).toBe("1");
    await a.fill("1.5");
    await page.getByTestId("setting-abc_a_threshold").getByText("must be a number from 0 to 1").waitFor();
    await a.fill("0.97");
    await page.getByRole("button", { name: "Save All Settings" }).click();
    await page.getByText("A threshold must not exceed B threshold").waitFor();
    await a.fill("0.75");
    await page.getByLabel("Default Lead Time (days)").fill("10");
    await shot(page, "global-settings");
    await page.getByRole("button", { name: "Save All Settings" }).click();
    await toast(page, "Global settings updated successfully").waitFor();
    const stored = await e.t.tdb.db.prisma.globalSetting.findMany();
    const value = (key: string) => stored.find((s) => s.settingKey === key)?.settingValue;
    expect([
      value("abc_a_threshold"),
      value("default_lead_time_days"),
      value("abc_calculation_basis"),
    ]).toEqual(["0.75", "10", "sales_30d"]);
    // The loading text shows while the settings load.
    await page.route("**/trpc/config.global**", async (route) => {
      await new Promise((r) => setTimeout(r, 600));
      // The page may have let go of the route meanwhile (unrouted or closed): nothing to continue then.
      await route.continue().catch(() => undefined);
    });
    await page.reload();
    await page.getByText("Loading settings...").waitFor();
  });

  it("vendor settings: URL-safe names, debounced search, save and reset", async () => {
    const { page } = await e.newPage({ width: 1440, height: 900 });
    await e.signIn(page, "admin");
    await page.goto("/settings?tab=vendors");
    await page.getByText("Configure default settings for products from specific vendors").waitFor();
    const rows = page.getByTestId("vendor-row");
    await expect.poll(() => rows.count()).toBe(2);
    for (const header of ["Vendor", "Default Lead Time (days)", "Default Days of Stock", "Actions"])
      expect(await page.getByRole("columnheader", { name: header, exact: true }).count(), header).toBe(1);

    const row = page.locator('[data-testid="vendor-row"][data-vendor="Vendor, B"]');
    const days = row.getByLabel("Default days of stock for Vendor, B");
    await days.fill("45");
    await row.getByRole("button", { name: "Save vendor Vendor, B" }).click();
    await toast(page, "Settings updated for vendor Vendor, B").waitFor();
    expect(
      await e.t.tdb.db.prisma.vendorSetting.findUnique({ where: { vendor: "Vendor, B" } }),
    ).toMatchObject({
      defaultDaysOfStock: 45,
      defaultLeadTimeDays: null,
    });
    await shot(page, "vendor-settings");

    // One request for the whole word, 300 ms after the last key.
    const searches: string[] = [];
    page.on("request", (r) => {
      if (r.url().includes("config.vendors")) searches.push(r.url());
    });
    await page.getByPlaceholder("Search vendors...").pressSequentially(", B", { delay: 40 });
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().getAttribute("data-vendor")).toBe("Vendor, B");
    expect(searches).toHaveLength(1);

    await row.getByRole("button", { name: "Reset vendor Vendor, B" }).click();
    await toast(page, "Settings reset for vendor Vendor, B").waitFor();
    expect(await e.t.tdb.db.prisma.vendorSetting.count()).toBe(0);
  });

  it("adds a user with two permissions; they see only what those allow", async () => {
    const { page } = await e.newPage({ width: 1440, height: 1000 });
    await e.signIn(page, "admin");
    await page.goto("/settings?tab=users");
    await page.getByText("User Management", { exact: true }).first().waitFor();
    const userRows = page.getByTestId("user-row");
    await expect.poll(() => userRows.count()).toBe(2);
    for (const header of ["Username", "Email", "Admin", "Status", "Last Login", "Actions"])
      expect(await page.getByRole("columnheader", { name: header, exact: true }).count(), header).toBe(1);
    const adminRow = page.locator('[data-testid="user-row"][data-username="admin"]');
    expect(await adminRow.getByText("Admin", { exact: true }).isVisible()).toBe(true);
    expect(await adminRow.getByText(/^\d+m ago$/).isVisible()).toBe(true);
    const plannerRow = page.locator('[data-testid="user-row"][data-username="planner"]');
    expect(await plannerRow.locator("td").allTextContents()).toEqual([
      "planner",
      "-",
      "No",
      "Active",
      expect.stringMatching(/ago$/),
      "",
    ]);
    await shot(page, "users-list");

    await page.getByRole("button", { name: "Add User" }).click();
    await page.getByText("Add New User").waitFor();
    expect(await page.getByTestId("user-form").isVisible()).toBe(true);
    expect(await userRows.count()).toBe(0);
    // Validation messages of spec section 5, and the no-permission warning.
    await page.getByRole("button", { name: "Create User" }).click();
    await page.getByText("Username must be at least 3 characters").waitFor();
    await page.getByText("Password is required for new users").waitFor();
    await page
      .getByText("Warning: This user has no permissions selected. They won't be able to access anything.")
      .waitFor();
    await page.getByLabel("Email").fill("nope");
    await page.getByLabel("Password").fill("123");
    await page.getByRole("button", { name: "Create User" }).click();
    await page.getByText("Please enter a valid email").waitFor();
    await page.getByText("Password must be at least 6 characters").waitFor();

    await page.getByLabel("Username").fill("buyer");
    await page.getByLabel("Email").fill("buyer@example.com");
    await page.getByLabel("Password").fill("buyer-pass");
    await page.getByRole("checkbox", { name: /^Settings Page/ }).click();
    await page.getByRole("checkbox", { name: /^Vendor Settings/ }).click();
    await page.getByTestId("no-permissions-warning").waitFor({ state: "detached" });
    // The chat-user selector defaults to None.
    expect(await page.getByLabel("Chat User").textContent()).toBe("None");
    await shot(page, "user-form");
    await page.getByRole("button", { name: "Create User" }).click();
    await page.getByTestId("user-form").waitFor({ state: "detached" });
    const buyerRow = page.locator('[data-testid="user-row"][data-username="buyer"]');
    await buyerRow.waitFor();
    expect(await buyerRow.locator("td").allTextContents()).toEqual([
      "buyer",
      "buyer@example.com",
      "No",
      "Active",
      "Never",
      "",
    ]);

    // A username that exists (in any case) is refused by the server, shown in the error panel.
    await page.getByRole("button", { name: "Add User" }).click();
    await page.getByLabel("Username").fill("BUYER");
    await page.getByLabel("Password").fill("another1");
    await page.getByRole("button", { name: "Create User" }).click();
    await page.getByTestId("permission-error").getByText('Username "BUYER" is already taken').waitFor();
    expect(await page.getByText("Permission Error").isVisible()).toBe(true);
    await page.getByRole("button", { name: "Cancel" }).click();

    // Signed in as the new user: only the Settings page, and only its Vendor Settings tab.
    const buyer = await e.newPage({ width: 1280, height: 800 });
    await e.signIn(buyer.page, "buyer", "buyer-pass");
    await buyer.page.waitForURL("**/settings");
    await buyer.page.getByTestId("sidebar").waitFor();
    const groups = await buyer.page
      .locator('[data-testid^="sidebar-group-"]')
      .evaluateAll((els) => els.map((el) => el.getAttribute("data-testid")));
    expect(groups).toEqual(["sidebar-group-Settings"]);
    await buyer.page.getByTestId("settings-nav").waitFor();
    expect(await settingsTabs(buyer.page)).toEqual(["settings-tab-vendors"]);
    await buyer.page.getByTestId("vendor-row").first().waitFor();
    await buyer.page.goto("/dashboard");
    await buyer.page.getByTestId("access-denied").waitFor();
    await buyer.page.goto("/settings?tab=users");
    await buyer.page.getByText("You don't have permission to access User Management.").waitFor();
  });

  it("admin: every permission checked and locked, with the two admin texts; edit keeps a blank password", async () => {
    const { page } = await e.newPage({ width: 1440, height: 1000 });
    await e.signIn(page, "admin");
    await page.goto("/settings?tab=users");
    const buyerRow = page.locator('[data-testid="user-row"][data-username="buyer"]');
    await buyerRow.getByRole("button", { name: "Edit buyer" }).click();
    await page.getByText("Edit User").waitFor();
    expect(await page.getByLabel("Username").inputValue()).toBe("buyer");
    expect(await page.getByLabel("Password").inputValue()).toBe("");
    expect(await page.getByRole("checkbox", { name: /^Vendor Settings/ }).getAttribute("data-state")).toBe(
      "checked",
    );
    expect(await page.getByRole("checkbox", { name: /^Global Settings/ }).getAttribute("data-state")).toBe(
      "unchecked",
    );

    // Select All / Deselect All per category.
    const settingsCategory = page.getByTestId("permission-category-Settings");
    await settingsCategory.getByRole("button", { name: "Select All" }).click();
    expect(await settingsCategory.getByRole("checkbox", { checked: false }).count()).toBe(0);
    await settingsCategory.getByRole("button", { name: "Deselect All" }).click();
    expect(await settingsCategory.getByRole("checkbox", { checked: true }).count()).toBe(0);
    await page.getByRole("checkbox", { name: /^Vendor Settings/ }).click();

    await page.getByRole("switch", { name: "Administrator" }).click();
    await page
      .getByText(
        "Administrators have access to all permissions by default. Individual permissions cannot be edited for admin users.",
      )
      .waitFor();
    await page.getByText("Admin users have access to all chat rooms by default").waitFor();
    expect(await page.getByLabel("Chat User").count()).toBe(0);
    const boxes = page.getByTestId("permission-checklist").getByRole("checkbox");
    expect(await boxes.count()).toBeGreaterThan(20);
    expect(
      await page.getByTestId("permission-checklist").getByRole("checkbox", { checked: false }).count(),
    ).toBe(0);
    expect(await boxes.evaluateAll((els) => els.every((el) => (el as HTMLButtonElement).disabled))).toBe(
      true,
    );
    await shot(page, "user-form-admin");
    await page.getByRole("switch", { name: "Administrator" }).click();

    await page.getByRole("button", { name: "Update User" }).click();
    await page.getByTestId("user-form").waitFor({ state: "detached" });
    await toast(page, "User updated successfully").waitFor();
    // The blank password kept the old one.
    await e.t.login("buyer", "buyer-pass");
  });

  it("asks before deleting a user; Cancel keeps them, Delete removes them", async () => {
    const { page } = await e.newPage({ width: 1440, height: 900 });
    await e.signIn(page, "admin");
    await page.goto("/settings?tab=users");
    const buyerRow = page.locator('[data-testid="user-row"][data-username="buyer"]');
    await buyerRow.getByRole("button", { name: "Delete buyer" }).click();
    const dialog = page.getByRole("alertdialog");
    await dialog.getByText("Are you sure you want to delete this user?").waitFor();
    await shot(page, "user-delete-confirm");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });
    expect(await buyerRow.isVisible()).toBe(true);

    await buyerRow.getByRole("button", { name: "Delete buyer" }).click();
    await page.getByRole("alertdialog").getByRole("button", { name: "Delete" }).click();
    await buyerRow.waitFor({ state: "detached" });
    await toast(page, "User deleted successfully").waitFor();
    expect(await e.t.tdb.db.prisma.user.findFirst({ where: { usernameKey: "buyer" } })).toBeNull();
    // One's own account cannot be deleted: the button is off.
    const own = page.locator('[data-testid="user-row"][data-username="admin"]');
    expect(await own.getByRole("button", { name: "Delete admin" }).isDisabled()).toBe(true);
  });
});
