import path from "node:path";
import { z } from "zod";

const port = z.coerce.number().int().min(0).max(65535);
const bool = z
  .enum(["0", "1", "true", "false", "yes", "no"])
  .transform((v) => v === "1" || v === "true" || v === "yes");

/** Unset or empty (as `VAR=` in a compose file) both mean "not configured". */
const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === "" ? undefined : v.trim()));

/** An IANA zone name (Area/Location, or UTC): what Intl knows, and not an offset such as +01:00. */
function isIanaZone(name: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat("en", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

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
  /** The IANA time zone a source timestamp without a zone is in (docs/data-format.md). */
  SOURCE_TIMEZONE: z
    .string()
    .trim()
    .default("UTC")
    .refine(isIanaZone, "must be an IANA time zone name such as UTC, Europe/Berlin or America/New_York"),
  /** Folder of the Rocket.Chat mongoexport files the chat import reads. Default: DATA_DIR/chat-source */
  CHAT_SOURCE_DIR: z.string().min(1).optional(),
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
  /** Set → each submitted product import's export files are also written here. */
  EXPORT_DIR: z.string().min(1).optional(),
  /** Set → image files go to this S3-compatible bucket instead of IMAGE_DIR. */
  IMAGE_S3_BUCKET: optionalText.pipe(
    z
      .string()
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9._-]{1,61}[A-Za-z0-9]$/,
        "must be a bucket name (3–63 letters, digits, . _ -)",
      )
      .optional(),
  ),
  IMAGE_S3_ENDPOINT: optionalText.pipe(
    z
      .url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" })
      .refine((u) => !/[?#]/.test(u), "must not have a query or fragment")
      .optional(),
  ),
  IMAGE_S3_REGION: optionalText.pipe(z.string().optional()),
  IMAGE_S3_ACCESS_KEY_ID: optionalText,
  IMAGE_S3_SECRET_ACCESS_KEY: optionalText,
  IMAGE_S3_PREFIX: optionalText.pipe(
    z
      .string()
      .regex(/^[A-Za-z0-9._\-/]+$/, "may hold only letters, digits and . _ - /")
      .refine((p) => !p.split("/").some((s) => s === "." || s === ".."), "must not contain . or .. segments")
      .optional(),
  ),
  /** The shop's name and address printed on purchase orders (PDF, print view). */
  SHOP_NAME: z.string().trim().max(200, "at most 200 characters").default("Back Office"),
  SHOP_ADDRESS: z.string().trim().max(1000, "at most 1000 characters").default(""),
  /** Any OpenAI-compatible chat-completions endpoint, e.g. http://localhost:11434/v1 (Ollama). */
  AI_BASE_URL: optionalText.pipe(
    z
      .url({
        protocol: /^https?$/,
        error: "must be an http:// or https:// URL, e.g. http://localhost:11434/v1",
      })
      .refine((u) => !/[?#]/.test(u), "must not have a query or fragment")
      .refine((u) => !/^https?:\/\/[^/]*@/.test(u), "must not hold credentials (use AI_API_KEY)")
      .optional(),
  ),
  AI_API_KEY: optionalText,
  AI_MODEL: z
    .string()
    .optional()
    .transform((v) => (v === undefined ? undefined : v.trim()))
    .pipe(z.string().max(200, "must be at most 200 characters").optional()),
  AI_TIMEOUT_MS: z.coerce.number().int().min(1000, "must be at least 1000").max(600_000).default(60_000),
  AI_CONCURRENCY: z.coerce.number().int().min(1, "must be 1 to 64").max(64, "must be 1 to 64").default(4),
  AI_ROWS_PER_CALL: z.coerce.number().int().min(1, "must be 1 to 20").max(20, "must be 1 to 20").default(1),
  AI_PRICE_INPUT_PER_MTOK: z.coerce.number().min(0, "must be 0 or more").max(10_000).optional(),
  AI_PRICE_OUTPUT_PER_MTOK: z.coerce.number().min(0, "must be 0 or more").max(10_000).optional(),
  AI_LOG_RETENTION_DAYS: z.coerce.number().int().min(1, "must be 1 or more").max(3650).default(30),
  AI_MAX_ATTEMPTS: z.coerce.number().int().min(1, "must be 1 to 10").max(10, "must be 1 to 10").default(3),
  AI_RETRY_BASE_MS: z.coerce.number().int().min(0).max(60_000).default(500),
});

const S3_REQUIRED = ["IMAGE_S3_ENDPOINT", "IMAGE_S3_ACCESS_KEY_ID", "IMAGE_S3_SECRET_ACCESS_KEY"] as const;
const S3_VARIABLES = [...S3_REQUIRED, "IMAGE_S3_REGION", "IMAGE_S3_PREFIX"] as const;

/** A bucket needs an endpoint and credentials; S3 settings without a bucket are a mistake, not a no-op. */
const EnvSchemaChecked = EnvSchema.superRefine((e, ctx) => {
  if (e.AI_BASE_URL && !e.AI_MODEL)
    ctx.addIssue({
      code: "custom",
      path: ["AI_MODEL"],
      message: "must name the model when AI_BASE_URL is set (e.g. llama3.1 or gpt-4o-mini)",
    });
  if (!e.AI_BASE_URL && e.AI_MODEL)
    ctx.addIssue({ code: "custom", path: ["AI_BASE_URL"], message: "required when AI_MODEL is set" });
  if (e.IMAGE_S3_BUCKET) {
    for (const name of S3_REQUIRED)
      if (!e[name])
        ctx.addIssue({ code: "custom", path: [name], message: "required when IMAGE_S3_BUCKET is set" });
  } else {
    const set = S3_VARIABLES.filter((name) => e[name]);
    if (set.length)
      ctx.addIssue({
        code: "custom",
        path: ["IMAGE_S3_BUCKET"],
        message: `required when ${set.join(", ")} ${set.length === 1 ? "is" : "are"} set`,
      });
  }
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
  /** SOURCE_TIMEZONE */
  sourceTimeZone: string;
  chatSourceDir: string;
  /** Where submitted imports' export files are written (products.csv, product_categories.csv, images/); null: only downloads. */
  exportDir: string | null;
  demoData: boolean;
  pipelineStepDelayMs: number;
  imageMaxBytes: number;
  imageDir: string;
  /** SHOP_NAME and SHOP_ADDRESS (lines separated by "\n" or ";") */
  shop: { name: string; address: string };
  /** Set when IMAGE_S3_BUCKET is: the bucket replaces IMAGE_DIR. */
  imageS3: {
    endpoint: string;
    bucket: string;
    region: string;
    accessKeyId: string;
    secretAccessKey: string;
    /** Empty or ending with "/". */
    prefix: string;
  } | null;
  /** Null when AI_BASE_URL is unset: the AI step is skipped and says so. */
  ai: AiConfig | null;
  aiLogRetentionDays: number;
  /** Tries per model call (timeouts, 429, 5xx, unparseable answers). */
  aiMaxAttempts: number;
  /** First back-off pause between tries; doubled each time. */
  aiRetryBaseMs: number;
};

export interface AiConfig {
  baseUrl: string;
  apiKey: string | undefined;
  model: string;
  timeoutMs: number;
  concurrency: number;
  rowsPerCall: number;
  /** Currency units per million tokens; 0 when unset. */
  priceInputPerMTok: number;
  priceOutputPerMTok: number;
}

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const parsed = EnvSchemaChecked.safeParse(env);
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
    sourceTimeZone: e.SOURCE_TIMEZONE,
    chatSourceDir: path.resolve(e.CHAT_SOURCE_DIR ?? path.join(e.DATA_DIR, "chat-source")),
    exportDir: e.EXPORT_DIR ? path.resolve(e.EXPORT_DIR) : null,
    demoData: e.DEMO_DATA,
    pipelineStepDelayMs: e.PIPELINE_STEP_DELAY_MS,
    imageMaxBytes: e.IMAGE_MAX_BYTES,
    imageDir: path.resolve(e.IMAGE_DIR ?? path.join(e.DATA_DIR, "images")),
    shop: {
      name: e.SHOP_NAME || "Back Office",
      address: e.SHOP_ADDRESS.replace(/\\n/g, "\n")
        .split(/\n|;/)
        .map((l) => l.trim())
        .filter(Boolean)
        .join("\n"),
    },
    imageS3: e.IMAGE_S3_BUCKET
      ? {
          endpoint: e.IMAGE_S3_ENDPOINT!,
          bucket: e.IMAGE_S3_BUCKET,
          region: e.IMAGE_S3_REGION ?? "us-east-1",
          accessKeyId: e.IMAGE_S3_ACCESS_KEY_ID!,
          secretAccessKey: e.IMAGE_S3_SECRET_ACCESS_KEY!,
          prefix: e.IMAGE_S3_PREFIX
            ? `${e.IMAGE_S3_PREFIX.replace(/^\/+|\/+$/g, "")}/`.replace(/^\/$/, "")
            : "",
        }
      : null,
    ai:
      e.AI_BASE_URL && e.AI_MODEL
        ? {
            baseUrl: e.AI_BASE_URL.replace(/\/+$/, ""),
            apiKey: e.AI_API_KEY,
            model: e.AI_MODEL,
            timeoutMs: e.AI_TIMEOUT_MS,
            concurrency: e.AI_CONCURRENCY,
            rowsPerCall: e.AI_ROWS_PER_CALL,
            priceInputPerMTok: e.AI_PRICE_INPUT_PER_MTOK ?? 0,
            priceOutputPerMTok: e.AI_PRICE_OUTPUT_PER_MTOK ?? 0,
          }
        : null,
    aiLogRetentionDays: e.AI_LOG_RETENTION_DAYS,
    aiMaxAttempts: e.AI_MAX_ATTEMPTS,
    aiRetryBaseMs: e.AI_RETRY_BASE_MS,
  };
}
