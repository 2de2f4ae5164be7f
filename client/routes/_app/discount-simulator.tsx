import { DiscountSimulatorPage } from "@client/features/discounts/discount-simulator-page.tsx";
import { createFileRoute } from "@tanstack/react-router";
import { z } from "zod";

/** A scope can come in the URL, e.g. a selection from a Products-page filter: ?pids=1,2,3. */
const SearchSchema = z.object({
  pids: z
    .string()
    .regex(/^\d+(,\d+)*$/)
    .optional()
    .catch(undefined),
  category_id: z.coerce.number().int().positive().optional().catch(undefined),
  brand_id: z.coerce.number().int().positive().optional().catch(undefined),
  vendor_id: z.coerce.number().int().positive().optional().catch(undefined),
});

export const Route = createFileRoute("/_app/discount-simulator")({
  staticData: { page: "discount_simulator" },
  validateSearch: SearchSchema,
  component: function DiscountSimulatorRoute() {
    return <DiscountSimulatorPage search={Route.useSearch()} />;
  },
});
