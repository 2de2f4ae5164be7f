// Images for an import's products: files uploaded one by one (for a row, or matched by name), or a
// ZIP whose file names are SKUs or barcodes. Every file is checked by its bytes as the image library
// checks them; a ZIP is read within limits (entries, sizes) so a ZIP bomb or a path trick is refused.
import { createHash } from "node:crypto";
import { unzipSync } from "fflate";
import type { CurrentUser } from "../../../shared/auth.ts";
import type { ImageRef } from "../../../shared/product-import.ts";
import type { Database } from "../../db/database.ts";
import { AppError, badRequest, notFound } from "../../errors.ts";
import type { ImageStorage } from "../../storage/image-storage.ts";
import { inspectImage } from "../images/images.service.ts";
import { loadImport } from "./productImport.service.ts";

/** At most this many files in one ZIP, and this many bytes unpacked in all. */
export const ZIP_MAX_ENTRIES = 2000;
export const ZIP_MAX_TOTAL_BYTES = 500 * 1024 * 1024;

export interface ImageUploadResult {
  matched: { filename: string; row_id: number; image_id: number }[];
  unmatched: string[];
  refused: { filename: string; reason: string }[];
}

export interface IncomingFile {
  filename: string;
  data: Buffer;
}

const IMAGE_EXT = /\.(jpe?g|png|gif|webp)$/i;

/** The SKU or barcode a file name names: "ABC-123.jpg", "ABC-123_2.jpg", "ABC-123 (2).jpg" → "abc-123". */
function nameKeys(filename: string): string[] {
  const base = filename
    .split("/")
    .pop()!
    .replace(/\.[a-z0-9]+$/i, "")
    .trim()
    .toLowerCase();
  const keys = [base];
  const m = /^(.*?)(?:[_ -]\d{1,2}|\s*\(\d{1,2}\))$/.exec(base);
  if (m?.[1]) keys.push(m[1]);
  return keys;
}

function isZip(data: Buffer): boolean {
  return data.length >= 4 && data[0] === 0x50 && data[1] === 0x4b && data[2] === 0x03 && data[3] === 0x04;
}

/** Reads a ZIP's image entries, refusing unsafe names and anything past the limits. */
function readZip(data: Buffer, maxBytes: number, refused: ImageUploadResult["refused"]): IncomingFile[] {
  const entries: { name: string; size: number }[] = [];
  let total = 0;
  let tooMany = false;
  let out: Record<string, Uint8Array>;
  try {
    out = unzipSync(new Uint8Array(data), {
      filter(file) {
        const name = file.name;
        if (name.endsWith("/")) return false;
        if (name.startsWith("__MACOSX/") || name.split("/").pop()!.startsWith(".")) return false;
        if (entries.length >= ZIP_MAX_ENTRIES) {
          tooMany = true;
          return false;
        }
        if (name.includes("..") || name.startsWith("/") || /^[a-z]:/i.test(name) || name.includes("\\")) {
          refused.push({ filename: name, reason: "Unsafe file name (a path outside the ZIP's folder)" });
          return false;
        }
        if (file.originalSize > maxBytes) {
          refused.push({
            filename: name,
            reason: `Larger than the ${Math.round(maxBytes / 1024)} KB image limit`,
          });
          return false;
        }
        total += file.originalSize;
        if (total > ZIP_MAX_TOTAL_BYTES)
          throw new AppError("PAYLOAD_TOO_LARGE", "The ZIP unpacks to more than 500 MB");
        entries.push({ name, size: file.originalSize });
        return true;
      },
    });
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw badRequest("The ZIP file is damaged or cannot be read", "file");
  }
  if (tooMany) throw new AppError("PAYLOAD_TOO_LARGE", `The ZIP has more than ${ZIP_MAX_ENTRIES} files`);
  return entries.map((e) => {
    const bytes = out[e.name]!;
    return { filename: e.name, data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
  });
}

/**
 * Stores the files (or a ZIP's files) and attaches each to the row named by `rowId`, or to the row
 * whose SKU or barcode the file is named after.
 */
export async function addImportImages(
  deps: { db: Database; storage: ImageStorage; maxBytes: number },
  user: CurrentUser,
  id: number,
  files: IncomingFile[],
  rowId?: number,
): Promise<ImageUploadResult> {
  const { db, storage } = deps;
  const imp = await loadImport(db, user, id);
  if (imp.status === "submitted" || imp.status === "exported")
    throw new AppError("CONFLICT", `Import ${id} was submitted: its images can no longer be changed`);
  if (files.length === 0) throw badRequest("Add image files or one ZIP of images", "file");
  const result: ImageUploadResult = { matched: [], unmatched: [], refused: [] };
  const incoming: IncomingFile[] = [];
  const zipped = new Set<IncomingFile>();
  for (const f of files) {
    if (isZip(f.data)) {
      for (const entry of readZip(f.data, deps.maxBytes, result.refused)) {
        zipped.add(entry);
        incoming.push(entry);
      }
    } else incoming.push(f);
  }
  if (rowId !== undefined) {
    const [row] = await db.prisma.$queryRawUnsafe<{ row_id: number }[]>(
      `SELECT row_id FROM product_import_rows WHERE import_id = $1 AND row_id = $2 AND NOT deleted`,
      id,
      rowId,
    );
    if (!row) throw notFound(`Row ${rowId} not found in import ${id}`);
  }
  const keys = await db.prisma.$queryRawUnsafe<
    { row_id: number; sku_key: string | null; barcode_key: string | null }[]
  >(`SELECT row_id, sku_key, barcode_key FROM product_import_rows WHERE import_id = $1 AND NOT deleted`, id);
  const byKey = new Map<string, number>();
  for (const k of keys) {
    if (k.barcode_key && !byKey.has(k.barcode_key)) byKey.set(k.barcode_key, k.row_id);
    if (k.sku_key && !byKey.has(k.sku_key)) byKey.set(k.sku_key, k.row_id);
  }
  const additions = new Map<number, ImageRef[]>();
  for (const f of incoming) {
    const name = f.filename.split("/").pop()!;
    if (zipped.has(f) && !IMAGE_EXT.test(name)) {
      result.refused.push({ filename: f.filename, reason: "Not an image file (JPEG, PNG, GIF or WebP)" });
      continue;
    }
    const target =
      rowId ??
      nameKeys(name)
        .map((k) => byKey.get(k))
        .find((r) => r !== undefined);
    if (target === undefined) {
      result.unmatched.push(f.filename);
      continue;
    }
    if (f.data.length > deps.maxBytes) {
      result.refused.push({
        filename: f.filename,
        reason: `Larger than the ${Math.round(deps.maxBytes / 1024)} KB image limit`,
      });
      continue;
    }
    let info: Awaited<ReturnType<typeof inspectImage>>;
    try {
      info = await inspectImage(f.data);
    } catch (err) {
      result.refused.push({ filename: f.filename, reason: (err as Error).message.replace(/^image: /, "") });
      continue;
    }
    const hash = createHash("sha256").update(f.data).digest("hex");
    await storage.put(hash, "original", f.data);
    await storage.put(hash, "thumbnail", info.thumbnail);
    const image = await db.prisma.productImportImage.create({
      data: {
        importId: id,
        filename: name.slice(0, 255),
        mimeType: info.mime,
        fileSize: f.data.length,
        contentHash: hash,
      },
    });
    additions.set(target, [...(additions.get(target) ?? []), { source: "upload", id: image.id }]);
    result.matched.push({ filename: f.filename, row_id: target, image_id: image.id });
  }
  if (additions.size) {
    await db.prisma.$executeRawUnsafe(
      `UPDATE product_import_rows r SET images = r.images || x.add
         FROM jsonb_to_recordset($2::jsonb) AS x(row_id int, add jsonb)
        WHERE r.import_id = $1 AND r.row_id = x.row_id`,
      id,
      JSON.stringify([...additions].map(([row_id, add]) => ({ row_id, add }))),
    );
  }
  return result;
}

/** An image uploaded into the import, for its page (original or thumbnail). */
export async function openImportImage(
  deps: { db: Database; storage: ImageStorage },
  user: CurrentUser,
  id: number,
  imageId: number,
  variant: "original" | "thumbnail",
) {
  await loadImport(deps.db, user, id);
  const row = await deps.db.prisma.productImportImage.findFirst({ where: { id: imageId, importId: id } });
  if (!row) throw notFound("Image not found");
  const file = await deps.storage.open(row.contentHash, variant);
  if (!file) throw notFound("Image not found");
  return { ...file, mimeType: variant === "original" ? row.mimeType : "image/webp" };
}
