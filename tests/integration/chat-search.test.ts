// Chat search over an archive bigger than the search's first walk (the newest 5,000 messages a
// reader may see): words common among the newest messages, words only in old ones, phrases, and
// pages past the first, newest first and best first, for an admin and for a user who may read
// one of the two rooms. Every answer is checked against the hits worked out here from the export.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BEST_MATCH_WINDOW, SEARCH_PAGE_SIZE } from "../../shared/chat.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { tempDir, writeArchive } from "../helpers/chat-archive.ts";
import { testBackend } from "../helpers/db.ts";

const T0 = Date.parse("2025-01-01T00:00:00Z");
const N = 7_000;

/** Message i: its room, time and text (every word a test looks for, by position). */
function message(i: number) {
  const words = ["routine", "update"];
  if (i % 10 === 0) words.push("pallet");
  if (i % 500 === 7) words.push("zebra");
  if (i === 3 || i === 1203 || i === 4100) words.push("two weeks earlier");
  if (i % 3 === 0) words.push("weeks");
  return {
    _id: `M${String(i).padStart(5, "0")}`,
    rid: i % 4 === 0 ? "R_b" : "R_a",
    msg: words.join(" "),
    // every tenth minute shares its time with the next message: order by id breaks the tie
    ts: new Date(T0 + Math.floor(i / 2) * 60_000),
  };
}

describe(`chat search beyond the first walk (${testBackend})`, () => {
  let t: TestApp;
  const tokens: Record<string, string> = {};
  const all = Array.from({ length: N }, (_, i) => message(i));

  beforeAll(async () => {
    const dir = tempDir();
    const user = (id: string, username: string) => ({
      _id: id,
      username,
      name: username,
      _updatedAt: new Date(T0),
    });
    writeArchive(dir, {
      users: [user("U_a", "amy"), user("U_b", "ben")],
      rocketchat_room: [
        { _id: "R_a", t: "c", name: "alpha", _updatedAt: new Date(T0) },
        { _id: "R_b", t: "p", name: "beta", _updatedAt: new Date(T0) },
      ],
      rocketchat_subscription: [
        { _id: "S1", rid: "R_a", u: { _id: "U_a" }, _updatedAt: new Date(T0) },
        { _id: "S2", rid: "R_b", u: { _id: "U_b" }, _updatedAt: new Date(T0) },
        { _id: "S3", rid: "R_a", u: { _id: "U_b" }, _updatedAt: new Date(T0) },
      ],
      rocketchat_message: all.map((m) => ({ ...m, u: { _id: "U_a", username: "amy" }, _updatedAt: m.ts })),
    });
    t = await startTestApp({ env: { CHAT_SOURCE_DIR: dir, DEMO_DATA: "0" } });
    tokens.admin = (await t.login("admin")).token;
    const res = await t.app.inject({
      method: "POST",
      url: "/csv/chat-import",
      headers: { authorization: `Bearer ${tokens.admin}` },
    });
    expect(res.statusCode).toBe(200);
    await t.app.services.dataOps.idle();
    expect(await t.tdb.db.prisma.chatMessage.count()).toBe(N);
    const amy = await t.tdb.db.prisma.chatUser.findUniqueOrThrow({ where: { mongoId: "U_a" } });
    const id = await t.createUser("amy.staff", ["access:chat"]);
    await t.tdb.db.prisma.user.update({ where: { id }, data: { rocketChatUserId: amy.id } });
    tokens.amy = (await t.login("amy.staff")).token;
  }, 180_000);
  afterAll(async () => {
    await t.close();
  });

  const search = async (who: string, q: string, page = 1, sort = "newest") => {
    const res = await fetch(
      `${t.url}/chat-api/search?${new URLSearchParams({ q, page: String(page), sort })}`,
      { headers: { authorization: `Bearer ${tokens[who]}` } },
    );
    const body = await res.json();
    expect(res.status, JSON.stringify(body).slice(0, 300)).toBe(200);
    return body as { hits: { message: { id: string } }[]; has_more: boolean };
  };
  /** The expected page: hits newest first (ts, then id, descending). */
  const expected = (match: (m: ReturnType<typeof message>) => boolean, page = 1) => {
    const hits = all
      .filter(match)
      .sort((a, b) => b.ts.getTime() - a.ts.getTime() || (a._id < b._id ? 1 : -1));
    const from = (page - 1) * SEARCH_PAGE_SIZE;
    return {
      ids: hits.slice(from, from + SEARCH_PAGE_SIZE).map((m) => m._id),
      more: hits.length > from + SEARCH_PAGE_SIZE,
    };
  };
  const check = async (
    who: string,
    q: string,
    match: (m: ReturnType<typeof message>) => boolean,
    page = 1,
  ) => {
    const got = await search(who, q, page);
    const want = expected(match, page);
    expect(
      got.hits.map((h) => h.message.id),
      `${who} ${q} page ${page}`,
    ).toEqual(want.ids);
    expect(got.has_more).toBe(want.more);
  };
  const inA = (m: ReturnType<typeof message>) => m.rid === "R_a";

  it("finds a common word's newest hits, on the first page and further ones", async () => {
    await check("admin", "pallet", (m) => m.msg.includes("pallet"));
    await check("admin", "pallet", (m) => m.msg.includes("pallet"), 3);
    await check("amy", "pallet", (m) => inA(m) && m.msg.includes("pallet"), 2);
  });

  it("finds words and phrases only old messages hold, past the newest 5,000", async () => {
    await check("admin", "zebra", (m) => m.msg.includes("zebra"));
    await check("admin", '"two weeks earlier"', (m) => m.msg.includes("two weeks earlier"));
    await check("amy", '"two weeks earlier"', (m) => inA(m) && m.msg.includes("two weeks earlier"));
    await check("amy", "zebra", (m) => inA(m) && m.msg.includes("zebra"));
    // fewer hits than a page among the newest: the rest come from the older messages
    await check(
      "admin",
      "zebra before:2025-01-05",
      (m) => m.msg.includes("zebra") && m.ts < new Date("2025-01-05"),
    );
  });

  it("ranks best matches within the newest hits and pages them", async () => {
    // "weeks" once in most hits, twice where the phrase joins it: those rank first, the rest newest first.
    const count = (m: ReturnType<typeof message>) => m.msg.split(" ").filter((w) => w === "weeks").length;
    const window = all
      .filter((m) => count(m) > 0)
      .sort((a, b) => b.ts.getTime() - a.ts.getTime() || (a._id < b._id ? 1 : -1))
      .slice(0, BEST_MATCH_WINDOW);
    const ranked = [...window].sort(
      (a, b) => count(b) - count(a) || b.ts.getTime() - a.ts.getTime() || (a._id < b._id ? 1 : -1),
    );
    expect(count(ranked[0]!)).toBe(2);
    for (const page of [1, 2]) {
      const best = await search("admin", "weeks", page, "best");
      const from = (page - 1) * SEARCH_PAGE_SIZE;
      expect(best.hits.map((h) => h.message.id)).toEqual(
        ranked.slice(from, from + SEARCH_PAGE_SIZE).map((m) => m._id),
      );
    }
    const none = await search("amy", "zebra quarantine");
    expect(none.hits).toEqual([]);
  });
});
