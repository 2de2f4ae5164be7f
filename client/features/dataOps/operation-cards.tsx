import { ConfirmDialog } from "@client/components/ui/alert-dialog.tsx";
import { Button } from "@client/components/ui/button.tsx";
import {
  Card,
  CardAction,
  CardContent,
  CardDescription,
  CardHeader,
  CardTitle,
} from "@client/components/ui/card.tsx";
import { Progress } from "@client/components/ui/progress.tsx";
import { Tooltip, TooltipContent, TooltipTrigger } from "@client/components/ui/tooltip.tsx";
import { cn } from "@client/lib/utils.ts";
import { formatDuration } from "@shared/format.ts";
import {
  DatabaseZapIcon,
  Loader2Icon,
  MessagesSquareIcon,
  PlayIcon,
  RefreshCwIcon,
  RotateCcwIcon,
  XIcon,
} from "lucide-react";
import { useEffect, useState } from "react";
import { formatCount, type ProgressEvent, RUN_TEXT, type RunType } from "./model.ts";
import type { DataOperations } from "./use-data-operations.ts";

export const RESET_CONFIRM_TITLE = "Are you absolutely sure?";
export const RESET_CONFIRM_TEXT =
  "This will completely reset the database, delete all data, and reimport everything from scratch. This action cannot be undone.";

/** Re-renders every `ms` while `active`, returning Date.now(). */
function useNow(active: boolean, ms = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [active, ms]);
  return now;
}

/** Where the active run is: its step, an overall bar, the current step's own bar, elapsed time. */
function RunProgress({
  event,
  eventAt,
  cancelling,
}: {
  event: ProgressEvent | null;
  eventAt: number;
  cancelling: boolean;
}) {
  const now = useNow(true);
  const stepIndex = event?.step_index ?? 0;
  const stepCount = event?.step_count ?? 0;
  const step = event?.progress;
  const stepPct = step?.percentage;
  // Steps before this one, plus how far this one got (a message with rows reports the step done).
  const stepDone = event?.rows != null ? 1 : (stepPct ?? 0) / 100;
  const overall = stepCount > 0 ? ((Math.max(stepIndex - 1, 0) + stepDone) / stepCount) * 100 : undefined;
  const elapsedMs = event ? event.elapsed_seconds * 1000 + Math.max(0, now - eventAt) : 0;
  const operation = cancelling ? "Cancelling…" : (event?.operation ?? "Starting…");

  return (
    <div data-testid="run-progress" className="space-y-2.5 rounded-lg border bg-muted/40 p-3">
      <div className="flex items-baseline justify-between gap-3 text-sm">
        <span className="min-w-0 truncate font-medium" title={operation}>
          {operation}
        </span>
        {stepCount > 0 && (
          <span className="shrink-0 text-xs text-muted-foreground tabular-nums">
            Step {Math.max(stepIndex, 1)} of {stepCount}
          </span>
        )}
      </div>
      <Progress
        value={overall ?? 0}
        aria-label="Overall progress"
        className={cn(overall === undefined && "animate-pulse")}
      />
      {stepPct !== undefined && (
        <div className="space-y-1">
          <Progress value={stepPct} aria-label="Current step progress" className="h-1.5" />
          <div className="flex justify-between text-xs text-muted-foreground tabular-nums">
            <span>
              {step?.current !== undefined && step.total !== undefined
                ? `${formatCount(step.current)} / ${formatCount(step.total)}${step.unit ? ` ${step.unit}` : ""}`
                : step?.operation}
            </span>
            <span>{stepPct}%</span>
          </div>
        </div>
      )}
      <div className="text-xs text-muted-foreground tabular-nums">Elapsed {formatDuration(elapsedMs)}</div>
    </div>
  );
}

function OperationCard({
  type,
  ops,
  icon: Icon,
  onRun,
}: {
  type: RunType;
  ops: DataOperations;
  icon: typeof RefreshCwIcon;
  onRun: () => void;
}) {
  const text = RUN_TEXT[type];
  const running = ops.run?.type === type;
  return (
    <Card
      data-testid={`${type}-card`}
      className={cn("gap-4 transition-shadow", running && "ring-2 ring-primary/15")}
    >
      <CardHeader>
        <CardTitle className="flex items-center gap-2 text-base">
          <span
            className={cn(
              "flex size-8 items-center justify-center rounded-md",
              type === "reset" ? "bg-destructive/10 text-destructive" : "bg-primary/10 text-primary",
            )}
          >
            <Icon aria-hidden className="size-4" />
          </span>
          {text.title}
        </CardTitle>
        <CardDescription>{text.description}</CardDescription>
        {running && (
          <CardAction>
            <Tooltip>
              <TooltipTrigger asChild>
                <Button
                  variant="ghost"
                  size="icon-sm"
                  aria-label={`Cancel ${text.title.toLowerCase()}`}
                  data-testid={`${type}-cancel`}
                  disabled={ops.cancelling}
                  onClick={ops.cancel}
                >
                  {ops.cancelling ? (
                    <Loader2Icon aria-hidden className="animate-spin" />
                  ) : (
                    <XIcon aria-hidden />
                  )}
                </Button>
              </TooltipTrigger>
              <TooltipContent>Cancel</TooltipContent>
            </Tooltip>
          </CardAction>
        )}
      </CardHeader>
      <CardContent className="mt-auto space-y-4">
        {running && (
          <RunProgress event={ops.lastEvent} eventAt={ops.lastEventAt} cancelling={ops.cancelling} />
        )}
        <Button
          className="w-full"
          variant={type === "reset" ? "destructive" : "default"}
          disabled={ops.run !== null}
          onClick={onRun}
          data-testid={`${type}-button`}
        >
          {running ? (
            <Loader2Icon aria-hidden className="animate-spin" />
          ) : type === "reset" ? (
            <RotateCcwIcon aria-hidden />
          ) : (
            <PlayIcon aria-hidden />
          )}
          {running ? text.busy : text.button}
        </Button>
      </CardContent>
    </Card>
  );
}

/**
 * The Full Update and Full Reset cards of spec section 2, with the reset confirmation, and the chat
 * archive import (the same run machinery: one operation at a time).
 */
export function OperationCards({ ops }: { ops: DataOperations }) {
  const [confirmReset, setConfirmReset] = useState(false);
  return (
    <div className="grid gap-4 md:grid-cols-2 xl:grid-cols-3">
      <OperationCard type="update" icon={RefreshCwIcon} ops={ops} onRun={() => ops.start("update")} />
      <OperationCard type="reset" icon={DatabaseZapIcon} ops={ops} onRun={() => setConfirmReset(true)} />
      <OperationCard type="chat" icon={MessagesSquareIcon} ops={ops} onRun={() => ops.start("chat")} />
      <ConfirmDialog
        open={confirmReset}
        onOpenChange={setConfirmReset}
        title={RESET_CONFIRM_TITLE}
        description={RESET_CONFIRM_TEXT}
        confirmLabel="Continue"
        cancelLabel="Cancel"
        variant="destructive"
        onConfirm={() => ops.start("reset")}
      />
    </div>
  );
}
