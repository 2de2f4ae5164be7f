import type { PermissionCode } from "../../../shared/permissions.ts";

/** Changing the library needs the Reusable Images tab; reading it (and the files) also serves imports. */
export const IMAGES_WRITE = "settings:library_management" as const satisfies PermissionCode;
export const IMAGES_READ = [
  "settings:library_management",
  "access:import",
  "create:products",
] as const satisfies readonly PermissionCode[];
