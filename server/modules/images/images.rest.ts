import multipart from "@fastify/multipart";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { ImageIdSchema, ImageMetaSchema, ImageUpdateSchema } from "../../../shared/images.ts";
import { AppError, badRequest } from "../../errors.ts";
import { parseBody } from "../../http/validate.ts";
import type { AppServices } from "../../services.ts";
import { IMAGES_READ, IMAGES_WRITE } from "./images.access.ts";
import {
  deleteImage,
  IMAGE_FILE_ROUTE,
  IMAGE_THUMBNAIL_ROUTE,
  listImages,
  openImageFile,
  type UploadedFile,
  updateImage,
  uploadImage,
} from "./images.service.ts";

const IdParams = z.object({ id: ImageIdSchema });
const FileParams = z.object({ file: z.string().max(100) });
/** More files than this end the parse at once; fewer but more than one are refused with a 400. */
const MAX_FILE_PARTS = 5;

function megabytes(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  return Number.isInteger(mb) ? `${mb} MB` : `${mb.toFixed(1)} MB`;
}

/** Reads the multipart form: its text fields and its one file, refusing anything else clearly. */
async function readUploadForm(req: FastifyRequest, maxBytes: number) {
  if (!req.isMultipart())
    throw new AppError("UNSUPPORTED_MEDIA_TYPE", "The upload must be multipart/form-data with an image file");
  const fields: Record<string, string> = {};
  let file: UploadedFile | undefined;
  let files = 0;
  try {
    for await (const part of req.parts()) {
      if (part.type === "file") {
        files++;
        if (files > 1) {
          part.file.resume();
          continue;
        }
        file = { filename: part.filename ?? "", data: await part.toBuffer() };
      } else {
        fields[part.fieldname] = String(part.value ?? "");
      }
    }
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "FST_REQ_FILE_TOO_LARGE")
      throw new AppError("PAYLOAD_TOO_LARGE", `The image is larger than the ${megabytes(maxBytes)} limit`);
    if (code === "FST_FILES_LIMIT") throw badRequest("Only one image file may be uploaded", "image");
    if (code === "FST_PARTS_LIMIT" || code === "FST_FIELDS_LIMIT")
      throw badRequest("The upload has too many fields");
    if (code === "FST_PROTO_VIOLATION" || code === "FST_INVALID_MULTIPART_CONTENT_TYPE")
      throw badRequest("The upload is not valid multipart/form-data");
    throw err;
  }
  if (files > 1) throw badRequest("Only one image file may be uploaded", "image");
  return { fields, file };
}

/** Serves a stored file: its recorded type, never sniffed, cached for good (the name is its hash). */
async function sendImageFile(
  services: AppServices,
  variant: "original" | "thumbnail",
  req: FastifyRequest,
  reply: FastifyReply,
) {
  const { file } = parseBody(FileParams, req.params);
  const hash = file.replace(/\.[a-z0-9]+$/i, "");
  const found = await openImageFile({ db: services.db, storage: services.images }, hash, variant);
  if (!found) throw new AppError("NOT_FOUND", "Image not found");
  const etag = `"${hash}${variant === "thumbnail" ? "-t" : ""}"`;
  reply
    .header("Content-Type", found.mimeType)
    .header("X-Content-Type-Options", "nosniff")
    .header("Cache-Control", "private, max-age=31536000, immutable")
    .header("Content-Security-Policy", "default-src 'none'; sandbox")
    .header("ETag", etag);
  if (req.headers["if-none-match"] === etag) {
    found.stream.destroy();
    return reply.status(304).send();
  }
  reply.header("Content-Length", found.size);
  return reply.send(found.stream);
}

/** Legacy REST of spec section 7 "Reusable images", plus the file routes behind image_url. */
export async function imagesRestRoutes(app: FastifyInstance, services: AppServices) {
  const { db, images: storage, config } = services;
  await app.register(multipart, {
    limits: {
      fileSize: config.imageMaxBytes,
      files: MAX_FILE_PARTS,
      fields: 20,
      fieldSize: 64 * 1024,
      parts: 30,
      headerPairs: 200,
    },
  });
  const read = { config: { auth: IMAGES_READ } };
  const write = { config: { auth: IMAGES_WRITE } };

  app.get("/api/reusable-images", read, () => listImages(db));
  app.post("/api/reusable-images/upload", write, async (req, reply) => {
    const { fields, file } = await readUploadForm(req, config.imageMaxBytes);
    const meta = parseBody(ImageMetaSchema, fields);
    return reply.status(201).send(await uploadImage({ db, storage }, meta, file));
  });
  app.put("/api/reusable-images/:id", write, (req) => {
    const { id } = parseBody(IdParams, req.params);
    const { id: bodyId, ...meta } = parseBody(ImageUpdateSchema, { id, ...(req.body as object) });
    if (bodyId !== id) throw badRequest("does not match the id in the path", "id");
    return updateImage(db, id, meta);
  });
  app.delete("/api/reusable-images/:id", write, (req) =>
    deleteImage({ db, storage }, parseBody(IdParams, req.params).id),
  );
  app.get(`${IMAGE_FILE_ROUTE}/:file`, read, (req, reply) => sendImageFile(services, "original", req, reply));
  app.get(`${IMAGE_THUMBNAIL_ROUTE}/:file`, read, (req, reply) =>
    sendImageFile(services, "thumbnail", req, reply),
  );
}
