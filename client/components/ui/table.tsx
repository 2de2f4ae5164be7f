import { cn } from "@client/lib/utils.ts";
import type * as React from "react";

/**
 * Under 768 px a table with `stackOnPhone` shows each row as a card: the header row goes, every cell
 * takes its own line with its column's name (the cell's `data-label`) above its value, so nothing is
 * cut off or scrolls sideways.
 */
const STACK_ON_PHONE = [
  "max-md:block max-md:[&_tbody]:block max-md:[&_thead]:hidden",
  "max-md:[&_tr]:flex max-md:[&_tr]:flex-wrap max-md:[&_tr]:items-start max-md:[&_tr]:gap-x-5 max-md:[&_tr]:gap-y-2 max-md:[&_tr]:px-4 max-md:[&_tr]:py-3",
  "max-md:[&_td]:block max-md:[&_td]:max-w-full max-md:[&_td]:min-w-0 max-md:[&_td]:p-0! max-md:[&_td]:whitespace-normal max-md:[&_td]:break-words",
  "max-md:[&_td[data-label]]:before:block max-md:[&_td[data-label]]:before:text-xs max-md:[&_td[data-label]]:before:font-medium max-md:[&_td[data-label]]:before:text-muted-foreground max-md:[&_td[data-label]]:before:content-[attr(data-label)]",
  "max-md:[&_td[data-primary]]:basis-full max-md:[&_td[data-actions]]:ml-auto",
].join(" ");

export function Table({
  className,
  containerClassName,
  stackOnPhone,
  ...props
}: React.ComponentProps<"table"> & {
  stackOnPhone?: boolean;
  /**
   * The wrapper's classes. Inside a scroller of its own (a sticky header in a max-height box), pass
   * "overflow-visible": the outer box then scrolls both ways and the header sticks to it.
   */
  containerClassName?: string;
}) {
  return (
    <div data-slot="table-container" className={cn("relative w-full overflow-x-auto", containerClassName)}>
      <table
        data-slot="table"
        className={cn("w-full caption-bottom text-sm", stackOnPhone && STACK_ON_PHONE, className)}
        {...props}
      />
    </div>
  );
}

export function TableHeader({ className, ...props }: React.ComponentProps<"thead">) {
  return <thead data-slot="table-header" className={cn("[&_tr]:border-b", className)} {...props} />;
}

export function TableBody({ className, ...props }: React.ComponentProps<"tbody">) {
  return <tbody data-slot="table-body" className={cn("[&_tr:last-child]:border-0", className)} {...props} />;
}

export function TableFooter({ className, ...props }: React.ComponentProps<"tfoot">) {
  return (
    <tfoot
      data-slot="table-footer"
      className={cn("border-t bg-muted/50 font-medium [&>tr]:last:border-b-0", className)}
      {...props}
    />
  );
}

export function TableRow({ className, ...props }: React.ComponentProps<"tr">) {
  return (
    <tr
      data-slot="table-row"
      className={cn("border-b transition-colors hover:bg-muted/50 data-[state=selected]:bg-muted", className)}
      {...props}
    />
  );
}

export function TableHead({ className, ...props }: React.ComponentProps<"th">) {
  return (
    <th
      data-slot="table-head"
      className={cn(
        "h-10 whitespace-nowrap px-2 text-left align-middle font-medium text-muted-foreground [&:has([role=checkbox])]:pr-0",
        className,
      )}
      {...props}
    />
  );
}

export function TableCell({ className, ...props }: React.ComponentProps<"td">) {
  return (
    <td
      data-slot="table-cell"
      className={cn("whitespace-nowrap p-2 align-middle [&:has([role=checkbox])]:pr-0", className)}
      {...props}
    />
  );
}

export function TableCaption({ className, ...props }: React.ComponentProps<"caption">) {
  return (
    <caption
      data-slot="table-caption"
      className={cn("mt-4 text-sm text-muted-foreground", className)}
      {...props}
    />
  );
}
