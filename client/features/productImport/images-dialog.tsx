// Step 6 for one row: its images, picked from the reusable image library (global and the
// company's) or uploaded; the order is the product's image order.
import { Button } from "@client/components/ui/button.tsx";
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
} from "@client/components/ui/dialog.tsx";
import { SearchBox } from "@client/components/ui/search-box.tsx";
import { Tabs, TabsContent, TabsList, TabsTrigger } from "@client/components/ui/tabs.tsx";
import { errorMessage } from "@client/lib/errors.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import type { ImageRef, ImportRow, ProductImport } from "@shared/product-import.ts";
import { useMutation, useQuery } from "@tanstack/react-query";
import { Loader2Icon, UploadCloudIcon, XIcon } from "lucide-react";
import { useState } from "react";
import { toast } from "sonner";
import { uploadImportImages } from "./api.ts";

export function ImagesDialog({
  imp,
  row,
  editable,
  onClose,
  onChanged,
}: {
  imp: ProductImport;
  row: ImportRow;
  editable: boolean;
  onClose: () => void;
  onChanged: () => Promise<unknown>;
}) {
  const trpc = useTRPC();
  const library = useQuery(trpc.images.list.queryOptions());
  const patch = useMutation(trpc.productImport.patchRow.mutationOptions());
  const [images, setImages] = useState(row.images);
  const [search, setSearch] = useState("");
  const [uploading, setUploading] = useState(false);
  const company = row.values.company ?? imp.company;

  async function save(next: ImageRef[]) {
    try {
      const res = await patch.mutateAsync({ id: imp.id, row_id: row.row_id, images: next });
      setImages(res.row.images);
      await onChanged();
    } catch (err) {
      toast.error(errorMessage(err, "The images could not be saved"));
    }
  }
  const refs = images.map((i) => ({ source: i.source, id: i.id }));
  const offered = (library.data ?? []).filter(
    (i) =>
      (i.is_global || !company || i.company === company) &&
      (!search || i.name.toLowerCase().includes(search.toLowerCase())),
  );

  return (
    <Dialog open onOpenChange={(o) => !o && onClose()}>
      <DialogContent className="sm:max-w-2xl">
        <DialogHeader>
          <DialogTitle>Images of row {row.row_id}</DialogTitle>
          <DialogDescription>
            {row.values.title ?? "Untitled"} · SKU {row.values.sku ?? "none"}. The first image is the
            product's main image.
          </DialogDescription>
        </DialogHeader>
        <div className="flex min-h-20 flex-wrap gap-2" data-testid="row-images">
          {images.length === 0 && <p className="text-sm text-muted-foreground">No images yet.</p>}
          {images.map((i) => (
            <div key={`${i.source}-${i.id}`} className="relative">
              <img src={i.thumbnail_url} alt={i.filename} className="size-20 rounded border object-cover" />
              {editable && (
                <button
                  type="button"
                  className="absolute -top-2 -right-2 rounded-full border bg-background p-0.5"
                  aria-label={`Remove ${i.filename}`}
                  onClick={() => save(refs.filter((r) => !(r.source === i.source && r.id === i.id)))}
                >
                  <XIcon className="size-3" />
                </button>
              )}
            </div>
          ))}
        </div>
        {editable && (
          <Tabs defaultValue="library">
            <TabsList>
              <TabsTrigger value="library">Image library</TabsTrigger>
              <TabsTrigger value="upload">Upload</TabsTrigger>
            </TabsList>
            <TabsContent value="library" className="space-y-2">
              <SearchBox value={search} onChange={setSearch} placeholder="Search images..." />
              <div
                className="grid max-h-64 grid-cols-3 gap-2 overflow-y-auto sm:grid-cols-5"
                data-testid="library-images"
              >
                {library.isPending && <Loader2Icon className="size-4 animate-spin" />}
                {!library.isPending && offered.length === 0 && (
                  <p className="col-span-full text-sm text-muted-foreground">
                    No library images for this company (global or its own).
                  </p>
                )}
                {offered.map((i) => {
                  const added = refs.some((r) => r.source === "library" && r.id === i.id);
                  return (
                    <button
                      key={i.id}
                      type="button"
                      disabled={added || patch.isPending}
                      className="space-y-1 rounded border p-1 text-left text-xs disabled:opacity-50"
                      onClick={() => save([...refs, { source: "library", id: i.id }])}
                      data-testid={`library-image-${i.id}`}
                    >
                      <img
                        src={i.thumbnail_url}
                        alt=""
                        className="aspect-square w-full rounded object-cover"
                      />
                      <span className="block truncate">{added ? "Added" : i.name}</span>
                    </button>
                  );
                })}
              </div>
            </TabsContent>
            <TabsContent value="upload">
              <label className="flex min-h-24 cursor-pointer flex-col items-center justify-center gap-2 rounded-lg border-2 border-dashed p-4 text-sm">
                {uploading ? (
                  <Loader2Icon className="size-5 animate-spin" />
                ) : (
                  <UploadCloudIcon className="size-5" />
                )}
                JPEG, PNG, GIF or WebP files for this product
                <input
                  type="file"
                  multiple
                  accept="image/*"
                  hidden
                  data-testid="row-image-input"
                  onChange={async (e) => {
                    const files = [...(e.target.files ?? [])];
                    e.target.value = "";
                    if (!files.length) return;
                    setUploading(true);
                    try {
                      const res = await uploadImportImages(imp.id, files, row.row_id);
                      for (const r of res.refused) toast.error(`${r.filename}: ${r.reason}`);
                      await onChanged();
                      onClose();
                    } catch (err) {
                      toast.error((err as Error).message);
                    } finally {
                      setUploading(false);
                    }
                  }}
                />
              </label>
            </TabsContent>
          </Tabs>
        )}
        <DialogFooter>
          <Button variant="outline" onClick={onClose}>
            Done
          </Button>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  );
}
