// Uploads go to the multipart REST routes with the session cookie; XMLHttpRequest reports the
// upload's progress, which fetch cannot.
import type { ProductImport } from "@shared/product-import.ts";

export interface UploadProgress {
  /** 0–1 of the bytes sent; null once sent, while the server reads and checks the rows */
  sent: number | null;
}

export interface ImageUploadResult {
  matched: { filename: string; row_id: number; image_id: number }[];
  unmatched: string[];
  refused: { filename: string; reason: string }[];
}

export class UploadError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

function send<T>(url: string, form: FormData, onProgress?: (p: UploadProgress) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", url);
    xhr.withCredentials = true;
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress?.({ sent: e.loaded / e.total });
    };
    xhr.upload.onload = () => onProgress?.({ sent: null });
    xhr.onload = () => {
      let body: { message?: string; error?: string } & Record<string, unknown> = {};
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        // not JSON: reported by status below
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(body as T);
      else reject(new UploadError(body.message || body.error || `Upload failed (${xhr.status})`, xhr.status));
    };
    xhr.onerror = () => reject(new UploadError("The upload did not reach the server", 0));
    xhr.send(form);
  });
}

export function uploadImportFile(
  file: File,
  fields: { company?: string | null; product_type?: string; sheet?: string },
  onProgress?: (p: UploadProgress) => void,
): Promise<ProductImport> {
  const form = new FormData();
  if (fields.company) form.append("company", fields.company);
  if (fields.product_type) form.append("product_type", fields.product_type);
  if (fields.sheet) form.append("sheet", fields.sheet);
  form.append("file", file);
  return send("/api/product-imports", form, onProgress);
}

export function uploadImportImages(
  importId: number,
  files: File[],
  rowId?: number,
  onProgress?: (p: UploadProgress) => void,
): Promise<ImageUploadResult> {
  const form = new FormData();
  if (rowId !== undefined) form.append("row_id", String(rowId));
  for (const f of files) form.append("file", f);
  return send(`/api/product-imports/${importId}/images`, form, onProgress);
}
