import { Button } from "@client/components/ui/button.tsx";
import { LoadingIndicator } from "@client/components/ui/loading-indicator.tsx";
import { errorMessage } from "@client/lib/errors.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import { useQuery } from "@tanstack/react-query";
import { XIcon } from "lucide-react";
import { MessageItem } from "./parts.tsx";

/** A thread: its first message and every reply, beside the room (over it on a phone). */
export function ThreadPanel({
  tmid,
  onClose,
  onOpenRoom,
}: {
  tmid: string;
  onClose: () => void;
  onOpenRoom: (rid: string) => void;
}) {
  const trpc = useTRPC();
  const thread = useQuery({ ...trpc.chat.thread.queryOptions({ tmid }), retry: false });
  return (
    <div className="flex min-h-0 flex-1 flex-col" data-testid="thread-panel">
      <header className="flex items-center gap-2 border-b px-3 py-2">
        <h2 className="flex-1 text-sm font-semibold">
          Thread
          {thread.data && (
            <span className="ml-2 font-normal text-muted-foreground">
              {thread.data.replies.length} {thread.data.replies.length === 1 ? "reply" : "replies"} in{" "}
              {thread.data.room.name}
            </span>
          )}
        </h2>
        <Button variant="ghost" size="icon-sm" aria-label="Close thread" onClick={onClose}>
          <XIcon aria-hidden />
        </Button>
      </header>
      <div className="min-h-0 flex-1 overflow-y-auto p-2">
        {thread.isPending && <LoadingIndicator message="Loading thread..." />}
        {thread.isError && (
          <p role="alert" className="p-4 text-sm text-muted-foreground">
            {errorMessage(thread.error, "Failed to load the thread")}
          </p>
        )}
        {thread.data && (
          <>
            <MessageItem m={thread.data.root} compact={false} inThread onOpenRoom={onOpenRoom} />
            <div className="my-2 border-t" />
            {thread.data.replies.map((m, i) => (
              <MessageItem
                key={m.id}
                m={m}
                inThread
                compact={
                  i > 0 &&
                  thread.data.replies[i - 1]!.user.username === m.user.username &&
                  new Date(m.ts).getTime() - new Date(thread.data.replies[i - 1]!.ts).getTime() < 5 * 60_000
                }
                onOpenRoom={onOpenRoom}
              />
            ))}
          </>
        )}
      </div>
    </div>
  );
}
