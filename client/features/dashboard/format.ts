// Dates of the dashboards: the figures' as-of moment and run times.

const asOfFormat = new Intl.DateTimeFormat("en-CA", {
  year: "numeric",
  month: "2-digit",
  day: "2-digit",
  hour: "2-digit",
  minute: "2-digit",
  hour12: false,
  timeZone: "UTC",
});

/** "2026-11-25 06:00" (UTC, the day the figures are for) */
export function formatAsOf(iso: string): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  const parts = Object.fromEntries(asOfFormat.formatToParts(ms).map((p) => [p.type, p.value]));
  const hour = parts.hour === "24" ? "00" : parts.hour;
  return `${parts.year}-${parts.month}-${parts.day} ${hour}:${parts.minute}`;
}

const momentFormat = new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeStyle: "short" });

/** "Nov 25, 2026, 6:00 AM" in the viewer's time zone */
export function formatMoment(iso: string): string {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : momentFormat.format(ms);
}
