import { Badge } from "@client/components/ui/badge.tsx";
import { Card, CardAction, CardDescription, CardHeader, CardTitle } from "@client/components/ui/card.tsx";
import { cn } from "@client/lib/utils.ts";
import { Loader2Icon, TerminalIcon, WifiOffIcon } from "lucide-react";
import { useLayoutEffect, useRef } from "react";
import { RUN_TEXT } from "./model.ts";
import type { DataOperations, LogLine, LogTone } from "./use-data-operations.ts";

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
            log.map((line) => <LogLineView key={line.id} line={line} />)
          )}
        </div>
      </div>
    </Card>
  );
}

const timeFormat = new Intl.DateTimeFormat(undefined, {
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  hour12: false,
});

/**
 * One line of the log: a progress message stays its raw JSON text, prefixed with when it came, the
 * step it belongs to and its status; opening the line pretty-prints the JSON. Notes of the screen's
 * own (e.g. "[Connected to running update process]") are plain lines.
 */
function LogLineView({ line }: { line: LogLine }) {
  const { event } = line;
  if (!event) {
    return (
      <div
        data-testid="script-output-line"
        className={cn("break-all whitespace-pre-wrap", TONE_CLASS[line.tone])}
      >
        {line.text}
      </div>
    );
  }
  const at = new Date(event.timestamp);
  const step =
    event.step_count != null && event.step_count > 0
      ? `step ${event.step_index ?? 0}/${event.step_count}`
      : "step —";
  const status = event.progress?.status ?? event.status;
  return (
    <details
      data-testid="script-output-line"
      data-seq={event.seq}
      className={cn("group", TONE_CLASS[line.tone])}
    >
      <summary className="cursor-pointer list-none break-all whitespace-pre-wrap [&::-webkit-details-marker]:hidden">
        <span data-testid="script-output-prefix" className="text-zinc-500">
          <time dateTime={event.timestamp}>
            {Number.isNaN(at.getTime()) ? event.timestamp : timeFormat.format(at)}
          </time>{" "}
          <span>{step}</span> <span data-testid="script-output-status">{status}</span>{" "}
        </span>
        <span data-testid="script-output-raw">{line.text}</span>
      </summary>
      <pre
        data-testid="script-output-json"
        className="mt-1 mb-2 rounded border border-zinc-800 bg-zinc-900 p-2 break-all whitespace-pre-wrap text-zinc-200"
      >
        {JSON.stringify(event, null, 2)}
      </pre>
    </details>
  );
}
