import { cn } from "@client/lib/utils.ts";
import { SearchIcon } from "lucide-react";
import { Input } from "./input.tsx";

/** A search field with its icon; the accessible name is the placeholder without its dots. */
export function SearchBox({
  value,
  onChange,
  placeholder,
  busy,
  className,
}: {
  value: string;
  onChange: (value: string) => void;
  placeholder: string;
  busy?: boolean;
  className?: string;
}) {
  return (
    <div className={cn("relative w-full sm:w-80", className)}>
      <SearchIcon
        aria-hidden
        className={cn(
          "pointer-events-none absolute top-1/2 left-2.5 size-4 -translate-y-1/2 text-muted-foreground",
          busy && "animate-pulse",
        )}
      />
      <Input
        type="search"
        aria-label={placeholder.replace(/\.+$/, "")}
        placeholder={placeholder}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        className="pl-8"
      />
    </div>
  );
}
