// Where a validation step (an AI review, a supplier-specific rule set) plugs into the import's
// check. The rule checks run first on every row; a step then reads the checked rows, and writes its
// own findings back under its name. Those findings are shown beside the rules' ones, count as the
// row's errors and warnings, block rows from the dry run and the submit like any other error, and
// are cleared for a row whenever its values change (the step runs again on the new values).
import type { Finding } from "../../../shared/product-import.ts";
import type { Database } from "../../db/database.ts";
import type { NormalisedProduct, Values } from "./rules.ts";

export interface CheckedRow {
  rowId: number;
  /** Effective values (file, template, edits) as text */
  values: Values;
  /** The rules' findings */
  findings: Finding[];
  /** Findings of validation steps, by step name */
  validation: Record<string, Finding[]>;
  errorCount: number;
  warningCount: number;
}

export interface RowsCheckedEvent {
  db: Database;
  importId: number;
  /** The rows whose values were (re)checked: every row after an upload or a mapping change */
  rowIds: number[] | "all";
}

type Listener = (event: RowsCheckedEvent) => void | Promise<void>;
const listeners = new Set<Listener>();

/** Called after every rule check (upload, settings change, cell edit); answers the unsubscribe. */
export function onRowsChecked(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Tells every listener; a listener's failure is logged by the caller's `log`, never the user's error. */
export function emitRowsChecked(event: RowsCheckedEvent, log?: (err: unknown) => void): void {
  for (const l of listeners) {
    Promise.resolve()
      .then(() => l(event))
      .catch((err) => log?.(err));
  }
}

interface RowRecord {
  row_id: number;
  values: Values;
  findings: Finding[];
  validation: Record<string, Finding[]>;
  error_count: number;
  warning_count: number;
}

/** The import's checked rows in row order, `chunk` at a time; `withoutErrors` skips blocked rows. */
export async function* readCheckedRows(
  db: Database,
  importId: number,
  opts: { chunk?: number; withoutErrors?: boolean; rowIds?: number[] } = {},
): AsyncGenerator<CheckedRow[]> {
  const chunk = opts.chunk ?? 1000;
  let after = 0;
  while (true) {
    const rows = await db.prisma.$queryRawUnsafe<RowRecord[]>(
      `SELECT row_id, "values", findings, validation, error_count, warning_count
         FROM product_import_rows
        WHERE import_id = $1 AND NOT deleted AND row_id > $2
          ${opts.withoutErrors ? "AND error_count = 0" : ""}
          ${opts.rowIds ? "AND row_id IN (SELECT (jsonb_array_elements_text($4::jsonb))::int)" : ""}
        ORDER BY row_id LIMIT $3`,
      importId,
      after,
      chunk,
      ...(opts.rowIds ? [JSON.stringify(opts.rowIds)] : []),
    );
    if (rows.length === 0) return;
    yield rows.map((r) => ({
      rowId: r.row_id,
      values: r.values,
      findings: r.findings,
      validation: r.validation,
      errorCount: r.error_count,
      warningCount: r.warning_count,
    }));
    after = rows[rows.length - 1]!.row_id;
    if (rows.length < chunk) return;
  }
}

/**
 * Stores a step's findings for the rows given (replacing its earlier ones for those rows; an
 * empty list clears them), recounts those rows' errors and warnings, and keeps `summary` (the
 * step's verdicts for the import's history) under the step's name.
 */
export async function saveValidationFindings(
  db: Database,
  importId: number,
  step: string,
  results: Map<number, Omit<Finding, "source">[]>,
  summary?: unknown,
  /**
   * The values each row had when the step read it: a row edited since keeps what it has (its edit
   * already dropped the step's findings), so a verdict on an old value never lands on a new one.
   */
  asked?: Map<number, Values>,
): Promise<void> {
  const payload = [...results].map(([rowId, list]) => ({
    row_id: rowId,
    findings: list.map((f) => ({ ...f, source: step })),
    asked: asked?.get(rowId) ?? null,
  }));
  await db.prisma.$transaction(
    async (tx) => {
      for (let i = 0; i < payload.length; i += 2000) {
        await tx.$executeRawUnsafe(
          `UPDATE product_import_rows r
              SET validation = jsonb_set(r.validation, ARRAY[$2::text], x.findings)
             FROM jsonb_to_recordset($3::jsonb) AS x(row_id int, findings jsonb, asked jsonb)
            WHERE r.import_id = $1 AND r.row_id = x.row_id
              AND (x.asked IS NULL OR r."values" = x.asked)`,
          importId,
          step,
          JSON.stringify(payload.slice(i, i + 2000)),
        );
      }
      await tx.$executeRawUnsafe(RECOUNT_SQL, importId);
      await tx.$executeRawUnsafe(IMPORT_COUNTS_SQL, importId);
      if (summary !== undefined)
        await tx.$executeRawUnsafe(
          `UPDATE product_imports SET validation = jsonb_set(validation, ARRAY[$2::text], $3::jsonb), updated_at = now() WHERE id = $1`,
          importId,
          step,
          JSON.stringify(summary),
        );
    },
    { timeout: 120_000, maxWait: 30_000 },
  );
}

/**
 * The error and warning counts, from the rules' and the steps' findings together, of the rows that
 * hold findings of a validation step (the rule checks write the counts of the others themselves).
 */
export const RECOUNT_SQL = `
  UPDATE product_import_rows r SET error_count = c.errors, warning_count = c.warnings
    FROM (
      SELECT r2.row_id,
             count(*) FILTER (WHERE f->>'severity' = 'error')::int AS errors,
             count(*) FILTER (WHERE f->>'severity' = 'warning')::int AS warnings
        FROM product_import_rows r2
        LEFT JOIN LATERAL (
          SELECT value AS f FROM jsonb_array_elements(r2.findings)
          UNION ALL
          SELECT f2 FROM jsonb_each(r2.validation) AS s(step, list), jsonb_array_elements(s.list) AS f2
        ) fs ON true
       WHERE r2.import_id = $1 AND r2.validation <> '{}'::jsonb
       GROUP BY r2.row_id
    ) c
   WHERE r.import_id = $1 AND r.row_id = c.row_id
     AND (r.error_count <> c.errors OR r.warning_count <> c.warnings)`;

/** RECOUNT_SQL for the rows listed in $2 (an int[] of row ids) alone: a few primary key lookups. */
export const RECOUNT_ROWS_SQL = RECOUNT_SQL.replace(
  "r2.validation <> '{}'::jsonb",
  "r2.row_id = ANY($2::int[]) AND r2.validation <> '{}'::jsonb",
);

/** The import's row counts from its rows. */
export const IMPORT_COUNTS_SQL = `
  UPDATE product_imports i SET
    row_count = c.total, error_rows = c.errors, warning_rows = c.warnings, updated_at = now()
    FROM (
      SELECT count(*)::int AS total,
             count(*) FILTER (WHERE error_count > 0)::int AS errors,
             count(*) FILTER (WHERE error_count = 0 AND warning_count > 0)::int AS warnings
        FROM product_import_rows WHERE import_id = $1 AND NOT deleted
    ) c
   WHERE i.id = $1`;

export type { NormalisedProduct };
