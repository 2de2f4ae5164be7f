import { LoadingIndicator } from "./ui/loading-indicator.tsx";

/** 'Loading...' in the middle of the screen, e.g. while the current user is fetched. */
export function FullPageLoading() {
  return (
    <div className="flex min-h-svh items-center justify-center">
      <LoadingIndicator size="lg" />
    </div>
  );
}
