// The freshness warning of the figures (docs/metrics.md §0 "Stale data"): shown on the Products
// page, the product page and Data Management when the newest sale in the data is more than
// stale_data_days before today. The text comes from the server (dataOps.asOf).
import { Alert, AlertDescription } from "@client/components/ui/alert.tsx";
import { useTRPC } from "@client/lib/trpc.ts";
import { useQuery } from "@tanstack/react-query";
import { CalendarClockIcon } from "lucide-react";

export function StaleDataWarning() {
  const trpc = useTRPC();
  const { data } = useQuery(trpc.dataOps.asOf.queryOptions(undefined, { staleTime: 60_000 }));
  if (!data?.warning) return null;
  return (
    <Alert variant="warning" data-testid="stale-data-warning">
      <CalendarClockIcon aria-hidden />
      <AlertDescription>{data.warning}</AlertDescription>
    </Alert>
  );
}
