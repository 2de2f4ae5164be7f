import { createHash, randomBytes } from "node:crypto";
import { hash, verify } from "@node-rs/argon2";
import { RateLimiterMemory, type RateLimiterRes } from "rate-limiter-flexible";
import type { CurrentUser, LoginResponse } from "../../../shared/auth.ts";
import { PERMISSION_CATALOGUE } from "../../../shared/permissions.ts";
import type { AppConfig } from "../../config.ts";
import type { Database, PrismaClient } from "../../db/database.ts";
import { AppError, tooManyRequests } from "../../errors.ts";

/** The signed-in user as every procedure and route sees it. */
export interface AuthUser extends CurrentUser {
  sessionId: number;
}

const INVALID_CREDENTIALS = "Invalid username or password";
// Refresh a session's sliding expiry at most this often, so reads don't write on every request.
const TOUCH_INTERVAL_MS = 5 * 60_000;

export function normalizeUsername(username: string): string {
  return username.trim().toLowerCase();
}

export function hashPassword(password: string): Promise<string> {
  // @node-rs/argon2 defaults to argon2id with OWASP-recommended cost (19 MiB, t=2, p=1).
  return hash(password);
}

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** 256 random bits, URL-safe. */
export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

const userSelect = {
  id: true,
  username: true,
  email: true,
  isAdmin: true,
  isActive: true,
  rocketChatUserId: true,
  permissions: { select: { permission: { select: { code: true } } } },
} as const;

type SelectedUser = {
  id: number;
  username: string;
  email: string | null;
  isAdmin: boolean;
  rocketChatUserId: number | null;
  permissions: { permission: { code: string } }[];
};

function toCurrentUser(u: SelectedUser): CurrentUser {
  return {
    id: u.id,
    username: u.username,
    email: u.email,
    is_admin: u.isAdmin,
    permissions: u.permissions.map((p) => p.permission.code).sort(),
    rocket_chat_user_id: u.rocketChatUserId,
  };
}

/** IPv6 clients own whole /64 networks: count them as one address. */
function clientKey(ip: string): string {
  if (!ip.includes(":") || ip.startsWith("::ffff:")) return ip.replace(/^::ffff:/, "");
  return ip.split(":").slice(0, 4).join(":");
}

/**
 * Only failed sign-ins count: per address (LOGIN_MAX_PER_IP), per username and address, and per
 * username from anywhere. An office behind one address can sign in as often as it needs.
 */
export class LoginLimiter {
  /** Failed attempts from one address (IPv6: one /64). */
  private readonly perIp: RateLimiterMemory;
  private readonly failures: RateLimiterMemory;
  /** Failures for one username from anywhere: stops guessing spread over many addresses. */
  private readonly failuresAnywhere: RateLimiterMemory;
  constructor(limits: AppConfig["loginLimits"]) {
    this.perIp = new RateLimiterMemory({
      keyPrefix: "login_ip",
      points: limits.perIp,
      duration: limits.windowSeconds,
    });
    this.failures = new RateLimiterMemory({
      keyPrefix: "login_fail",
      points: limits.failuresPerUser,
      duration: limits.windowSeconds,
    });
    this.failuresAnywhere = new RateLimiterMemory({
      keyPrefix: "login_fail_any",
      points: limits.failuresPerUser * 5,
      duration: limits.windowSeconds,
    });
  }

  /** Refuses when this address, or this username, has failed too often in the window. */
  async check(rawIp: string, usernameKey: string): Promise<void> {
    const ip = clientKey(rawIp);
    const fromIp = await this.perIp.get(ip);
    if (fromIp && fromIp.consumedPoints >= this.perIp.points) throw limited(fromIp);
    const failed = await this.failures.get(`${usernameKey}|${ip}`);
    if (failed && failed.consumedPoints >= this.failures.points) throw limited(failed);
    const anywhere = await this.failuresAnywhere.get(usernameKey);
    if (anywhere && anywhere.consumedPoints >= this.failuresAnywhere.points) throw limited(anywhere);
  }

  async recordFailure(ip: string, usernameKey: string): Promise<void> {
    await this.perIp.penalty(clientKey(ip), 1);
    await this.failures.penalty(`${usernameKey}|${clientKey(ip)}`, 1);
    await this.failuresAnywhere.penalty(usernameKey, 1);
  }

  async recordSuccess(ip: string, usernameKey: string): Promise<void> {
    await this.failures.delete(`${usernameKey}|${clientKey(ip)}`);
  }
}

function limited(res: RateLimiterRes): AppError {
  const seconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  const wait = seconds >= 120 ? `${Math.ceil(seconds / 60)} minutes` : `${seconds} seconds`;
  return tooManyRequests(`Too many login attempts. Please try again in ${wait}.`, seconds);
}

// Verifying against a fixed hash when the user does not exist keeps response times alike, so
// timing does not reveal which usernames exist.
let dummyHash: Promise<string> | undefined;

export interface LoginDeps {
  db: Database;
  config: AppConfig;
  limiter: LoginLimiter;
}

export async function login(
  deps: LoginDeps,
  input: { username: string; password: string; ip: string; userAgent?: string },
): Promise<LoginResponse & { expiresAt: Date }> {
  const { prisma } = deps.db;
  const key = normalizeUsername(input.username);
  await deps.limiter.check(input.ip, key);

  const found = await prisma.user.findUnique({
    where: { usernameKey: key },
    select: { ...userSelect, passwordHash: true },
  });
  dummyHash ??= hashPassword(newToken());
  const ok = await verify(found?.passwordHash ?? (await dummyHash), input.password).catch(() => false);
  if (!found || !ok) {
    await deps.limiter.recordFailure(input.ip, key);
    throw new AppError("UNAUTHORIZED", INVALID_CREDENTIALS);
  }
  await deps.limiter.recordSuccess(input.ip, key);
  if (!found.isActive) {
    throw new AppError("FORBIDDEN", "This account is inactive. Please contact an administrator.");
  }

  const token = newToken();
  const now = new Date();
  const expiresAt = new Date(now.getTime() + deps.config.sessionTtlMs);
  await prisma.$transaction([
    prisma.session.create({
      data: {
        tokenHash: hashToken(token),
        userId: found.id,
        expiresAt,
        ip: input.ip,
        userAgent: input.userAgent?.slice(0, 500),
      },
    }),
    prisma.user.update({ where: { id: found.id }, data: { lastLogin: now } }),
  ]);
  return { token, user: toCurrentUser(found), expiresAt };
}

const SESSION_SQL = `
  SELECT s.id, s.expires_at, s.last_seen_at, u.id AS user_id, u.username, u.email, u.is_admin,
         u.is_active, u.rocket_chat_user_id,
         COALESCE((SELECT array_agg(p.code ORDER BY p.code COLLATE "C") FROM user_permissions up
                   JOIN permissions p ON p.id = up.permission_id WHERE up.user_id = u.id), '{}') AS codes
  FROM sessions s JOIN users u ON u.id = s.user_id
  WHERE s.token_hash = $1`;

/** The user behind a token, or null when it is unknown, expired, or the user is inactive. */
export async function resolveSession(
  db: Database,
  config: AppConfig,
  token: string,
): Promise<{ user: AuthUser; expiresAt: Date; touched: boolean } | null> {
  if (!token || token.length > 200) return null;
  // Every authenticated request runs this: one query (session, user and permission codes together).
  // On embedded PGlite, while a data run's transaction holds the one connection, the lookup reads
  // through that transaction instead of waiting for the run's end: otherwise nobody could cancel it.
  const held = db.kind === "pglite" ? (db.heldTransaction?.() ?? null) : null;
  let session: SessionRow | undefined;
  let borrowed = false;
  if (held) {
    const rows = await held.query<SessionRow>(SESSION_SQL, [hashToken(token)]).catch(() => null);
    if (rows) {
      [session] = rows;
      borrowed = true;
    }
  }
  if (!borrowed) [session] = await db.prisma.$queryRawUnsafe<SessionRow[]>(SESSION_SQL, hashToken(token));
  const now = Date.now();
  if (!session || session.expires_at.getTime() <= now || !session.is_active) return null;
  let expiresAt = session.expires_at;
  // (Not touched through a run's transaction: it could roll back; the next request touches it.)
  const touched = !borrowed && now - session.last_seen_at.getTime() > TOUCH_INTERVAL_MS;
  if (touched) {
    expiresAt = new Date(now + config.sessionTtlMs);
    await db.prisma.session.update({
      where: { id: session.id },
      data: { lastSeenAt: new Date(now), expiresAt },
    });
  }
  const user: CurrentUser = {
    id: session.user_id,
    username: session.username,
    email: session.email,
    is_admin: session.is_admin,
    permissions: session.codes,
    rocket_chat_user_id: session.rocket_chat_user_id,
  };
  return { user: { ...user, sessionId: session.id }, expiresAt, touched };
}

interface SessionRow {
  id: number;
  expires_at: Date;
  last_seen_at: Date;
  user_id: number;
  username: string;
  email: string | null;
  is_admin: boolean;
  is_active: boolean;
  rocket_chat_user_id: number | null;
  codes: string[];
}

export async function logout(db: Database, token: string): Promise<void> {
  await db.prisma.session.deleteMany({ where: { tokenHash: hashToken(token) } });
}

export async function endSessionsOfUser(prisma: PrismaClient, userId: number): Promise<void> {
  await prisma.session.deleteMany({ where: { userId } });
}

export async function deleteExpiredSessions(db: Database): Promise<number> {
  const { count } = await db.prisma.session.deleteMany({ where: { expiresAt: { lt: new Date() } } });
  return count;
}

/** Brings the permissions table in line with the catalogue in shared/permissions.ts. */
export async function syncPermissionCatalogue(db: Database): Promise<void> {
  const rows = PERMISSION_CATALOGUE.map((p, i) => ({ ...p, sortOrder: i }));
  await db.prisma.$executeRaw`
    INSERT INTO permissions (code, name, description, category, sort_order)
    SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
      AS r(code text, name text, description text, category text, "sortOrder" int)
    ON CONFLICT (code) DO UPDATE
      SET name = EXCLUDED.name, description = EXCLUDED.description,
          category = EXCLUDED.category, sort_order = EXCLUDED.sort_order`;
}

/**
 * On a database without users, creates the admin. Returns the generated password when none was
 * configured, so the caller can print it once.
 */
export async function ensureAdminUser(
  db: Database,
  config: Pick<AppConfig, "adminUsername" | "adminPassword">,
): Promise<{ created: boolean; generatedPassword?: string }> {
  if ((await db.prisma.user.count()) > 0) return { created: false };
  const generatedPassword = config.adminPassword ? undefined : randomBytes(18).toString("base64url");
  const password = config.adminPassword ?? generatedPassword!;
  try {
    await db.prisma.user.create({
      data: {
        username: config.adminUsername,
        usernameKey: normalizeUsername(config.adminUsername),
        passwordHash: await hashPassword(password),
        isAdmin: true,
        isActive: true,
      },
    });
  } catch (err) {
    // Another instance starting at the same moment created it first.
    if ((err as { code?: string }).code === "P2002") return { created: false };
    throw err;
  }
  return { created: true, generatedPassword };
}

export async function getCurrentUser(db: Database, userId: number): Promise<CurrentUser | null> {
  const u = await db.prisma.user.findUnique({ where: { id: userId }, select: userSelect });
  return u ? toCurrentUser(u) : null;
}
