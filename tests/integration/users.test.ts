// User administration through the app (spec sections 3, 4 "Users", 5 "User form", 6, 7 "Users" and
// 8 "Users"): the legacy REST shapes under /auth-inv, the tRPC router, the server's rules, and the
// chat users under /chat-api.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashToken } from "../../server/modules/auth/auth.service.ts";
import { updateUser } from "../../server/modules/users/users.service.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { testBackend } from "../helpers/db.ts";

describe(`user management (${testBackend})`, () => {
  let t: TestApp;
  let admin: Record<string, string>;
  let adminId: number;
  let manager: Record<string, string>;
  let managerId: number;
  let permissionIds: Record<string, number>;

  beforeAll(async () => {
    t = await startTestApp({ env: { LOGIN_MAX_PER_IP: "1000" } });
    const a = await t.login("admin");
    admin = { authorization: `Bearer ${a.token}` };
    adminId = a.user.id;
    managerId = await t.createUser("manager", ["access:settings", "settings:user_management"]);
    manager = { authorization: `Bearer ${(await t.login("manager")).token}` };
    const perms = await t.tdb.db.prisma.permission.findMany({ select: { id: true, code: true } });
    permissionIds = Object.fromEntries(perms.map((p) => [p.code, p.id]));
  });
  afterAll(() => t.close());

  const call = (method: string, url: string, payload?: unknown, headers = admin) =>
    t.app.inject({
      method: method as "GET",
      url,
      headers,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const newUser = (over: Record<string, unknown> = {}) => ({
    username: `user${Math.random().toString(36).slice(2, 8)}`,
    email: "",
    password: "secret1",
    is_admin: false,
    is_active: true,
    permissions: [],
    ...over,
  });

  describe("REST shapes", () => {
    it("GET /auth-inv/users lists users with their permission codes, never a password", async () => {
      const res = await call("GET", "/auth-inv/users");
      expect(res.statusCode).toBe(200);
      const users = res.json() as Record<string, unknown>[];
      expect(users.map((u) => u.username)).toEqual(["admin", "manager"]);
      expect(users[0]).toEqual({
        id: adminId,
        username: "admin",
        email: null,
        is_admin: true,
        is_active: true,
        last_login: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        rocket_chat_user_id: null,
        permissions: [],
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      expect(users[1]).toMatchObject({ permissions: ["access:settings", "settings:user_management"] });
      expect(res.body).not.toMatch(/password|argon/i);
    });

    it("POST /auth-inv/users creates (201) with permission ids; GET /auth-inv/users/{id} reads it back", async () => {
      const res = await call("POST", "/auth-inv/users", {
        username: "Buyer",
        email: "buyer@example.com",
        password: "secret1",
        is_admin: false,
        is_active: true,
        permissions: [permissionIds["access:products"], permissionIds["settings:products"]],
      });
      expect(res.statusCode).toBe(201);
      const created = res.json();
      expect(created).toMatchObject({
        id: expect.any(Number),
        username: "Buyer",
        email: "buyer@example.com",
        is_admin: false,
        is_active: true,
        last_login: null,
        rocket_chat_user_id: null,
        permissions: ["access:products", "settings:products"],
      });
      const one = await call("GET", `/auth-inv/users/${created.id}`);
      expect(one.statusCode).toBe(200);
      expect(one.json()).toEqual(created);
      // The new user can sign in with the password.
      const login = await t.login("buyer", "secret1");
      expect(login.user.permissions).toEqual(["access:products", "settings:products"]);
    });

    it("PUT /auth-inv/users/{id} takes the same body plus id; codes work as well as ids", async () => {
      const { id } = (await call("POST", "/auth-inv/users", newUser({ username: "editme" }))).json();
      const res = await call("PUT", `/auth-inv/users/${id}`, {
        id,
        username: "EditMe",
        email: "edit@example.com",
        is_admin: false,
        is_active: true,
        permissions: ["access:vendors", String(permissionIds["settings:vendors"])],
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        id,
        username: "EditMe",
        email: "edit@example.com",
        permissions: ["access:vendors", "settings:vendors"],
      });
      const mismatch = await call("PUT", `/auth-inv/users/${id}`, { ...newUser(), id: id + 1000 });
      expect(mismatch.statusCode).toBe(400);
      expect(mismatch.json().error).toBe("id: does not match the user in the path");
    });

    it("DELETE /auth-inv/users/{id} deletes; unknown ids answer 404", async () => {
      const { id } = (await call("POST", "/auth-inv/users", newUser({ username: "deleteme" }))).json();
      const res = await call("DELETE", `/auth-inv/users/${id}`);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ success: true });
      expect(await t.tdb.db.prisma.user.findUnique({ where: { id } })).toBeNull();
      for (const [method, body] of [
        ["GET", undefined],
        ["PUT", newUser()],
        ["DELETE", undefined],
      ] as const) {
        const missing = await call(method, `/auth-inv/users/${id}`, body);
        expect(missing.statusCode, method).toBe(404);
        expect(missing.json()).toEqual({ error: `User ${id} not found`, message: `User ${id} not found` });
      }
      expect((await call("GET", "/auth-inv/users/abc")).statusCode).toBe(400);
    });

    it("GET /auth-inv/permissions/categories answers categories with their permissions", async () => {
      const res = await call("GET", "/auth-inv/permissions/categories", undefined, manager);
      expect(res.statusCode).toBe(200);
      const cats = res.json() as { category: string; permissions: { code: string }[] }[];
      expect(cats.map((c) => c.category)).toEqual([
        "Pages",
        "Settings",
        "Products",
        "Purchasing",
        "Forecasting",
        "Promotions",
      ]);
      expect(cats[1]!.permissions.map((p) => p.code)).toContain("settings:user_management");
    });

    it("answers 401 without a token and 403 without settings:user_management (server-side)", async () => {
      await t.createUser("clerk", ["access:products"]);
      const clerk = { authorization: `Bearer ${(await t.login("clerk")).token}` };
      for (const [method, url] of [
        ["GET", "/auth-inv/users"],
        ["POST", "/auth-inv/users"],
        ["GET", "/auth-inv/users/1"],
        ["PUT", "/auth-inv/users/1"],
        ["DELETE", "/auth-inv/users/1"],
        ["GET", "/auth-inv/permissions/categories"],
      ] as const) {
        const anon = await t.app.inject({ method, url });
        expect(anon.statusCode, `${method} ${url}`).toBe(401);
        expect(anon.json()).toEqual({ error: "Authentication required", message: "Authentication required" });
        const denied = await call(method, url, undefined, clerk);
        expect(denied.statusCode, `${method} ${url}`).toBe(403);
      }
    });
  });

  describe("validation", () => {
    it.each([
      [{ username: "ab" }, "username: Username must be at least 3 characters"],
      [{ username: "   ab  " }, "username: Username must be at least 3 characters"],
      [{ email: "not-an-email" }, "email: Please enter a valid email"],
      [{ password: "12345" }, "password: Password must be at least 6 characters"],
      [{ password: "" }, "password: Password is required for new users"],
      [{ password: undefined }, "password: Password is required for new users"],
      [{ permissions: ["no:such"] }, "permissions: unknown permission no:such"],
      [{ permissions: [999999] }, "permissions: unknown permission 999999"],
      [{ rocket_chat_user_id: 4242 }, "rocket_chat_user_id: unknown chat user 4242"],
    ])("POST refuses %j with 400 and the form's message", async (over, message) => {
      const res = await call("POST", "/auth-inv/users", newUser(over));
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: message, message });
    });

    it("an empty e-mail is stored as none; the username is trimmed", async () => {
      const res = await call("POST", "/auth-inv/users", newUser({ username: "  spaced  ", email: "" }));
      expect(res.statusCode).toBe(201);
      expect(res.json()).toMatchObject({ username: "spaced", email: null });
    });

    it("usernames are unique case-insensitively: 409 with a message, on create and on rename", async () => {
      const dup = await call("POST", "/auth-inv/users", newUser({ username: "MANAGER" }));
      expect(dup.statusCode).toBe(409);
      expect(dup.json()).toEqual({
        error: 'Username "MANAGER" is already taken',
        message: 'Username "MANAGER" is already taken',
      });
      const { id } = (await call("POST", "/auth-inv/users", newUser({ username: "renamer" }))).json();
      const rename = await call("PUT", `/auth-inv/users/${id}`, newUser({ username: "Admin", password: "" }));
      expect(rename.statusCode).toBe(409);
      // Changing only the case of one's own name is fine.
      const recase = await call(
        "PUT",
        `/auth-inv/users/${id}`,
        newUser({ username: "RENAMER", password: "" }),
      );
      expect(recase.statusCode).toBe(200);
      expect(recase.json().username).toBe("RENAMER");
    });

    it("a blank password on edit keeps the old one; a new one replaces it and ends their sessions", async () => {
      const { id } = (
        await call("POST", "/auth-inv/users", newUser({ username: "pwuser", password: "first-pass" }))
      ).json();
      const before = await t.tdb.db.prisma.user.findUniqueOrThrow({ where: { id } });
      const keep = await call("PUT", `/auth-inv/users/${id}`, newUser({ username: "pwuser", password: "" }));
      expect(keep.statusCode).toBe(200);
      const omitted = await call("PUT", `/auth-inv/users/${id}`, {
        ...newUser({ username: "pwuser" }),
        password: undefined,
      });
      expect(omitted.statusCode).toBe(200);
      const after = await t.tdb.db.prisma.user.findUniqueOrThrow({ where: { id } });
      expect(after.passwordHash).toBe(before.passwordHash);
      const { token } = await t.login("pwuser", "first-pass");

      const short = await call(
        "PUT",
        `/auth-inv/users/${id}`,
        newUser({ username: "pwuser", password: "123" }),
      );
      expect(short.statusCode).toBe(400);
      const change = await call(
        "PUT",
        `/auth-inv/users/${id}`,
        newUser({ username: "pwuser", password: "second-pass" }),
      );
      expect(change.statusCode).toBe(200);
      const me = await t.app.inject({ url: "/auth-inv/me", headers: { authorization: `Bearer ${token}` } });
      expect(me.statusCode).toBe(401);
      await t.login("pwuser", "second-pass");
      const old = await t.app.inject({
        method: "POST",
        url: "/auth-inv/login",
        payload: { username: "pwuser", password: "first-pass" },
      });
      expect(old.statusCode).toBe(401);
    });

    it("an admin's permission list is cleared on save", async () => {
      const res = await call(
        "POST",
        "/auth-inv/users",
        newUser({ username: "boss", is_admin: true, permissions: ["access:products"] }),
      );
      expect(res.statusCode).toBe(201);
      expect(res.json()).toMatchObject({ is_admin: true, permissions: [] });
      const id = res.json().id;
      const demoted = await call(
        "PUT",
        `/auth-inv/users/${id}`,
        newUser({ username: "boss", permissions: ["access:brands"] }),
      );
      expect(demoted.json()).toMatchObject({ is_admin: false, permissions: ["access:brands"] });
      const promoted = await call(
        "PUT",
        `/auth-inv/users/${id}`,
        newUser({ username: "boss", is_admin: true, permissions: ["access:brands"] }),
      );
      expect(promoted.json()).toMatchObject({ is_admin: true, permissions: [] });
      expect(await t.tdb.db.prisma.userPermission.count({ where: { userId: id } })).toBe(0);
      await call("DELETE", `/auth-inv/users/${id}`);
    });

    it("links a chat user that exists", async () => {
      await t.tdb.db.prisma.chatUser.create({
        data: { id: 77, mongoId: "mongo77", username: "chatter", name: "Chat Ter", active: true },
      });
      const res = await call(
        "POST",
        "/auth-inv/users",
        newUser({ username: "linked", rocket_chat_user_id: 77 }),
      );
      expect(res.statusCode).toBe(201);
      expect(res.json().rocket_chat_user_id).toBe(77);
      // PUT replaces the whole record: no chat user in the body unlinks it.
      const unlinked = await call(
        "PUT",
        `/auth-inv/users/${res.json().id}`,
        newUser({ username: "linked", password: "" }),
      );
      expect(unlinked.json().rocket_chat_user_id).toBeNull();
    });
  });

  describe("rules", () => {
    it("nobody deletes or deactivates themselves (409)", async () => {
      const del = await call("DELETE", `/auth-inv/users/${managerId}`, undefined, manager);
      expect(del.statusCode).toBe(409);
      expect(del.json().error).toBe("You cannot delete your own account");
      const deactivate = await call(
        "PUT",
        `/auth-inv/users/${managerId}`,
        newUser({
          username: "manager",
          password: "",
          is_active: false,
          permissions: ["settings:user_management"],
        }),
        manager,
      );
      expect(deactivate.statusCode).toBe(409);
      expect(deactivate.json().error).toBe("You cannot deactivate your own account");
      const selfAdmin = await call("DELETE", `/auth-inv/users/${adminId}`);
      expect(selfAdmin.statusCode).toBe(409);
    });

    it("the last active admin stays an admin (409); with a second admin either may step down", async () => {
      const demoteSelf = await call(
        "PUT",
        `/auth-inv/users/${adminId}`,
        newUser({ username: "admin", password: "" }),
      );
      expect(demoteSelf.statusCode).toBe(409);
      expect(demoteSelf.json().error).toBe("At least one active administrator must remain");
      expect((await t.tdb.db.prisma.user.findUniqueOrThrow({ where: { id: adminId } })).isAdmin).toBe(true);

      // An inactive admin does not count.
      const inactive = await call(
        "POST",
        "/auth-inv/users",
        newUser({ username: "sleepy", is_admin: true, is_active: false }),
      );
      expect(inactive.statusCode).toBe(201);
      expect(
        (await call("PUT", `/auth-inv/users/${adminId}`, newUser({ username: "admin", password: "" })))
          .statusCode,
      ).toBe(409);

      const second = await call("POST", "/auth-inv/users", newUser({ username: "second", is_admin: true }));
      const secondId = second.json().id as number;
      const demote = await call(
        "PUT",
        `/auth-inv/users/${secondId}`,
        newUser({ username: "second", password: "" }),
      );
      expect(demote.statusCode).toBe(200);
      await call(
        "PUT",
        `/auth-inv/users/${secondId}`,
        newUser({ username: "second", password: "", is_admin: true }),
      );
      const { token } = await t.login("second", "secret1");
      const asSecond = { authorization: `Bearer ${token}` };
      expect(
        (
          await call(
            "PUT",
            `/auth-inv/users/${adminId}`,
            newUser({ username: "admin", password: "", is_active: false }),
            asSecond,
          )
        ).statusCode,
      ).toBe(200);
      const lastDelete = await call("DELETE", `/auth-inv/users/${secondId}`, undefined, admin);
      // admin is inactive now: its token no longer works at all.
      expect(lastDelete.statusCode).toBe(401);
      // second is the last active admin: not even another admin's call may demote them.
      await expect(
        updateUser(t.tdb.db, { id: adminId, is_admin: true }, secondId, {
          username: "second",
          is_admin: false,
          is_active: true,
          permissions: [],
        }),
      ).rejects.toThrow("At least one active administrator must remain");
      // Put things back for the other tests.
      const restore = await call(
        "PUT",
        `/auth-inv/users/${adminId}`,
        newUser({ username: "admin", password: "", is_admin: true }),
        asSecond,
      );
      expect(restore.statusCode).toBe(200);
      admin = { authorization: `Bearer ${(await t.login("admin")).token}` };
      expect((await call("DELETE", `/auth-inv/users/${secondId}`)).statusCode).toBe(200);
      await call("DELETE", `/auth-inv/users/${inactive.json().id}`);
    });

    it.runIf(testBackend === "postgres")(
      "two admins demoting each other at once leave one admin",
      async () => {
        const a = (
          await call("POST", "/auth-inv/users", newUser({ username: "racer-a", is_admin: true }))
        ).json().id;
        const b = (
          await call("POST", "/auth-inv/users", newUser({ username: "racer-b", is_admin: true }))
        ).json().id;
        // Only racer-a and racer-b are active admins for this moment.
        await t.tdb.db.prisma.user.update({ where: { id: adminId }, data: { isActive: false } });
        try {
          const results = await Promise.allSettled([
            updateUser(t.tdb.db, { id: a, is_admin: true }, b, {
              username: "racer-b",
              is_admin: false,
              is_active: true,
              permissions: [],
            }),
            updateUser(t.tdb.db, { id: b, is_admin: true }, a, {
              username: "racer-a",
              is_admin: false,
              is_active: true,
              permissions: [],
            }),
          ]);
          expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
          expect(await t.tdb.db.prisma.user.count({ where: { isAdmin: true, isActive: true } })).toBe(1);
        } finally {
          await t.tdb.db.prisma.user.update({ where: { id: adminId }, data: { isActive: true } });
          await t.tdb.db.prisma.user.deleteMany({ where: { id: { in: [a, b] } } });
          admin = { authorization: `Bearer ${(await t.login("admin")).token}` };
        }
      },
    );

    it("a non-admin user manager manages ordinary users, but not administrators (403)", async () => {
      const plain = await call("POST", "/auth-inv/users", newUser({ username: "bymanager" }), manager);
      expect(plain.statusCode).toBe(201);
      const makeAdmin = await call("POST", "/auth-inv/users", newUser({ is_admin: true }), manager);
      expect(makeAdmin.statusCode).toBe(403);
      expect(makeAdmin.json().error).toBe(
        "Only administrators can create, change or delete administrator accounts",
      );
      const promote = await call(
        "PUT",
        `/auth-inv/users/${plain.json().id}`,
        newUser({ username: "bymanager", password: "", is_admin: true }),
        manager,
      );
      expect(promote.statusCode).toBe(403);
      const editAdmin = await call(
        "PUT",
        `/auth-inv/users/${adminId}`,
        newUser({ username: "admin", password: "hijacked1", is_admin: true }),
        manager,
      );
      expect(editAdmin.statusCode).toBe(403);
      expect((await call("DELETE", `/auth-inv/users/${adminId}`, undefined, manager)).statusCode).toBe(403);
      expect(
        (await call("DELETE", `/auth-inv/users/${plain.json().id}`, undefined, manager)).statusCode,
      ).toBe(200);
    });

    it("deactivating a user ends their sessions at once; inactive users cannot log in", async () => {
      const id = await t.createUser("leaver", ["access:products"]);
      const { token, cookie } = await t.login("leaver");
      const asLeaver = { authorization: `Bearer ${token}` };
      expect((await t.app.inject({ url: "/auth-inv/me", headers: asLeaver })).statusCode).toBe(200);
      const res = await call(
        "PUT",
        `/auth-inv/users/${id}`,
        newUser({ username: "leaver", password: "", is_active: false }),
      );
      expect(res.json()).toMatchObject({ is_active: false });
      expect((await t.app.inject({ url: "/auth-inv/me", headers: asLeaver })).statusCode).toBe(401);
      expect((await t.app.inject({ url: "/auth-inv/me", headers: { cookie } })).statusCode).toBe(401);
      expect(await t.tdb.db.prisma.session.count({ where: { tokenHash: hashToken(token) } })).toBe(0);
      const login = await t.app.inject({
        method: "POST",
        url: "/auth-inv/login",
        payload: { username: "leaver", password: "password1" },
      });
      expect(login.statusCode).toBe(403);
    });

    it("a permission change takes effect on the user's next request", async () => {
      const id = await t.createUser("planner", ["access:settings", "settings:products"]);
      const { token } = await t.login("planner");
      const asPlanner = { authorization: `Bearer ${token}` };
      expect((await t.app.inject({ url: "/config/products", headers: asPlanner })).statusCode).toBe(200);
      expect((await t.app.inject({ url: "/config/vendors", headers: asPlanner })).statusCode).toBe(403);
      await call(
        "PUT",
        `/auth-inv/users/${id}`,
        newUser({ username: "planner", password: "", permissions: ["settings:vendors"] }),
      );
      expect((await t.app.inject({ url: "/config/products", headers: asPlanner })).statusCode).toBe(403);
      expect((await t.app.inject({ url: "/config/vendors", headers: asPlanner })).statusCode).toBe(200);
      const me = await t.app.inject({ url: "/trpc/auth.me", headers: asPlanner });
      expect(me.json().result.data.json.permissions).toEqual(["settings:vendors"]);
    });
  });

  describe("tRPC users router", () => {
    const trpc = async (path: string, input: unknown, headers = admin, method: "GET" | "POST" = "POST") =>
      method === "GET"
        ? t.app.inject({
            url: `/trpc/${path}?input=${encodeURIComponent(JSON.stringify({ json: input }))}`,
            headers,
          })
        : t.app.inject({ method, url: `/trpc/${path}`, headers, payload: { json: input } });

    it("list, get, create, update and delete, with the same rules and messages", async () => {
      const created = await trpc(
        "users.create",
        newUser({ username: "viatrpc", permissions: ["access:dashboard"] }),
      );
      expect(created.statusCode).toBe(200);
      const user = created.json().result.data.json;
      expect(user).toMatchObject({ username: "viatrpc", permissions: ["access:dashboard"] });
      const got = await trpc("users.get", { id: user.id }, admin, "GET");
      expect(got.json().result.data.json.username).toBe("viatrpc");
      const list = await trpc("users.list", undefined, admin, "GET");
      expect(list.json().result.data.json.map((u: { username: string }) => u.username)).toContain("viatrpc");
      const bad = await trpc("users.create", newUser({ username: "x" }));
      expect(bad.statusCode).toBe(400);
      expect(bad.json().error.json.message).toBe("username: Username must be at least 3 characters");
      expect(bad.json().error.json.data.field).toBe("username");
      const dup = await trpc("users.create", newUser({ username: "VIATRPC" }));
      expect(dup.statusCode).toBe(409);
      expect(dup.json().error.json.data.code).toBe("CONFLICT");
      const upd = await trpc("users.update", {
        ...newUser({ username: "viatrpc2", password: "" }),
        id: user.id,
      });
      expect(upd.json().result.data.json.username).toBe("viatrpc2");
      const self = await trpc("users.delete", { id: adminId });
      expect(self.statusCode).toBe(409);
      const del = await trpc("users.delete", { id: user.id });
      expect(del.json().result.data.json).toEqual({ success: true });
    });
  });

  describe("chat users", () => {
    it("GET /chat-api/users answers { status: 'success', users } with the chat user fields, by cookie", async () => {
      const { cookie } = await t.login("clerk");
      const res = await t.app.inject({ url: "/chat-api/users", headers: { cookie } });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        status: "success",
        users: [{ id: 77, mongo_id: "mongo77", name: "Chat Ter", username: "chatter", active: true }],
      });
      const anon = await t.app.inject({ url: "/chat-api/users" });
      expect(anon.statusCode).toBe(401);
      const viaTrpc = await t.app.inject({ url: "/trpc/chat.users", headers: { cookie } });
      expect(viaTrpc.json().result.data.json).toEqual(res.json().users);
    });

    it("GET /chat-api/avatar/{mongo_id} serves the stored bytes with their type, or 404", async () => {
      const png = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");
      await t.tdb.db.prisma.chatUser.create({
        data: { id: 78, mongoId: "mongo78", username: "pictured", avatar: png, avatarType: "image/png" },
      });
      await t.tdb.db.prisma.chatUser.create({
        data: {
          id: 79,
          mongoId: "mongo79",
          username: "sneaky",
          avatar: Buffer.from("<script>"),
          avatarType: "text/html",
        },
      });
      // Avatars go to user managers (the user form's chat-user selector), admins, and users who
      // share a room with the owner (tests/integration/chat.test.ts); not to any signed-in user.
      const clerk = (await t.login("clerk")).cookie;
      expect(
        (await t.app.inject({ url: "/chat-api/avatar/mongo78", headers: { cookie: clerk } })).statusCode,
      ).toBe(403);
      await t.createUser("avatar.manager", ["settings:user_management"]);
      const { cookie } = await t.login("avatar.manager");
      const res = await t.app.inject({ url: "/chat-api/avatar/mongo78", headers: { cookie } });
      expect(res.statusCode).toBe(200);
      expect(res.headers["content-type"]).toBe("image/png");
      expect(res.rawPayload.equals(png)).toBe(true);
      // A stored type that is not an image is not served as one.
      const html = await t.app.inject({ url: "/chat-api/avatar/mongo79", headers: { cookie } });
      expect(html.headers["content-type"]).toBe("application/octet-stream");
      for (const id of ["mongo77", "nobody"]) {
        const missing = await t.app.inject({ url: `/chat-api/avatar/${id}`, headers: { cookie } });
        expect(missing.statusCode, id).toBe(404);
        expect(missing.json()).toEqual({ error: "Avatar not found", message: "Avatar not found" });
      }
      expect((await t.app.inject({ url: "/chat-api/avatar/mongo78" })).statusCode).toBe(401);
    });
  });
});
