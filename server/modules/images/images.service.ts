// The reusable image library (spec sections 2 "Reusable Images tab", 3, 7 "Reusable images"):
// uploads are checked by their bytes, stored by content hash, and thumbnailed for the table.
import { createHash } from "node:crypto";
import { fileTypeFromBuffer } from "file-type";
import sharp from "sharp";
import { IMAGE_MIME_TYPES, type ImageMeta, type ReusableImage } from "../../../shared/images.ts";
import type { Database } from "../../db/database.ts";
import { AppError, badRequest, notFound } from "../../errors.ts";
import type { ImageStorage } from "../../storage/image-storage.ts";
import { assertCompanyExists } from "../templates/templates.service.ts";

export interface ImageDeps {
  db: Database;
  storage: ImageStorage;
}

type ImageRow = Awaited<ReturnType<Database["prisma"]["reusableImage"]["findFirstOrThrow"]>>;

export const EXTENSIONS: Record<string, string> = {
  "image/jpeg": "jpg",
  "image/png": "png",
  "image/gif": "gif",
  "image/webp": "webp",
};

/** Where a stored image is served (the session must hold image access). */
export const IMAGE_FILE_ROUTE = "/api/reusable-images/files";
export const IMAGE_THUMBNAIL_ROUTE = "/api/reusable-images/thumbnails";
export const THUMBNAIL_SIZE = 160;

function toImage(r: ImageRow): ReusableImage {
  return {
    id: r.id,
    name: r.name,
    is_global: r.isGlobal,
    company: r.company,
    file_size: r.fileSize,
    filename: r.filename,
    mime_type: r.mimeType,
    width: r.width,
    height: r.height,
    image_url: `${IMAGE_FILE_ROUTE}/${r.contentHash}.${EXTENSIONS[r.mimeType] ?? "bin"}`,
    thumbnail_url: `${IMAGE_THUMBNAIL_ROUTE}/${r.contentHash}.webp`,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
}

/** Newest first (spec section 2: the default sort is created_at descending). */
export async function listImages(db: Database): Promise<ReusableImage[]> {
  const rows = await db.prisma.reusableImage.findMany({ orderBy: [{ createdAt: "desc" }, { id: "desc" }] });
  return rows.map(toImage);
}

export async function getImage(db: Database, id: number): Promise<ReusableImage> {
  const row = await db.prisma.reusableImage.findUnique({ where: { id } });
  if (!row) throw notFound(`Image ${id} not found`);
  return toImage(row);
}

export interface UploadedFile {
  filename: string;
  data: Buffer;
}

/** The name a file was uploaded with, without any path and without control characters. */
function cleanFilename(name: string, ext: string): string {
  const base = name
    .split(/[\\/]/)
    .pop()!
    .replace(/[\p{Cc}]/gu, "")
    .trim()
    .slice(0, 255);
  return base || `image.${ext}`;
}

/** Checks the bytes (not the name or the declared type) and reads the picture's size. */
export async function inspectImage(data: Buffer) {
  if (data.length === 0) throw badRequest("The image file is empty", "image");
  const type = await fileTypeFromBuffer(data);
  if (!type || !(IMAGE_MIME_TYPES as readonly string[]).includes(type.mime)) {
    throw new AppError(
      "UNSUPPORTED_MEDIA_TYPE",
      `Unsupported image type${type ? ` (${type.mime})` : ""}: the file's content must be a JPEG, PNG, GIF or WebP image`,
    );
  }
  try {
    const image = sharp(data, { animated: false, failOn: "error" });
    const meta = await image.metadata();
    const thumbnail = await image
      .rotate()
      .resize(THUMBNAIL_SIZE, THUMBNAIL_SIZE, { fit: "inside", withoutEnlargement: true })
      .webp({ quality: 80 })
      .toBuffer();
    return {
      mime: type.mime,
      ext: type.ext,
      width: meta.width ?? null,
      height: meta.height ?? null,
      thumbnail,
    };
  } catch {
    throw badRequest(`The ${type.ext.toUpperCase()} image is damaged or cannot be read`, "image");
  }
}

/**
 * Validates everything first, so a refused upload leaves nothing behind; then writes the row and
 * the files (a failed write removes the row again).
 */
export async function uploadImage(
  { db, storage }: ImageDeps,
  meta: ImageMeta,
  file: UploadedFile | undefined,
): Promise<ReusableImage> {
  if (meta.company) await assertCompanyExists(db.prisma, meta.company);
  if (!file) throw badRequest("Image file is required", "image");
  const info = await inspectImage(file.data);
  const hash = createHash("sha256").update(file.data).digest("hex");
  const row = await db.prisma.reusableImage.create({
    data: {
      name: meta.name,
      isGlobal: meta.is_global,
      company: meta.company,
      filename: cleanFilename(file.filename, info.ext),
      mimeType: info.mime,
      fileSize: file.data.length,
      contentHash: hash,
      width: info.width,
      height: info.height,
    },
  });
  try {
    await storage.put(hash, "original", file.data);
    await storage.put(hash, "thumbnail", info.thumbnail);
  } catch (err) {
    await removeImageRow({ db, storage }, row.id);
    throw err;
  }
  return toImage(row);
}

export async function updateImage(db: Database, id: number, meta: ImageMeta): Promise<ReusableImage> {
  const previous = await db.prisma.reusableImage.findUnique({ where: { id } });
  if (!previous) throw notFound(`Image ${id} not found`);
  if (meta.company && meta.company !== previous.company) await assertCompanyExists(db.prisma, meta.company);
  const row = await db.prisma.reusableImage.update({
    where: { id },
    data: { name: meta.name, isGlobal: meta.is_global, company: meta.company },
  });
  return toImage(row);
}

/** Deletes the row; the file goes too when no other image uses the same bytes. */
async function removeImageRow({ db, storage }: ImageDeps, id: number): Promise<boolean> {
  const removed = await db.prisma.$transaction(async (tx) => {
    const row = await tx.reusableImage.findUnique({ where: { id }, select: { contentHash: true } });
    if (!row) return null;
    await tx.reusableImage.delete({ where: { id } });
    // The same bytes may also be an image uploaded into a product import.
    const others =
      (await tx.reusableImage.count({ where: { contentHash: row.contentHash } })) +
      (await tx.productImportImage.count({ where: { contentHash: row.contentHash } }));
    return { hash: row.contentHash, orphaned: others === 0 };
  });
  if (!removed) return false;
  if (removed.orphaned) await storage.remove(removed.hash);
  return true;
}

export async function deleteImage(deps: ImageDeps, id: number): Promise<{ success: true; id: number }> {
  if (!(await removeImageRow(deps, id))) throw notFound(`Image ${id} not found`);
  return { success: true, id };
}

/** The stored file behind an image URL, with the type recorded at upload; null when unknown. */
export async function openImageFile(
  { db, storage }: ImageDeps,
  hash: string,
  variant: "original" | "thumbnail",
) {
  if (!/^[0-9a-f]{64}$/.test(hash)) return null;
  const row = await db.prisma.reusableImage.findFirst({
    where: { contentHash: hash },
    select: { mimeType: true },
  });
  if (!row) return null;
  const file = await storage.open(hash, variant);
  if (!file) return null;
  return { ...file, mimeType: variant === "original" ? row.mimeType : "image/webp" };
}
