// Reusable images (spec sections 2 "Reusable Images tab", 3 "Reusable image", 4, 5, 7, 9).
import { z } from "zod";
import { idSchema, text } from "./input.ts";

/** Spec section 5: the accepted types (the server checks the bytes, not the name). */
export const IMAGE_MIME_TYPES = ["image/jpeg", "image/png", "image/gif", "image/webp"] as const;
export const IMAGE_ACCEPT: Record<string, string[]> = {
  "image/jpeg": [".jpeg", ".jpg"],
  "image/png": [".png"],
  "image/gif": [".gif"],
  "image/webp": [".webp"],
};

const flag = z.preprocess(
  (v) => {
    if (typeof v !== "string") return v;
    const s = v.trim().toLowerCase();
    return s === "true" || s === "1" || s === "on"
      ? true
      : s === "false" || s === "0" || s === ""
        ? false
        : v;
  },
  z.boolean({ error: "must be true or false" }),
);

const ImageMetaFields = z.object({
  name: text({ max: 200, required: "Image name is required" }),
  is_global: flag.default(false),
  company: z.preprocess(
    (v) => (typeof v === "number" ? String(v) : typeof v === "string" && v.trim() === "" ? null : v),
    text({ max: 200 }).nullable().optional(),
  ),
});

/** A global image has no company; any other needs one. */
function scoped<T extends z.output<typeof ImageMetaFields>>(v: T, ctx: z.RefinementCtx) {
  const company = v.is_global ? null : (v.company ?? null);
  if (!v.is_global && !company)
    ctx.addIssue({
      code: "custom",
      path: ["company"],
      message: "Company is required when the image is not global",
    });
  return { ...v, company };
}

/** Name, scope and company of an image. */
export const ImageMetaSchema = ImageMetaFields.transform(scoped);
export const ImageUpdateSchema = ImageMetaFields.extend({
  id: idSchema,
}).transform(scoped);
export type ImageMetaInput = z.input<typeof ImageMetaSchema>;
export type ImageMeta = z.output<typeof ImageMetaSchema>;

export const ImageIdSchema = idSchema;

export interface ReusableImage {
  id: number;
  name: string;
  is_global: boolean;
  company: string | null;
  /** bytes */
  file_size: number;
  filename: string;
  mime_type: string;
  width: number | null;
  height: number | null;
  /** Needs a session with image access; see README "Reusable images". */
  image_url: string;
  thumbnail_url: string;
  created_at: Date;
  updated_at: Date;
}
