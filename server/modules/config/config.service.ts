// Forecasting configuration (spec sections 2, 3, 5 and 7 "Forecasting configuration"): global
// settings, per-product overrides and per-vendor defaults.
import {
  checkGlobalSettings,
  GLOBAL_SETTINGS,
  type GlobalSetting,
  type GlobalSettingsUpdate,
  type Paged,
  type ProductSettingInput,
  type ProductSettingRow,
  type SettingsPageQuery,
  SettingsPageQuerySchema,
  type VendorSettingInput,
  type VendorSettingRow,
  type VendorSettingsPage,
} from "../../../shared/settings.ts";
import type { Database } from "../../db/database.ts";
import { Prisma } from "../../db/generated/client.ts";
import { badRequest, notFound } from "../../errors.ts";
import { loadGlobalSettingValues, resolvePlanningParameters } from "./planning-parameters.ts";

// ---------------------------------------------------------------------------------------------
// Global settings

/** Adds the catalogue's keys that are missing (with their defaults) and refreshes descriptions. */
export async function seedGlobalSettings(db: Database): Promise<void> {
  const rows = GLOBAL_SETTINGS.map((d) => ({
    setting_key: d.key,
    setting_value: d.defaultValue,
    description: d.description,
  }));
  // A value staff changed is never overwritten; descriptions belong to the catalogue.
  await db.prisma.$executeRaw`
    INSERT INTO settings_global (setting_key, setting_value, description)
    SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
      AS r(setting_key text, setting_value text, description text)
    ON CONFLICT (setting_key) DO UPDATE SET description = EXCLUDED.description
      WHERE settings_global.description IS DISTINCT FROM EXCLUDED.description`;
}

/** The catalogue's settings in catalogue order, with their stored values (defaults when missing). */
export async function listGlobalSettings(db: Database): Promise<GlobalSetting[]> {
  const stored = await db.prisma.globalSetting.findMany({
    select: { settingKey: true, settingValue: true, description: true },
  });
  const byKey = new Map(stored.map((s) => [s.settingKey, s]));
  return GLOBAL_SETTINGS.map((d) => ({
    setting_key: d.key,
    setting_value: byKey.get(d.key)?.settingValue ?? d.defaultValue,
    description: byKey.get(d.key)?.description ?? d.description,
  }));
}

/**
 * PUT /config/global: the whole list (a subset is accepted too). Every value is checked against the
 * catalogue and the rules spanning keys (A threshold ≤ B threshold) before anything is written.
 */
export async function updateGlobalSettings(
  db: Database,
  list: GlobalSettingsUpdate,
): Promise<GlobalSetting[]> {
  const values: Record<string, string | number> = {};
  for (const item of list) {
    if (item.setting_key in values) throw badRequest(`listed more than once`, item.setting_key);
    values[item.setting_key] = item.setting_value;
  }
  await db.prisma.$transaction(async (tx) => {
    // Locked, so two concurrent saves cannot each pass the A ≤ B check and together break it.
    const current = await tx.$queryRaw<{ setting_key: string; setting_value: string }[]>`
      SELECT setting_key, setting_value FROM settings_global ORDER BY setting_key FOR UPDATE`;
    const checked = checkGlobalSettings(
      values,
      Object.fromEntries(current.map((r) => [r.setting_key, r.setting_value])),
    );
    if (!checked.ok) throw badRequest(checked.message, checked.key);
    const rows = Object.entries(checked.values).map(([setting_key, setting_value]) => ({
      setting_key,
      setting_value,
      description: GLOBAL_SETTINGS.find((d) => d.key === setting_key)!.description,
    }));
    if (rows.length === 0) return;
    await tx.$executeRaw`
      INSERT INTO settings_global (setting_key, setting_value, description, updated_at)
      SELECT r.setting_key, r.setting_value, r.description, now()
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        AS r(setting_key text, setting_value text, description text)
      ON CONFLICT (setting_key) DO UPDATE
        SET setting_value = EXCLUDED.setting_value, updated_at = now()
        WHERE settings_global.setting_value IS DISTINCT FROM EXCLUDED.setting_value`;
  });
  return listGlobalSettings(db);
}

// ---------------------------------------------------------------------------------------------
// Paging and search

function pageOf(query: SettingsPageQuery) {
  const { page, pageSize, search } = SettingsPageQuerySchema.parse(query);
  return { limit: pageSize, offset: (page - 1) * pageSize, search: search || undefined };
}

/** Text for LIKE: wildcards in the search are matched literally. */
function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

// ---------------------------------------------------------------------------------------------
// Product settings

interface ProductRow {
  pid: number;
  product_name: string;
  lead_time_days: number | null;
  days_of_stock: number | null;
  safety_stock: number | null;
  forecast_method: string | null;
  exclude_from_forecast: boolean | null;
  has_override: boolean;
}

async function productRows(db: Database, rows: ProductRow[]): Promise<ProductSettingRow[]> {
  const params = new Map(
    (
      await resolvePlanningParameters(
        db,
        rows.map((r) => r.pid),
      )
    ).map((p) => [p.pid, p]),
  );
  return rows.map((r) => {
    const p = params.get(r.pid)!;
    return {
      pid: r.pid,
      product_name: r.product_name,
      lead_time_days: r.lead_time_days,
      days_of_stock: r.days_of_stock,
      safety_stock: r.safety_stock ?? 0,
      forecast_method: (r.forecast_method as ProductSettingRow["forecast_method"]) ?? null,
      exclude_from_forecast: r.exclude_from_forecast ?? false,
      vendor: p.vendor,
      has_override: r.has_override,
      inherited: p.inherited,
    };
  });
}

const productSelect = Prisma.sql`
  SELECT p.pid, p.title AS product_name, sp.lead_time_days, sp.days_of_stock, sp.safety_stock,
    sp.forecast_method, sp.exclude_from_forecast, sp.pid IS NOT NULL AS has_override
  FROM products p
  LEFT JOIN settings_product sp ON sp.pid = p.pid`;

/** GET /config/products: every product with its overrides (blank when it has none), by pid. */
export async function listProductSettings(
  db: Database,
  query: SettingsPageQuery,
): Promise<Paged<ProductSettingRow>> {
  const { limit, offset, search } = pageOf(query);
  if (!search) return listAllProductSettings(db, limit, offset);
  // By id (prefix, so "10" finds 1001) or by name (anywhere, any case).
  const where = Prisma.sql`WHERE (p.pid::text LIKE ${`${likeEscape(search)}%`} OR p.title ILIKE ${`%${likeEscape(search)}%`})`;
  const [total, rows] = await Promise.all([
    countProducts(db, where),
    db.prisma.$queryRaw<ProductRow[]>`
      ${productSelect} ${where} ORDER BY p.pid LIMIT ${limit} OFFSET ${offset}`,
  ]);
  return { items: await productRows(db, rows), total };
}

async function countProducts(db: Database, where: Prisma.Sql): Promise<number> {
  const [count] = await db.prisma.$queryRaw<{ total: number }[]>`
    SELECT count(*)::int AS total FROM products p ${where}`;
  return count?.total ?? 0;
}

/**
 * The unfiltered list: every product's pid in order, kept per import of the products table (its
 * sync_status timestamp, written in the import's transaction); a page is a slice of it read by
 * primary key together with that timestamp (one statement, one snapshot), so a page past an
 * import is never answered from the pids before it. (Products change only through imports.)
 */
const productPidLists = new WeakMap<Database, Promise<{ version: string; pids: Int32Array }>>();
const PRODUCTS_VERSION = `(SELECT max(last_sync_timestamp)::text FROM sync_status WHERE table_name = 'products')`;
async function listAllProductSettings(
  db: Database,
  limit: number,
  offset: number,
): Promise<Paged<ProductSettingRow>> {
  for (let attempt = 0; ; attempt++) {
    let list = productPidLists.get(db);
    if (attempt > 0 || !list) {
      list = db.prisma
        .$queryRawUnsafe<{ version: string | null; pids: number[] | null }[]>(
          `SELECT ${PRODUCTS_VERSION} AS version, (SELECT array_agg(pid ORDER BY pid) FROM products) AS pids`,
        )
        .then(([r]) => ({ version: r?.version ?? "", pids: Int32Array.from(r?.pids ?? []) }));
      productPidLists.set(db, list);
      list.then(
        (l) => {
          if (!l.version && productPidLists.get(db) === list) productPidLists.delete(db);
        },
        () => {
          if (productPidLists.get(db) === list) productPidLists.delete(db);
        },
      );
    }
    const { version, pids } = await list;
    const page = Array.from(pids.subarray(offset, offset + limit));
    const read = await db.prisma.$queryRawUnsafe<(ProductRow & { products_version: string | null })[]>(
      page.length
        ? `SELECT ${PRODUCTS_VERSION} AS products_version, p.pid, p.title AS product_name,
             sp.lead_time_days, sp.days_of_stock, sp.safety_stock, sp.forecast_method,
             sp.exclude_from_forecast, sp.pid IS NOT NULL AS has_override
           FROM unnest($1::int[]) WITH ORDINALITY AS pg(pid, ord)
           JOIN products p ON p.pid = pg.pid
           LEFT JOIN settings_product sp ON sp.pid = p.pid
           ORDER BY pg.ord`
        : `SELECT ${PRODUCTS_VERSION} AS products_version`,
      ...(page.length ? [page] : []),
    );
    const seen = read[0]?.products_version ?? "";
    if (seen === version || attempt >= 5) {
      const rows = page.length ? read.map(({ products_version: _v, ...row }) => row) : [];
      return { items: await productRows(db, rows), total: pids.length };
    }
  }
}

async function getProductSetting(db: Database, pid: number): Promise<ProductSettingRow> {
  const rows = await db.prisma.$queryRaw<ProductRow[]>`${productSelect} WHERE p.pid = ${pid}`;
  if (rows.length === 0) throw notFound(`Product ${pid} not found`);
  return (await productRows(db, rows))[0]!;
}

async function assertProduct(db: Database, pid: number): Promise<void> {
  const found = await db.prisma.product.findUnique({ where: { pid }, select: { pid: true } });
  if (!found) throw notFound(`Product ${pid} not found`);
}

export async function updateProductSetting(
  db: Database,
  pid: number,
  input: ProductSettingInput,
): Promise<ProductSettingRow> {
  await assertProduct(db, pid);
  const data = {
    leadTimeDays: input.lead_time_days,
    daysOfStock: input.days_of_stock,
    safetyStock: input.safety_stock,
    forecastMethod: input.forecast_method,
    excludeFromForecast: input.exclude_from_forecast,
  };
  await db.prisma.productSetting.upsert({ where: { pid }, create: { pid, ...data }, update: data });
  return getProductSetting(db, pid);
}

/** POST /config/products/{pid}/reset: the product goes back to the vendor and global defaults. */
export async function resetProductSetting(db: Database, pid: number): Promise<ProductSettingRow> {
  await assertProduct(db, pid);
  await db.prisma.productSetting.deleteMany({ where: { pid } });
  return getProductSetting(db, pid);
}

// ---------------------------------------------------------------------------------------------
// Vendor settings

interface VendorRow {
  vendor: string;
  default_lead_time_days: number | null;
  default_days_of_stock: number | null;
  quoted_lead_time_days: number | null;
  product_count: number;
  has_override: boolean;
}

const vendorSelect = Prisma.sql`
  SELECT v.name AS vendor, sv.default_lead_time_days, sv.default_days_of_stock,
    CASE WHEN v.lead_time_days > 0 THEN v.lead_time_days END AS quoted_lead_time_days,
    (SELECT count(*)::int FROM products p WHERE p.vendor_id = v.id) AS product_count,
    sv.vendor IS NOT NULL AS has_override
  FROM vendors v
  LEFT JOIN settings_vendor sv ON sv.vendor = v.name`;

/** GET /config/vendors: every vendor with its defaults (blank when it has none), by name. */
export async function listVendorSettings(
  db: Database,
  query: SettingsPageQuery,
): Promise<VendorSettingsPage> {
  const { limit, offset, search } = pageOf(query);
  const where = search ? Prisma.sql`WHERE v.name ILIKE ${`%${likeEscape(search)}%`}` : Prisma.empty;
  const [count] = await db.prisma.$queryRaw<{ total: number }[]>`
    SELECT count(*)::int AS total FROM vendors v ${where}`;
  const items = await db.prisma.$queryRaw<VendorRow[]>`
    ${vendorSelect} ${where} ORDER BY lower(v.name), v.name LIMIT ${limit} OFFSET ${offset}`;
  const globals = await loadGlobalSettingValues(db);
  return {
    items,
    total: count?.total ?? 0,
    defaults: {
      lead_time_days: globals.default_lead_time_days,
      days_of_stock: globals.default_days_of_stock,
    },
  };
}

async function getVendorSetting(db: Database, vendor: string): Promise<VendorSettingRow> {
  const [row] = await db.prisma.$queryRaw<VendorRow[]>`${vendorSelect} WHERE v.name = ${vendor}`;
  if (!row) throw notFound(`Vendor "${vendor}" not found`);
  return row;
}

async function assertVendor(db: Database, vendor: string): Promise<void> {
  const found = await db.prisma.vendor.findUnique({ where: { name: vendor }, select: { id: true } });
  if (!found) throw notFound(`Vendor "${vendor}" not found`);
}

export async function updateVendorSetting(
  db: Database,
  vendor: string,
  input: VendorSettingInput,
): Promise<VendorSettingRow> {
  await assertVendor(db, vendor);
  const data = {
    defaultLeadTimeDays: input.default_lead_time_days,
    defaultDaysOfStock: input.default_days_of_stock,
  };
  await db.prisma.vendorSetting.upsert({ where: { vendor }, create: { vendor, ...data }, update: data });
  return getVendorSetting(db, vendor);
}

/** POST /config/vendors/{vendor}/reset: the vendor's products fall back to its quoted lead time and the global defaults. */
export async function resetVendorSetting(db: Database, vendor: string): Promise<VendorSettingRow> {
  await assertVendor(db, vendor);
  await db.prisma.vendorSetting.deleteMany({ where: { vendor } });
  return getVendorSetting(db, vendor);
}
