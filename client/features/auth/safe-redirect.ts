/**
 * The `redirect` query parameter holds the originally requested path and query string. Only a
 * path on this site is followed (never `//host` or `https://…`), so the login page cannot be used
 * to send someone elsewhere.
 */
export function safeRedirect(target: string | undefined | null): string {
  if (!target?.startsWith("/") || target.startsWith("//") || target.startsWith("/\\")) return "/";
  return target;
}
