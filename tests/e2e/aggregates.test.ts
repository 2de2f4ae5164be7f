// The Brands, Vendors and Categories pages (docs/metrics.md §11) in Chromium, over a small
// demo data set written for today and calculated by a real Full Reset: rows and figures as the API
// has them, the top-10 chart, sorting, search, the category tree, the link from a vendor to its
// products, the phone layout and the page guard.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateDemoData } from "../../scripts/lib/demo-data.ts";
import { formatCurrency } from "../../shared/format.ts";
import type {
  AggregateKind,
  AggregateListInput,
  AggregatePage,
  AggregateRow,
  ProductMetricsListInput,
  ProductMetricsPage,
} from "../../shared/metrics.ts";
import { type E2E, startE2E } from "./harness.ts";

const SHOTS = process.env.E2E_SCREENSHOTS;
const NO_METRICS = "No metrics have been calculated yet. Run a full update or reset to calculate metrics.";
const PATHS: Record<AggregateKind, string> = {
  brand: "/brands",
  vendor: "/vendors",
  category: "/categories",
};
/** What each page shows first: brands and vendors by revenue of the year, categories as their tree. */
const DEFAULT_VIEW: Record<AggregateKind, Pick<AggregateListInput, "sort" | "dir">> = {
  brand: { sort: "revenue_365d", dir: "desc" },
  vendor: { sort: "revenue_365d", dir: "desc" },
  category: { sort: "tree", dir: "asc" },
};

// The figures as the page writes them (worked out here, not taken from the client's code).
const dash = "—";
const money = (v: number) =>
  v === 0 ? "$0" : Math.abs(v) < 10 ? formatCurrency(v) : `$${Math.round(v).toLocaleString("en-US")}`;
/** A blank figure shows the dash and, beneath it, why it is blank. */
const percent = (v: number | null | undefined, why: string) =>
  v == null ? `${dash}${why}` : `${(v * 100).toFixed(1)}%`;
const count = (v: number) => v.toLocaleString("en-US");
const oneDecimal = (v: number) => String(Math.round(v * 10) / 10);

describe("Brands, Vendors and Categories in Chromium", () => {
  let e: E2E;
  let dir: string;
  let token: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "aggregates-e2e-"));
    await generateDemoData({ out: dir, products: 120, years: 2, seed: 6 });
    e = await startE2E({ SOURCE_DIR: dir });
    token = (await e.t.login("admin")).token;
    // May see brands and categories (a landing page after sign-in), not vendors, not products.
    await e.t.createUser("brandviewer", ["access:brands", "access:categories"]);
    if (SHOTS) fs.mkdirSync(SHOTS, { recursive: true });
  });
  afterAll(async () => {
    await e?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A tRPC query over HTTP (superjson's envelope), as the admin unless told. */
  async function query<T>(procedure: string, input: unknown, tok = token): Promise<T> {
    const url = `${e.t.url}/trpc/${procedure}?input=${encodeURIComponent(JSON.stringify({ json: input }))}`;
    const res = await fetch(url, { headers: { authorization: `Bearer ${tok}` } });
    const body = (await res.json()) as { result?: { data: { json: T } }; error?: unknown };
    if (!res.ok || !body.result) throw new Error(`${procedure}: ${res.status} ${JSON.stringify(body.error)}`);
    return body.result.data.json;
  }
  const aggregates = (input: AggregateListInput) => query<AggregatePage>("metrics.aggregates", input);
  const products = (input: ProductMetricsListInput) => query<ProductMetricsPage>("metrics.products", input);

  async function open(url: string, user = "admin", width = 1280): Promise<Page> {
    const { page } = await e.newPage({ width, height: 900 });
    await e.signIn(page, user);
    await page.goto(url);
    return page;
  }

  const rows = (page: Page) => page.getByTestId("aggregate-row");
  const rowIds = (page: Page) =>
    rows(page).evaluateAll((els) => els.map((el) => Number(el.getAttribute("data-id"))));
  /** Waits until the rows shown are `ids`, in this order. */
  const expectRows = (page: Page, ids: number[]) => expect.poll(() => rowIds(page)).toEqual(ids);
  const row = (page: Page, id: number) => page.locator(`[data-testid="aggregate-row"][data-id="${id}"]`);
  const cell = (page: Page, id: number, col: string) => row(page, id).locator(`[data-col="${col}"]`);

  const shot = async (page: Page, name: string) => {
    if (!SHOTS) return;
    await page.waitForTimeout(350);
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  };

  it("says nothing was calculated yet", async () => {
    for (const kind of ["brand", "vendor", "category"] as const) {
      const page = await open(PATHS[kind]);
      await page.getByTestId("aggregates-empty").getByText(NO_METRICS).waitFor();
      expect(await page.getByTestId("top-chart").count()).toBe(0);
    }
  });

  it("is only for users with the page's permission (the page guard and the server)", async () => {
    const page = await open("/vendors", "brandviewer");
    await page.getByTestId("access-denied").waitFor();
    expect(await page.getByTestId("aggregates-page").count()).toBe(0);
    const viewer = (await e.t.login("brandviewer")).token;
    const res = await fetch(
      `${e.t.url}/trpc/metrics.aggregates?input=${encodeURIComponent(JSON.stringify({ json: { kind: "vendor" } }))}`,
      { headers: { authorization: `Bearer ${viewer}` } },
    );
    expect(res.status).toBe(403);
    // Brands open for them.
    const brands = await open("/brands", "brandviewer");
    await brands.getByTestId("aggregates-page").waitFor();
  });

  describe("after a Full Reset", () => {
    beforeAll(async () => {
      await e.t.app.services.dataOps.start("reset", null);
      await e.t.app.services.dataOps.idle();
    }, 120_000);

    /** The figures every kind shows, checked against the API's row. */
    async function expectFigures(page: Page, r: AggregateRow) {
      const text = async (col: string) => (await cell(page, r.id, col).textContent())?.trim();
      expect(
        await row(page, r.id)
          .locator('[data-testid="aggregate-link"], [data-testid="aggregate-name"]')
          .first()
          .textContent(),
      ).toBe(r.name);
      const active =
        r.active_product_count === r.product_count ? "" : `${count(r.active_product_count)} active`;
      expect(await text("product_count")).toBe(`${count(r.product_count)}${active}`);
      expect(await text("stock_value_cost")).toBe(money(r.stock_value_cost));
      expect(await text("revenue_30d")).toBe(money(r.revenue_30d));
      expect(await text("revenue_365d")).toBe(money(r.revenue_365d));
      expect(await text("units_30d")).toBe(count(r.units_30d));
      expect(await text("margin_365d")).toBe(
        percent(r.margin_365d, r.revenue_365d === 0 ? "no sales in 365 d" : "no cost prices"),
      );
      expect(await text("reorder_value")).toBe(money(r.reorder_value));
      expect(await text("overstock_value")).toBe(money(r.overstock_value));
      expect(await text("abc")).toBe(`${r.abc_counts.A}·${r.abc_counts.B}·${r.abc_counts.C}`);
      // The status bar: one segment per status with products, its counts for the tooltip.
      const bar = cell(page, r.id, "statuses").getByTestId("status-bar");
      expect(JSON.parse((await bar.getAttribute("data-counts")) ?? "{}")).toEqual(r.status_counts);
      const segments = await bar
        .locator("[data-status]")
        .evaluateAll((els) => els.map((el) => el.getAttribute("data-status")));
      expect(segments).toEqual(
        Object.entries(r.status_counts)
          .filter(([, n]) => n > 0)
          .map(([s]) => s),
      );
    }

    for (const kind of ["brand", "vendor", "category"] as const) {
      it(`${PATHS[kind].slice(1)}: lists every row with the API's figures, 50 a page, and the top-10 chart`, async () => {
        const api = await aggregates({ kind, ...DEFAULT_VIEW[kind] });
        expect(api.total).toBeGreaterThan(20);
        const page = await open(PATHS[kind]);
        await expectRows(
          page,
          api.rows.map((r) => r.id),
        );
        expect(api.rows.length).toBe(Math.min(50, api.total));
        // The first rows, a row with sales and one without (if any), figure by figure.
        const selling = api.rows.filter((r) => r.revenue_365d > 0);
        const picks = new Set([api.rows[0]!, api.rows[1]!, selling[selling.length - 1]!]);
        const idle = api.rows.find((r) => r.revenue_365d === 0);
        if (idle) picks.add(idle);
        for (const r of picks) await expectFigures(page, r);
        expect(await page.getByTestId("paging-summary").textContent()).toBe(
          `Showing 1–${Math.min(50, api.total)} of ${api.total} ${kind === "category" ? "categories" : `${kind}s`}`,
        );

        // The chart: the top 10 by revenue of the year (top-level categories only), two bars each.
        const top = await aggregates({
          kind,
          sort: "revenue_365d",
          dir: "desc",
          pageSize: 10,
          ...(kind === "category" ? { level: 1 } : {}),
        });
        const charted = top.rows.filter((r) => r.revenue_365d > 0);
        expect(charted.length).toBeGreaterThan(1);
        await page.locator('[data-testid="top-chart"] svg.recharts-surface').first().waitFor();
        await expect
          .poll(() => page.locator('[data-testid="top-chart"] .recharts-bar-rectangle').count())
          .toBe(charted.length * 2);
        const names = await page.locator('[data-testid="top-chart"] svg text > title').allTextContents();
        expect(names).toEqual(charted.map((r) => r.name));
        await shot(page, `${kind}s`);
      });
    }

    it("vendors show their measured lead time, on-time rate and fill rate", async () => {
      const api = await aggregates({ kind: "vendor", sort: "on_time_rate", dir: "asc" });
      const page = await open("/vendors?sort=on_time_rate&dir=asc");
      await expectRows(
        page,
        api.rows.map((r) => r.id),
      );
      expect(await page.getByRole("columnheader", { name: "On time" }).getAttribute("aria-sort")).toBe(
        "ascending",
      );
      const measured = api.rows.filter((r) => r.lead_time_mean != null);
      expect(measured.length).toBeGreaterThan(0);
      for (const r of [measured[0]!, ...api.rows.filter((x) => x.lead_time_mean == null).slice(0, 1)]) {
        const lead = (await cell(page, r.id, "lead_time").textContent())?.trim();
        if (r.lead_time_mean == null) expect(lead).toBe(`${dash}no received orders`);
        else {
          const std = r.lead_time_std == null ? "" : ` ± ${oneDecimal(r.lead_time_std)}`;
          const samples = `${r.lead_time_samples} ${r.lead_time_samples === 1 ? "sample" : "samples"}`;
          expect(lead).toBe(`${oneDecimal(r.lead_time_mean)}${std} d${samples}`);
        }
        expect((await cell(page, r.id, "on_time_rate").textContent())?.trim()).toBe(
          percent(
            r.on_time_rate,
            (r.lead_time_samples ?? 0) === 0 ? "no received orders" : "orders have no expected date",
          ),
        );
        expect((await cell(page, r.id, "fill_rate").textContent())?.trim()).toBe(
          percent(r.fill_rate, "no received orders in 365 d"),
        );
      }
    });

    it("sorts by a clicked column head, both ways, and keeps the view in the URL", async () => {
      const page = await open("/brands");
      await rows(page).first().waitFor();
      const head = page.getByRole("columnheader", { name: "Margin" });
      await head.getByRole("button").click();
      await page.waitForURL(
        (u) => u.searchParams.get("sort") === "margin_365d" && u.searchParams.get("dir") === "desc",
      );
      const desc = await aggregates({ kind: "brand", sort: "margin_365d", dir: "desc" });
      await expectRows(
        page,
        desc.rows.map((r) => r.id),
      );
      expect(await head.getAttribute("aria-sort")).toBe("descending");
      await head.getByRole("button").click();
      await page.waitForURL((u) => u.searchParams.get("dir") === "asc");
      const asc = await aggregates({ kind: "brand", sort: "margin_365d", dir: "asc" });
      await expectRows(
        page,
        asc.rows.map((r) => r.id),
      );
      expect(asc.rows[0]!.id).not.toBe(desc.rows[0]!.id);

      // Page 2, then a fresh page on the same URL shows the same rows.
      await page.getByRole("button", { name: "Page 2" }).click();
      await page.waitForURL((u) => u.searchParams.get("page") === "2");
      const second = await aggregates({ kind: "brand", sort: "margin_365d", dir: "asc", page: 2 });
      await expectRows(
        page,
        second.rows.map((r) => r.id),
      );
      const again = await open(new URL(page.url()).pathname + new URL(page.url()).search);
      await expectRows(
        again,
        second.rows.map((r) => r.id),
      );
    });

    it("searches by name (debounced into the URL) and says so when nothing matches", async () => {
      const all = await aggregates({ kind: "vendor", pageSize: 200 });
      // A word of one vendor's name that not every vendor has.
      const word = all.rows
        .flatMap((r) => r.name.split(/[\s,]+/))
        .find((w) => w.length > 3 && all.rows.filter((r) => r.name.includes(w)).length < all.total / 2)!;
      const page = await open("/vendors");
      await rows(page).first().waitFor();
      await page.getByRole("searchbox", { name: "Search vendors" }).fill(word);
      await page.waitForURL((u) => u.searchParams.get("q") === word);
      const found = await aggregates({ kind: "vendor", search: word, ...DEFAULT_VIEW.vendor });
      expect(found.total).toBeGreaterThan(0);
      expect(found.total).toBeLessThan(all.total);
      await expectRows(
        page,
        found.rows.map((r) => r.id),
      );
      await page.getByRole("searchbox", { name: "Search vendors" }).fill("zzz-no-such-vendor");
      await page
        .getByTestId("aggregates-no-match")
        .getByText("No vendors match “zzz-no-such-vendor”.")
        .waitFor();
      await page.getByRole("button", { name: "Clear search" }).click();
      await page.waitForURL((u) => !u.searchParams.has("q"));
      await expect.poll(() => rows(page).count()).toBe(Math.min(50, all.total));
    });

    it("categories: the tree, level-1 names bold, each subcategory indented under its parent's name", async () => {
      const api = await aggregates({ kind: "category", sort: "tree", dir: "asc", pageSize: 200 });
      const byId = new Map(api.rows.map((r) => [r.id, r]));
      // The API's tree order: every parent right before its first child.
      for (const [i, r] of api.rows.entries())
        if (r.parent_id != null && byId.has(r.parent_id))
          expect(api.rows.findIndex((x) => x.id === r.parent_id)).toBeLessThan(i);
      const page = await open("/categories");
      await expectRows(
        page,
        api.rows.slice(0, 50).map((r) => r.id),
      );
      const shown = api.rows.slice(0, 50);
      const top = shown.find((r) => r.level === 1)!;
      const child = shown.find((r) => r.level === 2)!;
      const grandchild = shown.find((r) => (r.level ?? 0) >= 3);
      const weight = (id: number) =>
        row(page, id)
          .getByTestId("aggregate-link")
          .evaluate((el) => Number(getComputedStyle(el).fontWeight));
      expect(await weight(top.id)).toBeGreaterThanOrEqual(600);
      expect(await weight(child.id)).toBeLessThan(600);
      expect(await row(page, top.id).getByTestId("aggregate-parent").count()).toBe(0);
      expect(await row(page, child.id).getByTestId("aggregate-parent").textContent()).toBe(
        `in ${child.parent_name}`,
      );
      expect(child.parent_name).toBe(byId.get(child.parent_id!)?.name);
      const indent = (id: number) =>
        row(page, id)
          .getByTestId("aggregate-link")
          .evaluate((el) => el.getBoundingClientRect().left);
      expect(await indent(child.id)).toBeGreaterThan(await indent(top.id));
      if (grandchild) expect(await indent(grandchild.id)).toBeGreaterThan(await indent(child.id));
      // Rolled-up figures: the page says so; a category's name opens its products, subtree included.
      await page.getByText(/rolled up the category tree/).waitFor();
      await expectFigures(page, top);
      await row(page, top.id).getByTestId("aggregate-link").click();
      await page.waitForURL(
        (u) => u.pathname === "/products" && u.searchParams.get("category") === String(top.id),
      );
    });

    it("a vendor's row opens the Products page narrowed to that vendor, with a chip to remove it", async () => {
      const api = await aggregates({ kind: "vendor", ...DEFAULT_VIEW.vendor });
      const vendor = api.rows[1]!;
      const page = await open("/vendors");
      await rows(page).first().waitFor();
      const link = row(page, vendor.id).getByTestId("aggregate-link");
      expect(await link.getAttribute("href")).toBe(`/products?vendor=${vendor.id}`);
      await link.click();
      await page.waitForURL(
        (u) => u.pathname === "/products" && u.searchParams.get("vendor") === String(vendor.id),
      );
      const list = await products({ vendorId: vendor.id });
      expect(list.total).toBe(vendor.product_count);
      expect(list.vendor_name).toBe(vendor.name);
      await expect
        .poll(() =>
          page
            .getByTestId("products-row")
            .evaluateAll((els) => els.map((el) => Number(el.getAttribute("data-pid")))),
        )
        .toEqual(list.rows.map((r) => r.pid));
      expect(list.rows.every((r) => r.vendor === vendor.name)).toBe(true);
      const chip = page.locator('[data-testid="entity-filter"][data-kind="vendor"]');
      await chip.getByText(vendor.name, { exact: true }).waitFor();
      expect(await page.getByTestId("paging-summary").textContent()).toContain(
        `of ${vendor.product_count} product`,
      );
      await shot(page, "products-by-vendor");

      await chip.getByRole("button", { name: "Remove the vendor filter" }).click();
      await page.waitForURL((u) => u.pathname === "/products" && !u.searchParams.has("vendor"));
      const everything = await products({});
      await expect
        .poll(() => page.getByTestId("paging-summary").textContent())
        .toContain(`of ${everything.total} products`);
      expect(await chip.count()).toBe(0);
    });

    it("a brand's link narrows the Products page to it; without access:products the name is no link", async () => {
      const api = await aggregates({ kind: "brand", ...DEFAULT_VIEW.brand });
      const brand = api.rows[0]!;
      const page = await open(`/products?brand=${brand.id}`);
      await page
        .locator('[data-testid="entity-filter"][data-kind="brand"]')
        .getByText(brand.name, { exact: true })
        .waitFor();
      expect(await page.getByTestId("paging-summary").textContent()).toContain(
        `of ${brand.product_count} product`,
      );

      // A bar of the chart opens that brand's products too.
      const top = await aggregates({ kind: "brand", sort: "revenue_365d", dir: "desc", pageSize: 10 });
      const brands = await open("/brands");
      // (the gross-profit bar, drawn over the revenue bar)
      await brands
        .locator('[data-testid="top-chart"] .recharts-bar')
        .nth(1)
        .locator(".recharts-bar-rectangle")
        .first()
        .click();
      await brands.waitForURL(
        (u) => u.pathname === "/products" && u.searchParams.get("brand") === String(top.rows[0]!.id),
      );

      const viewer = await open("/brands", "brandviewer");
      await expectRows(
        viewer,
        api.rows.map((r) => r.id),
      );
      expect(await viewer.getByTestId("aggregate-link").count()).toBe(0);
      expect(await row(viewer, brand.id).getByTestId("aggregate-name").textContent()).toBe(brand.name);
    });

    it("shows the status counts of a row in the bar's tooltip", async () => {
      const api = await aggregates({ kind: "brand", ...DEFAULT_VIEW.brand });
      const r = api.rows[0]!;
      const page = await open("/brands");
      await rows(page).first().waitFor();
      await cell(page, r.id, "statuses").getByTestId("status-bar").hover();
      const tip = page.getByTestId("status-bar-tooltip");
      await tip.waitFor();
      for (const [status, n] of Object.entries(r.status_counts)) {
        const label = status[0]!.toUpperCase() + status.slice(1);
        // (Radix repeats a tooltip's content once for screen readers.)
        expect(
          await tip.getByRole("row", { name: new RegExp(`^${label} ${n}\\b`) }).count(),
        ).toBeGreaterThanOrEqual(1);
      }
    });

    it("shows cards with the key figures on a phone", async () => {
      const api = await aggregates({ kind: "vendor", ...DEFAULT_VIEW.vendor });
      const page = await open("/vendors", "admin", 390);
      await page.getByTestId("aggregates-cards").waitFor();
      await expectRows(
        page,
        api.rows.map((r) => r.id),
      );
      expect(await page.getByTestId("aggregates-table").count()).toBe(0);
      await page.locator('[data-testid="top-chart"] svg.recharts-surface').first().waitFor();
      // No sideways scrolling of the page.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await shot(page, "vendors-phone");
    });
  });
});
