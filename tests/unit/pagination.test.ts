import { describe, expect, it } from "vitest";
import { getPageItems } from "../../client/lib/pagination.ts";

describe("getPageItems (pagination of spec section 2)", () => {
  it("lists every page when there are few", () => {
    expect(getPageItems(1, 1)).toEqual([1]);
    expect(getPageItems(1, 2)).toEqual([1, 2]);
    expect(getPageItems(2, 3)).toEqual([1, 2, 3]);
    expect(getPageItems(4, 7)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it("returns nothing without pages", () => {
    expect(getPageItems(1, 0)).toEqual([]);
    expect(getPageItems(3, -2)).toEqual([]);
  });

  it("shows the first and last page, a window of 3 around the current one, and ellipses", () => {
    expect(getPageItems(10, 20)).toEqual([1, "start-ellipsis", 9, 10, 11, "end-ellipsis", 20]);
    expect(getPageItems(5, 10)).toEqual([1, "start-ellipsis", 4, 5, 6, "end-ellipsis", 10]);
  });

  it("fills the window from the edge near the first and last page", () => {
    expect(getPageItems(1, 10)).toEqual([1, 2, 3, 4, 5, "end-ellipsis", 10]);
    expect(getPageItems(3, 10)).toEqual([1, 2, 3, 4, 5, "end-ellipsis", 10]);
    expect(getPageItems(4, 10)).toEqual([1, 2, 3, 4, 5, "end-ellipsis", 10]);
    expect(getPageItems(8, 10)).toEqual([1, "start-ellipsis", 6, 7, 8, 9, 10]);
    expect(getPageItems(10, 10)).toEqual([1, "start-ellipsis", 6, 7, 8, 9, 10]);
  });

  it("shows a single hidden page instead of an ellipsis", () => {
    // Between 1 and 3 only page 2 is missing: it is shown, not elided.
    expect(getPageItems(4, 8)).toEqual([1, 2, 3, 4, 5, "end-ellipsis", 8]);
    expect(getPageItems(5, 8)).toEqual([1, "start-ellipsis", 4, 5, 6, 7, 8]);
  });

  it("keeps a constant length and lists each page once, in order", () => {
    for (let count = 8; count <= 30; count++) {
      for (let page = 1; page <= count; page++) {
        const items = getPageItems(page, count);
        expect(items).toHaveLength(7);
        const pages = items.filter((item): item is number => typeof item === "number");
        expect(pages).toEqual([...pages].sort((a, b) => a - b));
        expect(new Set(pages).size).toBe(pages.length);
        expect(pages).toContain(page);
        expect(pages[0]).toBe(1);
        expect(pages.at(-1)).toBe(count);
      }
    }
  });

  it("clamps an out-of-range page", () => {
    expect(getPageItems(0, 10)).toEqual(getPageItems(1, 10));
    expect(getPageItems(99, 10)).toEqual(getPageItems(10, 10));
  });

  it("widens the window with more siblings", () => {
    expect(getPageItems(10, 20, 2)).toEqual([1, "start-ellipsis", 8, 9, 10, 11, 12, "end-ellipsis", 20]);
  });
});
