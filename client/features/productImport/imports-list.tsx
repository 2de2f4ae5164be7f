// Every import the user may see: status, counts, owner; resume, download the file, discard.
import { ConfirmDialog } from "@client/components/ui/alert-dialog.tsx";
import { Button } from "@client/components/ui/button.tsx";
import { Card, CardContent, CardHeader, CardTitle } from "@client/components/ui/card.tsx";
import { Pagination } from "@client/components/ui/pagination.tsx";
import {
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableHeader,
  TableRow,
} from "@client/components/ui/table.tsx";
import { TableEmptyRow, TableSkeletonRows } from "@client/components/ui/table-helpers.tsx";
import { errorMessage } from "@client/lib/errors.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { DownloadIcon, PlayIcon, Trash2Icon } from "lucide-react";
import { useState } from "react";
import { toast } from "sonner";
import { StatusBadge } from "./import-page.tsx";

const PAGE_SIZE = 25;

export function ImportsList({ onOpen, canEdit }: { onOpen: (id: number) => void; canEdit: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [page, setPage] = useState(1);
  const list = useQuery(trpc.productImport.list.queryOptions({ page, pageSize: PAGE_SIZE }));
  const discard = useMutation(trpc.productImport.discard.mutationOptions());
  const [confirm, setConfirm] = useState<number | null>(null);
  const pageCount = Math.max(1, Math.ceil((list.data?.total ?? 0) / PAGE_SIZE));

  return (
    <Card>
      <CardHeader>
        <CardTitle>Imports</CardTitle>
      </CardHeader>
      <CardContent className="space-y-3">
        {list.isError && (
          <p className="text-sm text-destructive" role="alert">
            {errorMessage(list.error, "The imports could not be loaded")}
          </p>
        )}
        <div className="overflow-x-auto">
          <Table data-testid="imports-table">
            <TableHeader>
              <TableRow>
                <TableHead>File</TableHead>
                <TableHead>Status</TableHead>
                <TableHead>Company</TableHead>
                <TableHead className="text-right">Rows</TableHead>
                <TableHead className="text-right">With errors</TableHead>
                <TableHead className="text-right">Created</TableHead>
                <TableHead>Owner</TableHead>
                <TableHead>Updated</TableHead>
                <TableHead className="w-0" />
              </TableRow>
            </TableHeader>
            <TableBody>
              {list.isPending ? (
                <TableSkeletonRows columns={9} />
              ) : !list.data?.items.length ? (
                <TableEmptyRow
                  colSpan={9}
                  message={
                    canEdit
                      ? "No imports yet: upload a supplier's file above to start one"
                      : "No imports yet. Starting one needs the Create Products permission."
                  }
                />
              ) : (
                list.data.items.map((i) => (
                  <TableRow key={i.id} data-testid={`import-row-${i.id}`}>
                    <TableCell className="max-w-56 truncate font-medium" title={i.filename}>
                      <button type="button" className="hover:underline" onClick={() => onOpen(i.id)}>
                        {i.filename}
                      </button>
                    </TableCell>
                    <TableCell>
                      <StatusBadge status={i.status} />
                    </TableCell>
                    <TableCell>{i.company_label ?? i.company ?? "Not chosen"}</TableCell>
                    <TableCell className="text-right tabular-nums">
                      {i.counts.rows.toLocaleString("en-US")}
                    </TableCell>
                    <TableCell className="text-right tabular-nums">
                      {i.counts.error_rows.toLocaleString("en-US")}
                    </TableCell>
                    <TableCell className="text-right tabular-nums">
                      {i.counts.created.toLocaleString("en-US")}
                    </TableCell>
                    <TableCell>{i.owner.username}</TableCell>
                    <TableCell className="whitespace-nowrap">
                      {new Date(i.updated_at).toLocaleString()}
                    </TableCell>
                    <TableCell className="whitespace-nowrap">
                      <Button
                        size="sm"
                        variant="ghost"
                        onClick={() => onOpen(i.id)}
                        aria-label={`Resume ${i.filename}`}
                      >
                        <PlayIcon className="size-4" />
                      </Button>
                      <Button size="sm" variant="ghost" asChild aria-label={`Download ${i.filename}`}>
                        <a href={`/api/product-imports/${i.id}/file`} download>
                          <DownloadIcon className="size-4" />
                        </a>
                      </Button>
                      {canEdit && (
                        <Button
                          size="sm"
                          variant="ghost"
                          onClick={() => setConfirm(i.id)}
                          aria-label={`Discard ${i.filename}`}
                        >
                          <Trash2Icon className="size-4" />
                        </Button>
                      )}
                    </TableCell>
                  </TableRow>
                ))
              )}
            </TableBody>
          </Table>
        </div>
        {pageCount > 1 && <Pagination page={page} pageCount={pageCount} onPageChange={setPage} />}
      </CardContent>
      <ConfirmDialog
        open={confirm !== null}
        onOpenChange={(o) => !o && setConfirm(null)}
        title="Discard Import"
        description="The import leaves the list. Products it already created stay."
        confirmLabel="Discard"
        variant="destructive"
        onConfirm={async () => {
          if (confirm === null) return;
          try {
            await discard.mutateAsync({ id: confirm });
            toast.success("Import discarded");
            await queryClient.invalidateQueries(trpc.productImport.list.pathFilter());
          } catch (err) {
            toast.error(errorMessage(err, "The import could not be discarded"));
          } finally {
            setConfirm(null);
          }
        }}
      />
    </Card>
  );
}
