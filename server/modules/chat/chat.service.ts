// Chat users (spec section 3 "Chat user"): filled by the chat archive import, read by the user
// form's chat-user selector and served as avatars.
import type { ChatUser } from "../../../shared/users.ts";
import type { Database } from "../../db/database.ts";
import { notFound } from "../../errors.ts";

export async function listChatUsers(db: Database): Promise<ChatUser[]> {
  return db.prisma.chatUser
    .findMany({
      select: { id: true, mongoId: true, name: true, username: true, active: true },
      orderBy: [{ active: "desc" }, { username: "asc" }],
    })
    .then((rows) =>
      rows.map((r) => ({
        id: r.id,
        mongo_id: r.mongoId,
        name: r.name,
        username: r.username,
        active: r.active,
      })),
    );
}

/** Content types an avatar may be served as; anything else goes out as a download of bytes. */
const IMAGE_TYPES = new Set([
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
  "image/avif",
  "image/bmp",
]);

export async function getChatAvatar(
  db: Database,
  mongoId: string,
): Promise<{ bytes: Uint8Array; contentType: string }> {
  const row = await db.prisma.chatUser.findUnique({
    where: { mongoId },
    select: { avatar: true, avatarType: true },
  });
  if (!row?.avatar || row.avatar.length === 0) throw notFound("Avatar not found");
  const type = row.avatarType?.toLowerCase().split(";")[0]?.trim() ?? "";
  return { bytes: row.avatar, contentType: IMAGE_TYPES.has(type) ? type : "application/octet-stream" };
}
