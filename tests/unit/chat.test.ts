import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { MessageText, safeHref } from "../../client/features/chat/markdown.tsx";
import { parseSearch } from "../../server/modules/chat/chat.service.ts";
import { lineKey, quickKey, readDocuments, SKIP } from "../../server/modules/chat/import/chat-source.ts";
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

describe("skipping unchanged documents from their bytes", () => {
  const key = (line: string) => {
    const out = { hash: 0, version: 0 };
    const buf = Buffer.from(`junk\n${line}\nmore`);
    return lineKey(buf, 5, 5 + Buffer.byteLength(line), out) ? out : null;
  };
  const ms = Date.parse("2025-03-01T09:00:00Z");

  it("reads the shapes mongoexport writes, as quickKey() reads them from the text", () => {
    const lines = [
      '{"_id":"abc","msg":"x","_updatedAt":{"$date":"2025-03-01T09:00:00Z"}}',
      '{"_id":"abc","msg":"x","_updatedAt":{"$date":"2025-03-01T09:00:00.123Z"}}',
      `{"_id":{"$oid":"65f0a1b2c3d4e5f601234567"},"_updatedAt":{"$date":{"$numberLong":"${ms}"}}}`,
      `{"_id":"a","_updatedAt":{"$date":${ms}}}`,
      '{"_id":"a","_updatedAt":{"$date":{"$numberLong":"-5"}}}',
      '{"_id":"a","_updatedAt":{"$date":"2024-02-30T00:00:00Z"},"msg":"Grüße"}',
      '{"_id":"a","_updatedAt":{"$date":"0099-01-01T00:00:00Z"}}',
      '{"_id":"a","_updatedAt":{"$date":"2024-01-01T24:00:00Z"}}',
      '{"_id":"a","_updatedAt":{"$date":"2024-01-01T10:00:00+01:00"}}',
      '{"_id":"a","_updatedAt":{"$date":"2024-01-01T00:00:00.1Z"}}',
    ];
    for (const line of lines) {
      const q = quickKey(line)!;
      expect(key(line), line).toEqual({ hash: hashId(q.id), version: q.version });
    }
  });

  it("declines what it cannot read exactly (the text is read instead), never disagreeing with quickKey()", () => {
    const declined = [
      '{"_id":"a","att":[{"_updatedAt":{"$date":"2024-01-01T00:00:00Z"}}],"_updatedAt":{"$date":"2025-03-01T09:00:00Z"}}',
      '{"_id":"a\\"b","_updatedAt":{"$date":"2025-03-01T09:00:00Z"}}',
      '{"_id":"Grüße","_updatedAt":{"$date":"2025-03-01T09:00:00Z"}}',
      '{"_id":"","_updatedAt":{"$date":"2025-03-01T09:00:00Z"}}',
      '{"msg":"x","_id":"a","_updatedAt":{"$date":"2025-03-01T09:00:00Z"}}',
      '{"_id":"a"}',
      '{"_id":"a","_updatedAt":{"$date":"yesterday"}}',
      '{"_id":"a","_updatedAt":{"$date":"2025-13-01T09:00:00Z"}}',
      '{"_id":{"$oid":"65f0a1b2c3d4e5f60123456"},"_updatedAt":{"$date":"2025-03-01T09:00:00Z"}}',
      '{"_id":"a","_updatedAt":{"$date":{"$numberLong":"12x"}}}',
    ];
    for (const line of declined) expect(key(line), line).toBeNull();
    // Random lines: whenever the bytes give a key, the text gives the same one.
    const pick = (xs: string[]) => xs[rand(xs.length)]!;
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    let agreed = 0;
    for (let i = 0; i < 20_000; i++) {
      const line =
        pick([
          '{"_id":"m1",',
          '{"_id":{"$oid":"65f0a1b2c3d4e5f601234567"},',
          '{"_id":"m\\1",',
          '{"_id":"é",',
        ]) +
        pick(["", '"msg":"x",', '"msg":"\\"_updatedAt\\":{}",', '"a":{"_updatedAt":{"$date":1}},']) +
        pick(['"_updatedAt":{"$date":', '"_updatedAt": {"$date":', '"_updatedAt":{"$date" :']) +
        pick([
          '"2025-03-01T09:00:00Z"',
          '"2025-03-29T09:00:00.5Z"',
          '"2025-03-01T09:00:00.123Z"',
          '"2025-02-31T23:59:59.999Z"',
          '"2025-03-01T9:00:00Z"',
          '"é"',
          '""',
          "1700000000000",
          "-1",
          "1e3",
          '{"$numberLong":"1700000000000"}',
          '{"$numberLong":1700000000000}',
        ]) +
        pick(["}}", "}", '},"x":1}', "}}\\", ""]);
      const k = key(line);
      const q = quickKey(line);
      if (!k) continue;
      expect(q, line).not.toBeNull();
      expect(k, line).toEqual({ hash: hashId(q!.id), version: q!.version });
      agreed++;
    }
    expect(agreed).toBeGreaterThan(1000);
  });

  it("reads lines across chunks, CRLF and a byte order mark, and leaves out what the prefilter skips", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chat-lines-"));
    const lines: string[] = [];
    for (let i = 0; i < 6000; i++)
      lines.push(
        `{"_id":"m${i}","msg":"${"ä".repeat(i % 97)}","_updatedAt":{"$date":"2025-03-01T09:00:00Z"}}`,
      );
    const full = path.join(dir, "rocketchat_message.json");
    fs.writeFileSync(full, `\uFEFF${lines.join("\r\n")}\r\n\r\n   \n${lines[0]}`);
    const seen: { at: number; text: string; hint: unknown }[] = [];
    const k = { hash: 0, version: 0 };
    for await (const batch of readDocuments(
      { collection: "rocketchat_message", file: "m.json", full, size: fs.statSync(full).size },
      {
        prefilter: (buf, start, end) => {
          expect(lineKey(buf, start, end, k)).toBe(true);
          return k.hash % 3 === 0 ? SKIP : k.hash;
        },
      },
    ))
      for (const doc of batch) seen.push({ at: doc.at, text: doc.text!, hint: doc.hint });
    const expected = [...lines, lines[0]!]
      .map((text, i) => ({ at: i < lines.length ? i + 1 : lines.length + 3, text }))
      .map((x) => ({ ...x, hint: hashId(quickKey(x.text)!.id) }))
      .filter((x) => (x.hint as number) % 3 !== 0);
    expect(seen.length).toBeGreaterThan(3000);
    expect(seen).toEqual(expected);
  });
});

describe("version index lookups", () => {
  it("finds every id of a large index through its directory, and no other", () => {
    for (const n of [1, 2, 3, 7, 100, 20_000]) {
      const b = new VersionIndexBuilder();
      for (let i = 0; i < n; i++) b.add(`id${i}`, i);
      const idx = b.build();
      for (let i = 0; i < n; i++) expect(idx.check(`id${i}`, i)).toBe("same");
      for (let i = 0; i < 50; i++) expect(idx.check(`other${i}`, i)).toBe("new");
      expect(idx.check("id0", -1)).toBe("changed");
      expect(idx.checkKey(hashId("id0"), -1)).toBe("same");
      expect(idx.unseenCount).toBe(0);
    }
  });
});
