import { PagePlaceholder } from "@client/features/pages/page-placeholder.tsx";
import { createFileRoute } from "@tanstack/react-router";

export const Route = createFileRoute("/_app/purchase-orders")({
  staticData: { page: "purchase_orders" },
  component: () => <PagePlaceholder page="purchase_orders" />,
});
