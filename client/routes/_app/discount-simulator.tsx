import { PagePlaceholder } from "@client/features/pages/page-placeholder.tsx";
import { createFileRoute } from "@tanstack/react-router";

export const Route = createFileRoute("/_app/discount-simulator")({
  staticData: { page: "discount_simulator" },
  component: () => <PagePlaceholder page="discount_simulator" />,
});
