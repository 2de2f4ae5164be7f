import type { FastifyInstance, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { SESSION_COOKIE } from "../../shared/auth.ts";
import { hasPermission, type Requirement } from "../../shared/permissions.ts";
import { AppError } from "../errors.ts";
import { type AuthUser, resolveSession } from "../modules/auth/auth.service.ts";
import { resolveDevice } from "../modules/dashboard/small.service.ts";
import type { AppServices } from "../services.ts";
import { setSessionCookie } from "./session-cookie.ts";

declare module "fastify" {
  interface FastifyContextConfig {
    /** Every route declares what it needs; see docs/permissions.md. */
    auth?: Requirement | "public";
    /** A device link's token (small_devices) also opens this route; nothing else does. */
    device?: boolean;
  }
  interface FastifyInstance {
    /** Every route as Fastify registered it, with the permission it declares (read by tests and docs). */
    routeCatalogue: RouteEntry[];
    /** Registers the static-file plugin's routes as public (they cannot carry route config). */
    declareStaticRoutes(register: () => PromiseLike<unknown>): Promise<void>;
  }
  interface FastifyRequest {
    user: AuthUser | null;
    authToken: string | null;
    /** The device link that opened this request (routes with config.device). */
    device: { id: number; name: string } | null;
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

/** The server's own origin is the request's scheme and host together: https://host is not http://host. */
function isAllowedOrigin(req: FastifyRequest, origin: string, allowed: readonly string[]): boolean {
  if (allowed.includes(origin)) return true;
  try {
    const url = new URL(origin);
    return url.host === req.headers.host && url.protocol === `${req.protocol}:`;
  } catch {
    return false;
  }
}

async function authHooks(app: FastifyInstance, services: AppServices) {
  app.decorateRequest("user", null);
  app.decorateRequest("authToken", null);
  app.decorateRequest("device", null);

  // A route that forgets to declare its permission fails at start, not in production. Only the
  // routes of the static-file plugin (registered inside `declareStaticRoutes`) and tRPC's own
  // (whose procedures declare theirs) are exempt.
  const catalogue: RouteEntry[] = [];
  app.decorate("routeCatalogue", catalogue);
  const staticRegistration = { active: false };
  app.decorate("declareStaticRoutes", async (register: () => PromiseLike<unknown>) => {
    staticRegistration.active = true;
    try {
      await register();
    } finally {
      staticRegistration.active = false;
    }
  });
  app.addHook("onRoute", (route) => {
    const url = route.url;
    let auth = route.config?.auth;
    if (auth === undefined && staticRegistration.active) auth = "public";
    if (auth === undefined && !url.startsWith("/trpc")) {
      throw new Error(`Route ${route.method} ${url} does not declare config.auth`);
    }
    for (const method of [route.method].flat()) catalogue.push({ method, url, auth });
  });

  app.addHook("onRequest", async (req, reply) => {
    const need = req.routeOptions.config?.auth;
    const isTrpc = req.url.startsWith("/trpc/");
    // Public routes (login, health, static files, the app's page) need no session lookup.
    if (need === "public" || (need === undefined && !isTrpc)) {
      checkOrigin(req, false);
      return;
    }
    const bearer = bearerToken(req);
    const cookie = req.cookies[SESSION_COOKIE];
    checkOrigin(req, !bearer && Boolean(cookie));

    const token = bearer ?? cookie ?? null;
    if (token) {
      const session = await resolveSession(services.db, services.config, token);
      if (session) {
        req.user = session.user;
        req.authToken = token;
        // While this request is open (a progress stream may stay open for hours), it ends with its session.
        const unwatch = services.sessions.watch(session.user.sessionId, () => {
          reply.raw.destroy();
          req.raw.destroy();
        });
        reply.raw.once("close", unwatch);
        // The session slid forward: so does the cookie (subscriptions and SSE rely on it).
        if (session.touched && !bearer)
          setSessionCookie(req, reply, services.config, token, session.expiresAt);
      }
    }

    if (need === undefined) return; // tRPC: each procedure checks its own requirement
    if (!req.user && bearer && req.routeOptions.config?.device) {
      req.device = await resolveDevice(services.db, bearer);
      if (req.device) return;
    }
    if (!req.user) throw new AppError("UNAUTHORIZED", "Authentication required");
    if (!hasPermission(req.user, need))
      throw new AppError("FORBIDDEN", "You don't have permission to do this");
  });

  /**
   * CSRF. A state-changing request authenticated by the cookie must come from this server's own
   * origin (Origin, else Referer; "null" or neither is refused). Bearer-token callers are scripts,
   * not browsers riding an ambient cookie; a foreign Origin is refused for them too.
   */
  function checkOrigin(req: FastifyRequest, byCookie: boolean) {
    if (SAFE_METHODS.has(req.method)) return;
    const origin = req.headers.origin ?? (req.headers.referer ? safeOrigin(req.headers.referer) : undefined);
    const ok =
      origin !== undefined &&
      origin !== "null" &&
      isAllowedOrigin(req, origin, services.config.allowedOrigins);
    if (ok || (!byCookie && (origin === undefined || origin === "null"))) return;
    throw new AppError(
      "FORBIDDEN",
      "Cross-site request refused: the Origin header does not match this server",
    );
  }
}

function safeOrigin(referer: string): string | undefined {
  try {
    return new URL(referer).origin;
  } catch {
    return undefined;
  }
}

export default fp(authHooks, { name: "auth-hooks", dependencies: ["@fastify/cookie"] });
