import { TRPCClientError } from "@trpc/client";

interface ErrorData {
  code?: string;
  httpStatus?: number;
}

function errorData(error: unknown): ErrorData | undefined {
  if (!(error instanceof TRPCClientError)) return undefined;
  return (error.data ?? undefined) as ErrorData | undefined;
}

/** The HTTP status a tRPC error carries (spec messages that quote a status show this one). */
export function errorStatus(error: unknown): number | undefined {
  return errorData(error)?.httpStatus;
}

/** The server said the caller is not signed in (or the session ended). */
export function isUnauthorized(error: unknown): boolean {
  const data = errorData(error);
  return data?.code === "UNAUTHORIZED" || data?.httpStatus === 401;
}

/** Spec 4 "Session": a user-fetch error whose message mentions authentication, token or 401. */
export function isAuthLikeError(error: unknown): boolean {
  if (isUnauthorized(error)) return true;
  return error instanceof Error && /authentication|token|401/i.test(error.message);
}

/** The error's own text when it is an Error with a message, else the fallback. */
export function errorMessage(error: unknown, fallback: string): string {
  return error instanceof Error && error.message ? error.message : fallback;
}
