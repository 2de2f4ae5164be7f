import { PurchaseOrdersPage } from "@client/features/purchasing/purchase-orders-page.tsx";
import { cleanSearch, PurchaseOrdersSearchSchema } from "@client/features/purchasing/search.ts";
import { createFileRoute, Outlet, useMatch } from "@tanstack/react-router";
import { useCallback } from "react";

/** The Purchase Orders page (workspace and list); one order's page sits under it. */
export const Route = createFileRoute("/_app/purchase-orders")({
  staticData: { page: "purchase_orders" },
  validateSearch: PurchaseOrdersSearchSchema,
  component: function PurchaseOrdersRoute() {
    const search = Route.useSearch();
    const navigate = Route.useNavigate();
    const detail = useMatch({ from: "/_app/purchase-orders/$number", shouldThrow: false });
    const onSearchChange = useCallback(
      (next: Parameters<typeof cleanSearch>[0]) => void navigate({ search: cleanSearch(next) }),
      [navigate],
    );
    if (detail) return <Outlet />;
    return <PurchaseOrdersPage search={search} onSearchChange={onSearchChange} />;
  },
});
