// Domain errors thrown by services. One table maps them to HTTP statuses (REST adapters) and to
// tRPC codes (the router's error middleware); nothing else decides a status.
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server";
import { ECHO_MAX } from "../shared/input.ts";

export type ErrorKind =
  | "BAD_REQUEST"
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "METHOD_NOT_ALLOWED"
  | "CONFLICT"
  | "PAYLOAD_TOO_LARGE"
  | "UNSUPPORTED_MEDIA_TYPE"
  | "TOO_MANY_REQUESTS";

export const ERROR_STATUS: Record<ErrorKind, number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  TOO_MANY_REQUESTS: 429,
};

export const ERROR_TRPC_CODE: Record<ErrorKind, TRPC_ERROR_CODE_KEY> = {
  BAD_REQUEST: "BAD_REQUEST",
  UNAUTHORIZED: "UNAUTHORIZED",
  FORBIDDEN: "FORBIDDEN",
  NOT_FOUND: "NOT_FOUND",
  METHOD_NOT_ALLOWED: "METHOD_NOT_SUPPORTED",
  CONFLICT: "CONFLICT",
  PAYLOAD_TOO_LARGE: "PAYLOAD_TOO_LARGE",
  UNSUPPORTED_MEDIA_TYPE: "UNSUPPORTED_MEDIA_TYPE",
  TOO_MANY_REQUESTS: "TOO_MANY_REQUESTS",
};

export class AppError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    /** The input field at fault, for 400s. */
    readonly field?: string,
    /** Seconds until a retry may succeed, for 429s. */
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = "AppError";
  }
  get status(): number {
    return ERROR_STATUS[this.kind];
  }
}

export const badRequest = (message: string, field?: string) =>
  new AppError("BAD_REQUEST", field && !message.startsWith(field) ? `${field}: ${message}` : message, field);
export const unauthorized = (message = "Authentication required") => new AppError("UNAUTHORIZED", message);
export const forbidden = (message = "You don't have permission to do this") =>
  new AppError("FORBIDDEN", message);
export const notFound = (message: string) => new AppError("NOT_FOUND", message);
export const conflict = (message: string) => new AppError("CONFLICT", message);
export const tooManyRequests = (message: string, retryAfter?: number) =>
  new AppError("TOO_MANY_REQUESTS", message, undefined, retryAfter);

/**
 * Zod-style issues → one message naming each bad field, e.g. "username: at most 100 characters".
 * An issue about the whole input (no path) names it as `whole` ("body", "input"), and a type
 * mismatch says what was expected: "body: expected an object, received text".
 */
export function describeIssues(
  issues: readonly { path: readonly PropertyKey[]; message: string; code?: string; expected?: unknown }[],
  whole = "input",
): string {
  // The same words once: a blank date fails both its format and its calendar check.
  return [
    ...new Set(
      issues.map((i) => {
        const field = i.path.length ? i.path.map(String).join(".") : whole;
        return `${field}: ${issueText(i)}`;
      }),
    ),
  ].join("; ");
}

const RECEIVED: Record<string, string> = {
  string: "text",
  number: "a number",
  boolean: "true/false",
  object: "an object",
  array: "an array",
};
const EXPECTED: Record<string, string> = {
  object: "an object",
  array: "an array",
  string: "text",
  number: "a number",
  boolean: "true or false",
};

/** Zod 4's default type message ("Invalid input: expected object, received string") in plain words. */
function issueText(i: { message: string; code?: string; expected?: unknown }): string {
  const m = /^Invalid input: expected (\w+), received (\w+)$/.exec(i.message);
  if (i.code === "invalid_type" && m) {
    const expected = EXPECTED[m[1]!] ?? m[1]!;
    if (m[2] === "undefined") return `is required (${expected})`;
    return `expected ${expected}, received ${RECEIVED[m[2]!] ?? m[2]}`;
  }
  return i.message;
}

/**
 * A message that may quote the caller's input: any quoted part longer than ECHO_MAX characters is
 * cut, so no answer echoes more than that of what was sent (services quote with echo() too).
 */
export function capEcho(text: string): string {
  return text.replace(
    /(["'])([^"']{201,})\1/g,
    (_m, q: string, inner: string) => `${q}${inner.slice(0, ECHO_MAX)}…${q}`,
  );
}
