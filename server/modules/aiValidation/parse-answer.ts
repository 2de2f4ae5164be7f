// Reads the model's answer: strict JSON first, then the first balanced JSON object found in prose or
// a Markdown code fence (what models without structured output tend to send).
import { type RowVerdict, VerdictAnswerSchema } from "../../../shared/ai-validation.ts";

export class AnswerParseError extends Error {}

/** The first balanced `{…}` in the text that parses as JSON, or undefined. */
export function extractJsonObject(text: string): unknown {
  const trimmed = text.trim();
  try {
    return JSON.parse(trimmed);
  } catch {
    // fall through to the tolerant scan
  }
  for (let start = trimmed.indexOf("{"); start !== -1; start = trimmed.indexOf("{", start + 1)) {
    let depth = 0;
    let inString = false;
    let escaped = false;
    for (let i = start; i < trimmed.length; i++) {
      const c = trimmed[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (c === "\\") escaped = true;
        else if (c === '"') inString = false;
        continue;
      }
      if (c === '"') inString = true;
      else if (c === "{") depth++;
      else if (c === "}" && --depth === 0) {
        try {
          return JSON.parse(trimmed.slice(start, i + 1));
        } catch {
          break;
        }
      }
    }
  }
  return undefined;
}

/**
 * The verdicts for the rows asked about. Field entries are normalised (confidence clamped to 0–1,
 * blank issue/suggestion → null); a single-row answer that omits `row_id` or gives a bare `fields`
 * list is accepted for the one row asked.
 */
export function parseVerdicts(content: string, rowIds: readonly number[]): RowVerdict[] {
  const value = extractJsonObject(content);
  if (value === undefined || value === null || typeof value !== "object")
    throw new AnswerParseError("The answer holds no JSON object");
  let candidate = value as Record<string, unknown>;
  if (!Array.isArray(candidate.rows) && Array.isArray(candidate.fields) && rowIds.length === 1)
    candidate = { rows: [{ row_id: rowIds[0], fields: candidate.fields }] };
  if (Array.isArray(candidate.rows) && rowIds.length === 1)
    candidate = {
      rows: candidate.rows.map((r) =>
        r && typeof r === "object" && !("row_id" in r) ? { ...r, row_id: rowIds[0] } : r,
      ),
    };
  if (Array.isArray(candidate.rows))
    candidate = {
      rows: candidate.rows.map((r) =>
        r && typeof r === "object" && Array.isArray((r as { fields?: unknown }).fields)
          ? {
              ...r,
              row_id: Number((r as { row_id: unknown }).row_id),
              fields: (r as { fields: Record<string, unknown>[] }).fields.map(normaliseField),
            }
          : r,
      ),
    };
  const parsed = VerdictAnswerSchema.safeParse(candidate);
  if (!parsed.success) {
    const first = parsed.error.issues[0]!;
    throw new AnswerParseError(
      `The answer does not match the verdict format: ${first.path.join(".") || "answer"}: ${first.message}`,
    );
  }
  const wanted = new Set(rowIds);
  return parsed.data.rows.filter((r) => wanted.has(r.row_id));
}

function normaliseField(f: Record<string, unknown>): Record<string, unknown> {
  if (!f || typeof f !== "object") return f;
  const blank = (v: unknown) =>
    v === undefined || v === null || (typeof v === "string" && v.trim() === "") ? null : v;
  const suggestion = blank(f.suggestion);
  let confidence = typeof f.confidence === "string" ? Number(f.confidence) : f.confidence;
  if (typeof confidence !== "number" || !Number.isFinite(confidence)) confidence = 0.5;
  else
    confidence = Math.min(
      1,
      Math.max(0, confidence > 1 && confidence <= 100 ? confidence / 100 : confidence),
    );
  return {
    field: f.field,
    ok: typeof f.ok === "string" ? f.ok === "true" : f.ok,
    issue: blank(f.issue),
    suggestion: typeof suggestion === "number" ? String(suggestion) : suggestion,
    confidence,
  };
}
