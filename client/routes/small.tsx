import { SmallPage } from "@client/features/dashboard/small-page.tsx";
import { createFileRoute } from "@tanstack/react-router";
import * as z from "zod/mini";

/** A compact dashboard outside the authenticated layout (spec section 2). `?theme=light|dark|system`. */
export const Route = createFileRoute("/small")({
  validateSearch: z.object({
    theme: z.catch(z.optional(z.enum(["light", "dark", "system"])), undefined),
  }),
  component: function SmallRoute() {
    const { theme } = Route.useSearch();
    return <SmallPage theme={theme ?? "system"} />;
  },
});
