// The AI check of an import (Create Products): the cost before it starts, a progress bar with
// cancel while it runs, then the model's suggestions to accept per cell, per column or all, or to
// dismiss. Verdicts also show on the grid's cells as warnings (source "ai").
import { Alert, AlertDescription, AlertTitle } from "@client/components/ui/alert.tsx";
import { Badge } from "@client/components/ui/badge.tsx";
import { Button } from "@client/components/ui/button.tsx";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@client/components/ui/card.tsx";
import { Progress } from "@client/components/ui/progress.tsx";
import {
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableHeader,
  TableRow,
} from "@client/components/ui/table.tsx";
import { canAccess } from "@client/features/auth/access.ts";
import { errorMessage } from "@client/lib/errors.ts";
import { useAuth } from "@client/lib/session.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { CheckIcon, SparklesIcon, SquareIcon, XIcon } from "lucide-react";
import { useEffect, useRef } from "react";
import { toast } from "sonner";
import { formatCost, formatInt } from "./format.ts";

export function ImportAiPanel({ importId, onChanged }: { importId: number; onChanged?: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { user } = useAuth();
  const canDebug = canAccess(user, "access:ai_validation_debug");
  const status = useQuery({
    ...trpc.aiValidation.importStatus.queryOptions({ id: importId }),
    refetchInterval: (q) => (q.state.data?.running ? 500 : false),
  });
  const configured = status.data?.configured ?? false;
  const running = status.data?.running ?? null;
  const estimate = useQuery({
    ...trpc.aiValidation.importEstimate.queryOptions({ id: importId }),
    enabled: configured && !running,
  });
  const suggestions = useQuery({
    ...trpc.aiValidation.importSuggestions.queryOptions({ id: importId }),
    enabled: configured,
  });
  const start = useMutation(trpc.aiValidation.importStart.mutationOptions());
  const cancel = useMutation(trpc.aiValidation.importCancel.mutationOptions());
  const act = useMutation(trpc.aiValidation.suggestions.mutationOptions());

  const refresh = async () => {
    await Promise.all([
      queryClient.invalidateQueries(trpc.aiValidation.importSuggestions.pathFilter()),
      queryClient.invalidateQueries(trpc.aiValidation.importEstimate.pathFilter()),
      queryClient.invalidateQueries(trpc.aiValidation.importStatus.pathFilter()),
    ]);
    onChanged?.();
  };
  // When a run ends (its verdicts saved into the rows), the grid and the list read them.
  const lastRun = status.data?.last?.run_id ?? null;
  const loaded = status.data !== undefined;
  const seen = useRef<number | null | undefined>(undefined);
  // biome-ignore lint/correctness/useExhaustiveDependencies: refresh only when a new run is recorded
  useEffect(() => {
    if (!loaded) return;
    if (seen.current !== undefined && seen.current !== lastRun) void refresh();
    seen.current = lastRun;
  }, [loaded, lastRun]);

  // During a run the verdicts go into the rows as they arrive: the grid reads them again whenever
  // the run's `written` count (rows whose verdicts are in the rows) moves. A run on another
  // instance tells no `written`: there the done count moves, and the grid is read once more a
  // moment later (the rows are written just after). The first state seen counts as a move when it
  // already holds verdicts (a row answered before the page's first look at the run).
  const runId = running?.batch_id ?? null;
  const written = running?.written ?? null;
  const doneNow = running?.done ?? null;
  const moveKey =
    runId === null ? null : `${runId}:${written ?? ""}:${written === null ? (doneNow ?? 0) : ""}`;
  const lastKey = useRef<string | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: only when the run's counts move
  useEffect(() => {
    if (moveKey === null || moveKey === lastKey.current) return;
    const first = lastKey.current === null || !lastKey.current.startsWith(`${runId}:`);
    lastKey.current = moveKey;
    if (first && !(written ?? doneNow)) return;
    onChanged?.();
    if (written !== null) return;
    const again = setTimeout(() => onChanged?.(), 1000);
    return () => clearTimeout(again);
  }, [moveKey]);

  if (!status.data) return null;
  if (!configured)
    return (
      <Alert data-testid="ai-panel-off">
        <SparklesIcon aria-hidden />
        {/* Whole, not clamped to a line: on a phone the part that says what to set must show. */}
        <AlertTitle className="line-clamp-none">{status.data.message}</AlertTitle>
        <AlertDescription>
          The rule checks above are complete without it; the import can be submitted.
        </AlertDescription>
      </Alert>
    );

  const run = async () => {
    try {
      const r = await start.mutateAsync({ id: importId });
      toast.success(`AI check started: ${r.rows} row${r.rows === 1 ? "" : "s"}`);
      await queryClient.invalidateQueries(trpc.aiValidation.importStatus.pathFilter());
    } catch (err) {
      toast.error(errorMessage(err, "Could not start the AI check"));
    }
  };
  const apply = async (input: { action: "accept" | "dismiss"; row_id?: number; field?: string }) => {
    try {
      const r = await act.mutateAsync({ id: importId, ...input });
      toast.success(
        `${input.action === "accept" ? "Accepted" : "Dismissed"} ${r.changed} suggestion${r.changed === 1 ? "" : "s"}`,
      );
      await refresh();
    } catch (err) {
      toast.error(errorMessage(err, "Could not apply the suggestion"));
    }
  };

  const e = estimate.data;
  const items = suggestions.data?.items ?? [];
  const byField = suggestions.data?.by_field ?? {};
  const last = status.data.last;
  return (
    <Card className="py-4" data-testid="ai-panel">
      <CardHeader className="px-4">
        <CardTitle className="flex items-center gap-2">
          <SparklesIcon className="size-4" aria-hidden />
          AI check
        </CardTitle>
        <CardDescription>
          A language model reads each row that passed the rule checks with the stored prompts and suggests
          corrections. Its findings are warnings: they never block the submit.
        </CardDescription>
      </CardHeader>
      <CardContent className="space-y-4 px-4">
        {running ? (
          <div className="space-y-2" data-testid="ai-progress">
            <div className="flex items-center justify-between text-sm">
              <span>
                Checking… {formatInt(running.done)} of {formatInt(running.total)} rows
                {running.cached ? ` (${formatInt(running.cached)} from the cache)` : ""}
                {running.failed ? `, ${formatInt(running.failed)} failed` : ""}
              </span>
              <span className="tabular-nums text-muted-foreground">
                {formatInt(running.tokens_in + running.tokens_out)} tokens · {formatCost(running.cost)}
              </span>
            </div>
            <Progress value={running.total ? (running.done / running.total) * 100 : 0} />
            <Button
              size="sm"
              variant="outline"
              onClick={() => cancel.mutate({ id: importId })}
              disabled={cancel.isPending}
            >
              <SquareIcon />
              Cancel
            </Button>
          </div>
        ) : (
          <div className="flex flex-col gap-3 sm:flex-row sm:items-center sm:justify-between">
            <p className="text-sm" data-testid="ai-estimate">
              {e
                ? e.rows === 0
                  ? `No row passed the rule checks yet${e.skipped_rows ? ` (${formatInt(e.skipped_rows)} with errors)` : ""}.`
                  : `${formatInt(e.rows)} row${e.rows === 1 ? "" : "s"} to check${e.skipped_rows ? ` (${formatInt(e.skipped_rows)} with errors left out)` : ""}` +
                    `${e.cached_rows ? `, ${formatInt(e.cached_rows)} answered from the cache` : ""}: ` +
                    `${formatInt(e.calls)} call${e.calls === 1 ? "" : "s"} to ${e.model}, about ${formatInt(e.tokens_in)} tokens in and ${formatInt(e.tokens_out)} out, estimated ${formatCost(e.cost)}.`
                : "Estimating…"}
            </p>
            <Button onClick={run} disabled={start.isPending || !e || e.rows === 0}>
              <SparklesIcon />
              Run AI check
            </Button>
          </div>
        )}
        {last && !running && (
          <p className="text-xs text-muted-foreground" data-testid="ai-last-run">
            Last check: {new Date(last.at).toLocaleString()}, {formatInt(last.rows)} rows,{" "}
            {formatInt(last.issues)} findings
            {last.failed ? `, ${formatInt(last.failed)} failed` : ""}
            {last.rows - last.checked - last.failed > 0
              ? `, ${formatInt(last.rows - last.checked - last.failed)} not asked`
              : ""}
            , {formatCost(last.cost)} ({last.status}).
          </p>
        )}
        {items.length > 0 && (
          <div className="space-y-2">
            <div className="flex flex-wrap items-center gap-2">
              <span className="text-sm font-medium">
                {formatInt(suggestions.data?.total ?? 0)}{" "}
                {(suggestions.data?.total ?? 0) === 1 ? "AI finding" : "AI findings"}
              </span>
              {Object.keys(byField).length > 0 && (
                <Button size="sm" onClick={() => apply({ action: "accept" })} disabled={act.isPending}>
                  <CheckIcon />
                  Accept all
                </Button>
              )}
              {Object.entries(byField).map(([field, n]) => (
                <Button
                  key={field}
                  size="sm"
                  variant="outline"
                  onClick={() => apply({ action: "accept", field })}
                  disabled={act.isPending}
                >
                  Accept {field} ({n})
                </Button>
              ))}
            </div>
            <div className="max-h-96 overflow-auto rounded-md border">
              <Table data-testid="ai-suggestions" stackOnPhone containerClassName="overflow-visible">
                <TableHeader>
                  <TableRow>
                    <TableHead>Row</TableHead>
                    <TableHead>Field</TableHead>
                    <TableHead>Value</TableHead>
                    <TableHead>Issue</TableHead>
                    <TableHead>Suggestion</TableHead>
                    <TableHead className="text-right">Actions</TableHead>
                  </TableRow>
                </TableHeader>
                <TableBody>
                  {items.map((s) => (
                    <TableRow key={`${s.row_id}-${s.field}-${s.message}`} data-testid="ai-suggestion">
                      <TableCell className="text-xs" data-label="Row">
                        {s.row_id}
                      </TableCell>
                      <TableCell className="text-xs font-medium" data-label="Field">
                        {s.field}
                      </TableCell>
                      <TableCell
                        className="max-w-40 truncate text-xs"
                        title={s.value ?? ""}
                        data-label="Value"
                      >
                        {s.value ?? <span className="text-muted-foreground">empty</span>}
                      </TableCell>
                      {/* Issue and suggestion wrap, so the actions stay in view. */}
                      <TableCell className="min-w-48 text-xs whitespace-normal" data-label="Issue">
                        {s.message}
                        {s.confidence !== null && (
                          <Badge variant="outline" className="ml-1">
                            {Math.round(s.confidence * 100)}%
                          </Badge>
                        )}
                        {canDebug && s.call_id && (
                          <Link
                            to="/ai-validation/debug"
                            search={{ run: s.call_id }}
                            className="ml-1 text-primary hover:underline"
                          >
                            run #{s.call_id}
                          </Link>
                        )}
                      </TableCell>
                      <TableCell
                        className="min-w-32 text-xs font-medium break-words whitespace-normal"
                        data-label="Suggestion"
                      >
                        {s.suggestion ?? ""}
                      </TableCell>
                      <TableCell className="text-right" data-actions>
                        <div className="flex justify-end gap-1">
                          {s.suggestion !== null && s.field !== "row" && (
                            <Button
                              size="sm"
                              variant="outline"
                              aria-label={`Accept ${s.field} of row ${s.row_id}`}
                              onClick={() => apply({ action: "accept", row_id: s.row_id, field: s.field })}
                              disabled={act.isPending}
                            >
                              <CheckIcon />
                              Accept
                            </Button>
                          )}
                          {s.field !== "row" && (
                            <Button
                              size="sm"
                              variant="ghost"
                              aria-label={`Dismiss ${s.field} of row ${s.row_id}`}
                              onClick={() => apply({ action: "dismiss", row_id: s.row_id, field: s.field })}
                              disabled={act.isPending}
                            >
                              <XIcon />
                            </Button>
                          )}
                        </div>
                      </TableCell>
                    </TableRow>
                  ))}
                </TableBody>
              </Table>
            </div>
          </div>
        )}
      </CardContent>
    </Card>
  );
}
