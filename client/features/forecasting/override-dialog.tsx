// The override dialog: a range of the 13 weeks, set units / change by % / hold at the last 4 weeks'
// average, a reason and an optional expiry; on a category, brand or vendor row the spread to its
// products is previewed (forecasting.previewOverride) before it is saved.
import { Button } from "@client/components/ui/button.tsx";
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
} from "@client/components/ui/dialog.tsx";
import { Input } from "@client/components/ui/input.tsx";
import { errorMessage } from "@client/lib/errors.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import {
  type ForecastLevel,
  HOLD_LAST_4_WEEKS,
  type OverrideInput,
  type OverrideResult,
} from "@shared/forecasting.ts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { toast } from "sonner";

export interface OverrideTarget {
  /** A grid row (product, category, brand, vendor) or, for a bulk override, the selected products */
  level: ForecastLevel | "products";
  id: number;
  /** The selected products (level "products") */
  pids?: number[];
  title: string;
  /** The 13 forecast Mondays */
  weeks: string[];
  /** Units sold in the last 4 complete weeks (the row's; empty for a bulk override) */
  lastFour: number[];
  system: number[];
}

type Mode = "units" | "pct" | "hold";

const SCOPE_KEY: Record<ForecastLevel, "pid" | "category_id" | "brand_id" | "vendor_id"> = {
  product: "pid",
  category: "category_id",
  brand: "brand_id",
  vendor: "vendor_id",
};

/** "weeks.0.pct: must be at least -100" in the dialog's words: "Week 1 %: must be at least -100". */
function overrideErrorText(text: string): string {
  return text
    .replace(/\bweeks\.(\d+)\.pct\b/g, (_, i) => `Week ${Number(i) + 1} %`)
    .replace(/\bweeks\.(\d+)\.units\b/g, (_, i) => `Week ${Number(i) + 1} units`)
    .replace(/\bweeks\.(\d+)\b/g, (_, i) => `Week ${Number(i) + 1}`);
}

export function OverrideDialog({
  target,
  onClose,
  onSaved,
}: {
  target: OverrideTarget;
  onClose: () => void;
  onSaved?: () => void;
}) {
  const trpc = useTRPC();
  const client = useQueryClient();
  const [from, setFrom] = useState(0);
  const [to, setTo] = useState(target.weeks.length - 1);
  const [mode, setMode] = useState<Mode>("pct");
  const [value, setValue] = useState("");
  const [reason, setReason] = useState("");
  const [expires, setExpires] = useState("");
  const [preview, setPreview] = useState<OverrideResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const hold = target.lastFour.reduce((a, b) => a + b, 0) / Math.max(1, target.lastFour.length);
  // A preview answers the inputs it was made for: any change to them clears it.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the inputs are the trigger
  useEffect(() => setPreview(null), [from, to, mode, value]);

  const body = (): OverrideInput | null => {
    const n = Number(value);
    if (mode !== "hold" && (value.trim() === "" || !Number.isFinite(n))) {
      setError(mode === "pct" ? "Enter a percentage." : "Enter a number of units.");
      return null;
    }
    // "Hold" is worked out by the server: each product at its own last 4 weeks' average.
    const weeks = target.weeks
      .slice(Math.min(from, to), Math.max(from, to) + 1)
      .map((week_start): OverrideInput["weeks"][number] =>
        mode === "pct"
          ? { week_start, pct: n }
          : mode === "hold"
            ? { week_start, hold: HOLD_LAST_4_WEEKS }
            : { week_start, units: n },
      );
    return {
      scope:
        target.level === "products"
          ? { pids: target.pids ?? [] }
          : ({ [SCOPE_KEY[target.level]]: target.id } as OverrideInput["scope"]),
      weeks,
      reason,
      expires_on: expires || null,
    };
  };
  const save = useMutation(
    trpc.forecasting.createOverride.mutationOptions({
      onSuccess: (r) => {
        toast.success(`Override saved for ${r.products.length} product${r.products.length === 1 ? "" : "s"}`);
        onSaved?.();
        onClose();
        return client.invalidateQueries(trpc.forecasting.pathFilter());
      },
      onError: (e) => setError(overrideErrorText(errorMessage(e, "Could not save the override"))),
    }),
  );
  const onPreview = async () => {
    setError(null);
    const b = body();
    if (!b) return;
    try {
      setPreview(await client.fetchQuery(trpc.forecasting.previewOverride.queryOptions(b)));
    } catch (e) {
      setError(overrideErrorText(errorMessage(e, "Could not preview the override")));
    }
  };
  const onSave = () => {
    setError(null);
    const b = body();
    if (b) save.mutate(b);
  };

  return (
    <Dialog open onOpenChange={(open) => !open && onClose()}>
      <DialogContent className="max-h-[90vh] overflow-y-auto sm:max-w-xl" data-testid="override-dialog">
        <DialogHeader>
          <DialogTitle>Override {target.title}</DialogTitle>
          <DialogDescription>
            {target.level === "product"
              ? "Changes this product's forecast for the weeks chosen."
              : target.level === "products"
                ? "Changes each selected product's forecast: units and percentages apply to every product as they are."
                : `Spread to the ${target.level}'s products by their share of the forecast.`}
          </DialogDescription>
        </DialogHeader>
        <div className="grid gap-3 text-sm">
          <div className="grid grid-cols-2 gap-3">
            <label className="grid gap-1">
              From week
              <select
                aria-label="From week"
                className="h-9 rounded-md border px-2"
                value={from}
                onChange={(e) => setFrom(Number(e.target.value))}
              >
                {target.weeks.map((w, i) => (
                  <option key={w} value={i}>
                    {w}
                  </option>
                ))}
              </select>
            </label>
            <label className="grid gap-1">
              To week
              <select
                aria-label="To week"
                className="h-9 rounded-md border px-2"
                value={to}
                onChange={(e) => setTo(Number(e.target.value))}
              >
                {target.weeks.map((w, i) => (
                  <option key={w} value={i}>
                    {w}
                  </option>
                ))}
              </select>
            </label>
          </div>
          <fieldset className="grid gap-1">
            <legend className="mb-1">Change</legend>
            {(
              [
                ["pct", "Add or subtract %"],
                ["units", "Set units per week"],
                [
                  "hold",
                  target.level === "products" || target.level === "product"
                    ? `Hold at last 4 weeks' average${target.level === "product" ? ` (${Math.round(hold * 10) / 10} units)` : " (each product's own)"}`
                    : `Hold each product at its last 4 weeks' average (${Math.round(hold * 10) / 10} units in all)`,
                ],
              ] as const
            ).map(([m, label]) => (
              <label key={m} className="flex items-center gap-2">
                <input
                  type="radio"
                  name="mode"
                  checked={mode === m}
                  onChange={() => {
                    // A percentage is no number of units: the value starts again.
                    if (m !== mode) setValue("");
                    setMode(m);
                  }}
                />
                {label}
              </label>
            ))}
          </fieldset>
          {mode !== "hold" && (
            <label className="grid gap-1">
              {mode === "pct" ? "Percent (e.g. 20 or -15)" : "Units per week"}
              <Input
                aria-label={mode === "pct" ? "Percent" : "Units"}
                inputMode="decimal"
                value={value}
                onChange={(e) => setValue(e.target.value)}
              />
            </label>
          )}
          <label className="grid gap-1">
            Reason
            <Input
              aria-label="Reason"
              value={reason}
              onChange={(e) => setReason(e.target.value)}
              placeholder="Promotion, event, known order…"
            />
          </label>
          <label className="grid gap-1">
            Expires on (optional)
            <Input
              aria-label="Expires on"
              type="date"
              value={expires}
              onChange={(e) => setExpires(e.target.value)}
            />
          </label>
          {error && (
            <p className="text-sm text-red-700" role="alert" data-testid="override-error">
              {error}
            </p>
          )}
          {preview && (
            <div className="max-h-60 overflow-auto rounded border" data-testid="override-preview">
              <table className="w-full text-xs">
                <thead className="bg-muted/40">
                  <tr>
                    <th className="px-2 py-1 text-left">Product</th>
                    <th className="px-2 text-right">Share</th>
                    <th className="px-2 text-right">System</th>
                    <th className="px-2 text-right">Final</th>
                  </tr>
                </thead>
                <tbody>
                  {preview.products.map((p) => {
                    const sys = p.weeks.reduce((a, w) => a + w.system, 0);
                    const fin = p.weeks.reduce((a, w) => a + w.final, 0);
                    return (
                      <tr key={p.pid} className="border-t">
                        <td className="px-2 py-1">{p.title}</td>
                        <td className="px-2 text-right tabular-nums">{(p.share * 100).toFixed(1)}%</td>
                        <td className="px-2 text-right tabular-nums">{sys.toFixed(1)}</td>
                        <td className="px-2 text-right tabular-nums">{fin.toFixed(1)}</td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )}
        </div>
        <DialogFooter>
          <Button variant="outline" onClick={onClose}>
            Cancel
          </Button>
          <Button variant="outline" onClick={() => void onPreview()}>
            Preview
          </Button>
          <Button onClick={onSave} disabled={save.isPending}>
            {save.isPending ? "Saving..." : "Save override"}
          </Button>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  );
}
