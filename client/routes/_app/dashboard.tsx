import { DashboardPage } from "@client/features/dashboard/dashboard-page.tsx";
import { createFileRoute } from "@tanstack/react-router";

export const Route = createFileRoute("/_app/dashboard")({
  staticData: { page: "dashboard" },
  component: DashboardPage,
});
