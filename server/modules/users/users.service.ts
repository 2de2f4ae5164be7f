// User administration (spec sections 3, 4 "Users", 6 and 7 "Users"). Rules the server keeps
// whatever the client does: usernames unique case-insensitively, passwords required for new users,
// nobody deletes or deactivates themselves, and the last active admin stays an active admin.

import type { z } from "zod";
import type { CurrentUser } from "../../../shared/auth.ts";
import type { AdminUser, CreateUserInputSchema, UpdateUserInputSchema } from "../../../shared/users.ts";
import type { Database } from "../../db/database.ts";
import type { Prisma } from "../../db/generated/client.ts";
import { badRequest, conflict, forbidden, notFound } from "../../errors.ts";
import { endSessionsOfUser, hashPassword, normalizeUsername } from "../auth/auth.service.ts";

export interface PermissionCategory {
  category: string;
  permissions: { id: number; name: string; description: string | null; code: string }[];
}

/** Permissions grouped by category, in catalogue order (spec section 3 "Permission category"). */
export async function listPermissionCategories(db: Database): Promise<PermissionCategory[]> {
  const rows = await db.prisma.permission.findMany({
    orderBy: [{ sortOrder: "asc" }, { id: "asc" }],
    select: { id: true, name: true, description: true, code: true, category: true },
  });
  const byCategory = new Map<string, PermissionCategory>();
  for (const { category, ...permission } of rows) {
    let entry = byCategory.get(category);
    if (!entry) {
      entry = { category, permissions: [] };
      byCategory.set(category, entry);
    }
    entry.permissions.push(permission);
  }
  return [...byCategory.values()];
}

/** Who is asking: rules depend on the caller's id and admin flag. */
export type Actor = Pick<CurrentUser, "id" | "is_admin">;

// Never the password hash.
const adminUserSelect = {
  id: true,
  username: true,
  email: true,
  isAdmin: true,
  isActive: true,
  lastLogin: true,
  rocketChatUserId: true,
  createdAt: true,
  updatedAt: true,
  permissions: { select: { permission: { select: { code: true, sortOrder: true } } } },
} satisfies Prisma.UserSelect;

type SelectedAdminUser = Prisma.UserGetPayload<{ select: typeof adminUserSelect }>;

function toAdminUser(u: SelectedAdminUser): AdminUser {
  return {
    id: u.id,
    username: u.username,
    email: u.email,
    is_admin: u.isAdmin,
    is_active: u.isActive,
    last_login: u.lastLogin,
    rocket_chat_user_id: u.rocketChatUserId,
    permissions: u.permissions
      .map((p) => p.permission)
      .sort((a, b) => a.sortOrder - b.sortOrder)
      .map((p) => p.code),
    created_at: u.createdAt,
    updated_at: u.updatedAt,
  };
}

const MESSAGES = {
  notFound: (id: number) => `User ${id} not found`,
  taken: (username: string) => `Username "${username}" is already taken`,
  selfDelete: "You cannot delete your own account",
  selfDeactivate: "You cannot deactivate your own account",
  lastAdmin: "At least one active administrator must remain",
  adminOnly: "Only administrators can create, change or delete administrator accounts",
  idMismatch: "does not match the user in the path",
} as const;

export async function listUsers(db: Database): Promise<AdminUser[]> {
  const rows = await db.prisma.user.findMany({ select: adminUserSelect, orderBy: { usernameKey: "asc" } });
  return rows.map(toAdminUser);
}

export async function getUser(db: Database, id: number): Promise<AdminUser> {
  const row = await db.prisma.user.findUnique({ where: { id }, select: adminUserSelect });
  if (!row) throw notFound(MESSAGES.notFound(id));
  return toAdminUser(row);
}

type Tx = Prisma.TransactionClient;

/** Permission ids (numbers or numeric text) or codes → ids; an unknown one is a 400. */
async function resolvePermissionIds(tx: Tx, refs: readonly (number | string)[]): Promise<number[]> {
  if (refs.length === 0) return [];
  const ids = new Set<number>();
  const codes = new Set<string>();
  for (const ref of refs) {
    if (typeof ref === "number") ids.add(ref);
    else if (/^\d+$/.test(ref)) ids.add(Number(ref));
    else codes.add(ref);
  }
  const found = await tx.permission.findMany({
    where: { OR: [{ id: { in: [...ids] } }, { code: { in: [...codes] } }] },
    select: { id: true, code: true },
  });
  const missing = [
    ...[...ids].filter((id) => !found.some((p) => p.id === id)).map(String),
    ...[...codes].filter((code) => !found.some((p) => p.code === code)),
  ];
  if (missing.length) throw badRequest(`unknown permission ${missing.join(", ")}`, "permissions");
  return [...new Set(found.map((p) => p.id))];
}

async function checkChatUser(tx: Tx, chatUserId: number | null | undefined): Promise<void> {
  if (chatUserId == null) return;
  const exists = await tx.chatUser.findUnique({ where: { id: chatUserId }, select: { id: true } });
  if (!exists) throw badRequest(`unknown chat user ${chatUserId}`, "rocket_chat_user_id");
}

async function checkUsernameFree(tx: Tx, usernameKey: string, username: string, exceptId?: number) {
  const other = await tx.user.findUnique({ where: { usernameKey }, select: { id: true } });
  if (other && other.id !== exceptId) throw conflict(MESSAGES.taken(username));
}

/**
 * Locks the active admins (so two concurrent demotions cannot both pass) and refuses when `userId`
 * is the only one left.
 */
async function assertAnotherActiveAdmin(tx: Tx, userId: number): Promise<void> {
  const admins = await tx.$queryRaw<{ id: number }[]>`
    SELECT id FROM users WHERE is_admin AND is_active ORDER BY id FOR UPDATE`;
  if (!admins.some((a) => a.id !== userId)) throw conflict(MESSAGES.lastAdmin);
}

function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string }).code === "P2002";
}

/** Input as the shared schemas answer it (routers and REST adapters parse with them). */
export type CreateUserData = z.output<typeof CreateUserInputSchema>;
export type UpdateUserData = z.output<typeof UpdateUserInputSchema>;

export async function createUser(db: Database, actor: Actor, input: CreateUserData): Promise<AdminUser> {
  if (input.is_admin && !actor.is_admin) throw forbidden(MESSAGES.adminOnly);
  const usernameKey = normalizeUsername(input.username);
  const passwordHash = await hashPassword(input.password!);
  try {
    const id = await db.prisma.$transaction(async (tx) => {
      await checkUsernameFree(tx, usernameKey, input.username);
      // Admins hold every permission by definition; a list saved with the flag is dropped (spec 4).
      const permissionIds = input.is_admin ? [] : await resolvePermissionIds(tx, input.permissions);
      await checkChatUser(tx, input.rocket_chat_user_id);
      const created = await tx.user.create({
        data: {
          username: input.username,
          usernameKey,
          email: input.email || null,
          passwordHash,
          isAdmin: input.is_admin,
          isActive: input.is_active,
          rocketChatUserId: input.rocket_chat_user_id ?? null,
          permissions: { create: permissionIds.map((permissionId) => ({ permissionId })) },
        },
        select: { id: true },
      });
      return created.id;
    });
    return await getUser(db, id);
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(MESSAGES.taken(input.username));
    throw err;
  }
}

/**
 * Replaces a user's fields and permissions. A blank password keeps the current one. Deactivating
 * ends the user's sessions; permission changes apply on their next request (sessions are resolved
 * per request).
 */
export async function updateUser(
  db: Database,
  actor: Actor,
  id: number,
  input: UpdateUserData,
): Promise<AdminUser> {
  if (input.id !== undefined && input.id !== id) throw badRequest(MESSAGES.idMismatch, "id");
  const usernameKey = normalizeUsername(input.username);
  const passwordHash = input.password ? await hashPassword(input.password) : undefined;
  let endSessions = false;
  try {
    await db.prisma.$transaction(async (tx) => {
      const [target] = await tx.$queryRaw<{ id: number; is_admin: boolean; is_active: boolean }[]>`
        SELECT id, is_admin, is_active FROM users WHERE id = ${id} FOR UPDATE`;
      if (!target) throw notFound(MESSAGES.notFound(id));
      if (!actor.is_admin && (target.is_admin || input.is_admin)) throw forbidden(MESSAGES.adminOnly);
      if (id === actor.id && !input.is_active) throw conflict(MESSAGES.selfDeactivate);
      if (target.is_admin && target.is_active && (!input.is_admin || !input.is_active)) {
        await assertAnotherActiveAdmin(tx, id);
      }
      await checkUsernameFree(tx, usernameKey, input.username, id);
      const permissionIds = input.is_admin ? [] : await resolvePermissionIds(tx, input.permissions);
      await checkChatUser(tx, input.rocket_chat_user_id);
      await tx.userPermission.deleteMany({ where: { userId: id } });
      await tx.user.update({
        where: { id },
        data: {
          username: input.username,
          usernameKey,
          email: input.email || null,
          ...(passwordHash ? { passwordHash } : {}),
          isAdmin: input.is_admin,
          isActive: input.is_active,
          rocketChatUserId: input.rocket_chat_user_id ?? null,
          permissions: { create: permissionIds.map((permissionId) => ({ permissionId })) },
        },
      });
      // Deactivated, or someone else set a new password: the sessions they hold end now.
      endSessions = (target.is_active && !input.is_active) || (passwordHash !== undefined && id !== actor.id);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(MESSAGES.taken(input.username));
    throw err;
  }
  if (endSessions) await endSessionsOfUser(db.prisma, id);
  return getUser(db, id);
}

export async function deleteUser(db: Database, actor: Actor, id: number): Promise<void> {
  if (id === actor.id) throw conflict(MESSAGES.selfDelete);
  await db.prisma.$transaction(async (tx) => {
    const [target] = await tx.$queryRaw<{ id: number; is_admin: boolean; is_active: boolean }[]>`
      SELECT id, is_admin, is_active FROM users WHERE id = ${id} FOR UPDATE`;
    if (!target) throw notFound(MESSAGES.notFound(id));
    if (!actor.is_admin && target.is_admin) throw forbidden(MESSAGES.adminOnly);
    if (target.is_admin && target.is_active) await assertAnotherActiveAdmin(tx, id);
    // Permissions and sessions go with the row (ON DELETE CASCADE).
    await tx.user.delete({ where: { id } });
  });
}
