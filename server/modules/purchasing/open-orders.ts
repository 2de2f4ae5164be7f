// The one rule for what app purchase orders add to planning (docs/metrics.md "Purchase orders"),
// as SQL the calculation phase and the purchasing service share. An app PO counts until the shop
// system echoes it: an imported purchase_orders row whose `reference` is its number supersedes it
// (its lines and receivings are then the truth), so nothing is counted twice.

/** An app PO (alias given) that an imported PO supersedes. */
export const supersededSql = (po: string) =>
  `EXISTS (SELECT 1 FROM purchase_orders echo WHERE echo.reference = ${po}.number)`;

/**
 * Open lines of app POs in ordered/partial that no imported PO supersedes: id, pid, open_qty,
 * date_expected, date_ordered, and for showing them po_id, number, ordered_qty, received_qty.
 * Drafts are not on order; a closed-short PO's rest no longer counts.
 */
export const APP_OPEN_LINES_SQL = `
  SELECT al.id, al.pid, al.ordered_qty - al.received_qty AS open_qty, ao.date_expected, ao.date_ordered,
    al.po_id, ao.number, al.ordered_qty, al.received_qty
  FROM app_po_lines al
  JOIN app_purchase_orders ao ON ao.id = al.po_id AND ao.status IN ('ordered', 'partial')
  WHERE al.ordered_qty > al.received_qty AND NOT ${supersededSql("ao")}`;

/**
 * Per product, the units of receipts recorded here that the source's stock does not include yet
 * (recorded after the start of the last successful Full Update or Full Reset), of app POs no
 * imported PO supersedes: pid, qty. They count as on hand.
 */
export const APP_PENDING_RECEIPTS_SQL = `
  SELECT al.pid, SUM(ar.qty)::bigint AS qty
  FROM app_po_receipts ar
  JOIN app_po_lines al ON al.id = ar.po_line_id
  JOIN app_purchase_orders ao ON ao.id = al.po_id
  WHERE NOT ar.in_source_stock AND NOT ${supersededSql("ao")}
  GROUP BY al.pid`;

/**
 * Lead-time samples from receipts recorded here (app POs no imported PO supersedes): po_line_id,
 * pid, vendor_id, date_ordered, date_expected, first_received, status.
 */
export const APP_RECEIVED_LINES_SQL = `
  SELECT al.id AS po_line_id, al.pid, ao.vendor_id, ao.date_ordered, ao.date_expected, ao.status,
    MIN(ar.received_date) AS first_received, SUM(ar.qty)::bigint AS qty, al.ordered_qty
  FROM app_po_receipts ar
  JOIN app_po_lines al ON al.id = ar.po_line_id
  JOIN app_purchase_orders ao ON ao.id = al.po_id
  WHERE ao.date_ordered IS NOT NULL AND NOT ${supersededSql("ao")}
  GROUP BY al.id, al.pid, ao.vendor_id, ao.date_ordered, ao.date_expected, ao.status, al.ordered_qty`;

/**
 * Run in a Full Update's or Full Reset's transaction before its calculations: receipts recorded
 * before the run started are in the source's stock from this run on. Rolled back with a failed run.
 */
export const ABSORB_RECEIPTS_SQL =
  "UPDATE app_po_receipts SET in_source_stock = true WHERE NOT in_source_stock AND recorded_at < $1::timestamptz";
