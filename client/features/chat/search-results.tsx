import { Button } from "@client/components/ui/button.tsx";
import { LoadingIndicator } from "@client/components/ui/loading-indicator.tsx";
import { errorMessage } from "@client/lib/errors.ts";
import { useTRPCClient } from "@client/lib/trpc.ts";
import { useInfiniteQuery } from "@tanstack/react-query";
import { ChatAvatar, RoomIcon } from "./parts.tsx";

const when = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

/** Search hits across the readable rooms, the matched words marked; each opens the room there. */
export function SearchResults({
  q,
  sort,
  onSort,
  onOpen,
}: {
  q: string;
  sort: "newest" | "best";
  onSort: (sort: "newest" | "best") => void;
  onOpen: (rid: string, msg: string) => void;
}) {
  const client = useTRPCClient();
  const query = useInfiniteQuery({
    queryKey: ["chat", "search", q, sort],
    initialPageParam: 1,
    queryFn: ({ pageParam }) => client.chat.search.query({ q, sort, page: pageParam }),
    getNextPageParam: (last) => (last.has_more ? last.page + 1 : undefined),
    retry: false,
  });
  const hits = query.data?.pages.flatMap((p) => p.hits) ?? [];
  return (
    <div className="flex min-h-0 flex-1 flex-col" data-testid="search-results">
      <div className="flex items-center justify-between gap-2 border-b px-3 py-2 text-sm">
        <span className="min-w-0 truncate">
          Results for <span className="font-medium">{q}</span>
        </span>
        <fieldset className="flex shrink-0 gap-1" aria-label="Order">
          {(["newest", "best"] as const).map((s) => (
            <Button
              key={s}
              size="sm"
              variant={sort === s ? "secondary" : "ghost"}
              aria-pressed={sort === s}
              onClick={() => onSort(s)}
            >
              {s === "newest" ? "Newest" : "Best match"}
            </Button>
          ))}
        </fieldset>
      </div>
      <div className="min-h-0 flex-1 overflow-y-auto">
        {query.isPending && <LoadingIndicator message="Searching..." />}
        {query.isError && (
          <p role="alert" className="p-6 text-center text-sm text-destructive">
            {errorMessage(query.error, "Search failed")}
          </p>
        )}
        {query.isSuccess && hits.length === 0 && (
          <p className="p-6 text-center text-sm text-muted-foreground">No messages match.</p>
        )}
        <ul className="divide-y">
          {hits.map((h) => (
            <li key={h.message.id}>
              <button
                type="button"
                data-testid="search-hit"
                data-message-id={h.message.id}
                onClick={() => onOpen(h.room.id, h.message.id)}
                className="flex w-full gap-3 px-3 py-2.5 text-left hover:bg-muted/60"
              >
                <ChatAvatar user={h.message.user} size={28} />
                <span className="min-w-0 flex-1 text-sm">
                  <span className="flex flex-wrap items-center gap-x-2 text-xs text-muted-foreground">
                    <span className="font-medium text-foreground">
                      {h.message.user.name ?? h.message.user.username}
                    </span>
                    <span className="inline-flex items-center gap-1">
                      <RoomIcon type={h.room.type} className="size-3" /> {h.room.name}
                    </span>
                    <span>{when.format(new Date(h.message.ts))}</span>
                  </span>
                  <span className="mt-0.5 block break-words">
                    {h.snippet.length
                      ? h.snippet.map((part, i) =>
                          part.hit ? (
                            // biome-ignore lint/suspicious/noArrayIndexKey: a snippet never reorders
                            <mark key={i} className="rounded bg-amber-200 px-0.5 dark:bg-amber-700/60">
                              {part.text}
                            </mark>
                          ) : (
                            // biome-ignore lint/suspicious/noArrayIndexKey: a snippet never reorders
                            <span key={i}>{part.text}</span>
                          ),
                        )
                      : h.message.attachments
                          .map((a) => a.title ?? a.file?.name)
                          .filter(Boolean)
                          .join(", ")}
                  </span>
                </span>
              </button>
            </li>
          ))}
        </ul>
        {query.hasNextPage && (
          <div className="p-3 text-center">
            <Button
              variant="outline"
              size="sm"
              disabled={query.isFetchingNextPage}
              onClick={() => void query.fetchNextPage()}
            >
              {query.isFetchingNextPage ? "Loading..." : "More results"}
            </Button>
          </div>
        )}
      </div>
    </div>
  );
}
