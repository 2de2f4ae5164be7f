import { DiscountSimulatorPage } from "@client/features/discounts/discount-simulator-page.tsx";
import { createFileRoute } from "@tanstack/react-router";
import { z } from "zod";

/**
 * A scope can come in the URL: product IDs (?pids=1,2,3), a category, brand or vendor, or the
 * Products page's filter (?filter=status%3Doverstocked%26no_sales_days%3D90), whose products the
 * page looks up.
 */
const SearchSchema = z.object({
  pids: z
    .string()
    .regex(/^\d+(,\d+)*$/)
    .optional()
    .catch(undefined),
  category_id: z.coerce.number().int().positive().optional().catch(undefined),
  brand_id: z.coerce.number().int().positive().optional().catch(undefined),
  vendor_id: z.coerce.number().int().positive().optional().catch(undefined),
  filter: z.string().max(2000).optional().catch(undefined),
});

export const Route = createFileRoute("/_app/discount-simulator")({
  staticData: { page: "discount_simulator" },
  validateSearch: SearchSchema,
  component: function DiscountSimulatorRoute() {
    return <DiscountSimulatorPage search={Route.useSearch()} />;
  },
});
