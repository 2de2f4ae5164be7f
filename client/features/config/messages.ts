// The texts of spec section 8 "Settings".
import { errorMessage } from "@client/lib/errors.ts";

export type SettingsScope = "global" | "product" | "vendor";

export const SETTINGS_TEXT = {
  loadFailed: (scope: SettingsScope) => `Failed to load settings: Failed to load ${scope} settings`,
  globalSaved: "Global settings updated successfully",
  globalSaveFailed: (error: unknown) =>
    `Failed to update settings: ${errorMessage(error, "Failed to update global settings")}`,
  rowSaveFailed: (scope: "product" | "vendor", error: unknown) =>
    `Failed to update setting: ${errorMessage(error, `Failed to update ${scope} setting`)}`,
  rowResetFailed: (scope: "product" | "vendor", error: unknown) =>
    `Failed to reset setting: ${errorMessage(error, `Failed to reset ${scope} setting`)}`,
  productSaved: (pid: number) => `Settings updated for product ${pid}`,
  productReset: (pid: number) => `Settings reset for product ${pid}`,
  vendorSaved: (vendor: string) => `Settings updated for vendor ${vendor}`,
  vendorReset: (vendor: string) => `Settings reset for vendor ${vendor}`,
} as const;
