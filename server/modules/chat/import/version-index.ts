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
      // The first page has no lower bound; later ones start after the last id (an index range,
      // where "$1 IS NULL OR id > $1" would have the planner scan and sort the whole table).
      const rows: { id: string; v: number | string | null }[] = await conn.query(
        `SELECT ${id} AS id, ${opts.version} AS v FROM ${table}
         WHERE ${opts.where ?? "true"}${after === null ? "" : ` AND ${id} > $1::text`}
         ORDER BY ${id} LIMIT ${pageSize}`,
        after === null ? [] : [after],
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
    const keys = new Float64Array(total);
    const versions = new Float64Array(total);
    let o = 0;
    for (const p of parts) {
      keys.set(p.keys, o);
      versions.set(p.versions, o);
      o += p.keys.length;
    }
    return VersionIndex.fromPairs(keys, versions);
  }

  /** An index of these (key, version) pairs, in any order (the arrays are not changed). */
  static fromPairs(keys: Float64Array, versions: Float64Array): VersionIndex {
    const total = keys.length;
    const order = new Uint32Array(total);
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

  /**
   * The index as bytes (its keys, then its versions, as little-endian float64), to be stored:
   * without a copy when the two already lie side by side in one array (next()'s, loadStored()'s).
   */
  toBytes(): Buffer {
    const n = this.keys.length;
    if (
      this.versions.buffer === this.keys.buffer &&
      this.versions.byteOffset === this.keys.byteOffset + n * 8
    )
      return Buffer.from(this.keys.buffer, this.keys.byteOffset, n * 16);
    const out = Buffer.alloc(n * 16);
    Buffer.from(this.keys.buffer, this.keys.byteOffset, this.keys.byteLength).copy(out, 0);
    Buffer.from(this.versions.buffer, this.versions.byteOffset, this.versions.byteLength).copy(out, n * 8);
    return out;
  }

  /** An index from toBytes(); null when the bytes are not one. */
  static fromBytes(bytes: Uint8Array): VersionIndex | null {
    if (bytes.byteLength % 16 !== 0) return null;
    // Copied into fresh, aligned arrays (the driver's buffer may sit at any offset of a pool).
    const all = new Float64Array(bytes.byteLength / 8);
    new Uint8Array(all.buffer).set(bytes);
    return VersionIndex.fromFilled(all);
  }

  /** An index over toBytes()'s layout already in one array (keys, then versions); null if unsorted. */
  private static fromFilled(all: Float64Array): VersionIndex | null {
    const n = all.length / 2;
    const keys = all.subarray(0, n);
    const versions = all.subarray(n);
    for (let i = 1; i < n; i++) if (!(keys[i - 1]! <= keys[i]!)) return null;
    return new VersionIndex(keys, versions, new Uint8Array(n));
  }

  /**
   * The index a previous import stored for `collection` in chat_import_state, when it still
   * describes the table (as many rows as it has entries); else null. The import writes it in the
   * transaction that applies its changes, so it cannot disagree with the table unless the table
   * was changed by hand (which the count catches for deleted or added rows). Read in slices of
   * 1 MB straight into the index's array (the value is stored uncompressed, so a slice reads only
   * its part): no second copy of 16 MB, nor its 32 MB of hex text, at a million messages.
   */
  static async loadStored(
    conn: SqlConnection,
    collection: string,
    table: string,
  ): Promise<VersionIndex | null> {
    const [row] = await conn.query<{ documents: number; bytes: number }>(
      "SELECT documents, octet_length(index) AS bytes FROM chat_import_state WHERE collection = $1",
      [collection],
    );
    if (!row) return null;
    const [{ n }] = (await conn.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)) as [
      { n: number },
    ];
    if (Number(row.documents) !== n || Number(row.bytes) !== n * 16) return null;
    const all = new Float64Array(n * 2);
    const view = new Uint8Array(all.buffer);
    const slice = 1 << 20;
    for (let at = 0; at < view.length; at += slice) {
      const [part] = await conn.query<{ b: Uint8Array }>(
        "SELECT substring(index from $2 for $3) AS b FROM chat_import_state WHERE collection = $1",
        [collection, at + 1, slice],
      );
      if (!part || part.b.byteLength !== Math.min(slice, view.length - at)) return null;
      view.set(part.b, at);
    }
    return VersionIndex.fromFilled(all);
  }

  /** Stores the index for the next import of `collection` (inside the transaction that applies it). */
  async store(conn: SqlConnection, collection: string): Promise<void> {
    await conn.execute(
      `INSERT INTO chat_import_state (collection, documents, index, updated_at) VALUES ($1, $2, $3, now())
       ON CONFLICT (collection) DO UPDATE SET documents = excluded.documents, index = excluded.index,
         updated_at = excluded.updated_at`,
      [collection, this.size, this.toBytes()],
    );
  }

  static empty(): VersionIndex {
    return new VersionIndex(new Float64Array(0), new Float64Array(0), new Uint8Array(0));
  }

  /**
   * Where each range of hashes starts in `keys`: entry b is the first position whose key's top
   * `bits` bits are b or more (about 4 keys a range, 1 MB at a million). A lookup then reads one
   * entry and a few neighbouring keys, where a binary search over 8 MB of keys takes ~20 reads
   * scattered over memory (a cache miss each). Built at the first lookup.
   */
  private directory: Uint32Array | null = null;
  private bucketSize = 1;

  private buildDirectory(): Uint32Array {
    const n = this.keys.length;
    const bits = Math.min(24, Math.max(1, Math.ceil(Math.log2(Math.max(2, n / 4)))));
    this.bucketSize = 2 ** (53 - bits);
    const buckets = 2 ** bits;
    const dir = new Uint32Array(buckets + 1);
    let i = 0;
    for (let b = 0; b <= buckets; b++) {
      while (i < n && Math.floor(this.keys[i]! / this.bucketSize) < b) i++;
      dir[b] = i;
    }
    this.directory = dir;
    return dir;
  }

  private first(key: number): number {
    const dir = this.directory ?? this.buildDirectory();
    const b = Math.floor(key / this.bucketSize);
    if (!(b >= 0 && b < dir.length - 1)) return -1;
    let lo = dir[b]!;
    let hi = dir[b + 1]!;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.keys[mid]! < key) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.keys.length && this.keys[lo] === key ? lo : -1;
  }

  /**
   * New, changed or the same as stored; marks the stored document as still in the export and
   * keeps the export's version for it (what the table holds once the import is applied).
   */
  check(id: string, version: number): Verdict {
    return this.checkKey(hashId(id), version);
  }

  /** check() of an id given as its hash (hashId). */
  checkKey(key: number, version: number): Verdict {
    const i = this.first(key);
    if (i < 0) return "new";
    // Two stored ids with one hash: mark both, and read the document to be sure (now and next time).
    const shared = i + 1 < this.keys.length && this.keys[i + 1] === key;
    for (let j = i; j < this.keys.length && this.keys[j] === key; j++) {
      this.seen[j] = 1;
      if (shared) this.versions[j] = Number.NaN;
    }
    if (shared) return "changed";
    if (this.versions[i] === version) return "same";
    this.versions[i] = version;
    return "changed";
  }

  /**
   * Takes back check()'s mark: the export has the document but the import leaves it out (an
   * edit's hidden copy), so it goes from the table. Not when another stored id shares its hash
   * (which of the two it is cannot be told from the hash): that one is kept as it was.
   */
  unsee(id: string): void {
    const key = hashId(id);
    const i = this.first(key);
    if (i < 0 || (i + 1 < this.keys.length && this.keys[i + 1] === key)) return;
    this.seen[i] = 0;
  }

  /**
   * The index of the table once this import is applied: the stored documents the export still has
   * (at the versions check() saw), plus the new ones.
   */
  next(added: VersionIndexBuilder): VersionIndex {
    const fresh = added.build();
    let kept = 0;
    for (let i = 0; i < this.seen.length; i++) if (this.seen[i]) kept++;
    const n = kept + fresh.size;
    // Keys and versions in one array, as toBytes() stores them.
    const all = new Float64Array(n * 2);
    const keys = all.subarray(0, n);
    const versions = all.subarray(n);
    let a = 0;
    let b = 0;
    for (let o = 0; o < n; o++) {
      while (a < this.keys.length && !this.seen[a]) a++;
      if (b >= fresh.size || (a < this.keys.length && this.keys[a]! <= fresh.keys[b]!)) {
        keys[o] = this.keys[a]!;
        versions[o] = this.versions[a]!;
        a++;
      } else {
        keys[o] = fresh.keys[b]!;
        versions[o] = fresh.versions[b]!;
        b++;
      }
    }
    return new VersionIndex(keys, versions, new Uint8Array(n));
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
        `SELECT ${id} AS id FROM ${table} WHERE ${opts.where ?? "true"}${after === null ? "" : ` AND ${id} > $1::text`}
         ORDER BY ${id} LIMIT 100000`,
        after === null ? [] : [after],
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

/**
 * The (id, version) of the documents an import adds to a table, collected while it reads the
 * export (16 bytes a document, in fixed-size chunks: no doubling and copying as it grows), then
 * sorted into an index.
 */
export class VersionIndexBuilder {
  private static readonly CHUNK = 65_536;
  private readonly chunks: { keys: Float64Array; versions: Float64Array }[] = [];
  private n = 0;

  get size(): number {
    return this.n;
  }

  add(id: string, version: number): void {
    const at = this.n % VersionIndexBuilder.CHUNK;
    if (at === 0)
      this.chunks.push({
        keys: new Float64Array(VersionIndexBuilder.CHUNK),
        versions: new Float64Array(VersionIndexBuilder.CHUNK),
      });
    const chunk = this.chunks[this.chunks.length - 1]!;
    chunk.keys[at] = hashId(id);
    chunk.versions[at] = version;
    this.n++;
  }

  build(): VersionIndex {
    const keys = new Float64Array(this.n);
    const versions = new Float64Array(this.n);
    this.chunks.forEach((c, i) => {
      const o = i * VersionIndexBuilder.CHUNK;
      const len = Math.min(VersionIndexBuilder.CHUNK, this.n - o);
      keys.set(c.keys.subarray(0, len), o);
      versions.set(c.versions.subarray(0, len), o);
    });
    this.chunks.length = 0;
    this.n = 0;
    return VersionIndex.fromPairs(keys, versions);
  }
}
