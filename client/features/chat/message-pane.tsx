// A room's messages with infinite scroll both ways: older pages load at the top (the view stays on
// the message it showed), newer ones at the bottom; at most MAX_PAGES pages stay loaded, so a long
// read never grows the page without bound. A permalink or a date opens the room around that point
// and highlights the message.
import { Button } from "@client/components/ui/button.tsx";
import { LoadingIndicator } from "@client/components/ui/loading-indicator.tsx";
import { errorMessage } from "@client/lib/errors.ts";
import { useTRPCClient } from "@client/lib/trpc.ts";
import type { ChatMessagesPage } from "@shared/chat.ts";
import { useInfiniteQuery } from "@tanstack/react-query";
import { ArrowDownIcon } from "lucide-react";
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import { buildItems, type ListItem, MessageItem, SystemLine } from "./parts.tsx";

type Cursor = { before?: string; after?: string; around?: string } | null;
const MAX_PAGES = 12;

/**
 * A date to open the room at, as the reader's own midnight (2026-10-06 in Los Angeles is
 * 2026-10-06T00:00:00-07:00): the day separators are the reader's days, so "Tuesday, October 6"
 * starts there, not at UTC midnight. A message id is sent as it is.
 */
export function aroundParam(anchor: string): string {
  const m = /^(\d{4})-(\d\d)-(\d\d)$/.exec(anchor);
  if (!m) return anchor;
  const local = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  const off = -local.getTimezoneOffset();
  const hh = String(Math.floor(Math.abs(off) / 60)).padStart(2, "0");
  const mm = String(Math.abs(off) % 60).padStart(2, "0");
  return `${anchor}T00:00:00${off >= 0 ? "+" : "-"}${hh}:${mm}`;
}

export function MessagePane({
  rid,
  anchor,
  me,
  onOpenThread,
  onOpenRoom,
  onLoaded,
}: {
  rid: string;
  /** A message id or a date (YYYY-MM-DD) to open the room at. */
  anchor: string | null;
  me: string | null;
  onOpenThread: (id: string) => void;
  onOpenRoom: (rid: string) => void;
  onLoaded?: (page: ChatMessagesPage) => void;
}) {
  const client = useTRPCClient();
  const scroller = useRef<HTMLDivElement>(null);
  const query = useInfiniteQuery({
    queryKey: ["chat", "messages", rid, anchor],
    initialPageParam: (anchor ? { around: aroundParam(anchor) } : null) as Cursor,
    queryFn: ({ pageParam }) => client.chat.messages.query({ rid, limit: 50, ...(pageParam ?? {}) }),
    getNextPageParam: (last) =>
      last.has_newer && last.messages.length
        ? { after: last.messages[last.messages.length - 1]!.id }
        : undefined,
    getPreviousPageParam: (first) =>
      first.has_older && first.messages.length ? { before: first.messages[0]!.id } : undefined,
    maxPages: MAX_PAGES,
    staleTime: 5 * 60_000,
    retry: false,
  });
  const pages = query.data?.pages ?? [];
  const messages = useMemo(() => pages.flatMap((p) => p.messages), [pages]);
  const days = useMemo(() => {
    const out: { key: string; label: string; items: ListItem[] }[] = [];
    for (const item of buildItems(messages)) {
      if (item.kind === "day") out.push({ key: item.key, label: item.label, items: [] });
      else {
        if (!out.length) out.push({ key: "day-none", label: "", items: [] });
        out.at(-1)!.items.push(item);
      }
    }
    return out;
  }, [messages]);
  const first = pages[0];
  const highlight = first?.anchor ?? null;

  useEffect(() => {
    if (first) onLoaded?.(first);
  }, [first, onLoaded]);

  // The message at the top of the view and how far below the scroller's top it sits. When pages
  // are put above it (older messages) or dropped (at most MAX_PAGES stay: a page at the other
  // end goes), the view is moved back onto it, so reading never jumps. Measuring the scroll
  // height instead went wrong once a page was dropped at the bottom while one was put at the top.
  const viewAnchor = useRef<{ id: string; offset: number } | null>(null);
  const recordAnchor = useCallback(() => {
    const root = scroller.current;
    if (!root) return;
    const top = root.getBoundingClientRect().top;
    const nodes = root.querySelectorAll<HTMLElement>("[data-message-id]");
    // The first message whose bottom is below the top edge (they are in page order).
    let lo = 0;
    let hi = nodes.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (nodes[mid]!.getBoundingClientRect().bottom > top) hi = mid;
      else lo = mid + 1;
    }
    const node = nodes[lo];
    viewAnchor.current = node
      ? { id: node.dataset.messageId!, offset: node.getBoundingClientRect().top - top }
      : null;
  }, []);

  // First load: to the anchor (highlighted), else to the newest message.
  const positioned = useRef<string | null>(null);
  useLayoutEffect(() => {
    const el = scroller.current;
    const key = `${rid}|${anchor}`;
    // Runs again whenever the pages change (messages): that is when the view may have moved.
    if (!el || !first || messages.length === 0) return;
    if (positioned.current !== key) {
      positioned.current = key;
      if (highlight) document.getElementById(`msg-${highlight}`)?.scrollIntoView({ block: "center" });
      else el.scrollTop = el.scrollHeight;
    } else {
      const a = viewAnchor.current;
      const node = a && el.querySelector<HTMLElement>(`[data-message-id="${CSS.escape(a.id)}"]`);
      if (a && node)
        el.scrollTop += node.getBoundingClientRect().top - el.getBoundingClientRect().top - a.offset;
    }
    recordAnchor();
  }, [rid, anchor, first, highlight, messages, recordAnchor]);
  const pending = query.isPending;
  useEffect(() => {
    // The scroller exists once the first page is in.
    const el = scroller.current;
    if (!el || pending) return;
    let frame = 0;
    const onScroll = () => {
      if (frame) return;
      frame = requestAnimationFrame(() => {
        frame = 0;
        recordAnchor();
      });
    };
    el.addEventListener("scroll", onScroll, { passive: true });
    return () => {
      el.removeEventListener("scroll", onScroll);
      cancelAnimationFrame(frame);
    };
  }, [recordAnchor, pending]);

  // Sentinels at both ends load the next page when they come into view.
  const top = useRef<HTMLDivElement>(null);
  const bottom = useRef<HTMLDivElement>(null);
  const {
    hasPreviousPage,
    hasNextPage,
    isFetchingPreviousPage,
    isFetchingNextPage,
    fetchPreviousPage,
    fetchNextPage,
  } = query;
  useEffect(() => {
    const root = scroller.current;
    if (!root || !first) return;
    const observer = new IntersectionObserver(
      (entries) => {
        for (const e of entries) {
          if (!e.isIntersecting) continue;
          if (e.target === top.current && hasPreviousPage && !isFetchingPreviousPage)
            void fetchPreviousPage();
          if (e.target === bottom.current && hasNextPage && !isFetchingNextPage) void fetchNextPage();
        }
      },
      { root, rootMargin: "400px 0px" },
    );
    if (top.current) observer.observe(top.current);
    if (bottom.current) observer.observe(bottom.current);
    return () => observer.disconnect();
  }, [
    first,
    hasPreviousPage,
    hasNextPage,
    isFetchingPreviousPage,
    isFetchingNextPage,
    fetchPreviousPage,
    fetchNextPage,
  ]);

  const [flash, setFlash] = useState<string | null>(null);
  useEffect(() => {
    if (!highlight) return;
    setFlash(highlight);
    const timer = setTimeout(() => setFlash(null), 4000);
    return () => clearTimeout(timer);
  }, [highlight]);

  if (query.isPending) return <LoadingIndicator className="m-auto" message="Loading messages..." />;
  if (query.isError)
    return (
      <div role="alert" className="m-auto max-w-md p-6 text-center text-sm text-muted-foreground">
        {errorMessage(query.error, "Failed to load messages")}
      </div>
    );

  return (
    <div className="relative min-h-0 flex-1">
      <div ref={scroller} data-testid="message-scroller" className="h-full overflow-y-auto px-2 py-3">
        <div ref={top} />
        {isFetchingPreviousPage && <LoadingIndicator size="sm" message="Loading older messages..." />}
        {!hasPreviousPage && (
          <p className="py-4 text-center text-xs text-muted-foreground">Beginning of the conversation</p>
        )}
        {messages.length === 0 && (
          <p className="py-10 text-center text-sm text-muted-foreground">No messages in this room.</p>
        )}
        {/* One section a day: its sticky date stays at the top only while its day is in view (the
            next day's pushes it out, instead of stacking on it). */}
        {days.map((day) => (
          <section key={day.key} aria-label={day.label || undefined}>
            {day.label && (
              <div className="sticky top-0 z-10 flex justify-center py-2" data-testid="day-separator">
                <span className="rounded-full border bg-background px-3 py-0.5 text-xs font-medium text-muted-foreground shadow-sm">
                  {day.label}
                </span>
              </div>
            )}
            {day.items.map((item) =>
              item.kind === "system" ? (
                <SystemLine key={item.key} messages={item.messages} />
              ) : item.kind === "message" ? (
                <MessageItem
                  key={item.key}
                  m={item.message}
                  compact={item.compact}
                  highlighted={flash === item.message.id}
                  me={me}
                  onOpenThread={onOpenThread}
                  onOpenRoom={onOpenRoom}
                />
              ) : null,
            )}
          </section>
        ))}
        {isFetchingNextPage && <LoadingIndicator size="sm" message="Loading newer messages..." />}
        <div ref={bottom} />
      </div>
      {hasNextPage && !isFetchingNextPage && (
        <Button
          size="sm"
          variant="secondary"
          className="absolute right-4 bottom-4 shadow"
          onClick={() => void fetchNextPage()}
        >
          <ArrowDownIcon aria-hidden /> Newer messages
        </Button>
      )}
    </div>
  );
}
