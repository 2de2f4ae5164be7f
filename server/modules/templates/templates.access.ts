import type { PermissionCode } from "../../../shared/permissions.ts";

// Who may call what. Writes need the Template Management tab; reading templates and searching
// products also serve the import page. The field options feed templates, prompts, images and imports.
export const TEMPLATES_WRITE = "settings:templates" as const satisfies PermissionCode;
export const TEMPLATES_READ = [
  "settings:templates",
  "access:import",
  "create:products",
] as const satisfies readonly PermissionCode[];
export const FIELD_OPTIONS_READ = [
  "settings:templates",
  "settings:prompt_management",
  "settings:library_management",
  "access:import",
  "create:products",
] as const satisfies readonly PermissionCode[];
