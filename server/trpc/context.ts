import type { FastifyReply, FastifyRequest } from "fastify";
import type { AuthUser } from "../modules/auth/auth.service.ts";
import type { AppServices } from "../services.ts";

export interface Context extends AppServices {
  user: AuthUser | null;
  /** The token this request authenticated with (bearer or cookie). */
  token: string | null;
  ip: string;
  userAgent: string | undefined;
  req?: FastifyRequest;
  res?: FastifyReply;
}

/** Fastify already resolved the session in its onRequest hook (server/http/auth-hooks.ts). */
export function createContextFactory(services: AppServices) {
  return ({ req, res }: { req: FastifyRequest; res: FastifyReply }): Context => ({
    ...services,
    user: req.user,
    token: req.authToken,
    ip: req.ip,
    userAgent: req.headers["user-agent"],
    req,
    res,
  });
}
