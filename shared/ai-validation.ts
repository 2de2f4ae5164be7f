// AI validation of new products: the per-field verdict a language model returns, the calls kept for
// the AI Validation Debug page, and the inputs of its procedures and REST paths.
import { z } from "zod";
import { idSchema, int, text } from "./input.ts";

/** The model's judgement of one field of one row. */
export const FieldVerdictSchema = z.object({
  field: z.string().min(1),
  ok: z.boolean(),
  issue: z.string().nullable(),
  suggestion: z.string().nullable(),
  confidence: z.number().min(0).max(1),
});
export type FieldVerdict = z.infer<typeof FieldVerdictSchema>;

export const RowVerdictSchema = z.object({
  row_id: z.number().int(),
  fields: z.array(FieldVerdictSchema),
});
export type RowVerdict = z.infer<typeof RowVerdictSchema>;

/** What every answer must be: one entry per row sent. */
export const VerdictAnswerSchema = z.object({ rows: z.array(RowVerdictSchema) });
export type VerdictAnswer = z.infer<typeof VerdictAnswerSchema>;

/** The structured-output modes tried in order; the one that worked is recorded with the call. */
export const AI_MODES = ["json_schema", "json_object", "prompt"] as const;
export type AiMode = (typeof AI_MODES)[number];

export const AI_CALL_KINDS = ["validation", "replay", "test"] as const;
export type AiCallKind = (typeof AI_CALL_KINDS)[number];

export const AI_CALL_STATUSES = ["ok", "failed"] as const;
export type AiCallStatus = (typeof AI_CALL_STATUSES)[number];

/** The layers a prompt is assembled from, in the order they are sent. */
export const LAYER_KEYS = ["system", "general", "company", "template", "row"] as const;
export type LayerKey = (typeof LAYER_KEYS)[number];
export const LAYER_LABELS: Record<LayerKey, string> = {
  system: "System prompt",
  general: "General prompt",
  company: "Company prompt",
  template: "Template context",
  row: "Row",
};

export interface PromptLayer {
  key: LayerKey;
  label: string;
  content: string;
}

export interface PromptVersionRef {
  id: number;
  version: number;
}
export type PromptVersions = Partial<Record<"system" | "general" | "company", PromptVersionRef>>;

export interface CallAttempt {
  attempt: number;
  mode: AiMode;
  ms: number;
  /** ok, or what went wrong: timeout, connection, http, unsupported_mode, unparseable */
  outcome: string;
  http_status?: number;
  /** The endpoint's own id for the request (its `x-request-id` answer header), to quote to its support. */
  request_id?: string;
  error?: string;
  error_body?: string;
}

export interface CallTimings {
  total_ms: number;
  model_ms: number;
  overhead_ms: number;
}

/** A row of the runs list. */
export interface AiCallSummary {
  id: number;
  created_at: Date;
  kind: AiCallKind;
  import_id: number | null;
  batch_id: number | null;
  row_ids: number[];
  replay_of: number | null;
  company: string | null;
  company_name: string | null;
  product_type: string | null;
  template_id: number | null;
  prompt_versions: PromptVersions;
  model: string;
  mode: AiMode | null;
  status: AiCallStatus;
  latency_ms: number;
  tokens_in: number;
  tokens_out: number;
  cost: number;
  fields_checked: number;
  issues_found: number;
  error: string | null;
}

/** A run's detail: everything sent and received. */
export interface AiCallDetail extends AiCallSummary {
  base_url: string;
  layers: PromptLayer[];
  request: { messages: { role: string; content: string }[]; [param: string]: unknown };
  response_raw: string | null;
  verdicts: RowVerdict[] | null;
  attempts: CallAttempt[];
  timings: CallTimings | Record<string, never>;
}

export const ListCallsInputSchema = z.object({
  page: int({ min: 1, max: 100_000 }).default(1),
  pageSize: int({ min: 1, max: 200 }).default(50),
  status: z.enum(AI_CALL_STATUSES).optional(),
  kind: z.enum(AI_CALL_KINDS).optional(),
  mode: z.enum(AI_MODES).optional(),
  import_id: idSchema.optional(),
  /** Matches the model, the company, the error text, a row id or the call's id. */
  search: text({ max: 200 }).optional(),
});
export type ListCallsInput = z.input<typeof ListCallsInputSchema>;

export interface AiCallPage {
  items: AiCallSummary[];
  total: number;
  page: number;
  pageSize: number;
}

export const ReplayInputSchema = z.object({
  id: idSchema,
  /** Replacement text per layer; a layer left out is sent as it was. */
  layers: z.partialRecord(z.enum(LAYER_KEYS), z.string().max(200_000)).default({}),
  model: text({ max: 200 }).optional(),
});
export type ReplayInput = z.input<typeof ReplayInputSchema>;

export interface TestConnectionStep {
  step: "connect" | "auth" | "models" | "model" | "structured";
  label: string;
  ok: boolean;
  detail: string;
  ms: number;
}
export interface TestConnectionResult {
  ok: boolean;
  configured: boolean;
  base_url: string | null;
  model: string | null;
  models: string[];
  mode: AiMode | null;
  steps: TestConnectionStep[];
  call_id: number | null;
  message: string;
}

export const AI_NOT_CONFIGURED = "AI validation is not configured: set AI_BASE_URL and AI_MODEL";

export interface AiStatus {
  configured: boolean;
  message: string | null;
  base_url: string | null;
  model: string | null;
  concurrency: number;
  rows_per_call: number;
  price_input_per_mtok: number;
  price_output_per_mtok: number;
  retention_days: number;
}

/** Cost in the prices' currency: tokens × price per million. */
export function callCost(tokensIn: number, tokensOut: number, inPerMTok: number, outPerMTok: number): number {
  return Math.round(((tokensIn * inPerMTok + tokensOut * outPerMTok) / 1_000_000) * 1e6) / 1e6;
}

/** `POST /api/product-imports/{id}/ai-validate`: the rows to check (row ids), or every row. */
export const ImportAiRowsSchema = z.object({
  rows: z
    .array(idSchema)
    .min(1, "rows: name at least one row, or leave it out for all")
    .max(50_000)
    .optional(),
});

/** Accept or dismiss AI suggestions: one cell (row_id and field), a column (field) or all. */
export const SuggestionActionSchema = z
  .object({
    action: z.enum(["accept", "dismiss"], { error: "must be accept or dismiss" }),
    row_id: idSchema.optional(),
    field: text({ max: 50 }).optional(),
  })
  .refine((v) => !v.row_id || v.field, { message: "field: name the field of the row", path: ["field"] });
