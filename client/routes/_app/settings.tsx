import { SettingsSearchSchema } from "@client/features/settings/search.ts";
import { SettingsPage } from "@client/features/settings/settings-page.tsx";
import { createFileRoute } from "@tanstack/react-router";

export const Route = createFileRoute("/_app/settings")({
  staticData: { page: "settings" },
  validateSearch: SettingsSearchSchema,
  component: function SettingsRoute() {
    const { tab } = Route.useSearch();
    const navigate = Route.useNavigate();
    return <SettingsPage tab={tab} onTabChange={(next) => void navigate({ search: { tab: next } })} />;
  },
});
