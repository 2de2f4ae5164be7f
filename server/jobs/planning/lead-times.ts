// Module lead_times of the planning engine (docs/metrics.md §4, §11): lead times measured from
// receipts, each vendor's delivery performance (vendor_lead_times), and per product the configured
// and measured lead time and L, the one that plans. It reads no sales, so a Full Reset computes it
// all in prepare, while the order lines load; run() then copies the vendors' rows in. The per-product
// figures go into the temp table lt_product (ON COMMIT DROP), which module planning reads and writes
// into product_metrics with its one UPDATE: a full UPDATE of the wide product_metrics rows costs
// 0.3–1 s of its own (50k products).
import type { SqlConnection } from "../../db/database.ts";
import { loadGlobalSettingValues } from "../../modules/config/planning-parameters.ts";
import { APP_RECEIVED_LINES_SQL } from "../../modules/purchasing/open-orders.ts";
import type { CalcModule } from "../calculate.ts";
import { createParametersTable, markPrepared, preparedFor, setLocal, utcDay } from "./context.ts";

/**
 * The temp table of every product's lead-time figures, named as the product_metrics columns they
 * fill (lead_time_configured … lead_time_source); module planning writes them.
 */
export const LEAD_TIMES_TABLE = "lt_product";

/** A product or vendor needs this many lead-time samples for a measurement. */
const MIN_SAMPLES = 3;

/**
 * Everything this module computes, into the temp tables lt_vendor and lt_product (ON COMMIT DROP),
 * from the imported purchase orders, their lines and receivings, the products and their vendors
 * (calc_params) and the settings: no sales, no other module's table. A Full Reset does it in
 * prepare, while the order lines still load; run() does it when prepare did not.
 */
async function measure(conn: SqlConnection, asOf: Date): Promise<void> {
  const d0 = utcDay(asOf);
  const restore = await setLocal(conn, { jit: "off" });
  const { lead_time_source } = await loadGlobalSettingValues(conn);
  await createParametersTable(conn);

  // Lead-time samples: lines of purchase orders that are not cancelled, ordered in the last 365
  // days, with at least one receipt (up to D0); lead time = first receipt − date ordered.
  await conn.exec("DROP TABLE IF EXISTS lt_received, lt_samples");
  await conn.query(
    `CREATE TEMP TABLE lt_received ON COMMIT DROP AS
     SELECT po_line_id, MIN(received_date) AS first_received, SUM(qty)::bigint AS qty
     FROM receivings WHERE received_date <= $1::date
     GROUP BY po_line_id`,
    [d0],
  );
  await conn.query(
    `CREATE TEMP TABLE lt_samples ON COMMIT DROP AS
     SELECT l.pid, o.vendor_id, o.date_expected, r.first_received,
       r.first_received - o.date_ordered AS days
     FROM po_lines l
     JOIN purchase_orders o ON o.id = l.po_id
     JOIN lt_received r ON r.po_line_id = l.id
     WHERE o.status <> 'cancelled' AND o.date_ordered BETWEEN $1::date - 364 AND $1::date
     UNION ALL
     -- Receipts recorded here, of app POs no imported PO supersedes (open-orders.ts).
     SELECT pid, vendor_id, date_expected, first_received, first_received - date_ordered
     FROM (${APP_RECEIVED_LINES_SQL}) app
     WHERE status <> 'cancelled' AND first_received <= $1::date
       AND date_ordered BETWEEN $1::date - 364 AND $1::date`,
    [d0],
  );

  // Every vendor with samples or with received (closed) purchase orders ordered in the last 365
  // days. Mean and deviation are kept however few the samples; a measurement needs MIN_SAMPLES.
  // Its rows go into the temp table lt_vendor, which run() copies into vendor_lead_times.
  await conn.exec("DROP TABLE IF EXISTS lt_vendor");
  await conn.query(
    `CREATE TEMP TABLE lt_vendor ON COMMIT DROP AS
     WITH s AS (
       SELECT vendor_id, count(*)::int AS n, avg(days) AS mean, stddev_samp(days) AS sd,
         count(*) FILTER (WHERE date_expected IS NOT NULL) AS with_expected,
         count(*) FILTER (WHERE first_received <= date_expected) AS on_time
       FROM lt_samples GROUP BY vendor_id
     ),
     f AS (
       SELECT o.vendor_id, SUM(l.ordered_qty)::numeric AS ordered, COALESCE(SUM(r.qty), 0) AS received
       FROM purchase_orders o
       LEFT JOIN po_lines l ON l.po_id = o.id
       LEFT JOIN lt_received r ON r.po_line_id = l.id
       WHERE o.status = 'received' AND o.date_ordered BETWEEN $1::date - 364 AND $1::date
       GROUP BY o.vendor_id
     )
     SELECT COALESCE(s.vendor_id, f.vendor_id) AS vendor_id, COALESCE(s.n, 0) AS samples,
       round(s.mean, 2) AS mean_days, round(s.sd, 2) AS std_days,
       round(s.on_time::numeric / NULLIF(s.with_expected, 0), 4) AS on_time_rate,
       round(f.received / NULLIF(f.ordered, 0), 4) AS fill_rate
     FROM s FULL JOIN f ON f.vendor_id = s.vendor_id`,
    [d0],
  );

  // Per product: its own measurement with enough samples, else its vendor's, else none. L is the
  // measured mean when the global lead_time_source asks for it and there is one, else configured.
  // The columns carry product_metrics' types, so planning reads and stores the very same values.
  // Planning must run later in the same transaction (CALC_MODULES' order): it writes them.
  await conn.exec(`DROP TABLE IF EXISTS ${LEAD_TIMES_TABLE}`);
  await conn.query(
    `CREATE TEMP TABLE ${LEAD_TIMES_TABLE} ON COMMIT DROP AS
     WITH ps AS (
       SELECT pid, count(*)::int AS n, avg(days) AS mean, stddev_samp(days) AS sd
       FROM lt_samples GROUP BY pid
     ),
     vs AS (
       SELECT vendor_id, count(*)::int AS n, avg(days) AS mean, stddev_samp(days) AS sd
       FROM lt_samples GROUP BY vendor_id
     ),
     x AS (
       SELECT p.pid, c.lead_time_days AS configured, c.lead_time_source AS configured_source,
         CASE WHEN ps.n >= $2 THEN 'product' WHEN vs.n >= $2 THEN 'vendor' END AS level,
         CASE WHEN ps.n >= $2 THEN ps.n WHEN vs.n >= $2 THEN vs.n ELSE 0 END AS samples,
         round(CASE WHEN ps.n >= $2 THEN ps.mean WHEN vs.n >= $2 THEN vs.mean END, 2) AS mean,
         round(CASE WHEN ps.n >= $2 THEN ps.sd WHEN vs.n >= $2 THEN vs.sd END, 2) AS sd,
         CASE WHEN ps.n >= $2 THEN ps.mean WHEN vs.n >= $2 THEN vs.mean END AS mean_exact,
         CASE WHEN ps.n >= $2 THEN ps.sd WHEN vs.n >= $2 THEN vs.sd END AS sd_exact
       FROM products p
       JOIN calc_params c ON c.pid = p.pid
       LEFT JOIN ps ON ps.pid = p.pid
       LEFT JOIN vs ON vs.vendor_id = p.vendor_id
     )
     SELECT pid,
       configured::int AS lead_time_configured,
       configured_source::text AS lead_time_configured_source,
       mean::numeric(10, 2) AS lead_time_measured,
       sd::numeric(10, 2) AS lead_time_measured_std,
       samples::int AS lead_time_measured_samples,
       level::text AS lead_time_measured_level,
       (CASE WHEN $1 = 'measured' AND mean IS NOT NULL THEN mean ELSE configured END)::numeric(10, 2)
         AS lead_time_days,
       (CASE WHEN $1 = 'measured' AND mean IS NOT NULL THEN 'measured' ELSE 'configured' END)::text
         AS lead_time_source,
       -- Unrounded, for planning's ceilings (docs/metrics.md §5 "Rounding"); not stored.
       (CASE WHEN $1 = 'measured' AND mean IS NOT NULL THEN mean_exact ELSE configured END)::numeric
         AS lead_time_exact,
       sd_exact::numeric AS lead_time_std_exact
     FROM x`,
    [lead_time_source, MIN_SAMPLES],
  );
  await conn.exec("DROP TABLE lt_received, lt_samples");
  // The D0 they are for: run() measures again for another one.
  await markPrepared(conn, "lt_prepared", asOf);
  await restore();
}

export const leadTimesModule: CalcModule = {
  name: "lead_times",
  tables: ["vendor_lead_times"],
  // Its per-product figures (lt_product) reach product_metrics through planning's one UPDATE.
  handsOverTo: "planning",
  prepare: {
    reads: ["products", "vendors", "purchase_orders", "po_lines", "receivings"],
    async run({ conn, asOf }) {
      await measure(conn, asOf);
    },
  },
  async run({ conn, asOf }) {
    const restore = await setLocal(conn, { jit: "off" });
    if (!(await preparedFor(conn, "lt_prepared", asOf))) await measure(conn, asOf);
    await conn.exec("TRUNCATE vendor_lead_times");
    await conn.query(
      `INSERT INTO vendor_lead_times (vendor_id, samples, mean_days, std_days, on_time_rate, fill_rate)
       SELECT vendor_id, samples, mean_days, std_days, on_time_rate, fill_rate FROM lt_vendor`,
    );
    await conn.exec("DROP TABLE lt_vendor, lt_prepared");
    // Its rows are the products this module figured (CREATE TABLE AS reports no count on PGlite).
    const [count] = await conn.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${LEAD_TIMES_TABLE}`);
    await restore();
    return count?.n ?? 0;
  },
};
