// The one catalogue of permission codes. The server seeds it into the permissions table at start;
// procedures and routes name codes from here; the client gates pages, tabs and menu items with it.

export const PAGE_KEYS = [
  "dashboard",
  "overview",
  "products",
  "categories",
  "brands",
  "vendors",
  "purchase_orders",
  "analytics",
  "discount_simulator",
  "forecasting",
  "import",
  "chat",
  "settings",
  "ai_validation_debug",
] as const;
export type PageKey = (typeof PAGE_KEYS)[number];

export type PermissionCode = `access:${PageKey}` | SettingsPermission | ActionPermission;

export const SETTINGS_PERMISSIONS = [
  "settings:global",
  "settings:products",
  "settings:vendors",
  "settings:templates",
  "settings:prompt_management",
  "settings:library_management",
  "settings:user_management",
  "settings:data_management",
] as const;
export type SettingsPermission = (typeof SETTINGS_PERMISSIONS)[number];

export const ACTION_PERMISSIONS = [
  "create:products",
  "update:products",
  "create:purchase_orders",
  "update:purchase_orders",
  "receive:purchase_orders",
  "export:reports",
  "update:forecasts",
  "create:promotions",
] as const;
export type ActionPermission = (typeof ACTION_PERMISSIONS)[number];

export function pagePermission(page: PageKey): `access:${PageKey}` {
  return `access:${page}`;
}

export interface PermissionDefinition {
  code: PermissionCode;
  name: string;
  description: string;
  category: string;
}

const PAGE_NAMES: Record<PageKey, string> = {
  dashboard: "Dashboard",
  overview: "Overview",
  products: "Products",
  categories: "Categories",
  brands: "Brands",
  vendors: "Vendors",
  purchase_orders: "Purchase Orders",
  analytics: "Analytics",
  discount_simulator: "Discount Simulator",
  forecasting: "Forecasting",
  import: "Create Products",
  chat: "Chat Archive",
  settings: "Settings",
  ai_validation_debug: "AI Validation Debug",
};

const SETTINGS_NAMES: Record<SettingsPermission, [string, string]> = {
  "settings:global": ["Global Settings", "View and change the global forecasting parameters"],
  "settings:products": ["Product Settings", "View and change per-product forecasting overrides"],
  "settings:vendors": ["Vendor Settings", "View and change per-vendor forecasting defaults"],
  "settings:templates": ["Template Management", "Create, edit and delete product import templates"],
  "settings:prompt_management": ["AI Prompts", "Create, edit and delete AI validation prompts"],
  "settings:library_management": ["Reusable Images", "Upload, edit and delete reusable images"],
  "settings:user_management": ["User Management", "Create, edit and delete users and their permissions"],
  "settings:data_management": ["Data Management", "Run full updates and resets and read their history"],
};

const ACTION_NAMES: Record<ActionPermission, [string, string]> = {
  "create:products": ["Create Products", "Create products in bulk through the import"],
  "update:products": ["Update Products", "Change product data from the inventory pages"],
  "create:purchase_orders": ["Create Purchase Orders", "Draft and place purchase orders"],
  "update:purchase_orders": ["Update Purchase Orders", "Change or cancel open purchase orders"],
  "receive:purchase_orders": ["Receive Purchase Orders", "Record receipts against purchase orders"],
  "export:reports": ["Export Reports", "Download inventory and sales data as files"],
  "update:forecasts": [
    "Override Forecasts",
    "Override the forecast of products, categories, brands and vendors, and remove overrides",
  ],
  "create:promotions": [
    "Create Promotions",
    "Save discount scenarios as planned promotions, edit them until they start, and cancel them",
  ],
};

/** The catalogue category an action permission is listed under. */
function actionCategory(code: ActionPermission): string {
  if (code.endsWith("purchase_orders")) return "Purchasing";
  if (code.endsWith("forecasts")) return "Forecasting";
  if (code.endsWith("promotions")) return "Promotions";
  return "Products";
}

export const PERMISSION_CATALOGUE: readonly PermissionDefinition[] = [
  ...PAGE_KEYS.map((page) => ({
    code: pagePermission(page),
    name: `${PAGE_NAMES[page]} Page`,
    description: `Open the ${PAGE_NAMES[page]} page`,
    category: "Pages",
  })),
  ...SETTINGS_PERMISSIONS.map((code) => ({
    code,
    name: SETTINGS_NAMES[code][0],
    description: SETTINGS_NAMES[code][1],
    category: "Settings",
  })),
  ...ACTION_PERMISSIONS.map((code) => ({
    code,
    name: ACTION_NAMES[code][0],
    description: ACTION_NAMES[code][1],
    category: actionCategory(code),
  })),
];

export const ALL_PERMISSION_CODES: readonly PermissionCode[] = PERMISSION_CATALOGUE.map((p) => p.code);

export function isPermissionCode(value: string): value is PermissionCode {
  return (ALL_PERMISSION_CODES as readonly string[]).includes(value);
}

/** What a procedure or route needs: a code, any one of several codes, or only a signed-in user. */
export type Requirement = PermissionCode | readonly PermissionCode[] | "authenticated";

export interface PermissionHolder {
  is_admin: boolean;
  permissions: readonly string[];
}

export function hasPermission(user: PermissionHolder | null | undefined, need: Requirement): boolean {
  if (!user) return false;
  if (need === "authenticated" || user.is_admin) return true;
  const codes: readonly string[] = typeof need === "string" ? [need] : need;
  return codes.some((code) => user.permissions.includes(code));
}

/** Root redirect order of spec section 2 (brands and chat take no part in it). */
export const ROOT_REDIRECT_ORDER: readonly { page: PageKey; path: string }[] = [
  { page: "dashboard", path: "/dashboard" },
  { page: "overview", path: "/overview" },
  { page: "products", path: "/products" },
  { page: "categories", path: "/categories" },
  { page: "vendors", path: "/vendors" },
  { page: "purchase_orders", path: "/purchase-orders" },
  { page: "analytics", path: "/analytics" },
  { page: "discount_simulator", path: "/discount-simulator" },
  { page: "forecasting", path: "/forecasting" },
  { page: "import", path: "/import" },
  { page: "settings", path: "/settings" },
  { page: "ai_validation_debug", path: "/ai-validation/debug" },
];

export function firstAllowedPath(user: PermissionHolder | null | undefined): string | null {
  for (const { page, path } of ROOT_REDIRECT_ORDER) {
    if (hasPermission(user, pagePermission(page))) return path;
  }
  return null;
}

/**
 * Where a signed-in user lands: the first page of the root redirect order, else a page outside that
 * order they may open (Brands, then Chat Archive), else null (no page at all).
 */
export function landingPath(user: PermissionHolder | null | undefined): string | null {
  const first = firstAllowedPath(user);
  if (first) return first;
  if (hasPermission(user, "access:brands")) return "/brands";
  if (hasPermission(user, "access:chat")) return "/chat";
  return null;
}

/**
 * Permissions that only work together with another: every settings tab opens inside the Settings
 * page, so choosing any `settings:*` tab needs `access:settings` too.
 */
export const REQUIRED_WITH: Readonly<Partial<Record<PermissionCode, readonly PermissionCode[]>>> = {
  "access:settings": SETTINGS_PERMISSIONS,
};

/** The codes that `codes` need but lack (see REQUIRED_WITH). */
export function missingRequiredPermissions(codes: readonly string[]): PermissionCode[] {
  const held = new Set(codes);
  return (Object.entries(REQUIRED_WITH) as [PermissionCode, readonly PermissionCode[]][])
    .filter(([needed, by]) => !held.has(needed) && by.some((c) => held.has(c)))
    .map(([needed]) => needed);
}

/** `codes` with every permission they need added (e.g. a settings tab adds the Settings page). */
export function withRequiredPermissions(codes: readonly string[]): string[] {
  return [...codes, ...missingRequiredPermissions(codes)];
}
