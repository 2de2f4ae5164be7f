// Pieces the forecasting settings tabs share: header, load error, search box, paging footer and
// the blank-means-default number cell.
import { Alert, AlertDescription, AlertTitle } from "@client/components/ui/alert.tsx";
import { Button } from "@client/components/ui/button.tsx";
import { Input } from "@client/components/ui/input.tsx";
import { Pagination } from "@client/components/ui/pagination.tsx";
import type { ParameterSource } from "@shared/settings.ts";
import { AlertCircleIcon, InfoIcon } from "lucide-react";
import type { ReactNode } from "react";

export function TabHeader({ title, description }: { title: string; description: ReactNode }) {
  return (
    <div className="space-y-1">
      <h2 className="text-lg font-semibold tracking-tight">{title}</h2>
      <p className="text-sm text-muted-foreground">{description}</p>
    </div>
  );
}

export function LoadError({ message, onRetry }: { message: string; onRetry: () => void }) {
  return (
    <Alert variant="destructive" data-testid="load-error">
      <AlertCircleIcon aria-hidden />
      <AlertTitle>{message}</AlertTitle>
      <AlertDescription>
        <Button variant="outline" size="sm" className="mt-2" onClick={onRetry}>
          Retry
        </Button>
      </AlertDescription>
    </Alert>
  );
}

const countFormat = new Intl.NumberFormat("en-US");

/** "Showing 51–100 of 2,000 products" and the pager of spec section 2. */
export function PagingFooter({
  page,
  pageSize,
  total,
  noun,
  onPageChange,
}: {
  page: number;
  pageSize: number;
  total: number;
  noun: string;
  onPageChange: (page: number) => void;
}) {
  const pageCount = Math.max(1, Math.ceil(total / pageSize));
  const first = total === 0 ? 0 : (page - 1) * pageSize + 1;
  const last = Math.min(total, page * pageSize);
  return (
    <div className="flex flex-col items-center justify-between gap-3 border-t px-6 pt-4 sm:flex-row">
      <p className="text-sm text-muted-foreground tabular-nums" data-testid="paging-summary">
        {total === 0 ? (
          `No ${noun}`
        ) : first > total ? (
          // A link or a shrunk list can point past the end: say so and offer the last page.
          <>
            Page {countFormat.format(page)} is past the last page ({countFormat.format(pageCount)}) of{" "}
            {countFormat.format(total)} {noun}.{" "}
            <button
              type="button"
              className="text-primary underline"
              onClick={() => onPageChange(pageCount)}
              data-testid="last-page"
            >
              Go to the last page
            </button>
          </>
        ) : (
          `Showing ${countFormat.format(first)}–${countFormat.format(last)} of ${countFormat.format(total)} ${noun}`
        )}
      </p>
      <Pagination page={page} pageCount={pageCount} onPageChange={onPageChange} />
    </div>
  );
}

/** Text of an integer input → number, or null when blank (spec section 5: blank means null). */
export function parseOptionalInt(text: string): number | null {
  const trimmed = text.trim();
  return trimmed === "" ? null : Number(trimmed);
}

/** Number inputs in dense table rows: no spinner buttons, so the value and its placeholder fit. */
export const CELL_INPUT_CLASS =
  "h-8 w-20 tabular-nums [appearance:textfield] placeholder:text-muted-foreground/60 [&::-webkit-inner-spin-button]:appearance-none [&::-webkit-outer-spin-button]:appearance-none";

/** A number cell whose blank falls back to an inherited value, shown greyed as its placeholder. */
export function DaysInput({
  value,
  onChange,
  fallback,
  fallbackTitle,
  label,
  error,
  min = 1,
  disabled,
}: {
  value: string;
  onChange: (value: string) => void;
  fallback?: number;
  fallbackTitle?: string;
  label: string;
  error?: string;
  min?: number;
  disabled?: boolean;
}) {
  return (
    <div className="w-20">
      <Input
        type="number"
        inputMode="numeric"
        min={min}
        step={1}
        aria-label={label}
        title={
          error ??
          (fallback === undefined ? undefined : `${fallbackTitle ?? "Blank uses the default"}: ${fallback}`)
        }
        placeholder={fallback === undefined ? "" : String(fallback)}
        value={value}
        disabled={disabled}
        aria-invalid={error ? true : undefined}
        onChange={(e) => onChange(e.target.value)}
        className={CELL_INPUT_CLASS}
      />
      {error && <p className="mt-1 w-36 whitespace-normal text-xs text-destructive">{error}</p>}
    </div>
  );
}

/** The line under a settings table explaining the greyed placeholders. */
export function DefaultsLegend({ children }: { children: ReactNode }) {
  return (
    <p className="flex items-center gap-1.5 px-6 text-xs text-muted-foreground">
      <InfoIcon aria-hidden className="size-3.5 shrink-0" />
      {children}
    </p>
  );
}

export function RowActions({
  label,
  changed,
  canSave,
  canReset,
  saving,
  resetting,
  onSave,
  onReset,
}: {
  label: string;
  changed: boolean;
  canSave: boolean;
  canReset: boolean;
  saving: boolean;
  resetting: boolean;
  onSave: () => void;
  onReset: () => void;
}) {
  return (
    <div className="flex items-center justify-end gap-1">
      <Button
        size="sm"
        className="px-2.5"
        variant={changed ? "default" : "outline"}
        disabled={!canSave || saving}
        onClick={onSave}
        aria-label={`Save ${label}`}
      >
        Save
      </Button>
      <Button
        size="sm"
        className="px-2.5"
        variant="ghost"
        disabled={!canReset || resetting}
        onClick={onReset}
        aria-label={`Reset ${label}`}
      >
        Reset
      </Button>
    </div>
  );
}

/** Where a blank field's value comes from, for its tooltip. */
export function sourceText(source: ParameterSource, vendor: string | null): string {
  switch (source) {
    case "vendor":
      return `Blank uses the default of vendor ${vendor ?? ""}`.trim();
    case "vendor_quoted":
      return `Blank uses the lead time quoted by vendor ${vendor ?? ""}`.trim();
    default:
      return "Blank uses the global default";
  }
}
