import type { Duplex } from "node:stream";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ZodError } from "zod";
import { ECHO_MAX } from "../../shared/input.ts";
import { AppError, capEcho as capped, describeIssues } from "../errors.ts";
import { isApiPath } from "./auth-hooks.ts";

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  413: "Payload Too Large",
  414: "URI Too Long",
  415: "Unsupported Media Type",
  408: "Request Timeout",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
};

/** Every REST error body: { error, message } with the same text (the spec's client reads either). */
export function errorBody(text: string) {
  return { error: text, message: text };
}

/** SQLSTATE (or Prisma code) of a database error, wherever the driver adapter put it. */
function databaseCode(err: unknown): string | undefined {
  const e = err as {
    code?: unknown;
    cause?: { code?: unknown; originalCode?: unknown };
    meta?: { code?: unknown; driverAdapterError?: { cause?: { originalCode?: unknown; kind?: unknown } } };
  };
  const candidates = [
    e?.meta?.driverAdapterError?.cause?.originalCode,
    e?.cause?.originalCode,
    e?.meta?.code,
    e?.cause?.code,
    e?.code,
  ];
  for (const c of candidates) if (typeof c === "string" && /^([0-9A-Z]{5}|P\d{4})$/.test(c)) return c;
  return undefined;
}

function databaseMessage(err: unknown): string {
  const e = err as {
    message?: string;
    meta?: { driverAdapterError?: { cause?: { originalMessage?: string } } };
    cause?: { originalMessage?: string; message?: string };
  };
  const text =
    e?.meta?.driverAdapterError?.cause?.originalMessage ??
    e?.cause?.originalMessage ??
    e?.cause?.message ??
    e?.message ??
    "";
  const last = text.trim().split("\n").pop() ?? "";
  return last.length > ECHO_MAX ? `${last.slice(0, ECHO_MAX)}…` : last;
}

/**
 * The last line of defence for values no schema bounded: the database refusing a value for its
 * column (a number out of its type's range, a decimal beyond its precision, text too long for
 * its type, an invalid representation) is the caller's input, so a 400, never a 500.
 */
export function inputRefusedByDatabase(err: unknown): string | null {
  const code = databaseCode(err);
  if (!code) return null;
  // SQLSTATE class 22: data exception. Prisma: P2000 value too long, P2020 out of range, P2033 number too large.
  if (/^22/.test(code) || code === "P2000" || code === "P2020" || code === "P2033")
    return `a value does not fit its column (${databaseMessage(err) || code})`;
  return null;
}

const BUSBOY_MESSAGE =
  /^(multipart: |unexpected end of (form|multipart data)|malformed part header|part terminated early)/i;

/** A request body that is not well-formed multipart/form-data: 400 "multipart: …". */
function multipartProblem(err: FastifyError): { status: number; text: string } | null {
  const message = err.message ?? "";
  if (err.code === "FST_INVALID_MULTIPART_CONTENT_TYPE")
    return { status: 400, text: "multipart: the request is not multipart/form-data" };
  if (err.code === "FST_PROTO_VIOLATION" || err.code === "FST_INVALID_JSON_FIELD_ERROR")
    return { status: 400, text: `multipart: ${message}` };
  if (err.code === "FST_PARTS_LIMIT" || err.code === "FST_FILES_LIMIT" || err.code === "FST_FIELDS_LIMIT")
    return { status: 413, text: `multipart: ${message}` };
  if (!err.code && BUSBOY_MESSAGE.test(message)) {
    const reason = message.replace(/^multipart: /i, "");
    return { status: 400, text: `multipart: ${reason.charAt(0).toLowerCase()}${reason.slice(1)}` };
  }
  return null;
}

/** Fastify's own errors before any route runs (a bad URL, a path parameter too long): same body. */
export function frameworkErrors(err: FastifyError, _req: FastifyRequest, reply: FastifyReply) {
  const status = err.code === "FST_ERR_MAX_PARAM_LENGTH" ? 414 : (err.statusCode ?? 400);
  const text =
    status === 414
      ? "The request URL is too long"
      : `The request URL is not valid: ${STATUS_TEXT[status] ?? status}`;
  reply.status(status).send(errorBody(text));
}

/** A request Node could not even parse (headers too large, a broken request line): same body, then close. */
export function clientErrorHandler(err: NodeJS.ErrnoException & { rawPacket?: unknown }, socket: Duplex) {
  if (!socket.writable) return void socket.destroy(err);
  const status =
    err.code === "HPE_HEADER_OVERFLOW" ? 431 : err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400;
  const text =
    status === 431
      ? "The request headers (or its URL) are too large"
      : status === 408
        ? "The request took too long to arrive"
        : "The request is not valid HTTP";
  const body = JSON.stringify(errorBody(text));
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? "Bad Request"}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export function registerErrorHandling(
  app: FastifyInstance,
  serveSpa: (req: FastifyRequest, reply: FastifyReply) => boolean,
) {
  app.setErrorHandler((err: FastifyError | AppError | ZodError, req, reply) => {
    if (err instanceof AppError) {
      if (err.retryAfter) reply.header("Retry-After", String(err.retryAfter));
      return reply.status(err.status).send(errorBody(capped(err.message)));
    }
    if (err instanceof ZodError) return reply.status(400).send(errorBody(describeIssues(err.issues, "body")));
    const multipart = multipartProblem(err as FastifyError);
    if (multipart) return reply.status(multipart.status).send(errorBody(multipart.text));
    const refused = inputRefusedByDatabase(err);
    if (refused) {
      req.log.warn({ err }, "input refused by the database");
      return reply.status(400).send(errorBody(refused));
    }
    const status = (err as FastifyError).statusCode ?? 500;
    if (status >= 500) {
      req.log.error({ err }, "request failed");
      return reply.status(500).send(errorBody("Internal server error"));
    }
    // Fastify's own 4xx (bad JSON, body too large, unsupported content type…) keep their text.
    return reply
      .status(status)
      .send(errorBody(capped(err.message || STATUS_TEXT[status] || "Request failed")));
  });

  app.setNotFoundHandler((req, reply) => {
    if ((req.method === "GET" || req.method === "HEAD") && !isApiPath(req.url) && serveSpa(req, reply))
      return reply;
    const path = req.url.split("?")[0]!;
    const shown = path.length > ECHO_MAX ? `${path.slice(0, ECHO_MAX)}…` : path;
    return reply.status(404).send(errorBody(`Not found: ${req.method} ${shown}`));
  });
}
