import { Button } from "@client/components/ui/button.tsx";
import { errorMessage } from "@client/lib/errors.ts";
import type { ErrorComponentProps } from "@tanstack/react-router";
import { CircleAlertIcon, RotateCwIcon } from "lucide-react";

/** Shown when a route fails to load or render, e.g. a page module that could not be fetched. */
export function RouteError({ error, reset }: ErrorComponentProps) {
  return (
    <div
      role="alert"
      className="flex min-h-[50vh] flex-col items-center justify-center gap-4 p-6 text-center"
    >
      <div className="flex size-11 items-center justify-center rounded-full bg-destructive/10">
        <CircleAlertIcon className="size-5 text-destructive" aria-hidden />
      </div>
      <div className="space-y-1">
        <p className="font-medium">Something went wrong</p>
        <p className="max-w-md text-sm text-muted-foreground">
          {errorMessage(error, "An unknown error occurred")}
        </p>
      </div>
      <div className="flex gap-2">
        <Button variant="outline" onClick={reset}>
          Try again
        </Button>
        <Button onClick={() => window.location.reload()}>
          <RotateCwIcon />
          Reload page
        </Button>
      </div>
    </div>
  );
}
