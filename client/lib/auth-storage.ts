// Where the session lives in the browser (spec sections 4 and 9): the token in local storage, so
// it survives a restart; the flag isLoggedIn="true" in session storage, for this tab only.
import { SESSION_FLAG_KEY, TOKEN_STORAGE_KEY } from "@shared/auth.ts";

// Storage can throw (disabled cookies, private modes); a broken storage means "signed out".
function read(storage: () => Storage, key: string): string | null {
  try {
    return storage().getItem(key);
  } catch {
    return null;
  }
}

function write(storage: () => Storage, key: string, value: string | null): void {
  try {
    if (value === null) storage().removeItem(key);
    else storage().setItem(key, value);
  } catch {
    // Nothing to do: the next read treats the session as absent.
  }
}

const local = () => window.localStorage;
const session = () => window.sessionStorage;

export const getToken = (): string | null => read(local, TOKEN_STORAGE_KEY);
export const setToken = (token: string): void => write(local, TOKEN_STORAGE_KEY, token);

export const hasSessionFlag = (): boolean => read(session, SESSION_FLAG_KEY) === "true";
export const setSessionFlag = (): void => write(session, SESSION_FLAG_KEY, "true");

export function clearStoredSession(): void {
  write(local, TOKEN_STORAGE_KEY, null);
  write(session, SESSION_FLAG_KEY, null);
}
