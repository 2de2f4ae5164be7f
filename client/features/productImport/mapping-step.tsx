// Steps 2 and 3: company, product type and template; the file's columns matched to product fields,
// with the first rows as a preview. Saving re-checks every row on the server.
import { Badge } from "@client/components/ui/badge.tsx";
import { Button } from "@client/components/ui/button.tsx";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@client/components/ui/card.tsx";
import { Combobox } from "@client/components/ui/combobox.tsx";
import { Input } from "@client/components/ui/input.tsx";
import { Label } from "@client/components/ui/label.tsx";
import {
  Select,
  SelectContent,
  SelectItem,
  SelectTrigger,
  SelectValue,
} from "@client/components/ui/select.tsx";
import {
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableHeader,
  TableRow,
} from "@client/components/ui/table.tsx";
import { errorMessage } from "@client/lib/errors.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import { IMPORT_FIELDS, type ImportFieldKey, type ProductImport } from "@shared/product-import.ts";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Loader2Icon } from "lucide-react";
import { useState } from "react";
import { toast } from "sonner";

const NOT_IMPORTED = "__none__";
const AUTO_TEMPLATE = "__auto__";
const NO_TEMPLATE = "__no_template__";

const SOURCE_LABEL: Record<string, string> = {
  saved: "saved mapping",
  exact: "same name",
  synonym: "known name",
  user: "chosen",
  none: "not matched",
};

export function MappingStep({
  imp,
  editable,
  onSaved,
}: {
  imp: ProductImport;
  editable: boolean;
  onSaved: () => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const options = useQuery(trpc.templates.fieldOptions.queryOptions());
  const templates = useQuery(trpc.templates.list.queryOptions());
  const [company, setCompany] = useState<string | null>(imp.company);
  const [productType, setProductType] = useState(imp.product_type ?? "");
  const [template, setTemplate] = useState<string>(imp.template_id ? String(imp.template_id) : AUTO_TEMPLATE);
  const [mapping, setMapping] = useState<Record<string, ImportFieldKey | null>>(imp.mapping);
  const update = useMutation(trpc.productImport.update.mutationOptions());

  const mapped = new Set(Object.values(mapping).filter(Boolean));
  const missing = IMPORT_FIELDS.filter(
    (f) => f.required && !mapped.has(f.key) && !(f.key === "company" && company),
  ).map((f) => f.label);
  const matching = templates.data?.find(
    (t) => t.company === company && t.product_type.toLowerCase() === productType.trim().toLowerCase(),
  );
  const companyLabel = (value: string) =>
    options.data?.companies.find((c) => c.value === value)?.label ?? value;

  async function save() {
    try {
      await update.mutateAsync({
        id: imp.id,
        company,
        product_type: productType.trim() || null,
        template_id:
          template === AUTO_TEMPLATE ? undefined : template === NO_TEMPLATE ? null : Number(template),
        mapping,
      });
      await Promise.all([
        queryClient.invalidateQueries(trpc.productImport.get.queryFilter({ id: imp.id })),
        queryClient.invalidateQueries(trpc.productImport.rows.pathFilter()),
        queryClient.invalidateQueries(trpc.productImport.list.pathFilter()),
      ]);
      toast.success("Mapping saved; every row was checked again");
      onSaved();
    } catch (err) {
      toast.error(errorMessage(err, "The mapping could not be saved"));
    }
  }

  return (
    <div className="space-y-4">
      <Card>
        <CardHeader>
          <CardTitle>Company and product type</CardTitle>
          <CardDescription>
            The import template for this company and product type fills every cell the file leaves empty; the
            file's own values win.
          </CardDescription>
        </CardHeader>
        <CardContent className="grid gap-4 sm:grid-cols-3">
          <div className="space-y-1.5">
            <Label htmlFor="map-company">Company</Label>
            <Combobox
              id="map-company"
              data-testid="map-company"
              value={company}
              onChange={setCompany}
              disabled={!editable}
              options={options.data?.companies ?? []}
              placeholder="From the file's column"
              searchPlaceholder="Search companies..."
            />
          </div>
          <div className="space-y-1.5">
            <Label htmlFor="map-product-type">Product Type</Label>
            <Input
              id="map-product-type"
              data-testid="map-product-type"
              value={productType}
              disabled={!editable}
              onChange={(e) => setProductType(e.target.value)}
              placeholder="e.g. '12x12 Paper'"
              maxLength={200}
            />
          </div>
          <div className="space-y-1.5">
            <Label htmlFor="map-template">Template</Label>
            <Select value={template} onValueChange={setTemplate} disabled={!editable}>
              <SelectTrigger id="map-template" data-testid="map-template" className="w-full">
                <SelectValue />
              </SelectTrigger>
              <SelectContent>
                <SelectItem value={AUTO_TEMPLATE}>
                  {matching
                    ? `Matching: ${companyLabel(matching.company)} · ${matching.product_type}`
                    : "Matching template (none yet)"}
                </SelectItem>
                <SelectItem value={NO_TEMPLATE}>No template</SelectItem>
                {templates.data?.map((t) => (
                  <SelectItem key={t.id} value={String(t.id)}>
                    {companyLabel(t.company)} · {t.product_type}
                  </SelectItem>
                ))}
              </SelectContent>
            </Select>
          </div>
        </CardContent>
      </Card>
      <Card>
        <CardHeader>
          <CardTitle>Columns</CardTitle>
          <CardDescription>
            Each column of the file and the product field it fills. Matched by a saved mapping for the same
            headers, by name, or by common names (UPC → Barcode, Wholesale → Cost Each).
          </CardDescription>
        </CardHeader>
        <CardContent className="space-y-3">
          <div className="overflow-x-auto">
            <Table data-testid="mapping-table">
              <TableHeader>
                <TableRow>
                  <TableHead>File column</TableHead>
                  <TableHead className="min-w-48">Product field</TableHead>
                  <TableHead>Matched</TableHead>
                  <TableHead>First rows</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {imp.columns.map((header, col) => (
                  <TableRow key={header} data-testid={`mapping-${header}`}>
                    <TableCell className="font-medium">{header}</TableCell>
                    <TableCell>
                      <Select
                        value={mapping[header] ?? NOT_IMPORTED}
                        disabled={!editable}
                        onValueChange={(v) => {
                          const field = v === NOT_IMPORTED ? null : (v as ImportFieldKey);
                          // A field takes one column: choosing it here moves it from the other one.
                          const from = field
                            ? Object.entries(mapping).find(([h, f]) => h !== header && f === field)?.[0]
                            : undefined;
                          setMapping((m) => ({
                            ...m,
                            ...(from ? { [from]: null } : {}),
                            [header]: field,
                          }));
                          if (from)
                            toast.info(
                              `${IMPORT_FIELDS.find((f) => f.key === field)?.label ?? field} moved from "${from}" to "${header}"`,
                            );
                        }}
                      >
                        <SelectTrigger
                          className="w-full"
                          aria-label={`Field for ${header}`}
                          data-testid={`map-field-${header}`}
                        >
                          <SelectValue />
                        </SelectTrigger>
                        <SelectContent>
                          <SelectItem value={NOT_IMPORTED}>Not imported</SelectItem>
                          {IMPORT_FIELDS.map((f) => (
                            <SelectItem key={f.key} value={f.key}>
                              {f.label}
                              {f.required ? " *" : ""}
                              {mapped.has(f.key) && mapping[header] !== f.key
                                ? " (moves here from its column)"
                                : ""}
                            </SelectItem>
                          ))}
                        </SelectContent>
                      </Select>
                    </TableCell>
                    <TableCell>
                      <Badge variant="outline">
                        {mapping[header] !== imp.mapping[header]
                          ? "chosen"
                          : (SOURCE_LABEL[imp.mapping_source[header] ?? "none"] ?? "")}
                      </Badge>
                    </TableCell>
                    <TableCell className="max-w-72 truncate text-muted-foreground">
                      {imp.preview
                        .map((r) => r[col] ?? "")
                        .filter(Boolean)
                        .slice(0, 3)
                        .join(" · ") || "(empty in the first rows)"}
                    </TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          </div>
          {missing.length > 0 && (
            <p className="text-sm text-amber-700" role="status" data-testid="mapping-missing">
              Not mapped yet: {missing.join(", ")}. Every row needs {missing.length > 1 ? "them" : "it"} (map
              a column,
              {missing.includes("Company") ? " choose the company," : ""} or fill the cells in the grid).
            </p>
          )}
          {editable && (
            <Button onClick={save} disabled={update.isPending} data-testid="save-mapping">
              {update.isPending && <Loader2Icon className="size-4 animate-spin" />}
              Save and check rows
            </Button>
          )}
        </CardContent>
      </Card>
    </div>
  );
}
