import { CompactDashboard } from "@client/features/pages/compact-dashboard.tsx";
import { createFileRoute } from "@tanstack/react-router";

/** A compact dashboard outside the authenticated layout (spec section 2). */
export const Route = createFileRoute("/small")({
  component: CompactDashboard,
});
