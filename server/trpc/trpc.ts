import { initTRPC, TRPCError } from "@trpc/server";
import superjson from "superjson";
import { ZodError } from "zod";
import { hasPermission, type Requirement } from "../../shared/permissions.ts";
import { AppError, badRequest, capEcho, describeIssues, ERROR_TRPC_CODE } from "../errors.ts";
import { inputRefusedByDatabase } from "../http/errors.ts";
import { findInputProblem } from "../http/input-guard.ts";
import type { Context } from "./context.ts";

export interface Meta {
  /** What the procedure needs: "public", "authenticated", a permission code, or any of several. */
  auth: Requirement | "public";
}

const t = initTRPC
  .context<Context>()
  .meta<Meta>()
  .create({
    transformer: superjson,
    errorFormatter({ shape, error }) {
      const { stack: _stack, ...data } = shape.data;
      // Input validation: one readable message naming each bad field.
      if (error.code === "BAD_REQUEST" && error.cause instanceof ZodError) {
        const field = error.cause.issues[0]?.path.join(".") ?? null;
        return { ...shape, message: describeIssues(error.cause.issues, "input"), data: { ...data, field } };
      }
      // Never leak internals (SQL, stack traces) to callers; the server log has them.
      if (error.code === "INTERNAL_SERVER_ERROR")
        return { ...shape, message: "Internal server error", data: { ...data, field: null } };
      const field = error.cause instanceof AppError ? (error.cause.field ?? null) : null;
      return { ...shape, message: capEcho(shape.message), data: { ...data, field } };
    },
  });

/** Services throw AppError; this turns it into the TRPCError with the matching code. */
const mapDomainErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.cause instanceof AppError) {
    const cause = result.error.cause;
    throw new TRPCError({ code: ERROR_TRPC_CODE[cause.kind], message: cause.message, cause });
  }
  // A value the database refused for its column is the caller's input: 400, not 500.
  const refused = !result.ok ? inputRefusedByDatabase(result.error.cause) : null;
  if (refused && !result.ok)
    throw new TRPCError({ code: "BAD_REQUEST", message: refused, cause: result.error.cause });
  return result;
});

/**
 * Every procedure's raw input, however it arrived, passes the input guard (server/http/input-guard.ts:
 * no NUL character, no infinite number) before its schema runs: a 400 naming the field.
 */
const guardInput = t.middleware(async ({ getRawInput, next }) => {
  const problem = findInputProblem(await getRawInput().catch(() => undefined));
  if (problem) throw badRequest(problem.message, problem.field || "input");
  return next();
});

const base = t.procedure.use(mapDomainErrors).use(guardInput);

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const middleware = t.middleware;

export const publicProcedure = base.meta({ auth: "public" });

function guard(need: Requirement) {
  return t.middleware(({ ctx, next }) => {
    if (!ctx.user) throw new TRPCError({ code: "UNAUTHORIZED", message: "Authentication required" });
    if (!hasPermission(ctx.user, need)) {
      throw new TRPCError({ code: "FORBIDDEN", message: "You don't have permission to do this" });
    }
    return next({ ctx: { ...ctx, user: ctx.user } });
  });
}

export const authedProcedure = base.meta({ auth: "authenticated" }).use(guard("authenticated"));

/** A procedure that needs one permission code, or any one of several. Admins pass all. */
export function permissionProcedure(need: Exclude<Requirement, "authenticated">) {
  return base.meta({ auth: need }).use(guard(need));
}
