// What the archive already holds of one collection, in about 17 bytes per document: each id's
// 53-bit hash and its version (the source's _updatedAt, or a GridFS file's uploadDate and length),
// sorted for binary search. The import asks it, document by document, whether a document is new,
// changed or the same (skipped unread), and afterwards which stored documents the export no longer
// has. A Map of a million id strings would take ~10× the memory.
import type { SqlConnection } from "../../../db/database.ts";

/** FNV-1a over UTF-16 code units, twice with different bases, folded into 53 bits. */
export function hashId(id: string): number {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
  }
  return (a >>> 0) * 0x200000 + ((b >>> 0) & 0x1fffff);
}

/** A version value as a number: numbers as they are, texts hashed; null = unknown (never equal). */
export function versionKey(v: number | string | null | undefined): number {
  if (v === null || v === undefined) return Number.NaN;
  return typeof v === "number" ? v : hashId(v);
}

export type Verdict = "new" | "changed" | "same";

export class VersionIndex {
  private constructor(
    private readonly keys: Float64Array,
    private readonly versions: Float64Array,
    private readonly seen: Uint8Array,
  ) {}

  get size(): number {
    return this.keys.length;
  }

  /**
   * Loads (id, version) of a table in pages of its primary key, so memory holds one page of rows
   * at a time. `version` is an SQL expression giving a float8 or text.
   */
  static async load(
    conn: SqlConnection,
    table: string,
    opts: { id?: string; version: string; where?: string },
  ): Promise<VersionIndex> {
    const id = opts.id ?? "id";
    const pageSize = 50_000;
    const parts: { keys: Float64Array; versions: Float64Array }[] = [];
    let total = 0;
    let after: string | null = null;
    for (;;) {
      const rows: { id: string; v: number | string | null }[] = await conn.query(
        `SELECT ${id} AS id, ${opts.version} AS v FROM ${table}
         WHERE ${opts.where ?? "true"} AND ($1::text IS NULL OR ${id} > $1::text)
         ORDER BY ${id} LIMIT ${pageSize}`,
        [after],
      );
      if (rows.length === 0) break;
      const keys = new Float64Array(rows.length);
      const versions = new Float64Array(rows.length);
      rows.forEach((r, i) => {
        keys[i] = hashId(r.id);
        versions[i] = versionKey(r.v);
      });
      parts.push({ keys, versions });
      total += rows.length;
      after = rows[rows.length - 1]!.id;
      if (rows.length < pageSize) break;
    }
    const order = new Uint32Array(total);
    const keys = new Float64Array(total);
    const versions = new Float64Array(total);
    let o = 0;
    for (const p of parts) {
      keys.set(p.keys, o);
      versions.set(p.versions, o);
      o += p.keys.length;
    }
    for (let i = 0; i < total; i++) order[i] = i;
    order.sort((x, y) => keys[x]! - keys[y]!);
    const sortedKeys = new Float64Array(total);
    const sortedVersions = new Float64Array(total);
    for (let i = 0; i < total; i++) {
      sortedKeys[i] = keys[order[i]!]!;
      sortedVersions[i] = versions[order[i]!]!;
    }
    return new VersionIndex(sortedKeys, sortedVersions, new Uint8Array(total));
  }

  static empty(): VersionIndex {
    return new VersionIndex(new Float64Array(0), new Float64Array(0), new Uint8Array(0));
  }

  private first(key: number): number {
    let lo = 0;
    let hi = this.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.keys[mid]! < key) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.keys.length && this.keys[lo] === key ? lo : -1;
  }

  /** New, changed or the same as stored; marks the stored document as still in the export. */
  check(id: string, version: number): Verdict {
    const key = hashId(id);
    const i = this.first(key);
    if (i < 0) return "new";
    // Two stored ids with one hash: mark both, and read the document to be sure.
    const shared = i + 1 < this.keys.length && this.keys[i + 1] === key;
    for (let j = i; j < this.keys.length && this.keys[j] === key; j++) this.seen[j] = 1;
    if (shared) return "changed";
    return this.versions[i] === version ? "same" : "changed";
  }

  /** Whether a stored id was in the export (without marking it). */
  has(id: string): boolean {
    return this.first(hashId(id)) >= 0;
  }

  get unseenCount(): number {
    let n = 0;
    for (let i = 0; i < this.seen.length; i++) if (!this.seen[i]) n++;
    return n;
  }

  /** The stored ids the export no longer has, read back from the table page by page. */
  async unseenIds(
    conn: SqlConnection,
    table: string,
    opts: { id?: string; where?: string } = {},
  ): Promise<string[]> {
    if (this.unseenCount === 0) return [];
    const id = opts.id ?? "id";
    const out: string[] = [];
    let after: string | null = null;
    for (;;) {
      const rows: { id: string }[] = await conn.query(
        `SELECT ${id} AS id FROM ${table} WHERE ${opts.where ?? "true"} AND ($1::text IS NULL OR ${id} > $1::text)
         ORDER BY ${id} LIMIT 100000`,
        [after],
      );
      if (rows.length === 0) break;
      for (const r of rows) {
        const i = this.first(hashId(r.id));
        if (i >= 0 && !this.seen[i]) out.push(r.id);
      }
      after = rows[rows.length - 1]!.id;
      if (rows.length < 100_000) break;
    }
    return out;
  }
}
