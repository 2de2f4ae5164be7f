// Browser tests: the real server (buildApp) serving the built client from dist/client on a free
// port, over this file's own database, driven by Debian's Chromium through playwright-core.
import fs from "node:fs";
import path from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { startTestApp, type TestApp } from "../helpers/app.ts";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export interface E2E {
  t: TestApp;
  browser: Browser;
  /** A fresh browser context (its own storage and cookies) and page. */
  newPage(opts?: {
    width?: number;
    height?: number;
    /** The browser's time zone (the machine's when not given). */
    timezoneId?: string;
  }): Promise<{ context: BrowserContext; page: Page }>;
  /** Signs in through the login form and waits until the app left /login. */
  signIn(page: Page, username: string, password?: string): Promise<void>;
  close(): Promise<void>;
}

/** `env` adds to (or overrides) the app's environment, e.g. SOURCE_DIR for the data pipeline. */
export async function startE2E(env: Record<string, string> = {}): Promise<E2E> {
  // E2E_CLIENT_DIST: another build of the client (e.g. `vite build --outDir …`), so that work on two
  // screens at once need not share dist/.
  const dist = path.resolve(process.env.E2E_CLIENT_DIST ?? "dist/client");
  if (!fs.existsSync(path.join(dist, "index.html"))) {
    throw new Error(`${dist} is missing: run \`npm run build\` before \`npm run test:e2e\``);
  }
  const t = await startTestApp({ env: { CLIENT_DIST: dist, ...env } });
  // playwright gives every launch a fresh temporary profile (--user-data-dir) of its own.
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const contexts: BrowserContext[] = [];
  return {
    t,
    browser,
    async newPage({
      width = 1280,
      height = 800,
      timezoneId,
    }: {
      width?: number;
      height?: number;
      timezoneId?: string;
    } = {}) {
      const context = await browser.newContext({
        viewport: { width, height },
        baseURL: t.url,
        ...(timezoneId ? { timezoneId } : {}),
      });
      contexts.push(context);
      const page = await context.newPage();
      page.setDefaultTimeout(10_000);
      return { context, page };
    },
    async signIn(page, username, password) {
      const pw = password ?? (username === "admin" ? "admin-secret" : "password1");
      if (!page.url().includes("/login")) await page.goto("/login");
      await page.getByLabel("Username").fill(username);
      await page.getByLabel("Password").fill(pw);
      await page.getByRole("button", { name: "Log In" }).click();
      await page.waitForURL((u) => !u.pathname.startsWith("/login"));
    },
    async close() {
      for (const c of contexts) await c.close().catch(() => {});
      await browser.close().catch(() => {});
      await t.close();
    },
  };
}
