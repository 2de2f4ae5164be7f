// The page caches of the forecasting grid, the purchasing workspace and the PO list: capped by size
// as well as by count, one computation per page and version, and never a page of another version.
import { describe, expect, it } from "vitest";
import { approxBytes, KeptPages } from "../../server/modules/kept-pages.ts";

const page = (n: number, fill = "x") => ({ items: Array.from({ length: n }, () => fill.repeat(100)) });

describe("kept pages", () => {
  it("holds no more than its byte cap: huge pages push the oldest out, one larger than the cap is not kept", async () => {
    const one = approxBytes(page(1000));
    const pages = new KeptPages<ReturnType<typeof page>>(500, one * 3);
    let computed = 0;
    const get = (key: string) =>
      pages.get(key, "v1", async () => {
        computed++;
        return page(1000);
      });
    for (const key of ["a", "b", "c", "d", "e"]) await get(key);
    expect(pages.bytes).toBeLessThanOrEqual(one * 3);
    expect(pages.size).toBe(3);
    await get("e"); // kept
    expect(computed).toBe(5);
    await get("a"); // pushed out, computed again
    expect(computed).toBe(6);
    await pages.get("huge", "v1", async () => page(4000));
    expect(pages.bytes).toBeLessThanOrEqual(one * 3);
    await pages.get("huge", "v1", async () => {
      computed++;
      return page(4000);
    });
    expect(computed).toBe(7);
  });

  it("caps the number of entries too", async () => {
    const pages = new KeptPages<number>(2, 1e9);
    for (const key of ["a", "b", "c"]) await pages.get(key, "v", async () => 1);
    expect(pages.size).toBe(2);
  });

  it("a request for a page being computed waits for that computation; a new version computes afresh", async () => {
    const pages = new KeptPages<string>(10, 1e9);
    let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const slow = async () => {
      runs++;
      await gate;
      return "v1 page";
    };
    const first = pages.get("k", "v1", slow);
    const second = pages.get("k", "v1", slow);
    release();
    expect(await first).toBe("v1 page");
    expect(await second).toBe("v1 page");
    expect(runs).toBe(1);
    expect(await pages.get("k", "v2", async () => "v2 page")).toBe("v2 page");
    expect(await pages.get("k", "v2", async () => "other")).toBe("v2 page");
  });

  it("forgets a failed computation", async () => {
    const pages = new KeptPages<string>(10, 1e9);
    await expect(pages.get("k", "v", () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await pages.get("k", "v", async () => "ok")).toBe("ok");
  });
});
