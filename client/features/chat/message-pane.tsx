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
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import { buildItems, MessageItem, SystemLine } from "./parts.tsx";

type Cursor = { before?: string; after?: string; around?: string } | null;
const MAX_PAGES = 12;

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
    initialPageParam: (anchor ? { around: anchor } : null) as Cursor,
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
  const items = useMemo(() => buildItems(messages), [messages]);
  const first = pages[0];
  const highlight = first?.anchor ?? null;

  useEffect(() => {
    if (first) onLoaded?.(first);
  }, [first, onLoaded]);

  // Keep the view on the same message when older messages are put above it.
  const firstId = messages[0]?.id;
  const prevFirst = useRef<{ id: string | undefined; height: number; top: number }>({
    id: undefined,
    height: 0,
    top: 0,
  });
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const prev = prevFirst.current;
    if (prev.id && firstId !== prev.id && query.isFetchingPreviousPage === false) {
      el.scrollTop = prev.top + (el.scrollHeight - prev.height);
    }
    prevFirst.current = { id: firstId, height: el.scrollHeight, top: el.scrollTop };
  }, [firstId, query.isFetchingPreviousPage]);

  // First load: to the anchor (highlighted), else to the newest message.
  const positioned = useRef<string | null>(null);
  useLayoutEffect(() => {
    const el = scroller.current;
    const key = `${rid}|${anchor}`;
    if (!el || !first || positioned.current === key) return;
    positioned.current = key;
    if (highlight) document.getElementById(`msg-${highlight}`)?.scrollIntoView({ block: "center" });
    else el.scrollTop = el.scrollHeight;
    prevFirst.current = { id: firstId, height: el.scrollHeight, top: el.scrollTop };
  }, [rid, anchor, first, highlight, firstId]);

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
          if (e.target === top.current && hasPreviousPage && !isFetchingPreviousPage) {
            prevFirst.current = { id: firstId, height: root.scrollHeight, top: root.scrollTop };
            void fetchPreviousPage();
          }
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
    firstId,
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
        {items.map((item) =>
          item.kind === "day" ? (
            <div
              key={item.key}
              className="sticky top-0 z-10 flex justify-center py-2"
              data-testid="day-separator"
            >
              <span className="rounded-full border bg-background px-3 py-0.5 text-xs font-medium text-muted-foreground shadow-sm">
                {item.label}
              </span>
            </div>
          ) : item.kind === "system" ? (
            <SystemLine key={item.key} messages={item.messages} />
          ) : (
            <MessageItem
              key={item.key}
              m={item.message}
              compact={item.compact}
              highlighted={flash === item.message.id}
              me={me}
              onOpenThread={onOpenThread}
              onOpenRoom={onOpenRoom}
            />
          ),
        )}
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
