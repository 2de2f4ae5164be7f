// The supplier sheet's text encoding: UTF-8, UTF-8 with a stray byte, and Windows-1252 with the
// characters an older Excel writes in 0x80–0x9F (curly quotes, dashes, ™, €), which Node 20's own
// TextDecoder reads as invisible C1 control characters.
import { describe, expect, it } from "vitest";
import { decodeText } from "../../server/modules/productImport/parse.ts";

describe("decodeText", () => {
  it("reads Windows-1252's 0x80–0x9F as the characters Excel meant", () => {
    const bytes = Buffer.concat([
      Buffer.from("title\n"),
      Buffer.from([0x93]),
      Buffer.from("Kraft"),
      Buffer.from([0x94, 0x20, 0x96, 0x20, 0x99, 0x20, 0x80, 0x20, 0xe9]),
    ]);
    const out = decodeText(bytes);
    expect(out.encoding).toBe("windows-1252");
    expect(out.text).toBe("title\n\u201cKraft\u201d \u2013 \u2122 \u20ac \u00e9");
    expect(out.text).not.toMatch(/[\u0080-\u009f]/);
  });

  it("keeps UTF-8 (a BOM dropped), and UTF-8 with one stray byte stays UTF-8 with a replacement mark", () => {
    expect(decodeText(Buffer.from("\ufefftitle\nCrème ✓\n", "utf8"))).toEqual({
      text: "title\nCrème ✓\n",
      encoding: "utf-8",
    });
    const mixed = Buffer.concat([
      Buffer.from("title\nCrème ✓ ", "utf8"),
      Buffer.from([0xff]),
      Buffer.from("\n"),
    ]);
    const out = decodeText(mixed);
    expect(out.encoding).toBe("utf-8");
    expect(out.text).toBe("title\nCrème ✓ \ufffd\n");
  });
});
