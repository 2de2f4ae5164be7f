// Parts shared by the server-sorted, server-searched metric tables (the Products page and the
// Brands / Vendors / Categories pages): the debounced search box, the sortable column head, the
// phone layout's sort select and a few class strings. Generic over each page's sort key.
import { Button } from "@client/components/ui/button.tsx";
import { SearchBox } from "@client/components/ui/search-box.tsx";
import {
  Select,
  SelectContent,
  SelectItem,
  SelectTrigger,
  SelectValue,
} from "@client/components/ui/select.tsx";
import { Skeleton } from "@client/components/ui/skeleton.tsx";
import { TableHead } from "@client/components/ui/table.tsx";
import { useDebouncedValue } from "@client/lib/use-debounced-value.ts";
import { cn } from "@client/lib/utils.ts";
import type { SortDirection } from "@shared/metrics.ts";
import { ArrowDownIcon, ArrowUpIcon } from "lucide-react";
import { type ReactNode, useEffect, useRef, useState } from "react";

export const SEARCH_DEBOUNCE_MS = 300;

/** A table's sort: the column key and its direction. */
export interface TableSort<K extends string> {
  sort: K;
  dir: SortDirection;
}

export const muted = (text: string) => <span className="text-muted-foreground">{text}</span>;

/** Headers wrap onto two lines ("On / hand"), so the numeric columns stay as narrow as their numbers. */
export const WRAP_HEAD = "h-auto py-2 leading-tight whitespace-normal";

/** The first column stays in place while the table scrolls sideways. */
export const STICKY =
  "sticky left-0 z-10 bg-card group-hover:bg-muted shadow-[inset_-1px_0_0_var(--color-border)]";

/** The search box: typing updates the URL once it pauses; a URL change (back button) updates the box. */
export function SearchInput({
  value,
  busy,
  placeholder,
  className,
  onSearch,
}: {
  value: string;
  busy: boolean;
  placeholder: string;
  /** Passed to SearchBox (e.g. its width from the sm breakpoint on). */
  className?: string;
  onSearch: (q: string) => void;
}) {
  const [text, setText] = useState(value);
  const pushed = useRef(value);
  const onSearchRef = useRef(onSearch);
  onSearchRef.current = onSearch;
  useEffect(() => {
    if (value !== pushed.current) {
      pushed.current = value;
      setText(value);
    }
  }, [value]);
  const debounced = useDebouncedValue(text.trim(), SEARCH_DEBOUNCE_MS);
  useEffect(() => {
    if (debounced !== pushed.current) {
      pushed.current = debounced;
      onSearchRef.current(debounced);
    }
  }, [debounced]);
  return (
    <SearchBox value={text} onChange={setText} placeholder={placeholder} busy={busy} className={className} />
  );
}

/**
 * A sortable column head. Only the sorted column shows its arrow (the others highlight on hover),
 * so many columns fit at 1280 px.
 */
export function SortHead<K extends string>({
  column,
  sort,
  onSort,
  title,
  numeric,
  className,
  children,
}: {
  column: K;
  sort: TableSort<K>;
  onSort: (column: K) => void;
  title?: string;
  numeric?: boolean;
  className?: string;
  children: ReactNode;
}) {
  const active = sort.sort === column;
  const Icon = sort.dir === "asc" ? ArrowUpIcon : ArrowDownIcon;
  return (
    <TableHead
      aria-sort={active ? (sort.dir === "asc" ? "ascending" : "descending") : undefined}
      className={cn(WRAP_HEAD, numeric && "text-right", className)}
    >
      <button
        type="button"
        title={title}
        onClick={() => onSort(column)}
        className={cn(
          "-mx-1 inline-flex items-center gap-0.5 rounded px-1 py-0.5 hover:bg-background hover:text-foreground hover:shadow-xs focus-visible:ring-[3px] focus-visible:ring-ring/50 focus-visible:outline-none",
          numeric ? "flex-row-reverse text-right" : "text-left",
          active && "text-foreground",
        )}
      >
        <span>{children}</span>
        {active && <Icon aria-hidden className="size-3.5 shrink-0" />}
      </button>
    </TableHead>
  );
}

/** The phone layout's sort: a select of the offered sorts (in `labels` order) and a direction button. */
export function MobileSort<K extends string>({
  sort,
  labels,
  nextSort,
  onChange,
}: {
  sort: TableSort<K>;
  labels: Partial<Record<K, string>>;
  /** The sort after choosing `column` (the page's own default direction per column). */
  nextSort: (current: TableSort<K>, column: K) => TableSort<K>;
  onChange: (next: TableSort<K>) => void;
}) {
  const DirIcon = sort.dir === "asc" ? ArrowUpIcon : ArrowDownIcon;
  return (
    <div className="flex min-w-0 flex-1 items-center gap-1">
      <Select value={sort.sort} onValueChange={(v) => onChange(nextSort(sort, v as K))}>
        <SelectTrigger className="w-full min-w-0" aria-label="Sort by">
          <SelectValue />
        </SelectTrigger>
        <SelectContent>
          {(Object.entries(labels) as [K, string][]).map(([key, label]) => (
            <SelectItem key={key} value={key}>
              {label}
            </SelectItem>
          ))}
        </SelectContent>
      </Select>
      <Button
        variant="outline"
        size="icon"
        aria-label={sort.dir === "asc" ? "Ascending; sort descending" : "Descending; sort ascending"}
        onClick={() => onChange({ sort: sort.sort, dir: sort.dir === "asc" ? "desc" : "asc" })}
      >
        <DirIcon />
      </Button>
    </div>
  );
}

/** Phone layout while a page loads: six placeholder cards (`second` sizes each card's second line). */
export function CardsSkeleton({ second }: { second: string }) {
  return (
    <div className="divide-y">
      {Array.from({ length: 6 }, (_, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: static placeholders
        <div key={i} className="space-y-2 p-4" data-testid="table-skeleton-row">
          <Skeleton className="h-4 w-3/4" />
          <Skeleton className={second} />
          <Skeleton className="h-8 w-full" />
        </div>
      ))}
    </div>
  );
}
