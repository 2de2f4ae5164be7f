import { Badge } from "@client/components/ui/badge.tsx";
import { Card, CardAction, CardDescription, CardHeader, CardTitle } from "@client/components/ui/card.tsx";
import { cn } from "@client/lib/utils.ts";
import { Loader2Icon, TerminalIcon, WifiOffIcon } from "lucide-react";
import { useLayoutEffect, useRef } from "react";
import { RUN_TEXT } from "./model.ts";
import type { DataOperations, LogTone } from "./use-data-operations.ts";

const TONE_CLASS: Record<LogTone, string> = {
  info: "text-zinc-300",
  success: "text-emerald-400",
  error: "text-red-400",
  warning: "text-amber-300",
  notice: "text-sky-300",
};

/** How close to the bottom (px) still counts as "following" the log. */
const STICK_THRESHOLD = 48;

/**
 * The Script Output panel of spec section 2: a 400px scrolling log of the raw progress messages,
 * shown while a run is active or output exists. It follows new lines unless scrolled up.
 */
export function ScriptOutput({ ops }: { ops: DataOperations }) {
  const { run, log, reconnecting } = ops;
  const scroller = useRef<HTMLDivElement>(null);
  const following = useRef(true);
  const lastLineId = log.at(-1)?.id;

  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when a line is added
  useLayoutEffect(() => {
    const el = scroller.current;
    if (log.length <= 1) following.current = true; // a new run's log starts following again
    if (el && following.current) el.scrollTop = el.scrollHeight;
  }, [lastLineId]);

  if (!run && log.length === 0) return null;
  const title = run ? RUN_TEXT[run.type].logTitle : "Process output";

  return (
    <Card data-testid="script-output" className="gap-3 py-4">
      <CardHeader className="px-4">
        <CardTitle className="flex items-center gap-2 text-base">
          {run ? (
            <Loader2Icon aria-hidden className="size-4 animate-spin text-muted-foreground" />
          ) : (
            <TerminalIcon aria-hidden className="size-4 text-muted-foreground" />
          )}
          <span data-testid="script-output-title">{title}</span>
        </CardTitle>
        <CardDescription>Script Output</CardDescription>
        <CardAction className="flex items-center gap-2">
          {run && reconnecting && (
            <Badge variant="warning" data-testid="stream-reconnecting">
              <WifiOffIcon aria-hidden />
              Reconnecting…
            </Badge>
          )}
          <span className="text-xs text-muted-foreground tabular-nums">
            {log.length} {log.length === 1 ? "line" : "lines"}
          </span>
        </CardAction>
      </CardHeader>
      <div className="px-4">
        <div
          ref={scroller}
          role="log"
          aria-label={title}
          data-testid="script-output-log"
          onScroll={(e) => {
            const el = e.currentTarget;
            following.current = el.scrollHeight - el.scrollTop - el.clientHeight < STICK_THRESHOLD;
          }}
          className="h-[400px] overflow-y-auto rounded-lg border border-zinc-800 bg-zinc-950 p-3 font-mono text-xs leading-5 shadow-inner"
        >
          {log.length === 0 ? (
            <div className="text-zinc-500">Waiting for output…</div>
          ) : (
            log.map((line) => (
              <div
                key={line.id}
                data-testid="script-output-line"
                className={cn("break-all whitespace-pre-wrap", TONE_CLASS[line.tone])}
              >
                {line.text}
              </div>
            ))
          )}
        </div>
      </div>
    </Card>
  );
}
