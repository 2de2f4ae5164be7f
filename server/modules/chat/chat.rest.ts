import { Readable } from "node:stream";
import type { FastifyInstance, FastifyReply } from "fastify";
import { z } from "zod";
import {
  type ChatMessage,
  type ChatRoom,
  DaysInputSchema,
  ExportInputSchema,
  MessagesInputSchema,
  RoomsInputSchema,
  SearchInputSchema,
  ThreadInputSchema,
} from "../../../shared/chat.ts";
import { parseBody } from "../../http/validate.ts";
import type { AppServices } from "../../services.ts";
import {
  exportRoomMessages,
  getChatAccess,
  getChatAvatar,
  getChatFile,
  getMessages,
  getThread,
  listChatUsers,
  listMessageDays,
  listRooms,
  searchMessages,
} from "./chat.service.ts";

const AvatarParams = z.object({ mongo_id: z.string().min(1).max(100) });
const RidParams = z.object({ rid: z.string().min(1).max(100) });
const FileParams = z.object({ id: z.string().min(1).max(100) });
const FileQuery = z.object({ thumb: z.enum(["0", "1", "true", "false"]).optional() });

/** A file name for Content-Disposition: ASCII fallback plus the UTF-8 original. */
function disposition(kind: "inline" | "attachment", name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/**
 * Legacy REST of spec section 7 under /chat-api, and the Chat Archive's reads. The spec's client
 * sends no bearer token here, so the browser's session cookie authenticates (an <img> carries it).
 * Every read is limited to the rooms the caller may read (chat.service.ts).
 */
export async function chatRestRoutes(app: FastifyInstance, services: AppServices) {
  const { db } = services;
  const chat = { config: { auth: "access:chat" as const } };
  app.get("/chat-api/users", { config: { auth: "authenticated" as const } }, async () => ({
    status: "success",
    users: await listChatUsers(db),
  }));
  app.get(
    "/chat-api/avatar/:mongo_id",
    { config: { auth: ["access:chat", "settings:user_management"] as const } },
    async (req, reply) => {
      const { mongo_id } = parseBody(AvatarParams, req.params);
      const avatar = await getChatAvatar(db, req.user!, mongo_id);
      return reply
        .header("Content-Type", avatar.contentType)
        .header("Cache-Control", "private, max-age=300")
        .header("Content-Security-Policy", "default-src 'none'; sandbox")
        .send(Buffer.from(avatar.bytes));
    },
  );
  app.get("/chat-api/access", chat, (req) => getChatAccess(db, req.user!));
  app.get("/chat-api/rooms", chat, (req) => listRooms(db, req.user!, parseBody(RoomsInputSchema, req.query)));
  app.get("/chat-api/rooms/:rid/messages", chat, (req) => {
    const { rid } = parseBody(RidParams, req.params);
    return getMessages(db, req.user!, parseBody(MessagesInputSchema, { ...(req.query as object), rid }));
  });
  app.get("/chat-api/rooms/:rid/days", chat, async (req) => {
    const { rid } = parseBody(RidParams, req.params);
    return {
      days: await listMessageDays(
        db,
        req.user!,
        parseBody(DaysInputSchema, { ...(req.query as object), rid }),
      ),
    };
  });
  app.get("/chat-api/threads/:tmid", chat, (req) => {
    const { tmid } = parseBody(ThreadInputSchema, req.params);
    return getThread(db, req.user!, tmid);
  });
  app.get("/chat-api/search", chat, (req) =>
    searchMessages(db, req.user!, parseBody(SearchInputSchema, req.query)),
  );
  app.get("/chat-api/files/:id", chat, async (req, reply) => {
    const { id } = parseBody(FileParams, req.params);
    const { thumb } = parseBody(FileQuery, req.query);
    const file = await getChatFile(db, req.user!, id, { thumbnail: thumb === "1" || thumb === "true" });
    return reply
      .header("Content-Type", file.contentType)
      .header("Content-Disposition", disposition(file.inline ? "inline" : "attachment", file.filename))
      .header("Cache-Control", "private, max-age=3600")
      .header("Content-Security-Policy", "default-src 'none'; sandbox")
      .send(file.bytes);
  });
  app.get("/chat-api/rooms/:rid/export", chat, async (req, reply) => {
    const { rid } = parseBody(RidParams, req.params);
    const opts = parseBody(ExportInputSchema, req.query);
    const source = exportRoomMessages(db, req.user!, rid, opts);
    // The first item is the room: a room the caller may not read fails here, before any byte is sent.
    const first = await source.next();
    const room = (first.value as { room: ChatRoom }).room;
    return sendExport(reply, room, source, opts);
  });
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function sendExport(
  reply: FastifyReply,
  room: ChatRoom,
  source: AsyncGenerator<{ room: ChatRoom } | { messages: ChatMessage[] }>,
  opts: { format: "jsonl" | "html"; from?: string; to?: string },
) {
  const base = `${room.name.replace(/[^\w.-]+/g, "-").slice(0, 60) || room.id}${opts.from ? `-${opts.from}` : ""}${opts.to ? `-to-${opts.to}` : ""}`;
  async function* jsonl() {
    for await (const part of source) {
      if (!("messages" in part)) continue;
      yield part.messages.map((m) => `${JSON.stringify(m)}\n`).join("");
    }
  }
  async function* html() {
    const range = [opts.from && `from ${opts.from}`, opts.to && `to ${opts.to}`].filter(Boolean).join(" ");
    yield `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(room.name)}</title>
<style>body{font:14px/1.45 system-ui,sans-serif;max-width:860px;margin:2rem auto;color:#111}
h1{font-size:20px}.day{margin:1.5rem 0 .5rem;font-weight:600;border-bottom:1px solid #ddd}
.m{margin:.25rem 0;white-space:pre-wrap;word-wrap:break-word}.t{color:#666;font-size:12px}.sys{color:#777;font-style:italic}
.reply{margin-left:1.5rem;border-left:2px solid #ddd;padding-left:.5rem}@media print{body{margin:0}}</style></head><body>
<h1>${escapeHtml(room.name)}</h1><p class="t">${escapeHtml(range || "All messages")} · exported ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC</p>\n`;
    let day = "";
    for await (const part of source) {
      if (!("messages" in part)) continue;
      let out = "";
      for (const m of part.messages) {
        const d = new Date(m.ts).toISOString();
        if (d.slice(0, 10) !== day) {
          day = d.slice(0, 10);
          out += `<div class="day">${day}</div>\n`;
        }
        const who = escapeHtml(m.user.name ?? m.user.username ?? "unknown");
        const files = [...m.files, ...m.attachments.flatMap((a) => (a.file ? [a.file] : []))]
          .map((f) => ` [file: ${escapeHtml(f.name ?? f.id)}${f.available ? "" : " (not in the export)"}]`)
          .join("");
        const text = m.t ? `<span class="sys">${escapeHtml(`${m.t}: ${m.msg}`)}</span>` : escapeHtml(m.msg);
        out += `<div class="m${m.tmid ? " reply" : ""}"><span class="t">${d.slice(11, 16)}</span> <b>${who}</b>${m.edited_at ? ' <span class="t">(edited)</span>' : ""}: ${text}${files}</div>\n`;
      }
      yield out;
    }
    yield "</body></html>\n";
  }
  const isHtml = opts.format === "html";
  return reply
    .header("Content-Type", isHtml ? "text/html; charset=utf-8" : "application/x-ndjson; charset=utf-8")
    .header("Content-Disposition", disposition("attachment", `${base}.${isHtml ? "html" : "jsonl"}`))
    .header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
    .send(Readable.from(isHtml ? html() : jsonl()));
}
