// A real HTTP server on loopback that speaks the OpenAI chat-completions protocol (streaming off)
// and the models list, answering from fixtures the test picks: the language model of the tests.
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface SeenRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: ChatBody | null;
}

export interface ChatBody {
  model: string;
  messages: { role: string; content: string }[];
  response_format?: { type: string };
  [k: string]: unknown;
}

export interface Reply {
  status?: number;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as is (text/plain unless headers say otherwise). */
  text?: string;
  headers?: Record<string, string>;
  delayMs?: number;
}

export type Behaviour = (req: {
  body: ChatBody;
  n: number;
  path: string;
  headers: http.IncomingHttpHeaders;
}) => Reply;

export interface FakeModel {
  /** Base URL for AI_BASE_URL, ending in /v1. */
  url: string;
  requests: SeenRequest[];
  /** How chat completions are answered from now on (n counts chat requests from 1). */
  behave(fn: Behaviour): void;
  models: string[];
  /** Answers to GET /v1/models (default: the list above). */
  modelsReply: Reply | null;
  /** Delay added to every chat answer (ms). */
  latencyMs: number;
  close(): Promise<void>;
}

/** The rows the app sent, read back from the user message's last section (one JSON object per line). */
export function rowsOf(body: ChatBody): Record<string, unknown>[] {
  const user = body.messages.find((m) => m.role === "user")?.content ?? "";
  const section = user.split("## Rows to check").at(-1) ?? "";
  return section
    .split("\n")
    .filter((l) => l.trim().startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const titleCase = (s: string) => s.replace(/\b\p{L}/gu, (c) => c.toUpperCase());

/**
 * The fixture's judgement: every field is fine except a title written all in lower case (suggest
 * title case) and a price of 0 (suggest nothing, flag it).
 */
export function verdictsFor(body: ChatBody) {
  return {
    rows: rowsOf(body).map(({ row_id, ...values }) => ({
      row_id,
      fields: Object.entries(values).map(([field, value]) => {
        if (field === "title" && typeof value === "string" && value === value.toLowerCase())
          return {
            field,
            ok: false,
            issue: "Title should be in title case",
            suggestion: titleCase(value),
            confidence: 0.9,
          };
        if (field === "price" && Number(value) === 0)
          return {
            field,
            ok: false,
            issue: "A price of 0 is almost certainly a mistake",
            suggestion: null,
            confidence: 0.8,
          };
        return { field, ok: true, issue: null, suggestion: null, confidence: 0.95 };
      }),
    })),
  };
}

export function completion(
  content: string,
  usage = { prompt_tokens: 1000, completion_tokens: 200 },
  model = "fake",
) {
  return {
    id: "chatcmpl-fake",
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}

/** Good verdicts in whatever mode was asked. */
export const goodVerdicts: Behaviour = ({ body }) => ({
  json: completion(JSON.stringify(verdictsFor(body)), undefined, body.model),
});

export async function startFakeModel(): Promise<FakeModel> {
  let behaviour: Behaviour = goodVerdicts;
  let chatCount = 0;
  const sockets = new Set<import("node:net").Socket>();
  const fake: FakeModel = {
    url: "",
    requests: [],
    behave(fn) {
      behaviour = fn;
      chatCount = 0;
    },
    models: ["fake-model", "other-model"],
    modelsReply: null,
    latencyMs: 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  // Like OpenAI, the answer says how long the server took with it (`openai-processing-ms`: from
  // the request read to the answer sent, the test's delay included).
  // Each chat answer also carries the request's id (`x-request-id`, as OpenAI's do) and the
  // moment it was handed to the socket on the machine's monotonic clock (`x-answer-sent-hr`, in
  // ns, as process.hrtime.bigint() reads it in every process), for the AI bench.
  const send = (res: http.ServerResponse, reply: Reply, since?: number, requestId?: string) => {
    const status = reply.status ?? 200;
    const body = reply.json !== undefined ? JSON.stringify(reply.json) : (reply.text ?? "");
    const headers: Record<string, string> = {
      "content-type": reply.json !== undefined ? "application/json" : "text/plain",
      ...(since !== undefined ? { "openai-processing-ms": (performance.now() - since).toFixed(3) } : {}),
      ...(requestId ? { "x-request-id": requestId } : {}),
      ...reply.headers,
    };
    if (requestId) headers["x-answer-sent-hr"] = String(process.hrtime.bigint());
    res.writeHead(status, headers);
    res.end(body);
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const since = performance.now();
      const raw = Buffer.concat(chunks).toString("utf8");
      const path = (req.url ?? "").split("?")[0]!;
      let body: ChatBody | null = null;
      try {
        body = raw ? (JSON.parse(raw) as ChatBody) : null;
      } catch {
        body = null;
      }
      fake.requests.push({ method: req.method ?? "", path, headers: req.headers, body });
      if (req.method === "GET" && path === "/v1/models") {
        return send(
          res,
          fake.modelsReply ?? {
            json: {
              object: "list",
              data: fake.models.map((id) => ({ id, object: "model", created: 0, owned_by: "test" })),
            },
          },
        );
      }
      if (req.method === "POST" && path === "/v1/chat/completions" && body) {
        chatCount++;
        const reply = behaviour({ body, n: chatCount, path, headers: req.headers });
        const requestId = `req_fake_${chatCount}`;
        const delay = (reply.delayMs ?? 0) + fake.latencyMs;
        if (delay > 0) {
          const t = setTimeout(() => !res.destroyed && send(res, reply, since, requestId), delay);
          res.on("close", () => clearTimeout(t));
          return;
        }
        return send(res, reply, since, requestId);
      }
      send(res, {
        status: 404,
        json: { error: { message: `Unknown path ${path}`, type: "invalid_request_error" } },
      });
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return fake;
}
