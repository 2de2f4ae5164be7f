// The session of spec section 4, kept outside React so route guards, the query cache and
// components share one source of truth (components read it through useSyncExternalStore).
import type { CurrentUser, LoginInput } from "@shared/auth.ts";
import { clearStoredSession, getToken, hasSessionFlag, setSessionFlag, setToken } from "./auth-storage.ts";
import { errorMessage, isAuthLikeError } from "./errors.ts";
import type { AppTrpcClient } from "./trpc.ts";

/** "no-pages": the user signed in but may open no page, so the session was ended at once. */
export type SessionEndReason = "logout" | "expired" | "no-pages";

export interface AuthState {
  user: CurrentUser | null;
  /** Mirrors the isLoggedIn flag; false once the session ends. */
  signedIn: boolean;
  /** Why the last session ended; a logout leads to /login without a redirect parameter. */
  endedBy: SessionEndReason | null;
  isLoading: boolean;
  error: string | null;
}

export interface AuthStoreOptions {
  /** Runs when the signed-in user goes away or changes, e.g. to drop the previous user's cached data. */
  onUserChange?: () => void;
}

export class AuthStore {
  #state: AuthState;
  readonly #listeners = new Set<() => void>();
  #userRequest: Promise<CurrentUser | null> | null = null;
  #verifyRequest: Promise<boolean> | null = null;

  constructor(
    private readonly client: AppTrpcClient,
    private readonly options: AuthStoreOptions = {},
  ) {
    this.#state = { user: null, signedIn: hasSessionFlag(), endedBy: null, isLoading: false, error: null };
  }

  subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  getSnapshot = (): AuthState => this.#state;

  get user(): CurrentUser | null {
    return this.#state.user;
  }

  #set(patch: Partial<AuthState>): void {
    this.#state = { ...this.#state, ...patch };
    for (const listener of this.#listeners) listener();
  }

  /** Signs in; on failure throws an Error whose message is the server's text, else 'Login failed'. */
  async login(input: LoginInput): Promise<CurrentUser> {
    this.#set({ isLoading: true, error: null });
    try {
      const { token, user } = await this.client.auth.login.mutate(input);
      if (this.#state.user && this.#state.user.id !== user.id) this.options.onUserChange?.();
      setToken(token);
      setSessionFlag();
      this.#set({ user, signedIn: true, endedBy: null, isLoading: false });
      return user;
    } catch (error) {
      const message = errorMessage(error, "Login failed");
      this.#set({ isLoading: false, error: message });
      throw error instanceof Error ? error : new Error(message);
    }
  }

  /**
   * What the route guard runs before any page of the layout: a stored token in a tab without the
   * session flag is verified once; then the current user is loaded if missing. Resolves to whether
   * the session is (still) valid. Synchronous when there is nothing to fetch.
   */
  ensureSession(): boolean | Promise<boolean> {
    if (getToken() && !hasSessionFlag()) return this.verifyToken().then(() => this.#ensureUser());
    return this.#ensureUser();
  }

  #ensureUser(): boolean | Promise<boolean> {
    if (!hasSessionFlag()) return false;
    if (this.#state.user) return true;
    return this.fetchCurrentUser().then(() => hasSessionFlag());
  }

  /** Checks the stored token against the server; a pass sets the session flag for this tab. */
  verifyToken(): Promise<boolean> {
    this.#verifyRequest ??= this.client.auth.me
      .query()
      .then((user) => {
        setSessionFlag();
        this.#set({ user, signedIn: true, endedBy: null, error: null });
        return true;
      })
      .catch(() => {
        this.#end("expired");
        return false;
      })
      .finally(() => {
        this.#verifyRequest = null;
      });
    return this.#verifyRequest;
  }

  /** Loads the signed-in user; concurrent callers share one request. */
  fetchCurrentUser(): Promise<CurrentUser | null> {
    this.#userRequest ??= this.#loadUser().finally(() => {
      this.#userRequest = null;
    });
    return this.#userRequest;
  }

  async #loadUser(): Promise<CurrentUser | null> {
    this.#set({ isLoading: true, error: null });
    try {
      const user = await this.client.auth.me.query();
      this.#set({ user, isLoading: false });
      return user;
    } catch (error) {
      const message =
        error instanceof Error ? error.message || "Failed to fetch user data" : "An unknown error occurred";
      console.error("Failed to fetch user data:", error);
      this.#set({ isLoading: false, error: message });
      if (isAuthLikeError(error)) this.#end("expired");
      return null;
    }
  }

  /** Auth-like errors from any query or mutation force a logout. */
  handleUnauthorized(): void {
    if (this.#state.signedIn || getToken()) this.#end("expired");
  }

  /** Ends the session on the server (a failure there is ignored) and here. */
  async logout(reason: "logout" | "no-pages" = "logout"): Promise<void> {
    try {
      await this.client.auth.logout.mutate();
    } catch {
      // The local session ends either way; the server's copy expires by itself.
    }
    this.#end(reason);
  }

  #end(reason: SessionEndReason): void {
    clearStoredSession();
    this.#set({ user: null, signedIn: false, endedBy: reason, isLoading: false });
    this.options.onUserChange?.();
  }
}
