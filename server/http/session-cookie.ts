import type { FastifyReply, FastifyRequest } from "fastify";
import { SESSION_COOKIE } from "../../shared/auth.ts";
import type { AppConfig } from "../config.ts";

function isSecure(req: FastifyRequest, config: AppConfig): boolean {
  return config.cookieSecure === "auto" ? req.protocol === "https" : config.cookieSecure;
}

export function setSessionCookie(
  req: FastifyRequest,
  reply: FastifyReply,
  config: AppConfig,
  token: string,
  expiresAt: Date,
): void {
  reply.setCookie(SESSION_COOKIE, token, {
    path: "/",
    httpOnly: true,
    sameSite: "lax",
    secure: isSecure(req, config),
    expires: expiresAt,
  });
}

export function clearSessionCookie(req: FastifyRequest, reply: FastifyReply, config: AppConfig): void {
  reply.clearCookie(SESSION_COOKIE, {
    path: "/",
    httpOnly: true,
    sameSite: "lax",
    secure: isSecure(req, config),
  });
}
