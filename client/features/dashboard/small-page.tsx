// /small: the compact dashboard for a phone in the warehouse or a screen on the shop wall. No
// sidebar, large type, one screen. It reads GET /api/small with a device link's token (taken from
// the URL fragment, kept in this browser, sent as a bearer token) or the signed-in session, every
// 60 s with a visible countdown; when a read fails it keeps the last figures under a "stale since"
// banner and retries with back-off. `?theme=light|dark|system`.
import { Button } from "@client/components/ui/button.tsx";
import { formatMoneyCompact } from "@client/features/aggregates/top-chart.tsx";
import { Logo, PRODUCT_NAME } from "@client/features/layout/logo.tsx";
import { DASH, formatMoneyShort, formatNumber } from "@client/features/products/format.ts";
import { getToken } from "@client/lib/auth-storage.ts";
import { cn } from "@client/lib/utils.ts";
import type { SmallSummary } from "@shared/dashboard.ts";
import { useCallback, useEffect, useRef, useState } from "react";
import { DevicesPanel } from "./devices-panel.tsx";
import { formatAsOf } from "./format.ts";

export const SMALL_REFRESH_S = 60;
/** Waits before the retries after a failed read: 5 s, 10 s, 20 s, 40 s, then every 60 s. */
const RETRY_S = [5, 10, 20, 40, 60];
const DEVICE_TOKEN_KEY = "small-device-token";

export type SmallTheme = "light" | "dark" | "system";

/** The device token: from the URL fragment (#token=…, then removed from the address bar) or kept from before. */
function takeDeviceToken(): string | null {
  const match = /(?:^#|&)token=([^&]+)/.exec(window.location.hash);
  if (match) {
    const token = decodeURIComponent(match[1]!);
    try {
      window.localStorage.setItem(DEVICE_TOKEN_KEY, token);
    } catch {
      // Storage off: the token lives for this page only.
    }
    window.history.replaceState(null, "", window.location.pathname + window.location.search);
    return token;
  }
  try {
    return window.localStorage.getItem(DEVICE_TOKEN_KEY);
  } catch {
    return null;
  }
}

function forgetDeviceToken() {
  try {
    window.localStorage.removeItem(DEVICE_TOKEN_KEY);
  } catch {
    // Nothing kept.
  }
}

function useTheme(theme: SmallTheme) {
  useEffect(() => {
    const root = document.documentElement;
    const media = window.matchMedia("(prefers-color-scheme: dark)");
    const apply = () =>
      root.classList.toggle("dark", theme === "dark" || (theme === "system" && media.matches));
    apply();
    media.addEventListener("change", apply);
    return () => {
      media.removeEventListener("change", apply);
      root.classList.remove("dark");
    };
  }, [theme]);
}

const timeFormat = new Intl.DateTimeFormat("en-GB", { hour: "2-digit", minute: "2-digit" });

type LoadState =
  | { kind: "loading" }
  | { kind: "denied"; device: boolean }
  | { kind: "ok"; figures: SmallSummary; staleSince: Date | null; failures: number };

export function SmallPage({ theme }: { theme: SmallTheme }) {
  useTheme(theme);
  const [deviceToken] = useState(takeDeviceToken);
  const [state, setState] = useState<LoadState>({ kind: "loading" });
  const [nextAt, setNextAt] = useState<number>(Date.now() + SMALL_REFRESH_S * 1000);
  const [now, setNow] = useState(Date.now());
  const failures = useRef(0);

  const load = useCallback(async () => {
    const token = deviceToken ?? getToken();
    let res: Response | null = null;
    try {
      res = await fetch("/api/small", {
        headers: token ? { authorization: `Bearer ${token}` } : {},
        credentials: "same-origin",
        cache: "no-store",
      });
    } catch {
      res = null;
    }
    if (res && (res.status === 401 || res.status === 403)) {
      if (deviceToken && res.status === 401) forgetDeviceToken();
      setState({ kind: "denied", device: Boolean(deviceToken) });
      return;
    }
    if (res?.ok) {
      const figures = (await res.json()) as SmallSummary;
      failures.current = 0;
      setState({ kind: "ok", figures, staleSince: null, failures: 0 });
      setNextAt(Date.now() + SMALL_REFRESH_S * 1000);
      return;
    }
    // A failed read: keep what is shown, say since when it is stale, try again sooner, then less often.
    failures.current += 1;
    const wait = RETRY_S[Math.min(failures.current - 1, RETRY_S.length - 1)]!;
    setState((s) =>
      s.kind === "ok"
        ? { ...s, staleSince: s.staleSince ?? new Date(), failures: failures.current }
        : { kind: "loading" },
    );
    setNextAt(Date.now() + wait * 1000);
  }, [deviceToken]);

  useEffect(() => {
    void load();
  }, [load]);
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, []);
  useEffect(() => {
    if (state.kind === "denied") return;
    const timer = window.setTimeout(() => void load(), Math.max(nextAt - Date.now(), 0));
    return () => window.clearTimeout(timer);
  }, [nextAt, load, state.kind]);

  const seconds = Math.max(Math.ceil((nextAt - now) / 1000), 0);
  return (
    <div
      className="flex h-svh flex-col overflow-hidden bg-background text-foreground"
      data-testid="small-page"
    >
      <header className="flex shrink-0 items-center justify-between gap-2 border-b px-3 py-2 sm:px-6">
        <div className="flex min-w-0 items-center gap-2">
          <Logo className="size-7" />
          <span className="truncate text-sm font-semibold sm:text-base">{PRODUCT_NAME}</span>
        </div>
        <div className="flex items-center gap-2 text-xs text-muted-foreground sm:text-sm">
          {state.kind === "ok" && (
            <span data-testid="small-countdown" aria-live="off">
              Refresh in {seconds} s
            </span>
          )}
          {!deviceToken && <DevicesPanel />}
        </div>
      </header>
      {state.kind === "ok" && state.staleSince && (
        <div
          role="status"
          data-testid="small-stale"
          className="shrink-0 bg-amber-100 px-3 py-1.5 text-center text-sm font-medium text-amber-900 dark:bg-amber-950 dark:text-amber-200"
        >
          Stale since {timeFormat.format(state.staleSince)}: the server could not be reached; retrying in{" "}
          {seconds} s.
        </div>
      )}
      <main className="min-h-0 flex-1 p-3 sm:p-6">
        {state.kind === "loading" ? (
          <p className="pt-10 text-center text-lg text-muted-foreground">Loading…</p>
        ) : state.kind === "denied" ? (
          <Denied device={state.device} />
        ) : !state.figures.has_data ? (
          <p className="pt-10 text-center text-lg" data-testid="small-empty">
            No data yet: run a full update or reset
          </p>
        ) : (
          <Figures figures={state.figures} />
        )}
      </main>
    </div>
  );
}

function Denied({ device }: { device: boolean }) {
  return (
    <div
      className="mx-auto flex max-w-md flex-col items-center gap-4 pt-10 text-center"
      data-testid="small-denied"
    >
      <p className="text-lg font-medium">
        {device
          ? "This device link is no longer valid."
          : "Sign in with access to the Dashboard to see these figures."}
      </p>
      <p className="text-sm text-muted-foreground">
        {device
          ? "Ask someone who manages users for a new link."
          : "Or open a device link made for this screen."}
      </p>
      <Button asChild variant="outline">
        <a href="/login?redirect=%2Fsmall">Sign in</a>
      </Button>
    </div>
  );
}

/** A change against last year: "+12%" green, "−5%" red, "—" without a base. */
function Versus({ value, base }: { value: number; base: number }) {
  if (base === 0)
    return (
      <span className="text-muted-foreground">last year {value === 0 ? formatMoneyShort(0) : "none"}</span>
    );
  const change = (value - base) / Math.abs(base);
  return (
    <span
      className={cn(
        change >= 0 ? "text-emerald-600 dark:text-emerald-400" : "text-red-600 dark:text-red-400",
      )}
    >
      {change >= 0 ? "▲" : "▼"} {Math.abs(change * 100).toFixed(0)}% vs last year
      <span className="hidden sm:inline"> ({formatMoneyShort(base)})</span>
    </span>
  );
}

function Stat({
  label,
  value,
  sub,
  testId,
  tone,
}: {
  label: string;
  value: string;
  sub?: React.ReactNode;
  testId: string;
  tone?: "danger";
}) {
  return (
    <div
      className="flex min-w-0 flex-col justify-center rounded-xl border bg-card px-3 py-2 sm:px-5 sm:py-4"
      data-testid={testId}
    >
      <div className="truncate text-xs text-muted-foreground sm:text-base">{label}</div>
      <div
        className={cn(
          "truncate text-xl font-bold tabular-nums min-[400px]:text-2xl sm:text-5xl",
          tone === "danger" && "text-red-600 dark:text-red-400",
        )}
        data-testid="small-value"
      >
        {value}
      </div>
      {sub && <div className="truncate text-xs sm:text-base">{sub}</div>}
    </div>
  );
}

/** The day `days` before `day` (YYYY-MM-DD). */
function daysBefore(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) - days * 86_400_000).toISOString().slice(0, 10);
}

function Figures({ figures }: { figures: SmallSummary }) {
  const age = figures.data;
  // The newest sale in the data. Before the import brings any sale of "today" (a nightly export
  // ends yesterday), today's $0 is no sales imported yet, not a −100 % day: say so.
  const newestSale = age.age_days === null ? null : daysBefore(figures.read_at.slice(0, 10), age.age_days);
  const todayPending = figures.today.day !== null && newestSale !== null && newestSale < figures.today.day;
  return (
    <div className="grid h-full grid-rows-[auto_auto_1fr_auto] gap-2 sm:gap-4">
      <div className="grid grid-cols-2 gap-2 sm:gap-4">
        <Stat
          testId="small-today"
          label={`Today (${figures.today.day})`}
          value={todayPending ? DASH : formatMoneyShort(figures.today.revenue)}
          sub={
            todayPending ? (
              <span
                className="text-muted-foreground"
                title={`The data goes to ${newestSale}`}
                data-testid="small-today-pending"
              >
                no sales imported yet<span className="hidden sm:inline"> (data to {newestSale})</span>
              </span>
            ) : (
              <Versus value={figures.today.revenue} base={figures.today.last_year_revenue} />
            )
          }
        />
        <Stat
          testId="small-week"
          label="Last 7 days"
          value={formatMoneyShort(figures.week.revenue)}
          sub={<Versus value={figures.week.revenue} base={figures.week.last_year_revenue} />}
        />
      </div>
      <div className="grid grid-cols-2 gap-2 sm:grid-cols-4 sm:gap-4">
        <Stat testId="small-stock" label="Stock at cost" value={formatMoneyCompact(figures.stock_value)} />
        <Stat
          testId="small-order"
          label="To order today"
          value={formatNumber(figures.to_order.count)}
          sub={<span className="text-muted-foreground">{formatMoneyShort(figures.to_order.value)}</span>}
          tone={figures.to_order.count > 0 ? "danger" : undefined}
        />
        <Stat
          testId="small-a-out"
          label="A items out"
          value={formatNumber(figures.a_out_of_stock)}
          tone={figures.a_out_of_stock > 0 ? "danger" : undefined}
        />
        <Stat
          testId="small-pos-due"
          label="POs due or overdue"
          value={formatNumber(figures.pos_due_or_overdue)}
          tone={figures.pos_due_or_overdue > 0 ? "danger" : undefined}
        />
      </div>
      <section
        className="min-h-0 overflow-hidden rounded-xl border bg-card px-3 py-2 sm:px-5 sm:py-4"
        aria-label="Top sellers this week"
      >
        <h2 className="text-xs text-muted-foreground sm:text-base">Top sellers, last 7 days</h2>
        {figures.top_sellers.length === 0 ? (
          <p className="pt-2 text-sm text-muted-foreground">No sales in the last 7 days.</p>
        ) : (
          <ol className="mt-1 space-y-0.5 sm:mt-2 sm:space-y-2" data-testid="small-top">
            {figures.top_sellers.map((p, i) => (
              <li key={p.pid} className="flex items-baseline gap-2 text-sm sm:text-2xl">
                <span className="w-4 shrink-0 text-muted-foreground tabular-nums">{i + 1}</span>
                <span className="min-w-0 flex-1 truncate">{p.title}</span>
                <span className="shrink-0 font-semibold tabular-nums">{formatNumber(p.units)}</span>
              </li>
            ))}
          </ol>
        )}
      </section>
      <footer className="text-center text-xs text-muted-foreground sm:text-sm" data-testid="small-age">
        {age.as_of ? `Figures as of ${formatAsOf(age.as_of)}` : "No calculation yet"}
        {age.warning ? ` · ${age.warning}` : ""}
        {age.last_run_failed ? " · The last data run failed" : ""}
      </footer>
    </div>
  );
}
