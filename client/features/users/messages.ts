// The texts of spec section 8 "Users": what the permission-error panel shows for each failure.
import { errorStatus } from "@client/lib/errors.ts";
import { TRPCClientError } from "@trpc/client";

export const USERS_TEXT = {
  noToken: "Authentication required. Please log in again.",
  authFailed: "Authentication failed. Please log in again.",
  listForbidden: "You don't have permission to access the user list.",
  permissionsForbidden: "You don't have permission to access permissions.",
  editForbidden: "You don't have permission to edit users.",
  invalidResponse: "Invalid response from server",
  deleteFailed: "Failed to delete user",
  deleteQuestion: "Are you sure you want to delete this user?",
  adminPermissions:
    "Administrators have access to all permissions by default. Individual permissions cannot be edited for admin users.",
  adminChat: "Admin users have access to all chat rooms by default",
  noPermissionsWarning:
    "Warning: This user has no permissions selected. They won't be able to access anything.",
  noPermissionsAvailable: "No permissions available",
} as const;

/** The status a failure carries, or "network error" when no response came back. */
function statusOf(error: unknown): string {
  return String(errorStatus(error) ?? "network error");
}

/** The server answered, with an error text of its own (rather than a transport failure). */
function serverText(error: unknown): string | undefined {
  return error instanceof TRPCClientError && error.data && error.message ? error.message : undefined;
}

/** A reply that could not be read (not JSON, or not what tRPC sends). */
function isUnreadable(error: unknown): boolean {
  if (!(error instanceof TRPCClientError) || error.data) return false;
  return (
    error.cause instanceof SyntaxError || /JSON|Unexpected token|Unable to transform/i.test(error.message)
  );
}

export function listErrorText(error: unknown, what: "users" | "permissions"): string {
  const status = errorStatus(error);
  if (status === 401) return USERS_TEXT.authFailed;
  if (status === 403) return what === "users" ? USERS_TEXT.listForbidden : USERS_TEXT.permissionsForbidden;
  return serverText(error) ?? `Failed to fetch ${what} (${statusOf(error)})`;
}

export function loadUserErrorText(error: unknown): string {
  const status = errorStatus(error);
  if (status === 401) return USERS_TEXT.authFailed;
  if (status === 403) return USERS_TEXT.editForbidden;
  return `Failed to fetch user details (${statusOf(error)})`;
}

export function saveErrorText(error: unknown): string {
  if (isUnreadable(error)) return USERS_TEXT.invalidResponse;
  return serverText(error) ?? `Failed to save user (${statusOf(error)})`;
}

/** Spec section 8: a failed delete reads exactly 'Failed to delete user'. */
export function deleteErrorText(_error: unknown): string {
  return USERS_TEXT.deleteFailed;
}
