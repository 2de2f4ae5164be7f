import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashToken } from "../../server/modules/auth/auth.service.ts";
import { SESSION_COOKIE } from "../../shared/auth.ts";
import { ADMIN, startTestApp, type TestApp } from "../helpers/app.ts";
import { testBackend } from "../helpers/db.ts";

describe(`auth and sessions (${testBackend})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { LOGIN_MAX_FAILURES_PER_USER: "3", LOGIN_MAX_PER_IP: "1000" } });
    await t.createUser("Clerk", ["access:products"]);
  });
  afterAll(() => t.close());

  const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({ method: "POST", url, payload: payload as object, headers });

  it("POST /auth-inv/login answers { token, user } and sets an httpOnly SameSite session cookie", async () => {
    const res = await post("/auth-inv/login", { username: ADMIN.username, password: ADMIN.password });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(["token", "user"]);
    expect(body.token).toMatch(/^[A-Za-z0-9_-]{43}$/); // 256 bits, base64url
    expect(body.user).toEqual({
      id: expect.any(Number),
      username: "admin",
      email: null,
      is_admin: true,
      permissions: [],
      rocket_chat_user_id: null,
    });
    const cookie = String(res.headers["set-cookie"]);
    expect(cookie).toContain(`${SESSION_COOKIE}=${body.token}`);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    // Only the hash is stored.
    const stored = await t.tdb.db.prisma.session.findMany({ select: { tokenHash: true } });
    expect(stored.map((s) => s.tokenHash)).toContain(hashToken(body.token));
    expect(JSON.stringify(stored)).not.toContain(body.token);
  });

  it("logs in case-insensitively and updates last_login", async () => {
    const before = await t.tdb.db.prisma.user.findFirstOrThrow({ where: { usernameKey: "clerk" } });
    const res = await post("/auth-inv/login", { username: "cLERK", password: "password1" });
    expect(res.statusCode).toBe(200);
    expect(res.json().user).toMatchObject({
      username: "Clerk",
      is_admin: false,
      permissions: ["access:products"],
    });
    const after = await t.tdb.db.prisma.user.findFirstOrThrow({ where: { usernameKey: "clerk" } });
    expect(after.lastLogin).not.toBeNull();
    expect(after.lastLogin?.getTime()).not.toBe(before.lastLogin?.getTime());
  });

  it("GET /auth-inv/me answers the user for a bearer token and for the cookie alone", async () => {
    const { token, cookie } = await t.login("Clerk");
    const byBearer = await t.app.inject({
      url: "/auth-inv/me",
      headers: { authorization: `Bearer ${token}` },
    });
    expect(byBearer.statusCode).toBe(200);
    expect(byBearer.json()).toMatchObject({ username: "Clerk", permissions: ["access:products"] });
    const byCookie = await t.app.inject({ url: "/auth-inv/me", headers: { cookie } });
    expect(byCookie.json()).toMatchObject({ username: "Clerk" });
    const viaTrpc = await t.app.inject({
      url: "/trpc/auth.me",
      headers: { authorization: `Bearer ${token}` },
    });
    expect(viaTrpc.json().result.data.json).toMatchObject({ username: "Clerk" });
  });

  it("wrong password and unknown user answer the same 401 with an error field", async () => {
    const wrong = await post("/auth-inv/login", { username: "admin", password: "nope-nope" });
    const unknown = await post("/auth-inv/login", { username: "nobody", password: "nope-nope" });
    for (const res of [wrong, unknown]) {
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({
        error: "Invalid username or password",
        message: "Invalid username or password",
      });
    }
  });

  it("a missing field answers 400 naming it", async () => {
    const res = await post("/auth-inv/login", { username: "admin" });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/^password: /);
  });

  it("without a session /auth-inv/me answers 401, and a garbage token too", async () => {
    expect((await t.app.inject({ url: "/auth-inv/me" })).statusCode).toBe(401);
    const res = await t.app.inject({ url: "/auth-inv/me", headers: { authorization: "Bearer not-a-token" } });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: "Authentication required", message: "Authentication required" });
  });

  it("logout revokes the token", async () => {
    const { token } = await t.login("Clerk");
    const headers = { authorization: `Bearer ${token}` };
    const out = await t.app.inject({ method: "POST", url: "/auth-inv/logout", headers });
    expect(out.statusCode).toBe(200);
    expect(String(out.headers["set-cookie"])).toMatch(new RegExp(`${SESSION_COOKIE}=;`));
    expect((await t.app.inject({ url: "/auth-inv/me", headers })).statusCode).toBe(401);
  });

  it("inactive users cannot log in, and deactivating a user ends their sessions at once", async () => {
    await t.createUser("Temp", ["access:products"]);
    const { token } = await t.login("Temp");
    await t.tdb.db.prisma.user.update({ where: { usernameKey: "temp" }, data: { isActive: false } });
    const me = await t.app.inject({ url: "/auth-inv/me", headers: { authorization: `Bearer ${token}` } });
    expect(me.statusCode).toBe(401);
    const res = await post("/auth-inv/login", { username: "Temp", password: "password1" });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toMatch(/inactive/);
  });

  it("permission changes take effect on the next request", async () => {
    const id = await t.createUser("Mover", ["access:products"]);
    const { token } = await t.login("Mover");
    const perm = await t.tdb.db.prisma.permission.findUniqueOrThrow({ where: { code: "access:vendors" } });
    await t.tdb.db.prisma.userPermission.create({ data: { userId: id, permissionId: perm.id } });
    const me = await t.app.inject({ url: "/auth-inv/me", headers: { authorization: `Bearer ${token}` } });
    expect(me.json().permissions).toEqual(["access:products", "access:vendors"]);
  });

  it("an expired session is refused", async () => {
    const { token } = await t.login("Clerk");
    await t.tdb.db.prisma.session.update({
      where: { tokenHash: hashToken(token) },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const me = await t.app.inject({ url: "/auth-inv/me", headers: { authorization: `Bearer ${token}` } });
    expect(me.statusCode).toBe(401);
  });

  it("refuses cookie-authenticated writes from a foreign origin, accepts them from its own", async () => {
    const { cookie } = await t.login("Clerk");
    const foreign = await t.app.inject({
      method: "POST",
      url: "/auth-inv/logout",
      headers: { cookie, origin: "https://evil.example", host: "localhost:3000" },
    });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json().error).toMatch(/Cross-site request refused/);
    const own = await t.app.inject({
      method: "POST",
      url: "/auth-inv/logout",
      headers: { cookie, origin: "http://localhost:3000", host: "localhost:3000" },
    });
    expect(own.statusCode).toBe(200);
  });

  it("refuses a cookie-authenticated write that names no origin, or the null origin", async () => {
    for (const headers of [{}, { origin: "null" }, { referer: "https://evil.example/page" }]) {
      const { cookie } = await t.login("Clerk");
      const res = await t.app.inject({
        method: "POST",
        url: "/auth-inv/logout",
        headers: { cookie, ...headers },
      });
      expect(res.statusCode, JSON.stringify(headers)).toBe(403);
    }
    // A script with its bearer token sends no Origin and is fine.
    const { token } = await t.login("Clerk");
    const script = await t.app.inject({
      method: "POST",
      url: "/auth-inv/logout",
      headers: { authorization: `Bearer ${token}` },
    });
    expect(script.statusCode).toBe(200);
  });

  it("slides the cookie forward with the session", async () => {
    const { token, cookie } = await t.login("Clerk");
    await t.tdb.db.prisma.session.update({
      where: { tokenHash: hashToken(token) },
      data: { lastSeenAt: new Date(Date.now() - 3_600_000), expiresAt: new Date(Date.now() + 86_400_000) },
    });
    const res = await t.app.inject({ url: "/auth-inv/me", headers: { cookie } });
    expect(res.statusCode).toBe(200);
    const expires = /Expires=([^;]+)/i.exec(String(res.headers["set-cookie"]))?.[1];
    expect(new Date(expires!).getTime()).toBeGreaterThan(Date.now() + 6 * 86_400_000);
  });

  it("rate-limits repeated failures for a username with 429 and a clear message", async () => {
    await t.createUser("Target", []);
    const attempt = () =>
      post("/auth-inv/login", { username: "target", password: "wrong-one" }, { "x-test": "1" });
    for (let i = 0; i < 3; i++) expect((await attempt()).statusCode).toBe(401);
    const limited = await attempt();
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error).toMatch(
      /^Too many login attempts\. Please try again in \d+ (seconds|minutes)\.$/,
    );
    expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
    // Even the right password waits until the window passes.
    const right = await post("/auth-inv/login", { username: "target", password: "password1" });
    expect(right.statusCode).toBe(429);
    // Other users are not affected.
    expect((await post("/auth-inv/login", { username: "Clerk", password: "password1" })).statusCode).toBe(
      200,
    );
  });

  it("limits guessing one username from many addresses", async () => {
    await t.createUser("Spread", []);
    const from = (addr: string, password: string) =>
      t.app.inject({
        method: "POST",
        url: "/auth-inv/login",
        payload: { username: "spread", password },
        remoteAddress: addr,
      });
    // 3 failures per address are allowed; 5 × 3 for the username from anywhere.
    for (let i = 1; i <= 15; i++) expect((await from(`198.51.100.${i}`, "wrong-one")).statusCode).toBe(401);
    expect((await from("198.51.100.99", "wrong-one")).statusCode).toBe(429);
    // Addresses of one IPv6 /64 count as one client.
    await t.createUser("Six", []);
    for (let i = 1; i <= 3; i++) {
      const res = await t.app.inject({
        method: "POST",
        url: "/auth-inv/login",
        payload: { username: "six", password: "wrong-one" },
        remoteAddress: `2001:db8:1:2::${i}`,
      });
      expect(res.statusCode).toBe(401);
    }
    const sameNet = await t.app.inject({
      method: "POST",
      url: "/auth-inv/login",
      payload: { username: "six", password: "wrong-one" },
      remoteAddress: "2001:db8:1:2::abcd",
    });
    expect(sameNet.statusCode).toBe(429);
  });

  it("the tRPC auth router logs in and answers the same user", async () => {
    const res = await t.app.inject({
      method: "POST",
      url: "/trpc/auth.login",
      payload: { json: { username: "Clerk", password: "password1" } },
    });
    expect(res.statusCode).toBe(200);
    const data = res.json().result.data.json;
    expect(data.user).toMatchObject({ username: "Clerk" });
    const bad = await t.app.inject({
      method: "POST",
      url: "/trpc/auth.login",
      payload: { json: { username: "Clerk", password: "bad-password" } },
    });
    expect(bad.statusCode).toBe(401);
    expect(bad.json().error.json.message).toBe("Invalid username or password");
  });
});

describe("per-IP login limit", () => {
  it("answers 429 once an address has used up its attempts", async () => {
    const t = await startTestApp({ env: { LOGIN_MAX_PER_IP: "2" } });
    try {
      const attempt = () =>
        t.app.inject({ method: "POST", url: "/auth-inv/login", payload: { username: "x", password: "y" } });
      expect((await attempt()).statusCode).toBe(401);
      expect((await attempt()).statusCode).toBe(401);
      expect((await attempt()).statusCode).toBe(429);
    } finally {
      await t.close();
    }
  });
});
