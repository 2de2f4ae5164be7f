import type { LucideIcon } from "lucide-react";
import { Button } from "./button.tsx";

/** An icon button in a table row's Actions cell; its label is the accessible name and tooltip. */
export function RowAction({
  label,
  icon: Icon,
  onClick,
  destructive,
}: {
  label: string;
  icon: LucideIcon;
  onClick: () => void;
  destructive?: boolean;
}) {
  return (
    <Button
      variant="ghost"
      size="icon-sm"
      aria-label={label}
      title={label}
      className={destructive ? "text-destructive hover:text-destructive" : undefined}
      onClick={onClick}
    >
      <Icon />
    </Button>
  );
}
