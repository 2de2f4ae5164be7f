// Purchasing (docs/metrics.md "Purchase orders", docs/api.md "Purchasing"): the replenishment
// workspace over the planning figures, drafts from suggestions, the purchase-order list over
// imported and app POs, and the app PO lifecycle (draft → ordered → partial/received, closed short,
// cancelled) with receipts and history. Every change runs in one transaction that locks the PO's
// row first, and re-plans the products it touches (replan.ts) before it commits.
import type { CurrentUser } from "../../../shared/auth.ts";
import { hasPermission, type PermissionCode } from "../../../shared/permissions.ts";
import {
  type CreatedDraft,
  type DraftPreview,
  type FacetOption,
  type FromSuggestionsInput,
  type FromSuggestionsResult,
  type PoDetail,
  type PoListInput,
  type PoListItem,
  type PoListPage,
  type PoRounding,
  type PoStatus,
  type PoTile,
  type PoUpdateInput,
  type PoUpdateResult,
  poListInput,
  type ReasonInput,
  type ReceiptInput,
  type ReplenishmentFacets,
  type ReplenishmentInput,
  type ReplenishmentLine,
  type ReplenishmentPage,
  replenishmentInput,
  roundingText,
  roundToPack,
  type VendorSummary,
  type VendorTermsInput,
  type VendorTermsValues,
} from "../../../shared/purchasing.ts";
import type { Database } from "../../db/database.ts";
import type { Prisma } from "../../db/generated/client.ts";
import { badRequest, conflict, forbidden, notFound } from "../../errors.ts";
import { isProductCategorySql } from "../config/category-types.ts";
import { figuresDay } from "../dataOps/as-of.service.ts";
import { stoppedReorderSql } from "../discounts/promotion-layer.ts";
import { KEPT_PAGES_MAX_BYTES, type KeptPages, keptPagesPerDatabase } from "../kept-pages.ts";
import { supersededSql } from "./open-orders.ts";
import { replanProducts } from "./replan.ts";

type Tx = Prisma.TransactionClient;
type Q = Pick<Tx, "$queryRawUnsafe" | "$executeRawUnsafe">;
export type Actor = Pick<CurrentUser, "id" | "username" | "is_admin" | "permissions">;

const TX_OPTIONS = { maxWait: 30_000, timeout: 60_000 };

const rows = <T>(q: Q, sql: string, ...params: unknown[]) => q.$queryRawUnsafe<T[]>(sql, ...params);
const likeEscape = (t: string) => t.replace(/[\\%_]/g, (c) => `\\${c}`);
const todayUtc = () => new Date().toISOString().slice(0, 10);
const round2 = (n: number) => Math.round(n * 100) / 100;

// ---------------------------------------------------------------------------------------------
// Replenishment workspace

/**
 * Open POs per product and vendor: app drafts, app ordered/partial POs no import supersedes, and
 * imported drafts and ordered/partial POs with open quantity. The smallest number wins the label.
 */
const COVER_ALL_SQL = `
    SELECT al.pid, ao.vendor_id, ao.number, 0 AS kind, ao.id AS ord
    FROM app_po_lines al JOIN app_purchase_orders ao ON ao.id = al.po_id
    WHERE (ao.status = 'draft' OR (ao.status IN ('ordered', 'partial') AND al.ordered_qty > al.received_qty))
      AND NOT ${supersededSql("ao")}
    UNION ALL
    SELECT il.pid, io.vendor_id, io.id::text, 1, io.id
    FROM po_lines il JOIN purchase_orders io ON io.id = il.po_id
    WHERE io.status = 'draft'
       OR (io.status IN ('ordered', 'partial')
           AND il.ordered_qty > COALESCE((SELECT SUM(qty) FROM receivings r WHERE r.po_line_id = il.id), 0))`;
const COVER_SQL = `
  SELECT DISTINCT ON (pid, vendor_id) pid, vendor_id, number FROM (${COVER_ALL_SQL}) c
  ORDER BY pid, vendor_id, kind, ord`;

/**
 * A product whose reordering a running stop_reordering promotion stops (docs/metrics.md §16) is no
 * suggestion, even when its stock is low: on the planning day (D0 + 1 of its figures).
 */
const NOT_STOPPED = `NOT EXISTS (${stoppedReorderSql("(m.calculated_at AT TIME ZONE 'UTC')::date + 1", "AND pp.pid = p.pid")})`;

interface CandidateFilter {
  where: string;
  params: unknown[];
}

/** The products the plan says to order now, with the workspace's filters. */
function candidateFilter(input: ReturnType<typeof replenishmentInput.parse>): CandidateFilter {
  const params: unknown[] = [];
  const add = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const where = [
    "p.vendor_id IS NOT NULL",
    "(m.status IN ('critical', 'reorder') OR m.reorder_qty > 0)",
    "COALESCE(m.status, '') NOT IN ('discontinued', 'excluded')",
    NOT_STOPPED,
  ];
  if (input.vendor_id) where.push(`p.vendor_id = ${add(input.vendor_id)}`);
  if (input.brand_id) where.push(`p.brand_id = ${add(input.brand_id)}`);
  if (input.category_id)
    where.push(
      `EXISTS (SELECT 1 FROM product_categories pc WHERE pc.pid = p.pid AND pc.category_id = ${add(input.category_id)})`,
    );
  if (input.status) where.push(`m.status = ${add(input.status)}`);
  if (input.abc) where.push(`m.abc_class = ${add(input.abc)}`);
  if (input.q) {
    const q = input.q.trim();
    const like = add(`%${likeEscape(q)}%`);
    const parts = [`p.title ILIKE ${like}`, `p.sku ILIKE ${like}`];
    if (/^\d{1,9}$/.test(q)) parts.push(`p.pid = ${add(Number(q))}`);
    where.push(`(${parts.join(" OR ")})`);
  }
  return { where: where.join(" AND "), params };
}

interface LineRow {
  pid: number;
  title: string;
  sku: string | null;
  vendor_id: number;
  vendor: string;
  brand: string | null;
  status: string | null;
  abc_class: string | null;
  on_hand: number;
  on_order: number;
  days_of_cover: number | null;
  stockout_date: string | null;
  reorder_qty: number;
  need: number | null;
  moq: number;
  case_qty: number;
  cost: number;
  covered_by: string | null;
}

const LINE_SELECT = `
  p.pid, p.title, p.sku, p.vendor_id, v.name AS vendor, b.name AS brand, m.status, m.abc_class,
  m.on_hand, m.on_order, m.days_of_cover::float8 AS days_of_cover,
  to_char(m.stockout_date, 'YYYY-MM-DD') AS stockout_date, m.reorder_qty,
  (m.forecast_horizon_units + m.safety_stock - (m.on_hand + m.on_order))::float8 AS need,
  GREATEST(p.moq, 1) AS moq, GREATEST(p.case_qty, 1) AS case_qty, COALESCE(p.cost_price, 0)::float8 AS cost`;

/** The planning explanation's reorder line in short: "need 48.8 → MOQ 24 → case 12 → 60". */
function whyText(r: Pick<LineRow, "need" | "moq" | "case_qty" | "reorder_qty" | "status">): string {
  if (r.need === null) return r.reorder_qty > 0 ? `suggested ${r.reorder_qty}` : "not calculated";
  const need = Math.round(r.need * 10) / 10;
  if (r.need <= 0) return `need ${need} ≤ 0: covered by stock and open orders (status ${r.status ?? "—"})`;
  return `need ${need} → MOQ ${r.moq} → case ${r.case_qty} → ${r.reorder_qty}`;
}

function toLine(r: LineRow): ReplenishmentLine {
  return {
    pid: r.pid,
    title: r.title,
    sku: r.sku,
    vendor_id: r.vendor_id,
    vendor: r.vendor,
    brand: r.brand,
    status: r.status,
    abc_class: r.abc_class,
    on_hand: r.on_hand,
    on_order: r.on_order,
    days_of_cover: r.days_of_cover,
    stockout_date: r.stockout_date,
    suggested_qty: r.reorder_qty,
    why: whyText(r),
    moq: r.moq,
    case_qty: r.case_qty,
    cost: r.cost,
    line_value: round2(r.reorder_qty * r.cost),
    covered_by: r.covered_by,
  };
}

const terms = (t: {
  min_order_value: number | null;
  min_order_qty: number | null;
  free_freight_threshold: number | null;
}) =>
  ({
    min_order_value: t.min_order_value,
    min_order_qty: t.min_order_qty,
    free_freight_threshold: t.free_freight_threshold,
  }) satisfies VendorTermsValues;

/**
 * Workspace pages kept per version of what they read: the last calculation or re-plan (calculate_status,
 * renewed by every calculation, purchase-order action that re-plans, override and promotion), the
 * app's purchase orders (every change of one bumps its version; drafts add rows), the vendors' terms
 * and the global settings. Per database, at most WORKSPACE_CACHE_SIZE pages and about
 * KEPT_PAGES_MAX_BYTES (least recently used first out); one computation per page and version at a time.
 */
const WORKSPACE_CACHE_SIZE = 500;
const workspaceCaches = keptPagesPerDatabase<ReplenishmentPage>(WORKSPACE_CACHE_SIZE, KEPT_PAGES_MAX_BYTES);

async function workspaceVersion(db: Database): Promise<string> {
  const [row] = await rows<{ v: string | null }>(
    db.prisma,
    `SELECT concat_ws('|',
       (SELECT max(last_calculation_timestamp)::text FROM calculate_status),
       (SELECT concat_ws(':', count(*), max(id), sum(version), max(updated_at)::text) FROM app_purchase_orders),
       (SELECT concat_ws(':', count(*), max(updated_at)::text) FROM vendor_terms),
       (SELECT concat_ws(':', count(*), max(updated_at)::text) FROM settings_global)) AS v`,
  );
  return row?.v ?? "";
}

/** Forgets every kept workspace page (the bench times the first computation too). */
export function clearPurchasingCaches(db: Database): void {
  workspaceCaches.clear(db);
  poListCaches.clear(db);
}

/**
 * A page kept per database, input and version of what it reads (workspaceVersion and the as-of day):
 * the kept page while both are the same, else `compute`'s, kept in its place.
 */
async function keptPage<I extends object, P>(
  caches: { of(db: Database): KeptPages<P> },
  db: Database,
  input: I,
  compute: (input: I, asOf: string) => Promise<P>,
): Promise<P> {
  const [version, asOf] = await Promise.all([workspaceVersion(db), figuresDay(db)]);
  const key = JSON.stringify({ ...input, asOf });
  return caches.of(db).get(key, version || "-", () => compute(input, asOf));
}

/** Whether the workspace page of `raw` is kept for the data now in force (the warm-up's test). */
export async function replenishmentPageKept(db: Database, raw: ReplenishmentInput): Promise<boolean> {
  const [version, asOf] = await Promise.all([workspaceVersion(db), figuresDay(db)]);
  const key = JSON.stringify({ ...replenishmentInput.parse(raw), asOf });
  return workspaceCaches.of(db).has(key, version || "-");
}

export async function listReplenishment(db: Database, raw: ReplenishmentInput): Promise<ReplenishmentPage> {
  return keptPage(workspaceCaches, db, replenishmentInput.parse(raw), (input, asOf) =>
    computeReplenishment(db, input, asOf),
  );
}

async function computeReplenishment(
  db: Database,
  input: ReturnType<typeof replenishmentInput.parse>,
  asOf: string,
): Promise<ReplenishmentPage> {
  const q = db.prisma;
  const f = candidateFilter(input);
  const n = f.params.length;
  const [vendorRows, lineRows, countRows] = await Promise.all([
    rows<
      Omit<VendorSummary, "reaches_min_value" | "reaches_min_qty" | "reaches_free_freight"> & {
        open_units: number;
        open_value: number;
      }
    >(
      q,
      `WITH c AS MATERIALIZED (
         SELECT p.pid, p.vendor_id, m.reorder_qty, COALESCE(p.cost_price, 0) AS cost
         FROM product_metrics m JOIN products p ON p.pid = m.pid
         WHERE ${f.where}
       ),
       cov AS (${COVER_SQL}),
       agg AS (
         SELECT c.vendor_id, count(*)::int AS lines,
           count(*) FILTER (WHERE cov.number IS NULL)::int AS open_lines,
           SUM(c.reorder_qty)::int AS units,
           round(SUM(c.reorder_qty * c.cost), 2)::float8 AS order_value,
           COALESCE(SUM(c.reorder_qty) FILTER (WHERE cov.number IS NULL), 0)::int AS open_units,
           COALESCE(round(SUM(c.reorder_qty * c.cost) FILTER (WHERE cov.number IS NULL), 2), 0)::float8 AS open_value
         FROM c LEFT JOIN cov ON cov.pid = c.pid AND cov.vendor_id = c.vendor_id
         GROUP BY c.vendor_id
       )
       SELECT agg.*, v.name AS vendor, v.lead_time_days AS lead_time_quoted,
         lt.mean_days::float8 AS lead_time_measured, lt.on_time_rate::float8 AS on_time_rate,
         lt.fill_rate::float8 AS fill_rate,
         t.min_order_value::float8 AS min_order_value, t.min_order_qty,
         t.free_freight_threshold::float8 AS free_freight_threshold
       FROM agg
       JOIN vendors v ON v.id = agg.vendor_id
       LEFT JOIN vendor_lead_times lt ON lt.vendor_id = agg.vendor_id
       LEFT JOIN vendor_terms t ON t.vendor_id = agg.vendor_id
       ORDER BY agg.open_value DESC, agg.order_value DESC, v.name`,
      ...f.params,
    ),
    rows<LineRow>(
      q,
      `WITH page AS (
         SELECT ${LINE_SELECT}
         FROM product_metrics m JOIN products p ON p.pid = m.pid
         JOIN vendors v ON v.id = p.vendor_id
         LEFT JOIN brands b ON b.id = p.brand_id
         WHERE ${f.where}
         ORDER BY v.name, p.vendor_id, m.days_of_cover NULLS FIRST, p.pid
         LIMIT $${n + 1} OFFSET $${n + 2}
       )
       SELECT page.*, (
         SELECT number FROM (${COVER_ALL_SQL}) cv
         WHERE cv.pid = page.pid AND cv.vendor_id = page.vendor_id
         ORDER BY cv.kind, cv.ord LIMIT 1
       ) AS covered_by
       FROM page
       ORDER BY page.vendor, page.vendor_id, page.days_of_cover NULLS FIRST, page.pid`,
      ...f.params,
      input.pageSize,
      (input.page - 1) * input.pageSize,
    ),
    rows<{ total: number }>(
      q,
      `SELECT count(*)::int AS total FROM product_metrics m JOIN products p ON p.pid = m.pid WHERE ${f.where}`,
      ...f.params,
    ),
  ]);
  const vendors: VendorSummary[] = vendorRows.map((v) => ({
    vendor_id: v.vendor_id,
    vendor: v.vendor,
    lines: v.lines,
    open_lines: v.open_lines,
    units: v.units,
    order_value: v.order_value,
    open_units: v.open_units,
    open_value: v.open_value,
    lead_time_measured: v.lead_time_measured,
    lead_time_quoted: v.lead_time_quoted,
    on_time_rate: v.on_time_rate,
    fill_rate: v.fill_rate,
    ...terms(v),
    reaches_min_value: v.min_order_value === null ? null : v.open_value >= v.min_order_value,
    reaches_min_qty: v.min_order_qty === null ? null : v.open_units >= v.min_order_qty,
    reaches_free_freight: v.free_freight_threshold === null ? null : v.open_value >= v.free_freight_threshold,
  }));
  return {
    as_of: asOf,
    vendors,
    items: lineRows.map(toLine),
    total: countRows[0]?.total ?? 0,
    page: input.page,
    pageSize: input.pageSize,
  };
}

/**
 * The workspace's brand and category choices: those of the products to order now under the other
 * filters (vendor, status, ABC, search), each with its number of lines, by name. Categories are the
 * product categories (global setting product_category_types), labelled "Parent › Name".
 */
export async function replenishmentFacets(
  db: Database,
  raw: ReplenishmentInput,
): Promise<ReplenishmentFacets> {
  const input = replenishmentInput.parse({ ...raw, brand_id: undefined, category_id: undefined });
  const f = candidateFilter(input);
  const [brands, categories] = await Promise.all([
    rows<FacetOption>(
      db.prisma,
      `SELECT b.id, b.name AS label, count(*)::int AS lines
       FROM product_metrics m JOIN products p ON p.pid = m.pid JOIN brands b ON b.id = p.brand_id
       WHERE ${f.where} GROUP BY b.id, b.name ORDER BY b.name, b.id`,
      ...f.params,
    ),
    rows<FacetOption>(
      db.prisma,
      `SELECT c.id, CASE WHEN pa.name IS NULL THEN c.name ELSE pa.name || ' › ' || c.name END AS label,
         count(*)::int AS lines
       FROM product_metrics m JOIN products p ON p.pid = m.pid
       JOIN product_categories pc ON pc.pid = p.pid JOIN categories c ON c.id = pc.category_id
       LEFT JOIN categories pa ON pa.id = c.parent_id
       WHERE ${f.where} AND ${isProductCategorySql("c")} GROUP BY c.id, c.name, pa.name ORDER BY 2, c.id`,
      ...f.params,
    ),
  ]);
  return { brands, categories };
}

export async function updateVendorTerms(
  db: Database,
  actor: Actor,
  vendorId: number,
  input: VendorTermsInput,
): Promise<VendorTermsValues & { vendor_id: number }> {
  const [vendor] = await rows<{ id: number }>(db.prisma, "SELECT id FROM vendors WHERE id = $1", vendorId);
  if (!vendor) throw notFound(`Vendor ${vendorId} not found`);
  const [r] = await rows<VendorTermsValues>(
    db.prisma,
    `INSERT INTO vendor_terms (vendor_id, min_order_value, min_order_qty, free_freight_threshold, updated_at, updated_by)
     VALUES ($1, $2, $3, $4, now(), $5)
     ON CONFLICT (vendor_id) DO UPDATE SET
       min_order_value = CASE WHEN $6 THEN EXCLUDED.min_order_value ELSE vendor_terms.min_order_value END,
       min_order_qty = CASE WHEN $7 THEN EXCLUDED.min_order_qty ELSE vendor_terms.min_order_qty END,
       free_freight_threshold = CASE WHEN $8 THEN EXCLUDED.free_freight_threshold ELSE vendor_terms.free_freight_threshold END,
       updated_at = now(), updated_by = $5
     RETURNING min_order_value::float8 AS min_order_value, min_order_qty, free_freight_threshold::float8 AS free_freight_threshold`,
    vendorId,
    input.min_order_value ?? null,
    input.min_order_qty ?? null,
    input.free_freight_threshold ?? null,
    actor.id,
    input.min_order_value !== undefined,
    input.min_order_qty !== undefined,
    input.free_freight_threshold !== undefined,
  );
  return { vendor_id: vendorId, ...terms(r!) };
}

// ---------------------------------------------------------------------------------------------
// Drafts from suggestions

interface Suggestion {
  pid: number;
  title: string;
  vendor_id: number;
  vendor: string;
  qty: number;
  cost: number;
  moq: number;
  case_qty: number;
  days_of_cover: number | null;
  covered_by: string | null;
  min_order_value: number | null;
  min_order_qty: number | null;
}

async function loadSuggestions(q: Q, input: FromSuggestionsInput): Promise<Suggestion[]> {
  const vendorIds = input.vendor_ids ?? [];
  const pids = input.pids ?? [];
  if (vendorIds.length === 0 && pids.length === 0)
    throw badRequest("select at least one vendor or product (vendor_ids or pids)", "vendor_ids");
  // A selected product must be one the plan suggests; selected vendors bring all their suggestions.
  const found = await rows<Omit<Suggestion, "qty"> & { reorder_qty: number }>(
    q,
    `WITH cov AS (${COVER_SQL})
     SELECT p.pid, p.title, p.vendor_id, v.name AS vendor, m.reorder_qty,
       COALESCE(p.cost_price, 0)::float8 AS cost, GREATEST(p.moq, 1) AS moq,
       GREATEST(p.case_qty, 1) AS case_qty, m.days_of_cover::float8 AS days_of_cover,
       cov.number AS covered_by, t.min_order_value::float8 AS min_order_value, t.min_order_qty
     FROM product_metrics m
     JOIN products p ON p.pid = m.pid
     JOIN vendors v ON v.id = p.vendor_id
     LEFT JOIN vendor_terms t ON t.vendor_id = p.vendor_id
     LEFT JOIN cov ON cov.pid = p.pid AND cov.vendor_id = p.vendor_id
     WHERE (p.vendor_id = ANY($1::int[]) OR p.pid = ANY($2::int[]))
       AND NOT p.pid = ANY($3::int[])
       AND (m.status IN ('critical', 'reorder') OR m.reorder_qty > 0)
       AND COALESCE(m.status, '') NOT IN ('discontinued', 'excluded')
       AND ${NOT_STOPPED}
     ORDER BY v.name, p.vendor_id, m.days_of_cover NULLS FIRST, p.pid`,
    vendorIds,
    pids,
    input.exclude_pids ?? [],
  );
  const byPid = new Set(found.map((r) => r.pid));
  const missing = pids.filter((p) => !byPid.has(p));
  if (missing.length) {
    const known = await rows<{ pid: number; vendor_id: number | null }>(
      q,
      "SELECT pid, vendor_id FROM products WHERE pid = ANY($1::int[])",
      missing,
    );
    const unknown = missing.filter((p) => !known.some((k) => k.pid === p));
    if (unknown.length) throw badRequest(`unknown product ${unknown.slice(0, 5).join(", ")}`, "pids");
    const noVendor = known.filter((k) => k.vendor_id === null).map((k) => k.pid);
    if (noVendor.length) throw badRequest(`product ${noVendor.slice(0, 5).join(", ")} has no vendor`, "pids");
  }
  const typed = new Map((input.quantities ?? []).map((x) => [x.pid, x.qty]));
  return found.map((r) => {
    const wanted = typed.get(r.pid);
    const base = wanted ?? r.reorder_qty;
    // A product the plan flags but whose suggestion nets to 0 is ordered at its minimum pack.
    const qty = roundToPack(base > 0 ? base : 0, r.moq, r.case_qty);
    return { ...r, qty };
  });
}

/** Per vendor: the lines a draft would get, topped up to the vendor's minimums when asked. */
function planDrafts(suggestions: Suggestion[], topUp: boolean): DraftPreview[] {
  const groups = new Map<number, DraftPreview>();
  for (const s of suggestions) {
    let g = groups.get(s.vendor_id);
    if (!g) {
      g = {
        vendor_id: s.vendor_id,
        vendor: s.vendor,
        lines: [],
        units: 0,
        value: 0,
        covered: [],
        min_order_value: s.min_order_value,
        min_order_qty: s.min_order_qty,
      };
      groups.set(s.vendor_id, g);
    }
    if (s.covered_by) {
      g.covered.push({ pid: s.pid, number: s.covered_by });
      continue;
    }
    g.lines.push({
      pid: s.pid,
      title: s.title,
      qty: s.qty,
      top_up: 0,
      cost_each: s.cost,
      value: 0,
      days_of_cover: s.days_of_cover,
    });
  }
  const packs = new Map(suggestions.map((s) => [s.pid, Math.max(s.case_qty, 1)]));
  for (const g of groups.values()) {
    const total = () => ({
      units: g.lines.reduce((a, l) => a + l.qty, 0),
      value: g.lines.reduce((a, l) => a + l.qty * l.cost_each, 0),
    });
    if (topUp && g.lines.length) {
      // The lines with the fewest days of cover get one more case each, round after round.
      const order = [...g.lines].sort(
        (a, b) => (a.days_of_cover ?? -1) - (b.days_of_cover ?? -1) || a.pid - b.pid,
      );
      const short = () => {
        const t = total();
        return (
          (g.min_order_value !== null && t.value < g.min_order_value && order.some((l) => l.cost_each > 0)) ||
          (g.min_order_qty !== null && t.units < g.min_order_qty)
        );
      };
      for (let i = 0; short() && i < 100_000; i++) {
        const line = order[i % order.length]!;
        const add = packs.get(line.pid) ?? 1;
        line.qty += add;
        line.top_up += add;
      }
    }
    for (const l of g.lines) l.value = round2(l.qty * l.cost_each);
    const t = total();
    g.units = t.units;
    g.value = round2(t.value);
  }
  return [...groups.values()];
}

export async function previewDrafts(db: Database, input: FromSuggestionsInput): Promise<DraftPreview[]> {
  return planDrafts(await loadSuggestions(db.prisma, input), input.top_up === true);
}

async function addHistory(q: Q, poId: number, actor: Actor, action: string, details: unknown = null) {
  await q.$executeRawUnsafe(
    "INSERT INTO app_po_history (po_id, user_id, username, action, details) VALUES ($1, $2, $3, $4, $5::jsonb)",
    poId,
    actor.id,
    actor.username,
    action,
    details === null ? null : JSON.stringify(details),
  );
}

export async function createFromSuggestions(
  db: Database,
  actor: Actor,
  input: FromSuggestionsInput,
): Promise<FromSuggestionsResult> {
  if (!input.vendor_ids?.length && !input.pids?.length)
    throw badRequest("select at least one vendor or product (vendor_ids or pids)", "vendor_ids");
  return db.prisma.$transaction(async (tx) => {
    // One draft-maker per vendor at a time: the cover check and the insert see each other's drafts.
    const vendorIds = await rows<{ vendor_id: number }>(
      tx,
      `SELECT DISTINCT vendor_id FROM products WHERE vendor_id IS NOT NULL
         AND (vendor_id = ANY($1::int[]) OR pid = ANY($2::int[])) ORDER BY vendor_id`,
      input.vendor_ids ?? [],
      input.pids ?? [],
    );
    for (const v of vendorIds)
      await tx.$queryRawUnsafe("SELECT pg_advisory_xact_lock(715001, $1::int)::text", v.vendor_id);
    const drafts = planDrafts(await loadSuggestions(tx, input), input.top_up === true);
    const created: CreatedDraft[] = [];
    const covered = drafts.flatMap((d) => d.covered);
    for (const d of drafts) {
      if (!d.lines.length) continue;
      const [po] = await rows<{ id: number; number: string }>(
        tx,
        `INSERT INTO app_purchase_orders (id, number, vendor_id, status, created_by)
         SELECT n, 'A' || n, $1, 'draft', $2 FROM (SELECT nextval('app_purchase_orders_id_seq')::int AS n) s
         RETURNING id, number`,
        d.vendor_id,
        actor.id,
      );
      await tx.$executeRawUnsafe(
        `INSERT INTO app_po_lines (po_id, pid, ordered_qty, cost_each)
         SELECT $1, unnest($2::int[]), unnest($3::int[]), unnest($4::numeric[])`,
        po!.id,
        d.lines.map((l) => l.pid),
        d.lines.map((l) => l.qty),
        d.lines.map((l) => String(l.cost_each)),
      );
      await addHistory(tx, po!.id, actor, "created", {
        from: "suggestions",
        lines: d.lines.length,
        units: d.units,
        top_up: d.lines.filter((l) => l.top_up > 0).map((l) => ({ pid: l.pid, added: l.top_up })),
      });
      created.push({
        number: po!.number,
        vendor_id: d.vendor_id,
        vendor: d.vendor,
        lines: d.lines.length,
        units: d.units,
        value: d.value,
      });
    }
    return { created, covered };
  }, TX_OPTIONS);
}

// ---------------------------------------------------------------------------------------------
// Purchase-order list

/**
 * Both kinds of PO as one row set: imported (number = po_id) and app (number = A…). Imported
 * drafts and ordered/partial POs count as they are; app POs the shop system echoed stay listed
 * (they show where they went) but are marked superseded.
 */
function poUnion(asOfParam: string, only?: "imported" | "app"): string {
  const imported = `
  SELECT o.id::text AS number, 'imported' AS source, o.id AS sort_id, o.vendor_id, o.status,
    o.date_ordered, o.date_expected,
    (o.status IN ('ordered', 'partial') AND o.date_expected < ${asOfParam}::date) AS overdue
  FROM purchase_orders o`;
  const app = `
  SELECT a.number, 'app' AS source, a.id AS sort_id, a.vendor_id, a.status, a.date_ordered, a.date_expected,
    (a.status IN ('ordered', 'partial') AND a.date_expected < ${asOfParam}::date) AS overdue
  FROM app_purchase_orders a`;
  return only === "imported" ? imported : only === "app" ? app : `${imported}\n  UNION ALL${app}`;
}

const SORT_SQL: Record<string, string> = {
  number: "source, sort_id",
  vendor: "vendor, sort_id",
  status: "status, sort_id",
  date_ordered: "date_ordered NULLS LAST, sort_id",
  date_expected: "date_expected NULLS LAST, sort_id",
};

/** The list's rows under its filters, as SQL over `u` (the union) and its parameters ($1 = as-of day). */
function poFilter(input: ReturnType<typeof poListInput.parse>, asOf: string) {
  const params: unknown[] = [asOf];
  const add = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const where = poWhere(input, add);
  const whereSql = where.length ? `WHERE ${where.join(" AND ")}` : "";
  const dir = input.dir === "asc" ? "ASC" : "DESC";
  const order = SORT_SQL[input.sort]!.split(", ")
    .map((c) => (c.includes("NULLS") ? c.replace(" NULLS LAST", ` ${dir} NULLS LAST`) : `${c} ${dir}`))
    .join(", ");
  const base = `SELECT u.*, v.name AS vendor FROM (${poUnion("$1")}) u JOIN vendors v ON v.id = u.vendor_id ${whereSql}`;
  return { base, params, add, order };
}

/**
 * The search's operator: ILIKE, or LIKE when the text has no letter (ASCII digits, punctuation and
 * spaces only, e.g. a PO number), where the two match the same rows — no character lowers to one of
 * those — and LIKE does not lower every title and SKU it compares (about 4 × cheaper on the
 * products scan a 1- or 2-character search needs: the trigram indexes need 3 characters).
 */
function likeOperator(text: string): "LIKE" | "ILIKE" {
  return /^[\x20-\x40\x5b-\x60\x7b-\x7e]*$/.test(text) ? "LIKE" : "ILIKE";
}

/** The list's filters as SQL conditions over `u` (a row of the union; $1 = the as-of day). */
function poWhere(input: ReturnType<typeof poListInput.parse>, add: (v: unknown) => string): string[] {
  const where: string[] = [];
  if (input.status) where.push(`u.status = ${add(input.status)}`);
  if (input.vendor_id) where.push(`u.vendor_id = ${add(input.vendor_id)}`);
  if (input.overdue !== undefined) where.push(input.overdue ? "u.overdue" : "NOT u.overdue");
  if (input.open) where.push("u.status IN ('ordered', 'partial')");
  if (input.due) where.push("u.status IN ('ordered', 'partial') AND u.date_expected <= $1::date + 7");
  if (input.due_week)
    where.push("u.status IN ('ordered', 'partial') AND u.date_expected BETWEEN $1::date AND $1::date + 7");
  if (input.late_for_stockout) where.push(`u.status IN ('ordered', 'partial') AND ${LATE_FOR_STOCKOUT_SQL}`);
  if (input.from) where.push(`u.date_ordered >= ${add(input.from)}::date`);
  if (input.to) where.push(`u.date_ordered <= ${add(input.to)}::date`);
  if (input.q) {
    const t = input.q.trim();
    const like = add(`%${likeEscape(t)}%`);
    const op = likeOperator(t);
    const parts = [
      `u.number ${op} ${like}`,
      `u.vendor_id IN (SELECT vv.id FROM vendors vv WHERE vv.name ${op} ${like})`,
    ];
    const prod = `SELECT pp.pid FROM products pp WHERE pp.title ${op} ${like} OR pp.sku ${op} ${like}${
      /^\d{1,9}$/.test(t) ? ` OR pp.pid = ${add(Number(t))}` : ""
    }`;
    // Uncorrelated: each set of PO ids is worked out once (products by their trigram indexes, lines
    // by pid) and hashed, where a correlated EXISTS inside the OR ran once per purchase order.
    parts.push(
      `(u.source = 'imported' AND u.sort_id IN (SELECT sl.po_id FROM po_lines sl WHERE sl.pid IN (${prod})))`,
      `(u.source = 'app' AND u.sort_id IN (SELECT sl.po_id FROM app_po_lines sl WHERE sl.pid IN (${prod})))`,
    );
    where.push(`(${parts.join(" OR ")})`);
  }
  return where;
}

/** PO list pages, kept per the workspace's version (the same inputs: POs, their receipts, the plan). */
const poListCaches = keptPagesPerDatabase<PoListPage>(WORKSPACE_CACHE_SIZE, KEPT_PAGES_MAX_BYTES);

export async function listPurchaseOrders(db: Database, raw: PoListInput): Promise<PoListPage> {
  return keptPage(poListCaches, db, poListInput.parse(raw), (input, asOf) => computePoList(db, input, asOf));
}

async function computePoList(
  db: Database,
  input: ReturnType<typeof poListInput.parse>,
  asOf: string,
): Promise<PoListPage> {
  const q = db.prisma;
  const { base, params, add, order } = poFilter(input, asOf);
  const limit = add(input.pageSize);
  const offset = add((input.page - 1) * input.pageSize);
  const [items, count] = await Promise.all([
    rows<PoListItem & { sort_id: number; first_received: string | null }>(
      q,
      `WITH page AS (${base} ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}),
       imp AS (
         SELECT l.po_id, count(*)::int AS lines, SUM(l.ordered_qty)::int AS units,
           round(SUM(l.ordered_qty * l.cost_each), 2)::float8 AS value,
           COALESCE(SUM(r.qty), 0)::int AS received_units, min(r.first) AS first_received
         FROM po_lines l
         LEFT JOIN (SELECT po_line_id, SUM(qty) AS qty, min(received_date) AS first FROM receivings
                    WHERE po_line_id IN (SELECT id FROM po_lines WHERE po_id IN (SELECT sort_id FROM page WHERE source = 'imported'))
                    GROUP BY po_line_id) r ON r.po_line_id = l.id
         WHERE l.po_id IN (SELECT sort_id FROM page WHERE source = 'imported')
         GROUP BY l.po_id
       ),
       app AS (
         SELECT l.po_id, count(*)::int AS lines, SUM(l.ordered_qty)::int AS units,
           round(SUM(l.ordered_qty * l.cost_each), 2)::float8 AS value,
           SUM(l.received_qty)::int AS received_units,
           (SELECT min(r.received_date) FROM app_po_receipts r JOIN app_po_lines x ON x.id = r.po_line_id
            WHERE x.po_id = l.po_id) AS first_received
         FROM app_po_lines l
         WHERE l.po_id IN (SELECT sort_id FROM page WHERE source = 'app')
         GROUP BY l.po_id
       )
       SELECT page.number, page.source, page.sort_id, page.vendor_id, page.vendor, page.status,
         to_char(page.date_ordered, 'YYYY-MM-DD') AS date_ordered,
         to_char(page.date_expected, 'YYYY-MM-DD') AS date_expected, page.overdue,
         COALESCE(i.lines, a.lines, 0) AS lines, COALESCE(i.units, a.units, 0) AS units,
         COALESCE(i.value, a.value, 0) AS value, COALESCE(i.received_units, a.received_units, 0) AS received_units,
         to_char(COALESCE(i.first_received, a.first_received), 'YYYY-MM-DD') AS first_received
       FROM page
       LEFT JOIN imp i ON page.source = 'imported' AND i.po_id = page.sort_id
       LEFT JOIN app a ON page.source = 'app' AND a.po_id = page.sort_id
       ORDER BY ${order.replace(/\bvendor\b/, "page.vendor")}`,
      ...params,
    ),
    rows<{ total: number }>(q, `SELECT count(*)::int AS total FROM (${base}) c`, ...params.slice(0, -2)),
  ]);
  return {
    items: items.map((r) => ({
      number: r.number,
      source: r.source,
      vendor_id: r.vendor_id,
      vendor: r.vendor,
      status: r.status,
      lines: r.lines,
      units: r.units,
      value: r.value,
      date_ordered: r.date_ordered,
      date_expected: r.date_expected,
      received_units: r.received_units,
      received_pct: r.units > 0 ? Math.round((r.received_units / r.units) * 1000) / 1000 : null,
      overdue: r.overdue,
      on_time:
        r.status === "received" && r.date_expected && r.first_received
          ? r.first_received <= r.date_expected
          : null,
    })),
    total: count[0]?.total ?? 0,
    page: input.page,
    pageSize: input.pageSize,
    as_of: asOf,
  };
}

/** An open PO (row u of the union) with a product whose stock-out date comes before u's expected date. */
const LATE_FOR_STOCKOUT_SQL = `u.date_expected IS NOT NULL AND (
  (u.source = 'imported' AND EXISTS (SELECT 1 FROM po_lines sl JOIN product_metrics sm ON sm.pid = sl.pid
     WHERE sl.po_id = u.sort_id AND sm.stockout_date < u.date_expected))
  OR (u.source = 'app' AND EXISTS (SELECT 1 FROM app_po_lines sl JOIN product_metrics sm ON sm.pid = sl.pid
     WHERE sl.po_id = u.sort_id AND sl.ordered_qty > sl.received_qty AND sm.stockout_date < u.date_expected)))`;

// ---------------------------------------------------------------------------------------------
// One purchase order

type Ref = { kind: "imported"; id: number } | { kind: "app"; number: string };

function parseNumber(number: string): Ref {
  const t = number.trim();
  if (/^A\d{1,10}$/.test(t)) return { kind: "app", number: t };
  if (/^\d{1,9}$/.test(t)) return { kind: "imported", id: Number(t) };
  throw notFound(`Purchase order ${number} not found`);
}

interface AppPoRow {
  id: number;
  number: string;
  vendor_id: number;
  status: PoStatus;
  date_ordered: string | null;
  date_expected: string | null;
  notes: string | null;
  reason: string | null;
  version: number;
  created_by: string | null;
  created_at: string;
  superseded_by: string | null;
}

const APP_PO_SELECT = `
  a.id, a.number, a.vendor_id, a.status, to_char(a.date_ordered, 'YYYY-MM-DD') AS date_ordered,
  to_char(a.date_expected, 'YYYY-MM-DD') AS date_expected, a.notes, a.reason, a.version,
  u.username AS created_by, to_char(a.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS created_at,
  (SELECT echo.id::text FROM purchase_orders echo WHERE echo.reference = a.number ORDER BY echo.id LIMIT 1) AS superseded_by`;

async function loadAppPo(q: Q, number: string, lock: boolean): Promise<AppPoRow> {
  if (lock) {
    // Lock first (a plain row lock: the joins below cannot be locked), then read.
    const [locked] = await rows<{ id: number }>(
      q,
      "SELECT id FROM app_purchase_orders WHERE number = $1 FOR UPDATE",
      number,
    );
    if (!locked) throw notFound(`Purchase order ${number} not found`);
  }
  const [po] = await rows<AppPoRow>(
    q,
    `SELECT ${APP_PO_SELECT} FROM app_purchase_orders a LEFT JOIN users u ON u.id = a.created_by WHERE a.number = $1`,
    number,
  );
  if (!po) throw notFound(`Purchase order ${number} not found`);
  return po;
}

export async function getPurchaseOrder(db: Database, number: string): Promise<PoDetail> {
  return readPurchaseOrder(db.prisma, number, await figuresDay(db));
}

async function readPurchaseOrder(q: Q, number: string, asOf: string): Promise<PoDetail> {
  const ref = parseNumber(number);
  if (ref.kind === "imported") {
    const [po] = await rows<{
      id: number;
      vendor_id: number;
      status: PoStatus;
      date_ordered: string | null;
      date_expected: string | null;
      reference: string | null;
    }>(
      q,
      `SELECT id, vendor_id, status, to_char(date_ordered, 'YYYY-MM-DD') AS date_ordered,
         to_char(date_expected, 'YYYY-MM-DD') AS date_expected, reference
       FROM purchase_orders WHERE id = $1`,
      ref.id,
    );
    if (!po) throw notFound(`Purchase order ${number} not found`);
    const [vendor, lines, receipts] = await Promise.all([
      loadVendor(q, po.vendor_id),
      rows<PoDetail["lines"][number]>(
        q,
        `SELECT l.id AS po_line_id, l.pid, p.title, p.sku, l.ordered_qty,
           COALESCE(r.qty, 0)::int AS received_qty, GREATEST(l.ordered_qty - COALESCE(r.qty, 0), 0)::int AS open_qty,
           l.cost_each::float8 AS cost_each, round(l.ordered_qty * l.cost_each, 2)::float8 AS value,
           GREATEST(COALESCE(p.moq, 1), 1) AS moq, GREATEST(COALESCE(p.case_qty, 1), 1) AS case_qty
         FROM po_lines l
         LEFT JOIN products p ON p.pid = l.pid
         LEFT JOIN (SELECT po_line_id, SUM(qty) AS qty FROM receivings
                    WHERE po_line_id IN (SELECT id FROM po_lines WHERE po_id = $1) GROUP BY po_line_id) r
           ON r.po_line_id = l.id
         WHERE l.po_id = $1 ORDER BY l.id`,
        ref.id,
      ),
      rows<PoDetail["receipts"][number]>(
        q,
        `SELECT r.id, r.po_line_id, l.pid, r.qty, to_char(r.received_date, 'YYYY-MM-DD') AS received_date,
           NULL AS recorded_by
         FROM receivings r JOIN po_lines l ON l.id = r.po_line_id
         WHERE l.po_id = $1 ORDER BY r.received_date, r.id`,
        ref.id,
      ),
    ]);
    return finish({
      number: String(po.id),
      source: "imported",
      status: po.status,
      vendor,
      date_ordered: po.date_ordered,
      date_expected: po.date_expected,
      notes: null,
      reason: null,
      version: 0,
      created_by: null,
      created_at: null,
      superseded_by: null,
      reference: po.reference,
      lines,
      receipts,
      history: [],
      asOf,
    });
  }
  const po = await loadAppPo(q, ref.number, false);
  const [vendor, lines, receipts, history] = await Promise.all([
    loadVendor(q, po.vendor_id),
    rows<PoDetail["lines"][number]>(
      q,
      `SELECT l.id AS po_line_id, l.pid, p.title, p.sku, l.ordered_qty, l.received_qty,
         GREATEST(l.ordered_qty - l.received_qty, 0) AS open_qty, l.cost_each::float8 AS cost_each,
         round(l.ordered_qty * l.cost_each, 2)::float8 AS value,
         GREATEST(COALESCE(p.moq, 1), 1) AS moq, GREATEST(COALESCE(p.case_qty, 1), 1) AS case_qty
       FROM app_po_lines l LEFT JOIN products p ON p.pid = l.pid
       WHERE l.po_id = $1 ORDER BY l.id`,
      po.id,
    ),
    rows<PoDetail["receipts"][number]>(
      q,
      `SELECT r.id, r.po_line_id, l.pid, r.qty, to_char(r.received_date, 'YYYY-MM-DD') AS received_date,
         u.username AS recorded_by
       FROM app_po_receipts r JOIN app_po_lines l ON l.id = r.po_line_id
       LEFT JOIN users u ON u.id = r.recorded_by
       WHERE l.po_id = $1 ORDER BY r.received_date, r.id`,
      po.id,
    ),
    rows<PoDetail["history"][number]>(
      q,
      `SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS at, username AS user, action, details
       FROM app_po_history WHERE po_id = $1 ORDER BY at, id`,
      po.id,
    ),
  ]);
  return finish({
    number: po.number,
    source: "app",
    status: po.status,
    vendor,
    date_ordered: po.date_ordered,
    date_expected: po.date_expected,
    notes: po.notes,
    reason: po.reason,
    version: po.version,
    created_by: po.created_by,
    created_at: po.created_at,
    superseded_by: po.superseded_by,
    reference: null,
    lines,
    receipts,
    history: history.map((h) => ({
      ...h,
      details: typeof h.details === "string" ? JSON.parse(h.details) : h.details,
    })),
    asOf,
  });
}

function finish(
  d: Omit<PoDetail, "overdue" | "units" | "value" | "received_units"> & { asOf: string },
): PoDetail {
  const { asOf, ...rest } = d;
  return {
    ...rest,
    overdue:
      (d.status === "ordered" || d.status === "partial") &&
      d.date_expected !== null &&
      d.date_expected < asOf,
    units: d.lines.reduce((a, l) => a + l.ordered_qty, 0),
    value: round2(d.lines.reduce((a, l) => a + l.value, 0)),
    received_units: d.lines.reduce((a, l) => a + l.received_qty, 0),
  };
}

async function loadVendor(q: Q, vendorId: number): Promise<PoDetail["vendor"]> {
  const [v] = await rows<{ name: string; email: string | null; phone: string | null }>(
    q,
    "SELECT name, email, phone FROM vendors WHERE id = $1",
    vendorId,
  );
  return {
    vendor_id: vendorId,
    name: v?.name ?? `Vendor ${vendorId}`,
    email: v?.email ?? null,
    phone: v?.phone ?? null,
  };
}

// ---------------------------------------------------------------------------------------------
// Changes

const can = (actor: Actor, code: PermissionCode) => hasPermission(actor, code);

/** Locks an app PO for a change; an imported one is read-only (409), an unknown one 404. */
async function lockForChange(tx: Tx, number: string, version?: number): Promise<AppPoRow> {
  const ref = parseNumber(number);
  if (ref.kind === "imported") {
    const [found] = await rows<{ id: number }>(tx, "SELECT id FROM purchase_orders WHERE id = $1", ref.id);
    if (!found) throw notFound(`Purchase order ${number} not found`);
    throw conflict(
      `Purchase order ${number} is imported from the shop system and read-only here: change it there`,
    );
  }
  const po = await loadAppPo(tx, ref.number, true);
  if (version !== undefined && version !== po.version)
    throw conflict(
      `Purchase order ${number} was changed by someone else meanwhile (version ${po.version}, not ${version}): reload it`,
    );
  return po;
}

const notAllowed = (action: string, po: { number: string; status: string }) =>
  conflict(`Cannot ${action} purchase order ${po.number}: it is ${po.status}`);

async function touch(tx: Tx, poId: number): Promise<void> {
  await tx.$executeRawUnsafe(
    "UPDATE app_purchase_orders SET version = version + 1, updated_at = now() WHERE id = $1",
    poId,
  );
}

async function linePids(tx: Tx, poId: number): Promise<number[]> {
  const r = await rows<{ pid: number }>(tx, "SELECT pid FROM app_po_lines WHERE po_id = $1", poId);
  return r.map((x) => x.pid);
}

export async function updatePurchaseOrder(
  db: Database,
  actor: Actor,
  number: string,
  input: PoUpdateInput,
): Promise<PoUpdateResult> {
  const asOf = await figuresDay(db);
  return db.prisma.$transaction(async (tx) => {
    const po = await lockForChange(tx, number, input.version);
    const rounded: PoRounding[] = [];
    const changes: Record<string, unknown> = {};
    if (po.status === "draft") {
      if (!can(actor, "create:purchase_orders")) throw forbidden();
    } else if (po.status === "ordered" || po.status === "partial") {
      if (!can(actor, "update:purchase_orders")) throw forbidden();
      if (input.lines !== undefined)
        throw conflict(
          `Cannot change the lines of purchase order ${po.number}: it is ${po.status} (only a draft's lines change)`,
        );
    } else {
      throw notAllowed("change", po);
    }
    if (input.lines !== undefined) {
      const pids = input.lines.map((l) => l.pid);
      const dup = pids.find((p, i) => pids.indexOf(p) !== i);
      if (dup !== undefined) throw badRequest(`product ${dup} is listed twice`, "lines");
      const products = await rows<{
        pid: number;
        vendor_id: number | null;
        moq: number;
        case_qty: number;
        cost: number;
      }>(
        tx,
        `SELECT pid, vendor_id, GREATEST(moq, 1) AS moq, GREATEST(case_qty, 1) AS case_qty,
           COALESCE(cost_price, 0)::float8 AS cost FROM products WHERE pid = ANY($1::int[])`,
        pids,
      );
      const byPid = new Map(products.map((p) => [p.pid, p]));
      for (const l of input.lines) {
        const p = byPid.get(l.pid);
        if (!p) throw badRequest(`unknown product ${l.pid}`, "lines");
        if (p.vendor_id !== po.vendor_id)
          throw badRequest(
            `product ${l.pid} is not a product of this PO's vendor (${po.vendor_id})`,
            "lines",
          );
      }
      const before = await rows<{ pid: number; ordered_qty: number; cost_each: number }>(
        tx,
        "SELECT pid, ordered_qty, cost_each::float8 AS cost_each FROM app_po_lines WHERE po_id = $1",
        po.id,
      );
      const final = input.lines.map((l) => {
        const p = byPid.get(l.pid)!;
        const qty = roundToPack(l.qty, p.moq, p.case_qty);
        rounded.push({ pid: l.pid, requested: l.qty, qty, rounding: roundingText(l.qty, p.moq, p.case_qty) });
        const old = before.find((b) => b.pid === l.pid);
        return { pid: l.pid, qty, cost: l.cost_each ?? old?.cost_each ?? p.cost };
      });
      await tx.$executeRawUnsafe(
        "DELETE FROM app_po_lines WHERE po_id = $1 AND NOT (pid = ANY($2::int[]))",
        po.id,
        pids,
      );
      await tx.$executeRawUnsafe(
        `INSERT INTO app_po_lines (po_id, pid, ordered_qty, cost_each)
         SELECT $1, unnest($2::int[]), unnest($3::int[]), unnest($4::numeric[])
         ON CONFLICT (po_id, pid) DO UPDATE SET ordered_qty = EXCLUDED.ordered_qty, cost_each = EXCLUDED.cost_each`,
        po.id,
        final.map((l) => l.pid),
        final.map((l) => l.qty),
        final.map((l) => String(l.cost)),
      );
      const lineChanges = [
        ...final
          .filter((l) => {
            const o = before.find((b) => b.pid === l.pid);
            return !o || o.ordered_qty !== l.qty || o.cost_each !== l.cost;
          })
          .map((l) => {
            const o = before.find((b) => b.pid === l.pid);
            return {
              pid: l.pid,
              qty: [o?.ordered_qty ?? null, l.qty],
              cost_each: [o?.cost_each ?? null, l.cost],
            };
          }),
        ...before
          .filter((b) => !pids.includes(b.pid))
          .map((b) => ({ pid: b.pid, qty: [b.ordered_qty, null], removed: true })),
      ];
      if (lineChanges.length) changes.lines = lineChanges;
    }
    if (input.date_expected !== undefined && input.date_expected !== po.date_expected) {
      // An order cannot be expected before it is placed (a draft: before today, when it would be).
      const placed = po.date_ordered ?? todayUtc();
      if (input.date_expected !== null && input.date_expected < placed) {
        throw badRequest(
          `The expected date ${input.date_expected} is before ${po.date_ordered ? `the order date ${placed}` : "today"}`,
          "date_expected",
        );
      }
      await tx.$executeRawUnsafe(
        "UPDATE app_purchase_orders SET date_expected = $2::date WHERE id = $1",
        po.id,
        input.date_expected,
      );
      changes.date_expected = [po.date_expected, input.date_expected];
    }
    if (input.notes !== undefined && (input.notes || null) !== po.notes) {
      await tx.$executeRawUnsafe(
        "UPDATE app_purchase_orders SET notes = $2 WHERE id = $1",
        po.id,
        input.notes || null,
      );
      changes.notes = [po.notes, input.notes || null];
    }
    if (Object.keys(changes).length) {
      await touch(tx, po.id);
      await addHistory(tx, po.id, actor, "edited", changes);
      if (po.status !== "draft" && changes.date_expected) await replanProducts(tx, await linePids(tx, po.id));
    }
    return { po: await readPurchaseOrder(tx, po.number, asOf), rounded };
  }, TX_OPTIONS);
}

export async function markOrdered(db: Database, actor: Actor, number: string): Promise<PoDetail> {
  const asOf = await figuresDay(db);
  return db.prisma.$transaction(async (tx) => {
    const po = await lockForChange(tx, number);
    if (po.status !== "draft") throw notAllowed("mark as ordered", po);
    const pids = await linePids(tx, po.id);
    if (!pids.length) throw conflict(`Cannot mark purchase order ${po.number} as ordered: it has no lines`);
    const today = todayUtc();
    let expected = po.date_expected;
    if (expected && expected < today) {
      throw badRequest(
        `The expected date ${expected} is before today (the order date): set a later one, or clear it to use the lead time`,
        "date_expected",
      );
    }
    if (!expected) {
      // Today + the lead time that plans its products (their mean L), else the vendor's quote, else 14 days.
      const [lt] = await rows<{ days: number | null }>(
        tx,
        `SELECT ceil(COALESCE(
           (SELECT avg(m.lead_time_days) FROM product_metrics m WHERE m.pid = ANY($1::int[])),
           (SELECT lead_time_days FROM vendors WHERE id = $2), 14))::int AS days`,
        pids,
        po.vendor_id,
      );
      expected = new Date(Date.parse(`${today}T00:00:00Z`) + (lt?.days ?? 14) * 86_400_000)
        .toISOString()
        .slice(0, 10);
    }
    await tx.$executeRawUnsafe(
      "UPDATE app_purchase_orders SET status = 'ordered', date_ordered = $2::date, date_expected = $3::date WHERE id = $1",
      po.id,
      today,
      expected,
    );
    await touch(tx, po.id);
    await addHistory(tx, po.id, actor, "ordered", {
      status: ["draft", "ordered"],
      date_ordered: today,
      date_expected: expected,
    });
    await replanProducts(tx, pids);
    return readPurchaseOrder(tx, po.number, asOf);
  }, TX_OPTIONS);
}

export async function recordReceipt(
  db: Database,
  actor: Actor,
  number: string,
  input: ReceiptInput,
): Promise<PoDetail> {
  const today = todayUtc();
  const date = input.received_date ?? today;
  if (date > today) throw badRequest(`a receipt cannot be dated after today (${today})`, "received_date");
  const asOf = await figuresDay(db);
  return db.prisma.$transaction(async (tx) => {
    const po = await lockForChange(tx, number);
    if (po.status !== "ordered" && po.status !== "partial") throw notAllowed("receive against", po);
    if (po.date_ordered && date < po.date_ordered)
      throw badRequest(
        `a receipt cannot be dated before the order date (${po.date_ordered})`,
        "received_date",
      );
    const lines = await rows<{ id: number; pid: number; ordered_qty: number; received_qty: number }>(
      tx,
      "SELECT id, pid, ordered_qty, received_qty FROM app_po_lines WHERE po_id = $1",
      po.id,
    );
    const byId = new Map(lines.map((l) => [l.id, l]));
    const seen = new Set<number>();
    const over: string[] = [];
    for (const l of input.lines) {
      const line = byId.get(l.po_line_id);
      if (!line)
        throw badRequest(`po_line_id ${l.po_line_id} is not a line of purchase order ${po.number}`, "lines");
      if (seen.has(l.po_line_id)) throw badRequest(`po_line_id ${l.po_line_id} is listed twice`, "lines");
      seen.add(l.po_line_id);
      const open = Math.max(line.ordered_qty - line.received_qty, 0);
      if (l.qty > open)
        over.push(`line ${l.po_line_id} (product ${line.pid}): ${l.qty} received, ${open} open`);
    }
    if (over.length && input.confirm_over_receipt !== true)
      throw conflict(`Receiving more than is open needs confirm_over_receipt: true — ${over.join("; ")}`);
    await tx.$executeRawUnsafe(
      `INSERT INTO app_po_receipts (po_line_id, qty, received_date, recorded_by)
       SELECT unnest($1::int[]), unnest($2::int[]), $3::date, $4`,
      input.lines.map((l) => l.po_line_id),
      input.lines.map((l) => l.qty),
      date,
      actor.id,
    );
    await tx.$executeRawUnsafe(
      `UPDATE app_po_lines l SET received_qty = l.received_qty + x.qty
       FROM (SELECT unnest($1::int[]) AS id, unnest($2::int[]) AS qty) x WHERE x.id = l.id`,
      input.lines.map((l) => l.po_line_id),
      input.lines.map((l) => l.qty),
    );
    const [state] = await rows<{ open: number }>(
      tx,
      "SELECT count(*) FILTER (WHERE received_qty < ordered_qty)::int AS open FROM app_po_lines WHERE po_id = $1",
      po.id,
    );
    const status: PoStatus = (state?.open ?? 0) === 0 ? "received" : "partial";
    await tx.$executeRawUnsafe("UPDATE app_purchase_orders SET status = $2 WHERE id = $1", po.id, status);
    await touch(tx, po.id);
    await addHistory(tx, po.id, actor, "received", {
      received_date: date,
      lines: input.lines.map((l) => ({
        po_line_id: l.po_line_id,
        pid: byId.get(l.po_line_id)!.pid,
        qty: l.qty,
      })),
      ...(over.length ? { over_receipt_confirmed: true } : {}),
      ...(status !== po.status ? { status: [po.status, status] } : {}),
    });
    await replanProducts(
      tx,
      input.lines.map((l) => byId.get(l.po_line_id)!.pid),
    );
    return readPurchaseOrder(tx, po.number, asOf);
  }, TX_OPTIONS);
}

export async function closePurchaseOrder(db: Database, actor: Actor, number: string, input: ReasonInput) {
  return endPurchaseOrder(db, actor, number, input, "close short", ["partial"], "closed");
}

export async function cancelPurchaseOrder(db: Database, actor: Actor, number: string, input: ReasonInput) {
  return endPurchaseOrder(db, actor, number, input, "cancel", ["draft", "ordered"], "cancelled");
}

async function endPurchaseOrder(
  db: Database,
  actor: Actor,
  number: string,
  input: ReasonInput,
  action: string,
  from: readonly PoStatus[],
  to: PoStatus,
): Promise<PoDetail> {
  const asOf = await figuresDay(db);
  return db.prisma.$transaction(async (tx) => {
    const po = await lockForChange(tx, number);
    if (!from.includes(po.status)) throw notAllowed(action, po);
    await tx.$executeRawUnsafe(
      "UPDATE app_purchase_orders SET status = $2, reason = $3 WHERE id = $1",
      po.id,
      to,
      input.reason,
    );
    await touch(tx, po.id);
    await addHistory(tx, po.id, actor, to, { status: [po.status, to], reason: input.reason });
    if (po.status !== "draft") await replanProducts(tx, await linePids(tx, po.id));
    return readPurchaseOrder(tx, po.number, asOf);
  }, TX_OPTIONS);
}

/**
 * The PO list's total under a filter, and the open value at cost of those POs: what a dashboard
 * tile shows (the same filter as the list it opens, so tile = list total).
 */
export async function purchaseOrderTotals(
  db: Database,
  raw: PoListInput,
  asOf?: string,
): Promise<{ count: number; open_value: number }> {
  const input = poListInput.parse(raw);
  const day = asOf ?? (await figuresDay(db));
  const { base, params } = poFilter(input, day);
  const [r] = await rows<{ count: number; open_value: number }>(
    db.prisma,
    `WITH f AS (${base})
     SELECT (SELECT count(*) FROM f)::int AS count, COALESCE((
       SELECT SUM(GREATEST(l.ordered_qty - COALESCE((SELECT SUM(r.qty) FROM receivings r WHERE r.po_line_id = l.id), 0), 0) * l.cost_each)
       FROM po_lines l JOIN f ON f.source = 'imported' AND f.sort_id = l.po_id
       WHERE f.status IN ('ordered', 'partial')
     ), 0)::float8 + COALESCE((
       SELECT SUM(GREATEST(l.ordered_qty - l.received_qty, 0) * l.cost_each)
       FROM app_po_lines l JOIN f ON f.source = 'app' AND f.sort_id = l.po_id
       WHERE f.status IN ('ordered', 'partial')
     ), 0)::float8 AS open_value`,
    ...params,
  );
  return { count: r?.count ?? 0, open_value: Math.round((r?.open_value ?? 0) * 100) / 100 };
}

const PO_TILE_DEFS: Omit<PoTile, "count" | "value" | "href">[] = [
  {
    key: "po_overdue",
    label: "Overdue purchase orders",
    value_label: "still to arrive, at cost",
    how: "Ordered or partially received orders whose expected date is before the as-of day.",
    tone: "danger",
    search: { overdue: "true" },
  },
  {
    key: "po_due_week",
    label: "Purchase orders due this week",
    value_label: "still to arrive, at cost",
    how: "Open orders expected from the as-of day through the 7 days after it.",
    tone: "info",
    search: { due_week: "true" },
  },
  {
    key: "po_open_value",
    label: "Open purchase orders",
    value_label: "open value at cost",
    how: "Orders placed and not yet fully received (ordered or partially received).",
    tone: "info",
    search: { open: "true" },
  },
  {
    key: "po_late_for_stockout",
    label: "Stock-out before the order arrives",
    value_label: "still to arrive, at cost",
    how: "Open orders with a product whose expected stock-out date comes before the order's expected date.",
    tone: "danger",
    search: { late_for_stockout: "true" },
  },
];

/** The filters counted for the dashboards: the tiles of /dashboard, then /small's "due or overdue". */
const PO_COUNTED: { key: string; search: PoListInput }[] = [
  ...PO_TILE_DEFS.map((t) => ({ key: t.key, search: t.search as PoListInput })),
  { key: "due", search: { due: true } },
];
type PoSums = Record<string, { count: number; open_value: number }>;

/**
 * purchaseOrderTotals for every filter of PO_COUNTED at once, over one source's orders: the same
 * conditions (poWhere) as the list, so a tile still equals the list it opens. One statement: the
 * open value of each open order is summed once (its lines' receipts grouped, not looked up per line).
 */
async function poSums(db: Database, asOf: string, source: "imported" | "app"): Promise<PoSums> {
  const params: unknown[] = [asOf];
  const add = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const conds = PO_COUNTED.map((c) => poWhere(poListInput.parse(c.search), add).join(" AND ") || "true");
  const open =
    source === "imported"
      ? `SELECT l.po_id, SUM(GREATEST(l.ordered_qty - COALESCE(r.qty, 0), 0) * l.cost_each) AS v
         FROM po_lines l
         LEFT JOIN (SELECT po_line_id, SUM(qty) AS qty FROM receivings
                    WHERE po_line_id IN (SELECT id FROM po_lines WHERE po_id IN (SELECT sort_id FROM f WHERE status IN ('ordered', 'partial')))
                    GROUP BY po_line_id) r ON r.po_line_id = l.id
         WHERE l.po_id IN (SELECT sort_id FROM f WHERE status IN ('ordered', 'partial'))
         GROUP BY l.po_id`
      : `SELECT l.po_id, SUM(GREATEST(l.ordered_qty - l.received_qty, 0) * l.cost_each) AS v
         FROM app_po_lines l
         WHERE l.po_id IN (SELECT sort_id FROM f WHERE status IN ('ordered', 'partial'))
         GROUP BY l.po_id`;
  const [r] = await rows<Record<string, number>>(
    db.prisma,
    `WITH f AS MATERIALIZED (SELECT u.* FROM (${poUnion("$1", source)}) u JOIN vendors v ON v.id = u.vendor_id),
     ov AS (${open})
     SELECT ${conds
       .map(
         (c, i) => `count(*) FILTER (WHERE ${c})::int AS n${i},
       COALESCE(SUM(ov.v) FILTER (WHERE (${c}) AND u.status IN ('ordered', 'partial')), 0)::float8 AS v${i}`,
       )
       .join(",\n       ")}
     FROM f u LEFT JOIN ov ON ov.po_id = u.sort_id`,
    ...params,
  );
  return Object.fromEntries(
    PO_COUNTED.map((c, i) => [c.key, { count: r?.[`n${i}`] ?? 0, open_value: r?.[`v${i}`] ?? 0 }]),
  );
}

/** The imported orders' sums: they change only when a run commits, so they are kept per data version. */
const importedPoSums = new WeakMap<Database, { key: string; sums: Promise<PoSums> }>();

/**
 * The dashboards' purchase-order counts (PO_COUNTED). `version` names the data a run committed
 * (loadDataAge's version): the imported orders, their receipts and product_metrics change only
 * then, so their part is kept per version and day; the app's orders change with every PO action and
 * are summed on each call (a few rows).
 */
export async function dashboardPoTotals(db: Database, version: string, asOf: string): Promise<PoSums> {
  const key = `${version}|${asOf}`;
  let kept = importedPoSums.get(db);
  if (!kept || kept.key !== key) {
    kept = { key, sums: poSums(db, asOf, "imported") };
    importedPoSums.set(db, kept);
    kept.sums.catch(() => importedPoSums.delete(db));
  }
  const [imported, app] = await Promise.all([kept.sums, poSums(db, asOf, "app")]);
  return Object.fromEntries(
    PO_COUNTED.map((c) => [
      c.key,
      {
        count: imported[c.key]!.count + app[c.key]!.count,
        open_value: round2(imported[c.key]!.open_value + app[c.key]!.open_value),
      },
    ]),
  );
}

/** The purchase-order tiles of /dashboard, counted with the PO list's own filters (dashboardPoTotals). */
export async function purchaseOrderTiles(db: Database, version: string, asOf: string): Promise<PoTile[]> {
  const sums = await dashboardPoTotals(db, version, asOf);
  return PO_TILE_DEFS.map((t) => ({
    ...t,
    count: sums[t.key]!.count,
    value: sums[t.key]!.open_value,
    href: `/purchase-orders?${new URLSearchParams(t.search).toString()}`,
  }));
}
