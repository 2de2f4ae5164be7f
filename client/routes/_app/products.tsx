import { ProductsList } from "@client/features/products/products-list.tsx";
import { cleanSearch, ProductsSearchSchema } from "@client/features/products/search.ts";
import { createFileRoute, Outlet, useMatch } from "@tanstack/react-router";
import { useCallback } from "react";

/**
 * The Products page: every product's planning figures. Its URL state (page, search, filters, sort)
 * is shared with the product pages under it, so "Back" returns to the same view.
 */
export const Route = createFileRoute("/_app/products")({
  staticData: { page: "products" },
  validateSearch: ProductsSearchSchema,
  component: function ProductsRoute() {
    const search = Route.useSearch();
    const navigate = Route.useNavigate();
    const product = useMatch({ from: "/_app/products/$pid", shouldThrow: false });
    const onSearchChange = useCallback(
      (next: Parameters<typeof cleanSearch>[0], opts?: { replace?: boolean }) =>
        void navigate({ search: cleanSearch(next), replace: opts?.replace }),
      [navigate],
    );
    if (product) return <Outlet />;
    return <ProductsList search={search} onSearchChange={onSearchChange} />;
  },
});
