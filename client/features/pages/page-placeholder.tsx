import { PageHeader } from "@client/components/page-header.tsx";
import { PAGES } from "@client/features/layout/pages.ts";
import type { PageKey } from "@shared/permissions.ts";

/** Pages not built yet: their title and a short "coming soon" line. */
export function PagePlaceholder({ page }: { page: PageKey }) {
  const { title, icon: Icon } = PAGES[page];
  return (
    <div className="space-y-6">
      <PageHeader title={title} />
      <div
        data-testid="coming-soon"
        className="flex flex-col items-center justify-center gap-3 rounded-xl border border-dashed bg-muted/30 px-6 py-20 text-center"
      >
        <div className="flex size-12 items-center justify-center rounded-full border bg-background shadow-xs">
          <Icon className="size-5 text-muted-foreground" aria-hidden />
        </div>
        <p className="text-sm font-medium">Coming soon</p>
        <p className="max-w-sm text-sm text-muted-foreground">The {title} page is coming soon.</p>
      </div>
    </div>
  );
}
