import type { z } from "zod";
import { AppError, describeIssues } from "../errors.ts";

/**
 * Validates a REST body/query/params with a shared zod schema; a failure is a 400 naming the field
 * (`whole` names the input itself when it is of the wrong type: "body", "query", "path").
 */
export function parseBody<S extends z.ZodType>(schema: S, value: unknown, whole = "body"): z.infer<S> {
  const parsed = schema.safeParse(value ?? {});
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new AppError("BAD_REQUEST", describeIssues(parsed.error.issues, whole), first?.path.join("."));
  }
  return parsed.data;
}
