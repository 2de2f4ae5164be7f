import { PagePlaceholder } from "@client/features/pages/page-placeholder.tsx";
import { createFileRoute } from "@tanstack/react-router";

export const Route = createFileRoute("/_app/ai-validation/debug")({
  staticData: { page: "ai_validation_debug" },
  component: () => <PagePlaceholder page="ai_validation_debug" />,
});
