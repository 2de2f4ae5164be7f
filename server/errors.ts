// Domain errors thrown by services. One table maps them to HTTP statuses (REST adapters) and to
// tRPC codes (the router's error middleware); nothing else decides a status.
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server";

export type ErrorKind =
  | "BAD_REQUEST"
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "CONFLICT"
  | "PAYLOAD_TOO_LARGE"
  | "UNSUPPORTED_MEDIA_TYPE"
  | "TOO_MANY_REQUESTS";

export const ERROR_STATUS: Record<ErrorKind, number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
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

/** Zod-style issues → one message naming each bad field, e.g. "username: Too small". */
export function describeIssues(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  return issues
    .map((i) => (i.path.length ? `${i.path.map(String).join(".")}: ${i.message}` : i.message))
    .join("; ");
}
