export type PageItem = number | "start-ellipsis" | "end-ellipsis";

const range = (from: number, to: number): number[] =>
  to < from ? [] : Array.from({ length: to - from + 1 }, (_, i) => from + i);

/**
 * The buttons of a pager (spec section 2): the first page, the last page, a window of
 * `2 * siblings + 1` pages around the current one (3 by default) and ellipses for the gaps. A gap of
 * a single page shows that page instead of an ellipsis, so the list keeps a constant length once
 * there are enough pages, and the buttons don't jump around while paging.
 */
export function getPageItems(page: number, pageCount: number, siblings = 1): PageItem[] {
  const count = Math.max(0, Math.floor(pageCount));
  if (count === 0) return [];
  const current = Math.min(Math.max(1, Math.floor(page)), count);
  const windowStart = Math.max(Math.min(current - siblings, count - siblings * 2 - 2), 3);
  const windowEnd = Math.min(Math.max(current + siblings, siblings * 2 + 3), count - 2);

  const items: PageItem[] = [1];
  if (windowStart > 3) items.push("start-ellipsis");
  else if (count > 3) items.push(2);
  items.push(...range(windowStart, windowEnd));
  if (windowEnd < count - 2) items.push("end-ellipsis");
  else if (count - 1 > 1) items.push(count - 1);
  if (count > 1) items.push(count);
  return items;
}
