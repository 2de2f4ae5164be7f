import type { FastifyInstance, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { SESSION_COOKIE } from "../../shared/auth.ts";
import { hasPermission, type Requirement } from "../../shared/permissions.ts";
import { AppError } from "../errors.ts";
import { type AuthUser, resolveSession } from "../modules/auth/auth.service.ts";
import type { AppServices } from "../services.ts";

declare module "fastify" {
  interface FastifyContextConfig {
    /** Every route declares what it needs; see docs/permissions.md. */
    auth?: Requirement | "public";
  }
  interface FastifyInstance {
    /** Every route as Fastify registered it, with the permission it declares (read by tests and docs). */
    routeCatalogue: RouteEntry[];
  }
  interface FastifyRequest {
    user: AuthUser | null;
    authToken: string | null;
  }
}

/** Paths whose routes must declare `config.auth` (tRPC procedures declare theirs in meta). */
export const API_PREFIXES = ["/api", "/auth-inv", "/chat-api", "/csv", "/config", "/trpc"] as const;

export function isApiPath(url: string): boolean {
  const path = url.split("?")[0]!;
  return API_PREFIXES.some((p) => path === p || path.startsWith(`${p}/`));
}

export interface RouteEntry {
  method: string;
  url: string;
  auth: Requirement | "public" | undefined;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

function bearerToken(req: FastifyRequest): string | null {
  const header = req.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match ? match[1]! : null;
}

function isAllowedOrigin(req: FastifyRequest, origin: string, allowed: readonly string[]): boolean {
  if (allowed.includes(origin)) return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

async function authHooks(app: FastifyInstance, services: AppServices) {
  app.decorateRequest("user", null);
  app.decorateRequest("authToken", null);

  // A route that forgets to declare its permission fails at start, not in production.
  const catalogue: RouteEntry[] = [];
  app.decorate("routeCatalogue", catalogue);
  app.addHook("onRoute", (route) => {
    const url = route.url;
    for (const method of [route.method].flat()) catalogue.push({ method, url, auth: route.config?.auth });
    if (url.startsWith("/trpc")) return;
    if (route.config?.auth === undefined && (isApiPath(url) || url === "/healthz" || url === "/readyz")) {
      throw new Error(`Route ${route.method} ${url} does not declare config.auth`);
    }
  });

  app.addHook("onRequest", async (req) => {
    // CSRF: the cookie is SameSite=Lax, and no state-changing request is accepted from a foreign
    // origin. Scripts (no Origin/Referer) are not browsers, so they cannot be forged this way.
    if (!SAFE_METHODS.has(req.method)) {
      const origin =
        req.headers.origin ?? (req.headers.referer ? safeOrigin(req.headers.referer) : undefined);
      if (origin && origin !== "null" && !isAllowedOrigin(req, origin, services.config.allowedOrigins)) {
        throw new AppError(
          "FORBIDDEN",
          "Cross-site request refused: the Origin header does not match this server",
        );
      }
    }

    const token = bearerToken(req) ?? req.cookies[SESSION_COOKIE] ?? null;
    if (token) {
      const session = await resolveSession(services.db, services.config, token);
      if (session) {
        req.user = session.user;
        req.authToken = token;
      }
    }

    const need = req.routeOptions.config?.auth;
    if (need === undefined || need === "public") return;
    if (!req.user) throw new AppError("UNAUTHORIZED", "Authentication required");
    if (!hasPermission(req.user, need))
      throw new AppError("FORBIDDEN", "You don't have permission to do this");
  });
}

function safeOrigin(referer: string): string | undefined {
  try {
    return new URL(referer).origin;
  } catch {
    return undefined;
  }
}

export default fp(authHooks, { name: "auth-hooks", dependencies: ["@fastify/cookie"] });
