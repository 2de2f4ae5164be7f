// The language model behind the AI step: any OpenAI-compatible chat-completions endpoint, reached
// with the official `openai` client. One call = one request body tried in the structured-output
// modes in turn (json_schema, json_object, prompt only), with bounded retries and back-off on
// timeouts, 429, 5xx and unparseable answers. Every attempt is described for the call log; the API
// key never leaves this file.
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import type { ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions";
import { AI_MODES, type AiMode, type CallAttempt, type RowVerdict } from "../../../shared/ai-validation.ts";
import type { AiConfig } from "../../config.ts";
import { AnswerParseError, parseVerdicts } from "./parse-answer.ts";

export interface ChatMessage {
  role: "system" | "user";
  content: string;
}

export interface ModelCallResult {
  ok: boolean;
  mode: AiMode | null;
  /** The body of the last request sent (messages and parameters), as sent. */
  request: Record<string, unknown>;
  responseRaw: string | null;
  verdicts: RowVerdict[] | null;
  error: string | null;
  attempts: CallAttempt[];
  tokensIn: number;
  tokensOut: number;
  /** Time spent waiting for the endpoint (all attempts), without back-off pauses. */
  modelMs: number;
  /** Time spent in back-off pauses between attempts. */
  waitMs: number;
  /**
   * The endpoint's own time for the answer, as it reports it (`openai-processing-ms`, sent by
   * OpenAI and the tests' loopback model), summed over the attempts that reported it; null when
   * none did.
   */
  serverMs: number | null;
}

export interface ModelClientOptions {
  /** Attempts per call before giving up (timeouts, 429, 5xx, unparseable answers). */
  maxAttempts: number;
  /** First back-off pause; doubled for each further attempt. */
  retryBaseMs: number;
}

const ERROR_BODY_MAX = 4000;
const RETRY_AFTER_MAX_MS = 30_000;

/** The JSON schema of the answer (strict: every property required, nothing else allowed). */
export const VERDICT_JSON_SCHEMA = {
  type: "object",
  additionalProperties: false,
  required: ["rows"],
  properties: {
    rows: {
      type: "array",
      items: {
        type: "object",
        additionalProperties: false,
        required: ["row_id", "fields"],
        properties: {
          row_id: { type: "integer" },
          fields: {
            type: "array",
            items: {
              type: "object",
              additionalProperties: false,
              required: ["field", "ok", "issue", "suggestion", "confidence"],
              properties: {
                field: { type: "string" },
                ok: { type: "boolean" },
                issue: { type: ["string", "null"] },
                suggestion: { type: ["string", "null"] },
                confidence: { type: "number" },
              },
            },
          },
        },
      },
    },
  },
} as const;

export function responseFormatFor(mode: AiMode): Record<string, unknown> | undefined {
  if (mode === "json_schema")
    return {
      type: "json_schema",
      json_schema: { name: "product_verdicts", strict: true, schema: VERDICT_JSON_SCHEMA },
    };
  if (mode === "json_object") return { type: "json_object" };
  return undefined;
}

export function requestBody(model: string, messages: ChatMessage[], mode: AiMode): Record<string, unknown> {
  const format = responseFormatFor(mode);
  return { model, messages, temperature: 0, stream: false, ...(format ? { response_format: format } : {}) };
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

export class ModelClient {
  readonly client: OpenAI;
  /** The mode each model last answered in: later calls start there instead of failing down again. */
  private readonly workingMode = new Map<string, AiMode>();

  constructor(
    readonly config: AiConfig,
    private readonly opts: ModelClientOptions,
  ) {
    this.client = new OpenAI({
      baseURL: config.baseUrl,
      // Local servers (Ollama, vLLM, LM Studio) need no key: then no Authorization header is sent.
      apiKey: config.apiKey ?? "unused",
      defaultHeaders: config.apiKey ? {} : { Authorization: null },
      timeout: config.timeoutMs,
      maxRetries: 0,
    });
  }

  /** Forgets which mode each model answered in: the next call tries json_schema first again. */
  resetModes(): void {
    this.workingMode.clear();
  }

  /** Replaces the key wherever an endpoint echoed it back (an error body, a message). */
  redact(text: string): string {
    const key = this.config.apiKey;
    return key && key.length >= 4 ? text.split(key).join("[redacted]") : text;
  }

  async listModels(signal?: AbortSignal): Promise<string[]> {
    const ids: string[] = [];
    for await (const m of this.client.models.list({ signal })) ids.push(m.id);
    return ids;
  }

  /**
   * Asks for the verdicts of `rowIds`. Never throws for the endpoint's failures: the result says
   * what happened on each attempt.
   */
  async validate(
    messages: ChatMessage[],
    rowIds: readonly number[],
    opts: { model?: string; signal?: AbortSignal } = {},
  ): Promise<ModelCallResult> {
    // The call's own signal: the client adds a listener to the signal it is given and never takes
    // it off, so a batch's one signal shared by a thousand calls would collect a thousand listeners
    // (and Node's EventTarget scans them all on every add). The batch's signal reaches this one
    // through a listener removed when the call ends.
    const own = new AbortController();
    const parent = opts.signal;
    const forward = () => own.abort();
    if (parent?.aborted) own.abort();
    else parent?.addEventListener("abort", forward, { once: true });
    try {
      return await this.attempt(messages, rowIds, opts.model ?? this.config.model, own.signal);
    } finally {
      parent?.removeEventListener("abort", forward);
    }
  }

  private async attempt(
    messages: ChatMessage[],
    rowIds: readonly number[],
    model: string,
    signal: AbortSignal,
  ): Promise<ModelCallResult> {
    const opts = { signal };
    let modeIndex = AI_MODES.indexOf(this.workingMode.get(model) ?? "json_schema");
    const attempts: CallAttempt[] = [];
    let tries = 0;
    let modelMs = 0;
    let waitMs = 0;
    let request = requestBody(model, messages, AI_MODES[modeIndex]!);
    let lastError = "";
    let lastRaw: string | null = null;
    let tokensIn = 0;
    let tokensOut = 0;
    let serverMs: number | null = null;
    const done = (ok: boolean, extra: Partial<ModelCallResult>): ModelCallResult => ({
      ok,
      mode: null,
      request,
      responseRaw: lastRaw,
      verdicts: null,
      error: ok ? null : lastError,
      attempts,
      tokensIn,
      tokensOut,
      modelMs,
      waitMs,
      serverMs,
      ...extra,
    });

    while (tries < this.opts.maxAttempts) {
      if (opts.signal?.aborted) {
        lastError = "Cancelled";
        return done(false, {});
      }
      const mode = AI_MODES[modeIndex]!;
      request = requestBody(model, messages, mode);
      const started = performance.now();
      const attempt: CallAttempt = { attempt: attempts.length + 1, mode, ms: 0, outcome: "ok" };
      attempts.push(attempt);
      let retryAfterMs: number | undefined;
      try {
        const response = await this.client.chat.completions
          .create(request as unknown as ChatCompletionCreateParamsNonStreaming, { signal: opts.signal })
          .asResponse();
        const requestId = response.headers.get("x-request-id");
        if (requestId) attempt.request_id = requestId.slice(0, 200);
        const processing = Number(response.headers.get("openai-processing-ms") ?? Number.NaN);
        if (Number.isFinite(processing)) serverMs = (serverMs ?? 0) + processing;
        const raw = await response.text();
        attempt.ms = Math.round(performance.now() - started);
        modelMs += performance.now() - started;
        lastRaw = this.redact(raw);
        let content: string;
        try {
          const body = JSON.parse(raw) as {
            choices?: { message?: { content?: string | null } }[];
            usage?: { prompt_tokens?: number; completion_tokens?: number };
          };
          tokensIn += body.usage?.prompt_tokens ?? 0;
          tokensOut += body.usage?.completion_tokens ?? 0;
          content = body.choices?.[0]?.message?.content ?? "";
        } catch {
          throw new AnswerParseError("The endpoint's response is not JSON");
        }
        const verdicts = parseVerdicts(content, rowIds);
        this.workingMode.set(model, mode);
        return done(true, { mode, verdicts });
      } catch (err) {
        if (!attempt.ms) {
          attempt.ms = Math.round(performance.now() - started);
          modelMs += performance.now() - started;
        }
        if (err instanceof APIUserAbortError || opts.signal?.aborted) {
          attempt.outcome = "cancelled";
          lastError = "Cancelled";
          return done(false, {});
        }
        if (err instanceof APIError && err.requestID && !attempt.request_id)
          attempt.request_id = err.requestID.slice(0, 200);
        const verdict = this.classify(err, mode);
        attempt.outcome = verdict.outcome;
        attempt.error = verdict.message;
        if (verdict.status !== undefined) attempt.http_status = verdict.status;
        if (verdict.body !== undefined) attempt.error_body = verdict.body;
        lastError = verdict.message;
        if (verdict.outcome === "unsupported_mode" && modeIndex < AI_MODES.length - 1) {
          modeIndex++;
          continue; // a mode the server refuses is not a failed try
        }
        tries++;
        if (!verdict.retry || tries >= this.opts.maxAttempts) return done(false, {});
        retryAfterMs = verdict.retryAfterMs;
      }
      const pause = Math.min(
        RETRY_AFTER_MAX_MS,
        retryAfterMs ?? this.opts.retryBaseMs * 2 ** (tries - 1) * (0.75 + Math.random() * 0.5),
      );
      const w0 = performance.now();
      await sleep(pause, opts.signal);
      waitMs += performance.now() - w0;
    }
    return done(false, {});
  }

  /** What went wrong, in words a person can act on, and whether another try may help. */
  classify(
    err: unknown,
    mode: AiMode,
  ): {
    outcome: string;
    message: string;
    retry: boolean;
    status?: number;
    body?: string;
    retryAfterMs?: number;
  } {
    if (err instanceof AnswerParseError)
      return { outcome: "unparseable", message: `Unparseable answer: ${err.message}`, retry: true };
    if (err instanceof APIConnectionTimeoutError)
      return {
        outcome: "timeout",
        message: `The model did not answer within ${this.config.timeoutMs} ms (AI_TIMEOUT_MS)`,
        retry: true,
      };
    if (err instanceof APIConnectionError) {
      const cause = (err.cause as { code?: string; message?: string } | undefined) ?? {};
      const code = cause.code ?? (cause as { cause?: { code?: string } }).cause?.code;
      return {
        outcome: "connection",
        message: this.redact(
          `Could not connect to ${this.config.baseUrl}${code ? ` (${code})` : ""}: ${cause.message ?? err.message}`,
        ),
        retry: true,
      };
    }
    if (err instanceof APIError && typeof err.status === "number") {
      const status = err.status;
      const body = this.redact(
        err.error !== undefined ? JSON.stringify(err.error) : (err.message ?? "").replace(/^\d+\s*/, ""),
      ).slice(0, ERROR_BODY_MAX);
      const detail = this.redact(err.message ?? "").slice(0, 300);
      if ((status === 400 || status === 422) && mode !== "prompt")
        return {
          outcome: "unsupported_mode",
          message: `The endpoint refused response_format ${mode} (HTTP ${status}): ${detail}`,
          retry: false,
          status,
          body,
        };
      if (status === 401 || status === 403)
        return {
          outcome: "auth",
          message: `The endpoint refused the credentials (HTTP ${status}): check AI_API_KEY`,
          retry: false,
          status,
          body,
        };
      if (status === 404)
        return {
          outcome: "not_found",
          message: `Model or path not found (HTTP 404): check AI_MODEL and AI_BASE_URL (${detail})`,
          retry: false,
          status,
          body,
        };
      if (status === 429) {
        const header = err.headers?.get("retry-after");
        const seconds = header ? Number(header) : Number.NaN;
        return {
          outcome: "rate_limited",
          message: `Rate limited by the endpoint (HTTP 429)`,
          retry: true,
          status,
          body,
          retryAfterMs: Number.isFinite(seconds) ? Math.max(0, seconds * 1000) : undefined,
        };
      }
      if (status === 408 || status >= 500)
        return {
          outcome: "http",
          message: `The endpoint failed (HTTP ${status})`,
          retry: true,
          status,
          body,
        };
      return {
        outcome: "http",
        message: `The endpoint refused the request (HTTP ${status}): ${detail}`,
        retry: false,
        status,
        body,
      };
    }
    const message = err instanceof Error ? err.message : String(err);
    return { outcome: "error", message: this.redact(message), retry: false };
  }
}
