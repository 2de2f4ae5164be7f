import { TRPCClientError } from "@trpc/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiClient, signIn } from "../../scripts/lib/api-client.ts";
import { ADMIN, startTestApp, type TestApp } from "../helpers/app.ts";
import { testBackend } from "../helpers/db.ts";

describe(`the typed API client for scripts (${testBackend})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it("signs in over HTTP, calls procedures with the bearer token, and signs out", async () => {
    const { api, token, user } = await signIn(t.url, ADMIN.username, ADMIN.password);
    expect(user.is_admin).toBe(true);
    expect(await api.auth.me.query()).toMatchObject({ username: "admin", is_admin: true });
    const categories = await api.users.permissionCategories.query();
    expect(categories.length).toBeGreaterThan(0);
    await api.auth.logout.mutate();
    const stale = createApiClient({ url: t.url, token });
    const err = await stale.auth.me.query().catch((e) => e);
    expect(err).toBeInstanceOf(TRPCClientError);
    expect(err.data.httpStatus).toBe(401);
  });

  it("reports bad input naming the field", async () => {
    const err = await createApiClient({ url: t.url })
      .auth.login.mutate({ username: "admin", password: "" })
      .catch((e) => e);
    expect(err.data.httpStatus).toBe(400);
    expect(err.message).toBe("password: password is required");
    expect(err.data.field).toBe("password");
  });
});
