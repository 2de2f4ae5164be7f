import { AggregatesPage } from "@client/features/aggregates/aggregates-page.tsx";
import {
  type AggregatesSearch,
  AggregatesSearchSchema,
  cleanSearch,
} from "@client/features/aggregates/search.ts";
import { createFileRoute } from "@tanstack/react-router";
import { useCallback } from "react";

/** The brand metrics (docs/metrics.md §11); the view (page, search, sort) lives in the URL. */
export const Route = createFileRoute("/_app/brands")({
  staticData: { page: "brands" },
  validateSearch: AggregatesSearchSchema,
  component: function BrandsRoute() {
    const search = Route.useSearch();
    const navigate = Route.useNavigate();
    const onSearchChange = useCallback(
      (next: AggregatesSearch, opts?: { replace?: boolean }) =>
        void navigate({ search: cleanSearch("brand", next), replace: opts?.replace }),
      [navigate],
    );
    return <AggregatesPage kind="brand" search={search} onSearchChange={onSearchChange} />;
  },
});
