import { describe, expect, it } from "vitest";
import {
  ALL_PERMISSION_CODES,
  firstAllowedPath,
  hasPermission,
  landingPath,
  PAGE_KEYS,
  SETTINGS_PERMISSIONS,
  withRequiredPermissions,
} from "../../shared/permissions.ts";

const user = (permissions: string[], is_admin = false) => ({ is_admin, permissions });

describe("permission catalogue", () => {
  it("has a page code for each of the 14 pages and the 8 settings tab codes, without duplicates", () => {
    expect(PAGE_KEYS).toHaveLength(14);
    for (const page of PAGE_KEYS) expect(ALL_PERMISSION_CODES).toContain(`access:${page}`);
    expect(SETTINGS_PERMISSIONS).toHaveLength(8);
    expect(new Set(ALL_PERMISSION_CODES).size).toBe(ALL_PERMISSION_CODES.length);
    for (const code of ALL_PERMISSION_CODES) expect(code).toMatch(/^[a-z_]+:[a-z_]+$/);
  });

  it("admins pass everything; others need the code or any one of several", () => {
    expect(hasPermission(user([], true), "settings:global")).toBe(true);
    expect(hasPermission(user(["settings:global"]), "settings:global")).toBe(true);
    expect(hasPermission(user(["settings:global"]), "settings:vendors")).toBe(false);
    expect(
      hasPermission(user(["settings:prompt_management"]), [
        "settings:templates",
        "settings:prompt_management",
      ]),
    ).toBe(true);
    expect(hasPermission(user([]), "authenticated")).toBe(true);
    expect(hasPermission(null, "authenticated")).toBe(false);
  });

  it("sends the root to the first allowed page in the spec's order", () => {
    expect(firstAllowedPath(user([], true))).toBe("/dashboard");
    expect(firstAllowedPath(user(["access:products"]))).toBe("/products");
    expect(firstAllowedPath(user(["access:settings", "access:import"]))).toBe("/import");
    // brands and chat take no part in the order
    expect(firstAllowedPath(user(["access:brands", "access:chat"]))).toBeNull();
    expect(firstAllowedPath(user([]))).toBeNull();
  });

  it("lands a user on a page outside the root order when the order offers none", () => {
    expect(landingPath(user(["access:products", "access:brands"]))).toBe("/products");
    expect(landingPath(user(["access:brands", "access:chat"]))).toBe("/brands");
    expect(landingPath(user(["access:chat"]))).toBe("/chat");
    expect(landingPath(user(["settings:global"]))).toBeNull();
    expect(landingPath(user([]))).toBeNull();
  });

  it("adds the Settings page to any settings tab, and nothing otherwise", () => {
    expect(withRequiredPermissions(["settings:global"])).toEqual(["settings:global", "access:settings"]);
    expect(withRequiredPermissions(["access:settings"])).toEqual(["access:settings"]);
    expect(withRequiredPermissions(["access:products"])).toEqual(["access:products"]);
    for (const tab of SETTINGS_PERMISSIONS)
      expect(withRequiredPermissions([tab, "access:settings"])).toEqual([tab, "access:settings"]);
  });
});
