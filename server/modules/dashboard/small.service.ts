// The compact dashboard (/small, GET /api/small) and its device links: named tokens that open
// GET /api/small and nothing else. A token is shown once; only its sha256 is stored; deleting the
// row revokes it at once (every request looks it up).
import type { CreatedDevice, SmallDevice, SmallSummary } from "../../../shared/dashboard.ts";
import type { Database } from "../../db/database.ts";
import { notFound } from "../../errors.ts";
import { hashToken, newToken } from "../auth/auth.service.ts";
import { countProductMetrics } from "../metrics/metrics.service.ts";
import { dashboardPoTotals } from "../purchasing/purchasing.service.ts";
import { addDays, DASHBOARD_TILES, LAST_YEAR_DAYS, loadDataAge } from "./dashboard.service.ts";

type Query = <T>(sql: string, params?: unknown[]) => Promise<T[]>;
const runner = (db: Database): Query => {
  return <T>(sql: string, params: unknown[] = []) => db.prisma.$queryRawUnsafe<T[]>(sql, ...params);
};

const tile = (key: string) => DASHBOARD_TILES.find((t) => t.key === key)!;
const round2 = (v: number) => Math.round(v * 100) / 100;

type Figures = Omit<SmallSummary, "data" | "read_at" | "pos_due_or_overdue">;
const caches = new WeakMap<Database, { version: string; figures: Promise<Figures> }>();

async function computeSmall(db: Database, d0: string | null): Promise<Figures> {
  const empty: Figures = {
    has_data: false,
    today: { day: d0, revenue: 0, units: 0, last_year_revenue: 0 },
    week: { from: d0 ?? "", to: d0 ?? "", revenue: 0, units: 0, last_year_revenue: 0 },
    stock_value: 0,
    to_order: { count: 0, value: 0 },
    a_out_of_stock: 0,
    top_sellers: [],
  };
  if (!d0) return empty;
  const query = runner(db);
  const weekFrom = addDays(d0, -6);
  const [[sales], [stock], toOrder, aOut, top] = await Promise.all([
    query<{
      day_rev: number;
      day_units: number;
      day_ly: number;
      wk_rev: number;
      wk_units: number;
      wk_ly: number;
    }>(
      `SELECT COALESCE(SUM(revenue) FILTER (WHERE day = $1::date), 0)::float8 AS day_rev,
         COALESCE(SUM(units) FILTER (WHERE day = $1::date), 0)::float8 AS day_units,
         COALESCE(SUM(revenue) FILTER (WHERE day = $1::date - ${LAST_YEAR_DAYS}), 0)::float8 AS day_ly,
         COALESCE(SUM(revenue) FILTER (WHERE day BETWEEN $2::date AND $1::date), 0)::float8 AS wk_rev,
         COALESCE(SUM(units) FILTER (WHERE day BETWEEN $2::date AND $1::date), 0)::float8 AS wk_units,
         COALESCE(SUM(revenue) FILTER (WHERE day BETWEEN $2::date - ${LAST_YEAR_DAYS} AND $1::date - ${LAST_YEAR_DAYS}), 0)::float8 AS wk_ly
       FROM sales_daily
       WHERE dim = 'total' AND key = 0 AND (day BETWEEN $2::date AND $1::date
         OR day BETWEEN $2::date - ${LAST_YEAR_DAYS} AND $1::date - ${LAST_YEAR_DAYS})`,
      [d0, weekFrom],
    ),
    query<{ v: number }>("SELECT COALESCE(SUM(stock_value_cost), 0)::float8 AS v FROM product_metrics"),
    countProductMetrics(db, tile("order_now").filter),
    countProductMetrics(db, tile("a_out_of_stock").filter),
    query<SmallSummary["top_sellers"][number]>(
      `SELECT m.pid, p.title, p.sku, m.units_7d AS units, m.revenue_7d::float8 AS revenue
       FROM product_metrics m JOIN products p ON p.pid = m.pid
       WHERE m.units_7d > 0 ORDER BY m.units_7d DESC, m.revenue_7d DESC, m.pid LIMIT 5`,
    ),
  ]);
  return {
    has_data: true,
    today: {
      day: d0,
      revenue: round2(sales?.day_rev ?? 0),
      units: sales?.day_units ?? 0,
      last_year_revenue: round2(sales?.day_ly ?? 0),
    },
    week: {
      from: weekFrom,
      to: d0,
      revenue: round2(sales?.wk_rev ?? 0),
      units: sales?.wk_units ?? 0,
      last_year_revenue: round2(sales?.wk_ly ?? 0),
    },
    stock_value: round2(stock?.v ?? 0),
    to_order: { count: toOrder.count, value: round2(toOrder.reorder_value) },
    a_out_of_stock: aOut.count,
    top_sellers: top,
  };
}

/** GET /api/small: the compact figures (kept per calculation) and the data's age (read each time). */
export async function getSmall(db: Database, now: Date = new Date()): Promise<SmallSummary> {
  const { version, ...data } = await loadDataAge(db, now);
  let kept = caches.get(db);
  if (!kept || kept.version !== version) {
    kept = { version, figures: computeSmall(db, data.as_of_day) };
    caches.set(db, kept);
    kept.figures.catch(() => caches.delete(db));
  }
  // Purchase orders change with every PO action, not only with a calculation: the app's orders are
  // counted each time, the imported ones kept per data version (dashboardPoTotals).
  const [figures, po] = await Promise.all([
    kept.figures,
    dashboardPoTotals(db, version, data.as_of_day ?? now.toISOString().slice(0, 10)),
  ]);
  return { ...figures, pos_due_or_overdue: po.due!.count, data, read_at: now.toISOString() };
}

// ---------------------------------------------------------------------------------------------
// Device links

interface DeviceRow {
  id: number;
  name: string;
  created_at: Date;
  created_by: string | null;
  last_used_at: Date | null;
}
const deviceOf = (r: DeviceRow): SmallDevice => ({
  id: r.id,
  name: r.name,
  created_at: r.created_at.toISOString(),
  created_by: r.created_by,
  last_used_at: r.last_used_at ? r.last_used_at.toISOString() : null,
});

export async function listDevices(db: Database): Promise<SmallDevice[]> {
  const rows = await runner(db)<DeviceRow>(
    `SELECT d.id, d.name, d.created_at, u.username AS created_by, d.last_used_at
     FROM small_devices d LEFT JOIN users u ON u.id = d.created_by ORDER BY d.id`,
  );
  return rows.map(deviceOf);
}

/** A new device link: the token is answered once, and only its hash is kept. */
export async function createDevice(
  db: Database,
  name: string,
  userId: number | null,
): Promise<CreatedDevice> {
  const token = `sd_${newToken()}`;
  const [row] = await runner(db)<DeviceRow>(
    `WITH d AS (
       INSERT INTO small_devices (name, token_hash, created_by) VALUES ($1, $2, $3)
       RETURNING id, name, created_at, created_by, last_used_at
     )
     SELECT d.id, d.name, d.created_at, u.username AS created_by, d.last_used_at
     FROM d LEFT JOIN users u ON u.id = d.created_by`,
    [name, hashToken(token), userId],
  );
  return { ...deviceOf(row!), token, link: `/small#token=${token}` };
}

export async function revokeDevice(db: Database, id: number): Promise<void> {
  const n = await db.prisma.$executeRawUnsafe("DELETE FROM small_devices WHERE id = $1", id);
  if (!n) throw notFound(`Device ${id} not found`);
}

/** The device a bearer token belongs to (its last use recorded, at most once a minute), or null. */
export async function resolveDevice(
  db: Database,
  token: string,
): Promise<{ id: number; name: string } | null> {
  if (!token.startsWith("sd_") || token.length > 200) return null;
  const [row] = await runner(db)<{ id: number; name: string; last_used_at: Date | null }>(
    "SELECT id, name, last_used_at FROM small_devices WHERE token_hash = $1",
    [hashToken(token)],
  );
  if (!row) return null;
  if (!row.last_used_at || Date.now() - row.last_used_at.getTime() > 60_000)
    await db.prisma.$executeRawUnsafe("UPDATE small_devices SET last_used_at = now() WHERE id = $1", row.id);
  return { id: row.id, name: row.name };
}
