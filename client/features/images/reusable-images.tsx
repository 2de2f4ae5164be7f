import { RowAction } from "@client/components/ui/row-action.tsx";
import { SearchBox } from "@client/components/ui/search-box.tsx";
// The Reusable Images tab (spec section 2 "Reusable Images tab").

import { ConfirmDialog } from "@client/components/ui/alert-dialog.tsx";
import { Badge } from "@client/components/ui/badge.tsx";
import { Button } from "@client/components/ui/button.tsx";
import { Card, CardContent } from "@client/components/ui/card.tsx";
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogHeader,
  DialogTitle,
} from "@client/components/ui/dialog.tsx";
import { SortableHead, type SortState, toggleSort } from "@client/components/ui/sortable-head.tsx";
import {
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableHeader,
  TableRow,
} from "@client/components/ui/table.tsx";
import { TableEmptyRow, TableLoadingRow } from "@client/components/ui/table-helpers.tsx";
import { errorMessage } from "@client/lib/errors.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import { formatKilobytes } from "@shared/format.ts";
import type { ReusableImage } from "@shared/images.ts";
import type { FieldOption } from "@shared/templates.ts";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { EyeIcon, PencilIcon, Trash2Icon, UploadIcon } from "lucide-react";
import { type CSSProperties, useEffect, useMemo, useState } from "react";
import { toast } from "sonner";
import { companyLabel } from "../templates/model.ts";
import { ImageDialog } from "./image-dialog.tsx";
import { invalidateReusableImages, useReusableImagesQuery } from "./queries.ts";

type Column = "name" | "is_global" | "company" | "file_size" | "created_at";

/** Spec section 2: 'N/A' for global images, the label or raw value otherwise, 'None' if empty. */
function imageCompany(image: ReusableImage, companies: readonly FieldOption[] | undefined): string {
  if (image.is_global) return "N/A";
  if (!image.company) return "None";
  return companyLabel(companies, image.company);
}

const CHECKERBOARD: CSSProperties = {
  backgroundColor: "#fff",
  backgroundImage:
    "linear-gradient(45deg, #e5e7eb 25%, transparent 25%), linear-gradient(-45deg, #e5e7eb 25%, transparent 25%), linear-gradient(45deg, transparent 75%, #e5e7eb 75%), linear-gradient(-45deg, transparent 75%, #e5e7eb 75%)",
  backgroundSize: "20px 20px",
  backgroundPosition: "0 0, 0 10px, 10px -10px, -10px 0",
};

function PreviewDialog({
  image,
  companies,
  onClose,
}: {
  image: ReusableImage | null;
  companies: readonly FieldOption[] | undefined;
  onClose: () => void;
}) {
  return (
    <Dialog open={image !== null} onOpenChange={(open) => !open && onClose()}>
      <DialogContent className="sm:max-w-3xl" data-testid="image-preview">
        {image && (
          <>
            <DialogHeader>
              <DialogTitle>{image.name}</DialogTitle>
              <DialogDescription>
                {image.is_global
                  ? "Global image"
                  : `Company specific image for ${companyLabel(companies, image.company)}`}
              </DialogDescription>
            </DialogHeader>
            <div className="flex justify-center overflow-hidden rounded-md border" style={CHECKERBOARD}>
              <img
                src={image.image_url}
                alt={image.name}
                className="max-h-[500px] max-w-full object-contain"
              />
            </div>
            <dl className="grid grid-cols-[auto_1fr] gap-x-6 gap-y-1.5 text-sm">
              <dt className="text-muted-foreground">Filename</dt>
              <dd className="truncate">{image.filename}</dd>
              <dt className="text-muted-foreground">Size</dt>
              <dd>
                {formatKilobytes(image.file_size)}
                {image.width && image.height ? ` · ${image.width} × ${image.height} px` : ""}
              </dd>
              <dt className="text-muted-foreground">Type</dt>
              <dd>{image.mime_type}</dd>
              <dt className="text-muted-foreground">Uploaded</dt>
              <dd>{new Date(image.created_at).toLocaleString()}</dd>
            </dl>
          </>
        )}
      </DialogContent>
    </Dialog>
  );
}

export default function ReusableImages() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useReusableImagesQuery();
  const fieldOptions = useQuery(trpc.templates.fieldOptions.queryOptions());
  const remove = useMutation(trpc.images.delete.mutationOptions());
  const [search, setSearch] = useState("");
  const [sort, setSort] = useState<SortState<Column>>({ key: "created_at", direction: "desc" });
  const [dialog, setDialog] = useState<{ editing: ReusableImage | null } | null>(null);
  const [previewing, setPreviewing] = useState<ReusableImage | null>(null);
  const [deleting, setDeleting] = useState<ReusableImage | null>(null);

  useEffect(() => {
    if (list.isError) toast.error("Failed to fetch reusable images");
  }, [list.isError]);
  useEffect(() => {
    if (fieldOptions.isError) toast.error("Failed to fetch field options");
  }, [fieldOptions.isError]);

  const companies = fieldOptions.data?.companies;
  const rows = useMemo(() => {
    const needle = search.trim().toLowerCase();
    const filtered = (list.data ?? []).filter(
      (i) =>
        !needle ||
        [i.name, i.filename, i.company ?? "", imageCompany(i, companies)].some((v) =>
          v.toLowerCase().includes(needle),
        ),
    );
    const sign = sort.direction === "asc" ? 1 : -1;
    const cmp = (a: string, b: string) =>
      a.localeCompare(b, undefined, { sensitivity: "base", numeric: true });
    return [...filtered].sort((a, b) => {
      switch (sort.key) {
        case "name":
          return sign * cmp(a.name, b.name);
        case "is_global":
          return sign * (Number(a.is_global) - Number(b.is_global));
        case "company":
          return sign * cmp(imageCompany(a, companies), imageCompany(b, companies));
        case "file_size":
          return sign * (a.file_size - b.file_size);
        case "created_at":
          return sign * (new Date(a.created_at).getTime() - new Date(b.created_at).getTime());
      }
      return 0;
    });
  }, [list.data, search, sort, companies]);

  const confirmDelete = async () => {
    if (!deleting) return;
    try {
      await remove.mutateAsync({ id: deleting.id });
      toast.success("Image deleted successfully");
      await invalidateReusableImages(queryClient);
    } catch (err) {
      toast.error(errorMessage(err, "Failed to delete image"));
    } finally {
      setDeleting(null);
    }
  };

  const onSort = (column: Column) => setSort((s) => toggleSort(s, column));

  return (
    <div data-testid="reusable-images" className="space-y-6">
      <div className="flex flex-wrap items-end justify-between gap-4">
        <div className="space-y-1">
          <h2 className="text-lg font-semibold tracking-tight">Reusable Images</h2>
          <p className="text-sm text-muted-foreground">
            Images that product imports can reuse, for every company or for one.
          </p>
        </div>
        <Button onClick={() => setDialog({ editing: null })}>
          <UploadIcon />
          Upload New Image
        </Button>
      </div>

      <Card className="py-4">
        <CardContent className="space-y-4 px-4">
          <SearchBox
            value={search}
            onChange={setSearch}
            placeholder="Search images..."
            className="max-w-sm sm:w-auto"
          />
          <div className="rounded-md border">
            <Table stackOnPhone data-testid="images-table">
              <TableHeader>
                <TableRow>
                  <SortableHead column="name" sort={sort} onSort={onSort}>
                    Name
                  </SortableHead>
                  <SortableHead column="is_global" sort={sort} onSort={onSort}>
                    Type
                  </SortableHead>
                  <SortableHead column="company" sort={sort} onSort={onSort}>
                    Company
                  </SortableHead>
                  <SortableHead column="file_size" sort={sort} onSort={onSort} className="text-right">
                    Size
                  </SortableHead>
                  <SortableHead column="created_at" sort={sort} onSort={onSort}>
                    Created
                  </SortableHead>
                  <TableHead>Thumbnail</TableHead>
                  <TableHead className="w-32 text-right">Actions</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {list.isPending ? (
                  <TableLoadingRow colSpan={7} message="Loading images..." />
                ) : rows.length === 0 ? (
                  <TableEmptyRow colSpan={7} message="No images found" />
                ) : (
                  rows.map((i) => (
                    <TableRow key={i.id} data-testid="image-row">
                      <TableCell data-primary className="max-w-64 truncate font-medium" title={i.name}>
                        {i.name}
                      </TableCell>
                      <TableCell data-label="Type">
                        <Badge variant={i.is_global ? "default" : "secondary"}>
                          {i.is_global ? "Global" : "Company Specific"}
                        </Badge>
                      </TableCell>
                      <TableCell
                        data-label="Company"
                        className={i.is_global || !i.company ? "text-muted-foreground" : undefined}
                      >
                        {imageCompany(i, companies)}
                      </TableCell>
                      <TableCell data-label="Size" className="text-right tabular-nums">
                        {formatKilobytes(i.file_size)}
                      </TableCell>
                      <TableCell data-label="Created" className="tabular-nums text-muted-foreground">
                        {new Date(i.created_at).toLocaleDateString()}
                      </TableCell>
                      <TableCell data-label="Thumbnail">
                        <button
                          type="button"
                          className="block size-12 overflow-hidden rounded border"
                          style={CHECKERBOARD}
                          onClick={() => setPreviewing(i)}
                          aria-label={`Preview ${i.name}`}
                        >
                          <img
                            src={i.thumbnail_url}
                            alt=""
                            loading="lazy"
                            className="size-full object-contain"
                          />
                        </button>
                      </TableCell>
                      <TableCell data-actions className="text-right">
                        <div className="flex justify-end gap-1">
                          <RowAction label="Preview" icon={EyeIcon} onClick={() => setPreviewing(i)} />
                          <RowAction
                            label="Edit"
                            icon={PencilIcon}
                            onClick={() => setDialog({ editing: i })}
                          />
                          <RowAction
                            label="Delete"
                            icon={Trash2Icon}
                            destructive
                            onClick={() => setDeleting(i)}
                          />
                        </div>
                      </TableCell>
                    </TableRow>
                  ))
                )}
              </TableBody>
            </Table>
          </div>
        </CardContent>
      </Card>

      <ImageDialog
        open={dialog !== null}
        onOpenChange={(open) => !open && setDialog(null)}
        editing={dialog?.editing ?? null}
        companies={companies ?? []}
      />
      <PreviewDialog image={previewing} companies={companies} onClose={() => setPreviewing(null)} />
      <ConfirmDialog
        open={deleting !== null}
        onOpenChange={(open) => !open && setDeleting(null)}
        title="Delete Image"
        description="Are you sure you want to delete this image? This action cannot be undone."
        confirmLabel="Delete"
        variant="destructive"
        onConfirm={() => void confirmDelete()}
      />
    </div>
  );
}
