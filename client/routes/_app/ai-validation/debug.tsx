import { AiDebugPage } from "@client/features/aiValidation/debug-page.tsx";
import { AiDebugSearchSchema } from "@client/features/aiValidation/search.ts";
import { createFileRoute } from "@tanstack/react-router";
import { useCallback } from "react";

/** The AI Validation Debug page. Filters, search, page and the open run live in the URL. */
export const Route = createFileRoute("/_app/ai-validation/debug")({
  staticData: { page: "ai_validation_debug" },
  validateSearch: AiDebugSearchSchema,
  component: function AiDebugRoute() {
    const search = Route.useSearch();
    const navigate = Route.useNavigate();
    const onSearchChange = useCallback((next: typeof search) => void navigate({ search: next }), [navigate]);
    return <AiDebugPage search={search} onSearchChange={onSearchChange} />;
  },
});
