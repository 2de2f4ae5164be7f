import type { FastifyInstance } from "fastify";
import { buildApp } from "../../server/app.ts";
import { type AppConfig, loadConfig } from "../../server/config.ts";
import { ensureAdminUser, hashPassword, normalizeUsername } from "../../server/modules/auth/auth.service.ts";
import type { CurrentUser } from "../../shared/auth.ts";
import type { PermissionCode } from "../../shared/permissions.ts";
import { createTestDatabase, type TestDatabase } from "./db.ts";

export const ADMIN = { username: "admin", password: "admin-secret" } as const;

export interface TestApp {
  app: FastifyInstance;
  /** http://127.0.0.1:<port> */
  url: string;
  tdb: TestDatabase;
  config: AppConfig;
  /** Creates a user with exactly these permissions (password "password1"). */
  createUser(
    username: string,
    permissions: PermissionCode[],
    opts?: { isAdmin?: boolean; isActive?: boolean },
  ): Promise<number>;
  /** Logs in through the REST route; returns the token and the Set-Cookie header. */
  login(username: string, password?: string): Promise<{ token: string; user: CurrentUser; cookie: string }>;
  close(): Promise<void>;
}

export async function startTestApp(
  opts: { env?: Record<string, string>; listen?: boolean; tdb?: TestDatabase } = {},
): Promise<TestApp> {
  const tdb = opts.tdb ?? (await createTestDatabase());
  const config = loadConfig({
    NODE_ENV: "test",
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: "silent",
    CLIENT_DIST: "/nonexistent-client-dist",
    ...opts.env,
  });
  await ensureAdminUser(tdb.db, config);
  const app = await buildApp({ config, db: tdb.db, logger: false });
  let url = "";
  if (opts.listen !== false) {
    await app.listen({ port: 0, host: "127.0.0.1" });
    const addr = app.server.address();
    url = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`;
  } else {
    await app.ready();
  }
  const passwordHash = await hashPassword("password1");

  return {
    app,
    url,
    tdb,
    config,
    async createUser(username, permissions, o = {}) {
      const perms = await tdb.db.prisma.permission.findMany({
        where: { code: { in: permissions } },
        select: { id: true },
      });
      if (perms.length !== permissions.length)
        throw new Error(`unknown permission in ${permissions.join(",")}`);
      const user = await tdb.db.prisma.user.create({
        data: {
          username,
          usernameKey: normalizeUsername(username),
          passwordHash,
          isAdmin: o.isAdmin ?? false,
          isActive: o.isActive ?? true,
          permissions: { create: perms.map((p) => ({ permissionId: p.id })) },
        },
      });
      return user.id;
    },
    async login(username, password = username === ADMIN.username ? ADMIN.password : "password1") {
      const res = await app.inject({
        method: "POST",
        url: "/auth-inv/login",
        payload: { username, password },
      });
      if (res.statusCode !== 200) throw new Error(`login ${username} failed: ${res.statusCode} ${res.body}`);
      const body = res.json() as { token: string; user: CurrentUser };
      const setCookie = [res.headers["set-cookie"]].flat().filter(Boolean)[0] as string;
      return { ...body, cookie: setCookie.split(";")[0]! };
    },
    async close() {
      await app.close();
      if (!opts.tdb) await tdb.drop();
    },
  };
}
