// AI validation prompts (spec sections 2, 3 "AI prompt", 4 "Prompts", 5 "Prompt form", 9).
import { z } from "zod";
import { idSchema, text } from "./input.ts";

export const PROMPT_TYPES = ["general", "system", "company_specific"] as const;
export type PromptType = (typeof PROMPT_TYPES)[number];

/** Spec section 9: the type labels. */
export const PROMPT_TYPE_LABELS: Record<PromptType, string> = {
  general: "General",
  system: "System",
  company_specific: "Company Specific",
};

export const PromptInputSchema = z.object({
  prompt_text: z
    .string({ error: "Prompt text is required" })
    .refine((s) => s.trim() !== "", "Prompt text is required")
    .pipe(z.string().max(100_000)),
  prompt_type: z.enum(PROMPT_TYPES, { error: "must be general, system or company_specific" }),
  company: z.preprocess(
    (v) => (typeof v === "number" ? String(v) : typeof v === "string" && v.trim() === "" ? null : v),
    text({ max: 200 }).nullable().optional(),
  ),
});
export type PromptInput = z.input<typeof PromptInputSchema>;
export type PromptData = z.output<typeof PromptInputSchema>;

export const PromptIdSchema = idSchema;

export interface AiPrompt {
  id: number;
  prompt_text: string;
  prompt_type: PromptType;
  company: string | null;
  created_at: Date;
  updated_at: Date;
}

/** One text a prompt has had (AI Prompts → History; a model call names the version it used). */
export interface PromptVersion {
  version: number;
  created_at: Date;
  prompt_type: PromptType;
  company: string | null;
  prompt_text: string;
}
export interface PromptVersions {
  prompt_id: number;
  /** null: the prompt was deleted (its versions stay for the calls that used them) */
  current_version: number | null;
  versions: PromptVersion[];
}

export const PROMPT_HINTS = {
  both: "General and system prompts already exist. You can only create company-specific prompts.",
  general: "A general prompt already exists. You can create a system prompt or company-specific prompts.",
  system: "A system prompt already exists. You can create a general prompt or company-specific prompts.",
} as const;

/**
 * Spec section 4 "Prompts": which types a new prompt may take, its default, and the hint to show.
 * When editing, the prompt's own type stays selectable.
 */
export function promptTypeRules(
  existing: readonly Pick<AiPrompt, "id" | "prompt_type">[],
  editingId?: number,
) {
  const others = existing.filter((p) => p.id !== editingId);
  const hasGeneral = others.some((p) => p.prompt_type === "general");
  const hasSystem = others.some((p) => p.prompt_type === "system");
  const disabled: Record<PromptType, boolean> = {
    general: hasGeneral,
    system: hasSystem,
    company_specific: false,
  };
  const defaultType: PromptType = !hasGeneral ? "general" : !hasSystem ? "system" : "company_specific";
  const hint =
    hasGeneral && hasSystem
      ? PROMPT_HINTS.both
      : hasGeneral
        ? PROMPT_HINTS.general
        : hasSystem
          ? PROMPT_HINTS.system
          : null;
  return { disabled, defaultType, hint, locked: hasGeneral && hasSystem };
}
