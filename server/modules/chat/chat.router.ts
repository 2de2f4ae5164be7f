import { authedProcedure, router } from "../../trpc/trpc.ts";
import { listChatUsers } from "./chat.service.ts";

export const chatRouter = router({
  /** The chat-user selector of the user form; any signed-in user (see docs/api.md "Chat users"). */
  users: authedProcedure.query(({ ctx }) => listChatUsers(ctx.db)),
});
