// One model call in full: the prompt's layers, the exact request, the raw response, the parsed
// verdicts or the error, every attempt and the timings. Replay edits layers or the model and runs
// again beside the original, changing no import and no stored prompt; "Save as prompt" writes an
// edited layer as the stored prompt, for users holding settings:prompt_management.
import { Badge } from "@client/components/ui/badge.tsx";
import { Button } from "@client/components/ui/button.tsx";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@client/components/ui/card.tsx";
import { Input } from "@client/components/ui/input.tsx";
import { Label } from "@client/components/ui/label.tsx";
import { Skeleton } from "@client/components/ui/skeleton.tsx";
import {
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableHeader,
  TableRow,
} from "@client/components/ui/table.tsx";
import { Textarea } from "@client/components/ui/textarea.tsx";
import { LoadError } from "@client/features/config/parts.tsx";
import { errorMessage } from "@client/lib/errors.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import type { AiCallDetail, LayerKey, PromptLayer } from "@shared/ai-validation.ts";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ArrowLeftIcon, PlayIcon, SaveIcon } from "lucide-react";
import { useState } from "react";
import { toast } from "sonner";
import {
  formatCost,
  formatInt,
  formatMs,
  KIND_LABELS,
  MODE_LABELS,
  verdictSummary,
  versionsText,
} from "./format.ts";

const pre =
  "max-h-96 overflow-auto whitespace-pre-wrap break-words rounded-md bg-muted p-3 font-mono text-xs";

export function RunDetail({
  id,
  canSavePrompts,
  onBack,
  onOpen,
}: {
  id: number;
  canSavePrompts: boolean;
  onBack: () => void;
  onOpen: (id: number) => void;
}) {
  const trpc = useTRPC();
  const run = useQuery(trpc.aiValidation.run.queryOptions({ id }));
  const [replay, setReplay] = useState<AiCallDetail | null>(null);
  const [editing, setEditing] = useState(false);

  return (
    <div className="space-y-6" data-testid="run-detail">
      <div className="flex flex-wrap items-center gap-3">
        <Button variant="ghost" size="sm" onClick={onBack}>
          <ArrowLeftIcon />
          All runs
        </Button>
        <h1 className="text-2xl font-semibold tracking-tight">Run #{id}</h1>
        {run.data && (
          <Badge variant={run.data.status === "ok" ? "success" : "destructive"}>
            {run.data.status === "ok" ? "OK" : "Failed"}
          </Badge>
        )}
      </div>
      {run.isError && (
        <LoadError
          message={errorMessage(run.error, "Failed to load the run")}
          onRetry={() => run.refetch()}
        />
      )}
      {run.isPending && <Skeleton className="h-64 w-full" />}
      {run.data && (
        <>
          <Summary run={run.data} onOpen={onOpen} />
          <div className="flex flex-wrap gap-2">
            <Button onClick={() => setEditing((e) => !e)} variant={editing ? "secondary" : "default"}>
              <PlayIcon />
              {editing ? "Close replay" : "Replay…"}
            </Button>
          </div>
          {editing && (
            <ReplayEditor run={run.data} canSavePrompts={canSavePrompts} onReplayed={(r) => setReplay(r)} />
          )}
          {replay ? (
            <div className="grid gap-4 lg:grid-cols-2" data-testid="side-by-side">
              <CallView title={`Original #${run.data.id}`} run={run.data} />
              <CallView title={`Replay #${replay.id}`} run={replay} base={run.data} />
            </div>
          ) : (
            <CallView title="Sent and received" run={run.data} />
          )}
        </>
      )}
    </div>
  );
}

function Summary({ run: r, onOpen }: { run: AiCallDetail; onOpen: (id: number) => void }) {
  const timings = "total_ms" in r.timings ? r.timings : null;
  const items: [string, React.ReactNode][] = [
    ["Time", new Date(r.created_at).toLocaleString()],
    [
      "Kind",
      <>
        {KIND_LABELS[r.kind]}
        {r.replay_of && (
          <>
            {" of "}
            <button
              type="button"
              className="text-primary hover:underline"
              onClick={() => onOpen(r.replay_of!)}
            >
              #{r.replay_of}
            </button>
          </>
        )}
      </>,
    ],
    [
      "Import · rows",
      `${r.import_id ? `Import ${r.import_id}` : "no import"} · ${r.row_ids.join(", ") || "none"}`,
    ],
    ["Company", r.company_name ? `${r.company_name} (${r.company})` : (r.company ?? "none")],
    ["Product type", r.product_type ?? "none"],
    ["Prompt versions", versionsText(r.prompt_versions)],
    ["Endpoint · model", `${r.base_url} · ${r.model}`],
    ["Mode", r.mode ? MODE_LABELS[r.mode] : "no usable answer"],
    ["Latency", formatMs(r.latency_ms)],
    ["Tokens in / out", `${formatInt(r.tokens_in)} / ${formatInt(r.tokens_out)}`],
    ["Cost", formatCost(r.cost)],
    ["Verdicts", verdictSummary(r)],
    [
      "Timings",
      timings
        ? `total ${formatMs(timings.total_ms)} · model ${formatMs(timings.model_ms)} · app ${timings.overhead_ms.toFixed(2)} ms`
        : "not recorded",
    ],
  ];
  return (
    <Card className="py-4">
      <CardContent className="px-4">
        <dl className="grid gap-x-6 gap-y-2 text-sm sm:grid-cols-2 lg:grid-cols-3" data-testid="run-summary">
          {items.map(([k, v]) => (
            <div key={k} className="min-w-0">
              <dt className="text-xs text-muted-foreground">{k}</dt>
              <dd className="break-words">{v}</dd>
            </div>
          ))}
        </dl>
        {r.error && (
          <p className="mt-3 text-sm text-destructive" data-testid="run-error">
            {r.error}
          </p>
        )}
      </CardContent>
    </Card>
  );
}

function CallView({ title, run: r, base }: { title: string; run: AiCallDetail; base?: AiCallDetail }) {
  return (
    <Card className="min-w-0 py-4" data-testid="call-view">
      <CardHeader className="px-4">
        <CardTitle>{title}</CardTitle>
        <CardDescription>
          {r.model} · {r.mode ? MODE_LABELS[r.mode] : "no usable answer"} · {formatMs(r.latency_ms)} ·{" "}
          {verdictSummary(r)}
        </CardDescription>
      </CardHeader>
      <CardContent className="space-y-5 px-4">
        <section className="space-y-2">
          <h3 className="text-sm font-semibold">Verdicts</h3>
          <Verdicts run={r} />
        </section>
        <section className="space-y-2">
          <h3 className="text-sm font-semibold">Prompt layers</h3>
          {r.layers.map((l) => {
            const changed = base && base.layers.find((b) => b.key === l.key)?.content !== l.content;
            return (
              <div key={l.key} data-testid={`layer-${l.key}`}>
                <div className="mb-1 flex items-center gap-2 text-xs font-medium uppercase tracking-wide text-muted-foreground">
                  {l.label}
                  {changed && <Badge variant="warning">edited</Badge>}
                </div>
                <pre className={pre}>{l.content}</pre>
              </div>
            );
          })}
        </section>
        <details>
          <summary className="cursor-pointer text-sm font-semibold">
            Request (messages and parameters)
          </summary>
          <pre className={`${pre} mt-2`} data-testid="request-json">
            {JSON.stringify(r.request, null, 2)}
          </pre>
        </details>
        <details open={r.status === "failed"}>
          <summary className="cursor-pointer text-sm font-semibold">Raw response</summary>
          <pre className={`${pre} mt-2`} data-testid="response-raw">
            {r.response_raw ?? "No response body was received (see the attempts)."}
          </pre>
        </details>
        <section className="space-y-2">
          <h3 className="text-sm font-semibold">Attempts</h3>
          <div className="overflow-x-auto rounded-md border">
            <Table data-testid="attempts">
              <TableHeader>
                <TableRow>
                  <TableHead>#</TableHead>
                  <TableHead>Mode</TableHead>
                  <TableHead>Outcome</TableHead>
                  <TableHead className="text-right">Time</TableHead>
                  <TableHead>Error</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {r.attempts.map((a) => (
                  <TableRow key={a.attempt}>
                    <TableCell>{a.attempt}</TableCell>
                    <TableCell className="text-xs">{MODE_LABELS[a.mode]}</TableCell>
                    <TableCell className="text-xs">
                      {a.outcome}
                      {a.http_status ? ` (HTTP ${a.http_status})` : ""}
                      {a.request_id && (
                        <div
                          className="break-all font-mono text-[11px] text-muted-foreground"
                          title="The endpoint's id for this request (x-request-id), to quote to its support"
                          data-testid="attempt-request-id"
                        >
                          {a.request_id}
                        </div>
                      )}
                    </TableCell>
                    <TableCell className="text-right text-xs tabular-nums">{formatMs(a.ms)}</TableCell>
                    <TableCell className="max-w-80 text-xs">
                      {a.error}
                      {a.error_body && <pre className={`${pre} mt-1 max-h-40`}>{a.error_body}</pre>}
                    </TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          </div>
        </section>
      </CardContent>
    </Card>
  );
}

function Verdicts({ run: r }: { run: AiCallDetail }) {
  if (!r.verdicts)
    return (
      <p className="text-sm text-destructive" data-testid="verdicts-error">
        No verdicts: {r.error ?? "the call gave no answer"}
      </p>
    );
  return (
    <div className="overflow-x-auto rounded-md border">
      <Table data-testid="verdicts">
        <TableHeader>
          <TableRow>
            <TableHead>Row</TableHead>
            <TableHead>Field</TableHead>
            <TableHead>OK</TableHead>
            <TableHead>Issue</TableHead>
            <TableHead>Suggestion</TableHead>
            <TableHead className="text-right">Confidence</TableHead>
          </TableRow>
        </TableHeader>
        <TableBody>
          {r.verdicts.flatMap((row) =>
            row.fields.map((f) => (
              <TableRow
                key={`${row.row_id}-${f.field}`}
                className={f.ok ? "" : "bg-amber-50 dark:bg-amber-950/30"}
              >
                <TableCell className="text-xs">{row.row_id}</TableCell>
                <TableCell className="text-xs font-medium">{f.field}</TableCell>
                <TableCell className="text-xs">{f.ok ? "✓" : "✗"}</TableCell>
                <TableCell className="text-xs">{f.issue ?? ""}</TableCell>
                <TableCell className="text-xs">{f.suggestion ?? ""}</TableCell>
                <TableCell className="text-right text-xs tabular-nums">
                  {Math.round(f.confidence * 100)}%
                </TableCell>
              </TableRow>
            )),
          )}
        </TableBody>
      </Table>
    </div>
  );
}

const SAVABLE: Partial<Record<LayerKey, "system" | "general" | "company_specific">> = {
  system: "system",
  general: "general",
  company: "company_specific",
};

function ReplayEditor({
  run,
  canSavePrompts,
  onReplayed,
}: {
  run: AiCallDetail;
  canSavePrompts: boolean;
  onReplayed: (r: AiCallDetail) => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const replay = useMutation(trpc.aiValidation.replay.mutationOptions());
  const [texts, setTexts] = useState<Record<string, string>>(() =>
    Object.fromEntries(run.layers.map((l) => [l.key, l.content])),
  );
  const [model, setModel] = useState(run.model);
  const edited = run.layers.filter((l) => texts[l.key] !== l.content);

  const submit = async () => {
    try {
      const result = await replay.mutateAsync({
        id: run.id,
        layers: Object.fromEntries(edited.map((l) => [l.key, texts[l.key]!])),
        model: model.trim() && model.trim() !== run.model ? model.trim() : undefined,
      });
      onReplayed(result);
      await queryClient.invalidateQueries(trpc.aiValidation.runs.pathFilter());
      toast.success(`Replay #${result.id}: ${result.status === "ok" ? "answered" : result.error}`);
    } catch (err) {
      toast.error(errorMessage(err, "Replay failed"));
    }
  };

  return (
    <Card className="py-4" data-testid="replay-editor">
      <CardHeader className="px-4">
        <CardTitle>Replay</CardTitle>
        <CardDescription>
          Edit any layer or the model and run again. Nothing else changes: not the import, not the stored
          prompts.
        </CardDescription>
      </CardHeader>
      <CardContent className="space-y-4 px-4">
        <div className="space-y-1">
          <Label htmlFor="replay-model">Model</Label>
          <Input
            id="replay-model"
            value={model}
            onChange={(e) => setModel(e.target.value)}
            className="max-w-sm"
          />
        </div>
        {run.layers.map((l) => (
          <LayerEditor
            key={l.key}
            layer={l}
            value={texts[l.key] ?? ""}
            onChange={(v) => setTexts((t) => ({ ...t, [l.key]: v }))}
            run={run}
            canSave={canSavePrompts && !!SAVABLE[l.key] && texts[l.key] !== l.content}
          />
        ))}
        <Button onClick={submit} disabled={replay.isPending}>
          <PlayIcon />
          {replay.isPending ? "Running…" : "Run replay"}
        </Button>
      </CardContent>
    </Card>
  );
}

function LayerEditor({
  layer,
  value,
  onChange,
  run,
  canSave,
}: {
  layer: PromptLayer;
  value: string;
  onChange: (v: string) => void;
  run: AiCallDetail;
  canSave: boolean;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const prompts = useQuery({ ...trpc.prompts.list.queryOptions(), enabled: canSave });
  const create = useMutation(trpc.prompts.create.mutationOptions());
  const update = useMutation(trpc.prompts.update.mutationOptions());
  const type = SAVABLE[layer.key];
  const save = async () => {
    if (!type) return;
    const company = type === "company_specific" ? run.company : null;
    const existing = (prompts.data ?? []).find((p) =>
      type === "company_specific" ? p.prompt_type === type && p.company === company : p.prompt_type === type,
    );
    try {
      if (existing)
        await update.mutateAsync({ id: existing.id, prompt_text: value, prompt_type: type, company });
      else await create.mutateAsync({ prompt_text: value, prompt_type: type, company });
      toast.success(existing ? "Prompt updated successfully" : "Prompt created successfully");
      await queryClient.invalidateQueries(trpc.prompts.list.pathFilter());
    } catch (err) {
      toast.error(errorMessage(err, existing ? "Failed to update prompt" : "Failed to create prompt"));
    }
  };
  return (
    <div className="space-y-1">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <Label htmlFor={`replay-layer-${layer.key}`}>{layer.label}</Label>
        {canSave && (
          <Button size="sm" variant="outline" onClick={save} disabled={create.isPending || update.isPending}>
            <SaveIcon />
            Save as prompt
          </Button>
        )}
      </div>
      <Textarea
        id={`replay-layer-${layer.key}`}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        className="min-h-24 font-mono text-xs"
      />
    </div>
  );
}
