// Where image files live. Files are named by the sha256 of their bytes, so identical uploads share
// one file and a name never changes its content (which lets browsers cache them for good).
// The disk store keeps them under IMAGE_DIR (default DATA_DIR/images); the S3 store
// (s3-image-storage.ts, chosen by IMAGE_S3_BUCKET) keeps them in a bucket under the same keys.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";

export type ImageVariant = "original" | "thumbnail";

export interface ImageStorage {
  /** Stores the bytes of one variant under the content hash (replacing any earlier copy). */
  put(hash: string, variant: ImageVariant, data: Buffer): Promise<void>;
  /** Opens a stored file, or answers null when there is none. */
  open(hash: string, variant: ImageVariant): Promise<{ stream: Readable; size: number } | null>;
  /** Removes every variant of the hash; a missing file is not an error. */
  remove(hash: string): Promise<void>;
}

const HASH = /^[0-9a-f]{64}$/;

/** Where a variant lives, relative to the store's root: `originals/ab/<sha256>`, `thumbnails/ab/<sha256>.webp`. */
export function storageKey(hash: string, variant: ImageVariant): string {
  if (!HASH.test(hash)) throw new Error(`not a content hash: ${hash}`);
  // Two levels of fan-out keep directories small.
  return variant === "original"
    ? `originals/${hash.slice(0, 2)}/${hash}`
    : `thumbnails/${hash.slice(0, 2)}/${hash}.webp`;
}

export class DiskImageStorage implements ImageStorage {
  constructor(readonly root: string) {}

  private file(hash: string, variant: ImageVariant): string {
    return path.join(this.root, ...storageKey(hash, variant).split("/"));
  }

  async put(hash: string, variant: ImageVariant, data: Buffer): Promise<void> {
    const target = this.file(hash, variant);
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    // Write aside, then rename: a reader never sees half a file.
    const temp = `${target}.${randomBytes(6).toString("hex")}.tmp`;
    try {
      await fs.promises.writeFile(temp, data);
      await fs.promises.rename(temp, target);
    } catch (err) {
      await fs.promises.rm(temp, { force: true });
      throw err;
    }
  }

  async open(hash: string, variant: ImageVariant) {
    const file = this.file(hash, variant);
    try {
      const stat = await fs.promises.stat(file);
      return { stream: fs.createReadStream(file), size: stat.size };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
  }

  async remove(hash: string): Promise<void> {
    await Promise.all(
      (["original", "thumbnail"] as const).map((v) => fs.promises.rm(this.file(hash, v), { force: true })),
    );
  }
}
