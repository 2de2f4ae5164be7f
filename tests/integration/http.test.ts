import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { testBackend } from "../helpers/db.ts";

describe(`HTTP surface (${testBackend})`, () => {
  let t: TestApp;
  let dist: string;
  beforeAll(async () => {
    dist = fs.mkdtempSync(path.join(os.tmpdir(), "client-dist-"));
    fs.writeFileSync(
      path.join(dist, "index.html"),
      "<!doctype html><title>Back Office</title><div id=root></div>",
    );
    fs.mkdirSync(path.join(dist, "assets"));
    fs.writeFileSync(path.join(dist, "assets", "app-abc123.js"), "console.log(1)");
    t = await startTestApp({ env: { CLIENT_DIST: dist } });
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dist, { recursive: true });
  });

  it("GET /healthz and /readyz answer 200 JSON", async () => {
    const health = await fetch(`${t.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });
    const ready = await fetch(`${t.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: "ok", database: testBackend });
  });

  it("serves the client with SPA fallback for client routes", async () => {
    for (const p of ["/", "/settings?tab=users", "/purchase-orders", "/some/unknown/page"]) {
      const res = await fetch(`${t.url}${p}`);
      expect(res.status, p).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/text\/html/);
      expect(await res.text()).toContain("<div id=root>");
    }
    const asset = await fetch(`${t.url}/assets/app-abc123.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("cache-control")).toContain("immutable");
  });

  it("unknown paths under every API prefix answer JSON 404, never index.html", async () => {
    for (const p of [
      "/api/nope",
      "/auth-inv/nope",
      "/chat-api/nope",
      "/csv/nope",
      "/config/nope",
      "/trpc/nope.nope",
      "/api",
    ]) {
      const res = await fetch(`${t.url}${p}`);
      expect(res.status, p).toBe(404);
      expect(res.headers.get("content-type"), p).toMatch(/application\/json/);
      const body = await res.json();
      expect(typeof (body.error ?? body.error?.json?.message), p).not.toBe("undefined");
    }
    const post = await fetch(`${t.url}/api/nope`, { method: "POST" });
    expect(post.status).toBe(404);
    expect(await post.json()).toEqual({
      error: "Not found: POST /api/nope",
      message: "Not found: POST /api/nope",
    });
  });

  it("sends security headers", async () => {
    const res = await fetch(`${t.url}/healthz`);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(res.headers.get("x-frame-options")).toBe("SAMEORIGIN");
  });

  it("malformed JSON answers 400 in the { error, message } shape", async () => {
    const res = await fetch(`${t.url}/auth-inv/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
    });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error).toBe(body.message);
    expect(body.error).toMatch(/JSON/i);
  });
});
