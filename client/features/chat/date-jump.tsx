import { Button } from "@client/components/ui/button.tsx";
import { Popover, PopoverContent, PopoverTrigger } from "@client/components/ui/popover.tsx";
import { useTRPC } from "@client/lib/trpc.ts";
import { useQuery } from "@tanstack/react-query";
import { CalendarIcon } from "lucide-react";
import { useEffect, useState } from "react";
import { DayPicker } from "react-day-picker";
import "react-day-picker/style.css";

const iso = (d: Date) =>
  `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;

/** The reader's IANA time zone: the calendar's days are theirs, as are the message pane's. */
const zone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;

/**
 * Jump to a date: a calendar whose days with messages are marked (and the only ones to pick). The
 * days are the reader's local days (the server is told the time zone), so a message at 23:30 in
 * Los Angeles marks that day, not the next UTC one; a picked day opens at its local midnight.
 */
export function DateJump({
  rid,
  last,
  onPick,
}: {
  rid: string;
  /** The room's last activity: the calendar opens on that month. */
  last: Date | string | null;
  onPick: (date: string) => void;
}) {
  const trpc = useTRPC();
  const [open, setOpen] = useState(false);
  const [month, setMonth] = useState(() => (last ? new Date(last) : new Date()));
  const from = new Date(month.getFullYear(), month.getMonth(), 1);
  const to = new Date(month.getFullYear(), month.getMonth() + 1, 0);
  // A zone the server does not know (an old or unusual browser setting) is answered 400 naming tz:
  // the calendar then shows UTC days, and says so, rather than an empty month.
  const [utc, setUtc] = useState(false);
  const tz = utc ? undefined : zone();
  const days = useQuery({
    ...trpc.chat.days.queryOptions({ rid, from: iso(from), to: iso(to), tz }),
    enabled: open,
    retry: false,
  });
  const tzRefused = !utc && days.error?.data?.httpStatus === 400 && /\btz\b/.test(days.error.message);
  useEffect(() => {
    if (tzRefused) setUtc(true);
  }, [tzRefused]);
  const withMessages = new Set(days.data ?? []);
  return (
    <Popover open={open} onOpenChange={setOpen}>
      <PopoverTrigger asChild>
        <Button variant="outline" size="sm" aria-label="Jump to date">
          <CalendarIcon aria-hidden /> <span className="hidden lg:inline">Jump to date</span>
        </Button>
      </PopoverTrigger>
      <PopoverContent align="end" className="w-auto p-2" data-testid="date-jump">
        <DayPicker
          mode="single"
          month={month}
          onMonthChange={setMonth}
          disabled={(d) => !withMessages.has(iso(d))}
          modifiers={{ hasMessages: (d) => withMessages.has(iso(d)) }}
          modifiersClassNames={{ hasMessages: "font-semibold text-primary underline underline-offset-4" }}
          onSelect={(d) => {
            if (!d) return;
            setOpen(false);
            onPick(iso(d));
          }}
        />
        <p className="max-w-64 px-2 pb-1 text-xs text-muted-foreground">
          {days.isPending || tzRefused
            ? "Loading..."
            : days.error
              ? `Could not load the days with messages: ${days.error.message}`
              : withMessages.size
                ? "Underlined days have messages."
                : "No messages this month."}
        </p>
        {utc && (
          <p className="max-w-64 px-2 pb-1 text-xs text-muted-foreground" data-testid="date-jump-utc">
            Days in UTC: the server does not know this browser's time zone ({zone()}).
          </p>
        )}
      </PopoverContent>
    </Popover>
  );
}
