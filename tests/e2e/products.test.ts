// The Products page and a product's page in Chromium, over a small demo data set written
// for today (so the 30/90/365-day windows have sales) and calculated by a real Full Reset.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateDemoData } from "../../scripts/lib/demo-data.ts";
import {
  type MetricsExplanation,
  PRODUCT_STATUSES,
  type ProductMetricsDetail,
  type ProductMetricsListInput,
  type ProductMetricsPage,
  STATUS_LABELS,
} from "../../shared/metrics.ts";
import { type E2E, startE2E } from "./harness.ts";

const SHOTS = process.env.E2E_SCREENSHOTS;
const NO_METRICS = "No metrics have been calculated yet. Run a full update or reset to calculate metrics.";

describe("Products in Chromium", () => {
  let e: E2E;
  let dir: string;
  let token: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "products-e2e-"));
    await generateDemoData({ out: dir, products: 120, years: 2, seed: 6 });
    e = await startE2E({ SOURCE_DIR: dir });
    token = (await e.t.login("admin")).token;
    await e.t.createUser("planner", ["access:products"]);
    await e.t.createUser("clerk", ["access:settings", "settings:products"]);
    if (SHOTS) fs.mkdirSync(SHOTS, { recursive: true });
  });
  afterAll(async () => {
    await e?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A tRPC query over HTTP as the admin (superjson's envelope). */
  async function query<T>(procedure: string, input: unknown): Promise<T> {
    const url = `${e.t.url}/trpc/${procedure}?input=${encodeURIComponent(JSON.stringify({ json: input }))}`;
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    const body = (await res.json()) as { result?: { data: { json: T } }; error?: unknown };
    if (!res.ok || !body.result) throw new Error(`${procedure}: ${res.status} ${JSON.stringify(body.error)}`);
    return body.result.data.json;
  }
  const list = (input: ProductMetricsListInput) => query<ProductMetricsPage>("metrics.products", input);

  async function calculate() {
    await e.t.app.services.dataOps.start("reset", null);
    await e.t.app.services.dataOps.idle();
  }

  async function openProducts(url = "/products", user = "admin", width = 1280): Promise<Page> {
    const { page } = await e.newPage({ width, height: 900 });
    await e.signIn(page, user);
    await page.goto(url);
    return page;
  }

  const rows = (page: Page) => page.getByTestId("products-row");
  const rowPids = (page: Page) =>
    rows(page).evaluateAll((els) => els.map((el) => Number(el.getAttribute("data-pid"))));
  /** Waits until the rows shown are `pids`, in this order. */
  const expectRows = (page: Page, pids: number[]) => expect.poll(() => rowPids(page)).toEqual(pids);

  const shot = async (page: Page, name: string) => {
    if (!SHOTS) return;
    await page.waitForTimeout(350);
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  };

  it("says nothing was calculated yet, linking to Data Management only for users who may run it", async () => {
    const page = await openProducts();
    const empty = page.getByTestId("products-empty");
    await empty.getByText(NO_METRICS).waitFor();
    const link = empty.getByRole("link", { name: "Go to Data Management" });
    expect(await link.getAttribute("href")).toBe("/settings?tab=data");
    await link.click();
    await page.waitForURL((u) => u.pathname === "/settings" && u.searchParams.get("tab") === "data");
    await page.getByRole("button", { name: "Run Full Update" }).waitFor();

    const planner = await openProducts("/products", "planner");
    await planner.getByTestId("products-empty").getByText(NO_METRICS).waitFor();
    expect(await planner.getByRole("link", { name: "Go to Data Management" }).count()).toBe(0);
  });

  it("is only for users with access:products (the page guard and the server)", async () => {
    const page = await openProducts("/products", "clerk");
    await page
      .getByText(/permission/i)
      .first()
      .waitFor();
    expect(await page.getByTestId("products-page").count()).toBe(0);
    const clerk = await e.t.login("clerk");
    const res = await fetch(
      `${e.t.url}/trpc/metrics.products?input=${encodeURIComponent(JSON.stringify({ json: {} }))}`,
      { headers: { authorization: `Bearer ${clerk.token}` } },
    );
    expect(res.status).toBe(403);
  });

  describe("after a Full Reset", () => {
    beforeAll(calculate, 120_000);

    it("lists the products with their statuses, ABC classes and status counts", async () => {
      const api = await list({});
      expect(api.total).toBe(120);
      const page = await openProducts();
      await expectRows(
        page,
        api.rows.map((r) => r.pid),
      );
      expect(api.rows.length).toBe(50);
      // Each row's status badge says the status the API has for it.
      const shown = await rows(page).evaluateAll((els) =>
        els.map((el) => [
          Number(el.getAttribute("data-pid")),
          el.querySelector('[data-testid="product-status"]')?.textContent ?? null,
        ]),
      );
      expect(shown).toEqual(api.rows.map((r) => [r.pid, r.status ? STATUS_LABELS[r.status] : null]));
      // More than one status, so the badges are not all alike.
      expect(new Set(api.rows.map((r) => r.status)).size).toBeGreaterThan(1);
      // The chips count every status; "All" is their sum.
      for (const status of PRODUCT_STATUSES) {
        const count = page.locator(
          `[data-testid="status-chip"][data-status="${status}"] [data-testid="status-chip-count"]`,
        );
        expect(await count.textContent()).toBe(String(api.status_counts[status]));
      }
      expect(
        await page
          .locator('[data-testid="status-chip"][data-status="all"] [data-testid="status-chip-count"]')
          .textContent(),
      ).toBe("120");
      expect(await page.getByTestId("paging-summary").textContent()).toBe("Showing 1–50 of 120 products");

      // Page 3 holds the last 20 and goes into the URL.
      await page.getByRole("button", { name: "Page 3" }).click();
      await page.waitForURL((u) => u.searchParams.get("page") === "3");
      const third = await list({ page: 3 });
      await expectRows(
        page,
        third.rows.map((r) => r.pid),
      );
      expect(third.rows.length).toBe(20);
      await shot(page, "products-list");
    });

    it("sorts by a clicked column head, both ways, and keeps the sort in the URL", async () => {
      const page = await openProducts();
      await rows(page).first().waitFor();
      const head = page.getByRole("columnheader", { name: "Product" });
      await head.getByRole("button").click();
      await page.waitForURL(
        (u) => u.searchParams.get("sort") === "title" && u.searchParams.get("dir") === "asc",
      );
      const asc = await list({ sort: "title", dir: "asc" });
      await expectRows(
        page,
        asc.rows.map((r) => r.pid),
      );
      expect(await head.getAttribute("aria-sort")).toBe("ascending");

      await head.getByRole("button").click();
      await page.waitForURL((u) => u.searchParams.get("dir") === "desc");
      const desc = await list({ sort: "title", dir: "desc" });
      await expectRows(
        page,
        desc.rows.map((r) => r.pid),
      );
      expect(desc.rows[0]!.pid).not.toBe(asc.rows[0]!.pid);

      // A link reproduces the view: a fresh page on the same URL shows the same rows.
      const again = await openProducts(new URL(page.url()).pathname + new URL(page.url()).search);
      await expectRows(
        again,
        desc.rows.map((r) => r.pid),
      );
      expect(await again.getByRole("columnheader", { name: "Product" }).getAttribute("aria-sort")).toBe(
        "descending",
      );
    });

    it("searches by SKU and filters by status and ABC class", async () => {
      const all = await list({ pageSize: 200 });
      const target = all.rows.find((r) => r.sku)!;
      const page = await openProducts();
      await rows(page).first().waitFor();
      await page.getByRole("searchbox", { name: "Search by title, SKU, barcode or ID" }).fill(target.sku!);
      await page.waitForURL((u) => u.searchParams.get("q") === target.sku);
      const found = await list({ search: target.sku! });
      expect(found.rows.map((r) => r.pid)).toContain(target.pid);
      await expectRows(
        page,
        found.rows.map((r) => r.pid),
      );

      // A status chip narrows the list to that status (here: the most common one besides the search).
      await page.getByRole("searchbox", { name: "Search by title, SKU, barcode or ID" }).fill("");
      await page.waitForURL((u) => !u.searchParams.has("q"));
      const status = PRODUCT_STATUSES.filter((s) => all.status_counts[s] > 0).sort(
        (a, b) => all.status_counts[b] - all.status_counts[a],
      )[1]!;
      await page.locator(`[data-testid="status-chip"][data-status="${status}"]`).click();
      await page.waitForURL((u) => u.searchParams.get("status") === status);
      const byStatus = await list({ status });
      await expectRows(
        page,
        byStatus.rows.map((r) => r.pid),
      );
      expect(
        new Set(await rows(page).evaluateAll((els) => els.map((el) => el.getAttribute("data-status")))),
      ).toEqual(new Set([status]));

      await page.getByRole("button", { name: "Class A" }).click();
      await page.waitForURL((u) => u.searchParams.get("abc") === "A");
      const byClass = await list({ status, abc: "A" });
      await expectRows(
        page,
        byClass.rows.map((r) => r.pid),
      );
    });

    it("opens a product's page with its figures explained and three charts, and goes back to the same view", async () => {
      // A product that sells (so its forecast and backtest have numbers).
      const top = await list({ sort: "units_30d", dir: "desc", pageSize: 10 });
      let pid = top.rows[0]!.pid;
      for (const r of top.rows) {
        const detail = await query<ProductMetricsDetail>("metrics.product", { pid: r.pid });
        if (detail.accuracy.some((a) => a.wape !== null) && detail.forecast.length > 0) {
          pid = r.pid;
          break;
        }
      }
      const listUrl = "/products?sort=units_30d&dir=desc";
      const page = await openProducts(listUrl);
      await rows(page).first().waitFor();
      await page
        .locator(`[data-testid="products-row"][data-pid="${pid}"] [data-testid="product-link"]`)
        .click();
      await page.waitForURL((u) => u.pathname === `/products/${pid}`);

      const explain = (await (
        await fetch(`${e.t.url}/api/products/${pid}/metrics/explain`, {
          headers: { authorization: `Bearer ${token}` },
        })
      ).json()) as MetricsExplanation;
      await page.getByTestId("product-title").getByText(explain.title, { exact: true }).waitFor();
      expect(
        await page.getByTestId("product-detail").getByTestId("product-status").first().textContent(),
      ).toBe(explain.status ? STATUS_LABELS[explain.status] : "—");

      // Every figure is there, and the filled-in lines read exactly as the API writes them.
      const figures = page.getByTestId("explained-figure");
      await expect.poll(() => figures.count()).toBe(explain.figures.length);
      for (const key of ["reorder_point", "safety_stock", "stockout_date", "status"]) {
        const figure = explain.figures.find((f) => f.key === key)!;
        const row = page.locator(`[data-testid="explained-figure"][data-key="${key}"]`);
        expect(await row.getByTestId("figure-substituted").textContent()).toBe(figure.substituted);
        expect(await row.getByTestId("figure-formula").textContent()).toBe(figure.formula);
      }
      const groups = await page
        .getByTestId("figure-group")
        .evaluateAll((els) => els.map((el) => el.getAttribute("data-group")));
      expect(groups).toEqual(["stock-demand", "lead-time", "reorder", "status", "profitability", "forecast"]);

      // The three charts draw (recharts renders an svg once it has measured its box).
      for (const chart of ["chart-sales", "chart-stock", "chart-accuracy"]) {
        await page.locator(`[data-testid="${chart}"] svg.recharts-surface`).first().waitFor();
      }
      // The sales chart draws the history and the forecast as two areas.
      await expect.poll(() => page.locator('[data-testid="chart-sales"] .recharts-area').count()).toBe(2);
      // The stock chart has its reorder point and safety stock lines.
      await expect
        .poll(() => page.locator('[data-testid="chart-stock"] .recharts-reference-line line').count())
        .toBe(2);
      expect(await page.locator('[data-testid="accuracy-table"] tbody tr').count()).toBeGreaterThan(0);
      await shot(page, "product-detail");

      // Back keeps the list's sort.
      await page.getByTestId("back-to-products").click();
      await page.waitForURL(
        (u) =>
          u.pathname === "/products" &&
          u.searchParams.get("sort") === "units_30d" &&
          u.searchParams.get("dir") === "desc",
      );
      await expectRows(
        page,
        (await list({ sort: "units_30d", dir: "desc" })).rows.map((r) => r.pid),
      );
    });

    it("says a product its setting excludes from forecasting has no forecast, from the next run on", async () => {
      const pid = (await list({ sort: "units_30d", dir: "desc", pageSize: 10 })).rows[0]!.pid;
      const config = (method: string, suffix: string, body?: unknown) =>
        fetch(`${e.t.url}/config/products/${pid}${suffix}`, {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            ...(body === undefined ? {} : { "content-type": "application/json" }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      const saved = await config("PUT", "", {
        lead_time_days: null,
        days_of_stock: null,
        safety_stock: 0,
        forecast_method: null,
        exclude_from_forecast: true,
      });
      expect(saved.status).toBe(200);
      try {
        await e.t.app.services.dataOps.start("update", null);
        await e.t.app.services.dataOps.idle();
        const page = await openProducts(`/products/${pid}`);
        await page.getByTestId("product-detail").waitFor();
        expect(await page.getByTestId("product-status").first().textContent()).toBe(STATUS_LABELS.excluded);
        expect(await page.getByTestId("sales-chart-description").textContent()).toBe(
          "Units sold per week over the last two years. No forecast: the product's setting excludes it from forecasting.",
        );
        // Only the history is drawn.
        await page.locator('[data-testid="chart-sales"] svg.recharts-surface').first().waitFor();
        await expect.poll(() => page.locator('[data-testid="chart-sales"] .recharts-area').count()).toBe(1);
      } finally {
        expect((await config("POST", "/reset")).status).toBe(200);
        await calculate();
      }
    });

    it("says so for a product that does not exist", async () => {
      const page = await openProducts("/products/999999");
      await page.getByTestId("product-not-found").getByText("Product 999999 not found").waitFor();
      // A dot in the address is not a file extension: the app answers, not a bare 404.
      await page.goto("/products/1.5");
      await page.getByTestId("product-not-found").getByText('"1.5" is not a product ID.').waitFor();
    });

    it("shows cards with the key figures on a phone", async () => {
      const api = await list({});
      const page = await openProducts("/products", "admin", 390);
      await page.getByTestId("products-cards").waitFor();
      await expectRows(
        page,
        api.rows.map((r) => r.pid),
      );
      expect(await page.getByTestId("products-table").count()).toBe(0);
      // No sideways scrolling of the page.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await shot(page, "products-phone");
    });
  });
});
