// The pages of the route table (spec section 2) and the sidebar groups (spec section 1), in one
// place: the sidebar, the top-bar title and the per-page guard all read from here.
import type { PageKey } from "@shared/permissions.ts";
import {
  AwardIcon,
  BugIcon,
  ChartColumnIcon,
  ClipboardListIcon,
  FilePlus2Icon,
  FolderTreeIcon,
  GaugeIcon,
  LayoutDashboardIcon,
  type LucideIcon,
  MessagesSquareIcon,
  PackageIcon,
  PercentIcon,
  SettingsIcon,
  TrendingUpIcon,
  TruckIcon,
} from "lucide-react";

export interface PageInfo {
  title: string;
  path: string;
  icon: LucideIcon;
}

export const PAGES = {
  dashboard: { title: "Dashboard", path: "/dashboard", icon: LayoutDashboardIcon },
  overview: { title: "Overview", path: "/overview", icon: GaugeIcon },
  products: { title: "Products", path: "/products", icon: PackageIcon },
  categories: { title: "Categories", path: "/categories", icon: FolderTreeIcon },
  brands: { title: "Brands", path: "/brands", icon: AwardIcon },
  vendors: { title: "Vendors", path: "/vendors", icon: TruckIcon },
  purchase_orders: { title: "Purchase Orders", path: "/purchase-orders", icon: ClipboardListIcon },
  analytics: { title: "Analytics", path: "/analytics", icon: ChartColumnIcon },
  discount_simulator: { title: "Discount Simulator", path: "/discount-simulator", icon: PercentIcon },
  forecasting: { title: "Forecasting", path: "/forecasting", icon: TrendingUpIcon },
  import: { title: "Create Products", path: "/import", icon: FilePlus2Icon },
  chat: { title: "Chat Archive", path: "/chat", icon: MessagesSquareIcon },
  settings: { title: "Settings", path: "/settings", icon: SettingsIcon },
  ai_validation_debug: { title: "AI Validation Debug", path: "/ai-validation/debug", icon: BugIcon },
} as const satisfies Record<PageKey, PageInfo>;

export type PagePath = (typeof PAGES)[PageKey]["path"];

export interface NavItem {
  page: PageKey;
  /** Shown to admins only (spec section 6: admin-only content is hidden from non-admins). */
  adminOnly?: boolean;
}

export interface NavGroup {
  name: string;
  items: readonly NavItem[];
}

export const NAV_GROUPS: readonly NavGroup[] = [
  { name: "Dashboard", items: [{ page: "dashboard" }, { page: "overview" }] },
  {
    name: "Inventory",
    items: [
      { page: "products" },
      { page: "categories" },
      { page: "brands" },
      { page: "vendors" },
      { page: "purchase_orders" },
      { page: "analytics" },
    ],
  },
  { name: "Tools", items: [{ page: "discount_simulator" }, { page: "forecasting" }] },
  { name: "Product Setup", items: [{ page: "import" }] },
  { name: "Chat", items: [{ page: "chat" }] },
  { name: "Settings", items: [{ page: "settings" }, { page: "ai_validation_debug", adminOnly: true }] },
];

/** Spec section 2: an item is active when the path equals its route or starts with it. */
export function isActivePath(pathname: string, path: string): boolean {
  return pathname === path || pathname.startsWith(path);
}
