import { z } from "zod";
import {
  DaysInputSchema,
  MessagesInputSchema,
  RoomsInputSchema,
  SearchInputSchema,
  ThreadInputSchema,
} from "../../../shared/chat.ts";
import { authedProcedure, permissionProcedure, router } from "../../trpc/trpc.ts";
import {
  getChatAccess,
  getMessages,
  getThread,
  listAuditLog,
  listChatUsers,
  listMessageDays,
  listRooms,
  searchMessages,
} from "./chat.service.ts";

const chatProcedure = permissionProcedure("access:chat");

/**
 * chat.days and GET /chat-api/rooms/:rid/days: the shared input plus `tz`, the reader's IANA time
 * zone whose days the calendar shows (default UTC; an unknown zone is a 400 naming tz).
 */
export const DaysQuerySchema = DaysInputSchema.extend({
  tz: z.string().trim().min(1, "is required").max(64, "is too long").optional(),
});

export const chatRouter = router({
  /** The chat-user selector of the user form; any signed-in user (see docs/api.md "Chat users"). */
  users: authedProcedure.query(({ ctx }) => listChatUsers(ctx.db)),
  /** Whether the caller reads every room, their linked chat user's, or none (and why). */
  access: chatProcedure.query(({ ctx }) => getChatAccess(ctx.db, ctx.user)),
  rooms: chatProcedure.input(RoomsInputSchema).query(({ ctx, input }) => listRooms(ctx.db, ctx.user, input)),
  messages: chatProcedure
    .input(MessagesInputSchema)
    .query(({ ctx, input }) => getMessages(ctx.db, ctx.user, input)),
  thread: chatProcedure
    .input(ThreadInputSchema)
    .query(({ ctx, input }) => getThread(ctx.db, ctx.user, input.tmid)),
  days: chatProcedure
    .input(DaysQuerySchema)
    .query(({ ctx, input }) => listMessageDays(ctx.db, ctx.user, input)),
  search: chatProcedure
    .input(SearchInputSchema)
    .query(({ ctx, input }) => searchMessages(ctx.db, ctx.user, input)),
  /** Admins' reads of direct-message rooms. */
  auditLog: permissionProcedure("settings:user_management")
    .input(z.object({ limit: z.number().int().min(1).max(1000).default(100) }).default({ limit: 100 }))
    .query(({ ctx, input }) => listAuditLog(ctx.db, input.limit)),
});
