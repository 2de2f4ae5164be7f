// How a brand's, vendor's or category's products split over the statuses (docs/metrics.md §7): one
// thin bar of segments in the status colours, the counts in its tooltip.
import { Tooltip, TooltipContent, TooltipTrigger } from "@client/components/ui/tooltip.tsx";
import { formatNumber, formatPercent } from "@client/features/products/format.ts";
import { STATUS_STYLES } from "@client/features/products/status.tsx";
import { cn } from "@client/lib/utils.ts";
import { PRODUCT_STATUSES, type ProductStatus, STATUS_LABELS } from "@shared/metrics.ts";

/**
 * A segment's fill: the status's dot colour. Excluded products have a hollow dot on the Products
 * page; as a segment they are hatched, so they still show.
 */
export const STATUS_SEGMENT: Record<ProductStatus, string> = {
  ...(Object.fromEntries(PRODUCT_STATUSES.map((s) => [s, STATUS_STYLES[s].dot])) as Record<
    ProductStatus,
    string
  >),
  excluded:
    "bg-[repeating-linear-gradient(135deg,#94a3b8_0_2px,#e2e8f0_2px_4px)] dark:bg-[repeating-linear-gradient(135deg,#64748b_0_2px,#1e293b_2px_4px)]",
};

/** "12 critical, 40 healthy, 3 new" (the statuses with products), for screen readers. */
export function statusSummary(counts: Record<ProductStatus, number>): string {
  const parts = PRODUCT_STATUSES.filter((s) => counts[s] > 0).map(
    (s) => `${formatNumber(counts[s])} ${STATUS_LABELS[s].toLowerCase()}`,
  );
  return parts.length ? parts.join(", ") : "no products";
}

export function StatusBar({
  counts,
  title,
  className,
}: {
  counts: Record<ProductStatus, number>;
  /** The tooltip's heading, e.g. the brand's name */
  title?: string;
  className?: string;
}) {
  const total = PRODUCT_STATUSES.reduce((sum, s) => sum + counts[s], 0);
  const shown = PRODUCT_STATUSES.filter((s) => counts[s] > 0);
  const summary = statusSummary(counts);
  return (
    <Tooltip>
      <TooltipTrigger asChild>
        <div
          role="img"
          aria-label={`Statuses: ${summary}`}
          data-testid="status-bar"
          data-counts={JSON.stringify(counts)}
          className={cn("flex h-2.5 w-full min-w-16 overflow-hidden rounded-full bg-muted ", className)}
        >
          {shown.map((s) => (
            <span
              key={s}
              data-status={s}
              className={cn("h-full border-r border-background last:border-r-0", STATUS_SEGMENT[s])}
              style={{ width: `${(counts[s] / total) * 100}%` }}
            />
          ))}
        </div>
      </TooltipTrigger>
      <TooltipContent
        side="top"
        className="border bg-popover px-3 py-2 text-popover-foreground shadow-md"
        data-testid="status-bar-tooltip"
      >
        {title && (
          <p className="mb-1 max-w-56 truncate font-medium">
            {title}
            <span className="font-normal text-muted-foreground">
              {" "}
              · {formatNumber(total)} {total === 1 ? "product" : "products"}
            </span>
          </p>
        )}
        {total === 0 ? (
          <p>No products</p>
        ) : (
          <table className="tabular-nums">
            <tbody>
              {PRODUCT_STATUSES.map((s) => (
                <tr key={s} className={cn(counts[s] === 0 && "text-muted-foreground")}>
                  <td className="pr-2">
                    <span aria-hidden className={cn("inline-block size-2 rounded-full", STATUS_SEGMENT[s])} />
                  </td>
                  <td className="pr-4">{STATUS_LABELS[s]}</td>
                  <td className="text-right font-medium">{formatNumber(counts[s])}</td>
                  <td className="pl-2 text-right text-muted-foreground">
                    {counts[s] > 0 ? formatPercent(counts[s] / total, 0) : ""}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {/* The Products page shows a purchase order's effect at once; these counts follow at the next run. */}
        <p className="mt-1 max-w-56 text-xs text-muted-foreground">
          As of the last calculation: purchase orders made since then show on the Products page already.
        </p>
      </TooltipContent>
    </Tooltip>
  );
}
