// Searchable selects (shadcn's Combobox: a Radix Popover holding a cmdk list). Spec section 2
// "Template form dialog": the selected options come first, an empty search reads 'No options
// found.', and the multi-select stays open while choosing.
import { cn } from "@client/lib/utils.ts";
import { CheckIcon, ChevronsUpDownIcon, XIcon } from "lucide-react";
import { type ReactNode, useState } from "react";
import { Badge } from "./badge.tsx";
import { Button } from "./button.tsx";
import { Command, CommandEmpty, CommandGroup, CommandInput, CommandItem, CommandList } from "./command.tsx";
import { Popover, PopoverContent, PopoverTrigger } from "./popover.tsx";

export interface ComboboxOption {
  value: string;
  label: string;
}

export const NO_OPTIONS_TEXT = "No options found.";

/** Selected options first, each group keeping the given order. */
export function selectedFirst<T extends ComboboxOption>(
  options: readonly T[],
  selected: readonly string[],
): T[] {
  const chosen = new Set(selected);
  return [...options.filter((o) => chosen.has(o.value)), ...options.filter((o) => !chosen.has(o.value))];
}

interface BaseProps<T extends ComboboxOption> {
  id?: string;
  options: readonly T[];
  placeholder?: string;
  searchPlaceholder?: string;
  disabled?: boolean;
  invalid?: boolean;
  className?: string;
  /** How an option reads in the list (the label by default). */
  renderOption?: (option: T) => ReactNode;
  /** Height of the list, e.g. "200px". */
  listHeight?: string;
  "data-testid"?: string;
}

function OptionList<T extends ComboboxOption>({
  options,
  isSelected,
  onPick,
  renderOption,
  searchPlaceholder,
  listHeight,
}: {
  options: readonly T[];
  isSelected: (value: string) => boolean;
  onPick: (value: string) => void;
  renderOption?: (option: T) => ReactNode;
  searchPlaceholder: string;
  listHeight?: string;
}) {
  return (
    <Command>
      <CommandInput placeholder={searchPlaceholder} />
      <CommandList
        style={listHeight ? { maxHeight: listHeight } : undefined}
        // Inside a modal dialog the page's scroll lock would swallow the wheel otherwise.
        onWheel={(e) => e.stopPropagation()}
        onTouchMove={(e) => e.stopPropagation()}
      >
        <CommandEmpty>{NO_OPTIONS_TEXT}</CommandEmpty>
        <CommandGroup>
          {options.map((o) => (
            <CommandItem
              key={o.value}
              value={`${o.label} ${o.value}`}
              onSelect={() => onPick(o.value)}
              data-testid="combobox-option"
              data-value={o.value}
            >
              <CheckIcon className={cn("size-4", isSelected(o.value) ? "opacity-100" : "opacity-0")} />
              <span className="truncate">{renderOption ? renderOption(o) : o.label}</span>
            </CommandItem>
          ))}
        </CommandGroup>
      </CommandList>
    </Command>
  );
}

/** One value, picked from a searchable list; the list closes on a pick. */
export function Combobox<T extends ComboboxOption>({
  value,
  onChange,
  options,
  placeholder = "Select...",
  searchPlaceholder = "Search...",
  disabled,
  invalid,
  className,
  renderOption,
  listHeight,
  clearable = true,
  id,
  "data-testid": testId,
}: BaseProps<T> & {
  value: string | null | undefined;
  onChange: (value: string | null) => void;
  clearable?: boolean;
}) {
  const [open, setOpen] = useState(false);
  // The order is fixed when the list opens, so it does not jump under the pointer.
  const [ordered, setOrdered] = useState<readonly T[]>(options);
  const selected = options.find((o) => o.value === value);
  return (
    <Popover
      open={open}
      onOpenChange={(next) => {
        if (next) setOrdered(selectedFirst(options, value ? [value] : []));
        setOpen(next);
      }}
    >
      <PopoverTrigger asChild>
        <Button
          id={id}
          type="button"
          variant="outline"
          role="combobox"
          aria-expanded={open}
          aria-invalid={invalid || undefined}
          disabled={disabled}
          data-testid={testId}
          className={cn("w-full justify-between px-3 font-normal", className)}
        >
          <span className={cn("truncate", !selected && !value && "text-muted-foreground")}>
            {selected ? selected.label : value ? value : placeholder}
          </span>
          <span className="flex items-center gap-1">
            {clearable && value && !disabled && (
              // biome-ignore lint/a11y/useSemanticElements: a button cannot sit inside the trigger button
              <span
                role="button"
                tabIndex={-1}
                aria-label="Clear selection"
                className="rounded-sm p-0.5 opacity-60 hover:bg-muted hover:opacity-100"
                onPointerDown={(e) => {
                  e.preventDefault();
                  e.stopPropagation();
                  onChange(null);
                }}
              >
                <XIcon className="size-3.5" />
              </span>
            )}
            <ChevronsUpDownIcon className="size-4 opacity-50" />
          </span>
        </Button>
      </PopoverTrigger>
      <PopoverContent className="w-(--radix-popover-trigger-width) min-w-56 p-0" align="start">
        <OptionList
          options={ordered}
          isSelected={(v) => v === value}
          onPick={(v) => {
            onChange(v === value ? null : v);
            setOpen(false);
          }}
          renderOption={renderOption}
          searchPlaceholder={searchPlaceholder}
          listHeight={listHeight}
        />
      </PopoverContent>
    </Popover>
  );
}

/** Several values; the list stays open while choosing, and the trigger shows the choices. */
export function MultiCombobox<T extends ComboboxOption>({
  value,
  onChange,
  options,
  placeholder = "Select...",
  searchPlaceholder = "Search...",
  disabled,
  invalid,
  className,
  renderOption,
  listHeight,
  id,
  "data-testid": testId,
}: BaseProps<T> & { value: readonly string[]; onChange: (value: string[]) => void }) {
  const [open, setOpen] = useState(false);
  const [ordered, setOrdered] = useState<readonly T[]>(options);
  const byValue = new Map(options.map((o) => [o.value, o]));
  const toggle = (v: string) => onChange(value.includes(v) ? value.filter((x) => x !== v) : [...value, v]);
  return (
    <Popover
      open={open}
      onOpenChange={(next) => {
        if (next) setOrdered(selectedFirst(options, value));
        setOpen(next);
      }}
    >
      <PopoverTrigger asChild>
        <Button
          id={id}
          type="button"
          variant="outline"
          role="combobox"
          aria-expanded={open}
          aria-invalid={invalid || undefined}
          disabled={disabled}
          data-testid={testId}
          className={cn("h-auto min-h-9 w-full justify-between px-3 py-1.5 font-normal", className)}
        >
          {value.length === 0 ? (
            <span className="text-muted-foreground">{placeholder}</span>
          ) : (
            <span className="flex flex-wrap gap-1">
              {value.map((v) => (
                <Badge key={v} variant="secondary" className="font-normal">
                  {byValue.get(v)?.label ?? v}
                </Badge>
              ))}
            </span>
          )}
          <ChevronsUpDownIcon className="size-4 opacity-50" />
        </Button>
      </PopoverTrigger>
      <PopoverContent className="w-(--radix-popover-trigger-width) min-w-56 p-0" align="start">
        <OptionList
          options={ordered}
          isSelected={(v) => value.includes(v)}
          onPick={toggle}
          renderOption={renderOption}
          searchPlaceholder={searchPlaceholder}
          listHeight={listHeight}
        />
      </PopoverContent>
    </Popover>
  );
}
