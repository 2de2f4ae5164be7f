import { ProductDetail } from "@client/features/products/product-detail.tsx";
import { createFileRoute } from "@tanstack/react-router";

/** A product's planning figures, charts and how each figure is worked out. */
export const Route = createFileRoute("/_app/products/$pid")({
  staticData: { page: "products" },
  // Hovering a product's link starts loading its page (the router preloads on intent).
  loader: ({ context, params }) => {
    const pid = Number(params.pid);
    if (Number.isInteger(pid) && pid >= 1 && pid <= 2_147_483_647)
      void context.queryClient.prefetchQuery(context.trpc.metrics.product.queryOptions({ pid }));
  },
  component: function ProductRoute() {
    const { pid } = Route.useParams();
    const search = Route.useSearch();
    return <ProductDetail pid={pid} listSearch={search} />;
  },
});
