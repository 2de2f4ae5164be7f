// 'Create New Prompt' / 'Edit Prompt' (spec sections 2, 4 "Prompts", 5 "Prompt form").
import { Alert, AlertDescription } from "@client/components/ui/alert.tsx";
import { Button } from "@client/components/ui/button.tsx";
import { Combobox } from "@client/components/ui/combobox.tsx";
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
} from "@client/components/ui/dialog.tsx";
import { Label } from "@client/components/ui/label.tsx";
import {
  Select,
  SelectContent,
  SelectItem,
  SelectTrigger,
  SelectValue,
} from "@client/components/ui/select.tsx";
import { Textarea } from "@client/components/ui/textarea.tsx";
import { errorMessage } from "@client/lib/errors.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import {
  type AiPrompt,
  PROMPT_TYPE_LABELS,
  PROMPT_TYPES,
  type PromptType,
  promptTypeRules,
} from "@shared/prompts.ts";
import type { FieldOption } from "@shared/templates.ts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { InfoIcon, Loader2Icon } from "lucide-react";
import { type FormEvent, useState } from "react";
import { toast } from "sonner";

export function PromptDialog({
  open,
  onOpenChange,
  editing,
  prompts,
  companies,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  /** The prompt being edited; null creates a new one. */
  editing: AiPrompt | null;
  prompts: readonly AiPrompt[];
  companies: readonly FieldOption[];
}) {
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent className="sm:max-w-2xl" data-testid="prompt-dialog">
        {open && (
          <PromptForm
            key={editing?.id ?? "new"}
            editing={editing}
            prompts={prompts}
            companies={companies}
            onDone={() => onOpenChange(false)}
          />
        )}
      </DialogContent>
    </Dialog>
  );
}

function PromptForm({
  editing,
  prompts,
  companies,
  onDone,
}: {
  editing: AiPrompt | null;
  prompts: readonly AiPrompt[];
  companies: readonly FieldOption[];
  onDone: () => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const rules = promptTypeRules(prompts, editing?.id);
  const [type, setType] = useState<PromptType>(editing?.prompt_type ?? rules.defaultType);
  const [company, setCompany] = useState<string | null>(editing?.company ?? null);
  const [text, setText] = useState(editing?.prompt_text ?? "");
  const [errors, setErrors] = useState<{ text?: string; company?: string }>({});
  const create = useMutation(trpc.prompts.create.mutationOptions());
  const update = useMutation(trpc.prompts.update.mutationOptions());
  const busy = create.isPending || update.isPending;
  // Spec section 4: creating while general and system both exist leaves one choice, so it is locked.
  const locked = !editing && rules.locked;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const next = {
      text: text.trim() ? undefined : "Prompt text is required",
      company:
        type === "company_specific" && !company
          ? "Company is required for company-specific prompts"
          : undefined,
    };
    setErrors(next);
    if (next.text || next.company) return;
    const input = {
      prompt_text: text,
      prompt_type: type,
      company: type === "company_specific" ? company : null,
    };
    try {
      if (editing) {
        if (!editing.id) {
          toast.error("Prompt ID is required for update");
          return;
        }
        await update.mutateAsync({ ...input, id: editing.id });
        toast.success("Prompt updated successfully");
      } else {
        await create.mutateAsync(input);
        toast.success("Prompt created successfully");
      }
      await queryClient.invalidateQueries(trpc.prompts.list.pathFilter());
      onDone();
    } catch (err) {
      toast.error(errorMessage(err, editing ? "Failed to update prompt" : "Failed to create prompt"));
    }
  };

  return (
    <form onSubmit={submit} className="grid gap-4" noValidate>
      <DialogHeader>
        <DialogTitle>{editing ? "Edit Prompt" : "Create New Prompt"}</DialogTitle>
        <DialogDescription>
          {editing
            ? "Change the instructions the AI validation uses."
            : "Add instructions the AI validation uses for all products, the system, or one company."}
        </DialogDescription>
      </DialogHeader>

      {!editing && rules.hint && (
        <Alert data-testid="prompt-type-hint">
          <InfoIcon />
          <AlertDescription>{rules.hint}</AlertDescription>
        </Alert>
      )}

      <div className="grid gap-4 sm:grid-cols-2">
        <div className="grid gap-1.5">
          <Label htmlFor="prompt-type">Prompt Type</Label>
          <Select
            value={type}
            onValueChange={(v) => {
              setType(v as PromptType);
              if (v !== "company_specific") setCompany(null);
            }}
            disabled={locked}
          >
            <SelectTrigger id="prompt-type" className="w-full" data-testid="prompt-type">
              <SelectValue />
            </SelectTrigger>
            <SelectContent>
              {PROMPT_TYPES.map((t) => (
                <SelectItem key={t} value={t} disabled={rules.disabled[t] && t !== editing?.prompt_type}>
                  {PROMPT_TYPE_LABELS[t]}
                </SelectItem>
              ))}
            </SelectContent>
          </Select>
        </div>
        {type === "company_specific" && (
          <div className="grid gap-1.5">
            <Label htmlFor="prompt-company">Company</Label>
            <Combobox
              id="prompt-company"
              data-testid="prompt-company"
              value={company}
              onChange={(v) => {
                setCompany(v);
                setErrors((e) => ({ ...e, company: undefined }));
              }}
              options={companies}
              placeholder="Select company"
              searchPlaceholder="Search companies..."
              invalid={Boolean(errors.company)}
            />
            {errors.company && <p className="text-sm text-destructive">{errors.company}</p>}
          </div>
        )}
      </div>

      <div className="grid gap-1.5">
        <Label htmlFor="prompt-text">Prompt Text</Label>
        <Textarea
          id="prompt-text"
          value={text}
          onChange={(e) => {
            setText(e.target.value);
            if (e.target.value.trim()) setErrors((er) => ({ ...er, text: undefined }));
          }}
          placeholder="Enter the prompt text..."
          className="field-sizing-fixed min-h-72 font-mono text-sm"
          aria-invalid={Boolean(errors.text)}
        />
        <div className="flex justify-between text-xs text-muted-foreground">
          <span className="text-destructive">{errors.text}</span>
          <span className="tabular-nums">{text.length.toLocaleString()} characters</span>
        </div>
      </div>

      <DialogFooter>
        <Button type="button" variant="outline" onClick={onDone} disabled={busy}>
          Cancel
        </Button>
        <Button type="submit" disabled={busy}>
          {busy && <Loader2Icon className="animate-spin" />}
          {editing ? "Update Prompt" : "Create Prompt"}
        </Button>
      </DialogFooter>
    </form>
  );
}
