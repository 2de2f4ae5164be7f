// Writes small Rocket.Chat mongoexport archives for tests, document by document, in either JSON
// form (lines or --jsonArray) and either Extended JSON mode (canonical or relaxed).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Binary, EJSON } from "bson";
import sharp from "sharp";

export type Docs = Record<string, Record<string, unknown>[]>;

export function writeArchive(
  dir: string,
  collections: Docs,
  opts: { canonical?: boolean; jsonArray?: boolean } = {},
): string {
  fs.mkdirSync(dir, { recursive: true });
  for (const f of fs.readdirSync(dir)) fs.rmSync(path.join(dir, f));
  for (const [name, docs] of Object.entries(collections)) {
    const texts = docs.map((d) => EJSON.stringify(d, { relaxed: !opts.canonical }));
    fs.writeFileSync(
      path.join(dir, `${name}.json`),
      opts.jsonArray ? `[${texts.join(",\n")}]\n` : texts.map((t) => `${t}\n`).join(""),
    );
  }
  return dir;
}

export function tempDir(prefix = "chat-archive-"): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

const T0 = new Date("2025-03-01T09:00:00Z");
export const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);

/** A small PNG (12×8, red). */
export const PNG = await sharp({ create: { width: 12, height: 8, channels: 3, background: "#c00" } })
  .png()
  .toBuffer();

/**
 * A small archive: users alice, bob, carol, vendor; rooms #general (alice, bob, carol), private
 * "buyers" (alice, vendor), a direct-message room bob–carol, a discussion of #general; every
 * message kind the import reads.
 */
export function sampleArchive(): Docs {
  const u = (id: string, username: string, name: string) => ({ _id: id, username, name });
  const users = [
    { ...u("U_alice", "alice", "Alice Archer"), active: true, _updatedAt: at(0) },
    { ...u("U_bob", "bob", "Bob Baker"), active: true, _updatedAt: at(0) },
    { ...u("U_carol", "carol", "Carol Cole"), active: false, _updatedAt: at(0) },
    { ...u("U_vendor", "vic.vendor", "Vic (Acme)"), _updatedAt: at(0) },
  ];
  const rooms = [
    { _id: "R_general", t: "c", name: "general", fname: "general", msgs: 7, lm: at(60), _updatedAt: at(60) },
    { _id: "R_buyers", t: "p", name: "buyers", topic: "Orders with Acme", msgs: 2, _updatedAt: at(60) },
    {
      _id: "U_bobU_carol",
      t: "d",
      uids: ["U_bob", "U_carol"],
      usernames: ["bob", "carol"],
      msgs: 1,
      _updatedAt: at(60),
    },
    {
      _id: "R_disc",
      t: "p",
      name: "disc1",
      fname: "Q3 plan",
      prid: "R_general",
      archived: true,
      _updatedAt: at(60),
    },
  ];
  const sub = (id: string, rid: string, uid: string) => ({
    _id: id,
    rid,
    u: { _id: uid },
    _updatedAt: at(0),
  });
  const subscriptions = [
    sub("S1", "R_general", "U_alice"),
    sub("S2", "R_general", "U_bob"),
    sub("S3", "R_general", "U_carol"),
    sub("S4", "R_buyers", "U_alice"),
    sub("S5", "R_buyers", "U_vendor"),
    sub("S6", "R_disc", "U_alice"),
  ];
  const by = (id: string, username: string, name: string) => ({ u: { _id: id, username, name } });
  const alice = by("U_alice", "alice", "Alice Archer");
  const bob = by("U_bob", "bob", "Bob Baker");
  const messages = [
    { _id: "M_join", rid: "R_general", t: "uj", msg: "alice", ts: at(1), ...alice, _updatedAt: at(1) },
    {
      _id: "M_topic",
      rid: "R_general",
      t: "room_changed_topic",
      msg: "Orders and prices",
      ts: at(2),
      ...alice,
      _updatedAt: at(2),
    },
    {
      _id: "M_price",
      rid: "R_general",
      msg: "The *price* for glue sticks is $4.20 per case, see https://example.com/prices",
      ts: at(10),
      ...alice,
      mentions: [{ _id: "U_bob", username: "bob" }],
      reactions: { ":thumbsup:": { usernames: ["bob", "carol"] } },
      tcount: 2,
      tlm: at(21),
      _updatedAt: at(10),
    },
    {
      _id: "M_reply1",
      rid: "R_general",
      msg: "Confirmed, ordering tomorrow",
      ts: at(20),
      tmid: "M_price",
      ...bob,
      _updatedAt: at(20),
    },
    {
      _id: "M_reply2",
      rid: "R_general",
      msg: "Shipment arrived",
      ts: at(21),
      tmid: "M_price",
      tshow: true,
      ...alice,
      _updatedAt: at(21),
    },
    {
      _id: "M_edit",
      rid: "R_general",
      msg: "Warehouse closes at five",
      ts: at(30),
      ...bob,
      editedAt: at(31),
      editedBy: { _id: "U_bob", username: "bob" },
      _updatedAt: at(31),
    },
    {
      _id: "M_old",
      rid: "R_general",
      msg: "Warehouse closes at four",
      ts: at(30),
      ...bob,
      _hidden: true,
      parent: "M_edit",
      _updatedAt: at(31),
    },
    {
      _id: "M_file",
      rid: "R_general",
      msg: "",
      ts: at(40),
      ...alice,
      file: { _id: "F_img", name: "shelf.png", type: "image/png" },
      files: [{ _id: "F_img", name: "shelf.png", type: "image/png", size: PNG.length }],
      attachments: [
        {
          title: "shelf.png",
          title_link: "/file-upload/F_img/shelf.png",
          image_url: "/file-upload/F_img/shelf.png",
          image_type: "image/png",
          type: "file",
          description: "Photo of shelf",
        },
      ],
      _updatedAt: at(40),
    },
    {
      _id: "M_missing",
      rid: "R_general",
      msg: "",
      ts: at(41),
      ...alice,
      files: [{ _id: "F_gone", name: "scan.pdf", type: "application/pdf", size: 10 }],
      attachments: [{ title: "scan.pdf", title_link: "/file-upload/F_gone/scan.pdf", type: "file" }],
      _updatedAt: at(41),
    },
    {
      _id: "M_disc",
      rid: "R_general",
      t: "discussion-created",
      msg: "",
      drid: "R_disc",
      ts: at(50),
      ...alice,
      _updatedAt: at(50),
    },
    {
      _id: "M_html",
      rid: "R_general",
      msg: '<script>window.__xss=1</script> <img src=x onerror="window.__xss=2"> [click](javascript:window.__xss=3)',
      ts: at(60),
      ...bob,
      _updatedAt: at(60),
    },
    {
      _id: "M_buy1",
      rid: "R_buyers",
      msg: "Acme quote: 120 cases of fineliners",
      ts: at(5),
      ...alice,
      _updatedAt: at(5),
    },
    {
      _id: "M_buy2",
      rid: "R_buyers",
      msg: "Quote accepted",
      ts: at(6),
      u: { _id: "U_vendor", username: "vic.vendor", name: "Vic (Acme)" },
      _updatedAt: at(6),
    },
    { _id: "M_dm", rid: "U_bobU_carol", msg: "secret glue plans", ts: at(7), ...bob, _updatedAt: at(7) },
    {
      _id: "M_discmsg",
      rid: "R_disc",
      msg: "Plan for Q3 reorders",
      ts: at(55),
      ...alice,
      _updatedAt: at(55),
    },
  ];
  const upload = {
    _id: "F_img",
    length: PNG.length,
    chunkSize: 261120,
    uploadDate: at(40),
    filename: "shelf.png",
    contentType: "image/png",
  };
  return {
    users,
    rocketchat_room: rooms,
    rocketchat_subscription: subscriptions,
    rocketchat_message: messages,
    "rocketchat_uploads.files": [upload],
    "rocketchat_uploads.chunks": [
      { _id: "C1", files_id: "F_img", n: 0, data: new Binary(PNG.subarray(0, 20)) },
      { _id: "C2", files_id: "F_img", n: 1, data: new Binary(PNG.subarray(20)) },
    ],
    "rocketchat_avatars.files": [
      { _id: "A_bob", length: PNG.length, uploadDate: at(0), contentType: "image/png", userId: "U_bob" },
    ],
    "rocketchat_avatars.chunks": [{ _id: "AC1", files_id: "A_bob", n: 0, data: new Binary(PNG) }],
  };
}
