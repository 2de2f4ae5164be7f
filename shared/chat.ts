// The Chat Archive's request schemas and response shapes (docs/api.md "Chat archive"), shared by the
// server's procedures and routes and the page.
import { z } from "zod";

export const ROOM_TYPES = ["c", "p", "d", "l"] as const;
export type RoomType = (typeof ROOM_TYPES)[number];
export const ROOM_TYPE_LABEL: Record<RoomType, string> = {
  c: "Channel",
  p: "Private group",
  d: "Direct messages",
  l: "Livechat",
};

/** Longest search text accepted. */
export const SEARCH_MAX_LENGTH = 500;
export const SEARCH_PAGE_SIZE = 20;
/** "Best match" ranks at most this many of the newest hits. */
export const BEST_MATCH_WINDOW = 2_000;
export const MESSAGES_DEFAULT_LIMIT = 50;
export const MESSAGES_MAX_LIMIT = 200;

const id = z.string().trim().min(1, "is required").max(100, "is too long");

export const RoomsInputSchema = z
  .object({
    type: z.enum(ROOM_TYPES).optional(),
    q: z.string().trim().max(100).optional(),
  })
  .default({});

/** A message id, or a date (YYYY-MM-DD) or date-time (ISO 8601). */
const cursor = z.string().trim().min(1).max(100);

export const MessagesInputSchema = z
  .object({
    rid: id,
    before: cursor.optional(),
    after: cursor.optional(),
    around: cursor.optional(),
    limit: z.coerce.number().int().min(1).max(MESSAGES_MAX_LIMIT).default(MESSAGES_DEFAULT_LIMIT),
  })
  .refine((v) => [v.before, v.after, v.around].filter(Boolean).length <= 1, {
    message: "give at most one of before, after and around",
    path: ["before"],
  });
export type MessagesInput = z.infer<typeof MessagesInputSchema>;

export const ThreadInputSchema = z.object({ tmid: id });

export const SearchInputSchema = z.object({
  q: z
    .string()
    .max(SEARCH_MAX_LENGTH, `must be at most ${SEARCH_MAX_LENGTH} characters`)
    .refine((s) => s.trim() !== "", "type something to search for"),
  page: z.coerce.number().int().min(1).max(500).default(1),
  sort: z.enum(["newest", "best"]).default("newest"),
});
export type SearchInput = z.infer<typeof SearchInputSchema>;

const isoDay = z.string().regex(/^\d{4}-\d\d-\d\d$/, "must be a date (YYYY-MM-DD)");

/**
 * chat.days and GET /chat-api/rooms/:rid/days: `tz` is the reader's IANA time zone whose days the
 * calendar shows (default UTC; the server answers 400 naming tz for a zone it does not know).
 */
export const DaysInputSchema = z.object({
  rid: id,
  from: isoDay,
  to: isoDay,
  tz: z.string().trim().min(1, "is required").max(64, "is too long").optional(),
});

export const ExportInputSchema = z.object({
  format: z.enum(["jsonl", "html"]).default("jsonl"),
  from: isoDay.optional(),
  to: isoDay.optional(),
});

export interface ChatRoom {
  id: string;
  type: RoomType | string;
  /** What the list shows: fname, name, or the members of a direct-message room. */
  name: string;
  topic: string | null;
  members: number;
  message_count: number;
  last_message_at: Date | null;
  archived: boolean;
  /** The room a discussion was opened from. */
  prid: string | null;
}

export interface ChatMessageUser {
  mongo_id: string | null;
  username: string | null;
  name: string | null;
  has_avatar: boolean;
}

export interface ChatReaction {
  emoji: string;
  count: number;
  usernames: string[];
}

export interface ChatFileRef {
  id: string;
  name: string | null;
  type: string | null;
  size: number | null;
  image: boolean;
  /** false: the export had no content for this file (shown as a placeholder). */
  available: boolean;
}

export interface ChatAttachment {
  title: string | null;
  description: string | null;
  text: string | null;
  author_name: string | null;
  /** http(s) only */
  link: string | null;
  file: ChatFileRef | null;
}

export interface ChatMessage {
  id: string;
  rid: string;
  ts: Date;
  user: ChatMessageUser;
  msg: string;
  /** System message type; null for a user's message */
  t: string | null;
  tmid: string | null;
  tcount: number | null;
  tlm: Date | null;
  /** The discussion room this message opened */
  drid: string | null;
  edited_at: Date | null;
  edited_by: string | null;
  reactions: ChatReaction[];
  attachments: ChatAttachment[];
  /** Uploaded files not shown by an attachment */
  files: ChatFileRef[];
  mentions: string[];
}

export interface ChatMessagesPage {
  room: ChatRoom;
  /** Oldest first */
  messages: ChatMessage[];
  has_older: boolean;
  has_newer: boolean;
  /** The message asked for with around=<id>, or the first on the asked date */
  anchor: string | null;
}

export interface ChatThread {
  room: ChatRoom;
  root: ChatMessage;
  replies: ChatMessage[];
}

export interface ChatSearchHit {
  message: ChatMessage;
  room: { id: string; name: string; type: string };
  /** The text around the hit; `hit` parts are the matched words. */
  snippet: { text: string; hit: boolean }[];
}

export interface ChatSearchResult {
  hits: ChatSearchHit[];
  page: number;
  has_more: boolean;
  sort: "newest" | "best";
}

/** What a user may read, and why not when nothing. */
export interface ChatAccessInfo {
  all_rooms: boolean;
  linked: boolean;
  /** Set when the user can read no room: the reason, for the page to show. */
  notice: string | null;
  /** The linked chat user's username (their mentions stand out). */
  chat_username: string | null;
}
