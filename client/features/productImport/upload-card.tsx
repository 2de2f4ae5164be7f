// Step 1: the supplier's file, with the company and product type that choose the template.
import { Button } from "@client/components/ui/button.tsx";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@client/components/ui/card.tsx";
import { Combobox } from "@client/components/ui/combobox.tsx";
import { Input } from "@client/components/ui/input.tsx";
import { Label } from "@client/components/ui/label.tsx";
import { Progress } from "@client/components/ui/progress.tsx";
import {
  Select,
  SelectContent,
  SelectItem,
  SelectTrigger,
  SelectValue,
} from "@client/components/ui/select.tsx";
import { useTRPC } from "@client/lib/trpc.ts";
import { cn } from "@client/lib/utils.ts";
import type { ProductImport } from "@shared/product-import.ts";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { FileSpreadsheetIcon, Loader2Icon, UploadCloudIcon } from "lucide-react";
import { useEffect, useState } from "react";
import { useDropzone } from "react-dropzone";
import { toast } from "sonner";
import { type UploadProgress, uploadImportFile } from "./api.ts";
import { looksLikeZip, readSheetNames, type WorkbookSheet } from "./sheet-names.ts";

/**
 * What the file says about its sheets: still being read, none (not a ZIP: a CSV), the workbook's
 * sheets, or a ZIP whose sheets could not be read (the sheet's name is then typed).
 */
type SheetChoice =
  | { kind: "reading" }
  | { kind: "none" }
  | { kind: "list"; sheets: WorkbookSheet[] }
  | { kind: "typed" };

const sheetLabel = (s: WorkbookSheet) => (s.hidden ? `${s.name} (hidden)` : s.name);

export function UploadCard({ onUploaded }: { onUploaded: (imp: ProductImport) => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const options = useQuery(trpc.templates.fieldOptions.queryOptions());
  const [file, setFile] = useState<File | null>(null);
  const [company, setCompany] = useState<string | null>(null);
  const [productType, setProductType] = useState("");
  const [sheet, setSheet] = useState("");
  const [sheetChoice, setSheetChoice] = useState<SheetChoice>({ kind: "none" });
  const [progress, setProgress] = useState<UploadProgress | null>(null);
  const [error, setError] = useState<string | null>(null);

  // A new file: read its sheets (a CSV has none) and choose the first visible one.
  useEffect(() => {
    setSheet("");
    if (!file) {
      setSheetChoice({ kind: "none" });
      return;
    }
    let current = true;
    setSheetChoice({ kind: "reading" });
    file
      .arrayBuffer()
      .then((buffer) => {
        if (!current) return;
        const bytes = new Uint8Array(buffer);
        const sheets = readSheetNames(bytes);
        if (sheets) {
          setSheetChoice({ kind: "list", sheets });
          setSheet((sheets.find((s) => !s.hidden) ?? sheets[0])?.name ?? "");
        } else setSheetChoice({ kind: looksLikeZip(bytes) ? "typed" : "none" });
      })
      .catch(() => {
        if (current) setSheetChoice({ kind: "typed" });
      });
    return () => {
      current = false;
    };
  }, [file]);

  const { getRootProps, getInputProps, isDragActive } = useDropzone({
    multiple: false,
    onDrop: (accepted) => {
      const f = accepted.at(-1);
      if (f) {
        setFile(f);
        setError(null);
      }
    },
  });

  async function start() {
    if (!file) return;
    setError(null);
    setProgress({ sent: 0 });
    try {
      const imp = await uploadImportFile(
        file,
        {
          company,
          product_type: productType.trim(),
          // A chosen sheet's name is sent exactly as the workbook spells it; a typed one trimmed.
          sheet: (sheetChoice.kind === "typed" ? sheet.trim() : sheet) || undefined,
        },
        setProgress,
      );
      await queryClient.invalidateQueries(trpc.productImport.list.pathFilter());
      toast.success(`${imp.counts.rows.toLocaleString("en-US")} rows read from ${imp.filename}`);
      onUploaded(imp);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setProgress(null);
    }
  }

  const busy = progress !== null;
  return (
    <Card>
      <CardHeader>
        <CardTitle>New import</CardTitle>
        <CardDescription>
          A CSV (any delimiter, UTF-8 or Windows-1252) or an XLSX workbook, up to 50,000 rows and 20 MB.
        </CardDescription>
      </CardHeader>
      <CardContent className="space-y-4">
        <div
          {...getRootProps()}
          data-testid="import-dropzone"
          className={cn(
            "flex min-h-32 cursor-pointer flex-col items-center justify-center gap-2 rounded-lg border-2 border-dashed p-4 text-center text-sm transition-colors",
            isDragActive
              ? "border-primary bg-primary/5"
              : "border-muted-foreground/25 hover:border-muted-foreground/50",
          )}
        >
          <input {...getInputProps()} data-testid="import-file-input" />
          {file ? (
            <>
              <FileSpreadsheetIcon className="size-6 text-muted-foreground" aria-hidden />
              <span className="break-all font-medium">{file.name}</span>
              <span className="text-muted-foreground">
                {(file.size / 1024).toFixed(1)} KB · click to choose another
              </span>
            </>
          ) : (
            <>
              <UploadCloudIcon className="size-6 text-muted-foreground" aria-hidden />
              <span>Drop the supplier's file here, or click to choose it</span>
            </>
          )}
        </div>
        <div className="grid gap-4 sm:grid-cols-3">
          <div className="space-y-1.5">
            <Label htmlFor="import-company">Company</Label>
            <Combobox
              id="import-company"
              data-testid="import-company"
              value={company}
              onChange={setCompany}
              options={options.data?.companies ?? []}
              placeholder={options.isPending ? "Loading..." : "Choose later"}
              searchPlaceholder="Search companies..."
            />
          </div>
          <div className="space-y-1.5">
            <Label htmlFor="import-product-type">Product Type</Label>
            <Input
              id="import-product-type"
              data-testid="import-product-type"
              value={productType}
              onChange={(e) => setProductType(e.target.value)}
              placeholder="e.g. '12x12 Paper'"
              maxLength={200}
            />
          </div>
          {sheetChoice.kind === "list" && sheetChoice.sheets.length > 1 && (
            <div className="min-w-0 space-y-1.5">
              <Label htmlFor="import-sheet">Sheet</Label>
              <Select value={sheet} onValueChange={setSheet} disabled={busy}>
                <SelectTrigger id="import-sheet" data-testid="import-sheet" className="w-full min-w-0">
                  <SelectValue />
                </SelectTrigger>
                <SelectContent>
                  {sheetChoice.sheets.map((s) => (
                    <SelectItem key={s.name} value={s.name}>
                      {sheetLabel(s)}
                    </SelectItem>
                  ))}
                </SelectContent>
              </Select>
            </div>
          )}
          {sheetChoice.kind === "list" && sheetChoice.sheets.length === 1 && sheetChoice.sheets[0] && (
            <p className="min-w-0 break-words text-sm sm:self-end sm:py-2" data-testid="import-sheet">
              <span className="font-medium">Sheet:</span> {sheetLabel(sheetChoice.sheets[0])}
            </p>
          )}
          {sheetChoice.kind === "typed" && (
            <div className="space-y-1.5">
              <Label htmlFor="import-sheet">Sheet</Label>
              <Input
                id="import-sheet"
                data-testid="import-sheet"
                value={sheet}
                onChange={(e) => setSheet(e.target.value)}
                placeholder="The first sheet"
                maxLength={200}
              />
            </div>
          )}
        </div>
        {busy && (
          <div className="space-y-1" data-testid="upload-progress">
            <Progress value={progress.sent === null ? 100 : Math.round(progress.sent * 100)} />
            <p className="text-xs text-muted-foreground">
              {progress.sent === null
                ? "Reading and checking every row on the server..."
                : `Uploading... ${Math.round(progress.sent * 100)}%`}
            </p>
          </div>
        )}
        {error && (
          <p className="text-sm text-destructive" role="alert" data-testid="upload-error">
            {error}
          </p>
        )}
        <Button
          onClick={start}
          disabled={!file || busy || sheetChoice.kind === "reading"}
          data-testid="start-import"
        >
          {busy ? <Loader2Icon className="size-4 animate-spin" /> : <UploadCloudIcon className="size-4" />}
          Upload and check
        </Button>
      </CardContent>
    </Card>
  );
}
