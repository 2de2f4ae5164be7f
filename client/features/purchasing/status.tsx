import { Badge } from "@client/components/ui/badge.tsx";
import { cn } from "@client/lib/utils.ts";
import { PO_STATUS_LABELS, type PoStatus } from "@shared/purchasing.ts";

const STYLES: Record<PoStatus, string> = {
  draft: "bg-slate-100 text-slate-800 dark:bg-slate-800 dark:text-slate-100",
  ordered: "bg-blue-100 text-blue-800 dark:bg-blue-900 dark:text-blue-100",
  partial: "bg-amber-100 text-amber-900 dark:bg-amber-900 dark:text-amber-100",
  received: "bg-green-100 text-green-800 dark:bg-green-900 dark:text-green-100",
  closed: "bg-zinc-200 text-zinc-800 dark:bg-zinc-700 dark:text-zinc-100",
  cancelled: "bg-red-100 text-red-800 dark:bg-red-900 dark:text-red-100",
};

export function PoStatusBadge({ status }: { status: PoStatus }) {
  return (
    <Badge variant="outline" className={cn("border-transparent", STYLES[status])} data-testid="po-status">
      {PO_STATUS_LABELS[status]}
    </Badge>
  );
}
