// What differs between the Brands, Vendors and Categories pages (docs/metrics.md §11).
import type { AggregateKind, AggregateSort } from "@shared/metrics.ts";

export interface KindConfig {
  title: string;
  description: string;
  /** "brand" / "brands" */
  singular: string;
  plural: string;
  searchPlaceholder: string;
  chartTitle: string;
  chartDescription: string;
  /** The Products page's search param that narrows it to one of these (a category: with its subtree). */
  productsParam?: "brand" | "vendor" | "category";
  /** Categories: only the top level in the chart, so no product is counted twice. */
  chartLevel?: number;
}

export const KINDS: Record<AggregateKind, KindConfig> = {
  brand: {
    title: "Brands",
    description:
      "Stock, sales, margin and reorder figures of each brand's products, as of the last calculation.",
    singular: "brand",
    plural: "brands",
    searchPlaceholder: "Search brands...",
    chartTitle: "Top 10 brands by revenue",
    chartDescription: "Revenue and gross profit of the last 365 days",
    productsParam: "brand",
  },
  vendor: {
    title: "Vendors",
    description:
      "Stock, sales and reorder figures of each vendor's products, as of the last calculation, and how the vendor delivers: measured lead time, on-time rate and fill rate.",
    singular: "vendor",
    plural: "vendors",
    searchPlaceholder: "Search vendors...",
    chartTitle: "Top 10 vendors by revenue",
    chartDescription: "Revenue and gross profit of the last 365 days",
    productsParam: "vendor",
  },
  category: {
    title: "Categories",
    description:
      "Figures rolled up the category tree: each category counts the products linked to it or to any of its subcategories, each product once. As of the last calculation.",
    singular: "category",
    plural: "categories",
    searchPlaceholder: "Search categories...",
    chartTitle: "Top 10 top-level categories by revenue",
    chartDescription: "Revenue and gross profit of the last 365 days, rolled up the tree",
    productsParam: "category",
    chartLevel: 1,
  },
};

/** The sorts the phone layout offers in its select (the table heads offer them all). */
export const SORT_LABELS: Partial<Record<AggregateSort, string>> = {
  revenue_365d: "Revenue 365 days",
  revenue_30d: "Revenue 30 days",
  units_30d: "Sold in 30 days",
  gross_profit_365d: "Gross profit 365 days",
  margin_365d: "Margin",
  stock_value_cost: "Stock value",
  reorder_value: "Reorder value",
  overstock_value: "Overstock value",
  product_count: "Products",
  active_product_count: "Active products",
  name: "Name",
};

export const VENDOR_SORT_LABELS: Partial<Record<AggregateSort, string>> = {
  lead_time_mean: "Lead time",
  on_time_rate: "On-time rate",
  fill_rate: "Fill rate",
};
