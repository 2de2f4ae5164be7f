import { z } from "zod";

export const RunTypeSchema = z.enum(["update", "reset", "chat"]);
export type RunType = z.infer<typeof RunTypeSchema>;

export const CancelInputSchema = z.object({ type: RunTypeSchema.optional() });
export const HistoryInputSchema = z
  .object({ limit: z.coerce.number().int().min(1).max(100).default(20) })
  .default({ limit: 20 });

/** Spec section 9: history lists show at most 20 rows; reload every 60 s; reconnect after 3 s. */
export const HISTORY_LIMIT = 20;
export const HISTORY_REFRESH_MS = 60_000;
export const STREAM_RECONNECT_MS = 3_000;
