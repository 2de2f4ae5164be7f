import type { CSSProperties } from "react";
import { Toaster as Sonner } from "sonner";

/**
 * Spec sections 2 and 9: toasts at the top centre with rich colours, 4 s each, at most 3 visible,
 * 14 px apart, Alt+T to focus them. Sonner's own defaults give the 356 px width and the 200 ms
 * removal animation.
 */
export function Toaster() {
  return (
    <Sonner
      position="top-center"
      richColors
      duration={4000}
      visibleToasts={3}
      gap={14}
      hotkey={["altKey", "KeyT"]}
      className="toaster group"
      style={
        {
          "--normal-bg": "var(--popover)",
          "--normal-text": "var(--popover-foreground)",
          "--normal-border": "var(--border)",
        } as CSSProperties
      }
    />
  );
}
