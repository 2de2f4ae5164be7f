// The AI Prompts tab (spec section 2 "AI Validation Prompts screen").
import { ConfirmDialog } from "@client/components/ui/alert-dialog.tsx";
import { Badge } from "@client/components/ui/badge.tsx";
import { Button } from "@client/components/ui/button.tsx";
import { Card, CardContent } from "@client/components/ui/card.tsx";
import { RowAction } from "@client/components/ui/row-action.tsx";
import { SearchBox } from "@client/components/ui/search-box.tsx";
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
import { type AiPrompt, PROMPT_TYPE_LABELS } from "@shared/prompts.ts";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { HistoryIcon, PencilIcon, PlusIcon, Trash2Icon } from "lucide-react";
import { useEffect, useMemo, useState } from "react";
import { toast } from "sonner";
import { TestConnection } from "../aiValidation/test-connection.tsx";
import { companyLabel } from "../templates/model.ts";
import { PromptDialog } from "./prompt-dialog.tsx";
import { PromptHistoryDialog } from "./prompt-history.tsx";

type Column = "prompt_type" | "length" | "company" | "updated_at";

const TYPE_BADGE = {
  general: "default",
  system: "secondary",
  company_specific: "outline",
} as const;

export default function AiPrompts() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useQuery(trpc.prompts.list.queryOptions());
  const fieldOptions = useQuery(trpc.templates.fieldOptions.queryOptions());
  const remove = useMutation(trpc.prompts.delete.mutationOptions());
  const [search, setSearch] = useState("");
  const [sort, setSort] = useState<SortState<Column> | null>(null);
  const [dialog, setDialog] = useState<{ editing: AiPrompt | null } | null>(null);
  const [deleting, setDeleting] = useState<AiPrompt | null>(null);
  const [historyOf, setHistoryOf] = useState<AiPrompt | null>(null);

  useEffect(() => {
    if (list.isError) toast.error(errorMessage(list.error, "Failed to fetch AI prompts"));
  }, [list.isError, list.error]);
  useEffect(() => {
    if (fieldOptions.isError) toast.error(errorMessage(fieldOptions.error, "Failed to fetch field options"));
  }, [fieldOptions.isError, fieldOptions.error]);

  const companies = fieldOptions.data?.companies ?? [];
  const prompts = list.data ?? [];
  const rows = useMemo(() => {
    const needle = search.trim().toLowerCase();
    const filtered = (list.data ?? []).filter(
      (p) =>
        !needle ||
        [
          p.prompt_type,
          PROMPT_TYPE_LABELS[p.prompt_type],
          p.company ?? "",
          companyLabel(fieldOptions.data?.companies, p.company),
        ].some((v) => v.toLowerCase().includes(needle)),
    );
    const cmp = (a: string, b: string) =>
      a.localeCompare(b, undefined, { sensitivity: "base", numeric: true });
    const label = (p: AiPrompt) => companyLabel(fieldOptions.data?.companies, p.company);
    return [...filtered].sort((a, b) => {
      // Spec section 5: by default type descending, then company ascending.
      if (!sort) return cmp(b.prompt_type, a.prompt_type) || cmp(label(a), label(b));
      const sign = sort.direction === "asc" ? 1 : -1;
      switch (sort.key) {
        case "prompt_type":
          return sign * cmp(a.prompt_type, b.prompt_type) || cmp(label(a), label(b));
        case "length":
          return sign * (a.prompt_text.length - b.prompt_text.length);
        case "company":
          return sign * cmp(label(a), label(b));
        case "updated_at":
          return sign * (new Date(a.updated_at).getTime() - new Date(b.updated_at).getTime());
      }
      return 0;
    });
  }, [list.data, search, sort, fieldOptions.data]);

  const confirmDelete = async () => {
    if (!deleting) return;
    try {
      await remove.mutateAsync({ id: deleting.id });
      toast.success("Prompt deleted successfully");
      await queryClient.invalidateQueries(trpc.prompts.list.pathFilter());
    } catch (err) {
      toast.error(errorMessage(err, "Failed to delete prompt"));
    } finally {
      setDeleting(null);
    }
  };

  const onSort = (column: Column) => setSort((s) => toggleSort(s, column));

  return (
    <div data-testid="ai-prompts" className="space-y-6">
      <div className="flex flex-wrap items-end justify-between gap-4">
        <div className="space-y-1">
          <h2 className="text-lg font-semibold tracking-tight">AI Validation Prompts</h2>
          <p className="text-sm text-muted-foreground">
            The instructions the AI validation follows: one general, one system, and one per company.
          </p>
        </div>
        <Button onClick={() => setDialog({ editing: null })}>
          <PlusIcon />
          Create New Prompt
        </Button>
      </div>

      <Card className="py-4">
        <CardContent className="space-y-4 px-4">
          <SearchBox
            value={search}
            onChange={setSearch}
            placeholder="Search prompts..."
            className="max-w-sm sm:w-auto"
          />
          <div className="rounded-md border">
            <Table stackOnPhone data-testid="prompts-table">
              <TableHeader>
                <TableRow>
                  <SortableHead column="prompt_type" sort={sort} onSort={onSort}>
                    Type
                  </SortableHead>
                  <SortableHead column="length" sort={sort} onSort={onSort}>
                    Length
                  </SortableHead>
                  <SortableHead column="company" sort={sort} onSort={onSort}>
                    Company
                  </SortableHead>
                  <SortableHead column="updated_at" sort={sort} onSort={onSort}>
                    Last Updated
                  </SortableHead>
                  <TableHead className="w-32 text-right">Actions</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {list.isPending ? (
                  <TableLoadingRow colSpan={5} message="Loading prompts..." />
                ) : rows.length === 0 ? (
                  <TableEmptyRow colSpan={5} message="No prompts found" />
                ) : (
                  rows.map((p) => (
                    <TableRow key={p.id} data-testid="prompt-row">
                      <TableCell data-primary>
                        <Badge variant={TYPE_BADGE[p.prompt_type]}>{PROMPT_TYPE_LABELS[p.prompt_type]}</Badge>
                      </TableCell>
                      <TableCell data-label="Length" className="tabular-nums">
                        {p.prompt_text.length.toLocaleString()}
                      </TableCell>
                      <TableCell data-label="Company">
                        {p.company ? (
                          companyLabel(companies, p.company)
                        ) : (
                          <span className="text-muted-foreground">-</span>
                        )}
                      </TableCell>
                      <TableCell data-label="Last Updated" className="tabular-nums text-muted-foreground">
                        {new Date(p.updated_at).toLocaleString()}
                      </TableCell>
                      <TableCell data-actions className="text-right">
                        <div className="flex justify-end gap-1">
                          <RowAction label="History" icon={HistoryIcon} onClick={() => setHistoryOf(p)} />
                          <RowAction
                            label="Edit"
                            icon={PencilIcon}
                            onClick={() => setDialog({ editing: p })}
                          />
                          <RowAction
                            label="Delete"
                            icon={Trash2Icon}
                            destructive
                            onClick={() => setDeleting(p)}
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

      <ModelCard />

      <PromptDialog
        open={dialog !== null}
        onOpenChange={(open) => !open && setDialog(null)}
        editing={dialog?.editing ?? null}
        prompts={prompts}
        companies={companies}
      />
      {historyOf && (
        <PromptHistoryDialog
          prompt={historyOf}
          companyName={historyOf.company ? companyLabel(companies, historyOf.company) : null}
          onClose={() => setHistoryOf(null)}
        />
      )}
      <ConfirmDialog
        open={deleting !== null}
        onOpenChange={(open) => !open && setDeleting(null)}
        title="Delete Prompt"
        description="Are you sure you want to delete this prompt? This action cannot be undone."
        confirmLabel="Delete"
        variant="destructive"
        onConfirm={() => void confirmDelete()}
      />
    </div>
  );
}

/** Which model the prompts are sent to, and the connection test. */
function ModelCard() {
  const trpc = useTRPC();
  const status = useQuery(trpc.aiValidation.status.queryOptions());
  return (
    <Card className="py-4" data-testid="ai-model-card">
      <CardContent className="space-y-3 px-4">
        <div className="space-y-1">
          <h3 className="font-semibold">Language model</h3>
          <p className="text-sm text-muted-foreground">
            {status.data
              ? status.data.configured
                ? `These prompts are sent to ${status.data.model} at ${status.data.base_url}.`
                : status.data.message
              : "Loading…"}
          </p>
        </div>
        <TestConnection />
      </CardContent>
    </Card>
  );
}
