import { DiscountSimulatorPage } from "@client/features/discounts/discount-simulator-page.tsx";
import { createFileRoute } from "@tanstack/react-router";
import { z } from "zod";

/**
 * A scope can come in the URL: product IDs (?pids=1,2,3), a category, brand or vendor, or the
 * Products page's filter (?filter=status%3Doverstocked%26no_sales_days%3D90), whose products the
 * page looks up. A run writes its scenario into the URL too (from, to, scenarios: "25,40" or
 * "p8.99" for a target price, exclude), and a link holding scenarios runs them when opened.
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
  from: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/)
    .optional()
    .catch(undefined),
  to: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/)
    .optional()
    .catch(undefined),
  scenarios: z
    .string()
    .regex(/^p?\d+(\.\d+)?(,p?\d+(\.\d+)?){0,2}$/)
    .optional()
    .catch(undefined),
  exclude: z
    .string()
    .regex(/^\d+(,\d+)*$/)
    .optional()
    .catch(undefined),
});

export const Route = createFileRoute("/_app/discount-simulator")({
  staticData: { page: "discount_simulator" },
  validateSearch: SearchSchema,
  component: function DiscountSimulatorRoute() {
    return <DiscountSimulatorPage search={Route.useSearch()} />;
  },
});
