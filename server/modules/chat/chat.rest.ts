import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { parseBody } from "../../http/validate.ts";
import type { AppServices } from "../../services.ts";
import { getChatAvatar, listChatUsers } from "./chat.service.ts";

const AvatarParams = z.object({ mongo_id: z.string().min(1).max(100) });

/**
 * Legacy REST of spec section 7 under /chat-api. The spec's client sends no bearer token here, so
 * the browser's session cookie authenticates these reads (an <img> of an avatar carries it too).
 */
export async function chatRestRoutes(app: FastifyInstance, services: AppServices) {
  const opts = { config: { auth: "authenticated" as const } };
  app.get("/chat-api/users", opts, async () => ({
    status: "success",
    users: await listChatUsers(services.db),
  }));
  app.get("/chat-api/avatar/:mongo_id", opts, async (req, reply) => {
    const { mongo_id } = parseBody(AvatarParams, req.params);
    const avatar = await getChatAvatar(services.db, mongo_id);
    return reply
      .header("Content-Type", avatar.contentType)
      .header("Cache-Control", "private, max-age=300")
      .header("Content-Security-Policy", "default-src 'none'; sandbox")
      .send(Buffer.from(avatar.bytes));
  });
}
