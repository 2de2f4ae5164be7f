import path from "node:path";
import { z } from "zod";

const port = z.coerce.number().int().min(0).max(65535);
const bool = z
  .enum(["0", "1", "true", "false", "yes", "no"])
  .transform((v) => v === "1" || v === "true" || v === "yes");

const EnvSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("production"),
  PORT: port.default(3000),
  HOST: z.string().min(1).default("0.0.0.0"),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL")
    .optional()
    .or(z.literal("").transform(() => undefined)),
  DATA_DIR: z.string().min(1).default("./data"),
  ADMIN_USERNAME: z.string().trim().min(3, "must be at least 3 characters").default("admin"),
  ADMIN_PASSWORD: z.string().min(6, "must be at least 6 characters").optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  SESSION_TTL_DAYS: z.coerce.number().positive().default(7),
  COOKIE_SECURE: z.enum(["auto", "true", "false"]).default("auto"),
  /** Extra origins allowed to make cookie-authenticated writes (comma-separated), besides the server's own. */
  ALLOWED_ORIGINS: z.string().default(""),
  TRUST_PROXY: bool.default(false),
  LOGIN_MAX_PER_IP: z.coerce.number().int().positive().default(30),
  LOGIN_MAX_FAILURES_PER_USER: z.coerce.number().int().positive().default(10),
  LOGIN_WINDOW_SECONDS: z.coerce.number().int().positive().default(900),
  CLIENT_DIST: z.string().default("dist/client"),
  /** Folder of CSV exports the data pipeline imports (docs/data-format.md). Default: DATA_DIR/source */
  SOURCE_DIR: z.string().min(1).optional(),
  /** On an empty database, write a demo data set into SOURCE_DIR and run a Full Reset. */
  DEMO_DATA: bool.default(true),
  /** Test hook: pause before each pipeline step so a cancel can arrive mid-run. */
  PIPELINE_STEP_DELAY_MS: z.coerce.number().int().min(0).default(0),
  /** Largest reusable image accepted, in bytes (default 10 MB). */
  IMAGE_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(10 * 1024 * 1024),
  /** Where image files go. Default: DATA_DIR/images */
  IMAGE_DIR: z.string().min(1).optional(),
});

export type AppConfig = {
  env: "development" | "production" | "test";
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  adminUsername: string;
  adminPassword: string | undefined;
  logLevel: string;
  sessionTtlMs: number;
  cookieSecure: "auto" | boolean;
  allowedOrigins: string[];
  trustProxy: boolean;
  loginLimits: { perIp: number; failuresPerUser: number; windowSeconds: number };
  clientDist: string;
  sourceDir: string;
  demoData: boolean;
  pipelineStepDelayMs: number;
  imageMaxBytes: number;
  imageDir: string;
};

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const e = parsed.data;
  return {
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    dataDir: path.resolve(e.DATA_DIR),
    adminUsername: e.ADMIN_USERNAME,
    adminPassword: e.ADMIN_PASSWORD,
    logLevel: e.LOG_LEVEL,
    sessionTtlMs: e.SESSION_TTL_DAYS * 86_400_000,
    cookieSecure: e.COOKIE_SECURE === "auto" ? "auto" : e.COOKIE_SECURE === "true",
    allowedOrigins: e.ALLOWED_ORIGINS.split(",")
      .map((s) => s.trim())
      .filter(Boolean),
    trustProxy: e.TRUST_PROXY,
    loginLimits: {
      perIp: e.LOGIN_MAX_PER_IP,
      failuresPerUser: e.LOGIN_MAX_FAILURES_PER_USER,
      windowSeconds: e.LOGIN_WINDOW_SECONDS,
    },
    clientDist: path.resolve(e.CLIENT_DIST),
    sourceDir: path.resolve(e.SOURCE_DIR ?? path.join(e.DATA_DIR, "source")),
    demoData: e.DEMO_DATA,
    pipelineStepDelayMs: e.PIPELINE_STEP_DELAY_MS,
    imageMaxBytes: e.IMAGE_MAX_BYTES,
    imageDir: path.resolve(e.IMAGE_DIR ?? path.join(e.DATA_DIR, "images")),
  };
}
