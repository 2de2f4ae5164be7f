// Create Products (/import): the imports list with the upload, or one import's steps (map
// columns, check and edit, images, dry run and submit).
import { PageHeader } from "@client/components/page-header.tsx";
import { Badge } from "@client/components/ui/badge.tsx";
import { Button } from "@client/components/ui/button.tsx";
import { LoadingIndicator } from "@client/components/ui/loading-indicator.tsx";
import { Tabs, TabsList, TabsTrigger } from "@client/components/ui/tabs.tsx";
import { errorMessage } from "@client/lib/errors.ts";
import { useAuth } from "@client/lib/session.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import { hasPermission } from "@shared/permissions.ts";
import type { ProductImport } from "@shared/product-import.ts";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { ArrowLeftIcon } from "lucide-react";
import { z } from "zod";
import { ImportAiPanel } from "../aiValidation/import-panel.tsx";
import { ImportGrid, invalidateImport } from "./grid.tsx";
import { ImportsList } from "./imports-list.tsx";
import { MappingStep } from "./mapping-step.tsx";
import { ReviewStep } from "./review-step.tsx";
import { UploadCard } from "./upload-card.tsx";

export const ImportSearchSchema = z.object({
  id: z.coerce.number().int().positive().optional().catch(undefined),
  step: z.enum(["map", "edit", "review"]).optional().catch(undefined),
  errors: z.boolean().optional().catch(undefined),
});
export type ImportSearch = z.infer<typeof ImportSearchSchema>;

export const STATUS_LABEL: Record<ProductImport["status"], string> = {
  draft: "Draft",
  checked: "Checked",
  submitted: "Submitted",
  exported: "Exported",
};

export function StatusBadge({ status }: { status: ProductImport["status"] }) {
  const variant = status === "draft" ? "outline" : status === "checked" ? "secondary" : "default";
  return (
    <Badge variant={variant} data-testid="import-status">
      {STATUS_LABEL[status]}
    </Badge>
  );
}

function fileFacts(imp: ProductImport): string {
  const parts = [imp.file_type.toUpperCase()];
  if (imp.encoding) parts.push(imp.encoding === "utf-8" ? "UTF-8" : "Windows-1252");
  if (imp.delimiter)
    parts.push(
      `delimiter ${imp.delimiter === "\t" ? "tab" : imp.delimiter === "," ? "comma" : imp.delimiter === ";" ? "semicolon" : imp.delimiter}`,
    );
  if (imp.sheet) parts.push(`sheet “${imp.sheet}”`);
  parts.push(`${imp.counts.rows.toLocaleString("en-US")} rows`);
  return parts.join(" · ");
}

export function ImportPage({
  search,
  onSearchChange,
}: {
  search: ImportSearch;
  onSearchChange: (next: ImportSearch) => void;
}) {
  const { user } = useAuth();
  const canEdit = hasPermission(user, "create:products");
  if (!search.id) {
    return (
      <div className="space-y-6">
        <PageHeader
          title="Create Products"
          description="Turn a supplier's price list (CSV or XLSX) into new products: map its columns, fix what the checks find, add images, then submit."
        />
        {canEdit && <UploadCard onUploaded={(imp) => onSearchChange({ id: imp.id, step: "map" })} />}
        <ImportsList onOpen={(id) => onSearchChange({ id })} canEdit={canEdit} />
      </div>
    );
  }
  return <ImportView id={search.id} search={search} onSearchChange={onSearchChange} canEdit={canEdit} />;
}

function ImportView({
  id,
  search,
  onSearchChange,
  canEdit,
}: {
  id: number;
  search: ImportSearch;
  onSearchChange: (next: ImportSearch) => void;
  canEdit: boolean;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const query = useQuery(trpc.productImport.get.queryOptions({ id }));
  const back = (
    <Button variant="ghost" size="sm" onClick={() => onSearchChange({})} data-testid="back-to-imports">
      <ArrowLeftIcon className="size-4" /> All imports
    </Button>
  );
  if (query.isPending) return <LoadingIndicator message="Loading import..." />;
  if (query.isError)
    return (
      <div className="space-y-4">
        {back}
        <p className="text-sm text-destructive" role="alert">
          {errorMessage(query.error, "The import could not be loaded")}
        </p>
      </div>
    );
  const imp = query.data;
  const submitted = imp.status === "submitted" || imp.status === "exported";
  const step = search.step ?? (submitted ? "review" : imp.status === "draft" ? "map" : "edit");
  const editable = canEdit && !submitted;
  return (
    <div className="space-y-4">
      {back}
      <PageHeader
        title={
          <span className="flex flex-wrap items-center gap-2">
            <span className="break-all">{imp.filename}</span> <StatusBadge status={imp.status} />
          </span>
        }
        description={
          <span data-testid="file-facts">
            Import #{imp.id} by {imp.owner.username} · {fileFacts(imp)}
          </span>
        }
      />
      <div className="flex flex-wrap gap-2 text-sm" data-testid="import-counts">
        <Badge variant="outline">{imp.counts.valid_rows.toLocaleString("en-US")} ready</Badge>
        <Badge variant={imp.counts.error_rows ? "destructive" : "outline"}>
          {imp.counts.error_rows.toLocaleString("en-US")} with errors
        </Badge>
        <Badge variant="outline">{imp.counts.warning_rows.toLocaleString("en-US")} with warnings only</Badge>
        {imp.counts.created > 0 && <Badge>{imp.counts.created.toLocaleString("en-US")} created</Badge>}
      </div>
      <Tabs
        value={step}
        onValueChange={(v) => onSearchChange({ ...search, step: v as ImportSearch["step"] })}
      >
        <TabsList className="w-full justify-start overflow-x-auto sm:w-auto">
          <TabsTrigger value="map">1. Columns</TabsTrigger>
          {/* Shorter names on a phone, so the three steps fit without scrolling. */}
          <TabsTrigger value="edit">
            <span className="sm:hidden">2. Check</span>
            <span className="hidden sm:inline">2. Check &amp; edit</span>
          </TabsTrigger>
          <TabsTrigger value="review">
            <span className="sm:hidden">3. Submit</span>
            <span className="hidden sm:inline">3. Dry run &amp; submit</span>
          </TabsTrigger>
        </TabsList>
      </Tabs>
      {step === "map" && (
        <MappingStep
          imp={imp}
          editable={editable}
          onSaved={() => onSearchChange({ ...search, step: "edit" })}
        />
      )}
      {step === "edit" && editable && (
        <ImportAiPanel importId={imp.id} onChanged={() => void invalidateImport(queryClient, trpc, imp.id)} />
      )}
      {step === "edit" && (
        <ImportGrid
          imp={imp}
          editable={editable}
          errorsOnly={search.errors ?? false}
          onErrorsOnlyChange={(errors) => onSearchChange({ ...search, errors: errors || undefined })}
        />
      )}
      {step === "review" && <ReviewStep imp={imp} editable={canEdit} />}
    </div>
  );
}
