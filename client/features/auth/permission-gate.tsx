import { useAuth } from "@client/lib/session.ts";
import type { Requirement } from "@shared/permissions.ts";
import type { ReactNode } from "react";
import { canAccess } from "./access.ts";

export interface PermissionGateProps {
  need: Requirement;
  adminOnly?: boolean;
  /** What a user without the permission sees instead. */
  fallback?: ReactNode;
  children: ReactNode;
}

/** Renders its children only for a user holding `need` (a missing user renders nothing). */
export function PermissionGate({ need, adminOnly, fallback = null, children }: PermissionGateProps) {
  const { user } = useAuth();
  if (!user) return null;
  return canAccess(user, need, { adminOnly }) ? children : fallback;
}
