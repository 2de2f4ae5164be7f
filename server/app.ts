import fs from "node:fs";
import path from "node:path";
import cookie from "@fastify/cookie";
import helmet from "@fastify/helmet";
import fastifyStatic from "@fastify/static";
import { type FastifyTRPCPluginOptions, fastifyTRPCPlugin } from "@trpc/server/adapters/fastify";
import Fastify, { type FastifyInstance } from "fastify";
import type { AppConfig } from "./config.ts";
import type { Database } from "./db/database.ts";
import { AppError } from "./errors.ts";
import authHooks, { isApiPath } from "./http/auth-hooks.ts";
import { clientErrorHandler, frameworkErrors, registerErrorHandling } from "./http/errors.ts";
import inputGuard from "./http/input-guard.ts";
import { aiValidationRestRoutes } from "./modules/aiValidation/aiValidation.rest.ts";
import { analyticsRestRoutes } from "./modules/analytics/analytics.rest.ts";
import { authRestRoutes } from "./modules/auth/auth.rest.ts";
import { chatRestRoutes } from "./modules/chat/chat.rest.ts";
import { configRestRoutes } from "./modules/config/config.rest.ts";
import { dashboardRestRoutes } from "./modules/dashboard/dashboard.rest.ts";
import { dataOpsRestRoutes } from "./modules/dataOps/dataOps.rest.ts";
import { discountsRestRoutes } from "./modules/discounts/discounts.rest.ts";
import { forecastingRestRoutes } from "./modules/forecasting/forecasting.rest.ts";
import { imagesRestRoutes } from "./modules/images/images.rest.ts";
import { metricsRestRoutes } from "./modules/metrics/metrics.rest.ts";
import { productImportRestRoutes } from "./modules/productImport/productImport.rest.ts";
import { promptsRestRoutes } from "./modules/prompts/prompts.rest.ts";
import { purchasingRestRoutes } from "./modules/purchasing/purchasing.rest.ts";
import { templatesRestRoutes } from "./modules/templates/templates.rest.ts";
import { usersRestRoutes } from "./modules/users/users.rest.ts";
import { type AppServices, closeServices, createServices } from "./services.ts";
import { createContextFactory } from "./trpc/context.ts";
import { type AppRouter, appRouter } from "./trpc/router.ts";

declare module "fastify" {
  interface FastifyInstance {
    services: AppServices;
  }
}

export interface BuildAppOptions {
  config: AppConfig;
  db: Database;
  /** Pino options; tests pass false. */
  logger?: boolean | object;
}

export async function buildApp({ config, db, logger }: BuildAppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    // JSON lines for log collectors; readable lines when a person watches a terminal.
    logger: logger ?? {
      level: config.logLevel,
      ...(process.stdout.isTTY
        ? { transport: { target: "pino-pretty", options: { translateTime: "SYS:HH:MM:ss" } } }
        : {}),
    },
    trustProxy: config.trustProxy,
    bodyLimit: 5 * 1024 * 1024,
    // tRPC batches put many procedure names in one path.
    routerOptions: { maxParamLength: 5000 },
    // Errors Fastify answers itself (a URL too long, a malformed request) keep the { error, message } body.
    frameworkErrors,
    clientErrorHandler,
  });
  const services = await createServices(db, config, {
    info: (m) => app.log.info(m),
    error: (obj, m) => app.log.error(obj, m),
  });
  app.addHook("onClose", () => closeServices(services));
  app.decorate("services", services);
  // Before any route plugin: child scopes copy the error handler that exists when they register.
  const indexHtml = path.join(config.clientDist, "index.html");
  const hasClient = fs.existsSync(indexHtml);
  registerErrorHandling(app, (req, reply) => {
    // Only page routes fall back to the app; a missing file (e.g. a stale asset after a deploy) is a
    // 404. A file's extension starts with a letter (.js, .woff2): /products/1.5 is a page.
    if (!hasClient || /\.[a-z][a-z0-9]*$/i.test(req.url.split("?")[0]!)) return false;
    reply.header("Cache-Control", "no-cache").type("text/html").sendFile("index.html");
    return true;
  });

  await app.register(helmet, {
    contentSecurityPolicy: {
      directives: {
        "img-src": ["'self'", "data:", "blob:"],
        "upgrade-insecure-requests": null,
      },
    },
    crossOriginEmbedderPolicy: false,
    // Plain-HTTP installs (localhost, intranet) must not be told to switch to HTTPS.
    hsts: config.cookieSecure === true,
  });
  await app.register(cookie);
  // NUL characters, non-finite numbers, malformed tRPC bodies, multipart fields: checked for every
  // route and procedure before any handler runs (docs/api.md "Input rules").
  await app.register(inputGuard);
  await app.register(authHooks, services);
  // API answers carry tokens and user data: never stored by a browser or proxy, unless a route
  // says otherwise (image files, avatars).
  app.addHook("onSend", async (req, reply, payload) => {
    if (isApiPath(req.url) && !reply.hasHeader("cache-control")) reply.header("Cache-Control", "no-store");
    return payload;
  });

  app.get("/healthz", { config: { auth: "public" } }, async () => ({ status: "ok" }));
  app.get("/readyz", { config: { auth: "public" } }, async (_req, reply) => {
    try {
      await db.prisma.$queryRaw`SELECT 1`;
      return { status: "ok", database: db.kind };
    } catch {
      return reply.status(503).send({
        status: "unavailable",
        database: db.kind,
        error: "Database unreachable",
        message: "Database unreachable",
      });
    }
  });

  await app.register(fastifyTRPCPlugin, {
    prefix: "/trpc",
    trpcOptions: {
      router: appRouter,
      createContext: createContextFactory(services),
      responseMeta({ errors }) {
        // A refused login says when to try again, as the REST route does.
        const wait = errors
          .map((e) => (e.cause instanceof AppError ? e.cause.retryAfter : undefined))
          .find(Boolean);
        return wait ? { headers: { "Retry-After": String(wait) } } : {};
      },
      onError({ error, path, req }) {
        if (error.code === "INTERNAL_SERVER_ERROR")
          req.log.error({ err: error.cause ?? error, path }, "tRPC procedure failed");
      },
    } satisfies FastifyTRPCPluginOptions<AppRouter>["trpcOptions"],
  });

  await app.register(async (scope) => authRestRoutes(scope, services));
  await app.register(async (scope) => usersRestRoutes(scope, services));
  await app.register(async (scope) => dataOpsRestRoutes(scope, services));
  await app.register(async (scope) => configRestRoutes(scope, services));
  await app.register(async (scope) => chatRestRoutes(scope, services));
  await app.register(async (scope) => templatesRestRoutes(scope, services));
  await app.register(async (scope) => promptsRestRoutes(scope, services));
  await app.register(async (scope) => imagesRestRoutes(scope, services));
  await app.register(async (scope) => metricsRestRoutes(scope, services));
  await app.register(async (scope) => discountsRestRoutes(scope, services));
  await app.register(async (scope) => dashboardRestRoutes(scope, services));
  await app.register(async (scope) => analyticsRestRoutes(scope, services));
  await app.register(async (scope) => forecastingRestRoutes(scope, services));
  await app.register(async (scope) => purchasingRestRoutes(scope, services));
  await app.register(async (scope) => productImportRestRoutes(scope, services));
  await app.register(async (scope) => aiValidationRestRoutes(scope, services));

  if (hasClient) {
    await app.declareStaticRoutes(() =>
      app.register(fastifyStatic, {
        root: config.clientDist,
        wildcard: false,
        index: false,
        setHeaders(res, filePath) {
          // Vite fingerprints everything under assets/, so it can be cached for good.
          if (filePath.includes(`${path.sep}assets${path.sep}`))
            res.header("Cache-Control", "public, max-age=31536000, immutable");
        },
      }),
    );
  }

  return app;
}
