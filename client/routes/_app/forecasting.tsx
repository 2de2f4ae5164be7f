import { PagePlaceholder } from "@client/features/pages/page-placeholder.tsx";
import { createFileRoute } from "@tanstack/react-router";

export const Route = createFileRoute("/_app/forecasting")({
  staticData: { page: "forecasting" },
  component: () => <PagePlaceholder page="forecasting" />,
});
