// The AI Validation Debug page's URL state: filters, search, page and the open run, so a link
// reproduces the view. zod/mini: route search schemas load with the first bundle.

import { textParam } from "@client/lib/search-params.ts";
import { AI_CALL_KINDS, AI_CALL_STATUSES, AI_MODES } from "@shared/ai-validation.ts";
import * as z from "zod/mini";

/** A bad value of one parameter is dropped (the default applies) instead of failing the page. */
export const AiDebugSearchSchema = z.object({
  page: z.catch(z.optional(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(100_000))), undefined),
  q: textParam(),
  status: z.catch(z.optional(z.enum(AI_CALL_STATUSES)), undefined),
  kind: z.catch(z.optional(z.enum(AI_CALL_KINDS)), undefined),
  mode: z.catch(z.optional(z.enum(AI_MODES)), undefined),
  run: z.catch(
    z.optional(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(2_147_483_647))),
    undefined,
  ),
});
export type AiDebugSearch = z.infer<typeof AiDebugSearchSchema>;

export const RUNS_PAGE_SIZE = 50;
