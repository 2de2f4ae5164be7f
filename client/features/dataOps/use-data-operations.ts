// The run state of spec section 4 "Data operations": idle, update running or reset running.
//
// One progress subscription covers both run types (the spec's two streams): a run this page starts,
// a run another user starts while the page is open, and a run already active when the page opens
// all switch the screen into that run's state. A run ends on its final message (complete with the
// exact final text, error or cancelled); then the flags clear, history reloads and a toast appears.
import { errorMessage, errorStatus, isUnauthorized } from "@client/lib/errors.ts";
import { useTRPC, useTRPCClient } from "@client/lib/trpc.ts";
import { STREAM_RECONNECT_MS } from "@shared/data-ops.ts";
import { useMutation } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import { useCallback, useEffect, useRef, useState } from "react";
import { toast } from "sonner";
import { eventStatus, isFinalEvent, type ProgressEvent, RUN_TEXT, type RunType, runTypeOf } from "./model.ts";

export interface ActiveRun {
  type: RunType;
  /** null between the click and the server's answer. */
  runId: number | null;
}

export type LogTone = "info" | "success" | "error" | "warning" | "notice";
export interface LogLine {
  id: number;
  /** The raw message as it arrived (its JSON text), or a note of the screen's own. */
  text: string;
  tone: LogTone;
  /** The progress message the line shows, when it is one. */
  event?: ProgressEvent;
}

/** The log keeps its newest lines only, so a long run cannot grow the page without bound. */
const MAX_LOG_LINES = 5000;
/** After a successful cancel, check the status if the final message has not arrived by then. */
const CANCEL_CONFIRM_MS = 5000;

const TONE: Record<ProgressEvent["status"], LogTone> = {
  running: "info",
  complete: "success",
  error: "error",
  cancelled: "warning",
};

export interface DataOperations {
  run: ActiveRun | null;
  /** The newest message of the active run. */
  lastEvent: ProgressEvent | null;
  /** Date.now() when lastEvent arrived (the elapsed time keeps counting between messages). */
  lastEventAt: number;
  log: LogLine[];
  cancelling: boolean;
  /** The progress stream dropped and is reconnecting. */
  reconnecting: boolean;
  start: (type: RunType) => void;
  cancel: () => void;
  /** Asks the server whether a run is active and brings the screen in line with the answer. */
  checkStatus: () => Promise<void>;
}

export function useDataOperations({ onHistoryChange }: { onHistoryChange: () => void }): DataOperations {
  const trpc = useTRPC();
  const client = useTRPCClient();

  const [run, setRunState] = useState<ActiveRun | null>(null);
  const [lastEvent, setLastEvent] = useState<ProgressEvent | null>(null);
  const [lastEventAt, setLastEventAt] = useState(0);
  const [log, setLog] = useState<LogLine[]>([]);
  const [cancelling, setCancelling] = useState(false);

  // Refs: stream messages arrive faster than renders, and each must see the state the previous left.
  const runRef = useRef<ActiveRun | null>(null);
  /**
   * `${run_id}:${seq}` of every message handled (a reconnect replays the current state). By seq, not
   * timestamp: two messages of the same millisecond are both shown.
   */
  const seen = useRef(new Set<string>());
  /** Runs known to have ended: their replayed final messages do nothing. */
  const finished = useRef(new Set<number>());
  /** The run whose history was reloaded once its records exist. */
  const historyShownFor = useRef<number | null>(null);
  const lineId = useRef(0);
  /** performance.now() when the screen last entered a run: older status answers cannot end it. */
  const enteredAt = useRef(0);
  const historyChange = useRef(onHistoryChange);
  historyChange.current = onHistoryChange;

  const setRun = useCallback((next: ActiveRun | null) => {
    runRef.current = next;
    setRunState(next);
  }, []);

  const append = useCallback((text: string, tone: LogTone, event?: ProgressEvent) => {
    const line: LogLine = { id: ++lineId.current, text, tone, event };
    setLog((prev) =>
      prev.length >= MAX_LOG_LINES ? [...prev.slice(1 - MAX_LOG_LINES), line] : [...prev, line],
    );
  }, []);

  const attach = useCallback(
    (type: RunType, runId: number, announce: boolean) => {
      enteredAt.current = performance.now();
      setRun({ type, runId });
      setCancelling(false);
      setLog([]);
      setLastEvent(null);
      if (announce) append(`[Connected to running ${type} process]`, "notice");
      historyChange.current();
    },
    [append, setRun],
  );

  const end = useCallback(
    (event: ProgressEvent | null) => {
      setRun(null);
      setCancelling(false);
      historyChange.current();
      if (!event) return;
      const text = RUN_TEXT[runTypeOf(event)];
      const status = eventStatus(event);
      if (status === "complete") toast.success(`${text.noun} completed successfully`);
      else if (status === "cancelled") toast.warning(`${text.noun} cancelled`);
      else toast.error(`${text.noun} failed: ${event.error || event.progress?.error || "Unknown error"}`);
    },
    [setRun],
  );

  // checkStatus and handleEvent call each other; the ref breaks the cycle.
  const checkStatusRef = useRef<() => Promise<void>>(async () => {});

  const handleEvent = useCallback(
    (event: ProgressEvent) => {
      const key = `${event.run_id}:${event.seq ?? event.timestamp}`;
      if (seen.current.has(key)) return;
      seen.current.add(key);
      const type = runTypeOf(event);
      const final = isFinalEvent(event);
      const current = runRef.current;
      const ours =
        current !== null && (current.runId === null ? current.type === type : current.runId === event.run_id);

      if (final) {
        const known = finished.current.has(event.run_id);
        finished.current.add(event.run_id);
        if (!ours || known) return;
        append(JSON.stringify(event), TONE[eventStatus(event)] ?? "info", event);
        setLastEvent(event);
        end(event);
        return;
      }
      if (eventStatus(event) !== "running" || finished.current.has(event.run_id)) {
        if (ours) append(JSON.stringify(event), "info", event);
        return;
      }
      if (!current) {
        // A run started elsewhere. Joining it after its first message means it was already running.
        const joinedMidway = (event.step_index ?? 0) > 0;
        attach(type, event.run_id, joinedMidway);
        // A replayed "running" message may be stale (e.g. the server restarted mid-run): verify.
        if (joinedMidway) void checkStatusRef.current();
      } else if (!ours) {
        return;
      } else if (current.runId === null) {
        setRun({ type, runId: event.run_id });
      }
      append(JSON.stringify(event), "info", event);
      setLastEvent(event);
      setLastEventAt(Date.now());
      // The run's history records exist once its first step began: show them as running.
      if ((event.step_index ?? 0) >= 1 && historyShownFor.current !== event.run_id) {
        historyShownFor.current = event.run_id;
        historyChange.current();
      }
    },
    [append, attach, end, setRun],
  );

  const checkStatus = useCallback(async () => {
    let status: Awaited<ReturnType<typeof client.dataOps.status.query>>;
    const askedAt = performance.now();
    try {
      status = await client.dataOps.status.query();
    } catch (err) {
      // Spec section 8: logged only.
      console.error(
        `Failed to check active process status: ${errorStatus(err) ?? ""} ${errorMessage(err, "")}`.trim(),
      );
      return;
    }
    const current = runRef.current;
    const progress = status.progress;
    if (status.active) {
      if (
        !current &&
        progress &&
        eventStatus(progress) === "running" &&
        !finished.current.has(progress.run_id)
      ) {
        attach(runTypeOf(progress), progress.run_id, true);
      }
      if (progress) handleEvent(progress);
      return;
    }
    // Nothing runs, yet the screen shows a run: its final message was missed (or it never ran).
    // An answer to a question asked before the screen entered this run says nothing about it.
    if (!current || current.runId === null || askedAt < enteredAt.current) return;
    if (progress && progress.run_id < current.runId) return;
    if (progress && progress.run_id === current.runId && isFinalEvent(progress)) handleEvent(progress);
    if (runRef.current) {
      finished.current.add(current.runId);
      end(null);
    }
  }, [attach, client, end, handleEvent]);
  checkStatusRef.current = checkStatus;

  const subscription = useSubscription(
    trpc.dataOps.progress.subscriptionOptions(undefined, {
      onStarted: () => {
        // A reconnect during a run: the replayed current state shows where it got to; check anyway.
        if (runRef.current) void checkStatusRef.current();
      },
      onData: (message) => handleEvent(message.data),
    }),
  );

  // The stream reconnects by itself after a dropped connection (EventSource, 3 s); after an error
  // that ended the subscription, resubscribe after the same delay.
  const { status: streamStatus, error: streamError, reset: resubscribe } = subscription;
  useEffect(() => {
    if (streamStatus !== "error" || isUnauthorized(streamError)) return;
    const timer = setTimeout(resubscribe, STREAM_RECONNECT_MS);
    return () => clearTimeout(timer);
  }, [streamStatus, streamError, resubscribe]);

  // On load: is a run active already?
  useEffect(() => {
    void checkStatus();
  }, [checkStatus]);

  const startUpdate = useMutation(trpc.dataOps.startFullUpdate.mutationOptions());
  const startReset = useMutation(trpc.dataOps.startFullReset.mutationOptions());
  const startChat = useMutation(trpc.dataOps.startChatImport.mutationOptions());
  const cancelRun = useMutation(trpc.dataOps.cancel.mutationOptions());

  const start = useCallback(
    (type: RunType) => {
      if (runRef.current) return;
      enteredAt.current = performance.now();
      setRun({ type, runId: null });
      setLog([]);
      setLastEvent(null);
      setLastEventAt(Date.now());
      setCancelling(false);
      historyChange.current();
      const text = RUN_TEXT[type];
      ({ update: startUpdate, reset: startReset, chat: startChat })[type].mutateAsync().then(
        ({ run_id }) => {
          const current = runRef.current;
          if (current?.type === type && current.runId === null) setRun({ type, runId: run_id });
        },
        (err: unknown) => {
          toast.error(`${text.noun} failed: ${errorMessage(err, text.startFailed)}`);
          const current = runRef.current;
          if (current?.type === type && current.runId === null) setRun(null);
        },
      );
    },
    [setRun, startUpdate, startReset, startChat],
  );

  const cancel = useCallback(() => {
    const current = runRef.current;
    if (!current) return;
    setCancelling(true);
    cancelRun.mutate(
      { type: current.type },
      {
        onSuccess: () => {
          toast.success("Operation cancelled");
          setTimeout(() => {
            if (runRef.current) void checkStatusRef.current();
          }, CANCEL_CONFIRM_MS);
        },
        onError: (err) => {
          setCancelling(false);
          const message = errorMessage(err, "");
          toast.error(message ? `Failed to cancel operation: ${message}` : "Failed to cancel operation");
        },
      },
    );
  }, [cancelRun]);

  const reconnecting = streamStatus === "error" || (streamStatus === "connecting" && streamError != null);

  return { run, lastEvent, lastEventAt, log, cancelling, reconnecting, start, cancel, checkStatus };
}
