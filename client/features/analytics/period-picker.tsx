// The period picker of the Overview and Analytics pages: the period (last 7/30/90/365 days, this
// month, last month, this year, a custom range) and the comparison (previous period or last year),
// kept in the URL so a link reproduces the view.
import { Button } from "@client/components/ui/button.tsx";
import { Input } from "@client/components/ui/input.tsx";
import { cn } from "@client/lib/utils.ts";
import {
  COMPARE_KEYS,
  COMPARE_LABELS,
  type CompareKey,
  PERIOD_KEYS,
  PERIOD_LABELS,
  type PeriodKey,
} from "@shared/analytics.ts";
import { useEffect, useState } from "react";
import * as z from "zod/mini";

const day = z.string().check(z.regex(/^\d{4}-\d{2}-\d{2}$/));
/** URL parameters of a period; a bad value is dropped (the default applies). */
export const periodSearchFields = {
  period: z.catch(z.optional(z.enum(PERIOD_KEYS)), undefined),
  compare: z.catch(z.optional(z.enum(COMPARE_KEYS)), undefined),
  from: z.catch(z.optional(day), undefined),
  to: z.catch(z.optional(day), undefined),
};
export interface PeriodSearch {
  period?: PeriodKey;
  compare?: CompareKey;
  from?: string;
  to?: string;
}

/** The procedure input of a URL state (the custom range only with period=custom). */
export function periodInputOf(s: PeriodSearch, defaultPeriod: PeriodKey = "30d") {
  const period = s.period ?? defaultPeriod;
  return {
    period,
    compare: s.compare ?? "previous",
    ...(period === "custom" ? { from: s.from, to: s.to } : {}),
  };
}

/** The day `n` days before a `YYYY-MM-DD` day. */
function daysBefore(day: string, n: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() - n);
  return d.toISOString().slice(0, 10);
}

/** URL query text of a period, for CSV links. */
export function periodQuery(s: PeriodSearch, defaultPeriod: PeriodKey = "30d"): string {
  const input = periodInputOf(s, defaultPeriod);
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(input)) if (v) params.set(k, String(v));
  return params.toString();
}

export function PeriodPicker({
  value,
  onChange,
  asOfDay,
  defaultPeriod = "30d",
  showCompare = true,
}: {
  value: PeriodSearch;
  onChange: (next: PeriodSearch) => void;
  asOfDay: string | null;
  defaultPeriod?: PeriodKey;
  showCompare?: boolean;
}) {
  const period = value.period ?? defaultPeriod;
  const compare = value.compare ?? "previous";
  const [from, setFrom] = useState(value.from ?? "");
  const [to, setTo] = useState(value.to ?? asOfDay ?? "");
  useEffect(() => {
    setFrom(value.from ?? "");
    setTo(value.to ?? asOfDay ?? "");
  }, [value.from, value.to, asOfDay]);
  return (
    <div className="flex flex-col gap-2" data-testid="period-picker">
      <fieldset className="flex flex-wrap gap-1" aria-label="Period">
        {PERIOD_KEYS.map((k) => (
          <button
            key={k}
            type="button"
            aria-pressed={period === k}
            data-period={k}
            onClick={() => {
              if (k === "custom") {
                // Open the range on the last 30 days, so the page keeps figures (a range without
                // its first day is refused by the server) until the user picks other days.
                const end = value.to ?? (to || undefined);
                onChange({
                  ...value,
                  period: k,
                  from: value.from ?? (from || (end ? daysBefore(end, 29) : undefined)),
                  to: end,
                });
              } else onChange({ ...value, period: k, from: undefined, to: undefined });
            }}
            className={cn(
              "rounded-md border px-2.5 py-1 text-sm",
              period === k
                ? "border-primary bg-primary text-primary-foreground"
                : "text-muted-foreground hover:bg-muted",
            )}
          >
            {PERIOD_LABELS[k]}
          </button>
        ))}
      </fieldset>
      {period === "custom" && (
        <form
          className="flex flex-wrap items-end gap-2"
          onSubmit={(e) => {
            e.preventDefault();
            onChange({ ...value, period: "custom", from: from || undefined, to: to || undefined });
          }}
        >
          <label className="flex flex-col text-xs text-muted-foreground">
            From
            <Input
              type="date"
              value={from}
              max={asOfDay ?? undefined}
              onChange={(e) => setFrom(e.target.value)}
              className="h-8 w-40"
              data-testid="period-from"
            />
          </label>
          <label className="flex flex-col text-xs text-muted-foreground">
            To
            <Input
              type="date"
              value={to}
              max={asOfDay ?? undefined}
              onChange={(e) => setTo(e.target.value)}
              className="h-8 w-40"
              data-testid="period-to"
            />
          </label>
          <Button type="submit" size="sm" variant="outline" data-testid="period-apply">
            Apply
          </Button>
        </form>
      )}
      {showCompare && (
        <fieldset className="flex flex-wrap items-center gap-1 text-sm" aria-label="Compare with">
          <span className="mr-1 text-xs text-muted-foreground">Compare with</span>
          {COMPARE_KEYS.map((k) => (
            <button
              key={k}
              type="button"
              aria-pressed={compare === k}
              data-compare={k}
              onClick={() => onChange({ ...value, compare: k })}
              className={cn(
                "rounded-md border px-2.5 py-1 text-sm",
                compare === k
                  ? "border-primary bg-primary text-primary-foreground"
                  : "text-muted-foreground hover:bg-muted",
              )}
            >
              {COMPARE_LABELS[k]}
            </button>
          ))}
        </fieldset>
      )}
    </div>
  );
}
