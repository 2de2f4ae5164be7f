// The Chat Archive (/chat): the rooms the user may read, a room's messages, threads in a side
// panel, jump to a date, search across the readable rooms, and export. What a user may read is
// decided by the server on every call; the page only shows what it answers.
import { Alert, AlertDescription, AlertTitle } from "@client/components/ui/alert.tsx";
import { Badge } from "@client/components/ui/badge.tsx";
import { Button } from "@client/components/ui/button.tsx";
import { Input } from "@client/components/ui/input.tsx";
import { LoadingIndicator } from "@client/components/ui/loading-indicator.tsx";
import { Popover, PopoverContent, PopoverTrigger } from "@client/components/ui/popover.tsx";
import { useTRPC } from "@client/lib/trpc.ts";
import { cn } from "@client/lib/utils.ts";
import { type ChatRoom, ROOM_TYPE_LABEL, ROOM_TYPES } from "@shared/chat.ts";
import { formatRelativeAge } from "@shared/format.ts";
import { useQuery } from "@tanstack/react-query";
import { ArchiveIcon, ArrowLeftIcon, DownloadIcon, SearchIcon, UsersIcon, XIcon } from "lucide-react";
import { useCallback, useState } from "react";
import { DateJump } from "./date-jump.tsx";
import { MessagePane } from "./message-pane.tsx";
import { RoomIcon } from "./parts.tsx";
import type { ChatSearch } from "./search.ts";
import { SearchResults } from "./search-results.tsx";
import { ThreadPanel } from "./thread-panel.tsx";

const count = new Intl.NumberFormat("en-US");

function RoomList({
  rooms,
  active,
  onOpen,
}: {
  rooms: ChatRoom[];
  active: string | undefined;
  onOpen: (rid: string) => void;
}) {
  const [type, setType] = useState<string>("");
  const [name, setName] = useState("");
  const shown = rooms.filter(
    (r) => (!type || r.type === type) && (!name || r.name.toLowerCase().includes(name.toLowerCase())),
  );
  const parents = new Map(rooms.map((r) => [r.id, r.name]));
  return (
    <div className="flex min-h-0 flex-col">
      <div className="space-y-2 border-b p-3">
        <Input
          value={name}
          onChange={(e) => setName(e.target.value)}
          placeholder="Filter rooms by name"
          aria-label="Filter rooms by name"
          className="h-8"
        />
        <fieldset className="flex flex-wrap gap-1" aria-label="Room type">
          {[["", "All"] as const, ...ROOM_TYPES.map((t) => [t, ROOM_TYPE_LABEL[t]] as const)].map(
            ([t, label]) => (
              <button
                key={t || "all"}
                type="button"
                aria-pressed={type === t}
                onClick={() => setType(t)}
                className={cn(
                  "rounded-full border px-2 py-0.5 text-xs",
                  type === t ? "border-primary bg-primary text-primary-foreground" : "hover:bg-muted",
                )}
              >
                {label}
              </button>
            ),
          )}
        </fieldset>
      </div>
      <ul className="min-h-0 flex-1 overflow-y-auto p-1" data-testid="room-list">
        {shown.length === 0 && (
          <li className="p-4 text-center text-sm text-muted-foreground">No rooms match.</li>
        )}
        {shown.map((r) => (
          <li key={r.id}>
            <button
              type="button"
              data-testid="room"
              data-room-id={r.id}
              onClick={() => onOpen(r.id)}
              aria-current={r.id === active ? "true" : undefined}
              className={cn(
                "flex w-full items-start gap-2 rounded-md px-2 py-2 text-left text-sm hover:bg-muted",
                r.id === active && "bg-muted font-medium",
                r.archived && "opacity-70",
              )}
            >
              <RoomIcon type={r.type} className="mt-0.5" />
              <span className="min-w-0 flex-1">
                <span className="flex items-center gap-1">
                  <span className="truncate">{r.name}</span>
                  {r.archived && (
                    <Badge variant="outline" className="h-4 px-1 text-[10px]">
                      <ArchiveIcon aria-hidden className="size-3" /> archived
                    </Badge>
                  )}
                </span>
                <span className="block truncate text-xs text-muted-foreground">
                  {r.prid && parents.get(r.prid) ? `Discussion in ${parents.get(r.prid)} · ` : ""}
                  <UsersIcon aria-hidden className="inline size-3" /> {r.members} ·{" "}
                  {count.format(r.message_count)} msgs
                  {r.last_message_at ? ` · ${formatRelativeAge(r.last_message_at)}` : ""}
                </span>
              </span>
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}

function ExportMenu({ rid }: { rid: string }) {
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const href = (format: string) => {
    const p = new URLSearchParams({ format });
    if (from) p.set("from", from);
    if (to) p.set("to", to);
    return `/chat-api/rooms/${encodeURIComponent(rid)}/export?${p}`;
  };
  return (
    <Popover>
      <PopoverTrigger asChild>
        <Button variant="outline" size="sm" aria-label="Export room">
          <DownloadIcon aria-hidden /> <span className="hidden lg:inline">Export</span>
        </Button>
      </PopoverTrigger>
      <PopoverContent align="end" className="w-72 space-y-3">
        <p className="text-sm font-medium">Export this room</p>
        <div className="grid grid-cols-2 gap-2 text-xs">
          <label className="space-y-1">
            From
            <Input type="date" value={from} onChange={(e) => setFrom(e.target.value)} className="h-8" />
          </label>
          <label className="space-y-1">
            To
            <Input type="date" value={to} onChange={(e) => setTo(e.target.value)} className="h-8" />
          </label>
        </div>
        <p className="text-xs text-muted-foreground">Leave the dates empty for the whole room.</p>
        <div className="flex flex-col gap-2">
          <Button asChild size="sm">
            <a href={href("jsonl")} download>
              JSON lines (keeps thread ids)
            </a>
          </Button>
          <Button asChild size="sm" variant="outline">
            <a href={href("html")} target="_blank" rel="noopener noreferrer">
              Printable HTML page
            </a>
          </Button>
        </div>
      </PopoverContent>
    </Popover>
  );
}

export function ChatPage({
  search,
  onSearchChange,
}: {
  search: ChatSearch;
  onSearchChange: (next: ChatSearch, opts?: { replace?: boolean }) => void;
}) {
  const trpc = useTRPC();
  const roomsQuery = useQuery(trpc.chat.rooms.queryOptions({}));
  const [draft, setDraft] = useState(search.q ?? "");

  const rooms = roomsQuery.data?.rooms ?? [];
  const access = roomsQuery.data?.access;
  const room = rooms.find((r) => r.id === search.room) ?? null;

  const openRoom = useCallback(
    (rid: string, extra: Partial<ChatSearch> = {}) => onSearchChange({ room: rid, ...extra }),
    [onSearchChange],
  );
  const openThread = useCallback(
    (id: string) => onSearchChange({ ...search, thread: id }),
    [onSearchChange, search],
  );
  const closeThread = () => onSearchChange({ ...search, thread: undefined });
  const submitSearch = (e: React.FormEvent) => {
    e.preventDefault();
    const q = draft.trim();
    onSearchChange({ ...search, q: q || undefined, sort: search.sort });
  };
  const anchor = search.msg ?? search.date ?? null;

  if (roomsQuery.isPending) return <LoadingIndicator message="Loading chat rooms..." />;
  if (roomsQuery.isError)
    return (
      <Alert variant="destructive">
        <AlertTitle>Failed to load the chat archive</AlertTitle>
        <AlertDescription>{roomsQuery.error.message}</AlertDescription>
      </Alert>
    );

  const searching = Boolean(search.q);
  return (
    <div className="flex h-[calc(100svh-3.5rem-2rem)] min-h-[420px] flex-col gap-3" data-testid="chat-page">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h1 className="text-xl font-semibold tracking-tight">Chat Archive</h1>
        <search className="contents">
          <form
            onSubmit={submitSearch}
            className="flex w-full max-w-xl items-center gap-2 sm:w-auto sm:flex-1"
          >
            <div className="relative flex-1">
              <SearchIcon aria-hidden className="absolute top-2.5 left-2 size-4 text-muted-foreground" />
              <Input
                value={draft}
                onChange={(e) => setDraft(e.target.value)}
                maxLength={500}
                placeholder="Search messages: words, &quot;a phrase&quot;, from:user in:room has:file after:2025-01-01"
                aria-label="Search messages"
                className="h-9 pl-8"
                data-testid="chat-search"
              />
            </div>
            <Button type="submit" size="sm">
              Search
            </Button>
            {searching && (
              <Button
                type="button"
                size="sm"
                variant="ghost"
                aria-label="Close search"
                onClick={() => {
                  setDraft("");
                  onSearchChange({ ...search, q: undefined, sort: undefined });
                }}
              >
                <XIcon aria-hidden />
              </Button>
            )}
          </form>
        </search>
      </div>
      {access?.notice && (
        <Alert data-testid="chat-access-notice">
          <AlertTitle>No chat rooms to show</AlertTitle>
          <AlertDescription>{access.notice}</AlertDescription>
        </Alert>
      )}
      <div className="flex min-h-0 flex-1 overflow-hidden rounded-lg border bg-card">
        <aside
          className={cn(
            "min-h-0 w-full flex-col border-r md:w-72 md:shrink-0",
            search.room || searching ? "hidden" : "flex",
            // With a thread open, the room list makes way below extra-wide screens.
            search.thread ? "2xl:flex" : "md:flex",
          )}
        >
          <RoomList rooms={rooms} active={search.room} onOpen={(rid) => openRoom(rid)} />
        </aside>
        <section
          className={cn("min-w-0 flex-1 flex-col", search.room || searching ? "flex" : "hidden md:flex")}
        >
          {searching ? (
            <SearchResults
              q={search.q!}
              sort={search.sort ?? "newest"}
              onSort={(sort) => onSearchChange({ ...search, sort })}
              onOpen={(rid, msg) => {
                setDraft("");
                openRoom(rid, { msg });
              }}
            />
          ) : search.room ? (
            <>
              <header className="flex items-center gap-2 border-b px-3 py-2">
                <Button
                  variant="ghost"
                  size="icon-sm"
                  className="md:hidden"
                  aria-label="Back to rooms"
                  onClick={() => onSearchChange({})}
                >
                  <ArrowLeftIcon aria-hidden />
                </Button>
                {room && <RoomIcon type={room.type} />}
                <div className="min-w-0 flex-1">
                  <h2
                    className="line-clamp-2 text-sm font-semibold break-words sm:truncate"
                    data-testid="room-title"
                  >
                    {room?.name ?? "Room"}
                  </h2>
                  {room?.topic && <p className="truncate text-xs text-muted-foreground">{room.topic}</p>}
                </div>
                {room?.prid && (
                  <Button variant="link" size="sm" onClick={() => openRoom(room.prid!)}>
                    Parent room
                  </Button>
                )}
                <DateJump
                  key={search.room}
                  rid={search.room}
                  last={room?.last_message_at ?? null}
                  onPick={(date) => openRoom(search.room!, { date })}
                />
                <ExportMenu rid={search.room} />
              </header>
              <MessagePane
                key={`${search.room}|${anchor ?? ""}`}
                rid={search.room}
                anchor={anchor}
                me={access?.chat_username ?? null}
                onOpenThread={openThread}
                onOpenRoom={(rid) => openRoom(rid)}
              />
            </>
          ) : (
            <div className="m-auto p-6 text-center text-sm text-muted-foreground">
              {rooms.length ? "Choose a room to read its messages." : "No rooms to show."}
            </div>
          )}
        </section>
        {search.thread && (
          <aside className="fixed inset-0 z-40 flex flex-col bg-background md:static md:z-auto md:w-96 md:shrink-0 md:border-l">
            <ThreadPanel tmid={search.thread} onClose={closeThread} onOpenRoom={(rid) => openRoom(rid)} />
          </aside>
        )}
      </div>
    </div>
  );
}
