// A table header that sorts its column when clicked, with an arrow showing the direction.
import { cn } from "@client/lib/utils.ts";
import { ArrowDownIcon, ArrowUpDownIcon, ArrowUpIcon } from "lucide-react";
import type { ReactNode } from "react";
import { TableHead } from "./table.tsx";

export type SortDirection = "asc" | "desc";
export interface SortState<K extends string> {
  key: K;
  direction: SortDirection;
}

/** Two-step toggle: a new column sorts ascending, the same column flips. */
export function toggleSort<K extends string>(current: SortState<K> | null, key: K): SortState<K> {
  return current?.key === key && current.direction === "asc"
    ? { key, direction: "desc" }
    : { key, direction: "asc" };
}

/** Three-step cycle (spec section 2, product search): ascending, descending, then none. */
export function cycleSort<K extends string>(current: SortState<K> | null, key: K): SortState<K> | null {
  if (current?.key !== key) return { key, direction: "asc" };
  return current.direction === "asc" ? { key, direction: "desc" } : null;
}

/** Compares two cell values: empty last, numbers numerically, text case-insensitively. */
export function compareValues(a: unknown, b: unknown, direction: SortDirection): number {
  const empty = (v: unknown) => v === null || v === undefined || v === "";
  if (empty(a) || empty(b)) return empty(a) === empty(b) ? 0 : empty(a) ? 1 : -1;
  let result: number;
  if (typeof a === "number" && typeof b === "number") result = a - b;
  else if (a instanceof Date && b instanceof Date) result = a.getTime() - b.getTime();
  else result = String(a).localeCompare(String(b), undefined, { sensitivity: "base", numeric: true });
  return direction === "asc" ? result : -result;
}

export function SortableHead<K extends string>({
  column,
  sort,
  onSort,
  children,
  className,
}: {
  column: K;
  sort: SortState<K> | null;
  onSort: (column: K) => void;
  children: ReactNode;
  className?: string;
}) {
  const active = sort?.key === column;
  const Icon = !active ? ArrowUpDownIcon : sort.direction === "asc" ? ArrowUpIcon : ArrowDownIcon;
  return (
    <TableHead
      className={className}
      aria-sort={active ? (sort.direction === "asc" ? "ascending" : "descending") : undefined}
    >
      <button
        type="button"
        onClick={() => onSort(column)}
        className={cn(
          "-ml-1 inline-flex items-center gap-1 rounded px-1 py-0.5 hover:bg-accent hover:text-accent-foreground",
          active && "text-foreground",
        )}
      >
        {children}
        <Icon className={cn("size-3.5", !active && "opacity-40")} />
      </button>
    </TableHead>
  );
}
