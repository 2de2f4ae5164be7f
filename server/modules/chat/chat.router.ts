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
    .input(DaysInputSchema)
    .query(({ ctx, input }) => listMessageDays(ctx.db, ctx.user, input)),
  search: chatProcedure
    .input(SearchInputSchema)
    .query(({ ctx, input }) => searchMessages(ctx.db, ctx.user, input)),
  /** Admins' reads of direct-message rooms. */
  auditLog: permissionProcedure("settings:user_management")
    .input(z.object({ limit: z.number().int().min(1).max(1000).default(100) }).default({ limit: 100 }))
    .query(({ ctx, input }) => listAuditLog(ctx.db, input.limit)),
});
