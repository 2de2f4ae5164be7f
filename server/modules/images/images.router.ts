import { z } from "zod";
import { ImageIdSchema, ImageUpdateSchema } from "../../../shared/images.ts";
import { permissionProcedure, router } from "../../trpc/trpc.ts";
import { IMAGES_READ, IMAGES_WRITE } from "./images.access.ts";
import { deleteImage, getImage, listImages, updateImage } from "./images.service.ts";

const IdInput = z.object({ id: ImageIdSchema });

/** Uploads are multipart, so they go to POST /api/reusable-images/upload; the rest is here. */
export const imagesRouter = router({
  list: permissionProcedure(IMAGES_READ).query(({ ctx }) => listImages(ctx.db)),
  get: permissionProcedure(IMAGES_READ)
    .input(IdInput)
    .query(({ ctx, input }) => getImage(ctx.db, input.id)),
  update: permissionProcedure(IMAGES_WRITE)
    .input(ImageUpdateSchema)
    .mutation(({ ctx, input: { id, ...meta } }) => updateImage(ctx.db, id, meta)),
  delete: permissionProcedure(IMAGES_WRITE)
    .input(IdInput)
    .mutation(({ ctx, input }) => deleteImage({ db: ctx.db, storage: ctx.images }, input.id)),
});
