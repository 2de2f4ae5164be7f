import { Loader2Icon } from "lucide-react";
import { Skeleton } from "./skeleton.tsx";
import { TableCell, TableRow } from "./table.tsx";

/** Placeholder rows while a table loads (spec section 2: 5 by default). */
export function TableSkeletonRows({ rows = 5, columns }: { rows?: number; columns: number }) {
  return Array.from({ length: rows }, (_, row) => (
    // biome-ignore lint/suspicious/noArrayIndexKey: static placeholders, never reordered
    <TableRow key={row} data-testid="table-skeleton-row" className="hover:bg-transparent">
      {Array.from({ length: columns }, (_, column) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: static placeholders, never reordered
        <TableCell key={column}>
          <Skeleton className="h-4 w-full max-w-40" />
        </TableCell>
      ))}
    </TableRow>
  ));
}

/** A single full-width row for an empty table (spec section 2: 'No data available' by default). */
export function TableEmptyRow({
  colSpan,
  message = "No data available",
}: {
  colSpan: number;
  message?: string;
}) {
  return (
    <TableRow data-testid="table-empty-row" className="hover:bg-transparent">
      <TableCell colSpan={colSpan} className="h-24 text-center text-muted-foreground">
        {message}
      </TableCell>
    </TableRow>
  );
}

/** A single full-width row with a spinner and a text while a table loads ('Loading templates...'). */
export function TableLoadingRow({ colSpan, message }: { colSpan: number; message: string }) {
  return (
    <TableRow className="hover:bg-transparent">
      <TableCell colSpan={colSpan} className="h-24 text-center text-muted-foreground">
        <span className="inline-flex items-center gap-2">
          <Loader2Icon className="size-4 animate-spin" />
          {message}
        </span>
      </TableCell>
    </TableRow>
  );
}
