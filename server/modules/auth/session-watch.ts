// Requests that outlive their session: an open progress stream (SSE, tRPC subscription) keeps
// delivering until something closes it. Every request made with a session is registered here while
// it is open; every few seconds one query asks which of those sessions still stand (not revoked or
// expired, the user still active), and the requests of the others are closed. A signed-out,
// deactivated or deleted user's streams so end within SWEEP_MS (plus one query), on every instance,
// whatever route or procedure opened them.
import type { Database } from "../../db/database.ts";

export const SESSION_SWEEP_MS = 2_000;

export class SessionWatch {
  private readonly open = new Map<number, Set<() => void>>();
  private timer: NodeJS.Timeout | undefined;
  private sweeping = false;

  constructor(
    private readonly db: Database,
    private readonly intervalMs = SESSION_SWEEP_MS,
  ) {}

  /** Registers an open request of `sessionId`; `close` ends it. Answers the function that unregisters it. */
  watch(sessionId: number, close: () => void): () => void {
    const closers = this.open.get(sessionId) ?? new Set<() => void>();
    this.open.set(sessionId, closers);
    closers.add(close);
    if (!this.timer) {
      this.timer = setInterval(() => void this.sweep(), this.intervalMs);
      this.timer.unref();
    }
    return () => {
      const set = this.open.get(sessionId);
      if (!set) return;
      set.delete(close);
      if (set.size === 0) this.open.delete(sessionId);
    };
  }

  /** Closes the open requests of sessions that no longer stand. */
  async sweep(): Promise<void> {
    if (this.sweeping) return;
    const ids = [...this.open.keys()];
    if (ids.length === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    this.sweeping = true;
    try {
      const standing = await this.db.prisma.session.findMany({
        where: { id: { in: ids }, expiresAt: { gt: new Date() }, user: { isActive: true } },
        select: { id: true },
      });
      const alive = new Set(standing.map((s) => s.id));
      for (const id of ids) {
        if (alive.has(id)) continue;
        const closers = this.open.get(id);
        this.open.delete(id);
        for (const close of closers ?? []) {
          try {
            close();
          } catch {}
        }
      }
    } catch {
      // The database is unreachable: try again next time.
    } finally {
      this.sweeping = false;
    }
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.open.clear();
  }
}
