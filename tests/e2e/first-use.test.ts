// What a new user meets first, in Chromium: where signing in leads, permissions that need each
// other, figures that explain themselves, and screens that fit a 390 px phone. One app and one
// demo data set (written for today, calculated by a real Full Reset) serve the whole file.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateDemoData } from "../../scripts/lib/demo-data.ts";
import { type E2E, startE2E } from "./harness.ts";

const NO_PAGES = "Your account has no pages it may open. Ask an administrator for access.";

describe("a new user's first steps in Chromium", () => {
  let e: E2E;
  let dir: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "first-use-e2e-"));
    await generateDemoData({ out: dir, products: 120, years: 2, seed: 6 });
    e = await startE2E({ SOURCE_DIR: dir });
    await e.t.createUser("brander", ["access:brands"]);
    await e.t.createUser("chatter", ["access:chat"]);
    await e.t.createUser("nobody", []);
    await e.t.createUser("tabonly", ["settings:global"]);
  }, 180_000);
  afterAll(async () => {
    await e?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Signs in through the form and returns the page once the URL settled away from the form's own. */
  async function signInAs(username: string, size = { width: 1440, height: 900 }): Promise<Page> {
    const { page } = await e.newPage(size);
    await page.goto("/login");
    await page.getByLabel("Username").fill(username);
    await page.getByLabel("Password").fill(username === "admin" ? "admin-secret" : "password1");
    await page.getByRole("button", { name: "Log In" }).click();
    return page;
  }

  describe("signing in", () => {
    it("a user whose only page is outside the root order lands on it (Brands, Chat Archive)", async () => {
      const brander = await signInAs("brander");
      await brander.waitForURL((u) => u.pathname === "/brands");
      await brander.getByTestId("sidebar").waitFor();
      const chatter = await signInAs("chatter");
      await chatter.waitForURL((u) => u.pathname === "/chat");
    });

    it("a user who may open no page is told so on the login page and signed out", async () => {
      const page = await signInAs("nobody");
      const message = page.getByTestId("login-no-pages");
      await message.waitFor();
      expect(await message.textContent()).toBe(NO_PAGES);
      expect(new URL(page.url()).pathname).toBe("/login");
      expect(await page.getByRole("button", { name: "Log In" }).isEnabled()).toBe(true);
      // The session ended: nothing is left to reuse.
      await expect.poll(() => page.evaluate(() => localStorage.getItem("token"))).toBeNull();
      // The same holds for a settings tab without the Settings page.
      const tabOnly = await signInAs("tabonly");
      await tabOnly.getByText(NO_PAGES).waitFor();
    });
  });

  describe("the user form", () => {
    it("ticks Settings Page with any settings tab, says why, and the server stores it", async () => {
      const page = await signInAs("admin");
      await page.waitForURL("**/dashboard");
      await page.goto("/settings?tab=users");
      await page.getByRole("button", { name: "Add User" }).click();
      await page.getByLabel("Username").fill("globalist");
      await page.getByLabel("Password").fill("globalist-pass");
      const settingsPage = page.getByRole("checkbox", { name: /^Settings Page/ });
      expect(await settingsPage.isChecked()).toBe(false);
      await page.getByRole("checkbox", { name: /^Global Settings/ }).click();
      await expect.poll(() => settingsPage.isChecked()).toBe(true);
      const why = page.getByTestId("permission-needed-access:settings");
      expect(await why.textContent()).toContain("needed to open the tabs you chose");
      // It stays ticked while a tab needs it.
      expect(await settingsPage.isDisabled()).toBe(true);
      await page.getByRole("button", { name: "Create User" }).click();
      await page.getByTestId("user-form").waitFor({ state: "detached" });
      const stored = await e.t.tdb.db.prisma.user.findFirstOrThrow({
        where: { username: "globalist" },
        select: { permissions: { select: { permission: { select: { code: true } } } } },
      });
      expect(stored.permissions.map((p) => p.permission.code).sort()).toEqual([
        "access:settings",
        "settings:global",
      ]);
      // Unticking the last tab frees the Settings page again.
      await page.getByRole("button", { name: "Edit globalist" }).click();
      await page.getByRole("checkbox", { name: /^Global Settings/ }).click();
      await expect.poll(() => settingsPage.isDisabled()).toBe(false);
      expect(await why.count()).toBe(0);
      expect(await settingsPage.isChecked()).toBe(true);
    });
  });
});
