// The worked fixture of docs/metrics.md §12 (tests/fixtures/source-planning): one Full Reset with the
// section's settings, then every figure worked out by hand there, as stored in product_metrics,
// product_stock_history, vendor_lead_times, product_forecasts, product_forecast_accuracy and the
// brand, vendor and category aggregates. The expected values are the section's, rounded to the
// decimals each column keeps; the section shows the arithmetic behind each of them.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedGlobalSettings } from "../../server/modules/config/config.service.ts";
import { explainProductMetrics } from "../../server/modules/metrics/metrics.service.ts";
import { createTestDatabase, type TestDatabase, testBackend } from "../helpers/db.ts";
import { FIXTURE_AS_OF, type PipelineHarness, pipeline } from "../helpers/pipeline.ts";

const DIR = path.resolve("tests/fixtures/source-planning");

/** Decimals a numeric column keeps; numbers of the other columns compare exactly. */
const SCALE: Record<string, number> = {
  stock_value_cost: 2,
  stock_value_retail: 2,
  revenue_7d: 2,
  revenue_30d: 2,
  revenue_90d: 2,
  revenue_365d: 2,
  lifetime_revenue: 2,
  avg_daily_sales: 4,
  daily_sales_std: 4,
  avg_stock_units_365: 2,
  cogs_365d: 2,
  gross_profit_365d: 2,
  margin_365d: 4,
  sell_through_30d: 4,
  turnover_365d: 4,
  gmroi_365d: 4,
  lead_time_measured: 2,
  lead_time_measured_std: 2,
  lead_time_days: 2,
  demand_rate: 4,
  horizon_days: 2,
  forecast_horizon_units: 2,
  service_level: 4,
  z_score: 4,
  lead_time_demand: 2,
  reorder_value: 2,
  overstock_value: 2,
  days_of_cover: 1,
  abc_basis_value: 2,
  abc_share_before: 6,
  lead_time_mean: 2,
  lead_time_std: 2,
  mean_days: 2,
  std_days: 2,
  on_time_rate: 4,
  fill_rate: 4,
};

type Value = string | number | boolean | null;
type Row = Record<string, unknown>;

interface Table {
  columns: readonly string[];
  rows: Record<number, readonly Value[]>;
}
const table = (columns: readonly string[], rows: Record<number, readonly Value[]>): Table => ({
  columns,
  rows,
});

function expectRow(
  label: string,
  actual: Row | undefined,
  columns: readonly string[],
  values: readonly Value[],
) {
  expect(actual, `${label}: no row`).toBeDefined();
  if (!actual) return;
  columns.forEach((column, i) => {
    const want = values[i];
    const got = actual[column];
    const message = `${label} ${column}`;
    if (typeof want === "number" && column in SCALE && got !== null) {
      expect.soft(Number(got), message).toBeCloseTo(want, SCALE[column]);
    } else {
      expect.soft(got, message).toEqual(want);
    }
  });
}

function expectTable(t: Table, actual: Map<number, Row>, label = "pid") {
  for (const [key, values] of Object.entries(t.rows)) {
    expectRow(`${label} ${key}`, actual.get(Number(key)), t.columns, values);
  }
}

// ---------------------------------------------------------------------------------------------
// Per product (§12.3 – §12.9)

const SALES = table(
  [
    "on_hand",
    "on_order",
    "stock_value_cost",
    "stock_value_retail",
    "units_7d",
    "units_30d",
    "units_90d",
    "units_365d",
    "revenue_7d",
    "revenue_30d",
    "revenue_90d",
    "revenue_365d",
    "total_sold",
    "lifetime_revenue",
  ],
  {
    1001: [100, 0, 100, 200, 14, 61, 180, 420, 28, 122, 360, 840, 420, 840],
    1002: [40, 0, 160, 320, 10, 50, 130, 730, 80, 400, 1040, 5840, 1320, 10560],
    1003: [14, 0, 21, 42, 7, 35, 84, 84, 21, 105, 252, 252, 84, 252],
    1004: [33, 0, 82.5, 165, 18, 27, 27, 27, 90, 135, 135, 135, 27, 135],
    1005: [30, 0, 60, 180, 0, 0, 0, 20, 0, 0, 0, 120, 20, 120],
    1006: [50, 0, 30, 75, 0, 90, 180, 180, 0, 135, 270, 270, 180, 270],
    1007: [25, 0, 20, 50, 7, 35, 63, 63, 14, 70, 126, 126, 63, 126],
    1008: [40, 0, 16, 48, 10, 50, 130, 200, 12, 60, 156, 240, 200, 240],
    1009: [20, 60, 40, 80, 15, 60, 180, 240, 60, 240, 720, 960, 240, 960],
    1010: [300, 0, 150, 300, 7, 34, 90, 182, 7, 34, 90, 182, 182, 182],
    1011: [10, 0, 16, 40, 9, 36, 108, 126, 35, 143, 431, 503, 126, 503],
    1012: [5, 0, 5, 15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    1013: [8, 0, 0, 40, 0, 0, 0, 4, 0, 0, 0, 20, 4, 20],
    // A correction of −4 on D0−5 (§0): 7 and 30 days would be −4 → 0; 90 and 365 days 10 − 4 = 6.
    1014: [20, 0, 20, 60, 0, 0, 6, 6, 0, 0, 18, 18, 6, 18],
    // Not merchandise (kind fee): its sales stay, its stock has no value.
    1015: [50, 0, 0, 0, 35, 150, 450, 450, 173.25, 742.5, 2227.5, 2227.5, 450, 2227.5],
    // The bulk order of 150 stays in the sales.
    1016: [60, 0, 6, 15, 21, 76, 276, 276, 5.25, 19, 69, 69, 276, 69],
  },
);

const HISTORY = table(
  [
    "history_start",
    "history_days",
    "is_new",
    "in_stock_days_90",
    "out_of_stock_days_90",
    "out_of_stock_days_365",
    "avg_daily_sales",
    "daily_sales_std",
    "avg_stock_units_365",
  ],
  {
    1001: ["2025-12-03", 210, false, 90, 0, 0, 2, 0, 203.57],
    1002: ["2024-07-03", 728, false, 90, 0, 0, 1.4444, 0, 147.62],
    1003: ["2026-04-02", 90, false, 80, 10, 10, 1.05, 0, 26.13],
    1004: ["2026-06-16", 15, true, 15, 0, 0, 1.8, 2.4054, 46.8],
    1005: ["2025-05-27", 400, false, 90, 0, 0, 0, 0, 34.88],
    1006: ["2026-04-02", 90, false, 90, 0, 0, 2, 8.3744, 151],
    1007: ["2026-05-02", 60, false, 60, 0, 0, 1.05, 0, 57.55],
    1008: ["2026-02-11", 140, false, 90, 0, 0, 1.4444, 0, 100.29],
    1009: ["2026-03-11", 112, false, 90, 0, 0, 2, 0, 122.95],
    1010: ["2025-12-31", 182, false, 90, 0, 0, 1, 0, 392.64],
    1011: ["2026-03-25", 98, false, 90, 0, 0, 1.2, 0, 68.5],
    1012: ["2025-12-13", 200, false, 90, 0, 0, 0, 0, 5],
    1013: ["2025-09-04", 300, false, 90, 0, 0, 0, 0, 10.39],
    1014: ["2026-05-02", 60, false, 60, 0, 0, 0.1, 1.3363, 19.57],
    1015: ["2026-04-02", 90, false, 90, 0, 0, 5, 0, 272.5],
    1016: ["2026-05-13", 49, false, 49, 0, 0, 5.6327, Math.SQRT2, 161.51], // σd = √14 ÷ √7 = √2
  },
);

const MARGINS = table(
  ["cogs_365d", "gross_profit_365d", "margin_365d", "sell_through_30d", "turnover_365d", "gmroi_365d"],
  {
    1001: [420, 420, 0.5, 0.3789, 2.0632, 2.0632],
    1002: [2920, 2920, 0.5, 0.5556, 4.9451, 4.9451],
    1003: [126, 126, 0.5, 0.7143, 3.2147, 3.2147],
    1004: [67.5, 67.5, 0.5, 0.45, 0.5769, 0.5769],
    1005: [40, 80, 0.6667, 0, 0.5734, 1.1468],
    1006: [108, 162, 0.6, 0.6429, 1.1921, 1.7881],
    1007: [50.4, 75.6, 0.6, 0.5833, 1.0947, 1.6421],
    1008: [80, 160, 0.6667, 0.5556, 1.9942, 3.9884],
    1009: [480, 480, 0.5, 0.75, 1.952, 1.952],
    1010: [91, 91, 0.5, 0.1018, 0.4635, 0.4635],
    1011: [201.6, 301.4, 0.5992, 0.7826, 1.8394, 2.75],
    1012: [0, 0, null, 0, 0, 0],
    1013: [null, null, null, 0, null, null],
    1014: [6, 12, 0.6667, 0, 0.3066, 0.6132],
    1015: [1440, 787.5, 0.3535, 0.75, 1.6514, 0.9031],
    1016: [27.6, 41.4, 0.6, 0.5588, 1.7089, 2.5633],
  },
);

const LEAD_TIMES = table(
  [
    "lead_time_configured",
    "lead_time_configured_source",
    "lead_time_measured",
    "lead_time_measured_std",
    "lead_time_measured_samples",
    "lead_time_measured_level",
    "lead_time_days",
    "lead_time_source",
  ],
  {
    1001: [12, "vendor_quoted", 14, 2, 3, "vendor", 14, "measured"],
    1002: [21, "vendor_quoted", 14, 4, 3, "product", 14, "measured"],
    1003: [12, "vendor_quoted", 14, 2, 3, "vendor", 14, "measured"],
    1004: [7, "vendor", null, null, 0, null, 7, "configured"],
    1005: [7, "vendor", null, null, 0, null, 7, "configured"],
    1006: [10, "product", null, null, 0, null, 10, "configured"],
    1007: [12, "vendor_quoted", 14, 2, 3, "vendor", 14, "measured"],
    1008: [21, "vendor_quoted", 16, 4.47, 5, "vendor", 16, "measured"],
    1009: [21, "vendor_quoted", 16, 4.47, 5, "vendor", 16, "measured"],
    1010: [12, "vendor_quoted", 14, 2, 3, "vendor", 14, "measured"],
    1011: [7, "vendor", null, null, 0, null, 7, "configured"],
    1012: [14, "global", null, null, 0, null, 14, "configured"],
    1013: [7, "vendor", null, null, 0, null, 7, "configured"],
    1014: [14, "global", null, null, 0, null, 14, "configured"],
    1015: [12, "vendor_quoted", 14, 2, 3, "vendor", 14, "measured"],
    1016: [14, "global", null, null, 0, null, 14, "configured"],
  },
);

const PLANNING = table(
  [
    "forecast_method",
    "demand_rate",
    "demand_source",
    "days_of_stock",
    "horizon_days",
    "forecast_horizon_units",
    "service_level",
    "z_score",
    "safety_stock",
    "safety_stock_method",
    "lead_time_demand",
    "reorder_point",
  ],
  {
    1001: ["standard", 2, "history", 28, 42, 84, 0.95, 1.6449, 7, "statistical", 28, 35],
    1002: ["seasonal", 1.4444, "history", 30, 44, 212.57, 0.95, 1.6449, 10, "statistical", 20.22, 31],
    1003: ["standard", 1.05, "history", 28, 42, 39.93, 0.95, 1.6449, 4, "statistical", 14.7, 19],
    1004: ["standard", 1.5, "category", 20, 27, 40.5, 0.95, 1.6449, 11, "days", 10.5, 22],
    1005: ["standard", 0, "history", 20, 27, 0, 0.95, 1.6449, 0, "statistical", 0, 0],
    1006: ["standard", 2, "history", 20, 30, 63.23, 0.95, 1.6449, 44, "statistical", 20, 64],
    1007: [null, 1.05, "history", 28, 42, 44.1, 0.95, 1.6449, 4, "statistical", 14.7, 19],
    1008: ["standard", 1.4444, "history", 30, 46, 65.71, 0.95, 1.6449, 20, "fixed", 23.11, 44],
    1009: ["standard", 2, "history", 30, 46, 98.57, 0.95, 1.6449, 15, "statistical", 32, 47],
    1010: ["standard", 1, "history", 28, 42, 42, 0.95, 1.6449, 4, "statistical", 14, 18],
    1011: ["standard", 1.2, "history", 20, 27, 34.71, 0.95, 1.6449, 0, "statistical", 8.4, 9],
    1012: ["standard", 0, "history", 30, 44, 0, 0.95, 1.6449, 0, "statistical", 0, 0],
    1013: ["standard", 0, "history", 20, 27, 0.01, 0.95, 1.6449, 0, "statistical", 0, 0],
    1014: ["standard", 0.1, "history", 30, 44, 0.87, 0.95, 1.6449, 9, "statistical", 1.4, 11],
    // Not merchandise: no forecast (F(H) = d × H), its SS and ROP order nothing.
    1015: [null, 5, "history", 28, 42, 210, 0.95, 1.6449, 17, "statistical", 70, 87],
    1016: ["standard", 5.6327, "history", 30, 44, 191.93, 0.95, 1.6449, 9, "statistical", 78.86, 88],
  },
);

const ORDERING = table(
  [
    "reorder_qty",
    "reorder_value",
    "overstock_qty",
    "overstock_value",
    "days_of_cover",
    "stockout_date",
    "status",
  ],
  {
    1001: [0, 0, 0, 0, 50, "2026-08-19", "healthy"],
    1002: [183, 732, 0, 0, 27.7, "2026-07-28", "healthy"],
    1003: [30, 45, 0, 0, 13.3, "2026-07-14", "reorder"],
    1004: [19, 47.5, 0, 0, 22, "2026-07-22", "new"],
    1005: [0, 0, 30, 60, null, null, "discontinued"],
    1006: [58, 34.8, 0, 0, 25, "2026-07-25", "reorder"],
    1007: [0, 0, 0, 0, 23.8, "2026-07-24", "excluded"],
    1008: [60, 24, 0, 0, 27.7, "2026-07-28", "reorder"],
    1009: [34, 68, 0, 0, 10, "2026-08-09", "healthy"],
    1010: [0, 0, 116, 58, 300, "2027-04-26", "overstocked"],
    1011: [25, 40, 0, 0, 8.3, "2026-07-09", "critical"],
    1012: [0, 0, 5, 5, null, null, "overstocked"],
    1013: [0, 0, 8, 0, null, null, "excluded"],
    1014: [0, 0, 0, 0, 200, "2027-01-16", "healthy"],
    1015: [0, 0, 0, 0, null, null, "excluded"],
    1016: [141, 14.1, 0, 0, 10.7, "2026-07-11", "critical"],
  },
);

const ABC = table(["abc_basis_value", "abc_share_before", "abc_class"], {
  1001: [122, 0.719754, "A"],
  1002: [400, 0, "A"],
  1003: [105, 0.803144, "B"],
  1004: [135, 0.535202, "A"],
  1005: [0, 1, "C"],
  1006: [135, 0.627478, "A"],
  1007: [70, 0.874915, "B"],
  1008: [60, 0.922761, "B"],
  1009: [240, 0.273411, "A"],
  1010: [34, 0.963773, "C"],
  1011: [143, 0.437457, "A"],
  1012: [0, 1, "C"],
  1013: [0, 1, "C"],
  1014: [0, 1, "C"],
  // Not merchandise: not ranked, not in the total (its 742.50 would rank first).
  1015: [null, null, null],
  1016: [19, 0.987013, "C"],
});

// §12.5: every run of 1003 (out of stock D0−48 … D0−39) and of the new 1004.
const RUNS: Record<number, [string, string, number, number][]> = {
  1003: [
    ["2026-04-02", "2026-04-06", 42, 0],
    ["2026-04-07", "2026-04-13", 35, 7],
    ["2026-04-14", "2026-04-20", 28, 7],
    ["2026-04-21", "2026-04-27", 21, 7],
    ["2026-04-28", "2026-05-04", 14, 7],
    ["2026-05-05", "2026-05-11", 7, 7],
    ["2026-05-12", "2026-05-22", 0, 7],
    ["2026-05-23", "2026-05-25", 56, 0],
    ["2026-05-26", "2026-06-01", 49, 7],
    ["2026-06-02", "2026-06-08", 42, 7],
    ["2026-06-09", "2026-06-15", 35, 7],
    ["2026-06-16", "2026-06-22", 28, 7],
    ["2026-06-23", "2026-06-29", 21, 7],
    ["2026-06-30", "2026-06-30", 14, 7],
  ],
  1004: [
    ["2026-06-16", "2026-06-16", 60, 0],
    ["2026-06-17", "2026-06-24", 51, 9],
    ["2026-06-25", "2026-06-28", 42, 9],
    ["2026-06-29", "2026-06-30", 33, 9],
  ],
  // The correction of −4 on D0−5 brings 4 back (16 → 20), like a receipt; the returned line of
  // D0−20 moves nothing (no run starts there).
  1014: [
    ["2026-05-02", "2026-05-20", 26, 0],
    ["2026-05-21", "2026-06-24", 16, 10],
    ["2026-06-25", "2026-06-30", 20, -4],
  ],
};

// §12.7: method, requested method, weeks 1 … 13, total.
const flat = (v: number) => Array.from({ length: 13 }, () => v);
const FORECASTS: Record<number, { method: string; requested: string; weekly: number[]; total: number }> = {
  1001: { method: "standard", requested: "standard", weekly: flat(14), total: 182 },
  1002: {
    method: "seasonal",
    requested: "seasonal",
    weekly: [12, 12, 12, 32, 52, 72, 72, 52, 32, 12, 12, 12, 12],
    total: 396,
  },
  1003: {
    method: "standard",
    requested: "standard",
    weekly: [
      6.6255, 6.6412, 6.6537, 6.6637, 6.6717, 6.6782, 6.6833, 6.6874, 6.6907, 6.6933, 6.6954, 6.6971, 6.6984,
    ],
    total: 86.7796,
  },
  1004: { method: "standard", requested: "standard", weekly: flat(14), total: 182 },
  1005: { method: "standard", requested: "standard", weekly: flat(0.000981), total: 0.012759 },
  1006: { method: "standard", requested: "standard", weekly: flat(14.7541), total: 191.8033 },
  1008: { method: "standard", requested: "standard", weekly: flat(10), total: 130 },
  1009: { method: "standard", requested: "standard", weekly: flat(15), total: 195 },
  1010: { method: "standard", requested: "standard", weekly: flat(7), total: 91 },
  1011: { method: "standard", requested: "standard", weekly: flat(9), total: 117 },
  1012: { method: "standard", requested: "standard", weekly: flat(0), total: 0 },
  1013: {
    method: "standard",
    requested: "standard",
    weekly: [0.00817, 0.000293, ...flat(0).slice(2)],
    total: 0.008463,
  },
  1014: {
    method: "standard",
    requested: "standard",
    weekly: [0.501762, 0.273191, 0.090334, ...flat(0).slice(3)],
    total: 0.865287,
  },
  // The bulk order stays in the forecast (only σd leaves it out).
  1016: { method: "standard", requested: "standard", weekly: flat(30.534345), total: 396.946486 },
};

// §12.7: [pid, method, weeks, actual, WAPE, MAPE, bias].
type Accuracy = [number, string, number, number, number | null, number | null, number | null];
/** Standard's row over the 8 weeks, and seasonal's: it ran at none of them (n ≤ 53), so it is empty. */
const standardOnly = (
  pid: number,
  actual: number,
  w: number | null,
  m: number | null,
  b: number | null,
): Accuracy[] => [
  [pid, "standard", 8, actual, w, m, b],
  [pid, "seasonal", 0, 0, null, null, null],
];
const ACCURACY: Accuracy[] = [
  ...standardOnly(1001, 112, 0, 0, 0),
  [1002, "seasonal", 8, 80, 0.016642, 0.016642, 0.016642],
  [1002, "standard", 8, 80, 0.000498, 0.000498, 0.000498],
  ...standardOnly(1003, 49, 0.2794, 0.1365, 0.0063),
  // n = 57: seasonal ran at the 4 latest weeks (origins of 53 … 56 weeks), which sold nothing
  [1005, "standard", 8, 0, null, null, null],
  [1005, "seasonal", 4, 0, null, null, null],
  ...standardOnly(1006, 135, 1.4303, 0.7661, -0.102),
  ...standardOnly(1008, 80, 0, 0, 0),
  ...standardOnly(1009, 120, 0, 0, 0),
  ...standardOnly(1010, 56, 0, 0, 0),
  ...standardOnly(1011, 72, 0, 0, 0),
  ...standardOnly(1012, 0, null, null, null),
  ...standardOnly(1013, 0, null, null, null),
];

// ---------------------------------------------------------------------------------------------
// Aggregates (§12.10)

const AGGREGATE_COLUMNS = [
  "product_count",
  "active_product_count",
  "stock_units",
  "stock_value_cost",
  "stock_value_retail",
  "units_7d",
  "units_30d",
  "units_90d",
  "units_365d",
  "revenue_7d",
  "revenue_30d",
  "revenue_90d",
  "revenue_365d",
  "lifetime_revenue",
  "gross_profit_365d",
  "margin_365d",
  "reorder_value",
  "overstock_value",
  "status_counts",
  "abc_counts",
] as const;

const statuses = (counts: Partial<Record<string, number>>) => ({
  critical: 0,
  reorder: 0,
  healthy: 0,
  overstocked: 0,
  new: 0,
  discontinued: 0,
  excluded: 0,
  ...counts,
});
const abc = (A: number, B: number, C: number) => ({ A, B, C });

const BRANDS = table(AGGREGATE_COLUMNS, {
  1: [
    ...[5, 5, 472, 373.5, 757, 53, 192, 444, 776, 160, 466, 963, 1535, 1535, 780.1, 0.5082, 92.5, 58],
    statuses({ healthy: 1, reorder: 1, new: 1, excluded: 1, overstocked: 1 }),
    abc(2, 2, 1),
  ] as Value[],
  2: [
    ...[4, 3, 160, 266, 623, 20, 190, 440, 1130, 92, 595, 1466, 6470, 11190, 3322, 0.5134, 790.8, 60],
    statuses({ healthy: 1, reorder: 2, discontinued: 1 }),
    abc(2, 1, 1),
  ] as Value[],
  3: [
    ...[3, 3, 38, 56, 160, 24, 96, 288, 370, 95, 383, 1151, 1483, 1483, 781.4, 0.5341, 108, 0],
    statuses({ healthy: 1, critical: 1, excluded: 1 }),
    abc(2, 0, 1),
  ] as Value[],
});

const VENDOR_COLUMNS = [
  ...AGGREGATE_COLUMNS,
  "lead_time_samples",
  "lead_time_mean",
  "lead_time_std",
  "on_time_rate",
  "fill_rate",
];
const VENDORS = table(VENDOR_COLUMNS, {
  10: [
    ...[4, 4, 439, 291, 592, 35, 165, 417, 749, 70, 331, 828, 1400, 1400, 712.6, 0.509, 45, 58],
    statuses({ healthy: 1, reorder: 1, excluded: 1, overstocked: 1 }),
    abc(1, 2, 1),
    ...[3, 14, 2, 0.5, 0.982],
  ] as Value[],
  20: [
    ...[3, 3, 100, 216, 448, 35, 160, 440, 1170, 152, 700, 1916, 7040, 11760, 3560, 0.5057, 824, 0],
    statuses({ healthy: 2, reorder: 1 }),
    abc(2, 1, 0),
    ...[5, 16, 4.47, 0.6, 0.9583],
  ] as Value[],
  30: [
    ...[5, 4, 131, 188.5, 500, 27, 153, 315, 357, 125, 413, 836, 1048, 1048, 610.9, 0.5943, 122.3, 60],
    statuses({ critical: 1, reorder: 1, new: 1, discontinued: 1, excluded: 1 }),
    abc(3, 0, 2),
    ...[0, null, null, null, null],
  ] as Value[],
});

const CATEGORIES = table(AGGREGATE_COLUMNS, {
  1: [
    ...[
      11, 10, 630, 535.5, 1220, 87, 428, 1042, 1546, 267, 1044, 2540, 3648, 3648, 1963.5, 0.5412, 259.3, 118,
    ],
    statuses({ critical: 1, reorder: 3, healthy: 2, overstocked: 1, new: 1, discontinued: 1, excluded: 2 }),
    abc(5, 3, 3),
  ] as Value[],
  2: [
    ...[2, 2, 45, 165, 335, 10, 50, 130, 730, 80, 400, 1040, 5840, 10560, 2920, 0.5, 732, 5],
    statuses({ healthy: 1, overstocked: 1 }),
    abc(1, 0, 1),
  ] as Value[],
  10: [
    ...[6, 6, 507, 409.5, 835, 71, 267, 691, 1153, 218, 696, 1713, 2609, 2609, 1344.5, 0.5153, 184.5, 58],
    statuses({ healthy: 2, reorder: 2, new: 1, overstocked: 1 }),
    abc(3, 2, 1),
  ] as Value[],
  20: [
    ...[4, 3, 115, 126, 345, 16, 161, 351, 389, 49, 348, 827, 1019, 1019, 619, 0.6075, 74.8, 60],
    statuses({ critical: 1, reorder: 1, discontinued: 1, excluded: 1 }),
    abc(2, 1, 1),
  ] as Value[],
  100: [
    ...[3, 3, 433, 332.5, 665, 39, 122, 297, 629, 125, 291, 585, 1157, 1157, 578.5, 0.5, 47.5, 58],
    statuses({ healthy: 1, new: 1, overstocked: 1 }),
    abc(2, 0, 1),
  ] as Value[],
});

// ---------------------------------------------------------------------------------------------

describe(`planning engine on the worked fixture of docs/metrics.md §12 (${testBackend})`, () => {
  let tdb: TestDatabase;
  let p: PipelineHarness;

  /** Rows of a query as plain JSON values (numbers, 'YYYY-MM-DD' dates, arrays, objects). */
  async function rows(sql: string): Promise<Row[]> {
    const result = await tdb.db.prisma.$queryRawUnsafe<{ j: string }[]>(
      `SELECT row_to_json(x)::text AS j FROM (${sql}) x`,
    );
    return result.map((r) => JSON.parse(r.j) as Row);
  }
  async function byKey(sql: string, key: string): Promise<Map<number, Row>> {
    return new Map((await rows(sql)).map((r) => [Number(r[key]), r]));
  }

  /** Everything the planning engine writes, to compare two runs. */
  async function planningTables() {
    return {
      metrics: await rows("SELECT * FROM product_metrics ORDER BY pid"),
      history: await rows("SELECT * FROM product_stock_history ORDER BY pid, valid_from"),
      leadTimes: await rows("SELECT * FROM vendor_lead_times ORDER BY vendor_id"),
      forecasts: await rows("SELECT * FROM product_forecasts ORDER BY pid"),
      accuracy: await rows("SELECT * FROM product_forecast_accuracy ORDER BY pid, method"),
      brands: await rows("SELECT * FROM brand_metrics ORDER BY brand_id"),
      vendors: await rows("SELECT * FROM vendor_metrics ORDER BY vendor_id"),
      categories: await rows("SELECT * FROM category_metrics ORDER BY category_id"),
    };
  }

  beforeAll(async () => {
    tdb = await createTestDatabase();
    const { prisma } = tdb.db;
    // §12.1: the catalogue's global settings, lead times measured; the product and vendor settings.
    await seedGlobalSettings(tdb.db);
    await prisma.$executeRawUnsafe(
      "UPDATE settings_global SET setting_value = 'measured' WHERE setting_key = 'lead_time_source'",
    );
    await prisma.$executeRawUnsafe(
      `INSERT INTO settings_product (pid, lead_time_days, safety_stock, forecast_method, exclude_from_forecast) VALUES
         (1002, NULL, 0, 'seasonal', false),
         (1006, 10, 0, NULL, false),
         (1007, NULL, 0, NULL, true),
         (1008, NULL, 20, NULL, false)`,
    );
    await prisma.$executeRawUnsafe(
      `INSERT INTO settings_vendor (vendor, default_lead_time_days, default_days_of_stock) VALUES
         ('Northwind Paper', NULL, 28),
         ('Local Goods', 7, 20)`,
    );
    p = await pipeline(tdb.db, () => DIR);
    expect(await p.run("reset")).toMatchObject({ status: "complete", error: null });
  }, 120_000);
  afterAll(async () => {
    await p.close();
    await tdb.drop();
  });

  it("§12.3–12.4: on order, stock value and the sales windows (cancelled, returned and later lines are no sales)", async () => {
    expectTable(SALES, await byKey("SELECT * FROM product_metrics", "pid"));
  });

  it("§12.3: the explanation's open lines leave out the receipt dated after D0; as_of and D0 are the run's", async () => {
    const e = await explainProductMetrics(tdb.db, 1009);
    // asOf = 2026-06-30T12:00Z: every row's calculated_at, and D0 its UTC date.
    expect([e.as_of, e.d0]).toEqual([FIXTURE_AS_OF.toISOString(), "2026-06-30"]);
    // PO 205: 40 − 0; PO 206: 30 − 10 (its 5 received on D0+1 are not received yet) = 20.
    const onOrder = e.figures.find((f) => f.key === "on_order");
    expect(onOrder).toMatchObject({ value: 60, inputs: { "PO 205": 40, "PO 206": 20 } });
    expect(onOrder?.note).toBeUndefined(); // the inputs give the stored figure
    const times = await rows("SELECT DISTINCT calculated_at FROM product_metrics");
    expect(times.map((r) => new Date(r.calculated_at as string).toISOString())).toEqual([
      FIXTURE_AS_OF.toISOString(),
    ]);
  });

  it("§5: the explanation names the category whose profile plans the new launch, up the tree when needed", async () => {
    const demand = async () =>
      (await explainProductMetrics(tdb.db, 1004)).figures.find((f) => f.key === "demand_rate")?.substituted;
    // 1004's primary category is Cardstock (level 3), where 1001 and 1010 are established.
    expect(await demand()).toContain("category profile of Cardstock");
    // Without established products in Cardstock, the profile comes from its parent Paper (1003,
    // 1008, 1009 are linked to it directly): the text must name Paper, not Cardstock.
    await tdb.db.prisma.$executeRawUnsafe(
      "UPDATE product_metrics SET is_new = true WHERE pid IN (1001, 1010)",
    );
    try {
      expect(await demand()).toContain("category profile of Paper");
    } finally {
      await tdb.db.prisma.$executeRawUnsafe(
        "UPDATE product_metrics SET is_new = false WHERE pid IN (1001, 1010)",
      );
    }
  });

  it("§12.5: life, days in and out of stock, d̄, σd and average stock", async () => {
    expectTable(HISTORY, await byKey("SELECT * FROM product_metrics", "pid"));
  });

  it("§12.5: the stock runs of the product out of stock for 10 days and of the new launch", async () => {
    for (const [pid, runs] of Object.entries(RUNS)) {
      const got = await rows(
        `SELECT valid_from, valid_to, stock, sold_first_day FROM product_stock_history WHERE pid = ${Number(pid)} ORDER BY valid_from`,
      );
      expect
        .soft(
          got.map((r) => [r.valid_from, r.valid_to, r.stock, r.sold_first_day]),
          `runs of ${pid}`,
        )
        .toEqual(runs);
    }
  });

  it("§12.4–12.5: a correction (1014) is no sale for first and last sold; the run's history counts it", async () => {
    const m = await byKey("SELECT pid, first_sold, date_last_sold FROM product_metrics", "pid");
    // The sale of D0−40 is its first and last; the correction of D0−5 is neither.
    expect(m.get(1014)).toMatchObject({ first_sold: "2026-05-21", date_last_sold: "2026-05-21" });
    const h = await tdb.db.prisma.importHistory.findFirst({
      where: { status: "completed" },
      orderBy: { id: "desc" },
    });
    const info = h?.additionalInfo as { details: Record<string, Record<string, number>> };
    expect(info.details.sales_corrections).toEqual({ completed_lines_with_negative_quantity: 1 });
  });

  it("§12.5: 1016's bulk order of 150 is in its sales and d̄ but not in σd, and the explanation says so", async () => {
    const m = await byKey("SELECT pid, demand_variability FROM product_metrics", "pid");
    expect(m.get(1016)?.demand_variability).toEqual({ bulk: [{ day: "2026-05-26", units: 150 }] });
    // No other product of the fixture has one (1006's four lines of 45 are under 20 lines).
    for (const [pid, row] of m) if (pid !== 1016) expect.soft(row.demand_variability, `${pid}`).toBeNull();
    // The bulk day's run: 2 + 150 sold, stock 303 → 151.
    const runs = await rows(
      "SELECT valid_from, stock, sold_first_day FROM product_stock_history WHERE pid = 1016 AND valid_from BETWEEN '2026-05-25' AND '2026-05-27' ORDER BY valid_from",
    );
    expect(runs.map((r) => [r.valid_from, r.stock, r.sold_first_day])).toEqual([
      ["2026-05-25", 303, 2],
      ["2026-05-26", 151, 152],
      ["2026-05-27", 148, 3],
    ]);
    const sd = (await explainProductMetrics(tdb.db, 1016)).figures.find((f) => f.key === "daily_sales_std")!;
    expect(sd.value).toBeCloseTo(Math.SQRT2, 4);
    expect(sd.note).toContain("1 bulk order of 150 units on 2026-05-26 not used for safety stock.");
    expect(sd.note ?? "").not.toMatch(/changed since/);
  });

  it("§12.6: COGS, gross profit, margin, sell-through, turnover and GMROI", async () => {
    expectTable(MARGINS, await byKey("SELECT * FROM product_metrics", "pid"));
  });

  it("§12.3: configured and measured lead times, L, and each vendor's delivery performance", async () => {
    expectTable(LEAD_TIMES, await byKey("SELECT * FROM product_metrics", "pid"));
    const vendors = await byKey("SELECT * FROM vendor_lead_times", "vendor_id");
    const columns = ["samples", "mean_days", "std_days", "on_time_rate", "fill_rate"];
    expectRow("vendor 10", vendors.get(10), columns, [3, 14, 2, 0.5, 0.982]);
    expectRow("vendor 20", vendors.get(20), columns, [5, 16, 4.47, 0.6, 0.9583]);
    // Local Goods has no purchase orders: no row, or one without samples.
    expect(vendors.get(30)?.samples ?? 0).toBe(0);
  });

  it("§12.7: the 13-week forecasts (none for the excluded product nor for the non-merchandise one)", async () => {
    const got = await byKey("SELECT * FROM product_forecasts", "pid");
    expect(got.has(1007)).toBe(false);
    expect(got.has(1015)).toBe(false);
    for (const [pid, want] of Object.entries(FORECASTS)) {
      const row = got.get(Number(pid));
      expect.soft(row, `forecast of ${pid}`).toBeDefined();
      if (!row) continue;
      expect
        .soft([row.method, row.requested_method, row.week_start], `forecast of ${pid}`)
        .toEqual([want.method, want.requested, "2026-07-01"]);
      const weekly = row.weekly as number[];
      expect.soft(weekly.length, `weeks of ${pid}`).toBe(13);
      const digits = [1005, 1013, 1014, 1016].includes(Number(pid)) ? 6 : 4;
      weekly.forEach((v, i) => {
        expect.soft(v, `${pid} week ${i + 1}`).toBeCloseTo(want.weekly[i]!, digits);
      });
      expect.soft(row.total_91d as number, `${pid} total`).toBeCloseTo(want.total, digits);
    }
  });

  it("§12.7: the backtests, per product and method (none under 9 weeks of history)", async () => {
    const got = await rows("SELECT * FROM product_forecast_accuracy ORDER BY pid, method");
    const byPidMethod = new Map(got.map((r) => [`${r.pid} ${r.method}`, r]));
    // 1004 (2 weeks), 1014 (8) and 1016 (7) have under 9 weeks; 1007 and 1015 no forecast at all.
    expect(got.filter((r) => [1004, 1007, 1014, 1015, 1016].includes(r.pid as number))).toEqual([]);
    for (const [pid, method, weeks, actual, wape, mape, bias] of ACCURACY) {
      const label = `accuracy ${pid} ${method}`;
      const row = byPidMethod.get(`${pid} ${method}`);
      expect.soft(row, label).toBeDefined();
      if (!row) continue;
      expect.soft([row.weeks, row.actual], label).toEqual([weeks, actual]);
      const digits = pid === 1002 ? 6 : 4;
      for (const [name, want] of [
        ["wape", wape],
        ["mape", mape],
        ["bias", bias],
      ] as const) {
        if (want === null) expect.soft(row[name], `${label} ${name}`).toBeNull();
        else expect.soft(row[name] as number, `${label} ${name}`).toBeCloseTo(want, digits);
      }
    }
  });

  it("§12.7: the baselines (naive, seasonal naive) and MASE of every backtest", async () => {
    // [pid, naive WAPE, MASE of the method, seasonal-naive WAPE, its MASE] of standard's rows, and of
    // 1002's seasonal row (the same weeks: its MASE has nothing to divide by either, naive exact);
    // the other seasonal rows have no weeks with ΣA > 0, so all four are null.
    const want: [number, number | null, number | null, number | null, number | null][] = [
      [1001, 0, null, 0, null],
      [1002, 0, null, 0, null],
      [1003, 14 / 49, 13.690702 / 14, 14 / 49, 1],
      [1005, null, null, null, null],
      [1006, 2, 193.094158 / 270, 2, 1],
    ];
    const got = await rows("SELECT * FROM product_forecast_accuracy ORDER BY pid, method");
    for (const [pid, naive, mase, snaive, smase] of want)
      for (const row of got.filter((r) => r.pid === pid)) {
        const label = `${pid} ${row.method}`;
        if (row.method === "seasonal" && pid !== 1002) {
          for (const name of ["naive_wape", "mase", "seasonal_naive_wape", "seasonal_naive_mase"])
            expect.soft(row[name], `${label} ${name}`).toBeNull();
          continue;
        }
        for (const [name, value] of [
          ["naive_wape", naive],
          ["mase", mase],
          ["seasonal_naive_wape", snaive],
          ["seasonal_naive_mase", smase],
        ] as const) {
          if (value === null) expect.soft(row[name], `${label} ${name}`).toBeNull();
          else expect.soft(row[name] as number, `${label} ${name}`).toBeCloseTo(value, 5);
        }
      }
  });

  it("§12.8: demand rate, horizon, forecast over the horizon, safety stock and reorder point", async () => {
    expectTable(PLANNING, await byKey("SELECT * FROM product_metrics", "pid"));
  });

  it("§12.8: reorder and overstock quantities, cover, stock-out date (counting open POs) and status", async () => {
    expectTable(ORDERING, await byKey("SELECT * FROM product_metrics", "pid"));
  });

  it("§12.9: ABC classes by 30-day revenue with the shares ranked before", async () => {
    expectTable(ABC, await byKey("SELECT * FROM product_metrics", "pid"));
  });

  it("§12.10: brand, vendor and category aggregates", async () => {
    expectTable(BRANDS, await byKey("SELECT * FROM brand_metrics", "brand_id"), "brand");
    expectTable(VENDORS, await byKey("SELECT * FROM vendor_metrics", "vendor_id"), "vendor");
    expectTable(CATEGORIES, await byKey("SELECT * FROM category_metrics", "category_id"), "category");
  });

  it("a Full Update right after changes none of these figures", async () => {
    // calculated_at included: it is the run's asOf, the same for both runs.
    const before = await planningTables();
    expect(before.metrics).toHaveLength(16);
    expect(await p.run("update")).toMatchObject({ status: "complete", error: null });
    expect(await planningTables()).toEqual(before);
  });
});
