// /small in Chromium over a small demo data set calculated by a real Full Reset: a user manager makes
// a device link in the Devices panel, a phone (390 × 844) opens it without signing in and sees the
// figures on one screen without scrolling (the token leaves the address bar), the same at 1920 × 1080
// in the dark theme, a failed refresh keeps the figures under "Stale since", and a revoked link
// stops at once.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateDemoData } from "../../scripts/lib/demo-data.ts";
import type { SmallSummary } from "../../shared/dashboard.ts";
import { type E2E, startE2E } from "./harness.ts";

const SHOTS = process.env.E2E_SCREENSHOTS;

describe("/small in Chromium", () => {
  let e: E2E;
  let dir: string;
  let api: SmallSummary;
  let link = "";

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "small-e2e-"));
    await generateDemoData({ out: dir, products: 120, years: 2, seed: 15 });
    e = await startE2E({ SOURCE_DIR: dir });
    await e.t.createUser("usermgr", ["access:settings", "settings:user_management"]);
    await e.t.app.services.dataOps.start("reset", null);
    await e.t.app.services.dataOps.idle();
    const { token } = await e.t.login("admin");
    api = (await (
      await fetch(`${e.t.url}/api/small`, { headers: { authorization: `Bearer ${token}` } })
    ).json()) as SmallSummary;
    expect(api.has_data).toBe(true);
    if (SHOTS) fs.mkdirSync(SHOTS, { recursive: true });
  }, 180_000);
  afterAll(async () => {
    await e?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const fitsScreen = (page: Page) =>
    page.evaluate(() => [
      document.documentElement.scrollHeight - window.innerHeight,
      document.documentElement.scrollWidth - window.innerWidth,
    ]);

  it("a user manager makes a device link in the Devices panel", async () => {
    const { page } = await e.newPage({ width: 1280, height: 900 });
    await e.signIn(page, "usermgr");
    await page.goto("/small");
    await page.getByTestId("small-denied").waitFor();
    await page.getByTestId("devices-button").click();
    await page.getByLabel("Name").fill("Warehouse phone");
    await page.getByRole("button", { name: "Create link" }).click();
    const value = await page.getByTestId("device-link").inputValue();
    expect(value).toMatch(new RegExp(`^${e.t.url}/small#token=sd_[A-Za-z0-9_-]+$`));
    link = value.slice(e.t.url.length);
    await expect.poll(() => page.getByTestId("device-row").count()).toBe(1);
    expect(await page.getByTestId("device-row").textContent()).toContain("last used never");
  });

  it("a phone opens the link without signing in: the figures on one screen, the token out of the address bar", async () => {
    const { page } = await e.newPage({ width: 390, height: 844 });
    await page.goto(link);
    await page.getByTestId("small-today").waitFor();
    expect(new URL(page.url()).hash).toBe("");
    const week = api.week.revenue;
    const text = await page.getByTestId("small-week").getByTestId("small-value").textContent();
    expect(text).toBe(`$${Math.round(week).toLocaleString("en-US")}`);
    expect(await page.getByTestId("small-order").getByTestId("small-value").textContent()).toBe(
      api.to_order.count.toLocaleString("en-US"),
    );
    expect(await page.getByTestId("small-top").locator("li").count()).toBe(api.top_sellers.length);
    await page.getByText(/^Refresh in \d+ s$/).waitFor();
    expect(await fitsScreen(page)).toEqual([0, 0]);
    expect(await page.getByTestId("devices-button").count()).toBe(0);
    if (SHOTS) await page.screenshot({ path: path.join(SHOTS, "small-phone.png") });
  });

  it("fits a 1920 × 1080 screen in the dark theme", async () => {
    const { page } = await e.newPage({ width: 1920, height: 1080 });
    await page.goto(`/small?theme=dark${link.slice("/small".length)}`);
    await page.getByTestId("small-today").waitFor();
    expect(await page.evaluate(() => document.documentElement.classList.contains("dark"))).toBe(true);
    expect(await fitsScreen(page)).toEqual([0, 0]);
    if (SHOTS) await page.screenshot({ path: path.join(SHOTS, "small-wall.png") });
  });

  it("keeps the figures under a 'stale since' banner when a refresh fails", async () => {
    const { page } = await e.newPage({ width: 390, height: 844 });
    await page.clock.install();
    await page.goto(link);
    await page.getByTestId("small-today").waitFor();
    await page.route("**/api/small", (route) => route.abort());
    await page.clock.runFor(61_000);
    await page.getByTestId("small-stale").waitFor();
    expect(await page.getByTestId("small-stale").textContent()).toMatch(/^Stale since \d\d:\d\d/);
    expect(await page.getByTestId("small-today").isVisible()).toBe(true);
    await page.unroute("**/api/small");
    await page.clock.runFor(6_000);
    await page.getByTestId("small-stale").waitFor({ state: "detached" });
  });

  it("a revoked link stops at once", async () => {
    const { token } = await e.t.login("usermgr");
    const list = (await (
      await fetch(`${e.t.url}/api/small/devices`, { headers: { authorization: `Bearer ${token}` } })
    ).json()) as { id: number; last_used_at: string | null }[];
    expect(list[0]!.last_used_at).not.toBeNull();
    await fetch(`${e.t.url}/api/small/devices/${list[0]!.id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${token}` },
    });
    const { page } = await e.newPage({ width: 390, height: 844 });
    await page.goto(link);
    await page.getByTestId("small-denied").getByText("This device link is no longer valid.").waitFor();
  });
});
