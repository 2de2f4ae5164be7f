import { OverviewPage, type OverviewSearch } from "@client/features/analytics/overview-page.tsx";
import { periodSearchFields } from "@client/features/analytics/period-picker.tsx";
import { BREAKDOWN_DIMS } from "@shared/analytics.ts";
import { createFileRoute } from "@tanstack/react-router";
import * as z from "zod/mini";

const OverviewSearchSchema = z.object({
  ...periodSearchFields,
  tab: z.catch(z.optional(z.enum(BREAKDOWN_DIMS)), undefined),
});

export const Route = createFileRoute("/_app/overview")({
  staticData: { page: "overview" },
  validateSearch: OverviewSearchSchema,
  component: function OverviewRoute() {
    const search = Route.useSearch();
    const navigate = Route.useNavigate();
    return (
      <OverviewPage
        search={search}
        onSearchChange={(next: OverviewSearch) => {
          const clean = Object.fromEntries(
            Object.entries(next).filter(([, v]) => v !== undefined && v !== ""),
          );
          void navigate({ search: clean, replace: true });
        }}
      />
    );
  },
});
