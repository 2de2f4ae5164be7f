// The /chat page state in the URL: the open room, a message to scroll to (permalink), a date to
// jump to, the open thread and the search, so every view has a link.

import { textParam } from "@client/lib/search-params.ts";
import * as z from "zod/mini";

const text = (max: number) => textParam(max, 1);

export const ChatSearchSchema = z.object({
  room: text(100),
  msg: text(100),
  date: z.catch(z.optional(z.string().check(z.regex(/^\d{4}-\d\d-\d\d$/))), undefined),
  thread: text(100),
  q: text(500),
  sort: z.catch(z.optional(z.enum(["newest", "best"])), undefined),
});
export type ChatSearch = z.infer<typeof ChatSearchSchema>;
