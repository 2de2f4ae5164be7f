import { ForecastingPage } from "@client/features/forecasting/forecasting-page.tsx";
import { cleanSearch, ForecastingSearchSchema } from "@client/features/forecasting/search.ts";
import { createFileRoute } from "@tanstack/react-router";

/** The Forecasting page: review, override and measure the forecast (docs/metrics.md "Forecasting page"). */
export const Route = createFileRoute("/_app/forecasting")({
  staticData: { page: "forecasting" },
  validateSearch: ForecastingSearchSchema,
  component: function ForecastingRoute() {
    const search = Route.useSearch();
    const navigate = Route.useNavigate();
    return (
      <ForecastingPage
        search={search}
        onSearchChange={(next, opts) => void navigate({ search: cleanSearch(next), replace: opts?.replace })}
      />
    );
  },
});
