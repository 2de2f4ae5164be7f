// Chat users (spec section 3 "Chat user") and the Chat Archive: rooms, messages, threads, search,
// files and avatars, each query limited to the rooms the caller may read (docs/chat-format.md,
// "Who sees what"): admins every room, others the rooms their linked chat user was subscribed to or
// is listed in. A room outside that set answers exactly as a room that does not exist (404).
import sharp from "sharp";
import type { CurrentUser } from "../../../shared/auth.ts";
import type {
  ChatAccessInfo,
  ChatAttachment,
  ChatFileRef,
  ChatMessage,
  ChatMessagesPage,
  ChatRoom,
  ChatSearchHit,
  ChatSearchResult,
  ChatThread,
  MessagesInput,
  SearchInput,
} from "../../../shared/chat.ts";
import { BEST_MATCH_WINDOW, SEARCH_PAGE_SIZE } from "../../../shared/chat.ts";
import { hasPermission } from "../../../shared/permissions.ts";
import type { ChatUser } from "../../../shared/users.ts";
import type { Database } from "../../db/database.ts";
import { badRequest, notFound } from "../../errors.ts";
import type { StoredAttachment, StoredFile, StoredReaction } from "./import/chat-import.ts";

type Viewer = Pick<CurrentUser, "id" | "is_admin" | "permissions" | "rocket_chat_user_id">;

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

/** Content types an avatar or file may be served as inline; anything else goes out as a download. */
const IMAGE_TYPES = new Set([
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
  "image/avif",
  "image/bmp",
]);

function servedType(type: string | null | undefined): string {
  const t = type?.toLowerCase().split(";")[0]?.trim() ?? "";
  return IMAGE_TYPES.has(t) ? t : "application/octet-stream";
}

// --- access ------------------------------------------------------------------------------------

/** The rooms a viewer may read: every room (admins) or their chat user's rooms (by its mongo id). */
type Access = { all: true } | { all: false; mongoId: string | null; notice: string };

const NOT_LINKED =
  "Your account is not linked to a chat user, so no chat rooms are shared with you. An administrator can link one in Settings → User Management.";
const NOT_IN_ARCHIVE =
  "The chat user linked to your account is not in the chat archive (it may not have been imported yet).";

async function accessOf(db: Database, viewer: Viewer): Promise<Access> {
  if (viewer.is_admin) return { all: true };
  if (viewer.rocket_chat_user_id == null) return { all: false, mongoId: null, notice: NOT_LINKED };
  const rows = await db.prisma.$queryRaw<{ mongo_id: string }[]>`
    SELECT mongo_id FROM chat_users WHERE id = ${viewer.rocket_chat_user_id}`;
  const mongoId = rows[0]?.mongo_id ?? null;
  return { all: false, mongoId, notice: mongoId ? "" : NOT_IN_ARCHIVE };
}

export async function getChatAccess(db: Database, viewer: Viewer): Promise<ChatAccessInfo> {
  const access = await accessOf(db, viewer);
  const linked =
    viewer.rocket_chat_user_id == null
      ? null
      : ((
          await db.prisma.$queryRaw<{ mongo_id: string; username: string }[]>`
            SELECT mongo_id, username FROM chat_users WHERE id = ${viewer.rocket_chat_user_id}`
        )[0] ?? null);
  const chat_username = linked?.username ?? null;
  if (access.all) return { all_rooms: true, linked: Boolean(linked), notice: null, chat_username };
  if (!access.mongoId) return { all_rooms: false, linked: false, notice: access.notice, chat_username };
  const [{ n }] = (await db.prisma.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM chat_room_members WHERE user_mongo_id = ${access.mongoId}`) as [
    { n: number },
  ];
  return {
    all_rooms: false,
    linked: true,
    notice: n === 0 ? "The chat user linked to your account was not a member of any archived room." : null,
    chat_username,
  };
}

/** SQL condition "room <col> is readable" for an access, with its parameter. */
function readable(access: Access, col: string, param: number): { sql: string; params: unknown[] } {
  if (access.all) return { sql: "true", params: [] };
  return {
    sql: `${col} IN (SELECT rid FROM chat_room_members WHERE user_mongo_id = $${param})`,
    params: [access.mongoId ?? ""],
  };
}

async function sql<T>(db: Database, text: string, params: unknown[] = []): Promise<T[]> {
  return db.prisma.$queryRawUnsafe<T[]>(text, ...params);
}

// --- rooms -------------------------------------------------------------------------------------

const ROOM_COLUMNS = `r.id, r.type, coalesce(r.fname, r.name, array_to_string(r.usernames, ', '), r.id) AS name,
  r.topic, r.message_count, r.last_message_at, r.archived, r.prid,
  (SELECT count(*)::int FROM chat_room_members x WHERE x.rid = r.id) AS members`;

interface RoomRow {
  id: string;
  type: string;
  name: string;
  topic: string | null;
  message_count: number;
  last_message_at: Date | null;
  archived: boolean;
  prid: string | null;
  members: number;
}

function toRoom(r: RoomRow): ChatRoom {
  return {
    id: r.id,
    type: r.type,
    name: r.name,
    topic: r.topic,
    members: r.members,
    message_count: r.message_count,
    last_message_at: r.last_message_at,
    archived: r.archived,
    prid: r.prid,
  };
}

export async function listRooms(
  db: Database,
  viewer: Viewer,
  filter: { type?: string; q?: string } = {},
): Promise<{ rooms: ChatRoom[]; access: ChatAccessInfo }> {
  const access = await accessOf(db, viewer);
  const info = await getChatAccess(db, viewer);
  if (!access.all && !access.mongoId) return { rooms: [], access: info };
  const r = readable(access, "r.id", 1);
  const params: unknown[] = [...r.params];
  let where = r.sql;
  if (filter.type) {
    params.push(filter.type);
    where += ` AND r.type = $${params.length}`;
  }
  if (filter.q) {
    params.push(`%${filter.q.replace(/[\\%_]/g, "\\$&")}%`);
    where += ` AND coalesce(r.fname, r.name, array_to_string(r.usernames, ', ')) ILIKE $${params.length}`;
  }
  const rows = await sql<RoomRow>(
    db,
    `SELECT ${ROOM_COLUMNS} FROM chat_rooms r WHERE ${where}
     ORDER BY r.archived, r.last_message_at DESC NULLS LAST, name`,
    params,
  );
  return { rooms: rows.map(toRoom), access: info };
}

/** The room, if the viewer may read it; else 404 (the same answer as for a room that does not exist). */
async function readableRoom(db: Database, access: Access, rid: string): Promise<ChatRoom> {
  const r = readable(access, "r.id", 2);
  const [row] = await sql<RoomRow>(
    db,
    `SELECT ${ROOM_COLUMNS} FROM chat_rooms r WHERE r.id = $1 AND ${r.sql}`,
    [rid, ...r.params],
  );
  if (!row) throw notFound(`Chat room ${rid} not found`);
  return toRoom(row);
}

/** An admin reading a direct-message room is recorded (at most once per 10 minutes per room). */
async function auditRead(db: Database, viewer: Viewer, access: Access, room: ChatRoom, action: string) {
  if (!access.all || room.type !== "d") return;
  await db.prisma.$executeRaw`
    INSERT INTO chat_audit_log (user_id, rid, action)
    SELECT ${viewer.id}, ${room.id}, ${action}
    WHERE NOT EXISTS (SELECT 1 FROM chat_audit_log WHERE user_id = ${viewer.id} AND rid = ${room.id}
                      AND action = ${action} AND at > now() - interval '10 minutes')`;
}

export async function listAuditLog(db: Database, limit = 100) {
  return sql<{ id: number; user_id: number; username: string | null; rid: string; action: string; at: Date }>(
    db,
    `SELECT a.id, a.user_id, u.username, a.rid, a.action, a.at FROM chat_audit_log a
     LEFT JOIN users u ON u.id = a.user_id ORDER BY a.id DESC LIMIT $1`,
    [limit],
  );
}

// --- messages ----------------------------------------------------------------------------------

const MESSAGE_COLUMNS = `m.id, m.rid, m.ts, m.user_mongo_id, m.username, m.user_name, m.msg, m.t, m.tmid, m.tcount,
  m.tlm, m.drid, m.edited_at, m.edited_by, m.reactions, m.attachments, m.files, m.file_ids, m.mentions,
  (cu.avatar_id IS NOT NULL) AS has_avatar, coalesce(m.user_name, cu.name) AS display_name`;
const MESSAGE_FROM = "chat_messages m LEFT JOIN chat_users cu ON cu.mongo_id = m.user_mongo_id";

interface MessageRow {
  id: string;
  rid: string;
  ts: Date;
  user_mongo_id: string | null;
  username: string | null;
  user_name: string | null;
  display_name: string | null;
  msg: string;
  t: string | null;
  tmid: string | null;
  tcount: number | null;
  tlm: Date | null;
  drid: string | null;
  edited_at: Date | null;
  edited_by: string | null;
  reactions: StoredReaction[] | null;
  attachments: StoredAttachment[] | null;
  files: StoredFile[] | null;
  file_ids: string[];
  mentions: string[];
  has_avatar: boolean;
}

interface FileRow {
  id: string;
  content_type: string | null;
  length: bigint | number;
  filename: string | null;
  available: boolean;
}

/** Messages for the API, with each file's availability (one query for the whole page). */
async function toMessages(db: Database, rows: MessageRow[]): Promise<ChatMessage[]> {
  const ids = [...new Set(rows.flatMap((r) => r.file_ids ?? []))];
  const files = new Map<string, FileRow>();
  if (ids.length) {
    for (const f of await sql<FileRow>(
      db,
      `SELECT id, content_type, length, filename, data IS NOT NULL AS available FROM chat_files
       WHERE kind = 'upload' AND id = ANY($1::text[])`,
      [ids],
    ))
      files.set(f.id, f);
  }
  const ref = (id: string, meta?: Partial<StoredFile>): ChatFileRef => {
    const f = files.get(id);
    const type = f?.content_type ?? meta?.type ?? null;
    return {
      id,
      name: meta?.name ?? f?.filename ?? null,
      type,
      size: f ? Number(f.length) : (meta?.size ?? null),
      image: Boolean(type?.startsWith("image/")),
      available: Boolean(f?.available),
    };
  };
  return rows.map((r) => {
    const stored = r.files ?? [];
    const attachments: ChatAttachment[] = (r.attachments ?? []).map((a) => ({
      title: a.title,
      description: a.description,
      text: a.text,
      author_name: a.author_name,
      link: a.link && /^https?:\/\//i.test(a.link) && !a.file_id ? a.link : null,
      file: a.file_id ? ref(a.file_id, stored.find((f) => f.id === a.file_id) ?? { name: a.title }) : null,
    }));
    const shown = new Set(attachments.flatMap((a) => (a.file ? [a.file.id] : [])));
    return {
      id: r.id,
      rid: r.rid,
      ts: r.ts,
      user: {
        mongo_id: r.user_mongo_id,
        username: r.username,
        name: r.display_name,
        has_avatar: Boolean(r.has_avatar),
      },
      msg: r.msg,
      t: r.t,
      tmid: r.tmid,
      tcount: r.tcount,
      tlm: r.tlm,
      drid: r.drid,
      edited_at: r.edited_at,
      edited_by: r.edited_by,
      reactions: (r.reactions ?? []).map((x) => ({
        emoji: x.emoji,
        count: x.usernames.length,
        usernames: x.usernames,
      })),
      attachments,
      files: stored.filter((f) => !shown.has(f.id)).map((f) => ref(f.id, f)),
      mentions: r.mentions ?? [],
    };
  });
}

/** A cursor: a message of this room (its ts and id), or a date / date-time. */
async function resolveCursor(
  db: Database,
  rid: string,
  field: string,
  value: string,
): Promise<{ ts: Date; id: string | null }> {
  if (/^\d{4}-\d\d-\d\d([T ][\d:.]+(Z|[+-]\d\d:?\d\d)?)?$/.test(value)) {
    const ts = new Date(value.length === 10 ? `${value}T00:00:00Z` : value);
    // The calendar day as written must exist (2025-02-30 does not); a date-time with an offset
    // (a reader's local midnight, 2025-03-01T00:00:00+09:00) is another UTC day, and fine.
    const day = value.slice(0, 10);
    if (Number.isNaN(ts.getTime()) || new Date(`${day}T00:00:00Z`).toISOString().slice(0, 10) !== day)
      throw badRequest(`not a date: ${value}`, field);
    return { ts, id: null };
  }
  const [row] = await sql<{ ts: Date; id: string }>(
    db,
    "SELECT ts, id FROM chat_messages WHERE id = $1 AND rid = $2",
    [value, rid],
  );
  if (!row) throw badRequest(`no message ${value} in this room`, field);
  return row;
}

/** Room timeline: thread replies appear only in their thread (unless also sent to the room). */
const TIMELINE = "(m.tmid IS NULL OR m.tshow)";

export async function getMessages(
  db: Database,
  viewer: Viewer,
  input: MessagesInput,
): Promise<ChatMessagesPage> {
  const access = await accessOf(db, viewer);
  const room = await readableRoom(db, access, input.rid);
  const limit = input.limit;
  const page = async (
    dir: "older" | "newer",
    from: { ts: Date; id: string | null } | null,
    inclusive: boolean,
    n: number,
  ) => {
    const params: unknown[] = [input.rid, n + 1];
    let cond = "";
    if (from?.id === null) {
      // A date cuts between days: older = before it, newer = from it on.
      params.push(from.ts);
      cond = ` AND m.ts ${dir === "older" ? "<" : ">="} $3`;
    } else if (from) {
      params.push(from.ts, from.id);
      const op = dir === "older" ? (inclusive ? "<=" : "<") : inclusive ? ">=" : ">";
      cond = ` AND (m.ts, m.id) ${op} ($3, $4)`;
    }
    const rows = await sql<MessageRow>(
      db,
      `SELECT ${MESSAGE_COLUMNS} FROM ${MESSAGE_FROM} WHERE m.rid = $1 AND ${TIMELINE}${cond}
       ORDER BY m.ts ${dir === "older" ? "DESC" : "ASC"}, m.id ${dir === "older" ? "DESC" : "ASC"} LIMIT $2`,
      params,
    );
    const more = rows.length > n;
    const kept = rows.slice(0, n);
    return { rows: dir === "older" ? kept.reverse() : kept, more };
  };

  let rows: MessageRow[];
  let hasOlder = false;
  let hasNewer = false;
  let anchor: string | null = null;
  if (input.before) {
    const c = await resolveCursor(db, input.rid, "before", input.before);
    const p = await page("older", c, false, limit);
    rows = p.rows;
    hasOlder = p.more;
    hasNewer = true;
  } else if (input.after) {
    const c = await resolveCursor(db, input.rid, "after", input.after);
    const p = await page("newer", c, false, limit);
    rows = p.rows;
    hasNewer = p.more;
    hasOlder = true;
  } else if (input.around) {
    const c = await resolveCursor(db, input.rid, "around", input.around);
    const half = Math.floor(limit / 2);
    const newer = await page("newer", c, true, limit - half);
    const older = await page("older", c, false, half);
    rows = [...older.rows, ...newer.rows];
    hasOlder = older.more;
    hasNewer = newer.more;
    anchor = c.id ?? newer.rows[0]?.id ?? older.rows[older.rows.length - 1]?.id ?? null;
  } else {
    const p = await page("older", null, false, limit);
    rows = p.rows;
    hasOlder = p.more;
  }
  await auditRead(db, viewer, access, room, "read_messages");
  return { room, messages: await toMessages(db, rows), has_older: hasOlder, has_newer: hasNewer, anchor };
}

export async function getThread(db: Database, viewer: Viewer, tmid: string): Promise<ChatThread> {
  const access = await accessOf(db, viewer);
  const r = readable(access, "m.rid", 2);
  const [root] = await sql<MessageRow>(
    db,
    `SELECT ${MESSAGE_COLUMNS} FROM ${MESSAGE_FROM} WHERE m.id = $1 AND ${r.sql}`,
    [tmid, ...r.params],
  );
  if (!root) throw notFound(`Thread ${tmid} not found`);
  const room = await readableRoom(db, access, root.rid);
  const replies = await sql<MessageRow>(
    db,
    `SELECT ${MESSAGE_COLUMNS} FROM ${MESSAGE_FROM} WHERE m.tmid = $1 AND m.rid = $2 ORDER BY m.ts, m.id LIMIT 2000`,
    [tmid, root.rid],
  );
  await auditRead(db, viewer, access, room, "read_thread");
  const [rootMessage, ...rest] = await toMessages(db, [root, ...replies]);
  return { room, root: rootMessage!, replies: rest };
}

/** Time zones the database was found to know, by the name asked for in lower case (`knownZone`). */
const ZONES = new Map<string, string>();

/**
 * The database's name for an IANA time zone, or a 400 naming `field`. Both must know it: Node's ICU
 * (Intl) decides what a time zone is (so a POSIX string such as "FOO3", which PostgreSQL would take
 * as three hours west of UTC, is refused), and the database, which does the arithmetic, must have it
 * in its own tz data (looked up in pg_timezone_names, never tried: an unknown zone is no database
 * error, so never a 500).
 */
async function knownZone(db: Database, tz: string, field = "tz"): Promise<string> {
  const cached = ZONES.get(tz.toLowerCase());
  if (cached) return cached;
  const unknown = () =>
    badRequest(`unknown time zone: ${tz} (give an IANA name such as Europe/Berlin)`, field);
  let canonical: string;
  try {
    canonical = new Intl.DateTimeFormat("en-US", { timeZone: tz }).resolvedOptions().timeZone;
  } catch {
    throw unknown();
  }
  // The name as given first (Asia/Calcutta stays Asia/Calcutta), then ICU's canonical one.
  const [row] = await sql<{ name: string }>(
    db,
    `SELECT name FROM pg_timezone_names WHERE lower(name) IN (lower($1), lower($2))
     ORDER BY (name = $1) DESC, (lower(name) = lower($1)) DESC, name LIMIT 1`,
    [tz, canonical],
  );
  if (!row) throw unknown();
  if (ZONES.size < 2000) ZONES.set(tz.toLowerCase(), row.name);
  return row.name;
}

/**
 * Which days of [from, to] have messages in the room (the jump-to-date calendar). The days are
 * those of the time zone `tz` (IANA, default UTC), the reader's: from and to are days there, a day
 * runs from its midnight there to the next (23 or 25 hours across a daylight-saving change), and a
 * message at 07:30 UTC on 2 March is on 1 March in Los Angeles.
 */
export async function listMessageDays(
  db: Database,
  viewer: Viewer,
  input: { rid: string; from: string; to: string; tz?: string | undefined },
): Promise<string[]> {
  const zone = input.tz === undefined ? "UTC" : await knownZone(db, input.tz);
  const access = await accessOf(db, viewer);
  await readableRoom(db, access, input.rid);
  const rows = await sql<{ day: string }>(
    db,
    `SELECT DISTINCT to_char(m.ts AT TIME ZONE $4::text, 'YYYY-MM-DD') AS day FROM chat_messages m
     WHERE m.rid = $1
       AND m.ts >= $2::date::timestamp AT TIME ZONE $4::text
       AND m.ts < ($3::date + 1)::timestamp AT TIME ZONE $4::text
       AND ${TIMELINE} ORDER BY 1`,
    [input.rid, input.from, input.to, zone],
  );
  return rows.map((r) => r.day);
}

// --- search ------------------------------------------------------------------------------------

export interface ParsedSearch {
  text: string;
  from: string[];
  in: string[];
  hasFile: boolean;
  before: Date | null;
  after: Date | null;
}

/** Splits operators (from:, in:, has:file, before:, after:) from the words; quoted phrases stay. */
export function parseSearch(q: string): ParsedSearch {
  const out: ParsedSearch = { text: "", from: [], in: [], hasFile: false, before: null, after: null };
  const words: string[] = [];
  const token = /"[^"]*"?|\S+/g;
  for (const m of q.matchAll(token)) {
    const t = m[0];
    const op = /^(from|in|has|before|after):(.*)$/i.exec(t);
    if (!op || t.startsWith('"')) {
      words.push(t);
      continue;
    }
    const key = op[1]!.toLowerCase();
    const value = op[2]!.replace(/^["@#]|"$/g, "").trim();
    if (!value) throw badRequest(`${key}: needs a value`, "q");
    if (key === "from") out.from.push(value.toLowerCase());
    else if (key === "in") out.in.push(value.toLowerCase());
    else if (key === "has") {
      if (!/^(file|files|attachment)$/i.test(value))
        throw badRequest(`has:${value}: only has:file is known`, "q");
      out.hasFile = true;
    } else {
      const d = new Date(`${value}T00:00:00Z`);
      if (
        !/^\d{4}-\d\d-\d\d$/.test(value) ||
        Number.isNaN(d.getTime()) ||
        d.toISOString().slice(0, 10) !== value
      )
        throw badRequest(`${key}:${value}: not a date (YYYY-MM-DD)`, "q");
      if (key === "before") out.before = d;
      else out.after = d;
    }
  }
  out.text = words.join(" ").trim();
  return out;
}

const HIT_START = "\u0002";
const HIT_END = "\u0003";

function snippetParts(headline: string): { text: string; hit: boolean }[] {
  const parts: { text: string; hit: boolean }[] = [];
  let rest = headline;
  while (rest.length) {
    const s = rest.indexOf(HIT_START);
    if (s < 0) {
      parts.push({ text: rest, hit: false });
      break;
    }
    if (s > 0) parts.push({ text: rest.slice(0, s), hit: false });
    const e = rest.indexOf(HIT_END, s);
    const end = e < 0 ? rest.length : e;
    parts.push({ text: rest.slice(s + 1, end), hit: true });
    rest = e < 0 ? "" : rest.slice(e + 1);
  }
  return parts.filter((p) => p.text !== "");
}

/** The longest first walk over the newest messages a reader may see, and the most all walks may read. */
const FIRST_WALK = 5_000;
const MAX_WALK = 200_000;
/**
 * Best match reads at most this many of the newest messages for its window of hits when they
 * hold enough for the page asked for: a word in 3 % of the messages fills a window of 2,000 only
 * after ~70,000 of them.
 */
const BEST_MATCH_WALK = 50_000;

/**
 * The newest `need` messages matching the words among those the filters let through (with their
 * rank when `rank`). The words' GIN index finds every hit but not the newest first: for a word in
 * 4 % of 1M messages it fetches 40,000 rows to keep 21 (300 ms and more), while walking the
 * messages newest first finds them in the first 500. Which is better depends on how common the
 * words are, which the planner guesses badly (phrases and words that come together worst). So the
 * newest FIRST_WALK messages are walked first (a few ms); while they hold too few hits, the next
 * walk reads as many older messages as the hits seen so far say it needs (at most MAX_WALK);
 * when even that would not do, the words are rare and the index finds the rest among the older
 * messages. Every step keeps the exact order: newest first, ties by id.
 */
async function newestHits(
  db: Database,
  filters: string,
  query: string,
  baseParams: unknown[],
  need: number,
  opts: {
    /** Rank the hits (best match). */
    rank?: boolean;
    /** Most messages the walks may read before the index takes over. */
    budget: number;
    /** When the budget would not find `need` hits, this many will do (best match: the page's). */
    enough: number;
  },
): Promise<{ id: string; ts: Date; rank: number }[]> {
  const rank = opts.rank ?? false;
  const hits: { id: string; ts: Date; rank: number }[] = [];
  const n = baseParams.length;
  let edge: { ts: Date; id: string } | null = null;
  // A first page of a common word needs ~2,000 messages; a rare word leaves the walks early anyway.
  let walk = Math.min(FIRST_WALK, Math.max(2_000, need * 100));
  let walked = 0;
  for (;;) {
    const older: string = edge ? ` AND (m.ts, m.id) < ($${n + 1}::timestamptz, $${n + 2}::text)` : "";
    type Row = { id: string; ts: Date; rank: number; edge: boolean; walked: number };
    // The walk keeps each message's verdict (and rank), not its vector: a few bytes a row.
    const rows: Row[] = await sql<Row>(
      db,
      `WITH w AS MATERIALIZED (
         SELECT m.id, m.ts, m.search @@ ${query} AS hit,
           ${rank ? `CASE WHEN m.search @@ ${query} THEN ts_rank_cd(m.search, ${query}) END` : "0::real"} AS rank
         FROM chat_messages m WHERE ${filters}${older} ORDER BY m.ts DESC, m.id DESC LIMIT ${walk})
       (SELECT id, ts, rank, false AS edge, 0 AS walked FROM w WHERE hit ORDER BY ts DESC, id DESC LIMIT ${need - hits.length})
       UNION ALL
       (SELECT id, ts, 0::real, true, (SELECT count(*)::int FROM w) FROM w ORDER BY ts, id LIMIT 1)`,
      edge ? [...baseParams, edge.ts, edge.id] : baseParams,
    );
    const last: Row | undefined = rows.find((r) => r.edge);
    for (const r of rows) if (!r.edge) hits.push({ id: r.id, ts: r.ts, rank: Number(r.rank) });
    // Enough, or nothing older left to walk.
    if (hits.length >= need || !last || last.walked < walk) return hits;
    edge = { ts: last.ts, id: last.id };
    walked += last.walked;
    // Rows still to read for `k` more hits, at the rate seen so far (with a margin).
    const rowsFor = (k: number) =>
      hits.length ? Math.ceil((k * walked * 1.5) / hits.length) : Number.POSITIVE_INFINITY;
    const left = opts.budget - walked;
    if (rowsFor(need - hits.length) > left) {
      // The budget would not do for all: a window that already fills the page will.
      if (hits.length >= opts.enough) return hits;
      if (rowsFor(opts.enough - hits.length) > left) break;
    }
    walk = Math.max(2_000, Math.min(left, rowsFor(need - hits.length)));
  }
  // Rare words: the rest of the hits older than the walk, as the planner finds best (the index).
  const rest = await sql<{ id: string; ts: Date; rank: number }>(
    db,
    `SELECT m.id, m.ts, ${rank ? `ts_rank_cd(m.search, ${query})` : "0::real"} AS rank
     FROM chat_messages m WHERE ${filters} AND m.search @@ ${query}
       AND (m.ts, m.id) < ($${n + 1}::timestamptz, $${n + 2}::text)
     ORDER BY m.ts DESC, m.id DESC LIMIT ${need - hits.length}`,
    [...baseParams, edge.ts, edge.id],
  );
  for (const r of rest) hits.push({ id: r.id, ts: r.ts, rank: Number(r.rank) });
  return hits;
}

export async function searchMessages(
  db: Database,
  viewer: Viewer,
  input: SearchInput,
): Promise<ChatSearchResult> {
  const access = await accessOf(db, viewer);
  const empty = { hits: [], page: input.page, has_more: false, sort: input.sort } satisfies ChatSearchResult;
  if (!access.all && !access.mongoId) return empty;
  const parsed = parseSearch(input.q);
  if (
    !parsed.text &&
    !parsed.from.length &&
    !parsed.in.length &&
    !parsed.hasFile &&
    !parsed.before &&
    !parsed.after
  )
    throw badRequest("type something to search for", "q");

  const params: unknown[] = [];
  const p = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  // Conditions other than the words: the rooms, from:, has:file and the dates.
  const conds: string[] = ["m.t IS NULL"];
  // The rooms to search: readable ones, narrowed by in:
  let roomIds: string[] | null = null;
  if (!access.all || parsed.in.length) {
    const r = readable(access, "r.id", 1);
    const rooms = await sql<{ id: string; name: string | null; fname: string | null }>(
      db,
      `SELECT r.id, r.name, r.fname FROM chat_rooms r WHERE ${r.sql}`,
      r.params,
    );
    roomIds = rooms.map((x) => x.id);
    if (parsed.in.length) {
      const wanted = new Set(parsed.in);
      roomIds = rooms
        .filter(
          (x) =>
            wanted.has((x.name ?? "").toLowerCase()) ||
            wanted.has((x.fname ?? "").toLowerCase()) ||
            wanted.has(x.id.toLowerCase()),
        )
        .map((x) => x.id);
      if (roomIds.length === 0)
        throw badRequest(`in:${parsed.in.join(", in:")}: no room of that name you can read`, "q");
    }
    if (roomIds.length === 0) return empty;
  }
  if (roomIds) conds.push(`m.rid = ANY(${p(roomIds)}::text[])`);
  if (parsed.from.length) {
    const ids = await sql<{ mongo_id: string; username: string }>(
      db,
      "SELECT mongo_id, lower(username) AS username FROM chat_users WHERE lower(username) = ANY($1::text[])",
      [parsed.from],
    );
    // Messages keep their author's id (an index with ts); a username no longer in the users file
    // still matches by name.
    const unknown = parsed.from.filter((u) => !ids.some((k) => k.username === u));
    const byId = `m.user_mongo_id = ANY(${p(ids.map((x) => x.mongo_id))}::text[])`;
    conds.push(unknown.length ? `(${byId} OR lower(m.username) = ANY(${p(unknown)}::text[]))` : byId);
  }
  if (parsed.hasFile) conds.push("m.has_file");
  if (parsed.after) conds.push(`m.ts >= ${p(parsed.after)}`);
  if (parsed.before) conds.push(`m.ts < ${p(parsed.before)}`);
  const filters = conds.join(" AND ");
  const offset = (input.page - 1) * SEARCH_PAGE_SIZE;
  const need = offset + SEARCH_PAGE_SIZE + 1;
  let ids: { id: string }[];
  if (!parsed.text) {
    ids = await sql<{ id: string }>(
      db,
      `SELECT m.id FROM chat_messages m WHERE ${filters} ORDER BY m.ts DESC, m.id DESC
       LIMIT ${p(SEARCH_PAGE_SIZE + 1)} OFFSET ${p(offset)}`,
      params,
    );
  } else {
    const t = p(parsed.text);
    const query = `(websearch_to_tsquery('english', ${t}) || websearch_to_tsquery('simple', ${t}))`;
    if (input.sort === "best") {
      // Best match: the newest BEST_MATCH_WINDOW hits, by rank (then newest first).
      const window = await newestHits(db, filters, query, params, BEST_MATCH_WINDOW, {
        rank: true,
        budget: BEST_MATCH_WALK,
        enough: need,
      });
      window.sort((a, b) => b.rank - a.rank || b.ts.getTime() - a.ts.getTime() || (a.id < b.id ? 1 : -1));
      ids = window.slice(offset, need);
    } else
      ids = (await newestHits(db, filters, query, params, need, { budget: MAX_WALK, enough: need })).slice(
        offset,
      );
  }
  const hasMore = ids.length > SEARCH_PAGE_SIZE;
  const pageIds = ids.slice(0, SEARCH_PAGE_SIZE).map((x) => x.id);
  if (pageIds.length === 0) return empty;
  const rows = await sql<MessageRow & { headline: string | null; room_name: string; room_type: string }>(
    db,
    `SELECT ${MESSAGE_COLUMNS},
       ${
         parsed.text
           ? `ts_headline('english', translate(m.msg, E'\\x02\\x03', ''), (websearch_to_tsquery('english', $2) || websearch_to_tsquery('simple', $2)),
               'StartSel=' || chr(2) || ', StopSel=' || chr(3) || ', MaxWords=30, MinWords=10, MaxFragments=2, FragmentDelimiter=" … "')`
           : "left(m.msg, 240)"
       } AS headline,
       coalesce(r.fname, r.name, array_to_string(r.usernames, ', '), r.id) AS room_name, r.type AS room_type
     FROM ${MESSAGE_FROM} JOIN chat_rooms r ON r.id = m.rid WHERE m.id = ANY($1::text[])`,
    parsed.text ? [pageIds, parsed.text] : [pageIds],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const ordered = pageIds.map((id) => byId.get(id)).filter((r): r is NonNullable<typeof r> => !!r);
  const messages = await toMessages(db, ordered);
  const hits: ChatSearchHit[] = ordered.map((r, i) => ({
    message: messages[i]!,
    room: { id: r.rid, name: r.room_name, type: r.room_type },
    snippet: snippetParts(r.headline ?? ""),
  }));
  return { hits, page: input.page, has_more: hasMore, sort: input.sort };
}

// --- files and avatars ---------------------------------------------------------------------------

export async function getChatFile(
  db: Database,
  viewer: Viewer,
  id: string,
  opts: { thumbnail?: boolean } = {},
): Promise<{ bytes: Buffer; contentType: string; filename: string; inline: boolean }> {
  const access = await accessOf(db, viewer);
  const r = readable(access, "f.rid", 2);
  const [row] = await sql<{
    filename: string | null;
    content_type: string | null;
    data: Uint8Array | null;
    thumbnail: Uint8Array | null;
  }>(
    db,
    `SELECT f.filename, f.content_type, ${opts.thumbnail ? "f.thumbnail, CASE WHEN f.thumbnail IS NULL THEN f.data END AS data" : "f.data, NULL::bytea AS thumbnail"}
     FROM chat_files f WHERE f.id = $1 AND f.kind = 'upload' AND ${r.sql}`,
    [id, ...r.params],
  );
  if (!row) throw notFound(`File ${id} not found`);
  const type = servedType(row.content_type);
  const filename = row.filename ?? id;
  if (opts.thumbnail) {
    if (row.thumbnail)
      return { bytes: Buffer.from(row.thumbnail), contentType: "image/webp", filename, inline: true };
    if (!row.data) throw notFound(`File ${id} is not in the archive (the export had no content for it)`);
    if (type === "application/octet-stream") throw notFound(`File ${id} has no thumbnail (not an image)`);
    let thumb: Buffer;
    try {
      thumb = await sharp(Buffer.from(row.data), { limitInputPixels: 100_000_000 })
        .rotate()
        .resize(480, 360, { fit: "inside", withoutEnlargement: true })
        .webp({ quality: 78 })
        .toBuffer();
    } catch {
      throw notFound(`File ${id} has no thumbnail (its image cannot be read)`);
    }
    await db.prisma.$executeRaw`UPDATE chat_files SET thumbnail = ${thumb} WHERE id = ${id}`;
    return { bytes: thumb, contentType: "image/webp", filename, inline: true };
  }
  if (!row.data) throw notFound(`File ${id} is not in the archive (the export had no content for it)`);
  return {
    bytes: Buffer.from(row.data),
    contentType: type,
    filename,
    inline: type !== "application/octet-stream",
  };
}

/**
 * An avatar: to admins, to users holding settings:user_management (the user form's chat-user
 * selector shows them), and to users who share a room with its owner.
 */
export async function getChatAvatar(
  db: Database,
  viewer: Viewer,
  mongoId: string,
): Promise<{ bytes: Uint8Array; contentType: string }> {
  let allowed = viewer.is_admin || hasPermission(viewer as CurrentUser, "settings:user_management");
  if (!allowed) {
    const access = await accessOf(db, viewer);
    if (!access.all && access.mongoId) {
      const shared = await db.prisma.$queryRaw<{ ok: boolean }[]>`
        SELECT EXISTS (SELECT 1 FROM chat_room_members a JOIN chat_room_members b ON a.rid = b.rid
                       WHERE a.user_mongo_id = ${access.mongoId} AND b.user_mongo_id = ${mongoId}) AS ok`;
      allowed = access.mongoId === mongoId || Boolean(shared[0]?.ok);
    }
  }
  if (!allowed) throw notFound("Avatar not found");
  const row = await db.prisma.chatUser.findUnique({
    where: { mongoId },
    select: { avatar: true, avatarType: true },
  });
  if (!row?.avatar || row.avatar.length === 0) throw notFound("Avatar not found");
  return { bytes: row.avatar, contentType: servedType(row.avatarType) };
}

// --- export ------------------------------------------------------------------------------------

/** Every message of a room (or of [from, to]) in time order, thread replies included, page by page. */
export async function* exportRoomMessages(
  db: Database,
  viewer: Viewer,
  rid: string,
  range: { from?: string; to?: string },
): AsyncGenerator<{ room: ChatRoom } | { messages: ChatMessage[] }> {
  const access = await accessOf(db, viewer);
  const room = await readableRoom(db, access, rid);
  await auditRead(db, viewer, access, room, "export");
  yield { room };
  let after: { ts: Date; id: string } | null = null;
  for (;;) {
    const params: unknown[] = [rid, range.from ?? null, range.to ?? null];
    let cond = "";
    if (after) {
      params.push(after.ts, after.id);
      cond = " AND (m.ts, m.id) > ($4, $5)";
    }
    const rows = await sql<MessageRow>(
      db,
      `SELECT ${MESSAGE_COLUMNS} FROM ${MESSAGE_FROM} WHERE m.rid = $1
         AND ($2::date IS NULL OR m.ts >= $2::date) AND ($3::date IS NULL OR m.ts < $3::date + 1)${cond}
       ORDER BY m.ts, m.id LIMIT 1000`,
      params,
    );
    if (rows.length === 0) return;
    yield { messages: await toMessages(db, rows) };
    const last = rows[rows.length - 1]!;
    after = { ts: last.ts, id: last.id };
    if (rows.length < 1000) return;
  }
}
