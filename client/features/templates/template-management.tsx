import { RowAction } from "@client/components/ui/row-action.tsx";
import { SearchBox } from "@client/components/ui/search-box.tsx";
// The Template Management tab (spec section 2 "Import Templates screen").

import { ConfirmDialog } from "@client/components/ui/alert-dialog.tsx";
import { Button } from "@client/components/ui/button.tsx";
import { Card, CardContent } from "@client/components/ui/card.tsx";
import { Dialog, DialogContent } from "@client/components/ui/dialog.tsx";
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
import type { Template } from "@shared/templates.ts";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { CopyIcon, FilePlusIcon, PencilIcon, SearchIcon, Trash2Icon } from "lucide-react";
import { useEffect, useMemo, useState } from "react";
import { toast } from "sonner";
import {
  companyLabel,
  copyOfTemplate,
  emptyTemplateForm,
  type TemplateFormValues,
  type TemplateMode,
  templateToForm,
} from "./model.ts";
import { ProductSearchDialog } from "./product-search-dialog.tsx";
import { TemplateForm } from "./template-form.tsx";

type Column = "company" | "product_type" | "updated_at";

interface FormState {
  mode: TemplateMode;
  id?: number;
  initial: TemplateFormValues;
}

export default function TemplateManagement() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useQuery(trpc.templates.list.queryOptions());
  const fieldOptions = useQuery(trpc.templates.fieldOptions.queryOptions());
  const [search, setSearch] = useState("");
  const [sort, setSort] = useState<SortState<Column> | null>(null);
  const [form, setForm] = useState<FormState | null>(null);
  const [searchOpen, setSearchOpen] = useState(false);
  const [deleting, setDeleting] = useState<Template | null>(null);
  const remove = useMutation(trpc.templates.delete.mutationOptions());

  useEffect(() => {
    if (list.isError) toast.error("Failed to fetch templates");
  }, [list.isError]);
  useEffect(() => {
    if (fieldOptions.isError)
      toast.error("Failed to fetch field options", {
        description: "Could not retrieve field options from the server",
      });
  }, [fieldOptions.isError]);

  const companies = fieldOptions.data?.companies;
  const suppliers = fieldOptions.data?.suppliers;
  const rows = useMemo(() => {
    const needle = search.trim().toLowerCase();
    const label = (t: Template) => companyLabel(companies, t.company);
    const supplierLabel = (t: Template) =>
      t.supplier == null ? "" : (suppliers?.find((s) => s.value === String(t.supplier))?.label ?? "");
    const filtered = (list.data ?? []).filter(
      (t) =>
        !needle ||
        [
          t.company,
          label(t),
          t.product_type,
          t.supplier == null ? "" : String(t.supplier),
          supplierLabel(t),
        ].some((v) => v.toLowerCase().includes(needle)),
    );
    if (!sort) return filtered;
    const value = (t: Template) =>
      sort.key === "company"
        ? label(t)
        : sort.key === "product_type"
          ? t.product_type
          : new Date(t.updated_at);
    return [...filtered].sort((a, b) => {
      const x = value(a);
      const y = value(b);
      const result =
        x instanceof Date && y instanceof Date
          ? x.getTime() - y.getTime()
          : String(x).localeCompare(String(y), undefined, { sensitivity: "base", numeric: true });
      return sort.direction === "asc" ? result : -result;
    });
  }, [list.data, search, sort, companies, suppliers]);

  const onSort = (column: Column) => setSort((s) => toggleSort(s, column));

  const confirmDelete = async () => {
    if (!deleting) return;
    try {
      await remove.mutateAsync({ id: deleting.id });
      toast.success("Template deleted successfully");
      await queryClient.invalidateQueries(trpc.templates.list.pathFilter());
    } catch (err) {
      toast.error(errorMessage(err, "Failed to delete template"));
    } finally {
      setDeleting(null);
    }
  };

  return (
    <div data-testid="template-management" className="space-y-6">
      <div className="flex flex-wrap items-end justify-between gap-4">
        <div className="space-y-1">
          <h2 className="text-lg font-semibold tracking-tight">Import Templates</h2>
          <p className="text-sm text-muted-foreground">
            Defaults applied to products created through the import, one template per company and product
            type.
          </p>
        </div>
        <div className="flex flex-wrap gap-2">
          <Button
            variant="outline"
            onClick={() => {
              void fieldOptions.refetch();
              setSearchOpen(true);
            }}
          >
            <SearchIcon />
            Create from Product
          </Button>
          <Button onClick={() => setForm({ mode: "create", initial: emptyTemplateForm() })}>
            <FilePlusIcon />
            Create Blank Template
          </Button>
        </div>
      </div>

      <Card className="py-4">
        <CardContent className="space-y-4 px-4">
          <SearchBox
            value={search}
            onChange={setSearch}
            placeholder="Search templates..."
            className="max-w-sm sm:w-auto"
          />
          <div className="rounded-md border">
            <Table stackOnPhone data-testid="templates-table">
              <TableHeader>
                <TableRow>
                  <SortableHead column="company" sort={sort} onSort={onSort}>
                    Company
                  </SortableHead>
                  <SortableHead column="product_type" sort={sort} onSort={onSort}>
                    Product Type
                  </SortableHead>
                  <SortableHead column="updated_at" sort={sort} onSort={onSort}>
                    Last Updated
                  </SortableHead>
                  <TableHead className="w-32 text-right">Actions</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {list.isPending ? (
                  <TableLoadingRow colSpan={4} message="Loading templates..." />
                ) : rows.length === 0 ? (
                  <TableEmptyRow colSpan={4} message="No templates found" />
                ) : (
                  rows.map((t) => (
                    <TableRow key={t.id} data-testid="template-row">
                      <TableCell data-primary className="font-medium">
                        {companyLabel(companies, t.company)}
                      </TableCell>
                      <TableCell data-label="Product Type">{t.product_type}</TableCell>
                      <TableCell data-label="Last Updated" className="tabular-nums text-muted-foreground">
                        {new Date(t.updated_at).toLocaleDateString()}
                      </TableCell>
                      <TableCell data-actions className="text-right">
                        <div className="flex justify-end gap-1">
                          <RowAction
                            label="Edit"
                            icon={PencilIcon}
                            onClick={() => setForm({ mode: "edit", id: t.id, initial: templateToForm(t) })}
                          />
                          <RowAction
                            label="Copy"
                            icon={CopyIcon}
                            onClick={() => setForm({ mode: "copy", initial: copyOfTemplate(t) })}
                          />
                          <RowAction
                            label="Delete"
                            icon={Trash2Icon}
                            destructive
                            onClick={() => setDeleting(t)}
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

      <Dialog open={form !== null} onOpenChange={(open) => !open && setForm(null)}>
        <DialogContent className="sm:max-w-3xl" data-testid="template-dialog">
          {form && (
            <TemplateForm
              key={`${form.mode}-${form.id ?? "new"}`}
              mode={form.mode}
              templateId={form.id}
              initial={form.initial}
              options={fieldOptions.data}
              onCancel={() => setForm(null)}
              onSaved={() => setForm(null)}
            />
          )}
        </DialogContent>
      </Dialog>

      <ProductSearchDialog
        open={searchOpen}
        onOpenChange={setSearchOpen}
        options={fieldOptions.data}
        onSaved={() => undefined}
      />

      <ConfirmDialog
        open={deleting !== null}
        onOpenChange={(open) => !open && setDeleting(null)}
        title="Delete Template"
        description="Are you sure you want to delete this template? This action cannot be undone."
        confirmLabel="Delete"
        variant="destructive"
        onConfirm={() => void confirmDelete()}
      />
    </div>
  );
}
