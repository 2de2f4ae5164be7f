// Pieces of the Chat Archive page: room icons, avatars, one message, a run of system messages.
import { cn } from "@client/lib/utils.ts";
import type { ChatFileRef, ChatMessage } from "@shared/chat.ts";
import {
  AtSignIcon,
  FileIcon,
  FileWarningIcon,
  HashIcon,
  HeadsetIcon,
  LinkIcon,
  LockIcon,
  MessageSquareIcon,
  MessagesSquareIcon,
} from "lucide-react";
import { useState } from "react";
import { toast } from "sonner";
import { emoji, MessageText } from "./markdown.tsx";

export function RoomIcon({ type, className }: { type: string; className?: string }) {
  const Icon =
    type === "c"
      ? HashIcon
      : type === "p"
        ? LockIcon
        : type === "d"
          ? AtSignIcon
          : type === "l"
            ? HeadsetIcon
            : MessageSquareIcon;
  const label = { c: "Channel", p: "Private group", d: "Direct messages", l: "Livechat" }[type] ?? "Room";
  return (
    <Icon aria-label={label} role="img" className={cn("size-4 shrink-0 text-muted-foreground", className)} />
  );
}

const HUES = [210, 160, 20, 280, 340, 40, 190, 120];

export function ChatAvatar({ user, size = 36 }: { user: ChatMessage["user"]; size?: number }) {
  const [failed, setFailed] = useState(false);
  const name = user.name ?? user.username ?? "?";
  const initials =
    name
      .split(/[\s.()_-]+/)
      .filter(Boolean)
      .slice(0, 2)
      .map((w) => w[0]!.toUpperCase())
      .join("") || "?";
  const hue = HUES[[...(user.username ?? name)].reduce((s, c) => s + c.charCodeAt(0), 0) % HUES.length];
  if (user.has_avatar && user.mongo_id && !failed)
    return (
      <img
        src={`/chat-api/avatar/${encodeURIComponent(user.mongo_id)}`}
        alt=""
        width={size}
        height={size}
        loading="lazy"
        onError={() => setFailed(true)}
        className="shrink-0 rounded-md object-cover"
        style={{ width: size, height: size }}
      />
    );
  return (
    <span
      aria-hidden
      className="flex shrink-0 items-center justify-center rounded-md text-xs font-semibold text-white"
      style={{ width: size, height: size, background: `hsl(${hue} 45% 45%)` }}
    >
      {initials}
    </span>
  );
}

const time = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
export const dayLabel = new Intl.DateTimeFormat(undefined, {
  weekday: "long",
  year: "numeric",
  month: "long",
  day: "numeric",
});

export function formatSize(bytes: number | null): string {
  if (bytes == null) return "";
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function FileView({
  file,
  title,
  description,
}: {
  file: ChatFileRef;
  title?: string | null;
  description?: string | null;
}) {
  const name = file.name ?? title ?? file.id;
  const href = `/chat-api/files/${encodeURIComponent(file.id)}`;
  if (!file.available)
    return (
      <div
        data-testid="file-missing"
        className="flex max-w-sm items-center gap-2 rounded-md border border-dashed p-2 text-sm text-muted-foreground"
      >
        <FileWarningIcon aria-hidden className="size-4 shrink-0" />
        <span className="min-w-0 truncate">{name}: the export did not contain this file</span>
      </div>
    );
  if (file.image)
    return (
      <figure className="max-w-sm space-y-1">
        <a href={href} target="_blank" rel="noopener noreferrer">
          <img
            src={`${href}?thumb=1`}
            alt={description ?? name}
            loading="lazy"
            className="max-h-64 rounded-md border object-contain"
          />
        </a>
        {description && <figcaption className="text-xs text-muted-foreground">{description}</figcaption>}
      </figure>
    );
  return (
    <a
      href={href}
      download={name}
      className="flex max-w-sm items-center gap-2 rounded-md border p-2 text-sm hover:bg-muted"
      data-testid="file-download"
    >
      <FileIcon aria-hidden className="size-4 shrink-0 text-muted-foreground" />
      <span className="min-w-0 flex-1 truncate">{name}</span>
      <span className="shrink-0 text-xs text-muted-foreground">{formatSize(file.size)}</span>
    </a>
  );
}

/** A message's link: the room opened at it (a thread reply: its thread opened). */
export function messageLink(m: Pick<ChatMessage, "id" | "rid" | "tmid">): string {
  const q = new URLSearchParams({ room: m.rid });
  if (m.tmid) q.set("thread", m.tmid);
  else q.set("msg", m.id);
  return `${window.location.origin}/chat?${q}`;
}

function CopyLink({ m }: { m: ChatMessage }) {
  return (
    <button
      type="button"
      aria-label="Copy link to this message"
      title="Copy link to this message"
      data-testid="copy-message-link"
      className="absolute top-1 right-1 rounded-md border bg-background p-1 text-muted-foreground opacity-0 shadow-xs transition-opacity group-hover:opacity-100 hover:text-foreground focus-visible:opacity-100 pointer-coarse:opacity-60"
      onClick={() => {
        const link = messageLink(m);
        navigator.clipboard
          .writeText(link)
          .then(() => toast.success("Link copied"))
          // Without clipboard access (an insecure origin), the link is shown to copy by hand.
          .catch(() => toast.info(link, { duration: 15_000 }));
      }}
    >
      <LinkIcon aria-hidden className="size-3.5" />
    </button>
  );
}

/** One user message; `compact` when it continues the previous message of the same sender. */
export function MessageItem({
  m,
  compact,
  highlighted,
  me,
  onOpenThread,
  onOpenRoom,
  inThread,
}: {
  m: ChatMessage;
  compact: boolean;
  highlighted?: boolean;
  me?: string | null;
  onOpenThread?: (id: string) => void;
  onOpenRoom?: (rid: string) => void;
  inThread?: boolean;
}) {
  const ts = new Date(m.ts);
  return (
    <div
      id={`msg-${m.id}`}
      data-testid="message"
      data-message-id={m.id}
      className={cn(
        "group relative flex gap-3 rounded-md px-2 transition-colors hover:bg-muted/50",
        compact ? "py-0.5" : "pt-2 pb-0.5",
        highlighted && "bg-amber-100 ring-2 ring-amber-400 dark:bg-amber-900/30",
      )}
    >
      <div className="w-9 shrink-0">
        {compact ? (
          <time
            dateTime={ts.toISOString()}
            title={dateTime.format(ts)}
            className="invisible block pt-0.5 text-right text-[10px] text-muted-foreground tabular-nums group-hover:visible"
          >
            {time.format(ts)}
          </time>
        ) : (
          <ChatAvatar user={m.user} />
        )}
      </div>
      <CopyLink m={m} />
      <div className="min-w-0 flex-1 text-sm">
        {!compact && (
          <div className="flex min-w-0 items-baseline gap-2">
            <span className="truncate font-semibold">{m.user.name ?? m.user.username ?? "Unknown user"}</span>
            {m.user.username && m.user.name && (
              <span className="hidden truncate text-xs text-muted-foreground sm:inline">
                @{m.user.username}
              </span>
            )}
            <time
              dateTime={ts.toISOString()}
              title={dateTime.format(ts)}
              className="text-xs text-muted-foreground"
            >
              {/* A thread has no day separators: its messages say their day. */}
              {inThread ? dateTime.format(ts) : time.format(ts)}
            </time>
          </div>
        )}
        {m.t === "discussion-created" ? (
          <p className="text-muted-foreground">
            <MessagesSquareIcon aria-hidden className="mr-1 inline size-4" />
            Started a discussion{" "}
            {m.drid && onOpenRoom ? (
              <button type="button" className="text-primary underline" onClick={() => onOpenRoom(m.drid!)}>
                open it
              </button>
            ) : null}
          </p>
        ) : (
          <MessageText text={m.msg} me={me} />
        )}
        {m.edited_at && (
          <span
            className="text-[11px] text-muted-foreground"
            title={`Edited ${dateTime.format(new Date(m.edited_at))}${m.edited_by ? ` by ${m.edited_by}` : ""}`}
          >
            (edited)
          </span>
        )}
        {(m.attachments.length > 0 || m.files.length > 0) && (
          <div className="mt-1 space-y-2">
            {m.attachments.map((a, i) =>
              a.file ? (
                // biome-ignore lint/suspicious/noArrayIndexKey: a message's attachments never reorder
                <FileView key={i} file={a.file} title={a.title} description={a.description} />
              ) : (
                // biome-ignore lint/suspicious/noArrayIndexKey: a message's attachments never reorder
                <div key={i} className="max-w-lg border-l-4 border-muted pl-2 text-sm">
                  {a.author_name && <div className="text-xs text-muted-foreground">{a.author_name}</div>}
                  {a.title &&
                    (a.link ? (
                      <a
                        href={a.link}
                        target="_blank"
                        rel="noopener noreferrer"
                        className="font-medium text-primary underline"
                      >
                        {a.title}
                      </a>
                    ) : (
                      <div className="font-medium">{a.title}</div>
                    ))}
                  {a.text && <MessageText text={a.text} me={me} />}
                  {a.description && <p className="text-muted-foreground">{a.description}</p>}
                </div>
              ),
            )}
            {m.files.map((f) => (
              <FileView key={f.id} file={f} />
            ))}
          </div>
        )}
        {m.reactions.length > 0 && (
          <div className="mt-1 flex flex-wrap gap-1">
            {m.reactions.map((r) => (
              <span
                key={r.emoji}
                title={r.usernames.join(", ")}
                data-testid="reaction"
                className="inline-flex items-center gap-1 rounded-full border bg-background px-2 py-0.5 text-xs"
              >
                <span>{emoji(r.emoji)}</span>
                <span className="tabular-nums">{r.count}</span>
              </span>
            ))}
          </div>
        )}
        {!inThread && (m.tcount ?? 0) > 0 && onOpenThread && (
          <button
            type="button"
            onClick={() => onOpenThread(m.id)}
            className="mt-1 inline-flex items-center gap-1 text-xs font-medium text-primary hover:underline"
          >
            <MessageSquareIcon aria-hidden className="size-3.5" />
            {m.tcount} {m.tcount === 1 ? "reply" : "replies"}
          </button>
        )}
        {!inThread && m.tmid && onOpenThread && (
          <button
            type="button"
            onClick={() => onOpenThread(m.tmid!)}
            className="block text-xs text-muted-foreground hover:underline"
          >
            replied in a thread
          </button>
        )}
      </div>
    </div>
  );
}

/** What a system message says, in a few words. */
export function systemText(m: ChatMessage): string {
  const who = m.user.username ?? "someone";
  switch (m.t) {
    case "uj":
      return `${who} joined`;
    case "ul":
      return `${who} left`;
    case "ult":
      return `${who} left the team`;
    case "au":
      return `${who} added ${m.msg}`;
    case "ru":
      return `${who} removed ${m.msg}`;
    case "r":
      return `${who} renamed the room to ${m.msg}`;
    case "room_changed_topic":
      return `${who} changed the topic to "${m.msg}"`;
    case "room_changed_description":
      return `${who} changed the description`;
    case "room_changed_announcement":
      return `${who} changed the announcement`;
    case "rm":
      return `${who} deleted a message`;
    case "user-muted":
      return `${who} muted ${m.msg}`;
    case "user-unmuted":
      return `${who} unmuted ${m.msg}`;
    case "subscription-role-added":
      return `${m.msg} was made ${m.user.username ?? ""}`.trim();
    default:
      return m.msg ? `${m.t}: ${m.msg}` : (m.t ?? "");
  }
}

/** A run of system messages (joins, topic changes…) collapsed into one quiet line. */
export function SystemLine({ messages }: { messages: ChatMessage[] }) {
  const [open, setOpen] = useState(false);
  const texts = messages.map(systemText);
  const shown = open || texts.length <= 3 ? texts : [...texts.slice(0, 2), `and ${texts.length - 2} more`];
  return (
    <div data-testid="system-line" className="px-2 py-1 pl-14 text-xs text-muted-foreground">
      {texts.length > 3 ? (
        <button type="button" className="text-left hover:underline" onClick={() => setOpen((o) => !o)}>
          {shown.join(" · ")}
        </button>
      ) : (
        shown.join(" · ")
      )}
    </div>
  );
}

/** Items of a message list: day separators, system runs and messages (grouped by sender). */
export type ListItem =
  | { kind: "day"; key: string; label: string }
  | { kind: "system"; key: string; messages: ChatMessage[] }
  | { kind: "message"; key: string; message: ChatMessage; compact: boolean };

export function buildItems(messages: ChatMessage[]): ListItem[] {
  const items: ListItem[] = [];
  let day = "";
  let prev: ChatMessage | null = null;
  for (const m of messages) {
    const ts = new Date(m.ts);
    const d = ts.toDateString();
    if (d !== day) {
      day = d;
      items.push({ kind: "day", key: `day-${d}`, label: dayLabel.format(ts) });
      prev = null;
    }
    if (m.t && m.t !== "discussion-created") {
      const last = items[items.length - 1];
      if (last?.kind === "system") last.messages.push(m);
      else items.push({ kind: "system", key: `sys-${m.id}`, messages: [m] });
      prev = null;
      continue;
    }
    const compact =
      prev !== null &&
      prev.user.mongo_id === m.user.mongo_id &&
      prev.user.username === m.user.username &&
      ts.getTime() - new Date(prev.ts).getTime() < 5 * 60_000;
    items.push({ kind: "message", key: m.id, message: m, compact });
    prev = m;
  }
  return items;
}
