// What a new user meets first, in Chromium: where signing in leads, permissions that need each
// other, figures that explain themselves, and screens that fit a 390 px phone. One app and one
// demo data set (written for today, calculated by a real Full Reset) serve the whole file.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateDemoData } from "../../scripts/lib/demo-data.ts";
import type {
  AggregateListInput,
  AggregatePage,
  ProductMetricsDetail,
  ProductMetricsListInput,
  ProductMetricsPage,
} from "../../shared/metrics.ts";
import { type E2E, startE2E } from "./harness.ts";

const PHONE = { width: 390, height: 844 };
/** E2E_SCREENSHOTS=<dir> keeps a full-page screenshot of each screen checked. */
const SHOTS = process.env.E2E_SCREENSHOTS;
/** The settings tabs whose content fits a phone without scrolling sideways. */
const PHONE_READY_TABS = ["global", "products", "vendors", "templates", "prompts", "images", "users", "data"];
const NO_PAGES = "Your account has no pages it may open. Ask an administrator for access.";

describe("a new user's first steps in Chromium", () => {
  let e: E2E;
  let dir: string;
  let token: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "first-use-e2e-"));
    await generateDemoData({ out: dir, products: 120, years: 2, seed: 6 });
    e = await startE2E({ SOURCE_DIR: dir });
    token = (await e.t.login("admin")).token;
    await e.t.createUser("brander", ["access:brands"]);
    await e.t.createUser("chatter", ["access:chat"]);
    await e.t.createUser("nobody", []);
    await e.t.createUser("tabonly", ["settings:global"]);
  }, 180_000);
  afterAll(async () => {
    await e?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const shot = async (page: Page, name: string) => {
    if (!SHOTS) return;
    fs.mkdirSync(SHOTS, { recursive: true });
    await page.waitForTimeout(300);
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  };

  /** A tRPC query over HTTP as the admin (superjson's envelope). */
  async function query<T>(procedure: string, input: unknown): Promise<T> {
    const url = `${e.t.url}/trpc/${procedure}?input=${encodeURIComponent(JSON.stringify({ json: input }))}`;
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    const body = (await res.json()) as { result?: { data: { json: T } }; error?: unknown };
    if (!res.ok || !body.result) throw new Error(`${procedure}: ${res.status} ${JSON.stringify(body.error)}`);
    return body.result.data.json;
  }

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

  describe("figures that explain themselves (after a Full Reset)", () => {
    beforeAll(async () => {
      await e.t.app.services.dataOps.start("reset", null);
      await e.t.app.services.dataOps.idle();
    }, 180_000);

    it("the product page says what WAPE is and why its forecast method is in use; money reads as money", async () => {
      const list = await query<ProductMetricsPage>("metrics.products", {
        sort: "revenue_30d",
        dir: "desc",
      } satisfies ProductMetricsListInput);
      // A product whose method is the global default's (auto_forecast_method did not switch it).
      const switched = new Set(
        (
          await e.t.tdb.db.prisma.$queryRawUnsafe<{ pid: number }[]>(
            "SELECT pid FROM product_forecasts WHERE chosen_by_backtest",
          )
        ).map((r) => r.pid),
      );
      const pid = list.rows.find((r) => r.forecast_method && !switched.has(r.pid))!.pid;
      const detail = await query<ProductMetricsDetail>("metrics.product", { pid });
      expect(detail.accuracy.length).toBeGreaterThan(0);
      const page = await signInAs("admin");
      await page.waitForURL("**/dashboard");
      await page.goto(`/products/${pid}`);
      const notes = page.getByTestId("accuracy-notes");
      await notes.waitFor();
      expect(await notes.textContent()).toContain("WAPE (weighted absolute percentage error)");
      await shot(page, "product-1440");
      expect(await page.getByTestId("accuracy-in-use").textContent()).toBe(
        "Standard is in use because it is the global default forecast method (Settings → Global Settings); this product has no method of its own.",
      );
      // When the other method scored better over the same weeks, the page says so and how to switch
      // (seasonal's row can cover fewer weeks: only those with 53 weeks of history before them).
      const [inUse, other] = [
        detail.accuracy.find((a) => a.method === detail.forecast_method),
        detail.accuracy.find((a) => a.method !== detail.forecast_method),
      ];
      const better =
        inUse?.wape != null && other?.wape != null && other.weeks === inUse.weeks && other.wape < inUse.wape;
      expect(await page.getByTestId("accuracy-better").count()).toBe(better ? 1 : 0);
      // A product whose method the backtest chose says so, not that the other one lacked history.
      const [chosen] = [...switched];
      if (chosen !== undefined) {
        const method = (
          await e.t.tdb.db.prisma.$queryRawUnsafe<{ method: string }[]>(
            `SELECT method FROM product_forecasts WHERE pid = ${chosen}`,
          )
        )[0]!.method;
        await page.goto(`/products/${chosen}`);
        await page.getByTestId("accuracy-notes").waitFor();
        expect(await page.getByTestId("accuracy-in-use").textContent()).toBe(
          `${method === "seasonal" ? "Seasonal" : "Standard"} is in use because it had the lower backtest error: this product takes the global default method (standard) and the setting auto_forecast_method lets the backtest choose (Settings → Global Settings).`,
        );
        expect(await page.getByTestId("sales-chart-description").textContent()).toContain(
          "(chosen by backtest)",
        );
        await page.goto(`/products/${pid}`);
        await page.getByTestId("accuracy-notes").waitFor();
      }
      // Amounts in the explanation use the currency format: "$1,234.56", never a bare "1234.56".
      const value = page.locator('[data-testid="explained-figure"][data-key="stock_value_cost"]');
      const substituted = await value.getByTestId("figure-substituted").textContent();
      expect(substituted).toMatch(/ = \$[\d,]+\.\d\d$/);
      const revenue = await page
        .locator('[data-testid="explained-figure"][data-key="sales_revenue"] [data-testid="figure-value"]')
        .textContent();
      expect(revenue).toMatch(/^\$[\d,]+\.\d\d( \/ \$[\d,]+\.\d\d){4}$/);
    });

    it("the planning pages fit a 390 px phone: nothing scrolls sideways", async () => {
      const list = await query<ProductMetricsPage>("metrics.products", {} satisfies ProductMetricsListInput);
      const page = await signInAs("admin", PHONE);
      await page.waitForURL("**/dashboard");
      const wide: Record<string, unknown> = {};
      for (const url of [
        "/products",
        `/products/${list.rows[0]!.pid}`,
        "/brands",
        "/vendors",
        "/categories",
      ]) {
        await page.goto(url);
        await page.waitForLoadState("networkidle");
        await page.waitForTimeout(300);
        await shot(page, `${url.replaceAll("/", "_")}-390`);
        const scrollers = await page.evaluate(() =>
          [...document.querySelectorAll("main *")]
            .filter((el) => {
              const style = getComputedStyle(el);
              return (
                ["auto", "scroll"].includes(style.overflowX) &&
                el.scrollWidth > el.clientWidth + 1 &&
                (el as HTMLElement).offsetParent !== null
              );
            })
            .map((el) => el.getAttribute("data-testid") ?? el.className.toString().slice(0, 60)),
        );
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        if (scrollers.length || width > PHONE.width) wide[url] = { scrollers, width };
      }
      expect(wide).toEqual({});
    });

    it("Products counts say what their parts are, and every blank vendor figure says why", async () => {
      const vendors = await query<AggregatePage>("metrics.aggregates", {
        kind: "vendor",
        pageSize: 100,
      } satisfies AggregateListInput);
      const page = await signInAs("admin");
      await page.waitForURL("**/dashboard");
      await page.goto("/vendors");
      const rows = page.locator('[data-testid="aggregate-row"]');
      await expect.poll(() => rows.count()).toBeGreaterThan(0);
      const shown = await rows.evaluateAll((els) =>
        els.map((el) => ({
          id: Number(el.getAttribute("data-id")),
          products: el.querySelector('[data-col="product_count"]')?.textContent ?? "",
          cells: [...el.querySelectorAll("[data-col]")].map((c) => ({
            col: c.getAttribute("data-col"),
            text: c.textContent ?? "",
            reason: c.querySelector('[data-testid="blank-reason"]')?.textContent ?? null,
          })),
        })),
      );
      for (const r of shown) {
        const api = vendors.rows.find((v) => v.id === r.id)!;
        if (api.active_product_count !== api.product_count)
          expect(r.products).toBe(`${api.product_count}${api.active_product_count} active`);
        // No cell is a bare dash: a blank one carries its reason.
        for (const c of r.cells) {
          if (c.text.startsWith("—")) expect(c.reason, `${r.id} ${c.col}`).toBeTruthy();
        }
      }
      // The demo's vendors include blanks to explain (some on-time rate, margin or lead time).
      expect(shown.some((r) => r.cells.some((c) => c.reason))).toBe(true);
    });
  });

  describe("Settings on a 390 px phone", () => {
    /** Elements of the page that scroll sideways (a table wider than the screen), by test id or tag. */
    const sidewaysScrollers = (page: Page) =>
      page.evaluate(() =>
        [...document.querySelectorAll("main *")]
          .filter((el) => {
            const style = getComputedStyle(el);
            return (
              ["auto", "scroll"].includes(style.overflowX) &&
              el.scrollWidth > el.clientWidth + 1 &&
              (el as HTMLElement).offsetParent !== null
            );
          })
          .map((el) => el.getAttribute("data-testid") ?? el.firstElementChild?.tagName ?? el.tagName),
      );

    it("a compact tab selector puts the tab's content on the first screen; products are cards", async () => {
      const page = await signInAs("admin", PHONE);
      await page.waitForURL("**/dashboard");
      await page.goto("/settings?tab=products");
      const select = page.getByTestId("compact-settings-tabs");
      await select.waitFor();
      expect(await page.getByTestId("settings-nav").isVisible()).toBe(false);
      const cards = page.getByTestId("product-row");
      await expect.poll(() => cards.count()).toBeGreaterThan(0);
      // The tab's own content starts on the first screen.
      const top = (await page.getByTestId("product-settings").boundingBox())!.y;
      expect(top).toBeLessThan(PHONE.height / 2);
      // Every field of a product is on screen: nothing is cut off or scrolls sideways.
      expect(await page.getByTestId("product-settings").locator("table").count()).toBe(0);
      const first = cards.first();
      for (const label of ["Lead time (days)", "Days of stock", "Safety stock", "Forecast method"]) {
        const name = new RegExp(`^${label.replace(/[()]/g, "\\$&")} for product`);
        const box = (await first.getByLabel(name).boundingBox())!;
        expect(box.x, label).toBeGreaterThanOrEqual(0);
        expect(box.x + box.width, label).toBeLessThanOrEqual(PHONE.width);
      }
      expect(await first.getByText("Days of Stock", { exact: true }).isVisible()).toBe(true);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
        PHONE.width,
      );
      expect(await sidewaysScrollers(page)).toEqual([]);
      // A change on a card is saved like a table row's.
      await first.getByLabel(/^Days of stock for product/).fill("45");
      await first.getByRole("button", { name: /^Save product/ }).click();
      const pid = Number(await first.getAttribute("data-pid"));
      await expect
        .poll(
          async () => (await e.t.tdb.db.prisma.productSetting.findUnique({ where: { pid } }))?.daysOfStock,
        )
        .toBe(45);

      // The selector lists the tabs by section and switches between them.
      await select.click();
      await page.getByRole("option", { name: "Vendor Settings" }).click();
      await page.waitForURL((u) => u.searchParams.get("tab") === "vendors");
      await page.getByTestId("settings-panel-vendors").waitFor();
    });

    it("no settings tab scrolls sideways on the phone", async () => {
      const page = await signInAs("admin", PHONE);
      await page.waitForURL("**/dashboard");
      const wide: Record<string, unknown> = {};
      for (const tab of PHONE_READY_TABS) {
        await page.goto(`/settings?tab=${tab}`);
        await page.getByTestId(`settings-panel-${tab}`).waitFor();
        await page.waitForLoadState("networkidle");
        await page.waitForTimeout(300);
        await shot(page, `settings-${tab}-390`);
        const scrollers = await sidewaysScrollers(page);
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        if (scrollers.length || width > PHONE.width) wide[tab] = { scrollers, width };
      }
      expect(wide).toEqual({});
    });
  });
});
