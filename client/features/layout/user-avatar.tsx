import { cn } from "@client/lib/utils.ts";

/** The user's initial on a tinted square (spec section 2: an initial avatar). */
export function UserAvatar({ username, className }: { username: string; className?: string }) {
  return (
    <span
      aria-hidden
      className={cn(
        "flex size-8 shrink-0 items-center justify-center rounded-lg bg-primary text-sm font-semibold text-primary-foreground",
        className,
      )}
    >
      {username.charAt(0).toUpperCase() || "?"}
    </span>
  );
}
