import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { MessageText, safeHref } from "../../client/features/chat/markdown.tsx";
import { parseSearch } from "../../server/modules/chat/chat.service.ts";
import { hashId, VersionIndex, VersionIndexBuilder } from "../../server/modules/chat/import/version-index.ts";

const html = (text: string) => renderToStaticMarkup(createElement(MessageText, { text }));

describe("Rocket.Chat markdown, rendered safely", () => {
  it("renders bold, italics, strike, code, quotes, mentions and emoji short codes", () => {
    const out = html("*bold* _it_ ~gone~ `x = 1` @bob #general :smile:\n> quoted");
    expect(out).toContain("<strong>bold</strong>");
    expect(out).toContain("<em>it</em>");
    expect(out).toContain("<s>gone</s>");
    expect(out).toMatch(/<code[^>]*>x = 1<\/code>/);
    expect(out).toContain("@bob");
    expect(out).toContain("#general");
    expect(out).toContain("😄");
    expect(out).toMatch(/<blockquote[^>]*>.*quoted/);
  });

  it("keeps HTML as text and links only http(s)/mailto, opening with noopener noreferrer", () => {
    const out = html(
      '<script>alert(1)</script> <img src=x onerror="alert(2)"> [x](javascript:alert(3)) https://example.com',
    );
    expect(out).not.toMatch(/<script|<img|<[^>]*onerror=|href="javascript/i);
    expect(out).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(out).toContain('<a href="https://example.com" target="_blank" rel="noopener noreferrer"');
    expect(safeHref("mailto:a@b.c")).toBe("mailto:a@b.c");
    expect(safeHref("data:text/html,x")).toBeNull();
    expect(safeHref(" JavaScript:alert(1)")).toBeNull();
  });
});

describe("search operators", () => {
  it("splits from:, in:, has:file, dates and phrases from the words", () => {
    expect(
      parseSearch('from:@Bob in:#general has:file after:2025-01-01 before:2025-02-01 "glue sticks" price'),
    ).toEqual({
      text: '"glue sticks" price',
      from: ["bob"],
      in: ["general"],
      hasFile: true,
      after: new Date("2025-01-01T00:00:00Z"),
      before: new Date("2025-02-01T00:00:00Z"),
    });
    expect(() => parseSearch("after:2025-02-30")).toThrow(/not a date/);
    expect(() => parseSearch("has:cats")).toThrow(/has:file/);
  });
});

describe("version index", () => {
  it("hashes ids to 53 bits", () => {
    expect(Number.isSafeInteger(hashId("M6Kbeu6G5Wjw6nxSt"))).toBe(true);
    expect(hashId("a")).not.toBe(hashId("b"));
  });
  it("an empty index calls everything new", () => {
    const idx = VersionIndex.empty();
    expect(idx.check("x", 1)).toBe("new");
    expect(idx.unseenCount).toBe(0);
  });
  it("becomes the next import's index: kept documents at their new versions, new ones in, gone ones out", () => {
    const first = new VersionIndexBuilder();
    for (const [id, v] of [
      ["a", 1],
      ["b", 2],
      ["c", 3],
      ["d", 4],
    ] as const)
      first.add(id, v);
    const idx = first.build();
    expect(idx.check("a", 1)).toBe("same");
    expect(idx.check("b", 20)).toBe("changed");
    expect(idx.check("d", 4)).toBe("same");
    expect(idx.check("c", 30)).toBe("changed");
    idx.unsee("c"); // now hidden: leaves the table
    expect(idx.check("e", 5)).toBe("new");
    expect(idx.unseenCount).toBe(1);
    const added = new VersionIndexBuilder();
    added.add("e", 5);
    const stored = VersionIndex.fromBytes(idx.next(added).toBytes())!;
    expect(stored.size).toBe(4);
    expect(["a", "b", "d", "e"].map((id) => stored.has(id))).toEqual([true, true, true, true]);
    expect(stored.has("c")).toBe(false);
    expect([stored.check("a", 1), stored.check("b", 20), stored.check("d", 4), stored.check("e", 5)]).toEqual(
      ["same", "same", "same", "same"],
    );
    expect(VersionIndex.fromBytes(new Uint8Array(15))).toBeNull();
  });
});

describe("skipping unchanged documents from their text", () => {
  it("reads _id and _updatedAt of the shapes mongoexport writes, and declines anything else", async () => {
    const { quickKey } = await import("../../server/modules/chat/import/chat-source.ts");
    const ms = Date.parse("2025-03-01T09:00:00Z");
    expect(quickKey('{"_id":"abc","msg":"x","_updatedAt":{"$date":"2025-03-01T09:00:00Z"}}')).toEqual({
      id: "abc",
      version: ms,
    });
    expect(
      quickKey(`{"_id":{"$oid":"65f0a1b2c3d4e5f601234567"},"_updatedAt":{"$date":{"$numberLong":"${ms}"}}}`),
    ).toEqual({
      id: "65f0a1b2c3d4e5f601234567",
      version: ms,
    });
    expect(quickKey(`{"_id":"a","_updatedAt":{"$date":${ms}}}`)).toEqual({ id: "a", version: ms });
    // A nested _updatedAt (a quoted message) makes it ambiguous: parse instead.
    expect(
      quickKey(
        '{"_id":"a","att":[{"_updatedAt":{"$date":"2024-01-01T00:00:00Z"}}],"_updatedAt":{"$date":"2025-03-01T09:00:00Z"}}',
      ),
    ).toBeNull();
    expect(quickKey('{"_id":"a\\"b","_updatedAt":{"$date":"2025-03-01T09:00:00Z"}}')).toBeNull();
    expect(quickKey('{"msg":"x","_id":"a","_updatedAt":{"$date":"2025-03-01T09:00:00Z"}}')).toBeNull();
    expect(quickKey('{"_id":"a"}')).toBeNull();
  });
});
