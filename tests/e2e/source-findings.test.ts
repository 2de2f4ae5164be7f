// A run over bad source data shows every problem on Data Management (issue 13 point 6): the failed
// run's row expands to its findings, grouped by file and kind, and the CSV downloads.
import fs from "node:fs";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { copyFixture, editFile } from "../helpers/pipeline.ts";
import { type E2E, startE2E } from "./harness.ts";

describe("findings of a bad source on Data Management in Chromium", () => {
  let e: E2E;
  let dir: string;

  beforeAll(async () => {
    dir = copyFixture();
    editFile(dir, "products.csv", (t) =>
      t.replace("1002,Ink Pad Black,IP-1,,2,11,Inks,,5.00", '1002,Ink Pad Black,IP-1,,2,11,Inks,,"12,5"'),
    );
    editFile(dir, "order_lines.csv", (t) =>
      t.replace("4,1.50,0,cancelled", "4,1.50,0,refunded").replace("8,SO-7,1003,", "8,SO-7,9999,"),
    );
    e = await startE2E({ SOURCE_DIR: dir, DEMO_DATA: "0" });
    const { token } = await e.t.login("admin");
    const auth = { authorization: `Bearer ${token}` };
    expect((await fetch(`${e.t.url}/api/csv/full-update`, { method: "POST", headers: auth })).status).toBe(
      200,
    );
    const until = Date.now() + 60_000;
    while (Date.now() < until) {
      const status = (await (await fetch(`${e.t.url}/csv/status`, { headers: auth })).json()) as {
        active: boolean;
      };
      if (!status.active) break;
      await new Promise((r) => setTimeout(r, 200));
    }
  }, 120_000);
  afterAll(async () => {
    await e?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function openFailedRun(width: number): Promise<Page> {
    const { page } = await e.newPage({ width, height: 1000 });
    await e.signIn(page, "admin");
    await page.goto("/settings?tab=data");
    const row = page.getByTestId("import-history-row").first();
    await row.waitFor();
    expect(await row.getAttribute("data-status")).toBe("failed");
    await row.getByTestId("import-history-toggle").click();
    await page.getByTestId("run-findings").waitFor();
    return page;
  }

  it("lists the three problems grouped by file and kind, each group opening to its lines", async () => {
    const page = await openFailedRun(1440);
    const findings = page.getByTestId("run-findings");
    await findings.getByText("Problems in the source data: 3").waitFor();
    const groups = findings.getByTestId("run-findings-group");
    expect(await groups.count()).toBe(3);
    expect(
      await groups.evaluateAll((els) => els.map((el) => `${el.dataset.file}/${el.dataset.kind}`)),
    ).toEqual(["products.csv/type", "order_lines.csv/enumeration", "order_lines.csv/reference"]);
    // Closed until opened.
    const line = 'products.csv line 3, column price: "12,5" is not a decimal number';
    expect(await findings.getByText(line).isVisible()).toBe(false);
    await groups.first().locator("summary").click();
    await findings.getByText(line).waitFor();
    await groups.nth(2).locator("summary").click();
    await findings
      .getByText("order_lines.csv line 9, column pid: 9999 does not match any pid in products.csv")
      .waitFor();
  });

  it("downloads the findings as CSV", async () => {
    const page = await openFailedRun(1440);
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByTestId("run-findings-csv").click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^import-\d+-findings\.csv$/);
    const text = fs.readFileSync((await download.path())!, "utf8").replace(/^\uFEFF/, "");
    const lines = text.trimEnd().split("\r\n");
    expect(lines[0]).toBe("file,kind,line,column,value,message");
    expect(lines).toHaveLength(4);
    expect(lines).toContain(
      'order_lines.csv,enumeration,7,status,refunded,"order_lines.csv line 7, column status: ""refunded"" is not one of completed, cancelled, returned"',
    );
  });

  it("reads at 390 px: the findings wrap inside the page", async () => {
    const page = await openFailedRun(390);
    await page.getByTestId("run-findings-group").first().locator("summary").click();
    await page
      .getByTestId("run-finding")
      .getByText('products.csv line 3, column price: "12,5" is not a decimal number')
      .waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
  });
});
