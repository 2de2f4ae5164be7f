import { AnalyticsPage } from "@client/features/analytics/analytics-page.tsx";
import { type PeriodSearch, periodSearchFields } from "@client/features/analytics/period-picker.tsx";
import { createFileRoute } from "@tanstack/react-router";
import * as z from "zod/mini";

export const Route = createFileRoute("/_app/analytics")({
  staticData: { page: "analytics" },
  validateSearch: z.object(periodSearchFields),
  component: function AnalyticsRoute() {
    const search = Route.useSearch();
    const navigate = Route.useNavigate();
    return (
      <AnalyticsPage
        search={search}
        onSearchChange={(next: PeriodSearch) => {
          const clean = Object.fromEntries(
            Object.entries(next).filter(([, v]) => v !== undefined && v !== ""),
          );
          void navigate({ search: clean, replace: true });
        }}
      />
    );
  },
});
