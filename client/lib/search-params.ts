// Building blocks of the pages' URL state (TanStack Router's validateSearch, with zod/mini).
import * as z from "zod/mini";

/** A bad value of one parameter is dropped (its default applies) instead of failing the page. */
export const optionalParam = <T extends z.ZodMiniType>(t: T) => z.catch(z.optional(t), undefined);

/**
 * A free-text parameter (a search, a room, a message id). Coerced: the router parses `?q=4580` as
 * the number 4580, which a plain string schema would drop.
 */
export const textParam = (max = 200, min = 0) =>
  optionalParam(z.coerce.string().check(z.minLength(min), z.maxLength(max)));
