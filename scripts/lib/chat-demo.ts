// Writes a demo chat archive in the format the chat import reads (docs/chat-format.md): the
// mongoexport files of a Rocket.Chat database. Channels, private groups, direct messages, a
// livechat room and a discussion; threads, edits, reactions, system messages, mentions, markdown,
// images and a PDF as attachments (one attachment's file deliberately missing), avatars. Seeded:
// the same options give the same files. Streams every file, so a million messages fit in memory.

import { once } from "node:events";
import fs from "node:fs";
import path from "node:path";
import { Binary, EJSON, ObjectId } from "bson";
import sharp from "sharp";

export interface ChatDemoOptions {
  out: string;
  messages?: number;
  years?: number;
  seed?: number;
  /** The last day of the archive (default today). */
  today?: Date;
  /** Vendor names to build vendor contacts and rooms from (default: a few invented ones). */
  vendors?: string[];
  /** Extended JSON mode; default relaxed (mongoexport's default). */
  canonical?: boolean;
  /** Write --jsonArray files instead of JSON lines. */
  jsonArray?: boolean;
  /** Extra channels, so a bench can spread messages over many rooms. */
  extraChannels?: number;
  /** Skip images/PDF/avatars (faster, for big bench sets). */
  withFiles?: boolean;
}

export interface ChatDemoResult {
  messages: number;
  rooms: number;
  users: number;
  ms: number;
}

class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0 || 1;
  }
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(a: number, b: number): number {
    return a + Math.floor(this.next() * (b - a + 1));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

const ID_CHARS = "23456789ABCDEFGHJKLMNPQRSTWXYZabcdefghijkmnopqrstuvwxyz";
/** An ObjectId from the seeded stream (mongoexport writes GridFS chunk ids as ObjectIds). */
function objectId(rng: Rng): ObjectId {
  let hex = "";
  for (let i = 0; i < 24; i++) hex += "0123456789abcdef"[Math.floor(rng.next() * 16)];
  return new ObjectId(hex);
}

/** A Rocket.Chat style id (17 characters). */
function rcId(rng: Rng): string {
  let s = "";
  for (let i = 0; i < 17; i++) s += ID_CHARS[Math.floor(rng.next() * ID_CHARS.length)];
  return s;
}

const STAFF = [
  ["Emma", "Schneider"],
  ["Liam", "Walsh"],
  ["Olivia", "Brennan"],
  ["Noah", "Fischer"],
  ["Ava", "Lindqvist"],
  ["Lucas", "Moreau"],
  ["Mia", "Kowalski"],
  ["Ethan", "Okafor"],
  ["Sofia", "Rossi"],
  ["Jonas", "Berg"],
  ["Chloe", "Nakamura"],
  ["Daniel", "Haddad"],
] as const;
const CONTACT_FIRST = ["Grace", "Henry", "Isla", "Oscar", "Ruby", "Theo", "Zoe", "Felix", "Nora", "Max"];
const DEFAULT_VENDORS = [
  "Northwind Paper Co.",
  "Atlas Craft Supply",
  "Bluebird Tools Inc.",
  "Harbor Stationery Ltd.",
];

const PRODUCTS = [
  "washi tape",
  "sketchbooks",
  "acrylic paint sets",
  "glue sticks",
  "cutting mats",
  "fineliners",
  "watercolour pads",
  "craft scissors",
  "gift wrap rolls",
  "sticker sheets",
  "embroidery hoops",
  "brush pens",
];
const TEMPLATES = [
  "Can we get a quote for {n} cases of {p}?",
  "Price for {p} is now $" + "{price} per case, valid until the end of the month",
  "PO-{po} is confirmed, expected delivery on {day}",
  "The {p} shipment arrived *damaged*, sending photos",
  "We are running low on {p}, reorder point reached",
  "Please check the invoice for PO-{po}, the case quantity looks wrong",
  "_Reminder_: stock count on Friday",
  "Restocked {p} in aisle {aisle}",
  "Anyone seen the delivery note for PO-{po}?",
  "@{user} can you approve PO-{po}? :thumbsup:",
  "New price list from {vendor}: https://example.com/price-list-{po}.pdf",
  "> the order was short {n} units\nWe will credit the difference",
  "Use code `SPRING{n}` for the promo",
  "Minimum order for {p} is {n} units now",
  "Good news: {vendor} can ship {p} two weeks earlier :tada:",
  "Thanks! :smile:",
  "Lead time for {p} is {n} days at the moment",
  "Returned {n} units of {p}, RMA {po}",
  "Meeting notes: *margins* on {p} are under target, let's review the MSRP",
  "Holiday schedule: the warehouse is closed on {day}",
];
const REPLIES = [
  "Done.",
  "On it",
  "Thanks :pray:",
  "Confirmed",
  "Will check tomorrow",
  "Yes, approved",
  "Sent the revised PO",
  "👍",
];
const EMOJI = [":thumbsup:", ":heart:", ":tada:", ":eyes:", ":white_check_mark:", ":smile:"];

function slug(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
    .slice(0, 30);
}

/** A JSON lines (or --jsonArray) file written document by document, honouring backpressure. */
class ExportWriter {
  private readonly stream: fs.WriteStream;
  private count = 0;
  constructor(
    file: string,
    private readonly opts: { canonical: boolean; jsonArray: boolean },
  ) {
    this.stream = fs.createWriteStream(file);
    if (opts.jsonArray) this.stream.write("[");
  }
  async write(doc: Record<string, unknown>): Promise<void> {
    const text = EJSON.stringify(doc, { relaxed: !this.opts.canonical });
    const line = this.opts.jsonArray ? (this.count ? "," : "") + text : `${text}\n`;
    this.count++;
    if (!this.stream.write(line)) await once(this.stream, "drain");
  }
  async close(): Promise<void> {
    if (this.opts.jsonArray) this.stream.write("]\n");
    this.stream.end();
    await once(this.stream, "finish");
  }
}

interface DemoUser {
  _id: string;
  username: string;
  name: string;
  staff: boolean;
}

interface DemoRoom {
  _id: string;
  t: "c" | "p" | "d" | "l";
  name?: string;
  fname?: string;
  topic?: string;
  members: DemoUser[];
  prid?: string;
  archived?: boolean;
  weight: number;
  msgs: number;
  lm?: Date;
  created: Date;
}

/** A small PNG "photo": a coloured card with a label. */
async function demoImage(label: string, hue: number): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="640" height="420">
  <rect width="640" height="420" fill="hsl(${hue},55%,72%)"/>
  <rect x="140" y="90" width="360" height="240" rx="18" fill="hsl(${hue},45%,45%)"/>
  <text x="320" y="222" font-size="34" font-family="sans-serif" text-anchor="middle" fill="white">${label}</text>
</svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

async function demoAvatar(initials: string, hue: number): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="96" height="96">
  <rect width="96" height="96" fill="hsl(${hue},50%,50%)"/>
  <text x="48" y="60" font-size="36" font-family="sans-serif" text-anchor="middle" fill="white">${initials}</text>
</svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

/** A one-page PDF with a line of text (hand-assembled; byte offsets computed). */
function demoPdf(title: string): Buffer {
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    "",
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  const content = `BT /F1 18 Tf 72 770 Td (${title.replace(/[()\\]/g, "")}) Tj ET`;
  objects[3] = `<< /Length ${content.length} >>\nstream\n${content}\nendstream`;
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(Buffer.byteLength(out));
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out);
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) out += `${String(off).padStart(10, "0")} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, "latin1");
}

export async function generateChatDemo(opts: ChatDemoOptions): Promise<ChatDemoResult> {
  const started = Date.now();
  const rng = new Rng(opts.seed ?? 7);
  const total = opts.messages ?? 20_000;
  const years = opts.years ?? 2;
  const withFiles = opts.withFiles ?? true;
  const end = new Date(opts.today ?? new Date());
  end.setUTCHours(18, 0, 0, 0);
  // Never past the moment it is written: a first start before 18:00 UTC would otherwise hold
  // messages from later today (every room "0m ago", search hits from the future).
  if (end.getTime() > Date.now()) end.setTime(Date.now());
  const start = new Date(end.getTime() - years * 365 * 86_400_000);
  const fmt = { canonical: opts.canonical ?? false, jsonArray: opts.jsonArray ?? false };
  fs.mkdirSync(opts.out, { recursive: true });
  const writer = (name: string) => new ExportWriter(path.join(opts.out, `${name}.json`), fmt);

  // --- users: staff, one bot, vendor contacts
  const users: DemoUser[] = STAFF.map(([first, last]) => ({
    _id: rcId(rng),
    username: `${first}.${last}`.toLowerCase(),
    name: `${first} ${last}`,
    staff: true,
  }));
  const vendorNames = (opts.vendors?.length ? opts.vendors : DEFAULT_VENDORS).slice(0, 6);
  const vendorContacts = vendorNames.map((vendor, i) => {
    const first = CONTACT_FIRST[i % CONTACT_FIRST.length]!;
    const word = vendor.split(/[^A-Za-z]+/).find((w) => w.length > 2) ?? "vendor";
    const user: DemoUser = {
      _id: rcId(rng),
      username: `${first.toLowerCase()}.${word.toLowerCase()}`,
      name: `${first} (${vendor})`,
      staff: false,
    };
    return { vendor, user };
  });
  users.push(...vendorContacts.map((v) => v.user));
  const bot: DemoUser = { _id: "rocket.cat", username: "rocket.cat", name: "Rocket.Cat", staff: false };
  users.push(bot);
  const staff = users.filter((u) => u.staff);

  // --- rooms
  const rooms: DemoRoom[] = [];
  const channel = (name: string, topic: string, members: DemoUser[], weight: number, t: "c" | "p" = "c") => {
    const room: DemoRoom = {
      _id: rcId(rng),
      t,
      name,
      fname: name,
      topic,
      members,
      weight,
      msgs: 0,
      created: start,
    };
    rooms.push(room);
    return room;
  };
  channel("general", "Everything that is not an order", staff, 5);
  const purchasing = channel("purchasing", "Purchase orders, quotes and prices", staff.slice(0, 7), 6);
  channel("warehouse", "Receiving, stock counts and returns", staff.slice(3), 4);
  channel("management", "Margins and planning", staff.slice(0, 4), 2, "p");
  for (let i = 0; i < (opts.extraChannels ?? 0); i++)
    channel(
      `team-${i + 1}`,
      `Team room ${i + 1}`,
      staff.filter((_, j) => (i + j) % 3 !== 0),
      3,
    );
  for (const { vendor, user } of vendorContacts)
    channel(`vendor-${slug(vendor)}`, `Orders with ${vendor}`, [...staff.slice(0, 3), user], 3, "p");
  const oldRoom = channel("spring-promo-2024", "Spring promotion (finished)", staff.slice(2, 8), 1);
  oldRoom.archived = true;
  // direct messages between pairs of staff, and one with a vendor contact
  const pairs: [DemoUser, DemoUser][] = [];
  for (let i = 0; i < 6; i++) pairs.push([staff[i]!, staff[(i + 1) % staff.length]!]);
  pairs.push([staff[0]!, vendorContacts[0]!.user]);
  for (const [a, b] of pairs) {
    const room: DemoRoom = {
      _id: [a._id, b._id].sort().join(""),
      t: "d",
      members: [a, b],
      weight: 1.5,
      msgs: 0,
      created: start,
    };
    rooms.push(room);
  }
  // livechat: a customer conversation with one agent
  const visitor = { _id: rcId(rng), username: "guest-4711", name: "Website visitor", staff: false };
  rooms.push({
    _id: rcId(rng),
    t: "l",
    fname: "Website visitor",
    members: [staff[5]!, visitor],
    weight: 0.5,
    msgs: 0,
    created: start,
  });
  // a discussion opened from #purchasing
  const discussion: DemoRoom = {
    _id: rcId(rng),
    t: "p",
    name: rcId(rng),
    fname: "Q3 reorder plan",
    topic: "Discussion from #purchasing",
    members: staff.slice(0, 4),
    prid: purchasing._id,
    weight: 1,
    msgs: 0,
    created: start,
  };
  rooms.push(discussion);

  // --- files: uploads (images, a PDF) and avatars
  interface Upload {
    _id: string;
    name: string;
    type: string;
    data: Buffer | null;
  }
  const uploads: Upload[] = [];
  if (withFiles) {
    const labels = ["Shelf A3", "Damaged case", "New display", "Pallet 12"];
    for (let i = 0; i < labels.length; i++)
      uploads.push({
        _id: rcId(rng),
        name: `${slug(labels[i]!)}.png`,
        type: "image/png",
        data: await demoImage(labels[i]!, 30 + i * 70),
      });
    uploads.push({
      _id: rcId(rng),
      name: "price-list-2025.pdf",
      type: "application/pdf",
      data: demoPdf("Price list 2025"),
    });
    // an attachment whose file the export lacks
    uploads.push({ _id: rcId(rng), name: "scan-missing.pdf", type: "application/pdf", data: null });
  }

  // --- messages: spread over the period, by room weight, with threads and discussion
  const wUser = writer("users");
  for (const u of [...users, visitor]) {
    await wUser.write({
      _id: u._id,
      username: u.username,
      name: u.name,
      active: u !== users[users.length - 3],
      type: u === bot ? "bot" : "user",
      roles: u.staff ? ["user"] : ["user", "guest"],
      createdAt: start,
      _updatedAt: start,
    });
  }
  await wUser.close();

  const totalWeight = rooms.reduce((s, r) => s + r.weight, 0);
  const wMsg = writer("rocketchat_message");
  const span = end.getTime() - start.getTime();
  let written = 0;
  const fileMessages: { upload: Upload; room: DemoRoom }[] = [];
  let uploadIdx = 0;
  const threadRoots: { id: string; room: DemoRoom; ts: Date; replies: number }[] = [];
  // Messages in time order; each picks a room by weight.
  const cumulative: number[] = [];
  let acc = 0;
  for (const r of rooms) {
    acc += r.weight / totalWeight;
    cumulative.push(acc);
  }
  const pickRoom = () => {
    const x = rng.next();
    return rooms[cumulative.findIndex((c) => x <= c)] ?? rooms[0]!;
  };
  const fill = (tpl: string, room: DemoRoom, author: DemoUser) => {
    const vendor = vendorNames[rng.int(0, vendorNames.length - 1)]!;
    const other = room.members.find((m) => m !== author && m.staff) ?? staff[0]!;
    return tpl
      .replace(/\{n\}/g, String(rng.int(2, 60)))
      .replace(/\{p\}/g, rng.pick(PRODUCTS))
      .replace(/\{price\}/g, `${rng.int(8, 140)}.${String(rng.int(0, 99)).padStart(2, "0")}`)
      .replace(/\{po\}/g, String(rng.int(1000, 9999)))
      .replace(/\{day\}/g, new Date(start.getTime() + rng.next() * span).toISOString().slice(0, 10))
      .replace(/\{aisle\}/g, String(rng.int(1, 14)))
      .replace(/\{vendor\}/g, vendor)
      .replace(/\{user\}/g, other.username);
  };
  // System messages at each room's start: the room's users joining, a topic.
  for (const room of rooms) {
    if (room.t === "d" || room.t === "l") continue;
    for (const m of room.members.slice(0, 4)) {
      await wMsg.write({
        _id: rcId(rng),
        rid: room._id,
        t: "uj",
        msg: m.username,
        ts: new Date(start.getTime() + written * 1000),
        u: { _id: m._id, username: m.username, name: m.name },
        groupable: false,
        _updatedAt: start,
      });
      written++;
      room.msgs++;
    }
    if (room.topic) {
      const by = room.members[0]!;
      await wMsg.write({
        _id: rcId(rng),
        rid: room._id,
        t: "room_changed_topic",
        msg: room.topic,
        ts: new Date(start.getTime() + written * 1000),
        u: { _id: by._id, username: by.username, name: by.name },
        groupable: false,
        _updatedAt: start,
      });
      written++;
      room.msgs++;
    }
  }
  const discussionTs = new Date(start.getTime() + span * 0.6);
  let discussionWritten = false;
  const remaining = Math.max(0, total - written);
  for (let i = 0; i < remaining; i++) {
    // Working hours, more recent months a little busier.
    const f = Math.sqrt((i + rng.next()) / remaining);
    let ts = new Date(start.getTime() + f * span);
    ts = new Date(Math.min(ts.getTime(), end.getTime() - 60_000));
    const room = pickRoom();
    const author = room.members[rng.int(0, room.members.length - 1)]!;
    const id = rcId(rng);
    const doc: Record<string, unknown> = {
      _id: id,
      rid: room._id,
      ts,
      u: { _id: author._id, username: author.username, name: author.name },
      _updatedAt: ts,
    };
    // A reply to a recent thread root in this room?
    const root = threadRoots.find((r) => r.room === room && ts.getTime() - r.ts.getTime() < 5 * 86_400_000);
    if (root && rng.chance(0.35)) {
      doc.msg = rng.pick(REPLIES);
      doc.tmid = root.id;
      if (rng.chance(0.1)) doc.tshow = true;
      root.replies++;
    } else if (room === purchasing && !discussionWritten && ts >= discussionTs) {
      discussionWritten = true;
      doc.msg = "";
      doc.t = "discussion-created";
      doc.drid = discussion._id;
      doc.dcount = 0;
    } else if (withFiles && uploadIdx < uploads.length && rng.chance(0.002) && room.t !== "l") {
      const upload = uploads[uploadIdx++]!;
      doc.msg = "";
      doc.file = { _id: upload._id, name: upload.name, type: upload.type };
      doc.files = [{ _id: upload._id, name: upload.name, type: upload.type, size: upload.data?.length ?? 0 }];
      const link = `/file-upload/${upload._id}/${encodeURIComponent(upload.name)}`;
      doc.attachments = [
        upload.type.startsWith("image/")
          ? {
              title: upload.name,
              title_link: link,
              title_link_download: true,
              image_url: link,
              image_type: upload.type,
              image_size: upload.data?.length ?? 0,
              type: "file",
              description: "Photo from the floor",
            }
          : {
              title: upload.name,
              title_link: link,
              title_link_download: true,
              type: "file",
              description: upload.data ? "Current price list" : "Scanned delivery note",
            },
      ];
      fileMessages.push({ upload, room });
    } else {
      doc.msg = fill(rng.pick(TEMPLATES), room, author);
      const mentioned = /@([a-z.]+)/.exec(doc.msg as string);
      if (mentioned) {
        const mu = users.find((u) => u.username === mentioned[1]);
        if (mu) doc.mentions = [{ _id: mu._id, username: mu.username, name: mu.name }];
      }
      if (rng.chance(0.06) && room.t !== "d") threadRoots.unshift({ id, room, ts, replies: 0 });
      if (threadRoots.length > 30) threadRoots.pop();
    }
    if (rng.chance(0.04) && !doc.t) {
      const editedAt = new Date(ts.getTime() + rng.int(30, 900) * 1000);
      doc.editedAt = editedAt;
      doc.editedBy = { _id: author._id, username: author.username };
      doc._updatedAt = editedAt;
    }
    if (rng.chance(0.08) && !doc.t) {
      const reactions: Record<string, { usernames: string[] }> = {};
      for (let k = rng.int(1, 2); k > 0; k--) {
        const e = rng.pick(EMOJI);
        reactions[e] = {
          usernames: [
            ...new Set(room.members.slice(0, rng.int(1, room.members.length)).map((m) => m.username)),
          ],
        };
      }
      doc.reactions = reactions;
    }
    await wMsg.write(doc);
    written++;
    room.msgs++;
    room.lm = ts;
  }
  // Thread roots carry their reply counts (Rocket.Chat keeps them on the root message): written
  // as a second document version would be a duplicate, so roots are rewritten in place below.
  await wMsg.close();
  await fixThreadRoots(path.join(opts.out, "rocketchat_message.json"), fmt, written);

  const wRoom = writer("rocketchat_room");
  for (const r of rooms) {
    await wRoom.write({
      _id: r._id,
      t: r.t,
      ...(r.name ? { name: r.name } : {}),
      ...(r.fname ? { fname: r.fname } : {}),
      ...(r.topic ? { topic: r.topic } : {}),
      msgs: r.msgs,
      usersCount: r.members.length,
      ...(r.t === "d"
        ? { uids: r.members.map((m) => m._id), usernames: r.members.map((m) => m.username) }
        : {}),
      ...(r.lm ? { lm: r.lm } : {}),
      ...(r.prid ? { prid: r.prid } : {}),
      ...(r.archived ? { archived: true } : {}),
      ts: r.created,
      _updatedAt: r.lm ?? r.created,
    });
  }
  await wRoom.close();

  const wSub = writer("rocketchat_subscription");
  for (const r of rooms)
    for (const m of r.members) {
      await wSub.write({
        _id: rcId(rng),
        rid: r._id,
        t: r.t,
        name: r.name ?? r.fname ?? m.username,
        u: { _id: m._id, username: m.username },
        open: true,
        ts: r.created,
        _updatedAt: r.created,
      });
    }
  await wSub.close();

  if (withFiles) {
    const chunkSize = 255 * 1024;
    const wFiles = writer("rocketchat_uploads.files");
    const wChunks = writer("rocketchat_uploads.chunks");
    for (const { upload, room } of fileMessages) {
      await wFiles.write({
        _id: upload._id,
        length: upload.data?.length ?? 0,
        chunkSize,
        uploadDate: start,
        filename: upload.name,
        contentType: upload.type,
        metadata: { rid: room._id, name: upload.name },
      });
      if (!upload.data) continue;
      for (let n = 0; n * chunkSize < upload.data.length; n++)
        await wChunks.write({
          _id: objectId(rng),
          files_id: upload._id,
          n,
          data: new Binary(upload.data.subarray(n * chunkSize, (n + 1) * chunkSize)),
        });
    }
    await wFiles.close();
    await wChunks.close();

    const wAv = writer("rocketchat_avatars.files");
    const wAvChunks = writer("rocketchat_avatars.chunks");
    for (let i = 0; i < staff.length; i += 2) {
      const u = staff[i]!;
      const data = await demoAvatar(
        u.name
          .split(" ")
          .map((w) => w[0])
          .join(""),
        i * 29,
      );
      const fid = rcId(rng);
      await wAv.write({
        _id: fid,
        length: data.length,
        chunkSize,
        uploadDate: start,
        filename: u.username,
        contentType: "image/png",
        userId: u._id,
      });
      await wAvChunks.write({ _id: objectId(rng), files_id: fid, n: 0, data: new Binary(data) });
    }
    await wAv.close();
    await wAvChunks.close();
  }

  return { messages: written, rooms: rooms.length, users: users.length + 1, ms: Date.now() - started };
}

/**
 * Thread roots get tcount (replies) and tlm (last reply): one more streaming pass over the written
 * file, rewriting only those documents.
 */
async function fixThreadRoots(
  file: string,
  fmt: { canonical: boolean; jsonArray: boolean },
  count: number,
): Promise<void> {
  const { readDocuments } = await import("../../server/modules/chat/import/chat-source.ts");
  const stats = new Map<string, { n: number; last: Date }>();
  const cf = {
    collection: "rocketchat_message" as const,
    file: path.basename(file),
    full: file,
    size: fs.statSync(file).size,
  };
  for await (const batch of readDocuments(cf))
    for (const { raw } of batch) {
      const doc = EJSON.deserialize(raw) as { tmid?: string; ts: Date };
      if (!doc.tmid) continue;
      const s = stats.get(doc.tmid) ?? { n: 0, last: doc.ts };
      s.n++;
      if (doc.ts > s.last) s.last = doc.ts;
      stats.set(doc.tmid, s);
    }
  const tmp = `${file}.tmp`;
  const out = new ExportWriter(tmp, fmt);
  for await (const batch of readDocuments(cf))
    for (const { raw } of batch) {
      const doc = EJSON.deserialize(raw) as Record<string, unknown>;
      const s = stats.get(doc._id as string);
      if (s) {
        doc.tcount = s.n;
        doc.tlm = s.last;
        doc.replies = [];
      }
      await out.write(doc);
    }
  await out.close();
  fs.renameSync(tmp, file);
  void count;
}
