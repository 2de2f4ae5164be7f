// The foundation as a user meets it in Chromium: login, redirects, guards, the app shell, settings tabs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2E, startE2E } from "./harness.ts";

describe("app shell in Chromium", () => {
  let e: E2E;
  beforeAll(async () => {
    e = await startE2E();
    await e.t.createUser("clerk", ["access:products", "access:settings", "settings:products"]);
  });
  afterAll(() => e?.close());

  it("shows the login page; a wrong password shows the server's error in a toast", async () => {
    const { page } = await e.newPage();
    await page.goto("/login");
    await expect
      .poll(() => page.getByRole("heading", { name: "Log in to your account" }).isVisible())
      .toBe(true);
    await page.getByLabel("Username").fill("admin");
    await page.getByLabel("Password").fill("wrong-password");
    await page.getByRole("button", { name: "Log In" }).click();
    await page.getByText("Invalid username or password").waitFor();
    expect(new URL(page.url()).pathname).toBe("/login");
    expect(await page.evaluate(() => localStorage.getItem("token"))).toBeNull();
  });

  it("disables the form and reads 'Logging in...' while the request is pending", async () => {
    const { page } = await e.newPage();
    await page.route("**/trpc/auth.login**", async (route) => {
      await new Promise((r) => setTimeout(r, 800));
      // The page may have let go of the route meanwhile (unrouted or closed): nothing to continue then.
      await route.continue().catch(() => undefined);
    });
    await page.goto("/login");
    await page.getByLabel("Username").fill("admin");
    await page.getByLabel("Password").fill("admin-secret");
    await page.getByRole("button", { name: "Log In" }).click();
    const pending = page.getByRole("button", { name: "Logging in..." });
    await pending.waitFor();
    expect(await pending.isDisabled()).toBe(true);
    expect(await page.getByLabel("Username").isDisabled()).toBe(true);
    expect(await page.getByLabel("Password").isDisabled()).toBe(true);
    await page.waitForURL("**/dashboard");
  });

  it("sends a signed-out visitor to /login with the redirect parameter and back after login", async () => {
    const { page } = await e.newPage();
    await page.goto("/products?view=grid");
    await page.waitForURL("**/login?**");
    expect(new URL(page.url()).searchParams.get("redirect")).toBe("/products?view=grid");
    await e.signIn(page, "clerk");
    const url = new URL(page.url());
    expect(url.pathname + url.search).toBe("/products?view=grid");
    expect(
      await page.evaluate(() => [
        localStorage.getItem("token") !== null,
        sessionStorage.getItem("isLoggedIn"),
      ]),
    ).toEqual([true, "true"]);
  });

  it("sends the root to the first allowed page: /products for a user with access:products", async () => {
    const { page } = await e.newPage();
    await e.signIn(page, "clerk");
    await page.goto("/");
    await page.waitForURL("**/products");
    // Unknown paths go to / (and from there to the first allowed page).
    await page.goto("/no/such/page");
    await page.waitForURL("**/products");
  });

  it("shows only the sidebar groups the user may see", async () => {
    const { page } = await e.newPage();
    await e.signIn(page, "clerk");
    await page.getByTestId("sidebar").waitFor();
    const groups = await page
      .locator('[data-testid^="sidebar-group-"]')
      .evaluateAll((els) => els.map((el) => el.getAttribute("data-testid")));
    expect(groups).toEqual(["sidebar-group-Inventory", "sidebar-group-Settings"]);
    expect(await page.getByTestId("sidebar-item-products").isVisible()).toBe(true);
    expect(await page.getByTestId("sidebar-item-vendors").count()).toBe(0);

    const admin = await e.newPage();
    await e.signIn(admin.page, "admin");
    await admin.page.getByTestId("sidebar").waitFor();
    const adminGroups = await admin.page.locator('[data-testid^="sidebar-group-"]').count();
    expect(adminGroups).toBe(6);
  });

  it("a page without its permission shows the fallback instead of the page", async () => {
    const { page } = await e.newPage();
    await e.signIn(page, "clerk");
    await page.goto("/vendors");
    await page.getByTestId("access-denied").waitFor();
  });

  it("ctrl+b collapses the sidebar, and the state survives a reload", async () => {
    const { page, context } = await e.newPage();
    await e.signIn(page, "admin");
    const sidebar = page.getByTestId("sidebar");
    await sidebar.waitFor();
    expect(await sidebar.getAttribute("data-state")).toBe("expanded");
    await page.keyboard.press("Control+b");
    await expect.poll(() => sidebar.getAttribute("data-state")).toBe("collapsed");
    const cookie = (await context.cookies()).find((c) => c.name === "sidebar:state");
    expect(cookie?.value).toBe("false");
    expect(cookie!.expires - Date.now() / 1000).toBeGreaterThan(604_800 - 60);
    await page.reload();
    await page.getByTestId("sidebar").waitFor();
    expect(await page.getByTestId("sidebar").getAttribute("data-state")).toBe("collapsed");
    await page.keyboard.press("Control+b");
    await expect.poll(() => page.getByTestId("sidebar").getAttribute("data-state")).toBe("expanded");
  });

  it("becomes a slide-over sheet at 390 px width", async () => {
    const { page } = await e.newPage({ width: 390, height: 844 });
    await e.signIn(page, "admin");
    await page.getByTestId("sidebar-trigger").waitFor();
    expect(
      await page
        .getByTestId("sidebar")
        .isVisible()
        .catch(() => false),
    ).toBe(false);
    await page.getByTestId("sidebar-trigger").click();
    const sheet = page.getByTestId("sidebar-sheet");
    await sheet.waitFor();
    expect((await sheet.boundingBox())!.width).toBeCloseTo(288, -1); // 18rem
    await sheet.getByTestId("sidebar-item-products").click();
    await page.waitForURL("**/products");
    await sheet.waitFor({ state: "hidden" });
  });

  it("shows only the permitted settings tabs, in their sections", async () => {
    const { page } = await e.newPage();
    await e.signIn(page, "clerk");
    await page.goto("/settings");
    await page.getByTestId("settings-nav").waitFor();
    const tabs = await page
      .locator('[data-testid^="settings-tab-"]')
      .evaluateAll((els) => els.map((el) => el.getAttribute("data-testid")));
    expect(tabs).toEqual(["settings-tab-products"]);
    expect(await page.getByTestId("settings-section-Inventory Settings").isVisible()).toBe(true);
    expect(await page.getByTestId("settings-section-System").count()).toBe(0);
    await page.goto("/settings?tab=users");
    await page.getByText("You don't have permission to access User Management.").waitFor();

    const admin = await e.newPage();
    await e.signIn(admin.page, "admin");
    await admin.page.goto("/settings");
    await admin.page.getByTestId("settings-nav").waitFor();
    expect(await admin.page.locator('[data-testid^="settings-tab-"]').count()).toBe(8);
  });

  it("a user without any settings permission sees the spec's message", async () => {
    await e.t.createUser("viewer", ["access:settings"]);
    const { page } = await e.newPage();
    await e.signIn(page, "viewer");
    await page.goto("/settings");
    await page
      .getByText(
        "You don't have permission to access any settings. Please contact an administrator for assistance.",
      )
      .waitFor();
  });

  it("logs out to /login and forgets the session", async () => {
    const { page } = await e.newPage();
    await e.signIn(page, "admin");
    await page.getByTestId("user-menu").click();
    await page.getByTestId("user-menu-logout").click();
    await page.waitForURL("**/login**");
    expect(
      await page.evaluate(() => [localStorage.getItem("token"), sessionStorage.getItem("isLoggedIn")]),
    ).toEqual([null, null]);
    await page.goto("/dashboard");
    await page.waitForURL("**/login?**");
  });

  it("an expired or revoked session forces a logout back to /login with the redirect", async () => {
    const { page } = await e.newPage();
    await e.signIn(page, "admin");
    await page.goto("/settings?tab=data");
    await page.getByRole("button", { name: "Run Full Update" }).waitFor();
    // The server ends every session (as deactivating the user would); the next call answers 401.
    await e.t.tdb.db.prisma.session.deleteMany({});
    await page.getByRole("button", { name: "Refresh" }).click();
    await page.waitForURL("**/login?**");
    expect(new URL(page.url()).searchParams.get("redirect")).toBe("/settings?tab=data");
    expect(
      await page.evaluate(() => [localStorage.getItem("token"), sessionStorage.getItem("isLoggedIn")]),
    ).toEqual([null, null]);
  });
});
