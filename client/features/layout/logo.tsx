import { cn } from "@client/lib/utils.ts";

/** The product mark: a parcel in a rounded square. */
export function Logo({ className, inverted = false }: { className?: string; inverted?: boolean }) {
  return (
    <svg
      viewBox="0 0 32 32"
      role="img"
      aria-label="Back Office logo"
      className={cn("size-8 shrink-0", className)}
      data-testid="app-logo"
    >
      <rect width="32" height="32" rx="8" className={inverted ? "fill-primary-foreground" : "fill-primary"} />
      <g
        fill="none"
        strokeWidth="2"
        strokeLinejoin="round"
        strokeLinecap="round"
        className={inverted ? "stroke-primary" : "stroke-primary-foreground"}
      >
        <path d="M16 7 24 11.25v9.5L16 25l-8-4.25v-9.5Z" />
        <path d="M8 11.25 16 15.5l8-4.25M16 15.5V25" />
        <path d="m12 9.1 8 4.3" opacity="0.55" />
      </g>
    </svg>
  );
}

export const PRODUCT_NAME = "Back Office";
export const PRODUCT_TAGLINE = "Inventory, purchasing and product data, all in one place.";
