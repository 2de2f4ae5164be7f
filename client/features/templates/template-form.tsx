// The template form (spec section 2 "Template form dialog", 4 "Template form", 5 "Template form").
// Rendered inside a dialog: its own, or the product search dialog's second step.
import { Button } from "@client/components/ui/button.tsx";
import { Combobox, MultiCombobox } from "@client/components/ui/combobox.tsx";
import { DialogDescription, DialogFooter, DialogHeader, DialogTitle } from "@client/components/ui/dialog.tsx";
import { Input } from "@client/components/ui/input.tsx";
import { Label } from "@client/components/ui/label.tsx";
import { Textarea } from "@client/components/ui/textarea.tsx";
import { errorMessage } from "@client/lib/errors.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import { cn } from "@client/lib/utils.ts";
import { type CategoryOption, type FieldOptions, TEMPLATE_CATEGORY_TYPES } from "@shared/templates.ts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { Loader2Icon } from "lucide-react";
import type { ReactNode } from "react";
import { Controller, useForm } from "react-hook-form";
import { toast } from "sonner";
import {
  isTemplateFormComplete,
  TEMPLATE_TITLES,
  type TemplateFormValues,
  type TemplateMode,
  templateDescription,
  toTemplatePayload,
} from "./model.ts";

function Field({
  label,
  htmlFor,
  children,
  className,
}: {
  label: string;
  htmlFor: string;
  children: ReactNode;
  className?: string;
}) {
  return (
    <div className={cn("grid gap-1.5", className)}>
      <Label htmlFor={htmlFor}>{label}</Label>
      {children}
    </div>
  );
}

const DECIMAL_FIELDS = [
  ["msrp", "MSRP"],
  ["cost_each", "Cost Each"],
] as const;
const COUNT_FIELDS = [
  ["qty_per_unit", "Quantity per Unit"],
  ["case_qty", "Case Quantity"],
] as const;
const DIMENSION_FIELDS = [
  ["weight", "Weight (oz)"],
  ["length", "Length (in)"],
  ["width", "Width (in)"],
  ["height", "Height (in)"],
] as const;

export interface TemplateFormProps {
  mode: TemplateMode;
  /** The template being edited (edit mode). */
  templateId?: number;
  initial: TemplateFormValues;
  options: FieldOptions | undefined;
  onCancel: () => void;
  onSaved: () => void;
  /** A quiet note under Categories (from a product: the categories that were left out). */
  categoriesNote?: string | null;
}

export function TemplateForm({
  mode,
  templateId,
  initial,
  options,
  onCancel,
  onSaved,
  categoriesNote,
}: TemplateFormProps) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { control, register, handleSubmit } = useForm<TemplateFormValues>({ defaultValues: initial });
  const editing = mode === "edit" && templateId !== undefined;

  const create = useMutation(trpc.templates.create.mutationOptions());
  const update = useMutation(trpc.templates.update.mutationOptions());
  const busy = create.isPending || update.isPending;

  const submit = handleSubmit(async (values) => {
    if (!isTemplateFormComplete(values)) {
      toast.error("Validation failed", { description: "Company and Product Type are required fields" });
      return;
    }
    const payload = toTemplatePayload(values) as { company: string; product_type: string };
    try {
      if (editing) await update.mutateAsync({ ...payload, id: templateId });
      else await create.mutateAsync(payload);
      toast.success(editing ? "Template updated successfully" : "Template created successfully");
      await queryClient.invalidateQueries(trpc.templates.list.pathFilter());
      onSaved();
    } catch (err) {
      toast.error("Failed to save template", { description: errorMessage(err, "An unknown error occurred") });
    }
  });

  const categories = (options?.categories ?? []).filter((c) =>
    (TEMPLATE_CATEGORY_TYPES as readonly number[]).includes(c.type),
  );

  return (
    <form onSubmit={submit} className="grid gap-4" data-testid="template-form" noValidate>
      <DialogHeader>
        <DialogTitle>{TEMPLATE_TITLES[mode]}</DialogTitle>
        <DialogDescription>{templateDescription(mode)}</DialogDescription>
      </DialogHeader>

      <div className="grid gap-4 sm:grid-cols-2">
        <Field label="Company*" htmlFor="tpl-company">
          <Controller
            control={control}
            name="company"
            render={({ field }) => (
              <Combobox
                id="tpl-company"
                data-testid="tpl-company"
                value={field.value}
                onChange={(v) => field.onChange(v ?? "")}
                options={options?.companies ?? []}
                placeholder="Select company"
                searchPlaceholder="Search companies..."
              />
            )}
          />
        </Field>
        <Field label="Product Type*" htmlFor="tpl-product-type">
          <Input
            id="tpl-product-type"
            placeholder="e.g. 'Ephemera' or '12x12 Paper'"
            autoComplete="off"
            {...register("product_type")}
          />
        </Field>
        <Field label="Supplier" htmlFor="tpl-supplier" className="sm:col-span-2">
          <Controller
            control={control}
            name="supplier"
            render={({ field }) => (
              <Combobox
                id="tpl-supplier"
                data-testid="tpl-supplier"
                value={field.value}
                onChange={(v) => field.onChange(v ?? "")}
                options={options?.suppliers ?? []}
                placeholder="Select supplier"
                searchPlaceholder="Search suppliers..."
              />
            )}
          />
        </Field>
        {DECIMAL_FIELDS.map(([name, label]) => (
          <Field key={name} label={label} htmlFor={`tpl-${name}`}>
            <Input id={`tpl-${name}`} type="number" step="0.01" min="0" {...register(name)} />
          </Field>
        ))}
        {COUNT_FIELDS.map(([name, label]) => (
          <Field key={name} label={label} htmlFor={`tpl-${name}`}>
            <Input id={`tpl-${name}`} type="number" step="1" min="0" {...register(name)} />
          </Field>
        ))}
        <Field label="Shipping Restrictions" htmlFor="tpl-ship">
          <Controller
            control={control}
            name="ship_restrictions"
            render={({ field }) => (
              <Combobox
                id="tpl-ship"
                data-testid="tpl-ship"
                value={field.value}
                onChange={(v) => field.onChange(v ?? "")}
                options={options?.shippingRestrictions ?? []}
                placeholder="Select restriction"
                searchPlaceholder="Search restrictions..."
              />
            )}
          />
        </Field>
        <Field label="HTS Code" htmlFor="tpl-hts">
          <Input id="tpl-hts" autoComplete="off" {...register("hts_code")} />
        </Field>
        {DIMENSION_FIELDS.map(([name, label]) => (
          <Field key={name} label={label} htmlFor={`tpl-${name}`}>
            <Input id={`tpl-${name}`} type="number" step="0.01" min="0" {...register(name)} />
          </Field>
        ))}
        <Field label="Tax Category" htmlFor="tpl-tax">
          <Controller
            control={control}
            name="tax_cat"
            render={({ field }) => (
              <Combobox
                id="tpl-tax"
                data-testid="tpl-tax"
                value={field.value}
                onChange={(v) => field.onChange(v ?? "")}
                options={options?.taxCategories ?? []}
                placeholder="Select tax category"
                searchPlaceholder="Search tax categories..."
              />
            )}
          />
        </Field>
        <Field label="Size Category" htmlFor="tpl-size">
          <Controller
            control={control}
            name="size_cat"
            render={({ field }) => (
              <Combobox
                id="tpl-size"
                data-testid="tpl-size"
                value={field.value}
                onChange={(v) => field.onChange(v ?? "")}
                options={options?.sizes ?? []}
                placeholder="Select size"
                searchPlaceholder="Search sizes..."
              />
            )}
          />
        </Field>
        <Field label="Categories" htmlFor="tpl-categories" className="sm:col-span-2">
          <Controller
            control={control}
            name="categories"
            render={({ field }) => (
              <MultiCombobox<CategoryOption>
                id="tpl-categories"
                data-testid="tpl-categories"
                value={field.value}
                onChange={field.onChange}
                options={categories}
                placeholder="Select categories"
                searchPlaceholder="Search categories..."
                listHeight="200px"
                renderOption={(c) => <span className={cn(c.level === 1 && "font-semibold")}>{c.label}</span>}
              />
            )}
          />
          {categoriesNote && (
            <p data-testid="tpl-categories-note" className="text-xs text-muted-foreground">
              {categoriesNote}
            </p>
          )}
        </Field>
        <Field label="Description" htmlFor="tpl-description" className="sm:col-span-2">
          <Textarea
            id="tpl-description"
            rows={3}
            className="field-sizing-fixed"
            {...register("description")}
          />
        </Field>
      </div>

      <DialogFooter>
        <Button type="button" variant="outline" onClick={onCancel} disabled={busy}>
          Cancel
        </Button>
        <Button type="submit" disabled={busy}>
          {busy && <Loader2Icon className="animate-spin" />}
          {editing ? "Update Template" : "Create Template"}
        </Button>
      </DialogFooter>
    </form>
  );
}
