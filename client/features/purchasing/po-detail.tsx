// One purchase order: header, lines, receipts, history, and the actions its status and the user's
// permissions allow (docs/metrics.md §13). A draft's lines are a react-hook-form field array over
// the schema the server takes; quantities come back re-rounded to the MOQ and case, shown per line.
// The lines table is TanStack Table over the form's lines (a draft) or the stored ones.

import { PageHeader } from "@client/components/page-header.tsx";
import { Alert, AlertDescription, AlertTitle } from "@client/components/ui/alert.tsx";
import { ConfirmDialog } from "@client/components/ui/alert-dialog.tsx";
import { Badge } from "@client/components/ui/badge.tsx";
import { Button } from "@client/components/ui/button.tsx";
import { Card, CardContent, CardHeader, CardTitle } from "@client/components/ui/card.tsx";
import { Checkbox } from "@client/components/ui/checkbox.tsx";
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
} from "@client/components/ui/dialog.tsx";
import { Input } from "@client/components/ui/input.tsx";
import { Label } from "@client/components/ui/label.tsx";
import {
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableHeader,
  TableRow,
} from "@client/components/ui/table.tsx";
import { Textarea } from "@client/components/ui/textarea.tsx";
import { canAccess } from "@client/features/auth/access.ts";
import { LoadError } from "@client/features/config/parts.tsx";
import { DASH, formatDay, formatMoney, formatNumber } from "@client/features/products/format.ts";
import { errorMessage, errorStatus } from "@client/lib/errors.ts";
import { useAuth } from "@client/lib/session.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import { cn } from "@client/lib/utils.ts";
import { zodResolver } from "@hookform/resolvers/zod";
import { MAX_LINE_QTY, type PoDetail, type PoRounding, poUpdateInput } from "@shared/purchasing.ts";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, useBlocker } from "@tanstack/react-router";
import { type ColumnDef, flexRender, getCoreRowModel, useReactTable } from "@tanstack/react-table";
import { ArrowLeftIcon, DownloadIcon, PrinterIcon, Trash2Icon } from "lucide-react";
import { useEffect, useMemo, useState } from "react";
import { useFieldArray, useForm } from "react-hook-form";
import { toast } from "sonner";
import { z } from "zod";
import { PoStatusBadge } from "./status.tsx";

const ACTION_LABELS: Record<string, string> = {
  created: "Created",
  edited: "Edited",
  ordered: "Marked as ordered",
  received: "Received",
  closed: "Closed short",
  cancelled: "Cancelled",
};

function describeChange(details: Record<string, unknown> | null): string {
  if (!details) return "";
  const parts: string[] = [];
  for (const [k, v] of Object.entries(details)) {
    if (k === "lines" && Array.isArray(v)) {
      parts.push(
        v
          .map((l: { pid?: number; qty?: unknown; cost_each?: unknown; removed?: boolean }) => {
            if (l.removed) return `removed ${l.pid}`;
            if (!Array.isArray(l.qty)) return `${l.pid}: ${String(l.qty ?? "")}`;
            const what: string[] = [];
            // A quantity shown only when it changed (or the line is new); a cost when it changed.
            if (l.qty[0] === null) what.push(`new, ${l.qty[1]}`);
            else if (l.qty[0] !== l.qty[1]) what.push(`${l.qty[0]} → ${l.qty[1]}`);
            if (Array.isArray(l.cost_each) && l.qty[0] !== null && l.cost_each[0] !== l.cost_each[1])
              what.push(
                `cost ${formatMoney(Number(l.cost_each[0]))} → ${formatMoney(Number(l.cost_each[1]))}`,
              );
            return `${l.pid}: ${what.join(", ") || "unchanged"}`;
          })
          .join(", "),
      );
    } else if (Array.isArray(v) && v.length === 2)
      parts.push(`${k.replace(/_/g, " ")}: ${v[0] ?? DASH} → ${v[1] ?? DASH}`);
    else if (k === "top_up" && Array.isArray(v)) {
      if (v.length) parts.push(`top-up on ${v.length} lines`);
    } else if (typeof v !== "object") parts.push(`${k.replace(/_/g, " ")}: ${String(v)}`);
  }
  return parts.join("; ");
}

export function PurchaseOrderDetail({ number }: { number: string }) {
  const trpc = useTRPC();
  const po = useQuery(trpc.purchasing.get.queryOptions({ number }));
  if (po.isError)
    // A malformed number (the input check: 400) is not found either.
    return errorStatus(po.error) === 404 || errorStatus(po.error) === 400 ? (
      <div className="space-y-4">
        <BackLink />
        <Alert>
          <AlertTitle>Purchase order {number} not found</AlertTitle>
        </Alert>
      </div>
    ) : (
      <LoadError message="Failed to load the purchase order" onRetry={() => void po.refetch()} />
    );
  if (!po.data) return <p className="text-sm text-muted-foreground">Loading...</p>;
  return <Loaded po={po.data} />;
}

/**
 * Shows a failed action's message; when the PO changed under the page (409: another tab ordered,
 * received or saved it), reads it again so the page shows what it is now.
 */
function useActionError() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return (fallback: string) => (e: unknown) => {
    toast.error(errorMessage(e, fallback));
    if (errorStatus(e) === 409) {
      void queryClient.invalidateQueries(trpc.purchasing.pathFilter());
      void queryClient.invalidateQueries(trpc.metrics.pathFilter());
    }
  };
}

function BackLink() {
  return (
    <Button asChild variant="ghost" size="sm" className="print:hidden">
      <Link to="/purchase-orders" search={{}}>
        <ArrowLeftIcon aria-hidden /> Purchase orders
      </Link>
    </Button>
  );
}

function Loaded({ po }: { po: PoDetail }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { user } = useAuth();
  const app = po.source === "app";
  const may = {
    create: app && canAccess(user, "create:purchase_orders"),
    update: app && canAccess(user, "update:purchase_orders"),
    receive: app && canAccess(user, "receive:purchase_orders"),
  };
  const [rounded, setRounded] = useState<PoRounding[]>([]);
  const [dialog, setDialog] = useState<null | "receive" | "close" | "cancel">(null);
  // Unsaved edits in the details or the lines: ordering now would send the PO as last saved.
  const [unsaved, setUnsaved] = useState({ header: false, lines: false });
  const dirty = unsaved.header || unsaved.lines;
  // Leaving (a link, Back, a reload, closing the tab) with unsaved edits asks first.
  const blocker = useBlocker({
    shouldBlockFn: () => dirty,
    enableBeforeUnload: () => dirty,
    withResolver: true,
  });
  const refresh = () => {
    void queryClient.invalidateQueries(trpc.purchasing.pathFilter());
    void queryClient.invalidateQueries(trpc.metrics.pathFilter());
  };
  const onError = useActionError();
  const order = useMutation(
    trpc.purchasing.order.mutationOptions({
      onSuccess: (p) => {
        toast.success(`${p.number} marked as ordered, expected ${formatDay(p.date_expected)}`);
        refresh();
      },
      onError: onError("Failed to mark as ordered"),
    }),
  );
  const draft = po.status === "draft";
  const open = po.status === "ordered" || po.status === "partial";

  return (
    <div className="space-y-4" data-testid="po-detail">
      <ConfirmDialog
        open={blocker.status === "blocked"}
        onOpenChange={(open) => {
          if (!open && blocker.status === "blocked") blocker.reset();
        }}
        title="Leave without saving?"
        description={`Your changes to ${po.number} are not saved. Leave the page and lose them, or stay to save them.`}
        confirmLabel="Leave without saving"
        cancelLabel="Stay"
        variant="destructive"
        onConfirm={() => blocker.status === "blocked" && blocker.proceed()}
      />
      <BackLink />
      <PageHeader
        title={
          <span className="flex flex-wrap items-center gap-2">
            Purchase order {po.number} <PoStatusBadge status={po.status} />
            {po.overdue && <Badge variant="destructive">Overdue</Badge>}
          </span>
        }
        description={`${po.vendor.name} · ${formatNumber(po.lines.length)} lines · ${formatNumber(po.units)} units · ${formatMoney(po.value)}`}
        actions={
          <div className="flex flex-wrap gap-2 print:hidden">
            {draft && may.create && (
              <Button
                onClick={() => order.mutate({ number: po.number })}
                disabled={order.isPending || po.lines.length === 0 || dirty}
                title={dirty ? "Save or undo your changes first" : undefined}
                data-testid="mark-ordered"
              >
                {order.isPending ? "Sending..." : "Mark as ordered"}
              </Button>
            )}
            {draft && may.create && dirty && (
              <p className="basis-full text-xs text-muted-foreground" data-testid="unsaved-hint">
                Unsaved changes: save them before marking the order as ordered.
              </p>
            )}
            {open && may.receive && (
              <Button onClick={() => setDialog("receive")} data-testid="receive">
                Receive
              </Button>
            )}
            {po.status === "partial" && may.update && (
              <Button variant="outline" onClick={() => setDialog("close")} data-testid="close-short">
                Close short
              </Button>
            )}
            {(draft || po.status === "ordered") && may.update && (
              <Button variant="outline" onClick={() => setDialog("cancel")} data-testid="cancel-po">
                Cancel order
              </Button>
            )}
            <Button asChild variant="outline">
              <a href={`/api/purchase-orders/${po.number}/export.csv`} download>
                <DownloadIcon aria-hidden /> CSV
              </a>
            </Button>
            <Button asChild variant="outline">
              <a href={`/api/purchase-orders/${po.number}/export.pdf`} download data-testid="download-pdf">
                <DownloadIcon aria-hidden /> PDF
              </a>
            </Button>
            <Button variant="outline" onClick={() => window.print()}>
              <PrinterIcon aria-hidden /> Print
            </Button>
          </div>
        }
      />
      {po.superseded_by && (
        <Alert data-testid="superseded">
          <AlertTitle>
            Now in the shop system as{" "}
            <Link to="/purchase-orders/$number" params={{ number: po.superseded_by }} className="underline">
              {po.superseded_by}
            </Link>
          </AlertTitle>
          <AlertDescription>
            The imported order is the truth for its lines and receipts from now on; this one no longer counts
            as on order.
          </AlertDescription>
        </Alert>
      )}
      {!app && (
        <Alert>
          <AlertTitle>Imported from the shop system</AlertTitle>
          <AlertDescription>
            Read-only here: change it in the shop system.
            {po.reference && (
              <>
                {" "}
                It is app purchase order{" "}
                <Link to="/purchase-orders/$number" params={{ number: po.reference }} className="underline">
                  {po.reference}
                </Link>
                .
              </>
            )}
          </AlertDescription>
        </Alert>
      )}
      <div className="grid gap-4 md:grid-cols-2">
        <Card>
          <CardHeader>
            <CardTitle>Vendor</CardTitle>
          </CardHeader>
          <CardContent className="text-sm">
            <div className="font-medium">{po.vendor.name}</div>
            <div>{po.vendor.email ?? "No e-mail on file"}</div>
            <div>{po.vendor.phone ?? "No phone on file"}</div>
          </CardContent>
        </Card>
        <HeaderCard
          po={po}
          editable={(draft && may.create) || (open && may.update)}
          onSaved={refresh}
          onDirty={(d) => setUnsaved((u) => (u.header === d ? u : { ...u, header: d }))}
        />
      </div>
      <LinesCard
        po={po}
        editable={draft && may.create}
        rounded={rounded}
        onSaved={(r) => {
          setRounded(r);
          refresh();
        }}
        onDirty={(d) => setUnsaved((u) => (u.lines === d ? u : { ...u, lines: d }))}
      />
      {po.receipts.length > 0 && (
        <Card>
          <CardHeader>
            <CardTitle>Receipts</CardTitle>
          </CardHeader>
          <CardContent className="overflow-x-auto">
            <Table>
              <TableHeader>
                <TableRow>
                  <TableHead>Date</TableHead>
                  <TableHead>Product</TableHead>
                  <TableHead className="text-right">Units</TableHead>
                  <TableHead>Recorded by</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {po.receipts.map((r) => (
                  <TableRow key={r.id} data-testid="receipt-row">
                    <TableCell>{formatDay(r.received_date)}</TableCell>
                    <TableCell>
                      {po.lines.find((l) => l.po_line_id === r.po_line_id)?.title ?? r.pid}
                    </TableCell>
                    <TableCell className="text-right tabular-nums">{formatNumber(r.qty)}</TableCell>
                    <TableCell>{r.recorded_by ?? "shop system"}</TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          </CardContent>
        </Card>
      )}
      {app && (
        <Card className="print:hidden">
          <CardHeader>
            <CardTitle>History</CardTitle>
          </CardHeader>
          <CardContent>
            <ol className="space-y-1 text-sm" data-testid="history">
              {po.history.map((h) => (
                <li key={`${h.at}|${h.action}|${JSON.stringify(h.details)}`}>
                  <span className="tabular-nums text-muted-foreground">
                    {new Date(h.at).toLocaleString()}
                  </span>{" "}
                  <span className="font-medium">{ACTION_LABELS[h.action] ?? h.action}</span> by{" "}
                  {h.user ?? "unknown"}
                  {describeChange(h.details) && (
                    <span className="text-muted-foreground"> — {describeChange(h.details)}</span>
                  )}
                </li>
              ))}
            </ol>
          </CardContent>
        </Card>
      )}
      {dialog === "receive" && <ReceiveDialog po={po} onClose={() => setDialog(null)} onDone={refresh} />}
      {(dialog === "close" || dialog === "cancel") && (
        <ReasonDialog po={po} kind={dialog} onClose={() => setDialog(null)} onDone={refresh} />
      )}
    </div>
  );
}

const headerForm = poUpdateInput.pick({ date_expected: true, notes: true });

function HeaderCard({
  po,
  editable,
  onSaved,
  onDirty,
}: {
  po: PoDetail;
  editable: boolean;
  onSaved: () => void;
  onDirty: (dirty: boolean) => void;
}) {
  const trpc = useTRPC();
  const actionError = useActionError();
  const form = useForm<z.input<typeof headerForm>>({
    resolver: zodResolver(headerForm),
    defaultValues: { date_expected: po.date_expected, notes: po.notes ?? "" },
  });
  const headerDirty = form.formState.isDirty;
  useEffect(() => onDirty(editable && headerDirty), [editable, headerDirty, onDirty]);
  // The PO saved elsewhere (its lines, another tab): the details not being edited follow it; an
  // edit in progress stays.
  useEffect(
    () => form.reset({ date_expected: po.date_expected, notes: po.notes ?? "" }, { keepDirtyValues: true }),
    [po.date_expected, po.notes, form],
  );
  const save = useMutation(
    trpc.purchasing.update.mutationOptions({
      onSuccess: (r) => {
        toast.success("Purchase order saved");
        form.reset({ date_expected: r.po.date_expected, notes: r.po.notes ?? "" });
        onSaved();
      },
      onError: actionError("Failed to save the purchase order"),
    }),
  );
  return (
    <Card>
      <CardHeader>
        <CardTitle>Order</CardTitle>
      </CardHeader>
      <CardContent className="space-y-2 text-sm">
        <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1">
          <dt className="text-muted-foreground">Ordered</dt>
          <dd>{po.date_ordered ? formatDay(po.date_ordered) : "Not yet (draft)"}</dd>
          {!editable && (
            <>
              <dt className="text-muted-foreground">Expected</dt>
              <dd>{po.date_expected ? formatDay(po.date_expected) : "Not set"}</dd>
            </>
          )}
          {po.created_by && (
            <>
              <dt className="text-muted-foreground">Created by</dt>
              <dd>
                {po.created_by}, {po.created_at ? new Date(po.created_at).toLocaleString() : ""}
              </dd>
            </>
          )}
          {po.reason && (
            <>
              <dt className="text-muted-foreground">Reason</dt>
              <dd>{po.reason}</dd>
            </>
          )}
          {!editable && po.notes && (
            <>
              <dt className="text-muted-foreground">Notes</dt>
              <dd className="whitespace-pre-wrap">{po.notes}</dd>
            </>
          )}
        </dl>
        {editable && (
          <form
            className="space-y-2 print:hidden"
            onSubmit={form.handleSubmit((v) =>
              save.mutate({
                number: po.number,
                version: po.version,
                date_expected: v.date_expected || null,
                notes: v.notes || null,
              }),
            )}
          >
            <div className="space-y-1">
              <Label htmlFor="date_expected">Expected</Label>
              <Input id="date_expected" type="date" className="w-44" {...form.register("date_expected")} />
            </div>
            <div className="space-y-1">
              <Label htmlFor="notes">Notes</Label>
              <Textarea id="notes" rows={2} {...form.register("notes")} />
              {form.formState.errors.notes && (
                <p className="text-xs text-destructive">{form.formState.errors.notes.message}</p>
              )}
            </div>
            <Button
              type="submit"
              size="sm"
              variant="outline"
              disabled={save.isPending || !form.formState.isDirty}
            >
              {save.isPending ? "Saving..." : "Save details"}
            </Button>
          </form>
        )}
      </CardContent>
    </Card>
  );
}

// A blank cost (a new line's, or one cleared) is "not given": the line's cost as saved, or the
// product's cost price for a new line. Blank is "" in the form (undefined would make the field take
// the default of the line that had its place before, a removed line's cost).
const lineShape = poUpdateInput.shape.lines.unwrap().element.shape;
const linesForm = z.object({
  lines: z.array(
    z.object({
      ...lineShape,
      cost_each: z.preprocess(
        (v) => (v === "" || v === null || (typeof v === "number" && Number.isNaN(v)) ? undefined : v),
        lineShape.cost_each,
      ),
    }),
  ),
});
const linesDefaults = (po: PoDetail) => ({
  lines: po.lines.map((l) => ({ pid: l.pid, qty: l.ordered_qty, cost_each: l.cost_each as number | "" })),
});

type LineErrors = { message?: string; root?: { message?: string } } & Record<
  number,
  { qty?: { message?: string }; cost_each?: { message?: string }; pid?: { message?: string } } | undefined
>;

/** What is wrong with the lines, naming each line and field (not a blanket "check the quantities"). */
function linesErrorText<R extends { index: number }>(
  errors: unknown,
  rows: readonly R[],
  name: (r: R) => string,
): string {
  const e = errors as LineErrors;
  const parts: string[] = [];
  for (const r of rows) {
    const le = e[r.index];
    if (!le) continue;
    const label = name(r);
    if (le.qty)
      parts.push(`${label}: quantity must be a whole number from 1 to ${formatNumber(MAX_LINE_QTY)}`);
    if (le.cost_each) parts.push(`${label}: cost must be 0 or more, with at most 4 decimals (or blank)`);
    if (le.pid) parts.push(`${label}: ${le.pid.message ?? "unknown product"}`);
  }
  const whole = e.root?.message ?? e.message;
  if (whole) parts.push(whole);
  return parts.length ? parts.join(". ") : "Check the lines.";
}

interface LineRowData {
  key: string;
  /** The line's place in the form (a draft) or in the PO's lines */
  index: number;
  pid: number;
  line: PoDetail["lines"][number] | undefined;
}
type LineMeta = { numeric?: boolean };

function LinesCard({
  po,
  editable,
  rounded,
  onSaved,
  onDirty,
}: {
  po: PoDetail;
  editable: boolean;
  rounded: PoRounding[];
  onSaved: (rounded: PoRounding[]) => void;
  onDirty: (dirty: boolean) => void;
}) {
  const trpc = useTRPC();
  const actionError = useActionError();
  const form = useForm<z.input<typeof linesForm>>({
    resolver: zodResolver(linesForm),
    defaultValues: linesDefaults(po),
  });
  const linesDirty = form.formState.isDirty;
  useEffect(() => onDirty(editable && linesDirty), [editable, linesDirty, onDirty]);
  const fields = useFieldArray({ control: form.control, name: "lines" });
  // The PO saved elsewhere (its details, another tab): lines not being edited follow it; an edit in
  // progress stays (saving the details used to throw away unsaved quantities).
  // biome-ignore lint/correctness/useExhaustiveDependencies: reset when the saved PO changes
  useEffect(() => form.reset(linesDefaults(po), { keepDirtyValues: true }), [po.version]);
  const [addPid, setAddPid] = useState("");
  const save = useMutation(
    trpc.purchasing.update.mutationOptions({
      onSuccess: (r) => {
        // The lines as saved, rounded ones included (30 rounded back up to the saved 48 left 30 shown).
        form.reset(linesDefaults(r.po));
        const changed = r.rounded.filter((x) => x.rounding);
        toast.success(
          changed.length
            ? `Saved; rounded: ${changed.map((x) => x.rounding).join("; ")}`
            : "Purchase order saved",
        );
        onSaved(r.rounded);
      },
      onError: actionError("Failed to save the lines"),
    }),
  );
  const roundedBy = new Map(rounded.filter((r) => r.rounding).map((r) => [r.pid, r.rounding]));
  // A draft's rows are the form's lines (added ones included); otherwise the PO's lines as stored.
  const data = useMemo<LineRowData[]>(
    () =>
      editable
        ? fields.fields.map((f, i) => ({
            key: f.id,
            index: i,
            pid: Number(f.pid),
            line: po.lines.find((l) => l.pid === Number(f.pid)),
          }))
        : po.lines.map((l, i) => ({ key: String(l.po_line_id), index: i, pid: l.pid, line: l })),
    [editable, fields.fields, po.lines],
  );
  const name = (r: LineRowData) => r.line?.title ?? `Product ${r.pid}`;
  const formQty = (i: number) => Number(form.watch(`lines.${i}.qty`)) || 0;
  const formCost = (i: number) => Number(form.watch(`lines.${i}.cost_each`)) || 0;
  // biome-ignore lint/correctness/useExhaustiveDependencies: the cells read the form as they render
  const columns = useMemo<ColumnDef<LineRowData>[]>(
    () => [
      {
        id: "product",
        header: "Product",
        cell: ({ row: { original: r } }) => (
          <>
            <div className="font-medium">{name(r)}</div>
            <div className="text-xs text-muted-foreground">
              {r.line?.sku ?? r.pid}
              {editable && r.line && ` · MOQ ${r.line.moq}, case ${r.line.case_qty}`}
            </div>
            {editable && roundedBy.get(r.pid) && (
              <div className="text-xs text-amber-700 dark:text-amber-300" data-testid="rounding">
                Rounded: {roundedBy.get(r.pid)}
              </div>
            )}
          </>
        ),
      },
      {
        id: "ordered",
        header: "Ordered",
        meta: { numeric: true },
        cell: ({ row: { original: r } }) =>
          editable ? (
            <Input
              type="number"
              min={1}
              className="ml-auto h-8 w-24 text-right"
              aria-label={`Quantity of ${r.line?.title ?? r.pid}`}
              {...form.register(`lines.${r.index}.qty`, { valueAsNumber: true })}
            />
          ) : (
            formatNumber(r.line!.ordered_qty)
          ),
      },
      {
        id: "received",
        header: "Received",
        meta: { numeric: true },
        cell: ({ row: { original: r } }) => (editable ? "0" : formatNumber(r.line!.received_qty)),
      },
      {
        id: "open",
        header: "Open",
        meta: { numeric: true },
        // A closed or cancelled PO has nothing open any more (its rest is not coming).
        cell: ({ row: { original: r } }) =>
          editable
            ? formatNumber(formQty(r.index))
            : po.status === "closed" || po.status === "cancelled"
              ? DASH
              : formatNumber(r.line!.open_qty),
      },
      {
        id: "cost",
        header: "Cost each",
        meta: { numeric: true },
        cell: ({ row: { original: r } }) =>
          editable ? (
            <Input
              type="number"
              min={0}
              step="0.01"
              className="ml-auto h-8 w-24 text-right"
              aria-label={`Cost of ${r.line?.title ?? r.pid}`}
              // Blank: the line's cost as saved, or the product's cost price for a new line.
              placeholder={r.line ? "unchanged" : "product's"}
              {...form.register(`lines.${r.index}.cost_each`)}
            />
          ) : (
            formatMoney(r.line!.cost_each)
          ),
      },
      {
        id: "value",
        header: "Value",
        meta: { numeric: true },
        cell: ({ row: { original: r } }) =>
          formatMoney(editable ? formQty(r.index) * formCost(r.index) : r.line!.value),
      },
      ...(editable
        ? [
            {
              id: "remove",
              header: "Remove",
              cell: ({ row: { original: r } }) => (
                <Button
                  type="button"
                  variant="ghost"
                  size="icon-sm"
                  aria-label={`Remove ${r.line?.title ?? r.pid}`}
                  onClick={() => fields.remove(r.index)}
                >
                  <Trash2Icon aria-hidden />
                </Button>
              ),
            } satisfies ColumnDef<LineRowData>,
          ]
        : []),
    ],
    [editable, rounded, po.status],
  );
  const table = useReactTable({
    data,
    columns,
    getCoreRowModel: getCoreRowModel(),
    getRowId: (r) => r.key,
  });
  return (
    <Card>
      <CardHeader>
        <CardTitle>Lines</CardTitle>
      </CardHeader>
      <CardContent>
        <form
          onSubmit={form.handleSubmit((v) =>
            save.mutate({
              number: po.number,
              version: po.version,
              lines: v.lines as z.output<typeof linesForm>["lines"],
            }),
          )}
        >
          <div className="overflow-x-auto">
            <Table data-testid="po-lines">
              <TableHeader>
                {table.getHeaderGroups().map((g) => (
                  <TableRow key={g.id}>
                    {g.headers.map((h) => (
                      <TableHead
                        key={h.id}
                        className={cn(
                          (h.column.columnDef.meta as LineMeta | undefined)?.numeric && "text-right",
                          h.column.id === "remove" && "sr-only",
                        )}
                      >
                        {flexRender(h.column.columnDef.header, h.getContext())}
                      </TableHead>
                    ))}
                  </TableRow>
                ))}
              </TableHeader>
              <TableBody>
                {table.getRowModel().rows.map((r) => (
                  <TableRow key={r.id} data-testid="po-line" data-pid={r.original.pid}>
                    {r.getVisibleCells().map((c) => (
                      <TableCell
                        key={c.id}
                        className={cn(
                          (c.column.columnDef.meta as LineMeta | undefined)?.numeric &&
                            "text-right tabular-nums",
                        )}
                      >
                        {flexRender(c.column.columnDef.cell, c.getContext())}
                      </TableCell>
                    ))}
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          </div>
          {form.formState.errors.lines && (
            <p className="mt-2 text-sm text-destructive" role="alert" data-testid="lines-error">
              {linesErrorText(form.formState.errors.lines, data, name)}
            </p>
          )}
          {editable && (
            <div className="mt-3 flex flex-wrap items-end gap-2 print:hidden">
              <div className="space-y-1">
                <Label htmlFor="add-pid">Add product (pid)</Label>
                <Input
                  id="add-pid"
                  className="w-32"
                  inputMode="numeric"
                  value={addPid}
                  onChange={(e) => setAddPid(e.target.value)}
                />
              </div>
              <Button
                type="button"
                variant="outline"
                disabled={!/^\d+$/.test(addPid.trim())}
                onClick={() => {
                  fields.append({ pid: Number(addPid.trim()), qty: 1, cost_each: "" });
                  setAddPid("");
                }}
              >
                Add line
              </Button>
              <Button type="submit" className="ml-auto" disabled={save.isPending} data-testid="save-lines">
                {save.isPending ? "Saving..." : "Save lines"}
              </Button>
            </div>
          )}
        </form>
      </CardContent>
    </Card>
  );
}

function ReceiveDialog({ po, onClose, onDone }: { po: PoDetail; onClose: () => void; onDone: () => void }) {
  const trpc = useTRPC();
  const actionError = useActionError();
  const today = new Date().toISOString().slice(0, 10);
  const [date, setDate] = useState(today);
  const [qty, setQty] = useState<Record<number, string>>({});
  const [confirmOver, setConfirmOver] = useState(false);
  const entered = (id: number) => (qty[id] ?? "").trim();
  // A quantity typed that is not a whole number of 1 or more is named, not dropped from the receipt.
  const badIds = new Set(
    po.lines
      .filter((l) => {
        const v = entered(l.po_line_id);
        return v !== "" && !(/^\d+$/.test(v) && Number(v) >= 1 && Number(v) <= MAX_LINE_QTY);
      })
      .map((l) => l.po_line_id),
  );
  const lines = po.lines
    .map((l) => ({ po_line_id: l.po_line_id, qty: Number(entered(l.po_line_id)) }))
    .filter((l) => !badIds.has(l.po_line_id) && Number.isInteger(l.qty) && l.qty > 0);
  const over = po.lines.some((l) => Number(qty[l.po_line_id] ?? 0) > l.open_qty);
  const receive = useMutation(
    trpc.purchasing.receive.mutationOptions({
      onSuccess: (p) => {
        toast.success(`Receipt recorded: ${po.number} is now ${p.status}`);
        onDone();
        onClose();
      },
      onError: actionError("Failed to record the receipt"),
    }),
  );
  return (
    <Dialog open onOpenChange={(o) => !o && onClose()}>
      <DialogContent className="max-h-[90vh] overflow-y-auto sm:max-w-xl" data-testid="receive-dialog">
        <DialogHeader>
          <DialogTitle>Receive {po.number}</DialogTitle>
          <DialogDescription>
            Enter the units that arrived. The date may be earlier, never after today.
          </DialogDescription>
        </DialogHeader>
        <div className="space-y-1">
          <Label htmlFor="received-date">Received on</Label>
          <Input
            id="received-date"
            type="date"
            max={today}
            className="w-44"
            value={date}
            onChange={(e) => setDate(e.target.value)}
          />
        </div>
        {/* min-w-0: a long title is cut in its row instead of widening the dialog past a phone. */}
        <div className="min-w-0 space-y-2">
          {po.lines.map((l) => (
            <div key={l.po_line_id} className="flex items-center justify-between gap-2 text-sm">
              <span className="min-w-0 flex-1 truncate" title={l.title ?? String(l.pid)}>
                {l.title ?? l.pid}{" "}
                <span className="text-muted-foreground">({formatNumber(l.open_qty)} open)</span>
              </span>
              <Input
                type="text"
                inputMode="numeric"
                className={cn(
                  "h-8 w-24 shrink-0 text-right",
                  badIds.has(l.po_line_id) && "border-destructive",
                )}
                aria-label={`Received of ${l.title ?? l.pid}`}
                aria-invalid={badIds.has(l.po_line_id) || undefined}
                value={qty[l.po_line_id] ?? ""}
                onChange={(e) => setQty((q) => ({ ...q, [l.po_line_id]: e.target.value }))}
              />
            </div>
          ))}
        </div>
        {badIds.size > 0 && (
          <p className="text-sm text-destructive" role="alert" data-testid="receive-error">
            Received quantities must be whole numbers from 1 to {formatNumber(MAX_LINE_QTY)}:{" "}
            {po.lines
              .filter((l) => badIds.has(l.po_line_id))
              .map((l) => `${l.title ?? l.pid} (${entered(l.po_line_id)})`)
              .join(", ")}
            . Leave a line blank to receive none of it.
          </p>
        )}
        {over && (
          <label className="flex items-center gap-2 text-sm text-amber-800 dark:text-amber-300">
            <Checkbox checked={confirmOver} onCheckedChange={(v) => setConfirmOver(v === true)} />
            More than is open on a line: receive it anyway
          </label>
        )}
        <DialogFooter>
          <Button variant="outline" onClick={onClose}>
            Cancel
          </Button>
          <Button
            disabled={
              receive.isPending ||
              lines.length === 0 ||
              badIds.size > 0 ||
              (over && !confirmOver) ||
              !date ||
              date > today
            }
            onClick={() =>
              receive.mutate({
                number: po.number,
                received_date: date,
                confirm_over_receipt: over && confirmOver,
                lines,
              })
            }
            data-testid="confirm-receive"
          >
            {receive.isPending ? "Saving..." : "Record receipt"}
          </Button>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  );
}

function ReasonDialog({
  po,
  kind,
  onClose,
  onDone,
}: {
  po: PoDetail;
  kind: "close" | "cancel";
  onClose: () => void;
  onDone: () => void;
}) {
  const trpc = useTRPC();
  const actionError = useActionError();
  const [reason, setReason] = useState("");
  const options = {
    onSuccess: () => {
      toast.success(kind === "close" ? `${po.number} closed short` : `${po.number} cancelled`);
      onDone();
      onClose();
    },
    onError: actionError(kind === "close" ? "Failed to close" : "Failed to cancel"),
  };
  const close = useMutation(trpc.purchasing.close.mutationOptions(options));
  const cancel = useMutation(trpc.purchasing.cancel.mutationOptions(options));
  const pending = close.isPending || cancel.isPending;
  return (
    <Dialog open onOpenChange={(o) => !o && onClose()}>
      <DialogContent data-testid="reason-dialog">
        <DialogHeader>
          <DialogTitle>{kind === "close" ? `Close ${po.number} short` : `Cancel ${po.number}`}</DialogTitle>
          <DialogDescription>
            {kind === "close"
              ? "The units not yet received will no longer count as on order."
              : "The order will no longer count as on order."}
          </DialogDescription>
        </DialogHeader>
        <div className="space-y-1">
          <Label htmlFor="reason">Reason</Label>
          <Textarea id="reason" rows={2} value={reason} onChange={(e) => setReason(e.target.value)} />
        </div>
        <DialogFooter>
          <Button variant="outline" onClick={onClose}>
            Back
          </Button>
          <Button
            variant={kind === "cancel" ? "destructive" : "default"}
            disabled={pending || !reason.trim()}
            onClick={() => (kind === "close" ? close : cancel).mutate({ number: po.number, reason })}
            data-testid="confirm-reason"
          >
            {kind === "close" ? "Close short" : "Cancel order"}
          </Button>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  );
}
