// Formatters of spec sections 2 and 9, shared by the screens and anything server-side that
// renders the same figures.

const currencyFormatters = new Map<string, Intl.NumberFormat>();

/** USD with 2 decimals by default; null/undefined/NaN shows as $0.00. */
export function formatCurrency(value: number | string | null | undefined, currency = "USD"): string {
  let fmt = currencyFormatters.get(currency);
  if (!fmt) {
    fmt = new Intl.NumberFormat("en-US", {
      style: "currency",
      currency,
      minimumFractionDigits: 2,
      maximumFractionDigits: 2,
    });
    currencyFormatters.set(currency, fmt);
  }
  const n = typeof value === "string" ? Number(value) : value;
  return fmt.format(n == null || Number.isNaN(n) ? 0 : n);
}

const unitPriceFormat = new Intl.NumberFormat("en-US", {
  style: "currency",
  currency: "USD",
  minimumFractionDigits: 2,
  maximumFractionDigits: 4,
});

/** A unit cost or price: the currency format with 2 decimals, or up to 4 when it has them ($0.4523). */
export function formatUnitPrice(value: number): string {
  return unitPriceFormat.format(value);
}

/** '1h 5m 3s'; 'Less than a second' under one second. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms == null || !Number.isFinite(ms) || ms < 1000) return "Less than a second";
  const total = Math.floor(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const parts: string[] = [];
  if (h) parts.push(`${h}h`);
  if (m) parts.push(`${m}m`);
  if (s || parts.length === 0) parts.push(`${s}s`);
  return parts.join(" ");
}

/** For logs: "5.6 s" under a minute, else as the screens show durations ("1h 5m 3s"). */
export function formatElapsed(ms: number): string {
  return ms < 60_000 ? `${(Math.max(0, ms) / 1000).toFixed(1)} s` : formatDuration(ms);
}

/** 'Xm ago' under 60 minutes, 'Xh ago' under 1440 minutes, then 'Xd ago'. */
export function formatRelativeAge(date: Date | string | number, now: Date = new Date()): string {
  const then = date instanceof Date ? date : new Date(date);
  const minutes = Math.max(0, Math.floor((now.getTime() - then.getTime()) / 60000));
  if (minutes < 60) return `${minutes}m ago`;
  if (minutes < 1440) return `${Math.floor(minutes / 60)}h ago`;
  return `${Math.floor(minutes / 1440)}d ago`;
}

/** File sizes as bytes / 1024 with one decimal and KB (spec section 9, images). */
export function formatKilobytes(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KB`;
}
