import { FINDINGS_CSV_COLUMNS, findingsOf } from "../../../shared/data-ops.ts";
import type { Database } from "../../db/database.ts";
import { notFound } from "../../errors.ts";
import { CALC_MODULES } from "../../jobs/calculate.ts";
import { IMPORTED_TABLES } from "../../jobs/tables.ts";

/** Settings-like tables grouped under "Config Tables"; later features add theirs here. */
export const CONFIG_TABLES: string[] = [
  "users",
  "permissions",
  "user_permissions",
  "templates",
  "ai_prompts",
  "reusable_images",
  "settings_global",
  "settings_product",
  "settings_vendor",
  "chat_users",
  "chat_rooms",
  "chat_messages",
  "chat_files",
];

export interface TableCount {
  table_name: string;
  count: number;
  error?: string;
}

export interface TableCounts {
  core: TableCount[];
  metrics: TableCount[];
  config: TableCount[];
}

async function countTables(db: Database, tables: readonly string[]): Promise<TableCount[]> {
  const out: TableCount[] = [];
  for (const table of tables) {
    try {
      const rows = await db.prisma.$queryRawUnsafe<{ count: bigint }[]>(
        `SELECT count(*)::bigint AS count FROM "${table.replace(/"/g, '""')}"`,
      );
      out.push({ table_name: table, count: Number(rows[0]?.count ?? 0) });
    } catch (err) {
      out.push({
        table_name: table,
        count: 0,
        error: err instanceof Error ? err.message.split("\n")[0]! : String(err),
      });
    }
  }
  return out;
}

export async function getTableCounts(db: Database): Promise<TableCounts> {
  return {
    core: await countTables(
      db,
      IMPORTED_TABLES.map((t) => t.table),
    ),
    metrics: await countTables(
      db,
      CALC_MODULES.flatMap((m) => m.tables),
    ),
    config: await countTables(db, CONFIG_TABLES),
  };
}

export async function listImportHistory(db: Database, limit = 20) {
  const rows = await db.prisma.importHistory.findMany({ orderBy: { id: "desc" }, take: limit });
  return rows.map((r) => ({
    id: r.id,
    start_time: r.startTime,
    end_time: r.endTime,
    duration_minutes: r.durationMinutes,
    status: r.status,
    records_added: r.recordsAdded,
    records_updated: r.recordsUpdated,
    records_deleted: r.recordsDeleted,
    records_skipped: r.recordsSkipped,
    total_processed: r.totalProcessed,
    error_message: r.errorMessage,
    additional_info: trimFindings(r.additionalInfo as Record<string, unknown> | null),
  }));
}

/** Findings listed per group in the history (the CSV has them all). */
export const FINDINGS_LISTED_PER_GROUP = 20;

/** The history lists each group's first findings; the rest are in the run's findings CSV. */
function trimFindings(info: Record<string, unknown> | null): Record<string, unknown> | null {
  const findings = findingsOf(info);
  if (!info || !findings) return info;
  return {
    ...info,
    findings: {
      ...findings,
      groups: findings.groups.map((g) => ({
        ...g,
        findings: g.findings.slice(0, FINDINGS_LISTED_PER_GROUP),
      })),
    },
  };
}

export async function listCalculationHistory(db: Database, limit = 20) {
  const rows = await db.prisma.calculateHistory.findMany({ orderBy: { id: "desc" }, take: limit });
  return rows.map((r) => ({
    id: r.id,
    start_time: r.startTime,
    end_time: r.endTime,
    duration_minutes: r.durationMinutes,
    status: r.status,
    processed_products: r.processedProducts,
    total_products: r.totalProducts,
    processed_orders: r.processedOrders,
    total_orders: r.totalOrders,
    processed_purchase_orders: r.processedPurchaseOrders,
    total_purchase_orders: r.totalPurchaseOrders,
    error_message: r.errorMessage,
    additional_info: r.additionalInfo as Record<string, unknown> | null,
  }));
}

export async function listTableStatus(db: Database) {
  const rows = await db.prisma.syncStatus.findMany({ orderBy: { tableName: "asc" } });
  return rows.map((r) => ({ table_name: r.tableName, last_sync_timestamp: r.lastSyncTimestamp }));
}

/**
 * The calculation modules' last times ("Last Calculation Times"). calculate_status also holds marks
 * of work done after a run (the promotion dips' measurement, §16.2 of docs/metrics.md), which are not
 * modules of the run and are left out.
 */
export async function listModuleStatus(db: Database) {
  const rows = await db.prisma.calculateStatus.findMany({
    where: { moduleName: { in: CALC_MODULES.map((m) => m.name) } },
    orderBy: { moduleName: "asc" },
  });
  return rows.map((r) => ({
    module_name: r.moduleName,
    last_calculation_timestamp: r.lastCalculationTimestamp,
  }));
}

/** One run's findings as CSV (GET /csv/history/import/{id}/findings.csv): header only when it has none. */
export async function importFindingsCsv(db: Database, id: number): Promise<string> {
  const run = await db.prisma.importHistory.findUnique({ where: { id }, select: { additionalInfo: true } });
  if (!run) throw notFound(`Import run ${id} does not exist`);
  const findings = findingsOf(run.additionalInfo);
  const rows: (string | number)[][] = [[...FINDINGS_CSV_COLUMNS]];
  for (const g of findings?.groups ?? [])
    for (const f of g.findings) rows.push([g.file, g.kind, f.line, f.column, f.value, f.message]);
  const field = (v: string | number) => {
    // A spreadsheet would run a value starting with = + - @ as a formula.
    const s = typeof v === "string" && /^[=+\-@\t\r]/.test(v) ? `'${v}` : String(v);
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return `\uFEFF${rows.map((r) => r.map(field).join(",")).join("\r\n")}\r\n`;
}
