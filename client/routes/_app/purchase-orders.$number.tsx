import { PurchaseOrderDetail } from "@client/features/purchasing/po-detail.tsx";
import { createFileRoute } from "@tanstack/react-router";

export const Route = createFileRoute("/_app/purchase-orders/$number")({
  staticData: { page: "purchase_orders" },
  component: function PurchaseOrderRoute() {
    const { number } = Route.useParams();
    return <PurchaseOrderDetail number={number} />;
  },
});
