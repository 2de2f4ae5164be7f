// zod/mini: route search schemas load with the first bundle, so they stay small.
import * as z from "zod/mini";

/** The tab ids of `?tab=` on /settings. */
export const SETTINGS_TAB_IDS = [
  "global",
  "products",
  "vendors",
  "templates",
  "prompts",
  "images",
  "users",
  "data",
] as const;
export type SettingsTabId = (typeof SETTINGS_TAB_IDS)[number];

/** An unknown tab id is dropped, so the page falls back to the default tab. */
export const SettingsSearchSchema = z.object({
  tab: z.catch(z.optional(z.enum(SETTINGS_TAB_IDS)), undefined),
});
