// "Test connection": lists the endpoint's models and makes one structured call, step by step; on
// the AI Prompts tab and the AI Validation Debug page, for users holding settings:prompt_management.
import { Alert, AlertDescription, AlertTitle } from "@client/components/ui/alert.tsx";
import { Button } from "@client/components/ui/button.tsx";
import { errorMessage } from "@client/lib/errors.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import type { TestConnectionResult } from "@shared/ai-validation.ts";
import { useMutation } from "@tanstack/react-query";
import { CheckCircle2Icon, PlugZapIcon, XCircleIcon } from "lucide-react";
import { useState } from "react";
import { toast } from "sonner";
import { formatMs } from "./format.ts";

export function TestConnection({ onTested }: { onTested?: (result: TestConnectionResult) => void }) {
  const trpc = useTRPC();
  const test = useMutation(trpc.aiValidation.testConnection.mutationOptions());
  const [result, setResult] = useState<TestConnectionResult | null>(null);
  const run = async () => {
    try {
      const r = await test.mutateAsync();
      setResult(r);
      onTested?.(r);
    } catch (err) {
      toast.error(errorMessage(err, "Connection test failed"));
    }
  };
  return (
    <div className="space-y-3" data-testid="test-connection">
      <Button variant="outline" onClick={run} disabled={test.isPending}>
        <PlugZapIcon />
        {test.isPending ? "Testing…" : "Test connection"}
      </Button>
      {result && (
        <Alert variant={result.ok ? "default" : "destructive"} data-testid="test-connection-result">
          {result.ok ? <CheckCircle2Icon aria-hidden /> : <XCircleIcon aria-hidden />}
          <AlertTitle>{result.message}</AlertTitle>
          <AlertDescription>
            {result.steps.length > 0 && (
              <ol className="mt-1 space-y-1 text-sm">
                {result.steps.map((s) => (
                  <li key={s.step} className="flex items-start gap-2" data-testid={`step-${s.step}`}>
                    <span aria-hidden className={s.ok ? "text-success" : "text-destructive"}>
                      {s.ok ? "✓" : "✗"}
                    </span>
                    <span>
                      <span className="font-medium">{s.label}</span>: {s.detail}
                      {s.ms > 0 && <span className="text-muted-foreground"> ({formatMs(s.ms)})</span>}
                    </span>
                  </li>
                ))}
              </ol>
            )}
          </AlertDescription>
        </Alert>
      )}
    </div>
  );
}
