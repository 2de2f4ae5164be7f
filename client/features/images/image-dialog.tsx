// Upload / edit a reusable image (spec sections 2 "Reusable Images tab", 4 "Reusable image dialog",
// 5 "Reusable image form"). Uploads go to the multipart REST route with the session cookie.

import { Button } from "@client/components/ui/button.tsx";
import { Checkbox } from "@client/components/ui/checkbox.tsx";
import { Combobox } from "@client/components/ui/combobox.tsx";
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
} from "@client/components/ui/dialog.tsx";
import { Input } from "@client/components/ui/input.tsx";
import { Label } from "@client/components/ui/label.tsx";
import { errorMessage } from "@client/lib/errors.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import { cn } from "@client/lib/utils.ts";
import { formatKilobytes } from "@shared/format.ts";
import { IMAGE_ACCEPT, type ReusableImage } from "@shared/images.ts";
import type { FieldOption } from "@shared/templates.ts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { ImageUpIcon, Loader2Icon, UploadCloudIcon } from "lucide-react";
import { type FormEvent, useEffect, useState } from "react";
import { useDropzone } from "react-dropzone";
import { toast } from "sonner";
import { invalidateReusableImages } from "./queries.ts";

export const UPLOAD_URL = "/api/reusable-images/upload";

/** The server's message, then its error text (spec section 7: upload reads message, then error). */
async function uploadError(res: Response, fallback: string): Promise<string> {
  try {
    const body = (await res.json()) as { message?: string; error?: string };
    return body.message || body.error || fallback;
  } catch {
    return fallback;
  }
}

function DropZone({ file, onFile }: { file: File | null; onFile: (file: File) => void }) {
  const [preview, setPreview] = useState<string | null>(null);
  useEffect(() => {
    if (!file) {
      setPreview(null);
      return;
    }
    const url = URL.createObjectURL(file);
    setPreview(url);
    return () => URL.revokeObjectURL(url);
  }, [file]);

  const { getRootProps, getInputProps, isDragActive } = useDropzone({
    accept: IMAGE_ACCEPT,
    multiple: false,
    onDrop: (accepted, rejected) => {
      // The last file chosen replaces the earlier one.
      const last = accepted.at(-1);
      if (last) onFile(last);
      const problem = rejected[0]?.errors[0];
      if (problem) toast.error(problem.message);
    },
  });

  return (
    <div
      {...getRootProps()}
      data-testid="image-dropzone"
      data-state={isDragActive ? "drag-active" : file ? "file-selected" : "idle"}
      className={cn(
        "flex min-h-44 cursor-pointer flex-col items-center justify-center gap-2 rounded-lg border-2 border-dashed p-4 text-center text-sm transition-colors",
        isDragActive
          ? "border-primary bg-primary/5"
          : "border-muted-foreground/25 hover:border-muted-foreground/50",
      )}
    >
      <input {...getInputProps()} data-testid="image-file-input" />
      {isDragActive ? (
        <>
          <UploadCloudIcon className="size-8 text-primary" />
          <p className="font-medium text-primary">Drop the image here</p>
        </>
      ) : file && preview ? (
        <>
          <img
            src={preview}
            alt="Selected file preview"
            className="max-h-32 max-w-full rounded object-contain"
          />
          <p className="max-w-full truncate font-medium" data-testid="selected-file-name">
            {file.name}
          </p>
          <p className="text-xs text-muted-foreground">
            {formatKilobytes(file.size)} · Click or drag another image to replace it
          </p>
        </>
      ) : (
        <>
          <ImageUpIcon className="size-8 text-muted-foreground" />
          <p className="font-medium">Drag an image here, or click to select one</p>
          <p className="text-xs text-muted-foreground">JPEG, PNG, GIF or WebP</p>
        </>
      )}
    </div>
  );
}

export function ImageDialog({
  open,
  onOpenChange,
  editing,
  companies,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  /** The image being edited; null uploads a new one. */
  editing: ReusableImage | null;
  companies: readonly FieldOption[];
}) {
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent className="sm:max-w-lg" data-testid="image-dialog">
        {open && (
          <ImageForm
            key={editing?.id ?? "new"}
            editing={editing}
            companies={companies}
            onDone={() => onOpenChange(false)}
          />
        )}
      </DialogContent>
    </Dialog>
  );
}

function ImageForm({
  editing,
  companies,
  onDone,
}: {
  editing: ReusableImage | null;
  companies: readonly FieldOption[];
  onDone: () => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState(editing?.name ?? "");
  const [isGlobal, setIsGlobal] = useState(editing?.is_global ?? false);
  const [company, setCompany] = useState<string | null>(editing?.company ?? null);
  const [file, setFile] = useState<File | null>(null);
  const [errors, setErrors] = useState<{ name?: string; company?: string }>({});
  const [uploading, setUploading] = useState(false);
  const update = useMutation(trpc.images.update.mutationOptions());
  const busy = uploading || update.isPending;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const next = {
      name: name.trim() ? undefined : "Image name is required",
      company: !isGlobal && !company ? "Company is required when the image is not global" : undefined,
    };
    setErrors(next);
    const noFile = !editing && !file;
    if (noFile) toast.error("Please select an image file");
    if (next.name || next.company || noFile) return;
    if (editing) {
      if (!editing.id) {
        toast.error("Image ID is required for update");
        return;
      }
      try {
        await update.mutateAsync({
          id: editing.id,
          name,
          is_global: isGlobal,
          company: isGlobal ? null : company,
        });
        toast.success("Image updated successfully");
        await invalidateReusableImages(queryClient);
        onDone();
      } catch (err) {
        toast.error(errorMessage(err, "Failed to update image"));
      }
      return;
    }
    const form = new FormData();
    form.append("name", name);
    form.append("is_global", String(isGlobal));
    if (!isGlobal && company) form.append("company", company);
    form.append("image", file!);
    setUploading(true);
    try {
      const res = await fetch(UPLOAD_URL, { method: "POST", body: form, credentials: "include" });
      if (!res.ok) throw new Error(await uploadError(res, "Failed to upload image"));
      toast.success("Image uploaded successfully");
      await invalidateReusableImages(queryClient);
      onDone();
    } catch (err) {
      toast.error(errorMessage(err, "Failed to upload image"));
    } finally {
      setUploading(false);
    }
  };

  return (
    <form onSubmit={submit} className="grid gap-4" noValidate>
      <DialogHeader>
        <DialogTitle>{editing ? "Edit Image" : "Upload New Image"}</DialogTitle>
        <DialogDescription>
          {editing
            ? "Change the image's name and which companies may use it."
            : "Add an image that product imports can reuse."}
        </DialogDescription>
      </DialogHeader>

      <div className="grid gap-1.5">
        <Label htmlFor="image-name">Image Name</Label>
        <Input
          id="image-name"
          value={name}
          onChange={(e) => {
            setName(e.target.value);
            if (e.target.value.trim()) setErrors((er) => ({ ...er, name: undefined }));
          }}
          placeholder="e.g. Brand logo"
          aria-invalid={Boolean(errors.name)}
          autoComplete="off"
        />
        {errors.name && <p className="text-sm text-destructive">{errors.name}</p>}
      </div>

      {!editing && (
        <div className="grid gap-1.5">
          <Label>Image</Label>
          <DropZone file={file} onFile={setFile} />
        </div>
      )}

      <div className="flex items-center gap-2">
        <Checkbox
          id="image-global"
          checked={isGlobal}
          onCheckedChange={(checked) => {
            const global = checked === true;
            setIsGlobal(global);
            // Spec section 4: ticking the global checkbox clears the company.
            if (global) {
              setCompany(null);
              setErrors((er) => ({ ...er, company: undefined }));
            }
          }}
        />
        <Label htmlFor="image-global" className="font-normal">
          Available for all companies
        </Label>
      </div>

      {!isGlobal && (
        <div className="grid gap-1.5">
          <Label htmlFor="image-company">Company</Label>
          <Combobox
            id="image-company"
            data-testid="image-company"
            value={company}
            onChange={(v) => {
              setCompany(v);
              if (v) setErrors((er) => ({ ...er, company: undefined }));
            }}
            options={companies}
            placeholder="Select company"
            searchPlaceholder="Search companies..."
            invalid={Boolean(errors.company)}
          />
          {errors.company && <p className="text-sm text-destructive">{errors.company}</p>}
        </div>
      )}

      <DialogFooter>
        <Button type="button" variant="outline" onClick={onDone} disabled={busy}>
          Cancel
        </Button>
        <Button type="submit" disabled={busy}>
          {busy && <Loader2Icon className="animate-spin" />}
          {editing ? "Update Image" : "Upload Image"}
        </Button>
      </DialogFooter>
    </form>
  );
}
