// A product's chart: up to 104 weeks of sales with last year's overlaid, then the 13 forecast
// weeks — system, final (overrides and saved promotions applied) and the promotion layer's units —
// with the 80 % prediction band from the backtest's errors. The history shown can be cut to 26 or
// 52 weeks (26 on a phone by default, where 104 weeks squeezed the forecast into a strip).

import { Button } from "@client/components/ui/button.tsx";
import { Card } from "@client/components/ui/card.tsx";
import { LoadError } from "@client/features/config/parts.tsx";
import { errorMessage, errorStatus } from "@client/lib/errors.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import { useIsMobile } from "@client/lib/use-mobile.ts";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import {
  Area,
  CartesianGrid,
  ComposedChart,
  Legend,
  Line,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";

const SPANS = [26, 52, 104] as const;

export function ForecastChart({ pid }: { pid: number }) {
  const trpc = useTRPC();
  const q = useQuery(trpc.forecasting.product.queryOptions({ pid }));
  const mobile = useIsMobile();
  const [span, setSpan] = useState<(typeof SPANS)[number] | null>(null);
  const weeks = span ?? (mobile ? 26 : 104);
  if (q.error)
    return errorStatus(q.error) === 404 ? (
      <p className="p-4 text-sm text-muted-foreground" role="alert" data-testid="forecast-not-found">
        {errorMessage(q.error, `Product ${pid} not found`)}
      </p>
    ) : (
      <LoadError message="Could not load the product's forecast." onRetry={() => void q.refetch()} />
    );
  const d = q.data;
  if (!d) return <Card className="h-80 animate-pulse" />;
  const data = [
    ...d.history.slice(-weeks).map((h) => ({ week: h.week_start, sales: h.units, lastYear: h.last_year })),
    ...d.forecast.map((f) => ({
      week: f.week_start,
      lastYear: f.last_year,
      system: f.system,
      final: f.final,
      override: f.override,
      promotion: f.promotion,
      band: [f.low, f.high] as [number, number],
    })),
  ];
  const chosen = d.backtest.find((b) => b.method === d.method);
  return (
    <Card className="space-y-2 p-4" data-testid="forecast-chart">
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <div className="font-medium">{d.title}</div>
        <div className="text-xs text-muted-foreground">
          Method: {d.method_label ?? "none (excluded from forecasting)"}
          {chosen?.wape != null
            ? ` · backtest WAPE ${(chosen.wape * 100).toFixed(1)}%${chosen.weeks < 8 ? ` (over the ${chosen.weeks} weeks where it ran)` : ""}`
            : chosen?.weeks === 0
              ? " · backtest WAPE blank (seasonal ran at none of the 8 weeks: each had fewer than 53 weeks before it)"
              : chosen
                ? ` · backtest WAPE blank (nothing sold in its ${chosen.weeks} weeks)`
                : " · no backtest (under 9 weeks of history)"}
          {chosen?.mase != null &&
            ` · MASE ${chosen.mase.toFixed(2)}${chosen.mase > 1 ? " (worse than naive)" : ""}`}
          {chosen?.naive_wape != null && ` · naive WAPE ${(chosen.naive_wape * 100).toFixed(1)}%`}
          {chosen?.seasonal_naive_wape != null &&
            ` · seasonal naive WAPE ${(chosen.seasonal_naive_wape * 100).toFixed(1)}%`}
          {` · ${d.overrides.length} override${d.overrides.length === 1 ? "" : "s"}`}
        </div>
      </div>
      {d.promotions.length > 0 && (
        <ul className="space-y-0.5 text-xs" data-testid="forecast-promotions">
          {d.promotions.map((p) => (
            <li key={p.id} data-testid="forecast-promotion">
              <span className="font-medium text-violet-700 dark:text-violet-300">Promotion "{p.name}"</span>
              {` ${p.starts_on} – ${p.ends_on}: ${
                p.discount_pct != null ? `${p.discount_pct}% off` : `at ${p.target_price}`
              }, forecast × ${p.uplift.toFixed(2)} on its days`}
              {p.stop_reordering ? " · no reordering while it runs" : ""}
            </li>
          ))}
        </ul>
      )}
      <fieldset className="flex items-center gap-1 text-xs">
        <legend className="sr-only">Weeks of history shown</legend>
        <span className="text-muted-foreground">History:</span>
        {SPANS.map((s) => (
          <Button
            key={s}
            type="button"
            size="sm"
            variant={weeks === s ? "secondary" : "ghost"}
            className="h-6 px-2 text-xs"
            aria-pressed={weeks === s}
            onClick={() => setSpan(s)}
          >
            {s === 104 ? "2 years" : s === 52 ? "1 year" : "26 weeks"}
          </Button>
        ))}
      </fieldset>
      <div className="h-72">
        <ResponsiveContainer width="100%" height="100%">
          <ComposedChart data={data}>
            <CartesianGrid stroke="#e5e7eb" />
            <XAxis dataKey="week" fontSize={11} minTickGap={40} />
            <YAxis fontSize={11} />
            <Tooltip />
            <Legend />
            <Area dataKey="band" name="80 % band" fill="#fed7aa" stroke="none" />
            <Line dataKey="sales" name="Sales" stroke="#2563eb" dot={false} />
            <Line dataKey="lastYear" name="Last year" stroke="#94a3b8" strokeDasharray="4 3" dot={false} />
            <Line dataKey="system" name="System forecast" stroke="#ea580c" dot={false} />
            {d.forecast.some((f) => f.promotion != null) && (
              <Line
                dataKey="promotion"
                name="Promotion (units added)"
                stroke="#7c3aed"
                strokeDasharray="3 2"
                dot={false}
              />
            )}
            <Line
              dataKey="final"
              name={
                d.forecast.some((f) => f.promotion != null)
                  ? "Final (with overrides and promotions)"
                  : "Final (with overrides)"
              }
              stroke="#16a34a"
              strokeWidth={2}
              dot={false}
            />
          </ComposedChart>
        </ResponsiveContainer>
      </div>
    </Card>
  );
}
