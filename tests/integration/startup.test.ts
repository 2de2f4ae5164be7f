import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../server/config.ts";
import { DataDirInUseError, openDatabase } from "../../server/db/database.ts";
import { SHUTDOWN_CANCEL_MESSAGE } from "../../server/jobs/data-ops.ts";
import { prepareDatabase } from "../../server/startup.ts";
import { createTestDatabase } from "../helpers/db.ts";

// The server runs in this very process (node with tsx's loader), not under the tsx CLI, which would
// spawn it as a grandchild: a kill -9 must reach the server and the pid it records must be its own.
const node = process.execPath;
const serverArgs = ["--import", "tsx", "server/main.ts"];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill("SIGKILL");
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

async function waitFor(url: string, ms = 80_000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not come up`);
}

describe("configuration", () => {
  it("names the bad variable and exits 1", () => {
    const res = spawnSync(node, serverArgs, {
      env: { ...process.env, PORT: "not-a-port", DATABASE_URL: "mysql://x" },
      encoding: "utf8",
    });
    expect(res.status).toBe(1);
    expect(res.stderr).toContain("Invalid configuration");
    expect(res.stderr).toMatch(/PORT: /);
    expect(res.stderr).toMatch(/DATABASE_URL: must be a postgres:\/\/ or postgresql:\/\/ URL/);
  });

  it("has the documented defaults", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ port: 3000, adminUsername: "admin", databaseUrl: undefined });
    expect(c.dataDir).toBe(path.resolve("data"));
  });
});

describe("embedded database", () => {
  it("refuses a second process on the same DATA_DIR with a clear message", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bo-data-"));
    const first = await openDatabase({ dataDir: dir });
    try {
      await expect(openDatabase({ dataDir: dir })).rejects.toThrow(DataDirInUseError);
      await expect(openDatabase({ dataDir: dir })).rejects.toThrow(
        /Another process is already using the embedded database/,
      );
    } finally {
      await first.close();
    }
    // Once released, it opens again and keeps its data.
    const again = await openDatabase({ dataDir: dir });
    await again.close();
    fs.rmSync(dir, { recursive: true });
  });
});

describe("first admin", () => {
  it("generates a strong password when ADMIN_PASSWORD is unset and prints it once", async () => {
    const tdb = await createTestDatabase({ migrated: false });
    const lines: string[] = [];
    const log = { info: (m: string) => lines.push(m), warn: (m: string) => lines.push(m) };
    const config = loadConfig({ ADMIN_USERNAME: "boss" });
    await prepareDatabase(tdb.db, config, log);
    const printed = lines.find((l) => l.includes("generated password"));
    expect(printed).toBeDefined();
    const password = /generated password: (\S+)/.exec(printed!)![1]!;
    expect(password.length).toBeGreaterThanOrEqual(20);
    const user = await tdb.db.prisma.user.findUniqueOrThrow({ where: { usernameKey: "boss" } });
    expect(user.isAdmin).toBe(true);
    expect(user.passwordHash).toMatch(/^\$argon2id\$/);
    expect(user.passwordHash).not.toContain(password);

    lines.length = 0;
    await prepareDatabase(tdb.db, config, log);
    expect(lines.some((l) => l.includes("generated password"))).toBe(false);
    expect(await tdb.db.prisma.user.count()).toBe(1);
    await tdb.drop();
  });
});

/** Starts `tsx server/main.ts` on a free port over a fresh embedded database. */
async function startServer(extraEnv: Record<string, string>) {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bo-start-"));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    ADMIN_PASSWORD: "secret123",
    LOG_LEVEL: "warn",
    CLIENT_DIST: "/nonexistent",
    ...extraEnv,
  };
  for (const key of ["DATABASE_URL", "SOURCE_DIR", ...(extraEnv.DEMO_DATA ? [] : ["DEMO_DATA"])])
    delete env[key];
  const child = spawn(node, serverArgs, { env, stdio: "pipe" });
  children.push(child);
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`${base}/readyz`);
  const login = await fetch(`${base}/auth-inv/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: "secret123" }),
  });
  return {
    port,
    base,
    env,
    dataDir,
    login,
    async stop() {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
      fs.rmSync(dataDir, { recursive: true });
    },
  };
}

describe("the server process", () => {
  it("migrates, creates the admin and serves login on a fresh data directory", async () => {
    const server = await startServer({ DEMO_DATA: "0" });
    const { port, env, login } = server;
    expect(login.status).toBe(200);
    const { token, user } = await login.json();
    expect(user).toMatchObject({ username: "admin", is_admin: true });
    const me = await fetch(`http://127.0.0.1:${port}/auth-inv/me`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(await me.json()).toMatchObject({ username: "admin" });

    // A second server on the same DATA_DIR refuses to start.
    const second = spawnSync(node, serverArgs, {
      env: { ...env, PORT: String(port + 1) },
      encoding: "utf8",
    });
    expect(second.status).toBe(1);
    expect(second.stderr).toMatch(/Another process is already using the embedded database/);

    await server.stop();
  }, 240_000);
});

describe("a restart after the server was killed (kill -9)", () => {
  it("takes over the lock its dead process left at once", async () => {
    const server = await startServer({ DEMO_DATA: "0" });
    const child = children.at(-1)!;
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    const started = Date.now();
    const again = spawn(node, serverArgs, { env: server.env, stdio: "pipe" });
    children.push(again);
    let stderr = "";
    again.stderr.on("data", (d) => {
      stderr += String(d);
    });
    await waitFor(`${server.base}/readyz`).catch((err) => {
      throw new Error(`${err}; stderr: ${stderr}`);
    });
    // Well within the lock's one-minute staleness.
    expect(Date.now() - started).toBeLessThan(30_000);
    const login = await fetch(`${server.base}/auth-inv/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: "secret123" }),
    });
    expect(login.status).toBe(200);

    // While it runs, a third start is refused, naming the process that holds the directory.
    const third = spawnSync(node, serverArgs, {
      env: { ...server.env, PORT: String(server.port + 1) },
      encoding: "utf8",
    });
    expect(third.status).toBe(1);
    expect(third.stderr).toContain(
      `Another process is already using the embedded database in ${server.dataDir} (pid ${again.pid} on ${os.hostname()}, since `,
    );
    expect(third.stderr).toMatch(/Stop it first \(kill \d+\), use a different DATA_DIR, or set DATABASE_URL/);
    again.kill("SIGTERM");
    await new Promise((r) => again.once("exit", r));
    fs.rmSync(server.dataDir, { recursive: true });
  }, 300_000);
});

describe("first start with demo data", () => {
  it("writes the demo set and the demo chat archive, runs a Full Reset then a chat import, so real numbers show", async () => {
    const started = Date.now();
    const server = await startServer({});
    const { base, dataDir } = server;
    const { token } = await server.login.json();
    const headers = { authorization: `Bearer ${token}` };
    let status: { active: boolean; progress: { status: string; operation: string } | null } = {
      active: true,
      progress: null,
    };
    const until = Date.now() + 150_000;
    while (Date.now() < until) {
      status = await (await fetch(`${base}/csv/status`, { headers })).json();
      if (!status.active && status.progress && status.progress.operation !== "Full reset complete") break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(status.progress).toMatchObject({ status: "complete", operation: "Chat import complete" });
    console.log(
      `first start: demo data and chat archive imported ${((Date.now() - started) / 1000).toFixed(1)} s after launch`,
    );
    const history = await (await fetch(`${base}/csv/history/import`, { headers })).json();
    expect(
      history.map((h: { status: string; additional_info: { type: string } }) => [
        h.additional_info.type,
        h.status,
      ]),
    ).toEqual([
      ["chat", "completed"],
      ["reset", "completed"],
    ]);
    expect(fs.existsSync(path.join(dataDir, "source", "products.csv"))).toBe(true);
    expect(fs.existsSync(path.join(dataDir, "chat-source", "rocketchat_message.json"))).toBe(true);
    const counts = await (await fetch(`${base}/csv/status/table-counts`, { headers })).json();
    const count = (group: { table_name: string; count: number }[], name: string) =>
      group.find((c) => c.table_name === name)?.count;
    expect(count(counts.core, "products")).toBe(2000);
    expect(count(counts.core, "order_lines")).toBeGreaterThan(100_000);
    expect(count(counts.metrics, "product_metrics")).toBe(2000);
    expect(count(counts.config, "chat_messages")).toBe(20_000);
    const rooms = await (await fetch(`${base}/chat-api/rooms`, { headers })).json();
    expect(rooms.rooms.length).toBeGreaterThan(10);
    await server.stop();
  }, 300_000);

  it("shuts down cleanly on SIGTERM during a Full Reset: the run ends cancelled, nothing fails, it exits 0", async () => {
    const server = await startServer({});
    const { base, dataDir } = server;
    const { token } = await server.login.json();
    const headers = { authorization: `Bearer ${token}` };
    let output = "";
    const child = children.at(-1)!;
    child.stdout!.on("data", (b) => (output += b));
    child.stderr!.on("data", (b) => (output += b));
    // The first start's Full Reset, once it is loading the demo set's files.
    const until = Date.now() + 150_000;
    let progress: { run_id: number; status: string; operation: string } | null = null;
    while (Date.now() < until) {
      progress = (await (await fetch(`${base}/csv/status`, { headers })).json()).progress;
      if (
        progress &&
        progress.run_id > 0 &&
        progress.status === "running" &&
        /^Load /.test(progress.operation)
      )
        break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(progress).toMatchObject({ status: "running" });
    child.kill("SIGTERM");
    const code = await new Promise((r) => child.once("exit", r));
    expect(code).toBe(0);
    // No request or run died on a closed pool; nothing was logged as an error.
    expect(output).not.toMatch(/Cannot use a pool|"level":50|"level":60/);
    const db = await openDatabase({ dataDir });
    try {
      const runs = await db.prisma.dataRun.findMany({ orderBy: { id: "asc" } });
      expect(runs.map((r) => [r.type, r.status, r.error])).toEqual([
        ["reset", "cancelled", SHUTDOWN_CANCEL_MESSAGE],
      ]);
    } finally {
      await db.close();
    }
    fs.rmSync(dataDir, { recursive: true });
  }, 300_000);
});
