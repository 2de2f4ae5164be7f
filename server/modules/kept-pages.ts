// Pages kept per version of what they read (the forecasting grid, the purchasing workspace and the
// PO list): per database, capped both by number of entries and by their approximate size, so a
// filter with huge pages cannot hold hundreds of MB. One computation per key and version at a time:
// a request for a page that is being computed (by another request or by the warm-up after a
// calculation, server/modules/warm-pages.ts) waits for that computation instead of starting its own.
import type { Database } from "../db/database.ts";

interface Entry<V> {
  version: string;
  value: Promise<V>;
  bytes: number;
}

/** The approximate size of a page in memory: its JSON text (UTF-16, 2 bytes a character). */
export function approxBytes(value: unknown): number {
  return 2 * (JSON.stringify(value)?.length ?? 0);
}

export class KeptPages<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private total = 0;

  constructor(
    readonly maxEntries: number,
    readonly maxBytes: number,
  ) {}

  /** The bytes the settled entries hold (approximate). */
  get bytes(): number {
    return this.total;
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * The page kept for `key` at `version`, or `compute`'s, kept in its place (least recently used
   * entries go first once either cap is reached; a page larger than maxBytes alone is not kept).
   * An empty version is never kept.
   */
  get(key: string, version: string, compute: () => Promise<V>): Promise<V> {
    const kept = this.entries.get(key);
    if (kept && kept.version === version && version) {
      // Most recently used last.
      this.entries.delete(key);
      this.entries.set(key, kept);
      return kept.value;
    }
    const value = compute();
    if (!version) return value;
    if (kept) this.remove(key, kept);
    const entry: Entry<V> = { version, value, bytes: 0 };
    this.entries.set(key, entry);
    this.trim();
    value
      .then(
        (page) => {
          if (this.entries.get(key) !== entry) return;
          entry.bytes = approxBytes(page);
          this.total += entry.bytes;
          if (entry.bytes > this.maxBytes) this.remove(key, entry);
          else this.trim();
        },
        () => {
          if (this.entries.get(key) === entry) this.remove(key, entry);
        },
      )
      // A page whose size cannot be measured is not kept (and never an unhandled rejection).
      .catch(() => {
        if (this.entries.get(key) === entry) this.remove(key, entry);
      });
    return value;
  }

  /** Whether the page of `key` is kept (or being computed) for `version`. */
  has(key: string, version: string): boolean {
    return this.entries.get(key)?.version === version;
  }

  clear(): void {
    this.entries.clear();
    this.total = 0;
  }

  private remove(key: string, entry: Entry<V>): void {
    this.entries.delete(key);
    this.total -= entry.bytes;
  }

  private trim(): void {
    for (const [key, entry] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.total <= this.maxBytes) return;
      this.remove(key, entry);
    }
  }
}

/** One KeptPages per database. */
export function keptPagesPerDatabase<V>(
  maxEntries: number,
  maxBytes: number,
): { of(db: Database): KeptPages<V>; clear(db: Database): void } {
  const all = new WeakMap<Database, KeptPages<V>>();
  return {
    of(db) {
      let pages = all.get(db);
      if (!pages) {
        pages = new KeptPages<V>(maxEntries, maxBytes);
        all.set(db, pages);
      }
      return pages;
    },
    clear(db) {
      all.delete(db);
    },
  };
}

/** The byte cap of each page cache (per database): 64 MB. */
export const KEPT_PAGES_MAX_BYTES = 64 * 1024 * 1024;
