// The settings tabs of spec section 2 "Settings page" and the permission each needs (section 6).
// Each tab's screen is its own lazily loaded module.
import type { SettingsPermission } from "@shared/permissions.ts";
import {
  ClipboardListIcon,
  DatabaseIcon,
  ImagesIcon,
  type LucideIcon,
  PackageIcon,
  SlidersHorizontalIcon,
  SparklesIcon,
  TruckIcon,
  UsersIcon,
} from "lucide-react";
import { type ComponentType, type LazyExoticComponent, lazy } from "react";
import type { SettingsTabId } from "./search.ts";

export interface SettingsTab {
  id: SettingsTabId;
  title: string;
  permission: SettingsPermission;
  icon: LucideIcon;
  component: LazyExoticComponent<ComponentType>;
}

export interface SettingsSection {
  name: string;
  tabs: readonly SettingsTab[];
}

export const SETTINGS_SECTIONS: readonly SettingsSection[] = [
  {
    name: "Inventory Settings",
    tabs: [
      {
        id: "global",
        title: "Global Settings",
        permission: "settings:global",
        icon: SlidersHorizontalIcon,
        component: lazy(() => import("../config/global-settings.tsx")),
      },
      {
        id: "products",
        title: "Product Settings",
        permission: "settings:products",
        icon: PackageIcon,
        component: lazy(() => import("../config/product-settings.tsx")),
      },
      {
        id: "vendors",
        title: "Vendor Settings",
        permission: "settings:vendors",
        icon: TruckIcon,
        component: lazy(() => import("../config/vendor-settings.tsx")),
      },
    ],
  },
  {
    name: "Content Management",
    tabs: [
      {
        id: "templates",
        title: "Template Management",
        permission: "settings:templates",
        icon: ClipboardListIcon,
        component: lazy(() => import("../templates/template-management.tsx")),
      },
      {
        id: "prompts",
        title: "AI Prompts",
        permission: "settings:prompt_management",
        icon: SparklesIcon,
        component: lazy(() => import("../prompts/ai-prompts.tsx")),
      },
      {
        id: "images",
        title: "Reusable Images",
        permission: "settings:library_management",
        icon: ImagesIcon,
        component: lazy(() => import("../images/reusable-images.tsx")),
      },
    ],
  },
  {
    name: "System",
    tabs: [
      {
        id: "users",
        title: "User Management",
        permission: "settings:user_management",
        icon: UsersIcon,
        component: lazy(() => import("../users/user-management.tsx")),
      },
      {
        id: "data",
        title: "Data Management",
        permission: "settings:data_management",
        icon: DatabaseIcon,
        component: lazy(() => import("../dataOps/data-management.tsx")),
      },
    ],
  },
];

export const SETTINGS_TABS: readonly SettingsTab[] = SETTINGS_SECTIONS.flatMap((section) => section.tabs);
