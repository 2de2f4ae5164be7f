// Steps 4 and 5: the checked rows in a spreadsheet-like grid. TanStack Table holds the columns,
// TanStack Virtual renders only the rows in view and the pages they fall on are fetched from the
// server (100 rows each), so 50,000 rows scroll smoothly. Every edit is saved and re-checked on the
// server at once.
import { ConfirmDialog } from "@client/components/ui/alert-dialog.tsx";
import { Button } from "@client/components/ui/button.tsx";
import { Card, CardContent } from "@client/components/ui/card.tsx";
import { Checkbox } from "@client/components/ui/checkbox.tsx";
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
import { SearchBox } from "@client/components/ui/search-box.tsx";
import { Switch } from "@client/components/ui/switch.tsx";
import { errorMessage } from "@client/lib/errors.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import { useDebouncedValue } from "@client/lib/use-debounced-value.ts";
import { cn } from "@client/lib/utils.ts";
import {
  type Finding,
  IMPORT_FIELDS,
  type ImportField,
  type ImportFieldKey,
  type ImportRow,
  type ProductImport,
} from "@shared/product-import.ts";
import { type QueryClient, useMutation, useQueries, useQuery, useQueryClient } from "@tanstack/react-query";
import { type ColumnDef, flexRender, getCoreRowModel, useReactTable } from "@tanstack/react-table";
import { useVirtualizer } from "@tanstack/react-virtual";
import {
  ArrowDownToLineIcon,
  ImagePlusIcon,
  ImagesIcon,
  Loader2Icon,
  ReplaceIcon,
  Trash2Icon,
} from "lucide-react";
import { useEffect, useMemo, useRef, useState } from "react";
import { toast } from "sonner";
import { uploadImportImages } from "./api.ts";
import { ImagesDialog } from "./images-dialog.tsx";

const PAGE_SIZE = 100;
const ROW_HEIGHT = 40;

type GridRow = ImportRow | { row_id: null; index: number };

const WIDTH: Partial<Record<ImportFieldKey, number>> = {
  title: 260,
  description: 260,
  categories: 180,
  sku: 130,
};

function findingsOf(row: ImportRow, field: ImportFieldKey): Finding[] {
  return row.findings.filter((f) => f.field === field);
}

export function invalidateImport(queryClient: QueryClient, trpc: ReturnType<typeof useTRPC>, id: number) {
  return Promise.all([
    queryClient.invalidateQueries(trpc.productImport.rows.pathFilter()),
    queryClient.invalidateQueries(trpc.productImport.get.queryFilter({ id })),
    queryClient.invalidateQueries(trpc.productImport.list.pathFilter()),
    // An edited row is asked again (its cache key changed): the AI step's estimate follows.
    queryClient.invalidateQueries(trpc.aiValidation.importEstimate.queryFilter({ id })),
  ]);
}

/**
 * The selection box and the row number stay at the left edge while the grid scrolls sideways (on a
 * phone a cell being edited would otherwise leave no sign of its row).
 */
function pinned(columnId: string): string | false {
  return columnId === "select"
    ? "sticky left-0 z-[5]"
    : columnId === "row_id"
      ? "sticky left-[36px] z-[5] shadow-[1px_0_0_var(--border)]"
      : false;
}

function Cell({
  row,
  field,
  editing,
  editable,
  onStart,
  onSave,
  onCancel,
  display,
}: {
  row: ImportRow;
  field: ImportField;
  editing: boolean;
  editable: boolean;
  onStart: () => void;
  onSave: (value: string) => void;
  onCancel: () => void;
  /** The value as shown (a company's name for its id); the editor keeps the stored value. */
  display?: (value: string) => string;
}) {
  const value = row.values[field.key] ?? "";
  const findings = findingsOf(row, field.key);
  const error = findings.some((f) => f.severity === "error");
  const warning = !error && findings.length > 0;
  const fromTemplate = row.from_template.includes(field.key);
  const [draft, setDraft] = useState(value);
  // The grid draws only the rows in view: a cell being edited that scrolls out is unmounted
  // without a blur. What was typed is saved then, as a click elsewhere would (it was lost).
  const draftRef = useRef(value);
  const settled = useRef(false);
  const saveRef = useRef(onSave);
  saveRef.current = onSave;
  // biome-ignore lint/correctness/useExhaustiveDependencies: one editing session per `editing`
  useEffect(() => {
    if (!editing) return;
    settled.current = false;
    draftRef.current = value;
    return () => {
      if (!settled.current && draftRef.current !== value) saveRef.current(draftRef.current);
    };
  }, [editing]);
  const settle = (fn: () => void) => {
    settled.current = true;
    fn();
  };
  if (editing)
    return (
      <Input
        autoFocus
        aria-label={`${field.label} of row ${row.row_id}`}
        data-testid="cell-editor"
        className="h-8 rounded-none"
        defaultValue={value}
        onChange={(e) => {
          setDraft(e.target.value);
          draftRef.current = e.target.value;
        }}
        onKeyDown={(e) => {
          if (e.key === "Enter") settle(() => onSave(draft));
          if (e.key === "Escape") settle(onCancel);
        }}
        onBlur={() => settle(() => (draft !== value ? onSave(draft) : onCancel()))}
      />
    );
  const title = [
    ...findings.map((f) => {
      // The AI step's findings carry the model's suggested value.
      const suggestion = (f as { suggestion?: string | null }).suggestion;
      return `${f.severity === "error" ? "Error" : "Warning"}: ${f.message}${suggestion ? `\nSuggested: ${suggestion}` : ""}`;
    }),
    // The company comes from the import's own setting (chosen at upload), not from a template.
    fromTemplate ? (field.key === "company" ? "The import's company" : "From template") : "",
  ]
    .filter(Boolean)
    .join("\n");
  return (
    <button
      type="button"
      disabled={!editable}
      onClick={onStart}
      title={title || undefined}
      data-testid={`cell-${row.row_id}-${field.key}`}
      data-state={error ? "error" : warning ? "warning" : fromTemplate ? "template" : "ok"}
      className={cn(
        "flex h-full w-full items-center truncate px-2 text-left text-sm disabled:cursor-default",
        error && "bg-red-50 ring-1 ring-red-400 ring-inset",
        warning && "bg-amber-50 ring-1 ring-amber-400 ring-inset",
        fromTemplate && "text-muted-foreground italic",
      )}
    >
      {(value && display ? display(value) : value) ||
        (field.required ? <span className="text-red-600">required</span> : "")}
    </button>
  );
}

export function ImportGrid({
  imp,
  editable,
  errorsOnly,
  onErrorsOnlyChange,
}: {
  imp: ProductImport;
  editable: boolean;
  errorsOnly: boolean;
  onErrorsOnlyChange: (v: boolean) => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const fieldOptions = useQuery(trpc.templates.fieldOptions.queryOptions());
  const companies = fieldOptions.data?.companies;
  const [search, setSearch] = useState("");
  const q = useDebouncedValue(search.trim(), 300) || undefined;
  const [editing, setEditing] = useState<{ rowId: number; field: ImportFieldKey } | null>(null);
  const [focus, setFocus] = useState<{ rowId: number; field: ImportFieldKey } | null>(null);
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [imagesFor, setImagesFor] = useState<ImportRow | null>(null);
  const [replaceOpen, setReplaceOpen] = useState(false);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [zipBusy, setZipBusy] = useState(false);
  const zipInput = useRef<HTMLInputElement>(null);
  const patch = useMutation(trpc.productImport.patchRow.mutationOptions());
  const bulk = useMutation(trpc.productImport.bulkEdit.mutationOptions());
  const scrollRef = useRef<HTMLDivElement>(null);

  // The first page tells the total; the pages in view are fetched as they scroll in.
  const [visiblePages, setVisiblePages] = useState<number[]>([1]);
  const pageQueries = useQueries({
    queries: visiblePages.map((page) =>
      trpc.productImport.rows.queryOptions(
        { id: imp.id, page, pageSize: PAGE_SIZE, errors_only: errorsOnly, q },
        { placeholderData: (prev) => prev, staleTime: 30_000 },
      ),
    ),
  });
  const total = pageQueries[0]?.data?.total ?? 0;
  const byPage = new Map(visiblePages.map((p, i) => [p, pageQueries[i]?.data?.items]));

  const virtualizer = useVirtualizer({
    count: total,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 10,
  });
  const virtualItems = virtualizer.getVirtualItems();
  const first = virtualItems[0]?.index ?? 0;
  const last = virtualItems.at(-1)?.index ?? 0;
  const wanted = [...new Set([1, Math.floor(first / PAGE_SIZE) + 1, Math.floor(last / PAGE_SIZE) + 1])].sort(
    (a, b) => a - b,
  );
  if (wanted.join() !== visiblePages.join()) queueMicrotask(() => setVisiblePages(wanted));

  const data: GridRow[] = virtualItems.map((v) => {
    const page = Math.floor(v.index / PAGE_SIZE) + 1;
    return byPage.get(page)?.[v.index % PAGE_SIZE] ?? { row_id: null, index: v.index };
  });

  async function saveCell(rowId: number, field: ImportFieldKey, value: string) {
    setEditing(null);
    try {
      const res = await patch.mutateAsync({ id: imp.id, row_id: rowId, values: { [field]: value } });
      const own = res.row.findings.filter((f) => f.field === field);
      if (own.length) toast.warning(own.map((f) => f.message).join("; "));
      await invalidateImport(queryClient, trpc, imp.id);
    } catch (err) {
      toast.error(errorMessage(err, "The cell could not be saved"));
    }
  }

  const saveRef = useRef(saveCell);
  saveRef.current = saveCell;
  const columns = useMemo<ColumnDef<GridRow>[]>(
    () => [
      {
        id: "select",
        size: 36,
        header: () => null,
        cell: ({ row }) =>
          row.original.row_id !== null && editable ? (
            <Checkbox
              aria-label={`Select row ${row.original.row_id}`}
              checked={selected.has(row.original.row_id)}
              onCheckedChange={(c) =>
                setSelected((s) => {
                  const next = new Set(s);
                  const id = (row.original as ImportRow).row_id;
                  if (c) next.add(id);
                  else next.delete(id);
                  return next;
                })
              }
            />
          ) : null,
      },
      {
        id: "row_id",
        size: 56,
        header: "Row",
        cell: ({ row }) => (
          <span className="px-2 text-xs tabular-nums">
            {row.original.row_id === null ? "" : row.original.row_id}
          </span>
        ),
      },
      {
        id: "status",
        size: 90,
        header: "Check",
        cell: ({ row }) => {
          const r = row.original;
          if (r.row_id === null) return null;
          if (r.created_pid) return <span className="text-xs text-emerald-700">pid {r.created_pid}</span>;
          return r.error_count ? (
            <span className="text-xs font-medium text-red-700" data-testid={`row-errors-${r.row_id}`}>
              {r.error_count} error{r.error_count > 1 ? "s" : ""}
            </span>
          ) : r.warning_count ? (
            <span className="text-xs text-amber-700">
              {r.warning_count} warning{r.warning_count > 1 ? "s" : ""}
            </span>
          ) : (
            <span className="text-xs text-emerald-700" data-testid={`row-ok-${r.row_id}`}>
              OK
            </span>
          );
        },
      },
      {
        id: "images",
        size: 96,
        header: "Images",
        cell: ({ row }) => {
          const r = row.original;
          if (r.row_id === null) return null;
          return (
            <button
              type="button"
              className="flex h-full items-center gap-1 px-1"
              onClick={() => setImagesFor(r)}
              aria-label={`Images of row ${r.row_id}`}
              data-testid={`images-${r.row_id}`}
            >
              {r.images.slice(0, 2).map((i) => (
                <img
                  key={`${i.source}-${i.id}`}
                  src={i.thumbnail_url}
                  alt={i.filename}
                  className="size-8 rounded object-cover"
                />
              ))}
              {r.images.length > 2 && <span className="text-xs">+{r.images.length - 2}</span>}
              {r.images.length === 0 && <ImagePlusIcon className="size-4 text-muted-foreground" />}
            </button>
          );
        },
      },
      ...IMPORT_FIELDS.map(
        (f): ColumnDef<GridRow> => ({
          id: f.key,
          size: WIDTH[f.key] ?? 120,
          header: `${f.label}${f.required ? " *" : ""}`,
          cell: ({ row }) => {
            const r = row.original;
            if (r.row_id === null) return <div className="m-2 h-4 animate-pulse rounded bg-muted" />;
            return (
              <Cell
                row={r}
                field={f}
                editable={editable}
                editing={editing?.rowId === r.row_id && editing.field === f.key}
                onStart={() => {
                  setFocus({ rowId: r.row_id, field: f.key });
                  setEditing({ rowId: r.row_id, field: f.key });
                }}
                onSave={(v) => saveRef.current(r.row_id, f.key, v)}
                onCancel={() => setEditing(null)}
                display={
                  f.key === "company" ? (v) => companies?.find((c) => c.value === v)?.label ?? v : undefined
                }
              />
            );
          },
        }),
      ),
    ],
    [editable, editing, selected, companies],
  );

  // The rows are a window of the server's pages: no client-side paging state to reset when they
  // change (an automatic page reset would re-render on every new window, without end).
  const table = useReactTable({
    data,
    columns,
    getCoreRowModel: getCoreRowModel(),
    manualPagination: true,
    autoResetAll: false,
  });
  const width = table.getTotalSize();

  async function runBulk(edit: Parameters<typeof bulk.mutateAsync>[0]["edit"], done: string) {
    try {
      const res = await bulk.mutateAsync({ id: imp.id, edit });
      toast.success(`${done}: ${res.changed.toLocaleString("en-US")} changed`);
      await invalidateImport(queryClient, trpc, imp.id);
    } catch (err) {
      toast.error(errorMessage(err, "The change could not be made"));
    }
  }

  async function uploadZip(files: File[]) {
    setZipBusy(true);
    try {
      const res = await uploadImportImages(imp.id, files);
      const parts = [
        `${res.matched.length} matched`,
        `${res.unmatched.length} unmatched`,
        `${res.refused.length} refused`,
      ];
      // Green only when every file found its row; each problem on its own line.
      const show = res.unmatched.length || res.refused.length ? toast.warning : toast.success;
      show(`Images: ${parts.join(", ")}`, {
        description: (
          <ul className="list-disc space-y-0.5 pl-4">
            {res.unmatched.length > 0 && <li>No row for: {res.unmatched.slice(0, 5).join(", ")}</li>}
            {res.refused.slice(0, 5).map((r) => (
              <li key={r.filename}>
                {r.filename}: {r.reason}
              </li>
            ))}
          </ul>
        ),
        duration: 10_000,
      });
      await invalidateImport(queryClient, trpc, imp.id);
    } catch (err) {
      toast.error((err as Error).message);
    } finally {
      setZipBusy(false);
    }
  }

  const focusedRow = focus ? data.find((r): r is ImportRow => r.row_id === focus.rowId) : undefined;
  const isLoading = pageQueries[0]?.isPending;
  return (
    <div className="space-y-3">
      <div className="flex flex-wrap items-center gap-3">
        <div className="flex items-center gap-2">
          <Switch
            id="errors-only"
            checked={errorsOnly}
            onCheckedChange={onErrorsOnlyChange}
            data-testid="errors-only"
          />
          <Label htmlFor="errors-only">Only rows with errors</Label>
        </div>
        <SearchBox
          value={search}
          onChange={setSearch}
          placeholder="Find in rows..."
          className="w-full sm:w-56"
        />
        {editable && (
          <>
            <Button variant="outline" size="sm" onClick={() => setReplaceOpen(true)}>
              <ReplaceIcon className="size-4" /> Find &amp; replace
            </Button>
            <Button
              variant="outline"
              size="sm"
              disabled={!focus}
              title={
                focus ? `Copy row ${focus.rowId}'s ${focus.field} into every later row` : "Click a cell first"
              }
              onClick={() =>
                focus &&
                runBulk({ action: "fill_down", field: focus.field, row_id: focus.rowId }, "Filled down")
              }
              data-testid="fill-down"
            >
              <ArrowDownToLineIcon className="size-4" /> Fill down
            </Button>
            <Button
              variant="outline"
              size="sm"
              disabled={selected.size === 0}
              onClick={() => setConfirmDelete(true)}
              data-testid="delete-rows"
            >
              <Trash2Icon className="size-4" /> Delete {selected.size > 0 ? selected.size : ""} row
              {selected.size === 1 ? "" : "s"}
            </Button>
            <Button variant="outline" size="sm" onClick={() => zipInput.current?.click()} disabled={zipBusy}>
              {zipBusy ? <Loader2Icon className="size-4 animate-spin" /> : <ImagesIcon className="size-4" />}{" "}
              Images by SKU (files or ZIP)
            </Button>
            <input
              ref={zipInput}
              type="file"
              multiple
              hidden
              accept=".zip,image/*"
              data-testid="images-zip-input"
              onChange={(e) => {
                const files = [...(e.target.files ?? [])];
                e.target.value = "";
                if (files.length) void uploadZip(files);
              }}
            />
          </>
        )}
      </div>
      <Card className="py-0">
        <CardContent className="p-0">
          <div ref={scrollRef} className="relative h-[60vh] min-h-72 overflow-auto" data-testid="import-grid">
            <div style={{ width, minWidth: "100%" }}>
              <div className="sticky top-0 z-10 flex border-b bg-muted text-xs font-medium">
                {table.getHeaderGroups()[0]!.headers.map((h) => (
                  <div
                    key={h.id}
                    style={{ width: h.getSize() }}
                    className={cn("shrink-0 truncate px-2 py-2", pinned(h.column.id), "bg-muted")}
                  >
                    {flexRender(h.column.columnDef.header, h.getContext())}
                  </div>
                ))}
              </div>
              <div style={{ height: virtualizer.getTotalSize(), position: "relative" }}>
                {table.getRowModel().rows.map((row, i) => {
                  const v = virtualItems[i]!;
                  const r = row.original;
                  return (
                    <div
                      key={v.key}
                      data-testid={r.row_id === null ? undefined : `grid-row-${r.row_id}`}
                      className={cn(
                        "absolute left-0 flex border-b",
                        r.row_id !== null && focus?.rowId === r.row_id && "bg-muted/40",
                      )}
                      style={{ top: v.start, height: ROW_HEIGHT, width }}
                    >
                      {row.getVisibleCells().map((c) => (
                        <div
                          key={c.id}
                          style={{ width: c.column.getSize() }}
                          className={cn(
                            "flex shrink-0 items-center border-r",
                            pinned(c.column.id),
                            pinned(c.column.id) && "bg-background",
                          )}
                        >
                          {flexRender(c.column.columnDef.cell, c.getContext())}
                        </div>
                      ))}
                    </div>
                  );
                })}
              </div>
              {!isLoading && total === 0 && (
                <p className="p-6 text-center text-sm text-muted-foreground">
                  {errorsOnly
                    ? "No row has errors."
                    : q
                      ? "No row contains that text."
                      : "The import has no rows."}
                </p>
              )}
              {isLoading && <p className="p-6 text-center text-sm text-muted-foreground">Loading rows...</p>}
            </div>
          </div>
        </CardContent>
      </Card>
      <p className="text-xs text-muted-foreground">
        {total.toLocaleString("en-US")} row{total === 1 ? "" : "s"}
        {errorsOnly ? " with errors" : ""}. Click a cell to change it (Enter saves, Escape cancels); grey
        italic values come from the template; red cells block the row, amber ones are warnings.
      </p>
      {focusedRow && focusedRow.findings.length > 0 && (
        <Card data-testid="row-findings">
          <CardContent className="space-y-1 py-3 text-sm">
            <p className="font-medium">Row {focusedRow.row_id}</p>
            <ul className="space-y-0.5">
              {focusedRow.findings.map((f) => (
                <li
                  key={`${f.field}-${f.source}-${f.message}`}
                  className={f.severity === "error" ? "text-red-700" : "text-amber-700"}
                >
                  {IMPORT_FIELDS.find((x) => x.key === f.field)?.label ?? f.field}: {f.message}
                  {f.source !== "rules" ? ` (${f.source})` : ""}
                </li>
              ))}
            </ul>
          </CardContent>
        </Card>
      )}
      {imagesFor && (
        <ImagesDialog
          imp={imp}
          row={imagesFor}
          editable={editable}
          onClose={() => setImagesFor(null)}
          onChanged={() => invalidateImport(queryClient, trpc, imp.id)}
        />
      )}
      <ReplaceDialog
        open={replaceOpen}
        onOpenChange={setReplaceOpen}
        onReplace={(edit) => runBulk({ action: "replace", ...edit }, "Replaced")}
      />
      <ConfirmDialog
        open={confirmDelete}
        onOpenChange={setConfirmDelete}
        title="Delete Rows"
        description={`Delete ${selected.size} row${selected.size === 1 ? "" : "s"} from this import? They will not be created.`}
        confirmLabel="Delete"
        variant="destructive"
        onConfirm={async () => {
          await runBulk({ action: "delete_rows", row_ids: [...selected] }, "Deleted");
          setSelected(new Set());
          setConfirmDelete(false);
        }}
      />
    </div>
  );
}

function ReplaceDialog({
  open,
  onOpenChange,
  onReplace,
}: {
  open: boolean;
  onOpenChange: (o: boolean) => void;
  onReplace: (edit: {
    field: ImportFieldKey | null;
    find: string;
    replace: string;
    match_case: boolean;
  }) => Promise<void>;
}) {
  const [field, setField] = useState<ImportFieldKey | "">("");
  const [find, setFind] = useState("");
  const [replace, setReplace] = useState("");
  const [matchCase, setMatchCase] = useState(false);
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent>
        <DialogHeader>
          <DialogTitle>Find and Replace</DialogTitle>
          <DialogDescription>
            Replaces the text in every row (or one column); each changed row is checked again.
          </DialogDescription>
        </DialogHeader>
        <div className="space-y-3">
          <div className="space-y-1.5">
            <Label htmlFor="replace-field">Column</Label>
            <select
              id="replace-field"
              className="h-9 w-full rounded-md border bg-background px-2 text-sm"
              value={field}
              onChange={(e) => setField(e.target.value as ImportFieldKey | "")}
            >
              <option value="">Every column</option>
              {IMPORT_FIELDS.map((f) => (
                <option key={f.key} value={f.key}>
                  {f.label}
                </option>
              ))}
            </select>
          </div>
          <div className="space-y-1.5">
            <Label htmlFor="replace-find">Find</Label>
            <Input id="replace-find" value={find} onChange={(e) => setFind(e.target.value)} maxLength={500} />
          </div>
          <div className="space-y-1.5">
            <Label htmlFor="replace-with">Replace with</Label>
            <Input
              id="replace-with"
              value={replace}
              onChange={(e) => setReplace(e.target.value)}
              maxLength={500}
            />
          </div>
          <div className="flex items-center gap-2">
            <Checkbox
              id="replace-case"
              checked={matchCase}
              onCheckedChange={(c) => setMatchCase(c === true)}
            />
            <Label htmlFor="replace-case">Match case</Label>
          </div>
        </div>
        <DialogFooter>
          <Button variant="outline" onClick={() => onOpenChange(false)}>
            Cancel
          </Button>
          <Button
            disabled={!find}
            onClick={async () => {
              await onReplace({ field: field || null, find, replace, match_case: matchCase });
              onOpenChange(false);
            }}
          >
            Replace all
          </Button>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  );
}
