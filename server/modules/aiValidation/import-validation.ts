// The AI step of Create Products: validates an import's checked rows (those the rule checks let
// through) with the model, writes each row's verdicts as the import's "ai" validation findings
// (warnings: they never block a row), and lets the user accept a suggestion per cell, per column or
// all of them (the accepted values go through the rule checks again) or dismiss it. The import's
// history (product_imports.validation.ai) keeps each run's totals and every accepted or dismissed
// suggestion.
import { AI_NOT_CONFIGURED } from "../../../shared/ai-validation.ts";
import type { CurrentUser } from "../../../shared/auth.ts";
import { type Finding, IMPORT_FIELDS, type ImportFieldKey } from "../../../shared/product-import.ts";
import type { Database } from "../../db/database.ts";
import { badRequest, conflict, notFound } from "../../errors.ts";
import { emitRowsChecked, readCheckedRows, saveValidationFindings } from "../productImport/hooks.ts";
import { loadImport, recheckAll } from "../productImport/productImport.service.ts";
import type { Values } from "../productImport/rules.ts";
import type { AiValidation, BatchProgress, Estimate, RowInput, RowResult } from "./aiValidation.service.ts";

export const AI_STEP = "ai";
const FIELD_KEYS = new Set<string>(IMPORT_FIELDS.map((f) => f.key));
const HISTORY_MAX = 5000;

/** An AI finding: the rules' finding shape plus what the model suggested. */
export interface AiFinding extends Finding {
  suggestion?: string | null;
  confidence?: number;
  call_id?: number | null;
}

export interface ImportAiHistory {
  runs: {
    run_id: number;
    at: string;
    by: number | null;
    model: string | null;
    rows: number;
    checked: number;
    cached: number;
    failed: number;
    issues: number;
    tokens_in: number;
    tokens_out: number;
    cost: number;
    status: string;
  }[];
  accepted: { row_id: number; field: string; from: string | null; to: string; at: string; by: number }[];
  dismissed: { row_id: number; field: string; at: string; by: number }[];
}

export interface StartResult {
  configured: boolean;
  message: string | null;
  run_id: number | null;
  /** Rows sent to the AI step (passed the rule checks) and rows left out because of errors. */
  rows: number;
  skipped_rows: number;
  estimate: Estimate | null;
}

async function checkedRows(db: Database, importId: number, rowIds?: number[]) {
  const rows: RowInput[] = [];
  /** Each row's values as read: its findings are stored only if it still has them. */
  const asked = new Map<number, Values>();
  let skipped = 0;
  const wanted = rowIds ? new Set(rowIds) : null;
  for await (const chunk of readCheckedRows(db, importId, { rowIds })) {
    for (const r of chunk) {
      wanted?.delete(r.rowId);
      if (r.errorCount - countAiErrors(r.validation) > 0) {
        skipped++;
        continue;
      }
      const values: Record<string, string> = {};
      for (const [k, v] of Object.entries(r.values))
        if (v != null && String(v).trim() !== "") values[k] = String(v);
      rows.push({ row_id: r.rowId, values });
      asked.set(r.rowId, r.values);
    }
  }
  if (wanted?.size) throw notFound(`Row ${[...wanted][0]} not found in import ${importId}`);
  return { rows, skipped, asked };
}

/** AI findings are warnings; this keeps a hypothetical error from one out of "passed the rules". */
function countAiErrors(validation: Record<string, Finding[]>): number {
  return (validation[AI_STEP] ?? []).filter((f) => f.severity === "error").length;
}

function contextOf(imp: Awaited<ReturnType<typeof loadImport>>, userId: number) {
  return {
    importId: imp.id,
    company: imp.company,
    productType: imp.product_type,
    templateId: imp.template_id,
    userId,
  };
}

function assertOpen(imp: Awaited<ReturnType<typeof loadImport>>) {
  if (imp.status === "submitted" || imp.status === "exported")
    throw conflict(`Import ${imp.id} was submitted: it can no longer be validated`);
}

export async function estimateImport(
  ai: AiValidation,
  db: Database,
  user: CurrentUser,
  id: number,
  rowIds?: number[],
): Promise<Estimate & { skipped_rows: number }> {
  const imp = await loadImport(db, user, id);
  const { rows, skipped } = await checkedRows(db, id, rowIds);
  return { ...(await ai.estimate(rows, contextOf(imp, user.id))), skipped_rows: skipped };
}

/** The findings a row's verdicts make: one warning per field the model found wrong, or the failure. */
export function findingsOf(result: RowResult, values: Record<string, string>): Omit<AiFinding, "source">[] {
  if (result.status === "failed")
    return [
      {
        field: "row",
        value: null,
        message: result.error ?? "AI check failed",
        severity: "warning",
        call_id: result.call_id,
      },
    ];
  return result.fields
    .filter((f) => !f.ok && FIELD_KEYS.has(f.field))
    .map((f) => ({
      field: f.field as ImportFieldKey,
      value: values[f.field] ?? null,
      message: f.issue ?? "The AI check flagged this value",
      severity: "warning" as const,
      suggestion: f.suggestion !== null && f.suggestion !== (values[f.field] ?? null) ? f.suggestion : null,
      confidence: f.confidence,
      call_id: result.call_id,
    }));
}

async function readHistory(db: Database, importId: number): Promise<ImportAiHistory> {
  const rows = await db.prisma.$queryRawUnsafe<{ h: ImportAiHistory | null }[]>(
    `SELECT validation->'${AI_STEP}' AS h FROM product_imports WHERE id = $1`,
    importId,
  );
  const h = rows[0]?.h;
  return { runs: h?.runs ?? [], accepted: h?.accepted ?? [], dismissed: h?.dismissed ?? [] };
}

async function writeHistory(db: Database, importId: number, history: ImportAiHistory) {
  history.accepted = history.accepted.slice(-HISTORY_MAX);
  history.dismissed = history.dismissed.slice(-HISTORY_MAX);
  history.runs = history.runs.slice(-200);
  await db.prisma.$executeRawUnsafe(
    `UPDATE product_imports SET validation = jsonb_set(validation, ARRAY[$2::text], $3::jsonb) WHERE id = $1`,
    importId,
    AI_STEP,
    JSON.stringify(history),
  );
}

/** How long a run another instance started counts as running without finishing (it may have died). */
const REMOTE_RUN_MAX_MS = 6 * 3_600_000;

/**
 * An import's latest run as the database holds it, whichever instance runs or ran it: its stored
 * progress (written every half second), `saved` once its verdicts are in the rows (the import's
 * history has the run), and whether it still counts as running.
 */
export async function storedRun(
  ai: AiValidation,
  db: Database,
  importId: number,
): Promise<(BatchProgress & { running: boolean }) | null> {
  const stored = await ai.storedBatchFor(importId);
  if (!stored) return null;
  const history = await readHistory(db, importId);
  const saved = history.runs.some((r) => r.run_id === stored.progress.batch_id);
  const recent = Date.now() - stored.startedAt.getTime() < REMOTE_RUN_MAX_MS;
  return {
    ...stored.progress,
    ...(saved ? { saved: true } : {}),
    running: !saved && stored.progress.status === "running" && recent,
  };
}

/**
 * Starts the AI step over the import's rows that passed the rule checks (`rowIds`, or all). Not
 * configured: nothing runs and the answer says so (not an error). One run per import at a time.
 */
export async function startImportValidation(
  ai: AiValidation,
  db: Database,
  user: CurrentUser,
  id: number,
  rowIds?: number[],
  log?: (err: unknown) => void,
): Promise<StartResult> {
  const imp = await loadImport(db, user, id);
  assertOpen(imp);
  if (!ai.ai)
    return {
      configured: false,
      message: AI_NOT_CONFIGURED,
      run_id: null,
      rows: 0,
      skipped_rows: 0,
      estimate: null,
    };
  const running = ai.runningBatchFor(id);
  if (running) throw conflict(`AI validation run ${running.id} is already running for import ${id}`);
  // One run per import across the instances too.
  const elsewhere = await storedRun(ai, db, id);
  if (elsewhere?.running && !ai.getBatch(elsewhere.batch_id))
    throw conflict(`AI validation run ${elsewhere.batch_id} is already running for import ${id}`);
  const { rows, skipped, asked } = await checkedRows(db, id, rowIds);
  if (rows.length === 0)
    throw badRequest(
      skipped
        ? "No row passed the rule checks: fix the errors first, then run the AI check"
        : "The import has no rows to check",
      "rows",
    );
  const ctx = contextOf(imp, user.id);
  const estimate = await ai.estimate(rows, ctx);
  const valuesById = new Map(rows.map((r) => [r.row_id, r.values as Record<string, string>]));
  // Verdicts go into the rows as they arrive (one write at a time; what arrives meanwhile goes in
  // the next), so the grid's cells show them during a long run; the end of the run writes them all
  // once more with the history. Each write done moves the progress's `written` count: the page
  // reads the grid's rows again when it moves (the rows hold the verdicts by then).
  const pending = new Map<number, Omit<Finding, "source">[]>();
  let writing = false;
  let flushing: Promise<void> = Promise.resolve();
  let written = 0;
  let started: Awaited<ReturnType<typeof ai.startBatch>> | null = null;
  const flush = () => {
    if (writing || !pending.size) return;
    writing = true;
    const chunk = new Map(pending);
    pending.clear();
    flushing = saveValidationFindings(db, id, AI_STEP, chunk, undefined, asked)
      .then(() => {
        written += chunk.size;
        if (started && !ended) {
          started.progress.written = written;
          started.changed();
        }
      })
      .catch((err) => log?.(err))
      .finally(() => {
        writing = false;
        flush();
      });
  };
  let ended = false;
  const onResults = (results: RowResult[]) => {
    if (ended) return;
    for (const r of results) {
      if (r.status === "failed" && r.call_id === null) continue;
      pending.set(r.row_id, findingsOf(r, valuesById.get(r.row_id) ?? {}));
    }
    flush();
  };
  const batch = await ai.startBatch(rows, ctx, onResults);
  started = batch;
  batch.progress.written = written;
  void batch.results
    .then(async (results) => {
      ended = true;
      pending.clear();
      while (writing) await flushing;
      const byRow = new Map<number, Omit<Finding, "source">[]>();
      for (const r of results) {
        // A row cancelled before it was asked keeps what it had.
        if (r.status === "failed" && r.call_id === null) continue;
        byRow.set(r.row_id, findingsOf(r, valuesById.get(r.row_id) ?? {}));
      }
      await saveValidationFindings(db, id, AI_STEP, byRow, undefined, asked);
      const history = await readHistory(db, id);
      history.runs.push({
        run_id: batch.id,
        at: new Date().toISOString(),
        by: user.id,
        model: ai.ai?.model ?? null,
        rows: rows.length,
        checked: results.filter((r) => r.status !== "failed").length,
        cached: batch.progress.cached,
        // Rows a cancel left unasked (no call) are not failures: rows − checked − failed of them.
        failed: results.filter((r) => r.status === "failed" && r.call_id !== null).length,
        issues: [...byRow.values()].reduce((n, l) => n + l.filter((f) => f.field !== "row").length, 0),
        tokens_in: batch.progress.tokens_in,
        tokens_out: batch.progress.tokens_out,
        cost: batch.progress.cost,
        status: batch.progress.status,
      });
      await writeHistory(db, id, history);
    })
    .catch((err) => {
      batch.progress.status = "failed";
      log?.(err);
    })
    .finally(() => {
      batch.progress.saved = true;
      batch.savedAt = new Date();
      batch.events.emit("progress", { ...batch.progress });
    });
  return {
    configured: true,
    message: null,
    run_id: batch.id,
    rows: rows.length,
    skipped_rows: skipped,
    estimate,
  };
}

export interface ImportAiStatus {
  configured: boolean;
  message: string | null;
  running: BatchProgress | null;
  last: ImportAiHistory["runs"][number] | null;
  history: ImportAiHistory;
}

export async function importAiStatus(
  ai: AiValidation,
  db: Database,
  user: CurrentUser,
  id: number,
): Promise<ImportAiStatus> {
  await loadImport(db, user, id);
  // A run counts as running until its verdicts are written into the rows. A run on another
  // instance: its progress as stored.
  const latest = ai.latestBatchFor(id);
  let running: BatchProgress | null = latest && !latest.savedAt ? { ...latest.progress } : null;
  if (!latest) {
    const stored = await storedRun(ai, db, id);
    if (stored?.running) {
      const { running: _r, ...progress } = stored;
      running = progress;
    }
  }
  const history = await readHistory(db, id);
  return {
    configured: !!ai.ai,
    message: ai.ai ? null : AI_NOT_CONFIGURED,
    running,
    last: history.runs.at(-1) ?? null,
    history,
  };
}

export async function cancelImportValidation(ai: AiValidation, db: Database, user: CurrentUser, id: number) {
  await loadImport(db, user, id);
  const running = ai.runningBatchFor(id);
  if (running) {
    running.cancel();
    return { success: true as const, run_id: running.id };
  }
  // Running on another instance: the request goes to it over the bus.
  const stored = ai.latestBatchFor(id) ? null : await storedRun(ai, db, id);
  if (!stored?.running) throw conflict(`No AI validation is running for import ${id}`);
  await ai.requestCancel(stored.batch_id);
  return { success: true as const, run_id: stored.batch_id };
}

export interface SuggestionAction {
  action: "accept" | "dismiss";
  /** One cell: row_id and field; a column: field; everything: neither. */
  row_id?: number;
  field?: string;
}

/**
 * Accepts (writes the suggested values as the user's edits and re-runs the rule checks) or
 * dismisses (drops the finding) the AI suggestions chosen. The other AI findings of those rows stay.
 */
export async function actOnSuggestions(
  db: Database,
  user: CurrentUser,
  id: number,
  input: SuggestionAction,
  log?: (err: unknown) => void,
): Promise<{ changed: number }> {
  const imp = await loadImport(db, user, id);
  assertOpen(imp);
  const picked: { row_id: number; finding: AiFinding }[] = [];
  const keep = new Map<number, Omit<Finding, "source">[]>();
  const rowIds = input.row_id ? [input.row_id] : undefined;
  const valuesOf = new Map<number, Record<string, string | null>>();
  for await (const chunk of readCheckedRows(db, id, { rowIds })) {
    for (const r of chunk) {
      const list = (r.validation[AI_STEP] ?? []) as AiFinding[];
      if (!list.length) continue;
      const chosen = list.filter(
        (f) =>
          f.field !== "row" &&
          (!input.field || f.field === input.field) &&
          (input.action === "dismiss" || (f.suggestion !== null && f.suggestion !== undefined)),
      );
      if (!chosen.length) continue;
      for (const f of chosen) picked.push({ row_id: r.rowId, finding: f });
      keep.set(
        r.rowId,
        list.filter((f) => !chosen.includes(f)).map(({ source: _s, ...f }) => f),
      );
      valuesOf.set(r.rowId, r.values as Record<string, string | null>);
    }
  }
  if (input.row_id && input.field && picked.length === 0)
    throw notFound(
      input.action === "accept"
        ? `No AI suggestion for ${input.field} in row ${input.row_id}`
        : `No AI finding for ${input.field} in row ${input.row_id}`,
    );
  if (picked.length === 0) return { changed: 0 };
  const history = await readHistory(db, id);
  const at = new Date().toISOString();
  if (input.action === "accept") {
    const edits = new Map<number, Record<string, string>>();
    for (const p of picked) {
      const e = edits.get(p.row_id) ?? {};
      e[p.finding.field] = p.finding.suggestion!;
      edits.set(p.row_id, e);
      history.accepted.push({
        row_id: p.row_id,
        field: p.finding.field,
        from: valuesOf.get(p.row_id)?.[p.finding.field] ?? null,
        to: p.finding.suggestion!,
        at,
        by: user.id,
      });
    }
    const payload = [...edits].map(([row_id, e]) => ({ row_id, edits: e }));
    for (let i = 0; i < payload.length; i += 5000)
      await db.prisma.$executeRawUnsafe(
        `UPDATE product_import_rows r SET edits = r.edits || x.edits
           FROM jsonb_to_recordset($2::jsonb) AS x(row_id int, edits jsonb)
          WHERE r.import_id = $1 AND r.row_id = x.row_id AND NOT r.deleted`,
        id,
        JSON.stringify(payload.slice(i, i + 5000)),
      );
    // The rule checks run again on the accepted values (which drops the rows' validation findings).
    await recheckAll(db, imp);
    emitRowsChecked({ db, importId: id, rowIds: [...edits.keys()] }, log);
  } else {
    for (const p of picked)
      history.dismissed.push({ row_id: p.row_id, field: p.finding.field, at, by: user.id });
  }
  // What was not chosen stays with its row.
  await saveValidationFindings(db, id, AI_STEP, keep);
  await writeHistory(db, id, history);
  return { changed: picked.length };
}

export interface SuggestionItem {
  row_id: number;
  field: string;
  value: string | null;
  message: string;
  suggestion: string | null;
  confidence: number | null;
  call_id: number | null;
}

/** The import's AI findings, row order, at most `limit`; with counts per field for "accept column". */
export async function listImportSuggestions(
  db: Database,
  user: CurrentUser,
  id: number,
  limit = 500,
): Promise<{ items: SuggestionItem[]; total: number; by_field: Record<string, number> }> {
  await loadImport(db, user, id);
  const rows = await db.prisma.$queryRawUnsafe<(SuggestionItem & { n: number })[]>(
    `SELECT r.row_id, f->>'field' AS field, f->>'value' AS value, f->>'message' AS message,
            f->>'suggestion' AS suggestion, (f->>'confidence')::float8 AS confidence,
            (f->>'call_id')::int AS call_id, count(*) OVER ()::int AS n
       FROM product_import_rows r, jsonb_array_elements(COALESCE(r.validation->'${AI_STEP}', '[]'::jsonb)) AS f
      WHERE r.import_id = $1 AND NOT r.deleted
      ORDER BY r.row_id, f->>'field'
      LIMIT $2`,
    id,
    limit,
  );
  const counts = await db.prisma.$queryRawUnsafe<{ field: string; n: number }[]>(
    `SELECT f->>'field' AS field, count(*)::int AS n
       FROM product_import_rows r, jsonb_array_elements(COALESCE(r.validation->'${AI_STEP}', '[]'::jsonb)) AS f
      WHERE r.import_id = $1 AND NOT r.deleted AND f->>'suggestion' IS NOT NULL
      GROUP BY 1`,
    id,
  );
  return {
    items: rows.map(({ n: _n, ...r }) => r),
    total: rows[0]?.n ?? 0,
    by_field: Object.fromEntries(counts.map((c) => [c.field, c.n])),
  };
}
