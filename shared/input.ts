// Bounded input fields: every number a procedure or route accepts is checked against the column it
// ends up in, and every text against its length, with messages that say what is wrong
// ("supplier: must be a whole number from 0 to 2147483647", "name: at most 200 characters").
// NUL characters and non-finite numbers are refused before any schema runs, for every input
// (server/http/input-guard.ts); these helpers add what only the field's column knows.
import { z } from "zod";

/** PostgreSQL `integer` (int4), the type of every Int column of the schema. */
export const INT4_MIN = -2_147_483_648;
export const INT4_MAX = 2_147_483_647;

/** At most this many characters of any input are echoed back in a message. */
export const ECHO_MAX = 200;

/** Quotes a piece of input for a message, cut to ECHO_MAX characters. */
export function echo(value: unknown): string {
  const text = String(value);
  return JSON.stringify(text.length > ECHO_MAX ? `${text.slice(0, ECHO_MAX)}…` : text);
}

/** Numeric text as it may come in a query string, a path or a form field. */
const NUMERIC_TEXT = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

function toNumber(v: unknown): unknown {
  if (typeof v === "string") {
    const s = v.trim();
    return NUMERIC_TEXT.test(s) ? Number(s) : v;
  }
  return v;
}

export interface IntOptions {
  min?: number;
  max?: number;
  /** Accept numeric text too (query strings, paths, form fields). Default true. */
  coerce?: boolean;
}

/**
 * A whole number that fits an `integer` column (or the narrower min/max given). The message names
 * the range: "must be a whole number from 1 to 2147483647".
 */
export function int({ min = INT4_MIN, max = INT4_MAX, coerce = true }: IntOptions = {}) {
  const message = `must be a whole number from ${min} to ${max}`;
  const schema = z
    .number({ error: message })
    .refine((n) => Number.isInteger(n) && n >= min && n <= max, { message, abort: true });
  return coerce ? z.preprocess(toNumber, schema) : schema;
}

/** A record id / pid: a whole number from 1 to 2147483647 (numeric text accepted). */
export const idSchema = int({ min: 1 });

export interface DecimalOptions {
  min?: number;
  coerce?: boolean;
}

/**
 * A number that fits a `numeric(precision, scale)` column: its magnitude below
 * 10^(precision − scale); more decimals than `scale` are rounded by the database.
 */
export function decimal(precision: number, scale: number, { min = 0, coerce = true }: DecimalOptions = {}) {
  const max = 10 ** (precision - scale) - 10 ** -scale;
  const maxText = max.toFixed(scale);
  const message = `must be a number from ${min} to ${maxText}`;
  const schema = z
    .number({ error: message })
    .refine((n) => Number.isFinite(n) && n >= min && Math.round(n * 10 ** scale) / 10 ** scale <= max, {
      message,
      abort: true,
    });
  return coerce ? z.preprocess(toNumber, schema) : schema;
}

export interface TextOptions {
  max: number;
  /** When set, the text must not be blank, and this is the message when it is missing or blank. */
  required?: string;
  /** Trim surrounding white space first (default true). */
  trim?: boolean;
}

/**
 * A text of at most `max` characters ("at most 200 characters"). With `required`, missing or
 * blank text gets that message; a too-long one still says how long it may be.
 */
export function text({ max, required, trim = true }: TextOptions) {
  const base = z.string({ error: required ?? "must be text" });
  const trimmed = trim ? base.trim() : base;
  const bounded = trimmed.max(max, { error: `at most ${max} characters` });
  return required ? bounded.min(1, { error: required }) : bounded;
}
