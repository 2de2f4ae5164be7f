// Sessions end everywhere at once: open progress streams (SSE and tRPC subscriptions) close within
// 5 s of a sign-out, a deactivation or a deletion; the login limit counts failures only; the tRPC
// login's 429 says when to retry; a cookie write must come from this server's own scheme and host;
// answers carrying tokens or user data are never cached.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { testBackend } from "../helpers/db.ts";

/** Opens an event stream and answers a promise of how long (ms after `mark()`) until it ended. */
function openStream(url: string, headers: Record<string, string>) {
  const ac = new AbortController();
  let markedAt = 0;
  let firstData!: () => void;
  const opened = new Promise<void>((r) => {
    firstData = r;
  });
  const ended = (async () => {
    const res = await fetch(url, { headers: { accept: "text/event-stream", ...headers }, signal: ac.signal });
    if (res.status !== 200) throw new Error(`stream ${url}: ${res.status}`);
    const reader = res.body!.getReader();
    try {
      while (true) {
        const { done } = await reader.read();
        firstData();
        if (done) break;
      }
    } catch {
      // A destroyed connection ends the stream too.
    }
    return Date.now() - markedAt;
  })();
  return {
    opened,
    mark: () => {
      markedAt = Date.now();
    },
    ended,
    abort: () => ac.abort(),
  };
}

describe(`sessions and their streams (${testBackend})`, () => {
  let t: TestApp;
  /** A second instance on the same database (its own login limits). */
  let t2: TestApp;
  let admin: Record<string, string>;
  beforeAll(async () => {
    t = await startTestApp({ env: { LOGIN_MAX_PER_IP: "3", LOGIN_MAX_FAILURES_PER_USER: "100" } });
    t2 = await startTestApp({ tdb: t.tdb });
    admin = { authorization: `Bearer ${(await t.login("admin")).token}`, "content-type": "application/json" };
  });
  afterAll(async () => {
    await t2.app.close();
    await t.close();
  });

  const trpcProgress = `/trpc/dataOps.progress?input=${encodeURIComponent(JSON.stringify({ json: { type: "update" } }))}`;

  it.each([
    [
      "signed out",
      async (_id: number, token: string) => {
        const res = await fetch(`${t.url}/auth-inv/logout`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}` },
        });
        expect(res.status).toBe(200);
      },
    ],
    [
      "deactivated",
      async (id: number) => {
        const user = await (await fetch(`${t.url}/auth-inv/users/${id}`, { headers: admin })).json();
        const res = await fetch(`${t.url}/auth-inv/users/${id}`, {
          method: "PUT",
          headers: admin,
          body: JSON.stringify({ ...user, password: "", is_active: false }),
        });
        expect(res.status).toBe(200);
      },
    ],
    [
      "deleted",
      async (id: number) => {
        const res = await fetch(`${t.url}/auth-inv/users/${id}`, {
          method: "DELETE",
          headers: { authorization: admin.authorization! },
        });
        expect(res.status).toBe(200);
      },
    ],
  ] as const)("a user %s loses their open streams within 5 s", async (what, act) => {
    const name = `watcher_${what.replace(/\W/g, "")}`;
    const id = await t.createUser(name, ["access:settings", "settings:data_management"]);
    const { token } = await t.login(name);
    const headers = { authorization: `Bearer ${token}` };
    const streams = [
      openStream(`${t.url}/csv/update/progress`, headers),
      openStream(`${t.url}${trpcProgress}`, headers),
    ];
    await Promise.all(streams.map((s) => s.opened));
    for (const s of streams) s.mark();
    await act(id, token);
    const timeout = setTimeout(() => {
      for (const s of streams) s.abort();
    }, 8000);
    const took = await Promise.all(streams.map((s) => s.ended)).finally(() => clearTimeout(timeout));
    for (const ms of took) expect(ms).toBeLessThan(5000);
  });

  it("an open stream of a session that still stands stays open", async () => {
    const s = openStream(`${t.url}/csv/update/progress`, { authorization: admin.authorization! });
    await s.opened;
    s.mark();
    const outcome = await Promise.race([
      s.ended.then(() => "ended"),
      new Promise((r) => setTimeout(() => r("open"), 5000)),
    ]);
    s.abort();
    expect(outcome).toBe("open");
  });

  it("successful sign-ins do not count against the address; failed ones do, and 429 says when to retry", async () => {
    const login = (password: string) =>
      fetch(`${t.url}/trpc/auth.login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ json: { username: "admin", password } }),
      });
    for (let i = 0; i < 6; i++) expect((await login("admin-secret")).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await login("wrong")).status).toBe(401);
    const refused = await login("admin-secret");
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    const rest = await fetch(`${t.url}/auth-inv/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: "admin-secret" }),
    });
    expect(rest.status).toBe(429);
    expect(Number(rest.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("a cookie write must name this server's scheme as well as its host", async () => {
    await t.createUser("cookie_user", ["settings:prompt_management"]);
    // On the second instance: this address is locked out of the first for this window.
    const { cookie } = await t2.login("cookie_user");
    const host = new URL(t2.url).host;
    const write = (origin: string) =>
      fetch(`${t2.url}/api/ai-prompts`, {
        method: "POST",
        headers: { cookie, origin, "content-type": "application/json" },
        body: JSON.stringify({ prompt_text: "x", prompt_type: "general" }),
      });
    const https = await write(`https://${host}`);
    expect(https.status).toBe(403);
    expect((await https.json()).message).toBe(
      "Cross-site request refused: the Origin header does not match this server",
    );
    expect((await write(`http://${host}`)).status).toBe(201);
  });

  it("answers carrying tokens or user data are not cached", async () => {
    const login = await t2.app.inject({
      method: "POST",
      url: "/auth-inv/login",
      payload: { username: "admin", password: "admin-secret" },
    });
    expect(login.headers["cache-control"]).toBe("no-store");
    const auth = { authorization: `Bearer ${login.json().token}` };
    for (const url of ["/auth-inv/me", "/trpc/auth.me", "/auth-inv/users", "/config/global"]) {
      const res = await t2.app.inject({ method: "GET", url, headers: auth });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers["cache-control"], url).toBe("no-store");
    }
  });
});
