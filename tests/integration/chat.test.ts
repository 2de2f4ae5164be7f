// The Chat Archive end to end through the app: the import as a data-pipeline run (both JSON forms,
// both Extended JSON modes, every message kind, incremental, a bad document), who may read what
// (rooms, messages, threads, search hits, files, avatars: by any id), and the search operators.
import fs from "node:fs";
import { ObjectId } from "bson";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { at, type Docs, sampleArchive, tempDir, writeArchive } from "../helpers/chat-archive.ts";
import { testBackend } from "../helpers/db.ts";

describe(`chat archive (${testBackend})`, () => {
  let t: TestApp;
  const dir = tempDir();
  const tokens: Record<string, string> = {};

  const call = async (who: string, path: string, init: RequestInit = {}) =>
    fetch(`${t.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${tokens[who]}`, ...(init.headers as Record<string, string>) },
    });
  const json = async (who: string, path: string, status = 200) => {
    const res = await call(who, path);
    const body = await res.json();
    expect(res.status, `${path}: ${JSON.stringify(body).slice(0, 300)}`).toBe(status);
    return body;
  };

  /** Runs a chat import through POST /csv/chat-import and answers its history record. */
  const runImport = async () => {
    const res = await call("admin", "/csv/chat-import", { method: "POST" });
    expect(res.status).toBe(200);
    const { run_id } = await res.json();
    await t.app.services.dataOps.idle();
    const run = await t.tdb.db.prisma.dataRun.findUniqueOrThrow({ where: { id: run_id } });
    const record = await t.tdb.db.prisma.importHistory.findFirstOrThrow({ where: { runId: run_id } });
    const info = record.additionalInfo as { details: { tables: Record<string, Record<string, number>> } };
    return { run, record, tables: info.details?.tables ?? {} };
  };

  const snapshot = async () => {
    const q = (s: string) => t.tdb.db.prisma.$queryRawUnsafe<Record<string, unknown>[]>(s);
    return {
      users: await q(
        "SELECT id, mongo_id, username, name, active, avatar_type, length(avatar) AS avatar FROM chat_users ORDER BY mongo_id",
      ),
      rooms: await q(
        "SELECT id, type, name, fname, topic, msgs, message_count, uids, usernames, prid, archived, last_message_at FROM chat_rooms ORDER BY id",
      ),
      members: await q("SELECT * FROM chat_room_members ORDER BY 1, 2"),
      messages: await q(
        "SELECT id, rid, ts, user_mongo_id, username, user_name, msg, t, tmid, tshow, tcount, tlm, drid, edited_at, edited_by, reactions, attachments, files, file_ids, mentions, updated_at, search::text AS search FROM chat_messages ORDER BY id",
      ),
      files: await q(
        "SELECT id, kind, filename, content_type, length, rid, md5(data) AS data FROM chat_files ORDER BY id",
      ),
    };
  };

  beforeAll(async () => {
    writeArchive(dir, sampleArchive());
    t = await startTestApp({ env: { CHAT_SOURCE_DIR: dir, DEMO_DATA: "0" } });
    tokens.admin = (await t.login("admin")).token;
    await t.createUser("nolink", ["access:chat"]);
    tokens.nolink = (await t.login("nolink")).token;
    await t.createUser("usermgr", ["settings:user_management"]);
    tokens.usermgr = (await t.login("usermgr")).token;
  }, 60_000);
  afterAll(async () => {
    await t.close();
  });

  it("imports every collection as a run of the data pipeline, with numeric chat user ids", async () => {
    const { run, record, tables } = await runImport();
    expect(run.type).toBe("chat");
    expect(run.status).toBe("completed");
    expect(record.status).toBe("completed");
    expect(tables.messages).toMatchObject({ added: 14, updated: 0, deleted: 0, skipped: 0 });
    expect(tables.users).toMatchObject({ added: 4 });
    const users = await json("admin", "/chat-api/users");
    expect(users.users.map((u: { username: string }) => u.username).sort()).toEqual([
      "alice",
      "bob",
      "carol",
      "vic.vendor",
    ]);
    for (const u of users.users) expect(Number.isInteger(u.id)).toBe(true);
    const status = await json("admin", "/csv/status");
    expect(status.progress).toMatchObject({
      type: "chat",
      status: "complete",
      operation: "Chat import complete",
    });
  });

  it("reads both JSON forms in both Extended JSON modes to the same archive", async () => {
    const reference = await snapshot();
    for (const opts of [
      { canonical: true, jsonArray: false },
      { canonical: false, jsonArray: true },
      { canonical: true, jsonArray: true },
    ]) {
      for (const table of [
        "chat_messages",
        "chat_rooms",
        "chat_room_members",
        "chat_subscriptions",
        "chat_files",
      ])
        await t.tdb.db.prisma.$executeRawUnsafe(`DELETE FROM ${table}`);
      // Users stay: their numeric ids are kept across imports.
      await t.tdb.db.prisma.$executeRawUnsafe("UPDATE chat_users SET updated_at = NULL, avatar_id = NULL");
      writeArchive(dir, sampleArchive(), opts);
      const { run, tables } = await runImport();
      expect(run.status, JSON.stringify(opts)).toBe("completed");
      expect(tables.messages, JSON.stringify(opts)).toMatchObject({ added: 14 });
      expect(await snapshot(), JSON.stringify(opts)).toEqual(reference);
    }
    writeArchive(dir, sampleArchive());
  });

  it("shows every message kind: system lines, threads, edits, reactions, files, discussions", async () => {
    const page = await json("admin", "/chat-api/rooms/R_general/messages");
    const ids = page.messages.map((m: { id: string }) => m.id);
    // Thread replies only in their thread (unless sent to the room too); edit-history copies never.
    expect(ids).toEqual([
      "M_join",
      "M_topic",
      "M_price",
      "M_reply2",
      "M_edit",
      "M_file",
      "M_missing",
      "M_disc",
      "M_html",
    ]);
    const byId = Object.fromEntries(page.messages.map((m: { id: string }) => [m.id, m]));
    expect(byId.M_join).toMatchObject({ t: "uj" });
    expect(byId.M_topic).toMatchObject({ t: "room_changed_topic", msg: "Orders and prices" });
    expect(byId.M_price).toMatchObject({
      tcount: 2,
      mentions: ["bob"],
      reactions: [{ emoji: ":thumbsup:", count: 2, usernames: ["bob", "carol"] }],
      user: { username: "alice", name: "Alice Archer", has_avatar: false },
    });
    expect(byId.M_edit).toMatchObject({ edited_by: "bob", msg: "Warehouse closes at five" });
    expect(byId.M_edit.edited_at).toBe(at(31).toISOString());
    expect(byId.M_file.attachments[0]).toMatchObject({
      title: "shelf.png",
      description: "Photo of shelf",
      file: { id: "F_img", image: true, available: true, type: "image/png" },
    });
    expect(byId.M_missing.attachments[0].file).toMatchObject({ id: "F_gone", available: false });
    expect(byId.M_disc).toMatchObject({ t: "discussion-created", drid: "R_disc" });
    expect(page.room).toMatchObject({
      id: "R_general",
      type: "c",
      name: "general",
      message_count: 10,
      members: 3,
    });

    const thread = await json("admin", "/chat-api/threads/M_price");
    expect(thread.root.id).toBe("M_price");
    expect(thread.replies.map((m: { id: string }) => m.id)).toEqual(["M_reply1", "M_reply2"]);

    const rooms = await json("admin", "/chat-api/rooms");
    const disc = rooms.rooms.find((r: { id: string }) => r.id === "R_disc");
    expect(disc).toMatchObject({ name: "Q3 plan", prid: "R_general", archived: true });
    const dm = rooms.rooms.find((r: { id: string }) => r.id === "U_bobU_carol");
    expect(dm).toMatchObject({ type: "d", name: "bob, carol", members: 2 });

    const img = await call("admin", "/chat-api/files/F_img");
    expect(img.status).toBe(200);
    expect(img.headers.get("content-type")).toBe("image/png");
    expect(
      Buffer.from(await img.arrayBuffer())
        .subarray(1, 4)
        .toString(),
    ).toBe("PNG");
    const thumb = await call("admin", "/chat-api/files/F_img?thumb=1");
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get("content-type")).toBe("image/webp");
    expect((await call("admin", "/chat-api/files/F_gone")).status).toBe(404);
    const avatar = await call("admin", "/chat-api/avatar/U_bob");
    expect(avatar.status).toBe(200);
    expect(avatar.headers.get("content-type")).toBe("image/png");
  });

  it("pages both ways from a message or a date, and names a bad cursor", async () => {
    const older = await json("admin", "/chat-api/rooms/R_general/messages?before=M_edit&limit=2");
    expect(older.messages.map((m: { id: string }) => m.id)).toEqual(["M_price", "M_reply2"]);
    expect(older.has_older).toBe(true);
    const newer = await json("admin", "/chat-api/rooms/R_general/messages?after=M_disc");
    expect(newer.messages.map((m: { id: string }) => m.id)).toEqual(["M_html"]);
    expect(newer.has_newer).toBe(false);
    const around = await json("admin", "/chat-api/rooms/R_general/messages?around=M_file&limit=3");
    expect(around.anchor).toBe("M_file");
    expect(around.messages.map((m: { id: string }) => m.id)).toEqual(["M_edit", "M_file", "M_missing"]);
    const day = await json("admin", "/chat-api/rooms/R_general/messages?around=2025-03-01&limit=4");
    expect(day.anchor).toBe("M_join");
    // A reader's local midnight (the page sends its own day's start): another UTC day, still a date.
    const tokyo = await json(
      "admin",
      `/chat-api/rooms/R_general/messages?around=${encodeURIComponent("2025-03-01T00:00:00+09:00")}&limit=4`,
    );
    expect(tokyo.anchor).toBe("M_join");
    const late = await json(
      "admin",
      `/chat-api/rooms/R_general/messages?around=${encodeURIComponent("2025-03-01T18:05:30+09:00")}&limit=4`,
    );
    expect(late.anchor).toBe("M_price");
    const days = await json("admin", "/chat-api/rooms/R_general/days?from=2025-02-01&to=2025-03-31");
    expect(days.days).toEqual(["2025-03-01"]);
    const bad = await json("admin", "/chat-api/rooms/R_general/messages?before=NOPE", 400);
    expect(bad.message).toMatch(/before: no message NOPE in this room/);
    expect(
      (await json("admin", "/chat-api/rooms/R_general/messages?around=2025-13-45", 400)).message,
    ).toMatch(/around/);
    expect((await json("admin", "/chat-api/rooms/NOPE/messages", 404)).message).toMatch(/NOPE not found/);
    expect((await json("admin", `/chat-api/search?q=${"x".repeat(501)}`, 400)).message).toMatch(
      /500 characters/,
    );
  });

  it("the calendar's days are the reader's: a time zone's own days, across a daylight-saving change", async () => {
    // A room beside the archive (removed again at the end): late evenings in Los Angeles are the
    // next day in UTC. 2026-03-08 is the US change to summer time (02:00 PST -> 03:00 PDT), so
    // that day in Los Angeles runs from 08:00 UTC to 07:00 UTC the next day: 23 hours.
    const late: [string, string][] = [
      ["TZ_a", "2026-03-02T06:30:00Z"], // 22:30 PST on 1 March
      ["TZ_b", "2026-03-02T07:30:00Z"], // 23:30 PST on 1 March
      ["TZ_c", "2026-03-02T08:30:00Z"], // 00:30 PST on 2 March
      ["TZ_d", "2026-03-08T07:30:00Z"], // 23:30 PST on 7 March
      ["TZ_e", "2026-03-09T06:30:00Z"], // 23:30 PDT on 8 March
      ["TZ_f", "2026-03-09T07:30:00Z"], // 00:30 PDT on 9 March (with PST's -8 it would be the 8th)
    ];
    const exec = (q: string, ...p: unknown[]) => t.tdb.db.prisma.$executeRawUnsafe(q, ...p);
    await exec("INSERT INTO chat_rooms (id, type, name, fname) VALUES ('R_tz', 'c', 'late', 'late')");
    try {
      for (const [id, ts] of late)
        await exec(
          "INSERT INTO chat_messages (id, rid, ts, msg, username) VALUES ($1, 'R_tz', $2::timestamptz, $3, 'alice')",
          id,
          ts,
          `late ${id}`,
        );
      const days = async (query: string, status = 200) =>
        json("admin", `/chat-api/rooms/R_tz/days?${query}`, status);
      const la = `tz=${encodeURIComponent("America/Los_Angeles")}`;

      // The month in Los Angeles: both late messages of 2 March UTC are on 1 March there.
      expect((await days(`from=2026-03-01&to=2026-03-31&${la}`)).days).toEqual([
        "2026-03-01",
        "2026-03-02",
        "2026-03-07",
        "2026-03-08",
        "2026-03-09",
      ]);
      // Without tz (or with UTC) the days are UTC's, as before.
      const utc = ["2026-03-02", "2026-03-08", "2026-03-09"];
      expect((await days("from=2026-03-01&to=2026-03-31")).days).toEqual(utc);
      expect((await days("from=2026-03-01&to=2026-03-31&tz=UTC")).days).toEqual(utc);
      expect((await days("from=2026-03-01&to=2026-03-01")).days).toEqual([]);

      // from and to are days there: 1 March in Los Angeles is 08:00 UTC on the 1st to 08:00 on the 2nd.
      expect((await days(`from=2026-03-01&to=2026-03-01&${la}`)).days).toEqual(["2026-03-01"]);
      expect((await days(`from=2026-03-02&to=2026-03-02&${la}`)).days).toEqual(["2026-03-02"]);
      expect((await days(`from=2026-03-02&to=2026-03-06&${la}`)).days).toEqual(["2026-03-02"]);
      // Across the change: 8 March ends at 07:00 UTC (00:30 PDT on the 9th is not in it), and
      // 23:30 PST on the 7th is the 7th although it is 8 March in UTC.
      expect((await days(`from=2026-03-08&to=2026-03-08&${la}`)).days).toEqual(["2026-03-08"]);
      expect((await days(`from=2026-03-09&to=2026-03-09&${la}`)).days).toEqual(["2026-03-09"]);
      expect((await days(`from=2026-03-07&to=2026-03-07&${la}`)).days).toEqual(["2026-03-07"]);
      // A zone's name in any case; a zone with no summer time (Honolulu, UTC-10 all year): 08:30
      // UTC on 2 March is 22:30 on the 1st there, 07:30 UTC on 9 March 21:30 on the 8th.
      expect((await days("from=2026-03-01&to=2026-03-02&tz=america/los_angeles")).days).toEqual([
        "2026-03-01",
        "2026-03-02",
      ]);
      expect((await days("from=2026-03-01&to=2026-03-09&tz=Pacific/Honolulu")).days).toEqual([
        "2026-03-01",
        "2026-03-07",
        "2026-03-08",
      ]);

      // An unknown zone is a 400 naming tz, never a 500; so is a POSIX rule PostgreSQL would take.
      for (const bad of ["Mars/Olympus_Mons", "FOO3", "UTC+3", ""])
        expect(
          (await days(`from=2026-03-01&to=2026-03-31&tz=${encodeURIComponent(bad)}`, 400)).message,
          bad,
        ).toMatch(/^tz: /);

      // tRPC answers the same, and names the field.
      const trpc = async (input: Record<string, string>) => {
        const res = await call(
          "admin",
          `/trpc/chat.days?input=${encodeURIComponent(JSON.stringify({ json: { rid: "R_tz", ...input } }))}`,
        );
        return { status: res.status, body: await res.json() };
      };
      const ok = await trpc({ from: "2026-03-01", to: "2026-03-09", tz: "America/Los_Angeles" });
      expect(ok.status).toBe(200);
      expect(ok.body.result.data.json).toEqual([
        "2026-03-01",
        "2026-03-02",
        "2026-03-07",
        "2026-03-08",
        "2026-03-09",
      ]);
      const plain = await trpc({ from: "2026-03-01", to: "2026-03-09" });
      expect(plain.body.result.data.json).toEqual(utc);
      const bad = await trpc({ from: "2026-03-01", to: "2026-03-09", tz: "Mars/Olympus_Mons" });
      expect(bad.status).toBe(400);
      expect(bad.body.error.json.data).toMatchObject({ code: "BAD_REQUEST", field: "tz" });
      expect(bad.body.error.json.message).toMatch(/unknown time zone: Mars\/Olympus_Mons/);
    } finally {
      await exec("DELETE FROM chat_messages WHERE rid = 'R_tz'");
      await exec("DELETE FROM chat_rooms WHERE id = 'R_tz'");
    }
  });

  it("re-imports incrementally: unchanged documents skipped, changed updated, vanished removed", async () => {
    const idsBefore = await t.tdb.db.prisma.chatUser.findMany({ select: { id: true, mongoId: true } });
    const again = await runImport();
    expect(again.tables.messages).toMatchObject({ added: 0, updated: 0, deleted: 0, skipped: 14 });
    expect(again.tables.users).toMatchObject({ skipped: 4 });

    const docs: Docs = sampleArchive();
    const msgs = docs.rocketchat_message!;
    const buy1 = msgs.find((m) => m._id === "M_buy1")!;
    buy1.msg = "Acme quote revised: 150 cases of fineliners";
    buy1._updatedAt = at(500);
    docs.rocketchat_message = msgs.filter((m) => m._id !== "M_buy2");
    docs.rocketchat_message.push({
      _id: "M_new",
      rid: "R_buyers",
      msg: "Delivery booked",
      ts: at(600),
      u: { _id: "U_alice", username: "alice" },
      _updatedAt: at(600),
    });
    writeArchive(dir, docs);
    const inc = await runImport();
    expect(inc.tables.messages).toMatchObject({ added: 1, updated: 1, deleted: 1, skipped: 12 });
    const buyers = await json("admin", "/chat-api/rooms/R_buyers/messages");
    expect(buyers.messages.map((m: { id: string; msg: string }) => [m.id, m.msg])).toEqual([
      ["M_buy1", "Acme quote revised: 150 cases of fineliners"],
      ["M_new", "Delivery booked"],
    ]);
    expect(buyers.room.message_count).toBe(2);
    expect(await t.tdb.db.prisma.chatUser.findMany({ select: { id: true, mongoId: true } })).toEqual(
      idsBefore,
    );
    writeArchive(dir, sampleArchive());
    await runImport();
  });

  it("re-imports from the index the last import stored: hidden copies, moved messages, returning rooms", async () => {
    const counts = async () =>
      Object.fromEntries(
        (
          await t.tdb.db.prisma.$queryRawUnsafe<{ id: string; message_count: number; last: Date | null }[]>(
            "SELECT id, message_count, last_message_at AS last FROM chat_rooms ORDER BY id",
          )
        ).map((r) => [r.id, [r.message_count, r.last?.toISOString() ?? null]]),
      );
    const fresh = async () =>
      Object.fromEntries(
        (
          await t.tdb.db.prisma.$queryRawUnsafe<{ id: string; n: number; last: Date | null }[]>(
            `SELECT r.id, count(m.id)::int AS n, max(m.ts) AS last FROM chat_rooms r
             LEFT JOIN chat_messages m ON m.rid = r.id GROUP BY r.id ORDER BY r.id`,
          )
        ).map((r) => [r.id, [r.n, r.last?.toISOString() ?? null]]),
      );
    const state = await t.tdb.db.prisma.chatImportState.findUniqueOrThrow({
      where: { collection: "messages" },
    });
    expect(state.documents).toBe(14);

    // An edit: Rocket.Chat keeps the old text as a hidden copy; a message moves to another room;
    // the discussion room leaves the export (its message stays) and comes back in the next one.
    const docs: Docs = sampleArchive();
    const msgs = docs.rocketchat_message!;
    const buy1 = msgs.find((m) => m._id === "M_buy1")!;
    buy1._hidden = true;
    buy1._updatedAt = at(700);
    const buy2 = msgs.find((m) => m._id === "M_buy2")!;
    buy2.rid = "R_general";
    buy2._updatedAt = at(700);
    docs.rocketchat_room = docs.rocketchat_room!.filter((r) => r._id !== "R_disc");
    writeArchive(dir, docs);
    const edit = await runImport();
    expect(edit.run.status).toBe("completed");
    expect(edit.tables.messages).toMatchObject({ added: 0, updated: 1, deleted: 1, skipped: 12 });
    expect(await counts()).toEqual({ ...(await fresh()), R_buyers: [0, at(6).toISOString()] });

    writeArchive(dir, sampleArchive());
    const back = await runImport();
    expect(back.tables.messages).toMatchObject({ added: 1, updated: 1, deleted: 0, skipped: 12 });
    expect(back.tables.rooms).toMatchObject({ added: 1 });
    expect(await counts()).toEqual(await fresh());
    expect((await counts()).R_disc).toEqual([1, at(55).toISOString()]);
    const again = await runImport();
    expect(again.tables.messages).toMatchObject({ added: 0, updated: 0, deleted: 0, skipped: 14 });

    // Messages removed behind the import's back: the stored index no longer matches the table
    // (its count), so the table is read instead and the missing messages come back.
    await t.tdb.db.prisma.$executeRawUnsafe("DELETE FROM chat_messages WHERE id IN ('M_buy1', 'M_dm')");
    const repaired = await runImport();
    expect(repaired.tables.messages).toMatchObject({ added: 2, updated: 0, deleted: 0, skipped: 12 });
    expect(await counts()).toEqual(await fresh());
  });

  it("re-imports a larger export from its lines' bytes: changed, unchanged, deleted, new and hidden messages", async () => {
    // 3,000 more messages (some with ObjectId ids, some updated after the 28th of a month): the
    // file spans several read chunks. A re-import decides most lines from their bytes alone.
    const extra = (i: number): Record<string, unknown> => ({
      _id: i % 7 === 0 ? new ObjectId(i.toString(16).padStart(24, "0")) : `X_${i}`,
      rid: "R_general",
      msg: `note ${i} ${"lorem ".repeat(i % 40)}`,
      ts: at(2000 + i),
      u: { _id: "U_alice", username: "alice", name: "Alice Archer" },
      _updatedAt: i % 3 === 0 ? at(41_000 + i) : new Date(at(1000 + i).getTime() + (i % 1000)),
    });
    const idOf = (d: Record<string, unknown>) =>
      d._id instanceof ObjectId ? d._id.toHexString() : (d._id as string);
    const ids = Array.from({ length: 3000 }, (_, i) => i);
    const docs: Docs = sampleArchive();
    docs.rocketchat_message!.push(...ids.map(extra));
    writeArchive(dir, docs);
    expect(fs.statSync(`${dir}/rocketchat_message.json`).size).toBeGreaterThan(600_000);
    const first = await runImport();
    expect(first.tables.messages).toMatchObject({ added: 3000, updated: 0, deleted: 0, skipped: 14 });

    // Changed: every 50th (a new text and _updatedAt); gone: every 77th; hidden (an edit's old
    // copy): every 91st; 25 new ones. Written canonical this time: every line's text differs, the
    // versions of the unchanged ones do not.
    const gone = (i: number) => i % 77 === 0;
    const hiddenNow = (i: number) => i % 91 === 0 && !gone(i);
    const changed = (i: number) => i % 50 === 0 && !gone(i) && !hiddenNow(i);
    const next: Docs = sampleArchive();
    for (const i of ids) {
      if (gone(i)) continue;
      const d = extra(i);
      if (changed(i)) Object.assign(d, { msg: `${d.msg as string} (revised)`, _updatedAt: at(90_000 + i) });
      if (hiddenNow(i)) Object.assign(d, { _hidden: true, _updatedAt: at(90_000 + i) });
      next.rocketchat_message!.push(d);
    }
    for (let i = 3000; i < 3025; i++) next.rocketchat_message!.push(extra(i));
    writeArchive(dir, next, { canonical: true });
    const inc = await runImport();
    const nChanged = ids.filter(changed).length;
    const nGone = ids.filter(gone).length + ids.filter(hiddenNow).length;
    expect(inc.tables.messages).toMatchObject({
      added: 25,
      updated: nChanged,
      deleted: nGone,
      skipped: 14 + 3000 - nChanged - nGone,
    });
    const expected = next
      .rocketchat_message!.filter((d) => !d._hidden)
      .map((d) => ({ id: idOf(d), msg: d.msg, updated_at: d._updatedAt }))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const table = async () =>
      t.tdb.db.prisma.$queryRawUnsafe<{ id: string; msg: string; updated_at: Date }[]>(
        'SELECT id, msg, updated_at FROM chat_messages ORDER BY id COLLATE "C"',
      );
    expect(await table()).toEqual(expected);
    const [general] = await t.tdb.db.prisma.$queryRawUnsafe<{ n: number }[]>(
      "SELECT message_count AS n FROM chat_rooms WHERE id = 'R_general'",
    );
    expect(general!.n).toBe(
      expected.filter((m) => next.rocketchat_message!.find((d) => idOf(d) === m.id)!.rid === "R_general")
        .length,
    );

    // The same export again: every message skipped, nothing changes.
    const again = await runImport();
    expect(again.tables.messages).toMatchObject({
      added: 0,
      updated: 0,
      deleted: 0,
      skipped: expected.length,
    });
    expect(await table()).toEqual(expected);

    writeArchive(dir, sampleArchive());
    const back = await runImport();
    expect(back.tables.messages).toMatchObject({ added: 0, updated: 0, skipped: 14 });
  });

  it("a bad document fails the run with its file, line and problem, and changes nothing", async () => {
    const before = await snapshot();
    const docs = sampleArchive();
    docs.rocketchat_message![2]!.ts = "yesterday";
    docs.rocketchat_message![2]!._updatedAt = at(999);
    writeArchive(dir, docs);
    const { run } = await runImport();
    expect(run.status).toBe("failed");
    expect(run.error).toBe('rocketchat_message.json line 3: ts: not a date ("yesterday")');
    expect(await snapshot()).toEqual(before);
    writeArchive(dir, { ...sampleArchive(), rocketchat_room: [] });
    await import("node:fs").then((fs) => fs.rmSync(`${dir}/rocketchat_room.json`));
    const missing = await runImport();
    expect(missing.run.error).toMatch(/rocketchat_room\.json not found/);
    writeArchive(dir, sampleArchive());
  });

  describe("who sees what", () => {
    beforeAll(async () => {
      const ids = Object.fromEntries(
        (await t.tdb.db.prisma.chatUser.findMany()).map((u) => [u.username, u.id]),
      );
      for (const [name, chat] of [
        ["alice.staff", "alice"],
        ["vic.staff", "vic.vendor"],
      ] as const) {
        const id = await t.createUser(name, ["access:chat"]);
        await t.tdb.db.prisma.user.update({ where: { id }, data: { rocketChatUserId: ids[chat] } });
        tokens[name] = (await t.login(name)).token;
      }
    });

    it("a linked user lists the rooms their chat user was in; an unlinked user none, and why", async () => {
      const alice = await json("alice.staff", "/chat-api/rooms");
      expect(alice.rooms.map((r: { id: string }) => r.id).sort()).toEqual([
        "R_buyers",
        "R_disc",
        "R_general",
      ]);
      expect(alice.access).toMatchObject({
        all_rooms: false,
        linked: true,
        notice: null,
        chat_username: "alice",
      });
      const nolink = await json("nolink", "/chat-api/rooms");
      expect(nolink.rooms).toEqual([]);
      expect(nolink.access.notice).toMatch(/not linked to a chat user/);
      const admin = await json("admin", "/chat-api/rooms");
      expect(admin.rooms.map((r: { id: string }) => r.id)).toContain("U_bobU_carol");
    });

    it("a room, message, thread, search hit, file or avatar outside the set is not found, by any id", async () => {
      // vic.vendor reads only "buyers".
      expect((await call("vic.staff", "/chat-api/rooms/R_general/messages")).status).toBe(404);
      expect((await call("vic.staff", "/chat-api/rooms/U_bobU_carol/messages")).status).toBe(404);
      expect((await call("vic.staff", "/chat-api/rooms/R_general/messages?around=M_price")).status).toBe(404);
      expect(
        (await call("vic.staff", "/chat-api/rooms/R_general/days?from=2025-03-01&to=2025-03-02")).status,
      ).toBe(404);
      expect((await call("vic.staff", "/chat-api/threads/M_price")).status).toBe(404);
      expect((await call("vic.staff", "/chat-api/threads/M_reply1")).status).toBe(404);
      expect((await call("vic.staff", "/chat-api/files/F_img")).status).toBe(404);
      expect((await call("vic.staff", "/chat-api/files/F_img?thumb=1")).status).toBe(404);
      expect((await call("vic.staff", "/chat-api/rooms/R_general/export")).status).toBe(404);
      expect((await call("vic.staff", "/chat-api/avatar/U_bob")).status).toBe(404);
      const search = await json("vic.staff", "/chat-api/search?q=glue");
      expect(search.hits).toEqual([]);
      expect(
        (await json("vic.staff", "/chat-api/search?q=quote")).hits.map(
          (h: { message: { id: string } }) => h.message.id,
        ),
      ).toEqual(["M_buy2", "M_buy1"]);
      expect((await call("vic.staff", "/chat-api/search?q=glue%20in:general")).status).toBe(400);
      // alice shares #general with bob: his avatar is hers to see; the DM is not.
      expect((await call("alice.staff", "/chat-api/avatar/U_bob")).status).toBe(200);
      expect((await call("alice.staff", "/chat-api/rooms/U_bobU_carol/messages")).status).toBe(404);
      expect((await json("alice.staff", "/chat-api/search?q=secret")).hits).toEqual([]);
      // The user form's chat-user selector shows avatars to user managers.
      expect((await call("usermgr", "/chat-api/avatar/U_bob")).status).toBe(200);
      expect((await call("usermgr", "/chat-api/rooms")).status).toBe(403);
      // tRPC answers the same.
      const trpc = await call(
        "vic.staff",
        `/trpc/chat.thread?input=${encodeURIComponent(JSON.stringify({ json: { tmid: "M_price" } }))}`,
      );
      expect(trpc.status).toBe(404);
    });

    it("an admin's reading of a direct-message room is recorded in the audit log", async () => {
      await t.tdb.db.prisma.$executeRawUnsafe("DELETE FROM chat_audit_log");
      await json("admin", "/chat-api/rooms/R_general/messages");
      expect(await t.tdb.db.prisma.chatAuditLog.count()).toBe(0);
      await json("admin", "/chat-api/rooms/U_bobU_carol/messages");
      await json("admin", "/chat-api/rooms/U_bobU_carol/messages");
      const log = await t.tdb.db.prisma.chatAuditLog.findMany();
      expect(log).toEqual([expect.objectContaining({ rid: "U_bobU_carol", action: "read_messages" })]);
    });
  });

  it("search: words, phrases, from:, in:, has:file, dates, newest or best first, hits highlighted", async () => {
    const ids = async (q: string, sort = "newest") =>
      (await json("admin", `/chat-api/search?q=${encodeURIComponent(q)}&sort=${sort}`)).hits.map(
        (h: { message: { id: string } }) => h.message.id,
      );
    expect(await ids("glue")).toEqual(["M_price", "M_dm"]);
    expect(await ids("from:bob glue")).toEqual(["M_dm"]);
    expect(await ids("glue in:general")).toEqual(["M_price"]);
    expect(await ids('"glue sticks"')).toEqual(["M_price"]);
    expect(await ids('"sticks glue"')).toEqual([]);
    expect(await ids("has:file")).toEqual(["M_missing", "M_file"]);
    expect(await ids("shelf")).toEqual(["M_file"]);
    expect(await ids("warehouse")).toEqual(["M_edit"]);
    expect(await ids("closes before:2025-03-01")).toEqual([]);
    expect(await ids("closes after:2025-03-01 before:2025-03-02")).toEqual(["M_edit"]);
    expect(await ids("ordering")).toEqual(["M_reply1"]);
    expect(await ids("order")).toEqual(["M_reply1"]);
    expect(await ids("quote fineliners", "best")).toEqual(["M_buy1"]);
    const hit = (await json("admin", "/chat-api/search?q=glue%20in:general")).hits[0];
    expect(hit.room).toEqual({ id: "R_general", name: "general", type: "c" });
    expect(hit.snippet.filter((p: { hit: boolean }) => p.hit).map((p: { text: string }) => p.text)).toEqual([
      "glue",
    ]);
    expect((await json("admin", "/chat-api/search?q=before:2025-02-30", 400)).message).toMatch(/not a date/);
    expect((await json("admin", "/chat-api/search?q=has:elephant", 400)).message).toMatch(/has:file/);
  });

  it("exports a room as JSON lines with thread ids, and as a printable HTML page", async () => {
    const res = await call("admin", "/chat-api/rooms/R_general/export?format=jsonl");
    expect(res.status).toBe(200);
    const lines = (await res.text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((m) => m.id)).toContain("M_reply1");
    expect(lines.find((m) => m.id === "M_reply1").tmid).toBe("M_price");
    const html = await (
      await call("admin", "/chat-api/rooms/R_general/export?format=html&from=2025-03-01&to=2025-03-01")
    ).text();
    expect(html).toContain("<h1>general</h1>");
    expect(html).not.toContain("<script>");
    expect(html).toContain("&#60;script&#62;");
  });
});
