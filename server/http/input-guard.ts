// The checks every input passes before any route handler or tRPC procedure sees it, so no
// procedure or route has to remember them (docs/api.md "Input rules"):
// - no NUL character (U+0000) in any text or key: PostgreSQL cannot store one, so it would fail
//   deep inside a query; refused here as a 400 naming the field;
// - no number that is not finite (JSON's 1e400 parses to Infinity);
// - a tRPC POST body that is not valid JSON is a 400 before any procedure runs (tRPC reads the
//   body lazily, so a procedure without input would otherwise run on a broken body);
// - /trpc/* answers only GET and POST (405 with Allow otherwise);
// - multipart fields and file names get the same checks as JSON (req.parts(), req.file(),
//   req.files(), req.formData() are wrapped), and a broken multipart body is a 400 "multipart: …"
//   (server/http/errors.ts).
// Route params, query strings and REST bodies are checked by the Fastify hook below; tRPC inputs,
// however they arrive (query string, body, batch, server-side caller), by the middleware every
// procedure is built on (server/trpc/trpc.ts → inputGuardMiddleware).
import type { FastifyInstance, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { AppError, badRequest } from "../errors.ts";

export interface InputProblem {
  /** Dotted path of the offending value ("" = the whole input). */
  field: string;
  message: string;
}

const NUL = "\u0000";
export const NUL_MESSAGE = "must not contain a NUL character (\\u0000)";
const MAX_NODES = 200_000;

/** Records and lists (whatever their prototype: query strings come as null-prototype objects); never streams, buffers, dates. */
function isWalkable(v: object): boolean {
  if (Array.isArray(v)) return true;
  if (ArrayBuffer.isView(v) || v instanceof Date || v instanceof Map || v instanceof Set) return false;
  return typeof (v as { pipe?: unknown }).pipe !== "function";
}

/**
 * The first value in `input` that no procedure may receive: text or a key with a NUL character,
 * or a number that is not finite. Walks plain objects and arrays only (never streams or buffers).
 */
export function findInputProblem(input: unknown, base = ""): InputProblem | null {
  let budget = MAX_NODES;
  const seen = new WeakSet<object>();
  const join = (path: string, key: string | number) => (path ? `${path}.${key}` : String(key));
  const walk = (v: unknown, path: string, depth: number): InputProblem | null => {
    if (--budget < 0 || depth > 64) return null;
    if (typeof v === "string") return v.includes(NUL) ? { field: path, message: NUL_MESSAGE } : null;
    if (typeof v === "number")
      return Number.isFinite(v) || Number.isNaN(v)
        ? null
        : { field: path, message: "must be a finite number" };
    if (!v || typeof v !== "object" || !isWalkable(v) || seen.has(v)) return null;
    seen.add(v);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const p = walk(v[i], join(path, i), depth + 1);
        if (p) return p;
      }
      return null;
    }
    for (const [key, value] of Object.entries(v)) {
      if (key.includes(NUL))
        return { field: join(path, key.replaceAll(NUL, "\\u0000")), message: NUL_MESSAGE };
      const p = walk(value, join(path, key), depth + 1);
      if (p) return p;
    }
    return null;
  };
  return walk(input, base, 0);
}

/** Throws the 400 for a problem found in `input` (field named, or `what` for the whole input). */
export function assertCleanInput(input: unknown, what: string, base = ""): void {
  const problem = findInputProblem(input, base);
  if (problem) throw badRequest(problem.message, problem.field || what);
}

export const TRPC_METHODS = ["GET", "POST"] as const;

const isTrpc = (req: FastifyRequest) => req.url.startsWith("/trpc/") || req.url === "/trpc";

type MultipartPart = {
  type: "file" | "field";
  fieldname: string;
  filename?: string;
  value?: unknown;
  fields?: Record<string, unknown>;
};

function checkPart(part: MultipartPart | undefined): void {
  if (!part) return;
  const name = part.fieldname ?? "";
  if (name.includes(NUL)) throw badRequest(NUL_MESSAGE, "multipart field name");
  if (part.type === "file") {
    if (part.filename?.includes(NUL)) throw badRequest(NUL_MESSAGE, `${name}: file name`);
  } else {
    assertCleanInput(part.value, name, name);
  }
}

/** Wraps the multipart readers @fastify/multipart put on a request so every part is checked. */
function guardMultipart(req: FastifyRequest): void {
  const r = req as unknown as Record<string, unknown>;
  const parts = r.parts as ((...a: unknown[]) => AsyncIterable<MultipartPart>) | undefined;
  if (typeof parts !== "function") return;
  r.parts = function (this: unknown, ...args: unknown[]) {
    const it = parts.apply(this, args);
    return (async function* () {
      for await (const part of it) {
        checkPart(part);
        yield part;
      }
    })();
  };
  const files = r.files as ((...a: unknown[]) => AsyncIterable<MultipartPart>) | undefined;
  if (typeof files === "function") {
    r.files = function (this: unknown, ...args: unknown[]) {
      const it = files.apply(this, args);
      return (async function* () {
        for await (const part of it) {
          checkPart(part);
          yield part;
        }
      })();
    };
  }
  const file = r.file as ((...a: unknown[]) => Promise<MultipartPart | undefined>) | undefined;
  if (typeof file === "function") {
    r.file = async function (this: unknown, ...args: unknown[]) {
      const part = await file.apply(this, args);
      checkPart(part);
      for (const f of Object.values(part?.fields ?? {}))
        for (const each of [f].flat() as MultipartPart[]) if (each !== part) checkPart(each);
      return part;
    };
  }
}

async function inputGuard(app: FastifyInstance) {
  app.addHook("onRequest", async (req, reply) => {
    if (isTrpc(req) && !(TRPC_METHODS as readonly string[]).includes(req.method)) {
      reply.header("Allow", TRPC_METHODS.join(", "));
      throw new AppError(
        "METHOD_NOT_ALLOWED",
        `Method ${req.method} is not allowed here; use ${TRPC_METHODS.join(" or ")}`,
      );
    }
  });

  // preHandler: after every body parser (including multipart's attachFieldsToBody) has run.
  app.addHook("preHandler", async (req) => {
    assertCleanInput(req.params, "path");
    assertCleanInput(req.query, "query");
    if (isTrpc(req)) {
      // tRPC parses its body itself, lazily; a body that is not JSON must stop here. (Its content
      // is checked per procedure, by inputGuardMiddleware, where the field names are known.)
      if (req.method === "POST" && typeof req.body === "string" && req.body.trim() !== "") {
        try {
          JSON.parse(req.body);
        } catch (err) {
          throw badRequest(`the request body is not valid JSON (${(err as Error).message})`);
        }
      }
      const input = (req.query as Record<string, unknown> | undefined)?.input;
      if (typeof input === "string") {
        try {
          JSON.parse(input);
        } catch (err) {
          throw badRequest(`is not valid JSON (${(err as Error).message})`, "input");
        }
      }
    } else {
      assertCleanInput(req.body, "body");
    }
    if (req.isMultipart?.()) guardMultipart(req);
  });
}

export default fp(inputGuard, { name: "input-guard" });
