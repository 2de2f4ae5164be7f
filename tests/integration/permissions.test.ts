// Every tRPC procedure (read from the app router) and every REST route (read from Fastify's own
// onRoute hook) refuses callers without a session (401) and callers without its permission (403).
// Procedures and routes added later fall under this test without anyone listing them.
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Context } from "../../server/trpc/context.ts";
import { appRouter } from "../../server/trpc/router.ts";
import { createCallerFactory } from "../../server/trpc/trpc.ts";
import { ALL_PERMISSION_CODES, hasPermission, type Requirement } from "../../shared/permissions.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { testBackend } from "../helpers/db.ts";

type ProcedureDef = {
  _def: { type: "query" | "mutation" | "subscription"; meta?: { auth?: Requirement | "public" } };
};

const procedures = Object.entries(appRouter._def.procedures as unknown as Record<string, ProcedureDef>).map(
  ([path, p]) => ({
    path,
    type: p._def.type,
    auth: p._def.meta?.auth,
  }),
);

async function callProcedure(ctx: Context, path: string, type: string): Promise<unknown> {
  const caller = createCallerFactory(appRouter)(ctx) as unknown as Record<string, unknown>;
  const fn = path.split(".").reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], caller) as (
    input?: unknown,
  ) => Promise<unknown>;
  const result = await fn(undefined);
  // A subscription's guard runs when iteration starts.
  if (type === "subscription" && result && typeof result === "object" && Symbol.asyncIterator in result) {
    const it = (result as AsyncIterable<unknown>)[Symbol.asyncIterator]();
    await it.next();
    await it.return?.();
  }
  return result;
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "OK";
  } catch (err) {
    return err instanceof TRPCError ? err.code : `not a TRPCError: ${String(err)}`;
  }
}

describe(`every procedure and route enforces its permission (${testBackend})`, () => {
  let t: TestApp;
  let noPermsToken: string;
  let ctxBase: Omit<Context, "user" | "token">;

  beforeAll(async () => {
    t = await startTestApp();
    await t.createUser("nobody", []);
    noPermsToken = (await t.login("nobody")).token;
    ctxBase = { ...t.app.services, ip: "127.0.0.1", userAgent: "test" };
  });
  afterAll(() => t.close());

  it("finds the procedures and routes to check", () => {
    expect(procedures.map((p) => p.path)).toEqual(
      expect.arrayContaining(["auth.login", "auth.me", "auth.logout"]),
    );
    expect(t.app.routeCatalogue.map((r) => `${r.method} ${r.url}`)).toEqual(
      expect.arrayContaining(["POST /auth-inv/login", "GET /auth-inv/me", "GET /healthz"]),
    );
  });

  it("every procedure declares public, authenticated, or permission codes from the catalogue", () => {
    for (const p of procedures) {
      expect(p.auth, p.path).toBeDefined();
      if (p.auth === "public" || p.auth === "authenticated") continue;
      const codes = typeof p.auth === "string" ? [p.auth] : p.auth!;
      for (const c of codes) expect(ALL_PERMISSION_CODES, `${p.path} names ${c}`).toContain(c);
    }
  });

  it("every route declares its permission (tRPC's own routes defer to the procedures)", () => {
    const routes = t.app.routeCatalogue.filter((r) => !r.url.startsWith("/trpc"));
    expect(routes.length).toBeGreaterThan(0);
    for (const r of routes) expect(r.auth, `${r.method} ${r.url}`).toBeDefined();
  });

  it("refuses to register a route that declares no permission", async () => {
    const { default: Fastify } = await import("fastify");
    const { default: cookie } = await import("@fastify/cookie");
    const { default: authHooks } = await import("../../server/http/auth-hooks.ts");
    const app = Fastify();
    await app.register(cookie);
    await app.register(authHooks, t.app.services);
    await expect(
      app.register(async (scope) => {
        scope.get("/reports/new", async () => "x");
      }),
    ).rejects.toThrow("Route GET /reports/new does not declare config.auth");
    await app.close();
  });

  it("procedures: no session → UNAUTHORIZED, no permission → FORBIDDEN", async () => {
    const nobody = (
      await t.app.inject({ url: "/auth-inv/me", headers: { authorization: `Bearer ${noPermsToken}` } })
    ).json();
    let forbiddenChecked = 0;
    for (const p of procedures.filter((p) => p.auth !== "public")) {
      const anon = await codeOf(callProcedure({ ...ctxBase, user: null, token: null }, p.path, p.type));
      expect(anon, `${p.path} without a session`).toBe("UNAUTHORIZED");
      if (p.auth === "authenticated") continue;
      const user = { ...nobody, sessionId: 0 };
      expect(hasPermission(user, p.auth as Requirement)).toBe(false);
      const denied = await codeOf(callProcedure({ ...ctxBase, user, token: noPermsToken }, p.path, p.type));
      expect(denied, `${p.path} without its permission`).toBe("FORBIDDEN");
      forbiddenChecked++;
    }
    expect(forbiddenChecked).toBeGreaterThan(0);
  });

  it("REST routes: no session → 401, no permission → 403, with the { error, message } body", async () => {
    const routes = t.app.routeCatalogue.filter(
      (r) => r.auth !== undefined && r.auth !== "public" && r.method !== "HEAD",
    );
    let forbiddenChecked = 0;
    for (const r of routes) {
      const url = r.url.replace(/:[A-Za-z_]+/g, "1").replace(/\*$/, "x");
      const anon = await t.app.inject({ method: r.method as "GET", url });
      expect(anon.statusCode, `${r.method} ${r.url} without a session`).toBe(401);
      expect(anon.json()).toEqual({ error: expect.any(String), message: expect.any(String) });
      if (r.auth === "authenticated") continue;
      const denied = await t.app.inject({
        method: r.method as "GET",
        url,
        headers: { authorization: `Bearer ${noPermsToken}` },
      });
      expect(denied.statusCode, `${r.method} ${r.url} without its permission`).toBe(403);
      expect(denied.json().error).toEqual(expect.any(String));
      forbiddenChecked++;
    }
    expect(forbiddenChecked).toBeGreaterThan(0);
  });

  it("a user holding the code passes, and admins pass everything", async () => {
    await t.createUser("usermgr", ["settings:user_management"]);
    const { token } = await t.login("usermgr");
    const res = await t.app.inject({
      url: "/auth-inv/permissions/categories",
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.statusCode).toBe(200);
    const categories = res.json() as {
      category: string;
      permissions: { id: number; code: string; name: string }[];
    }[];
    expect(categories.map((c) => c.category)).toEqual([
      "Pages",
      "Settings",
      "Products",
      "Purchasing",
      "Forecasting",
      "Promotions",
    ]);
    expect(categories[0]!.permissions[0]).toEqual({
      id: expect.any(Number),
      code: "access:dashboard",
      name: "Dashboard Page",
      description: "Open the Dashboard page",
    });
    const admin = await t.login("admin");
    const viaTrpc = await t.app.inject({
      url: "/trpc/users.permissionCategories",
      headers: { authorization: `Bearer ${admin.token}` },
    });
    expect(viaTrpc.statusCode).toBe(200);
    expect(viaTrpc.json().result.data.json).toEqual(categories);
  });

  it("tRPC over HTTP answers 401 without a session", async () => {
    const res = await t.app.inject({ url: "/trpc/auth.me" });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.json.data.code).toBe("UNAUTHORIZED");
  });
});

describe("docs/permissions.md", () => {
  it("lists every code, procedure and route as the server declares them", async () => {
    const fs = await import("node:fs");
    const { renderPermissionsDoc } = await import("../../scripts/lib/permissions-doc.ts");
    const t = await startTestApp({ listen: false });
    try {
      const expected = renderPermissionsDoc(t.app);
      const actual = fs.readFileSync("docs/permissions.md", "utf8");
      expect(actual, "docs/permissions.md is out of date: run npm run docs:permissions").toBe(expected);
    } finally {
      await t.close();
    }
  });
});
