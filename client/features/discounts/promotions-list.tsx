// Saved promotions: listed newest first, cancelled while they have not finished (create:promotions);
// the details show what was predicted in money, and for a started one its predicted against actual
// uplift (and revenue), per product and in total.

import { ConfirmDialog } from "@client/components/ui/alert-dialog.tsx";
import { Button } from "@client/components/ui/button.tsx";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@client/components/ui/card.tsx";
import { Input } from "@client/components/ui/input.tsx";
import { Label } from "@client/components/ui/label.tsx";
import { LoadingIndicator } from "@client/components/ui/loading-indicator.tsx";
import { DASH, formatMoney, formatUnits } from "@client/features/products/format.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import type { Promotion } from "@shared/discounts.ts";
import { type QueryClient, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { toast } from "sonner";
import { discountErrorText } from "./error-text.ts";

const STATUS_LABEL: Record<Promotion["status"], string> = {
  planned: "Planned",
  active: "Running",
  finished: "Finished",
  cancelled: "Cancelled",
};

function scopeText(p: Promotion): string {
  const s = p.scope;
  if (s.category_id) return `category #${s.category_id}`;
  if (s.brand_id) return `brand #${s.brand_id}`;
  if (s.vendor_id) return `vendor #${s.vendor_id}`;
  const n = s.pids?.length ?? 0;
  return n === 1 ? `product ${s.pids![0]}` : `${n.toLocaleString("en-US")} selected products`;
}

const uplift = (x: number | null | undefined) => (x == null ? DASH : `×${x.toFixed(2)}`);

/** "(+$240.00)": predicted against baseline revenue; nothing when either is missing. */
function revenueChange(predicted: number | null, baseline: number | null): string {
  if (predicted == null || baseline == null) return "";
  const d = Math.round((predicted - baseline) * 100) / 100;
  return ` (${d < 0 ? "−" : "+"}${formatMoney(Math.abs(d))})`;
}

function PromotionDetail({ id }: { id: number }) {
  const trpc = useTRPC();
  const q = useQuery(trpc.discounts.promotion.queryOptions({ id }));
  if (q.isPending) return <LoadingIndicator size="sm" />;
  if (q.isError)
    return <p className="text-sm text-destructive">Failed to load the promotion. Please try refreshing.</p>;
  const p = q.data;
  // What was predicted in money, from the prices and units stored when it was saved.
  const revenue = (
    <p data-testid="promotion-revenue">
      Predicted revenue {formatMoney(p.predicted_revenue)} at the promotional prices, against a baseline of{" "}
      {formatMoney(p.baseline_revenue)} at the base prices
      {revenueChange(p.predicted_revenue, p.baseline_revenue)}
      {p.actual
        ? `; actual ${formatMoney(p.actual.actual_revenue)}${p.status === "active" ? " so far" : ""}`
        : ""}
      .
    </p>
  );
  if (!p.actual)
    return (
      <div className="grid gap-1 text-sm" data-testid="promotion-predicted">
        {revenue}
        <p className="text-muted-foreground">Actual sales are shown once the promotion has started.</p>
      </div>
    );
  return (
    <div className="grid gap-2 text-sm" data-testid="promotion-actual">
      <p>
        Predicted {uplift(p.actual.predicted_uplift)} ({formatUnits(p.actual.predicted_units)} units against a
        baseline of {formatUnits(p.actual.baseline_units)}); actual{" "}
        {p.actual.actual_uplift === null
          ? `${formatUnits(p.actual.actual_units)} units so far (the uplift is shown when it has finished)`
          : `${uplift(p.actual.actual_uplift)} (${formatUnits(p.actual.actual_units)} units)`}
        .
      </p>
      {revenue}
      <div className="overflow-x-auto">
        <table className="w-full min-w-[36rem]">
          <thead>
            <tr className="text-left text-muted-foreground">
              <th className="py-1 pr-2 font-medium">Product</th>
              <th className="py-1 pr-2 text-right font-medium">Baseline</th>
              <th className="py-1 pr-2 text-right font-medium">Predicted</th>
              <th className="py-1 pr-2 text-right font-medium">Actual</th>
              <th className="py-1 text-right font-medium">Uplift predicted / actual</th>
            </tr>
          </thead>
          <tbody>
            {p.products?.slice(0, 100).map((r) => (
              <tr key={r.pid} className="border-t">
                <td className="py-1 pr-2">{r.title}</td>
                <td className="py-1 pr-2 text-right tabular-nums">{formatUnits(r.baseline_units)}</td>
                <td className="py-1 pr-2 text-right tabular-nums">{formatUnits(r.predicted_units)}</td>
                <td className="py-1 pr-2 text-right tabular-nums">{formatUnits(r.actual_units)}</td>
                <td className="py-1 text-right tabular-nums">
                  {uplift(r.uplift)} / {uplift(r.actual_uplift)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

export function PromotionsList({ canSave }: { canSave: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useQuery(trpc.discounts.promotions.queryOptions({ status: "all" }));
  const [open, setOpen] = useState<number | null>(null);
  // Cancelling takes the promotion out of its products' forecast and orders: asked first.
  const [cancelling, setCancelling] = useState<{ id: number; name: string } | null>(null);
  const cancel = useMutation(
    trpc.discounts.cancelPromotion.mutationOptions({
      onSuccess: (p) => {
        toast.success(
          `Promotion "${p.name}" cancelled: its products' forecast and reorder figures no longer include it`,
        );
        void queryClient.invalidateQueries(trpc.discounts.promotions.pathFilter());
        invalidatePlanning(queryClient, trpc);
      },
      onError: (e) => toast.error(discountErrorText(e)),
    }),
  );
  return (
    <Card data-testid="promotions">
      <ConfirmDialog
        open={cancelling !== null}
        onOpenChange={(o) => !o && setCancelling(null)}
        title={`Cancel the promotion "${cancelling?.name ?? ""}"?`}
        description="Its products' forecast and reorder figures will no longer include it. A cancelled promotion cannot be planned again; save a new one instead."
        confirmLabel="Cancel promotion"
        cancelLabel="Keep it"
        variant="destructive"
        onConfirm={() => {
          if (cancelling) cancel.mutate({ id: cancelling.id });
          setCancelling(null);
        }}
      />
      <CardHeader>
        <CardTitle>Promotions</CardTitle>
        <CardDescription>
          A planned promotion can be edited until it starts and cancelled until it finishes; once it has
          started, its predicted uplift stands beside the actual one.
        </CardDescription>
      </CardHeader>
      <CardContent>
        {list.isPending ? (
          <LoadingIndicator size="sm" message="Loading promotions..." />
        ) : list.isError ? (
          <p className="text-sm text-destructive">Failed to load promotions. Please try refreshing.</p>
        ) : list.data.length === 0 ? (
          <p className="text-sm text-muted-foreground">
            No promotions yet. Save a scenario above to plan one.
          </p>
        ) : (
          <div className="overflow-x-auto">
            <table className="w-full min-w-[40rem] text-sm">
              <thead>
                <tr className="text-left text-muted-foreground">
                  <th className="py-1 pr-2 font-medium">Name</th>
                  <th className="py-1 pr-2 font-medium">Dates</th>
                  <th className="py-1 pr-2 font-medium">Offer</th>
                  <th className="py-1 pr-2 font-medium">Scope</th>
                  <th className="py-1 pr-2 font-medium">Status</th>
                  <th className="py-1 font-medium" />
                </tr>
              </thead>
              <tbody>
                {list.data.map((p) => (
                  <PromotionRows
                    key={p.id}
                    p={p}
                    open={open === p.id}
                    onToggle={() => setOpen(open === p.id ? null : p.id)}
                    canCancel={canSave && (p.status === "planned" || p.status === "active")}
                    canEdit={canSave && p.editable}
                    onCancel={() => setCancelling({ id: p.id, name: p.name })}
                  />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </CardContent>
    </Card>
  );
}

function PromotionRows({
  p,
  open,
  onToggle,
  canCancel,
  canEdit,
  onCancel,
}: {
  p: Promotion;
  open: boolean;
  onToggle: () => void;
  canCancel: boolean;
  canEdit: boolean;
  onCancel: () => void;
}) {
  const [editing, setEditing] = useState(false);
  return (
    <>
      <tr className="border-t" data-testid="promotion-row">
        <td className="py-1.5 pr-2 font-medium">
          {p.name}
          {p.stop_reordering && <div className="text-xs text-muted-foreground">clearance: no reordering</div>}
        </td>
        <td className="py-1.5 pr-2 whitespace-nowrap">
          {p.starts_on} – {p.ends_on}
        </td>
        <td className="py-1.5 pr-2">
          {p.discount_pct !== null ? `${p.discount_pct}% off` : `price ${p.target_price}`}
        </td>
        <td className="py-1.5 pr-2">
          {scopeText(p)}, {p.product_count.toLocaleString("en-US")}{" "}
          {p.product_count === 1 ? "product" : "products"}
        </td>
        <td className="py-1.5 pr-2">{STATUS_LABEL[p.status]}</td>
        <td className="py-1.5 text-right whitespace-nowrap">
          <Button type="button" variant="ghost" size="sm" onClick={onToggle} aria-expanded={open}>
            {open ? "Hide" : "Details"}
          </Button>
          {canEdit && (
            <Button type="button" variant="ghost" size="sm" onClick={() => setEditing(!editing)}>
              Edit
            </Button>
          )}
          {canCancel && (
            <Button type="button" variant="ghost" size="sm" onClick={onCancel}>
              Cancel
            </Button>
          )}
        </td>
      </tr>
      {editing && (
        <tr>
          <td colSpan={6} className="pb-3">
            <EditPromotion p={p} onDone={() => setEditing(false)} />
          </td>
        </tr>
      )}
      {open && (
        <tr>
          <td colSpan={6} className="pb-3">
            <PromotionDetail id={p.id} />
          </td>
        </tr>
      )}
    </>
  );
}

function EditPromotion({ p, onDone }: { p: Promotion; onDone: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState(p.name);
  const [pct, setPct] = useState(p.discount_pct !== null ? String(p.discount_pct) : "");
  const [startsOn, setStartsOn] = useState(p.starts_on);
  const [endsOn, setEndsOn] = useState(p.ends_on);
  const update = useMutation(
    trpc.discounts.updatePromotion.mutationOptions({
      onSuccess: (saved) => {
        toast.success(`Promotion "${saved.name}" updated`);
        void queryClient.invalidateQueries(trpc.discounts.promotions.pathFilter());
        invalidatePlanning(queryClient, trpc);
        void queryClient.invalidateQueries(trpc.discounts.promotion.queryFilter({ id: p.id }));
        onDone();
      },
      onError: (e) => toast.error(discountErrorText(e)),
    }),
  );
  return (
    <form
      className="flex flex-wrap items-end gap-3"
      aria-label={`Edit ${p.name}`}
      onSubmit={(e) => {
        e.preventDefault();
        update.mutate({
          id: p.id,
          promotion: {
            name,
            scope: p.scope,
            starts_on: startsOn,
            ends_on: endsOn,
            stop_reordering: p.stop_reordering,
            exclude_pids: p.exclude_pids,
            ...(p.target_price !== null && pct === ""
              ? { target_price: p.target_price }
              : { discount_pct: Number(pct) }),
          },
        });
      }}
    >
      <div className="grid gap-1.5">
        <Label htmlFor={`edit-name-${p.id}`}>Name</Label>
        <Input
          id={`edit-name-${p.id}`}
          value={name}
          onChange={(e) => setName(e.target.value)}
          className="w-56"
        />
      </div>
      <div className="grid gap-1.5">
        <Label htmlFor={`edit-pct-${p.id}`}>Discount %</Label>
        <Input
          id={`edit-pct-${p.id}`}
          value={pct}
          onChange={(e) => setPct(e.target.value)}
          className="w-24"
        />
      </div>
      <div className="grid gap-1.5">
        <Label htmlFor={`edit-start-${p.id}`}>Start</Label>
        <Input
          id={`edit-start-${p.id}`}
          type="date"
          value={startsOn}
          onChange={(e) => setStartsOn(e.target.value)}
        />
      </div>
      <div className="grid gap-1.5">
        <Label htmlFor={`edit-end-${p.id}`}>End</Label>
        <Input
          id={`edit-end-${p.id}`}
          type="date"
          value={endsOn}
          onChange={(e) => setEndsOn(e.target.value)}
        />
      </div>
      <Button type="submit" size="sm" disabled={update.isPending}>
        {update.isPending ? "Saving..." : "Save changes"}
      </Button>
    </form>
  );
}

/**
 * A saved, edited or cancelled promotion changes its products' forecast (the promotion layer) and
 * planning figures at once on the server: the pages that show them read them again.
 */
export function invalidatePlanning(queryClient: QueryClient, trpc: ReturnType<typeof useTRPC>): void {
  void queryClient.invalidateQueries(trpc.forecasting.pathFilter());
  void queryClient.invalidateQueries(trpc.metrics.pathFilter());
  void queryClient.invalidateQueries(trpc.purchasing.pathFilter());
}
