import { cn } from "@client/lib/utils.ts";
import { Loader2Icon } from "lucide-react";

const SIZES = {
  sm: { icon: "size-4", text: "text-xs", gap: "gap-2" },
  md: { icon: "size-6", text: "text-sm", gap: "gap-3" },
  lg: { icon: "size-10", text: "text-base", gap: "gap-4" },
} as const;

export interface LoadingIndicatorProps {
  size?: keyof typeof SIZES;
  message?: string;
  className?: string;
}

/** The shared loading indicator of spec section 2: sizes sm, md and lg, default text 'Loading...'. */
export function LoadingIndicator({ size = "md", message = "Loading...", className }: LoadingIndicatorProps) {
  const s = SIZES[size];
  return (
    <div
      role="status"
      aria-live="polite"
      data-testid="loading-indicator"
      className={cn("flex flex-col items-center justify-center py-6 text-muted-foreground", s.gap, className)}
    >
      <Loader2Icon aria-hidden className={cn("animate-spin", s.icon)} />
      {message && <p className={s.text}>{message}</p>}
    </div>
  );
}
