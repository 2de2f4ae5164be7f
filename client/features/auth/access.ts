import type { CurrentUser } from "@shared/auth.ts";
import { hasPermission, type Requirement } from "@shared/permissions.ts";

/**
 * Spec section 6 on the client: admins may see everything; anyone else needs the permission, and
 * admin-only content stays hidden from them. A user without a permissions list gets nothing.
 */
export function canAccess(
  user: CurrentUser | null | undefined,
  need: Requirement,
  { adminOnly = false }: { adminOnly?: boolean } = {},
): boolean {
  if (!user) return false;
  if (user.is_admin) return true;
  if (adminOnly || !Array.isArray(user.permissions)) return false;
  return hasPermission(user, need);
}
