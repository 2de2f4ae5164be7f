import type { AiCallSummary, PromptVersions } from "@shared/ai-validation.ts";

const costFormat = new Intl.NumberFormat("en-US", {
  style: "currency",
  currency: "USD",
  minimumFractionDigits: 2,
  maximumFractionDigits: 6,
});
const intFormat = new Intl.NumberFormat("en-US");

/** "$0.0045": model calls cost fractions of a cent. */
export const formatCost = (value: number) => costFormat.format(value);
export const formatInt = (value: number) => intFormat.format(value);
export const formatMs = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`);

/** "system v2 · general v5 · company v1", or "no stored prompt". */
export function versionsText(v: PromptVersions): string {
  const parts = (["system", "general", "company"] as const)
    .filter((k) => v[k])
    .map((k) => `${k} v${v[k]!.version}`);
  return parts.length ? parts.join(" · ") : "no stored prompt";
}

/** "3 issues in 12 fields", "12 fields fine", or why there is nothing. */
export function verdictSummary(c: Pick<AiCallSummary, "status" | "fields_checked" | "issues_found">): string {
  if (c.status === "failed") return "no verdicts (failed)";
  if (c.issues_found === 0) return `${c.fields_checked} field${c.fields_checked === 1 ? "" : "s"} fine`;
  return `${c.issues_found} issue${c.issues_found === 1 ? "" : "s"} in ${c.fields_checked} fields`;
}

export const KIND_LABELS = { validation: "Validation", replay: "Replay", test: "Connection test" } as const;
export const MODE_LABELS = {
  json_schema: "JSON schema",
  json_object: "JSON object",
  prompt: "Prompt only",
} as const;
