import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ZodError } from "zod";
import { AppError, describeIssues } from "../errors.ts";
import { isApiPath } from "./auth-hooks.ts";

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  429: "Too Many Requests",
  500: "Internal Server Error",
};

/** Every REST error body: { error, message } with the same text (the spec's client reads either). */
export function errorBody(text: string) {
  return { error: text, message: text };
}

export function registerErrorHandling(
  app: FastifyInstance,
  serveSpa: (req: FastifyRequest, reply: FastifyReply) => boolean,
) {
  app.setErrorHandler((err: FastifyError | AppError | ZodError, req, reply) => {
    if (err instanceof AppError) {
      if (err.retryAfter) reply.header("Retry-After", String(err.retryAfter));
      return reply.status(err.status).send(errorBody(err.message));
    }
    if (err instanceof ZodError) return reply.status(400).send(errorBody(describeIssues(err.issues)));
    const status = (err as FastifyError).statusCode ?? 500;
    if (status >= 500) {
      req.log.error({ err }, "request failed");
      return reply.status(500).send(errorBody("Internal server error"));
    }
    // Fastify's own 4xx (bad JSON, body too large, unsupported content type…) keep their text.
    return reply.status(status).send(errorBody(err.message || STATUS_TEXT[status] || "Request failed"));
  });

  app.setNotFoundHandler((req, reply) => {
    if ((req.method === "GET" || req.method === "HEAD") && !isApiPath(req.url) && serveSpa(req, reply))
      return reply;
    return reply.status(404).send(errorBody(`Not found: ${req.method} ${req.url.split("?")[0]}`));
  });
}
