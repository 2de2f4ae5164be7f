import { getPageItems } from "@client/lib/pagination.ts";
import { cn } from "@client/lib/utils.ts";
import { ChevronLeftIcon, ChevronRightIcon, MoreHorizontalIcon } from "lucide-react";
import { Button } from "./button.tsx";

export interface PaginationProps {
  /** 1-based. */
  page: number;
  pageCount: number;
  onPageChange: (page: number) => void;
  /** Pages shown either side of the current one (1 gives the window of 3 of spec section 2). */
  siblings?: number;
  className?: string;
}

/** First page, last page, a window around the current page, and ellipses for the gaps. */
export function Pagination({ page, pageCount, onPageChange, siblings = 1, className }: PaginationProps) {
  if (pageCount <= 1) return null;
  const items = getPageItems(page, pageCount, siblings);
  return (
    <nav aria-label="pagination" data-testid="pagination" className={cn("flex justify-center", className)}>
      <ul className="flex flex-row items-center gap-1">
        <li>
          <Button
            variant="ghost"
            size="sm"
            aria-label="Go to previous page"
            disabled={page <= 1}
            onClick={() => onPageChange(page - 1)}
          >
            <ChevronLeftIcon />
            <span className="hidden sm:inline">Previous</span>
          </Button>
        </li>
        {items.map((item) =>
          typeof item === "number" ? (
            <li key={item}>
              <Button
                variant={item === page ? "outline" : "ghost"}
                size="icon-sm"
                aria-current={item === page ? "page" : undefined}
                aria-label={`Page ${item}`}
                onClick={() => item !== page && onPageChange(item)}
              >
                {item}
              </Button>
            </li>
          ) : (
            <li
              key={item}
              aria-hidden
              className="flex size-8 items-center justify-center text-muted-foreground"
            >
              <MoreHorizontalIcon className="size-4" />
            </li>
          ),
        )}
        <li>
          <Button
            variant="ghost"
            size="sm"
            aria-label="Go to next page"
            disabled={page >= pageCount}
            onClick={() => onPageChange(page + 1)}
          >
            <span className="hidden sm:inline">Next</span>
            <ChevronRightIcon />
          </Button>
        </li>
      </ul>
    </nav>
  );
}
