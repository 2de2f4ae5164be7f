// A prompt's version history (AI Prompts → History): every text the prompt has had, newest first.
// Each edit that changes the text, type or company makes a new version; a model call stores the
// versions it used, so the AI Validation Debug page's "prompt versions" can be read here.
import { Badge } from "@client/components/ui/badge.tsx";
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogHeader,
  DialogTitle,
} from "@client/components/ui/dialog.tsx";
import { errorMessage } from "@client/lib/errors.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import { type AiPrompt, PROMPT_TYPE_LABELS } from "@shared/prompts.ts";
import { useQuery } from "@tanstack/react-query";

export function PromptHistoryDialog({
  prompt,
  companyName,
  onClose,
}: {
  prompt: AiPrompt;
  companyName: string | null;
  onClose: () => void;
}) {
  const trpc = useTRPC();
  const history = useQuery({ ...trpc.prompts.versions.queryOptions({ id: prompt.id }), staleTime: 0 });
  const title = `${PROMPT_TYPE_LABELS[prompt.prompt_type]} prompt${companyName ? ` · ${companyName}` : ""}`;
  return (
    <Dialog open onOpenChange={(o) => !o && onClose()}>
      <DialogContent className="max-h-[90vh] overflow-y-auto sm:max-w-3xl" data-testid="prompt-history">
        <DialogHeader>
          <DialogTitle>Version history</DialogTitle>
          <DialogDescription>
            {title}. Each edit of the text makes a new version; AI validation runs name the versions they
            used.
          </DialogDescription>
        </DialogHeader>
        {history.isPending && <p className="text-sm text-muted-foreground">Loading versions…</p>}
        {history.isError && (
          <p className="text-sm text-destructive">
            {errorMessage(history.error, "Failed to load the versions")}
          </p>
        )}
        {history.data?.versions.length === 0 && (
          <p className="text-sm text-muted-foreground">
            No versions recorded: this prompt was created before versions were kept.
          </p>
        )}
        <ol className="space-y-3">
          {history.data?.versions.map((v) => (
            <li key={v.version} className="rounded-md border p-3" data-testid="prompt-version">
              <div className="flex flex-wrap items-center gap-2 text-sm">
                <span className="font-medium">Version {v.version}</span>
                {v.version === history.data.current_version && <Badge>Current</Badge>}
                <span className="text-muted-foreground tabular-nums">
                  {new Date(v.created_at).toLocaleString()}, {v.prompt_text.length.toLocaleString()}{" "}
                  characters
                </span>
              </div>
              <pre className="mt-2 max-h-64 overflow-auto whitespace-pre-wrap break-words rounded bg-muted p-2 text-xs">
                {v.prompt_text}
              </pre>
            </li>
          ))}
        </ol>
      </DialogContent>
    </Dialog>
  );
}
