// Steps 7 to 9: the dry run (what would be created, what is blocked and why), the submit, the
// export for the shop system, the error report, and the products this import created.
import { ConfirmDialog } from "@client/components/ui/alert-dialog.tsx";
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
import { errorMessage } from "@client/lib/errors.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import type { DryRunSummary, ImportProgress, ProductImport } from "@shared/product-import.ts";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, useNavigate } from "@tanstack/react-router";
import { DownloadIcon, FlaskConicalIcon, Loader2Icon, SendIcon, UploadIcon } from "lucide-react";
import { useState } from "react";
import { Bar, BarChart, Cell, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { toast } from "sonner";
import { invalidateImport } from "./grid.tsx";

/** The submit's progress as a share of the bar and a sentence: the check, then the products written. */
function submitStage(p: ImportProgress | null | undefined, rows: number): { pct: number; text: string } {
  const n = (v: number) => v.toLocaleString("en-US");
  // A "failed" seen while a submit runs is the previous attempt's: this one is still checking.
  if (!p || p.phase === "checking" || p.phase === "failed")
    return { pct: 5, text: `Checking all ${n(rows)} rows again...` };
  if (p.phase === "done")
    return { pct: 100, text: `${n(p.total)} ${p.total === 1 ? "product" : "products"} created` };
  if (p.phase === "creating")
    return {
      pct: 10 + (85 * p.done) / Math.max(1, p.total),
      text: `Creating products: ${n(p.done)} of ${n(p.total)}...`,
    };
  return { pct: 97, text: `Writing the export files for ${n(p.total)} products...` };
}

const COLORS = { create: "#16a34a", warnings: "#d97706", blocked: "#dc2626" };

function SummaryChart({ summary }: { summary: DryRunSummary }) {
  const data = [
    { name: "To create", value: summary.would_create - summary.with_warnings, color: COLORS.create },
    { name: "With warnings", value: summary.with_warnings, color: COLORS.warnings },
    { name: "Blocked", value: summary.blocked, color: COLORS.blocked },
  ];
  return (
    <div
      className="h-36 w-full"
      data-testid="dry-run-chart"
      role="img"
      aria-label="Rows to create, with warnings and blocked"
    >
      <ResponsiveContainer>
        <BarChart data={data} layout="vertical" margin={{ left: 8, right: 24 }}>
          <XAxis type="number" allowDecimals={false} tick={{ fontSize: 11 }} />
          <YAxis type="category" dataKey="name" width={96} tick={{ fontSize: 11 }} />
          <Tooltip />
          <Bar dataKey="value" isAnimationActive={false}>
            {data.map((d) => (
              <Cell key={d.name} fill={d.color} />
            ))}
          </Bar>
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}

function Reasons({ title, list }: { title: string; list: DryRunSummary["blocked_by"] }) {
  if (list.length === 0) return null;
  return (
    <div className="space-y-1">
      <p className="text-sm font-medium">{title}</p>
      <div className="overflow-x-auto">
        <Table>
          <TableHeader>
            <TableRow>
              <TableHead>Column</TableHead>
              <TableHead>Problem</TableHead>
              <TableHead className="text-right">Rows</TableHead>
            </TableRow>
          </TableHeader>
          <TableBody>
            {list.map((r) => (
              <TableRow key={`${r.field}-${r.message}`}>
                <TableCell>{r.field}</TableCell>
                <TableCell className="whitespace-normal">{r.message}</TableCell>
                <TableCell className="text-right tabular-nums">{r.rows}</TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </div>
    </div>
  );
}

export function ReviewStep({ imp, editable }: { imp: ProductImport; editable: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const dryRun = useMutation(trpc.productImport.dryRun.mutationOptions());
  const submit = useMutation(trpc.productImport.submit.mutationOptions());
  const submitted = imp.status === "submitted" || imp.status === "exported";
  const created = useQuery({
    ...trpc.productImport.created.queryOptions({ id: imp.id }),
    enabled: submitted,
  });
  const progress = useQuery({
    ...trpc.productImport.progress.queryOptions({ id: imp.id }),
    enabled: submit.isPending,
    refetchInterval: submit.isPending ? 500 : false,
  });
  const stage = submitStage(progress.data, imp.counts.rows);
  const [confirm, setConfirm] = useState(false);
  const [reuploading, setReuploading] = useState(false);
  const summary = imp.summary;
  const navigate = useNavigate();
  // The rows the submit did not create go on in a new draft import (POST …/continue).
  const continueRest = useMutation(
    trpc.productImport.continueWithRowsLeft.mutationOptions({
      onSuccess: (next) => {
        toast.success(`Import #${next.id} holds the ${next.counts.rows.toLocaleString("en-US")} rows left`);
        void queryClient.invalidateQueries(trpc.productImport.pathFilter());
        void navigate({ to: "/import", search: { id: next.id, step: "edit" } });
      },
      onError: (e) => toast.error(errorMessage(e, "Could not continue with the rows left")),
    }),
  );

  /** The supplier's corrected error report: replaces the rows that failed, adds lines without a row_id. */
  async function reupload(file: File) {
    setReuploading(true);
    try {
      const form = new FormData();
      form.append("file", file);
      const res = await fetch(`/api/product-imports/${imp.id}/reupload`, {
        method: "POST",
        body: form,
        credentials: "include",
      });
      const body = (await res.json()) as {
        replaced?: number;
        added?: number;
        ignored?: number;
        message?: string;
      };
      if (!res.ok) throw new Error(body.message ?? `Upload failed (${res.status})`);
      toast.success(
        `${body.replaced} ${body.replaced === 1 ? "row" : "rows"} replaced, ${body.added} added, ${body.ignored} left as ${body.ignored === 1 ? "it was" : "they were"}`,
      );
      await invalidateImport(queryClient, trpc, imp.id);
    } catch (err) {
      toast.error((err as Error).message);
    } finally {
      setReuploading(false);
    }
  }

  async function runDry() {
    try {
      await dryRun.mutateAsync({ id: imp.id });
      await invalidateImport(queryClient, trpc, imp.id);
    } catch (err) {
      toast.error(errorMessage(err, "The dry run failed"));
    }
  }
  async function runSubmit() {
    setConfirm(false);
    try {
      const res = await submit.mutateAsync({ id: imp.id });
      const made = res.summary.would_create;
      toast.success(`${made.toLocaleString("en-US")} ${made === 1 ? "product" : "products"} created`);
      await invalidateImport(queryClient, trpc, imp.id);
    } catch (err) {
      toast.error(errorMessage(err, "The submit failed: nothing was created"));
    }
  }

  return (
    <div className="space-y-4">
      <Card>
        <CardHeader>
          <CardTitle>{submitted ? "Submitted" : "Dry run"}</CardTitle>
          <CardDescription>
            {submitted
              ? `Submitted ${imp.submitted_at ? new Date(imp.submitted_at).toLocaleString() : ""}.${(summary?.blocked ?? 0) > 0 ? " Rows with errors were not created." : ""}`
              : "Every row is checked again against today's catalogue; nothing is written."}
          </CardDescription>
        </CardHeader>
        <CardContent className="space-y-4">
          {!submitted && editable && (
            <div className="flex flex-wrap gap-2">
              <Button variant="outline" onClick={runDry} disabled={dryRun.isPending} data-testid="dry-run">
                {dryRun.isPending ? (
                  <Loader2Icon className="size-4 animate-spin" />
                ) : (
                  <FlaskConicalIcon className="size-4" />
                )}
                Dry run
              </Button>
              <Button
                onClick={() => setConfirm(true)}
                disabled={submit.isPending || imp.counts.valid_rows === 0}
                data-testid="submit-import"
              >
                {submit.isPending ? (
                  <Loader2Icon className="size-4 animate-spin" />
                ) : (
                  <SendIcon className="size-4" />
                )}
                Submit {imp.counts.valid_rows.toLocaleString("en-US")} products
              </Button>
            </div>
          )}
          {submit.isPending && (
            <div className="space-y-1" data-testid="submit-progress">
              <Progress value={stage.pct} aria-label="Submit progress" />
              <p className="text-sm text-muted-foreground" role="status">
                {stage.text}
              </p>
            </div>
          )}
          {summary ? (
            <div className="space-y-3" data-testid="dry-run-summary">
              <p className="text-sm">
                <strong>{summary.would_create.toLocaleString("en-US")}</strong>{" "}
                {summary.would_create === 1 ? "product" : "products"}{" "}
                {submitted ? (summary.would_create === 1 ? "was" : "were") : "would be"} created,{" "}
                <strong>{summary.blocked.toLocaleString("en-US")}</strong>{" "}
                {summary.blocked === 1 ? "row is" : "rows are"} blocked by errors,{" "}
                <strong>{summary.with_warnings.toLocaleString("en-US")}</strong>{" "}
                {summary.with_warnings === 1 ? "has" : "have"} warnings only,{" "}
                {summary.with_images.toLocaleString("en-US")} {summary.with_images === 1 ? "has" : "have"}{" "}
                images
                {summary.deleted
                  ? `, ${summary.deleted.toLocaleString("en-US")} ${summary.deleted === 1 ? "was" : "were"} deleted`
                  : ""}
                .{summary.first_pid ? ` Pids ${summary.first_pid} to ${summary.last_pid}.` : ""}
              </p>
              {submitted &&
                summary.blocked > 0 &&
                (summary.continued_in ? (
                  <p className="text-sm" data-testid="continued-in">
                    The rows left are in{" "}
                    <Link
                      to="/import"
                      search={{ id: summary.continued_in, step: "edit" }}
                      className="text-primary underline"
                    >
                      import #{summary.continued_in}
                    </Link>
                    .
                  </p>
                ) : (
                  editable && (
                    <Button
                      variant="outline"
                      className="h-auto text-left whitespace-normal"
                      onClick={() => continueRest.mutate({ id: imp.id })}
                      disabled={continueRest.isPending}
                      data-testid="continue-rest"
                    >
                      Fix and submit the {summary.blocked.toLocaleString("en-US")}{" "}
                      {summary.blocked === 1 ? "row" : "rows"} not created (new import)
                    </Button>
                  )
                ))}
              <SummaryChart summary={summary} />
              <Reasons title="Blocked by" list={summary.blocked_by} />
              <Reasons title="Warnings" list={summary.warnings_by} />
            </div>
          ) : (
            <p className="text-sm text-muted-foreground" data-testid="dry-run-empty">
              No dry run yet: run one to see what would be created and what is blocked.
            </p>
          )}
        </CardContent>
      </Card>
      <Card>
        <CardHeader>
          <CardTitle>Downloads</CardTitle>
        </CardHeader>
        <CardContent className="flex flex-wrap gap-2">
          {submitted ? (
            <Button asChild data-testid="download-export">
              <a href={`/api/product-imports/${imp.id}/export.zip`} download>
                <DownloadIcon className="size-4" /> Export for the shop system (ZIP)
              </a>
            </Button>
          ) : (
            <Button disabled variant="outline" title="Available after the submit">
              <DownloadIcon className="size-4" /> Export (after the submit)
            </Button>
          )}
          <Button asChild variant="outline" data-testid="download-errors">
            <a href={`/api/product-imports/${imp.id}/errors.csv`} download>
              <DownloadIcon className="size-4" /> Error report (CSV)
            </a>
          </Button>
          <Button asChild variant="outline">
            <a href={`/api/product-imports/${imp.id}/file`} download>
              <DownloadIcon className="size-4" /> Original file
            </a>
          </Button>
          {editable && !submitted && (
            <Button asChild variant="outline">
              <label className="cursor-pointer">
                {reuploading ? (
                  <Loader2Icon className="size-4 animate-spin" />
                ) : (
                  <UploadIcon className="size-4" />
                )}
                Upload corrected report
                <input
                  type="file"
                  hidden
                  accept=".csv,.xlsx"
                  data-testid="reupload-input"
                  onChange={(e) => {
                    const file = e.target.files?.[0];
                    e.target.value = "";
                    if (file) void reupload(file);
                  }}
                />
              </label>
            </Button>
          )}
        </CardContent>
      </Card>
      {submitted && (
        <Card>
          <CardHeader>
            <CardTitle>Created products</CardTitle>
            <CardDescription>
              Provisional pids until the shop system has them; a product the next data import brings back
              (same SKU or barcode) shows the shop's pid.
            </CardDescription>
          </CardHeader>
          <CardContent className="overflow-x-auto">
            <Table data-testid="created-products">
              <TableHeader>
                <TableRow>
                  <TableHead>Pid</TableHead>
                  <TableHead>Title</TableHead>
                  <TableHead>SKU</TableHead>
                  <TableHead className="text-right">Price</TableHead>
                  <TableHead>In the shop system</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {(created.data ?? []).map((c) => (
                  <TableRow key={c.pid}>
                    <TableCell className="tabular-nums">{c.pid}</TableCell>
                    <TableCell>{c.title}</TableCell>
                    <TableCell>{c.sku}</TableCell>
                    <TableCell className="text-right tabular-nums">${c.price.toFixed(2)}</TableCell>
                    <TableCell>{c.shop_pid ? `Yes, pid ${c.shop_pid}` : "Not yet"}</TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          </CardContent>
        </Card>
      )}
      <ConfirmDialog
        open={confirm}
        onOpenChange={setConfirm}
        title="Submit Import"
        description={`Create ${imp.counts.valid_rows.toLocaleString("en-US")} products from the rows without errors? Rows with errors stay in the import. This cannot be undone.`}
        confirmLabel="Submit"
        onConfirm={runSubmit}
      />
    </div>
  );
}
