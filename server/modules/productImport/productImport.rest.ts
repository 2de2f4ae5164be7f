import multipart from "@fastify/multipart";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { idSchema, text } from "../../../shared/input.ts";
import {
  BulkEditSchema,
  IMPORT_MAX_BYTES,
  ImportIdSchema,
  ImportSettingsSchema,
  ListImportsSchema,
  RowPatchSchema,
  RowsQuerySchema,
} from "../../../shared/product-import.ts";
import { AppError, badRequest } from "../../errors.ts";
import { parseBody } from "../../http/validate.ts";
import type { AppServices } from "../../services.ts";
import { addImportImages, type IncomingFile, openImportImage } from "./images.ts";
import {
  bulkEdit,
  createImport,
  discardImport,
  getImport,
  getImportFile,
  IMPORT_READ,
  IMPORT_WRITE,
  listImports,
  listRows,
  patchRow,
  reuploadImport,
  updateImportSettings,
} from "./productImport.service.ts";
import {
  continueWithRowsLeft,
  dryRun,
  errorReportCsv,
  exportZip,
  listCreatedProducts,
  submitImport,
} from "./submit.ts";

const IdParams = z.object({ id: ImportIdSchema });
const RowParams = z.object({ id: ImportIdSchema, row_id: idSchema });
const ImageParams = z.object({ id: ImportIdSchema, image_id: idSchema });
const UploadFields = z.object({
  company: z.preprocess((v) => (v === "" ? undefined : v), text({ max: 20 }).optional()),
  product_type: z.preprocess((v) => (v === "" ? undefined : v), text({ max: 200 }).optional()),
  sheet: z.preprocess((v) => (v === "" ? undefined : v), text({ max: 200 }).optional()),
});
const ImageFields = z.object({
  row_id: z.preprocess((v) => (v === "" ? undefined : v), idSchema.optional()),
});
/** Images may come as many files or one ZIP of many. */
const IMAGES_MAX_BYTES = 200 * 1024 * 1024;
const IMAGES_MAX_FILES = 100;

function megabytes(bytes: number) {
  return `${Math.round(bytes / (1024 * 1024))} MB`;
}

/** Reads a multipart form: its text fields and its files, refusing anything else clearly. */
async function readForm(req: FastifyRequest, opts: { maxBytes: number; maxFiles: number; what: string }) {
  if (!req.isMultipart())
    throw new AppError("UNSUPPORTED_MEDIA_TYPE", `The upload must be multipart/form-data with ${opts.what}`);
  const fields: Record<string, string> = {};
  const files: IncomingFile[] = [];
  try {
    for await (const part of req.parts({ limits: { fileSize: opts.maxBytes, files: opts.maxFiles + 1 } })) {
      if (part.type === "file") {
        if (files.length >= opts.maxFiles) {
          part.file.resume();
          throw badRequest(
            `At most ${opts.maxFiles} file${opts.maxFiles > 1 ? "s" : ""} may be uploaded at once`,
            "file",
          );
        }
        const data = await part.toBuffer();
        files.push({ filename: part.filename ?? "", data });
      } else {
        fields[part.fieldname] = String(part.value ?? "");
      }
    }
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "FST_REQ_FILE_TOO_LARGE")
      throw new AppError(
        "PAYLOAD_TOO_LARGE",
        `The file is larger than the ${megabytes(opts.maxBytes)} limit`,
      );
    if (code === "FST_FILES_LIMIT")
      throw badRequest(
        `At most ${opts.maxFiles} file${opts.maxFiles > 1 ? "s" : ""} may be uploaded at once`,
        "file",
      );
    if (code === "FST_PARTS_LIMIT" || code === "FST_FIELDS_LIMIT")
      throw badRequest("The upload has too many fields");
    if (code === "FST_PROTO_VIOLATION" || code === "FST_INVALID_MULTIPART_CONTENT_TYPE")
      throw badRequest("The upload is not valid multipart/form-data");
    throw err;
  }
  return { fields, files };
}

function download(reply: FastifyReply, filename: string, type: string) {
  return reply
    .header("Content-Type", type)
    .header("Content-Disposition", `attachment; filename="${filename.replace(/[^\w.-]+/g, "_")}"`)
    .header("X-Content-Type-Options", "nosniff");
}

/** REST for scripts over the same services as the productImport procedures (docs/api.md). */
export async function productImportRestRoutes(app: FastifyInstance, services: AppServices) {
  const { db, images: storage, config } = services;
  const log = (err: unknown) => app.log.error({ err }, "product import step failed");
  await app.register(multipart, {
    limits: {
      fileSize: IMPORT_MAX_BYTES,
      files: 2,
      fields: 20,
      fieldSize: 64 * 1024,
      parts: 300,
      headerPairs: 200,
    },
  });
  const read = { config: { auth: IMPORT_READ } };
  const write = { config: { auth: IMPORT_WRITE } };

  app.post("/api/product-imports", write, async (req, reply) => {
    const { fields, files } = await readForm(req, {
      maxBytes: IMPORT_MAX_BYTES,
      maxFiles: 1,
      what: "a CSV or XLSX file",
    });
    const meta = parseBody(UploadFields, fields);
    const file = files[0];
    if (!file) throw badRequest("Choose a CSV or XLSX file to upload", "file");
    const created = await createImport(
      db,
      req.user!,
      {
        filename: file.filename,
        data: file.data,
        company: meta.company,
        productType: meta.product_type,
        sheet: meta.sheet,
      },
      log,
    );
    return reply.status(201).send(created);
  });
  app.post("/api/product-imports/:id/reupload", write, async (req) => {
    const { id } = parseBody(IdParams, req.params, "path");
    const { fields, files } = await readForm(req, {
      maxBytes: IMPORT_MAX_BYTES,
      maxFiles: 1,
      what: "the corrected error report",
    });
    const meta = parseBody(UploadFields, fields);
    const file = files[0];
    if (!file) throw badRequest("Choose the corrected error report to upload", "file");
    return reuploadImport(db, req.user!, id, { data: file.data, sheet: meta.sheet }, log);
  });
  app.get("/api/product-imports", read, (req) =>
    listImports(db, req.user!, parseBody(ListImportsSchema, req.query, "query")),
  );
  app.get("/api/product-imports/:id", read, (req) =>
    getImport(db, req.user!, parseBody(IdParams, req.params, "path").id),
  );
  app.put("/api/product-imports/:id", write, (req) =>
    updateImportSettings(
      db,
      req.user!,
      parseBody(IdParams, req.params, "path").id,
      parseBody(ImportSettingsSchema, req.body),
      log,
    ),
  );
  app.delete("/api/product-imports/:id", write, (req) =>
    discardImport(db, req.user!, parseBody(IdParams, req.params, "path").id),
  );
  app.get("/api/product-imports/:id/rows", read, (req) =>
    listRows(
      db,
      req.user!,
      parseBody(IdParams, req.params, "path").id,
      parseBody(RowsQuerySchema, req.query, "query"),
    ),
  );
  app.patch("/api/product-imports/:id/rows/:row_id", write, (req) => {
    const { id, row_id } = parseBody(RowParams, req.params, "path");
    return patchRow(db, req.user!, id, row_id, parseBody(RowPatchSchema, req.body), log);
  });
  app.post("/api/product-imports/:id/rows/bulk", write, (req) =>
    bulkEdit(
      db,
      req.user!,
      parseBody(IdParams, req.params, "path").id,
      parseBody(BulkEditSchema, req.body),
      log,
    ),
  );
  app.post("/api/product-imports/:id/images", write, async (req) => {
    const { id } = parseBody(IdParams, req.params, "path");
    const { fields, files } = await readForm(req, {
      maxBytes: IMAGES_MAX_BYTES,
      maxFiles: IMAGES_MAX_FILES,
      what: "image files or a ZIP of images",
    });
    const { row_id } = parseBody(ImageFields, fields);
    return addImportImages({ db, storage, maxBytes: config.imageMaxBytes }, req.user!, id, files, row_id);
  });
  const sendImage = async (req: FastifyRequest, reply: FastifyReply, variant: "original" | "thumbnail") => {
    const { id, image_id } = parseBody(ImageParams, req.params, "path");
    const file = await openImportImage({ db, storage }, req.user!, id, image_id, variant);
    return reply
      .header("Content-Type", file.mimeType)
      .header("X-Content-Type-Options", "nosniff")
      .header("Cache-Control", "private, max-age=3600")
      .header("Content-Security-Policy", "default-src 'none'; sandbox")
      .header("Content-Length", file.size)
      .send(file.stream);
  };
  app.get("/api/product-imports/:id/images/:image_id", read, (req, reply) =>
    sendImage(req, reply, "original"),
  );
  app.get("/api/product-imports/:id/images/:image_id/thumbnail", read, (req, reply) =>
    sendImage(req, reply, "thumbnail"),
  );
  app.post("/api/product-imports/:id/dry-run", write, (req) =>
    dryRun(db, req.user!, parseBody(IdParams, req.params, "path").id),
  );
  app.post("/api/product-imports/:id/submit", write, (req) =>
    submitImport(
      { db, storage, exportDir: config.exportDir, log },
      req.user!,
      parseBody(IdParams, req.params, "path").id,
    ),
  );
  app.post("/api/product-imports/:id/continue", write, async (req, reply) => {
    const created = await continueWithRowsLeft(db, req.user!, parseBody(IdParams, req.params, "path").id);
    return reply.code(201).send(created);
  });
  app.get("/api/product-imports/:id/export.zip", read, async (req, reply) => {
    const { id } = parseBody(IdParams, req.params, "path");
    const zip = await exportZip({ db, storage }, req.user!, id);
    return download(reply, `import-${id}-export.zip`, "application/zip").send(zip);
  });
  app.get("/api/product-imports/:id/errors.csv", read, async (req, reply) => {
    const { id } = parseBody(IdParams, req.params, "path");
    const csv = await errorReportCsv(db, req.user!, id);
    return download(reply, `import-${id}-errors.csv`, "text/csv; charset=utf-8").send(csv);
  });
  app.get("/api/product-imports/:id/file", read, async (req, reply) => {
    const { id } = parseBody(IdParams, req.params, "path");
    const file = await getImportFile(db, req.user!, id);
    const type =
      file.fileType === "xlsx"
        ? "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
        : "application/octet-stream";
    return download(reply, file.filename, type).send(file.data);
  });
  app.get("/api/product-imports/:id/created", read, (req) =>
    listCreatedProducts(db, req.user!, parseBody(IdParams, req.params, "path").id),
  );
}
