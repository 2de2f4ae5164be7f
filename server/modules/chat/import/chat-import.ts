// The chat archive import (docs/chat-format.md): a run of the data pipeline's machinery (type
// "chat": its lock, progress, cancel and history), started from Data Management.
//
// Each collection file is read once, document by document. A document whose version (_updatedAt;
// a GridFS file's uploadDate and length) equals the stored one is skipped without being decoded;
// new and changed documents are streamed with COPY into a temporary staging table. Only when every
// file was read without error does one transaction apply the staged rows (insert or update), delete
// what the export no longer has, and rebuild who may read which room. A bad document fails the run
// with its file, line and problem, and the archive stays as it was.
import type { SqlConnection } from "../../../db/database.ts";
import type { TableCounts } from "../../../jobs/import.ts";
import { SourceError } from "../../../jobs/source.ts";
import type { StepContext } from "../../../jobs/steps.ts";
import {
  bool,
  CHAT_COLLECTIONS,
  type ChatCollection,
  ChatDocumentError,
  type CollectionFile,
  date,
  decode,
  decodeValue,
  FieldError,
  findCollectionFile,
  idOf,
  int,
  type LineKey,
  lineKey,
  object,
  positionOf,
  quickKey,
  type RawDocument,
  REQUIRED_COLLECTIONS,
  type ReadOptions,
  bytes as readBytes,
  readDocuments,
  SKIP,
  text,
} from "./chat-source.ts";
import { type CsvValue, csvBuffers } from "./csv-rows.ts";
import { type Verdict, VersionIndex, VersionIndexBuilder, versionKey } from "./version-index.ts";

export interface ChatImportContext {
  conn: SqlConnection;
  /** The folder of mongoexport files (CHAT_SOURCE_DIR). */
  dir: string;
  signal: AbortSignal;
  /** Runs one named step of the run (its progress, timing and cancel point). */
  step(name: string, fn: (ctx: StepContext) => Promise<number>): Promise<number>;
}

export interface ChatImportResult {
  counts: Record<string, TableCounts>;
  details: Record<string, Record<string, unknown>>;
}

/** The steps of a chat import: one per collection file, then the apply. */
export const CHAT_STEP_COUNT = CHAT_COLLECTIONS.length + 1;

interface Staging {
  table: string;
  columns: string[];
  /** Column types of the staging table, in order. */
  types: string[];
  /** More columns the COPY does not fill (generated ones). */
  extra?: string;
}

const STAGING: Record<
  "users" | "rooms" | "subscriptions" | "avatars" | "uploads" | "chunks" | "messages",
  Staging
> = {
  users: {
    table: "chat_stage_users",
    columns: ["mongo_id", "username", "name", "active", "updated_at"],
    types: ["text", "text", "text", "boolean", "timestamptz"],
  },
  rooms: {
    table: "chat_stage_rooms",
    columns: [
      "id",
      "type",
      "name",
      "fname",
      "topic",
      "msgs",
      "uids",
      "usernames",
      "lm",
      "created_at",
      "prid",
      "archived",
      "updated_at",
    ],
    types: [
      "text",
      "text",
      "text",
      "text",
      "text",
      "int",
      "text[]",
      "text[]",
      "timestamptz",
      "timestamptz",
      "text",
      "boolean",
      "timestamptz",
    ],
  },
  subscriptions: {
    table: "chat_stage_subscriptions",
    columns: ["id", "rid", "user_mongo_id", "updated_at"],
    types: ["text", "text", "text", "timestamptz"],
  },
  avatars: {
    table: "chat_stage_avatars",
    columns: ["id", "owner", "content_type", "version"],
    types: ["text", "text", "text", "text"],
  },
  uploads: {
    table: "chat_stage_uploads",
    columns: ["id", "filename", "content_type", "length", "upload_date", "version", "rid", "user_mongo_id"],
    types: ["text", "text", "text", "bigint", "timestamptz", "text", "text", "text"],
  },
  chunks: {
    table: "chat_stage_chunks",
    columns: ["files_id", "n", "data"],
    types: ["text", "int", "bytea"],
  },
  messages: {
    table: "chat_stage_messages",
    columns: [
      "id",
      "rid",
      "ts",
      "user_mongo_id",
      "username",
      "user_name",
      "msg",
      "t",
      "tmid",
      "tshow",
      "tcount",
      "tlm",
      "drid",
      "edited_at",
      "edited_by",
      "reactions",
      "attachments",
      "files",
      "file_ids",
      "mentions",
      "updated_at",
      "search_text",
    ],
    // The full-text vectors are computed by the database while the COPY streams in, on the other
    // core while this process goes on parsing: the INSERT into chat_messages only copies them.
    extra:
      "search tsvector GENERATED ALWAYS AS (to_tsvector('english', coalesce(search_text, '')) || to_tsvector('simple', coalesce(search_text, ''))) STORED",
    types: [
      "text",
      "text",
      "timestamptz",
      "text",
      "text",
      "text",
      "text",
      "text",
      "text",
      "boolean",
      "int",
      "timestamptz",
      "text",
      "timestamptz",
      "text",
      "jsonb",
      "jsonb",
      "jsonb",
      "text[]",
      "text[]",
      "timestamptz",
      "text",
    ],
  },
};

/** Where a message row (messageRow) holds its _updatedAt. */
const UPDATED_AT_COLUMN = STAGING.messages.columns.indexOf("updated_at");

/** A row's _updatedAt as the version the index keeps (ms; NaN when it has none: never equal). */
function versionOf(v: CsvValue): number {
  return v instanceof Date ? v.getTime() : Number.NaN;
}

function counts(): TableCounts {
  return { added: 0, updated: 0, deleted: 0, skipped: 0, total: 0 };
}

/** Reads one export file, staging the documents `row` turns into rows (null = skip the document). */
async function stageCollection(
  ctx: ChatImportContext,
  stepCtx: StepContext,
  cf: CollectionFile,
  staging: Staging,
  row: (doc: RawDocument) => CsvValue[] | null,
  prefilter?: ReadOptions["prefilter"],
): Promise<number> {
  async function* rows(): AsyncGenerator<CsvValue[][]> {
    for await (const docs of readDocuments(cf, {
      signal: ctx.signal,
      onProgress: (b) => stepCtx.progress({ current: b, total: cf.size, unit: "bytes" }),
      prefilter,
    })) {
      const out: CsvValue[][] = [];
      for (const doc of docs) {
        let r: CsvValue[] | null;
        try {
          r = row(doc);
        } catch (err) {
          if (err instanceof FieldError) throw new ChatDocumentError(cf.file, positionOf(doc), err.message);
          throw err;
        }
        if (r) out.push(r);
      }
      yield out;
    }
  }
  return ctx.conn.copyCsv({
    table: staging.table,
    columns: staging.columns,
    source: csvBuffers(rows()),
    header: false,
    signal: ctx.signal,
  });
}

/**
 * The version of a document from its undecoded _updatedAt. Deciding to skip a document must not
 * cost a decode (EJSON.deserialize takes ~8 µs even for one date): Extended JSON's three date forms
 * ({"$date": ISO text}, {"$date": ms}, {"$date": {"$numberLong": ms}}) are read here directly;
 * anything else goes through EJSON.
 */
function updatedAtOf(raw: Record<string, unknown>): number {
  const v = raw._updatedAt;
  if (v && typeof v === "object") {
    const d = (v as { $date?: unknown }).$date;
    if (typeof d === "string") return Date.parse(d);
    if (typeof d === "number") return d;
    if (d && typeof d === "object" && typeof (d as { $numberLong?: unknown }).$numberLong === "string")
      return Number((d as { $numberLong: string }).$numberLong);
  }
  const decoded = decodeValue(v);
  return decoded instanceof Date ? decoded.getTime() : Number.NaN;
}

/** The document's _id: a string as it is, {"$oid": hex} as its hex text, else through EJSON. */
function rawId(raw: Record<string, unknown>): string {
  const v = raw._id;
  if (typeof v === "string" && v !== "") return v;
  if (v && typeof v === "object" && typeof (v as { $oid?: unknown }).$oid === "string")
    return (v as { $oid: string }).$oid;
  return idOf(decodeValue(v), "_id", true);
}

export async function runChatImport(ctx: ChatImportContext): Promise<ChatImportResult> {
  const { conn } = ctx;
  const files = new Map<ChatCollection, CollectionFile | null>();
  for (const c of CHAT_COLLECTIONS) files.set(c, await findCollectionFile(ctx.dir, c));
  const missing = REQUIRED_COLLECTIONS.filter((c) => !files.get(c));
  if (missing.length)
    throw new SourceError(
      `Chat archive incomplete: ${missing.map((c) => `${c}.json`).join(", ")} not found in ${ctx.dir}`,
    );

  await conn.exec(
    Object.values(STAGING)
      .map(
        (s) =>
          `DROP TABLE IF EXISTS ${s.table}; CREATE TEMP TABLE ${s.table} (${s.columns
            .map((c, i) => `${c} ${s.types[i]}`)
            .join(", ")}, ${s.extra ? `${s.extra}, ` : ""}ord bigserial);`,
      )
      .join("\n"),
  );

  const result: Record<string, TableCounts> = {};
  const details: Record<string, Record<string, unknown>> = {};
  try {
    // --- users
    const users = await VersionIndex.load(conn, "chat_users", {
      id: "mongo_id",
      version: "(extract(epoch from updated_at) * 1000)::float8",
    });
    const userCounts = counts();
    result.users = userCounts;
    await ctx.step(`Read ${files.get("users")!.file}`, (s) =>
      stageCollection(ctx, s, files.get("users")!, STAGING.users, (doc) => {
        const { raw } = doc;
        userCounts.total++;
        const id = rawId(raw);
        const verdict = users.check(id, updatedAtOf(raw));
        if (verdict === "same") {
          userCounts.skipped++;
          return null;
        }
        const d = decode(doc);
        const username = text(d.username, "username") ?? text(d.name, "name") ?? id;
        verdict === "new" ? userCounts.added++ : userCounts.updated++;
        return [
          id,
          username,
          text(d.name, "name"),
          d.active === undefined ? true : bool(d.active),
          date(d._updatedAt, "_updatedAt"),
        ];
      }),
    );
    const deletedUsers = await users.unseenIds(conn, "chat_users", {
      id: "mongo_id",
    });
    userCounts.deleted = deletedUsers.length;

    // --- rooms
    const rooms = await VersionIndex.load(conn, "chat_rooms", {
      version: "(extract(epoch from updated_at) * 1000)::float8",
    });
    const roomCounts = counts();
    result.rooms = roomCounts;
    const newRooms: string[] = [];
    await ctx.step(`Read ${files.get("rocketchat_room")!.file}`, (s) =>
      stageCollection(ctx, s, files.get("rocketchat_room")!, STAGING.rooms, (doc) => {
        const { raw } = doc;
        roomCounts.total++;
        const id = rawId(raw);
        const verdict = rooms.check(id, updatedAtOf(raw));
        if (verdict === "same") {
          roomCounts.skipped++;
          return null;
        }
        const d = decode(doc);
        const t = text(d.t, "t", true)!;
        if (verdict === "new") {
          roomCounts.added++;
          newRooms.push(id);
        } else roomCounts.updated++;
        return [
          id,
          t,
          text(d.name, "name"),
          text(d.fname, "fname"),
          text(d.topic, "topic"),
          int(d.msgs, "msgs") ?? 0,
          stringList(d.uids, "uids", idOf),
          stringList(d.usernames, "usernames", text),
          lastMessageDate(d.lm),
          date(d.ts, "ts"),
          idOf(d.prid, "prid"),
          bool(d.archived),
          date(d._updatedAt, "_updatedAt"),
        ];
      }),
    );
    const deletedRooms = await rooms.unseenIds(conn, "chat_rooms");
    roomCounts.deleted = deletedRooms.length;

    // --- subscriptions
    const subs = await VersionIndex.load(conn, "chat_subscriptions", {
      version: "(extract(epoch from updated_at) * 1000)::float8",
    });
    const subCounts = counts();
    result.subscriptions = subCounts;
    await ctx.step(`Read ${files.get("rocketchat_subscription")!.file}`, (s) =>
      stageCollection(ctx, s, files.get("rocketchat_subscription")!, STAGING.subscriptions, (doc) => {
        const { raw } = doc;
        subCounts.total++;
        const id = rawId(raw);
        const verdict = subs.check(id, updatedAtOf(raw));
        if (verdict === "same") {
          subCounts.skipped++;
          return null;
        }
        const d = decode(doc);
        const u = object(d.u);
        if (!u) throw new FieldError("u: missing (the subscribed user)");
        verdict === "new" ? subCounts.added++ : subCounts.updated++;
        return [id, idOf(d.rid, "rid", true), idOf(u._id, "u._id", true), date(d._updatedAt, "_updatedAt")];
      }),
    );
    const deletedSubs = await subs.unseenIds(conn, "chat_subscriptions");
    subCounts.deleted = deletedSubs.length;

    // --- GridFS: avatars and uploads (files, then the chunks of the new or changed ones)
    const avatarIndex = await VersionIndex.load(conn, "chat_users", {
      id: "avatar_id",
      version: "avatar_version",
      where: "avatar_id IS NOT NULL",
    });
    const avatarCounts = counts();
    result.avatars = avatarCounts;
    const changedFiles = new Set<string>();
    await gridFsStep(
      ctx,
      files.get("rocketchat_avatars.files") ?? null,
      "rocketchat_avatars.files",
      (s, cf) =>
        stageCollection(ctx, s, cf, STAGING.avatars, (doc) => {
          avatarCounts.total++;
          const d = decode(doc);
          const id = idOf(d._id, "_id", true);
          const version = gridFsVersion(d);
          const verdict = avatarIndex.check(id, versionKey(version));
          if (verdict === "same") {
            avatarCounts.skipped++;
            return null;
          }
          const meta = object(d.metadata);
          const owner =
            idOf(d.userId, "userId") ?? idOf(meta?.userId, "metadata.userId") ?? text(d.filename, "filename");
          if (!owner) throw new FieldError("userId: missing (whose avatar this is)");
          verdict === "new" ? avatarCounts.added++ : avatarCounts.updated++;
          changedFiles.add(id);
          return [id, owner, contentTypeOf(d), version];
        }),
    );
    const droppedAvatars = await avatarIndex.unseenIds(conn, "chat_users", {
      id: "avatar_id",
      where: "avatar_id IS NOT NULL",
    });
    avatarCounts.deleted = droppedAvatars.length;
    await chunksStep(
      ctx,
      files.get("rocketchat_avatars.chunks") ?? null,
      "rocketchat_avatars.chunks",
      changedFiles,
    );

    const uploads = await VersionIndex.load(conn, "chat_files", {
      version: "version",
      where: "kind = 'upload'",
    });
    const uploadCounts = counts();
    result.files = uploadCounts;
    const changedUploads = new Set<string>();
    await gridFsStep(
      ctx,
      files.get("rocketchat_uploads.files") ?? null,
      "rocketchat_uploads.files",
      (s, cf) =>
        stageCollection(ctx, s, cf, STAGING.uploads, (doc) => {
          uploadCounts.total++;
          const d = decode(doc);
          const id = idOf(d._id, "_id", true);
          const version = gridFsVersion(d);
          const verdict = uploads.check(id, versionKey(version));
          if (verdict === "same") {
            uploadCounts.skipped++;
            return null;
          }
          const meta = object(d.metadata);
          verdict === "new" ? uploadCounts.added++ : uploadCounts.updated++;
          changedUploads.add(id);
          return [
            id,
            text(d.filename, "filename") ?? text(d.name, "name") ?? text(meta?.name, "metadata.name"),
            contentTypeOf(d),
            int(d.length, "length") ?? 0,
            date(d.uploadDate, "uploadDate"),
            version,
            idOf(d.rid, "rid") ?? idOf(meta?.rid, "metadata.rid"),
            idOf(d.userId, "userId") ?? idOf(meta?.userId, "metadata.userId"),
          ];
        }),
    );
    const deletedUploads = await uploads.unseenIds(conn, "chat_files", {
      where: "kind = 'upload'",
    });
    uploadCounts.deleted = deletedUploads.length;
    await chunksStep(
      ctx,
      files.get("rocketchat_uploads.chunks") ?? null,
      "rocketchat_uploads.chunks",
      changedUploads,
    );

    // --- messages
    // The index the last import stored (16 bytes a message, one row), else read from the table.
    const stored = await VersionIndex.loadStored(conn, "messages", "chat_messages");
    const messages =
      stored ??
      (await VersionIndex.load(conn, "chat_messages", {
        version: "(extract(epoch from updated_at) * 1000)::float8",
      }));
    const addedMessages = new VersionIndexBuilder();
    const messageCounts = counts();
    result.messages = messageCounts;
    let hidden = 0;
    // Most lines of a re-import are unchanged messages: their _id and _updatedAt are read from the
    // line's bytes and the line is skipped without being decoded to text (nor parsed). A line
    // read on gets the verdict as its hint (check() marks the stored id once only).
    const key: LineKey = { hash: 0, version: 0 };
    const prefilter =
      messages.size === 0
        ? undefined
        : (buf: Buffer, start: number, end: number): unknown => {
            if (!lineKey(buf, start, end, key)) return undefined;
            const verdict = messages.checkKey(key.hash, key.version);
            if (verdict !== "same") return verdict;
            messageCounts.total++;
            messageCounts.skipped++;
            return SKIP;
          };
    await ctx.step(`Read ${files.get("rocketchat_message")!.file}`, (s) =>
      stageCollection(
        ctx,
        s,
        files.get("rocketchat_message")!,
        STAGING.messages,
        (doc) => {
          // A first import reads every document: decoded straight from its text, no plain parse.
          if (messages.size === 0) {
            const d = decode(doc);
            if (d._hidden === true) {
              hidden++;
              return null;
            }
            messageCounts.total++;
            messageCounts.added++;
            const id = idOf(d._id, "_id", true);
            const row = messageRow(id, d);
            addedMessages.add(id, versionOf(row[UPDATED_AT_COLUMN]));
            return row;
          }
          // Most documents of a re-import are unchanged: decide from the text when it allows. A
          // message the archive holds at this _updatedAt was not hidden then and is not now (hiding
          // an edit's old copy changes its _updatedAt), so only the others are looked at for _hidden.
          // A line the prefilter already checked has its verdict as its hint, and a key quickKey()
          // reads the same.
          const hinted = doc.hint as Verdict | undefined;
          const quick = doc.text !== undefined ? quickKey(doc.text) : null;
          if (hinted && !quick) throw new Error("quickKey() declined a line lineKey() read");
          if (quick) {
            const verdict = hinted ?? messages.check(quick.id, quick.version);
            if (verdict === "same") {
              messageCounts.total++;
              messageCounts.skipped++;
              return null;
            }
            const d = decode(doc);
            if (d._hidden === true) {
              hidden++;
              if (verdict === "changed") messages.unsee(quick.id);
              return null;
            }
            messageCounts.total++;
            const row = messageRow(quick.id, d);
            if (verdict === "new") {
              messageCounts.added++;
              addedMessages.add(quick.id, versionOf(row[UPDATED_AT_COLUMN]));
            } else messageCounts.updated++;
            return row;
          }
          const { raw } = doc;
          if (raw._hidden === true) {
            hidden++;
            return null;
          }
          messageCounts.total++;
          const id = rawId(raw);
          const verdict = messages.check(id, updatedAtOf(raw));
          if (verdict === "same") {
            messageCounts.skipped++;
            return null;
          }
          const row = messageRow(id, decode(doc));
          if (verdict === "new") {
            messageCounts.added++;
            addedMessages.add(id, versionOf(row[UPDATED_AT_COLUMN]));
          } else messageCounts.updated++;
          return row;
        },
        prefilter,
      ),
    );
    const deletedMessages = await messages.unseenIds(conn, "chat_messages");
    messageCounts.deleted = deletedMessages.length;
    details.messages = { edit_history_copies_skipped: hidden };

    // --- apply, all or nothing
    await ctx.step("Apply chat archive", () =>
      conn.transaction(async (tx) => {
        let rows = 0;
        rows += await applyUsers(tx, deletedUsers);
        rows += await applyRooms(tx, deletedRooms);
        rows += await applySubscriptions(tx, deletedSubs);
        if (
          roomCounts.added +
            roomCounts.updated +
            roomCounts.deleted +
            subCounts.added +
            subCounts.updated +
            subCounts.deleted >
          0
        )
          await rebuildMembers(tx);
        rows += await applyAvatars(tx, droppedAvatars);
        rows += await applyUploads(tx, deletedUploads);
        const staged = messageCounts.added + messageCounts.updated;
        rows += await applyMessages(
          tx,
          deletedMessages,
          newRooms,
          roomCounts.added + roomCounts.updated > 0,
          staged >= BULK_ROWS && staged > messages.size / 2,
          // Without the stored index the table may have been changed by hand: count every room.
          !stored,
        );
        await messages.next(addedMessages).store(tx, "messages");
        return rows;
      }),
    );
    for (const c of Object.values(result)) c.total = c.total || c.added + c.updated + c.skipped;
    return { counts: result, details };
  } finally {
    await conn
      .exec(
        Object.values(STAGING)
          .map((s) => `DROP TABLE IF EXISTS ${s.table};`)
          .join("\n"),
      )
      .catch(() => {});
  }
}

/** A GridFS files collection, or an empty step when the export has none. */
async function gridFsStep(
  ctx: ChatImportContext,
  cf: CollectionFile | null,
  name: string,
  fn: (s: StepContext, cf: CollectionFile) => Promise<number>,
): Promise<void> {
  await ctx.step(cf ? `Read ${cf.file}` : `Read ${name} (not in the export)`, (s) =>
    cf ? fn(s, cf) : Promise.resolve(0),
  );
}

/** Stages the chunks of the files that are new or changed; the others are skipped undecoded. */
async function chunksStep(
  ctx: ChatImportContext,
  cf: CollectionFile | null,
  name: string,
  wanted: Set<string>,
): Promise<void> {
  await gridFsStep(ctx, cf, name, (s, file) =>
    wanted.size === 0
      ? Promise.resolve(0)
      : stageCollection(ctx, s, file, STAGING.chunks, (doc) => {
          const { raw } = doc;
          const filesId = idOf(decodeValue(raw.files_id), "files_id", true);
          if (!wanted.has(filesId)) return null;
          const d = decode(doc);
          const n = int(d.n, "n");
          if (n === null) throw new FieldError("n: missing (the chunk's number)");
          return [filesId, n, readBytes(d.data, "data")];
        }),
  );
}

function gridFsVersion(d: Record<string, unknown>): string {
  const uploaded = date(d.uploadDate, "uploadDate");
  const length = int(d.length, "length") ?? 0;
  return `${uploaded?.toISOString() ?? ""}:${length}:${text(d.md5, "md5") ?? ""}`;
}

function contentTypeOf(d: Record<string, unknown>): string | null {
  const meta = object(d.metadata);
  return (
    text(d.contentType, "contentType") ??
    text(d.type, "type") ??
    text(meta?.contentType, "metadata.contentType")
  );
}

function stringList(
  v: unknown,
  field: string,
  read: (value: unknown, field: string) => string | null,
): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new FieldError(`${field}: not a list`);
  return v.map((x, i) => read(x, `${field}[${i}]`)).filter((x): x is string => x !== null);
}

/** rocketchat_room.lm is a date; some exports carry the last message object instead. */
function lastMessageDate(v: unknown): Date | null {
  if (v instanceof Date) return v;
  const o = object(v);
  if (o) return date(o.ts, "lm.ts");
  return date(v, "lm");
}

export interface StoredReaction {
  emoji: string;
  usernames: string[];
}

export interface StoredAttachment {
  title: string | null;
  description: string | null;
  text: string | null;
  type: string | null;
  /** The upload it shows, when its link points at one. */
  file_id: string | null;
  image: boolean;
  image_type: string | null;
  author_name: string | null;
  /** An external link the attachment names (only http(s) links are kept). */
  link: string | null;
}

export interface StoredFile {
  id: string;
  name: string | null;
  type: string | null;
  size: number | null;
}

const FILE_LINK = /\/file-upload\/([^/]+)\//;

export function messageRow(id: string, d: Record<string, unknown>): CsvValue[] {
  const rid = idOf(d.rid, "rid", true);
  const ts = date(d.ts, "ts", true);
  const u = object(d.u);
  const msg = text(d.msg, "msg") ?? "";
  const editedBy = object(d.editedBy);
  const tmid = idOf(d.tmid, "tmid");

  const reactions: StoredReaction[] = [];
  const r = object(d.reactions);
  if (d.reactions !== undefined && d.reactions !== null && !r)
    throw new FieldError("reactions: not an object");
  if (r)
    for (const [emoji, value] of Object.entries(r)) {
      const names = stringList(object(value)?.usernames, `reactions.${emoji}.usernames`, text);
      if (names.length) reactions.push({ emoji, usernames: names });
    }

  const files: StoredFile[] = [];
  const addFile = (f: unknown, field: string) => {
    const o = object(f);
    if (!o) throw new FieldError(`${field}: not an object`);
    const fid = idOf(o._id, `${field}._id`, true);
    if (!files.some((x) => x.id === fid))
      files.push({
        id: fid,
        name: text(o.name, `${field}.name`),
        type: text(o.type, `${field}.type`),
        size: int(o.size, `${field}.size`),
      });
  };
  if (Array.isArray(d.files)) for (const [i, f] of d.files.entries()) addFile(f, `files[${i}]`);
  else if (d.files !== undefined && d.files !== null) throw new FieldError("files: not a list");
  if (d.file !== undefined && d.file !== null) addFile(d.file, "file");

  const attachments: StoredAttachment[] = [];
  if (d.attachments !== undefined && d.attachments !== null) {
    if (!Array.isArray(d.attachments)) throw new FieldError("attachments: not a list");
    d.attachments.forEach((a, i) => {
      const o = object(a);
      if (!o) throw new FieldError(`attachments[${i}]: not an object`);
      const link =
        text(o.title_link, `attachments[${i}].title_link`) ??
        text(o.image_url, `attachments[${i}].image_url`);
      const fileId = link ? (FILE_LINK.exec(link)?.[1] ?? null) : null;
      const external =
        text(o.title_link, `attachments[${i}].title_link`) ??
        text(o.author_link, `attachments[${i}].author_link`);
      attachments.push({
        title: text(o.title, `attachments[${i}].title`),
        description: text(o.description, `attachments[${i}].description`),
        text: text(o.text, `attachments[${i}].text`),
        type: text(o.type, `attachments[${i}].type`),
        file_id: fileId ? decodeURIComponent(fileId) : null,
        image: Boolean(o.image_url) || (text(o.image_type, "image_type") ?? "").startsWith("image/"),
        image_type: text(o.image_type, `attachments[${i}].image_type`),
        author_name: text(o.author_name, `attachments[${i}].author_name`),
        link: external && /^https?:\/\//i.test(external) ? external : null,
      });
    });
  }
  const mentions = Array.isArray(d.mentions)
    ? d.mentions
        .map((m, i) => text(object(m)?.username, `mentions[${i}].username`))
        .filter((x): x is string => !!x)
    : [];
  const fileIds = [
    ...new Set([...files.map((f) => f.id), ...attachments.flatMap((a) => (a.file_id ? [a.file_id] : []))]),
  ];
  const searchText = [
    msg,
    ...attachments.flatMap((a) => [a.title, a.description, a.text]),
    ...files.map((f) => f.name),
  ]
    .filter((s): s is string => !!s)
    .join("\n");

  return [
    id,
    rid,
    ts,
    idOf(u?._id, "u._id"),
    text(u?.username, "u.username"),
    text(u?.name, "u.name"),
    msg,
    text(d.t, "t"),
    tmid,
    bool(d.tshow),
    int(d.tcount, "tcount"),
    date(d.tlm, "tlm"),
    idOf(d.drid, "drid"),
    date(d.editedAt, "editedAt"),
    text(editedBy?.username, "editedBy.username"),
    reactions.length ? JSON.stringify(reactions) : null,
    attachments.length ? JSON.stringify(attachments) : null,
    files.length ? JSON.stringify(files) : null,
    fileIds,
    mentions,
    date(d._updatedAt, "_updatedAt"),
    searchText,
  ];
}

async function deleteIds(tx: SqlConnection, table: string, column: string, ids: string[]): Promise<number> {
  let n = 0;
  for (let i = 0; i < ids.length; i += 10_000)
    n += await tx.execute(`DELETE FROM ${table} WHERE ${column} = ANY($1::text[])`, [
      ids.slice(i, i + 10_000),
    ]);
  return n;
}

async function applyUsers(tx: SqlConnection, deleted: string[]): Promise<number> {
  const n = await tx.execute(
    `INSERT INTO chat_users (mongo_id, username, name, active, updated_at)
     SELECT mongo_id, username, name, coalesce(active, true), updated_at FROM chat_stage_users
     ON CONFLICT (mongo_id) DO UPDATE SET username = excluded.username, name = excluded.name,
       active = excluded.active, updated_at = excluded.updated_at`,
  );
  return n + (await deleteIds(tx, "chat_users", "mongo_id", deleted));
}

async function applyRooms(tx: SqlConnection, deleted: string[]): Promise<number> {
  const n = await tx.execute(
    `INSERT INTO chat_rooms (id, type, name, fname, topic, msgs, uids, usernames, last_message_at, created_at, prid, archived, updated_at)
     SELECT id, type, name, fname, topic, coalesce(msgs, 0), coalesce(uids, '{}'), coalesce(usernames, '{}'), lm,
            created_at, prid, coalesce(archived, false), updated_at FROM chat_stage_rooms
     ON CONFLICT (id) DO UPDATE SET type = excluded.type, name = excluded.name, fname = excluded.fname,
       topic = excluded.topic, msgs = excluded.msgs, uids = excluded.uids, usernames = excluded.usernames,
       last_message_at = coalesce(chat_rooms.last_message_at, excluded.last_message_at),
       created_at = excluded.created_at, prid = excluded.prid, archived = excluded.archived,
       updated_at = excluded.updated_at`,
  );
  return n + (await deleteIds(tx, "chat_rooms", "id", deleted));
}

async function applySubscriptions(tx: SqlConnection, deleted: string[]): Promise<number> {
  const n = await tx.execute(
    `INSERT INTO chat_subscriptions (id, rid, user_mongo_id, updated_at)
     SELECT id, rid, user_mongo_id, updated_at FROM chat_stage_subscriptions
     ON CONFLICT (id) DO UPDATE SET rid = excluded.rid, user_mongo_id = excluded.user_mongo_id,
       updated_at = excluded.updated_at`,
  );
  return n + (await deleteIds(tx, "chat_subscriptions", "id", deleted));
}

/** Who may read which room: subscriptions plus each room's uids. */
async function rebuildMembers(tx: SqlConnection): Promise<void> {
  await tx.exec(
    `DELETE FROM chat_room_members;
     INSERT INTO chat_room_members (user_mongo_id, rid)
     SELECT user_mongo_id, rid FROM chat_subscriptions
     UNION SELECT u, id FROM chat_rooms, unnest(uids) AS u
     ON CONFLICT DO NOTHING;`,
  );
}

/** Chunks of one file in order, as one value. */
const ASSEMBLED = `SELECT files_id, string_agg(data, ''::bytea ORDER BY n) AS data, count(*) AS chunks
                   FROM chat_stage_chunks GROUP BY files_id`;

async function applyAvatars(tx: SqlConnection, dropped: string[]): Promise<number> {
  let n = 0;
  if (dropped.length)
    n += await tx.execute(
      `UPDATE chat_users SET avatar = NULL, avatar_type = NULL, avatar_id = NULL, avatar_version = NULL
       WHERE avatar_id = ANY($1::text[])`,
      [dropped],
    );
  // The owner is a user id, or (older exports) the username the file is named after.
  n += await tx.execute(
    `UPDATE chat_users u SET avatar = c.data, avatar_type = a.content_type, avatar_id = a.id, avatar_version = a.version
     FROM chat_stage_avatars a LEFT JOIN (${ASSEMBLED}) c ON c.files_id = a.id
     WHERE u.mongo_id = a.owner OR (u.username = a.owner AND NOT EXISTS (SELECT 1 FROM chat_users x WHERE x.mongo_id = a.owner))`,
  );
  return n;
}

async function applyUploads(tx: SqlConnection, deleted: string[]): Promise<number> {
  const n = await tx.execute(
    `INSERT INTO chat_files (id, kind, filename, content_type, length, upload_date, version, rid, user_mongo_id, data, thumbnail)
     SELECT u.id, 'upload', u.filename, u.content_type, coalesce(u.length, 0), u.upload_date, u.version, u.rid,
            u.user_mongo_id, c.data, NULL
     FROM chat_stage_uploads u LEFT JOIN (${ASSEMBLED}) c ON c.files_id = u.id
     ON CONFLICT (id) DO UPDATE SET filename = excluded.filename, content_type = excluded.content_type,
       length = excluded.length, upload_date = excluded.upload_date, version = excluded.version,
       rid = coalesce(excluded.rid, chat_files.rid), user_mongo_id = excluded.user_mongo_id,
       data = excluded.data, thumbnail = NULL`,
  );
  return n + (await deleteIds(tx, "chat_files", "id", deleted));
}

/** From this many new or changed messages (and half the table), indexes are built afresh. */
const BULK_ROWS = 5_000;

async function applyMessages(
  tx: SqlConnection,
  deleted: string[],
  /** Rooms new to the archive (their counts are taken afresh: they may hold messages already). */
  newRooms: string[],
  roomsChanged: boolean,
  /** Drop the secondary indexes for the insert and build them after: far faster for a big load. */
  bulk: boolean,
  /** Count every room's messages afresh rather than by what this import changes. */
  recount: boolean,
): Promise<number> {
  const afresh = bulk || recount;
  // Big scans here compile nothing worth the half second JIT takes.
  await tx.exec("SET LOCAL jit = off");
  const rebuild = bulk
    ? await tx.query<{ name: string; definition: string }>(
        `SELECT format('%I', i.relname) AS name, pg_get_indexdef(x.indexrelid) AS definition
         FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
         WHERE x.indrelid = 'chat_messages'::regclass AND NOT x.indisprimary`,
      )
    : [];
  if (rebuild.length) await tx.exec(rebuild.map((r) => `DROP INDEX ${r.name};`).join("\n"));
  // What the change does to each room's message count, read before it is made: +1 for a message
  // new to the room (new, or moved from another), -1 for one leaving it (moved or deleted).
  // A bulk load counts every room afresh instead (one pass over the table).
  if (!afresh)
    await tx.execute(
      `CREATE TEMP TABLE chat_stage_room_delta ON COMMIT DROP AS
       WITH moved AS MATERIALIZED (
         -- staged messages new to their room (old_rid NULL: new to the archive); one probe each
         SELECT s.rid, m.rid AS old_rid FROM chat_stage_messages s LEFT JOIN chat_messages m ON m.id = s.id
         WHERE m.rid IS DISTINCT FROM s.rid
       )
       SELECT rid, sum(d)::int AS d FROM (
         SELECT rid, 1 AS d FROM moved
         UNION ALL
         SELECT old_rid, -1 FROM moved WHERE old_rid IS NOT NULL
         UNION ALL
         SELECT rid, -1 FROM chat_messages WHERE id = ANY($1::text[])
       ) x GROUP BY rid`,
      [deleted],
    );
  const deletedRids = deleted.length
    ? (
        await tx.query<{ rid: string }>("SELECT DISTINCT rid FROM chat_messages WHERE id = ANY($1::text[])", [
          deleted,
        ])
      ).map((r) => r.rid)
    : [];
  let n: number;
  try {
    n = await tx.execute(
      `INSERT INTO chat_messages (id, rid, ts, user_mongo_id, username, user_name, msg, t, tmid, tshow, tcount, tlm,
         drid, edited_at, edited_by, reactions, attachments, files, file_ids, has_file, mentions, updated_at, search)
       SELECT id, rid, ts, user_mongo_id, username, user_name, coalesce(msg, ''), t, tmid, coalesce(tshow, false),
         tcount, tlm, drid, edited_at, edited_by, reactions, attachments, files, coalesce(file_ids, '{}'),
         coalesce(cardinality(file_ids), 0) > 0,
         coalesce(mentions, '{}'), updated_at, search
       FROM chat_stage_messages
       ON CONFLICT (id) DO UPDATE SET rid = excluded.rid, ts = excluded.ts, user_mongo_id = excluded.user_mongo_id,
         username = excluded.username, user_name = excluded.user_name, msg = excluded.msg, t = excluded.t,
         tmid = excluded.tmid, tshow = excluded.tshow, tcount = excluded.tcount, tlm = excluded.tlm,
         drid = excluded.drid, edited_at = excluded.edited_at, edited_by = excluded.edited_by,
         reactions = excluded.reactions, attachments = excluded.attachments, files = excluded.files,
         file_ids = excluded.file_ids, has_file = excluded.has_file, mentions = excluded.mentions, updated_at = excluded.updated_at,
         search = excluded.search`,
    );
  } catch (err) {
    if ((err as { code?: string }).code === "21000") {
      const [dup] = await tx
        .query<{ id: string }>("SELECT id FROM chat_stage_messages GROUP BY id HAVING count(*) > 1 LIMIT 1")
        .catch(() => []);
      throw new SourceError(`rocketchat_message: _id ${dup?.id ?? "?"} appears more than once`);
    }
    throw err;
  }
  n += await deleteIds(tx, "chat_messages", "id", deleted);
  for (const r of rebuild) await tx.exec(r.definition);
  if (bulk) await tx.exec("ANALYZE chat_messages");

  // Each room's message count: afresh after a bulk load and for new rooms, else by the deltas.
  if (afresh)
    await tx.exec(
      `UPDATE chat_rooms r SET message_count = coalesce(c.n, 0)
       FROM chat_rooms r2 LEFT JOIN (SELECT rid, count(*)::int AS n FROM chat_messages GROUP BY rid) c ON c.rid = r2.id
       WHERE r.id = r2.id AND r.message_count IS DISTINCT FROM coalesce(c.n, 0)`,
    );
  else {
    await tx.execute(
      `UPDATE chat_rooms r SET message_count = r.message_count + d.d FROM chat_stage_room_delta d
       WHERE r.id = d.rid AND d.d <> 0 AND NOT r.id = ANY($1::text[])`,
      [newRooms],
    );
    if (newRooms.length)
      await tx.execute(
        `UPDATE chat_rooms r SET message_count = (SELECT count(*)::int FROM chat_messages m WHERE m.rid = r.id)
         WHERE r.id = ANY($1::text[])`,
        [newRooms],
      );
  }
  // Last activity of each touched room: its newest message (one index probe a room).
  await tx.execute(
    `WITH touched AS (
       SELECT DISTINCT rid FROM chat_stage_messages
       UNION SELECT unnest($1::text[])
       UNION SELECT id FROM chat_stage_rooms WHERE $2::boolean
     )
     UPDATE chat_rooms r SET last_message_at = coalesce(
       (SELECT m.ts FROM chat_messages m WHERE m.rid = r.id ORDER BY m.ts DESC LIMIT 1), r.last_message_at)
     FROM touched t WHERE r.id = t.rid`,
    [deletedRids, roomsChanged],
  );
  // Uploads whose room the files collection did not name: the room of a message carrying them
  // (only uploads new or changed now, or carried by a message that is; read through has_file).
  await tx.exec(
    `WITH wanted AS (SELECT id FROM chat_stage_uploads UNION SELECT unnest(file_ids) FROM chat_stage_messages)
     UPDATE chat_files f SET rid = x.rid
     FROM (SELECT DISTINCT ON (fid) fid, m.rid FROM chat_messages m, unnest(m.file_ids) AS fid
           WHERE m.has_file AND m.file_ids && ARRAY(SELECT id FROM wanted) AND fid IN (SELECT id FROM wanted)
           ORDER BY fid, m.ts) x
     WHERE f.id = x.fid AND f.kind = 'upload' AND f.rid IS DISTINCT FROM x.rid`,
  );
  return n;
}
