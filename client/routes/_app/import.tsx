import { ImportPage, ImportSearchSchema } from "@client/features/productImport/import-page.tsx";
import { createFileRoute } from "@tanstack/react-router";

/** Create Products: the open import and its step live in the URL, so a reload finds them. */
export const Route = createFileRoute("/_app/import")({
  staticData: { page: "import" },
  validateSearch: ImportSearchSchema,
  component: function ImportRoute() {
    const search = Route.useSearch();
    const navigate = Route.useNavigate();
    return <ImportPage search={search} onSearchChange={(next) => void navigate({ search: next })} />;
  },
});
