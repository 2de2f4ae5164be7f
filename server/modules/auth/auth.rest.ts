import type { FastifyInstance } from "fastify";
import { LoginInputSchema } from "../../../shared/auth.ts";
import { clearSessionCookie, setSessionCookie } from "../../http/session-cookie.ts";
import { parseBody } from "../../http/validate.ts";
import type { AppServices } from "../../services.ts";
import { login, logout } from "./auth.service.ts";

/** Legacy REST of spec section 7 "Session" under /auth-inv. */
export async function authRestRoutes(app: FastifyInstance, services: AppServices) {
  app.post("/auth-inv/login", { config: { auth: "public" } }, async (req, reply) => {
    const input = parseBody(LoginInputSchema, req.body);
    const result = await login(
      { db: services.db, config: services.config, limiter: services.loginLimiter },
      { ...input, ip: req.ip, userAgent: req.headers["user-agent"] },
    );
    setSessionCookie(req, reply, services.config, result.token, result.expiresAt);
    return { token: result.token, user: result.user };
  });

  app.get("/auth-inv/me", { config: { auth: "authenticated" } }, async (req) => {
    const { sessionId: _sessionId, ...user } = req.user!;
    return user;
  });

  app.post("/auth-inv/logout", { config: { auth: "authenticated" } }, async (req, reply) => {
    if (req.authToken) await logout(services.db, req.authToken);
    clearSessionCookie(req, reply, services.config);
    return { success: true };
  });
}
