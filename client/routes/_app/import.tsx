import { PagePlaceholder } from "@client/features/pages/page-placeholder.tsx";
import { createFileRoute } from "@tanstack/react-router";

export const Route = createFileRoute("/_app/import")({
  staticData: { page: "import" },
  component: () => <PagePlaceholder page="import" />,
});
