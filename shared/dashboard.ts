// The Dashboard (/dashboard, GET /api/dashboard) and the compact dashboard (/small, GET /api/small):
// the contract between server/modules/dashboard and the pages. Money in the shop's currency as
// plain numbers; days "YYYY-MM-DD" (UTC); moments ISO strings.

import { z } from "zod";
import type { ProductMetricsListInput } from "./metrics.ts";
import type { PoTile } from "./purchasing.ts";

/** The data's age: the last successful import and calculation, and the last run when it failed. */
export interface DataAge {
  /** The moment the figures are as of (ISO); null before any calculation. */
  as_of: string | null;
  /** "Today" of every figure: the as-of day of the last successful calculation. */
  as_of_day: string | null;
  last_import: string | null;
  last_calculation: string | null;
  /** Whole days from the newest sale in the data to today. */
  age_days: number | null;
  stale_data_days: number;
  /** The newest sale is more than stale_data_days old. */
  stale: boolean;
  /** The stale-data warning (the Products page's), else null. */
  warning: string | null;
  /** The last Full Update / Full Reset failed (after the last success): when and why. */
  last_run_failed: { at: string; type: string; message: string } | null;
}

/**
 * The Products page filter a tile counts: the very input of `metrics.products` (without paging and
 * sort), and the same as /products URL parameters in `search`.
 */
export type TileFilter = Omit<ProductMetricsListInput, "page" | "pageSize" | "sort" | "dir" | "search">;

export const DASHBOARD_TILE_KEYS = [
  "order_now",
  "stockout_before_arrival",
  "a_out_of_stock",
  "overstock",
  "new_without_sales",
] as const;
export type DashboardTileKey = (typeof DASHBOARD_TILE_KEYS)[number] | (string & {});

export interface DashboardTile {
  key: DashboardTileKey;
  label: string;
  /** How many products; equal to the total of the list the tile opens */
  count: number;
  value: number;
  /** What `value` is, e.g. "to order at cost" */
  value_label: string;
  /** One line: what the tile counts */
  how: string;
  /** Higher is worse (colours the tile when count > 0) */
  tone: "danger" | "warning" | "info";
  filter: TileFilter;
  /** The /products URL parameters of the same filter, e.g. { status: "critical,reorder" } */
  search: Record<string, string>;
  /** Set when the caller may open the list (holds access:products) */
  href: string | null;
}

export const KPI_KEYS = [
  "revenue",
  "takings",
  "units",
  "gross_margin",
  "gross_margin_pct",
  "avg_order_value",
  "stock_value",
  "a_in_stock_rate",
  "forecast_error",
] as const;
export type KpiKey = (typeof KPI_KEYS)[number];

export interface Kpi {
  key: KpiKey;
  label: string;
  unit: "money" | "count" | "percent";
  /** Whether a rise is good news (colours the change) */
  better: "up" | "down";
  current: number | null;
  previous: number | null;
  last_year: number | null;
  /** How it is computed (the tooltip) */
  how: string;
}

export interface DayRange {
  from: string;
  to: string;
}

export interface KpiPeriod {
  days: 7 | 30;
  current: DayRange;
  previous: DayRange;
  last_year: DayRange;
  figures: Kpi[];
}

export interface WeeklySalesPoint {
  /** The week's last day */
  week_end: string;
  units: number | null;
  revenue: number | null;
  /** The same week a year (52 weeks) before */
  last_year_units: number | null;
  last_year_revenue: number | null;
  /** Forecast units (the 13 weeks after the as-of day) */
  forecast_units: number | null;
}

export interface StockValuePoint {
  week_end: string;
  value_cost: number;
}

export interface StatusValue {
  status: string;
  products: number;
  value_cost: number;
}

export interface DashboardSummary {
  data: DataAge;
  /** False until a calculation has run ("No data yet") */
  has_data: boolean;
  /** Set when the caller may open Data Management */
  data_management_href: string | null;
  tiles: DashboardTile[];
  /** The purchase-order tiles; null when the caller may not see purchase orders */
  purchase_orders: PoTile[] | null;
  kpis: KpiPeriod[];
  charts: {
    weekly_sales: WeeklySalesPoint[];
    stock_value: StockValuePoint[];
    stock_by_status: StatusValue[];
  };
}

// ---------------------------------------------------------------------------------------------
// /small

export interface SmallSummary {
  data: DataAge;
  has_data: boolean;
  today: { day: string | null; revenue: number; units: number; last_year_revenue: number };
  week: DayRange & { revenue: number; units: number; last_year_revenue: number };
  stock_value: number;
  to_order: { count: number; value: number };
  a_out_of_stock: number;
  /** Open purchase orders expected within 7 days of the as-of day or overdue (the PO list with due=true) */
  pos_due_or_overdue: number;
  top_sellers: { pid: number; title: string; sku: string | null; units: number; revenue: number }[];
  /** When these figures were read (ISO) */
  read_at: string;
}

export const deviceCreateInput = z.object({
  name: z.string().trim().min(1, "name is required").max(80, "name: at most 80 characters"),
});
export type DeviceCreateInput = z.input<typeof deviceCreateInput>;

export interface SmallDevice {
  id: number;
  name: string;
  created_at: string;
  created_by: string | null;
  last_used_at: string | null;
}

export interface CreatedDevice extends SmallDevice {
  /** Shown once: only its hash is stored */
  token: string;
  /** /small#token=… */
  link: string;
}

export const deviceIdInput = z.object({ id: z.coerce.number().int().min(1).max(2_147_483_647) });
