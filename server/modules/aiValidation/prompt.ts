// Prompt assembly: the stored prompts (system, general, the row's company) plus the template's
// context and the rows, as labelled layers that are kept with each call and can be edited on replay.
import {
  LAYER_KEYS,
  LAYER_LABELS,
  type LayerKey,
  type PromptLayer,
  type PromptVersions,
} from "../../../shared/ai-validation.ts";
import type { FieldOptions } from "../../../shared/templates.ts";
import type { Database } from "../../db/database.ts";
import type { ChatMessage } from "./model-client.ts";

export interface StoredPrompt {
  id: number;
  version: number;
  text: string;
}

export interface PromptSet {
  system: StoredPrompt | null;
  general: StoredPrompt | null;
  /** By company (brand id as text). */
  companies: Map<string, StoredPrompt>;
}

/** Used when no system prompt is stored, so the model still knows its job. */
export const DEFAULT_SYSTEM_PROMPT =
  "You review new product data for a retail back office before it is loaded into the shop system.";

/** Appended to the system message: the answer's shape, whatever the structured-output mode. */
export const ANSWER_INSTRUCTIONS = [
  "Check every field of every row: title style, description quality, category fit, and obvious unit or price mistakes.",
  "Answer with one JSON object and nothing else, of this shape:",
  '{"rows":[{"row_id":<the row_id given>,"fields":[{"field":"<field name>","ok":true|false,"issue":"<what is wrong>"|null,"suggestion":"<the corrected value>"|null,"confidence":<0 to 1>}]}]}',
  "Give one entry per row sent and one per field of the row. When a field is right: ok true, issue and suggestion null.",
  "A suggestion is the full replacement value of the field, not advice.",
].join("\n");

export async function loadPromptSet(db: Database): Promise<PromptSet> {
  const rows = await db.prisma.aiPrompt.findMany({
    select: { id: true, version: true, promptText: true, promptType: true, company: true },
  });
  const set: PromptSet = { system: null, general: null, companies: new Map() };
  for (const r of rows) {
    const p = { id: r.id, version: r.version, text: r.promptText };
    if (r.promptType === "system") set.system = p;
    else if (r.promptType === "general") set.general = p;
    else if (r.company) set.companies.set(r.company, p);
  }
  return set;
}

export interface RowInput {
  row_id: number;
  values: Record<string, unknown>;
}

export interface TemplateContext {
  company: string | null;
  companyName: string | null;
  productType: string | null;
  /** The matching import template's values, when one exists. */
  templateDefaults: Record<string, unknown> | null;
  fieldOptions: FieldOptions | null;
}

const OPTIONS_PER_FIELD = 100;

/** Which field options to offer, by the row field they constrain. */
const OPTION_FIELDS: [keyof FieldOptions, string][] = [
  ["suppliers", "supplier"],
  ["taxCategories", "tax_cat"],
  ["sizes", "size_cat"],
  ["shippingRestrictions", "ship_restrictions"],
  ["categories", "categories"],
];

export function templateLayer(ctx: TemplateContext, fields: ReadonlySet<string>): string {
  const lines: string[] = [];
  lines.push(
    `Company: ${ctx.companyName ?? ctx.company ?? "(none)"}${ctx.company ? ` (id ${ctx.company})` : ""}`,
  );
  lines.push(`Product type: ${ctx.productType ?? "(none)"}`);
  if (ctx.templateDefaults) lines.push(`Template defaults: ${JSON.stringify(ctx.templateDefaults)}`);
  if (ctx.fieldOptions) {
    const offered: string[] = [];
    for (const [key, field] of OPTION_FIELDS) {
      if (!fields.has(field)) continue;
      const options = ctx.fieldOptions[key];
      const labels = options.slice(0, OPTIONS_PER_FIELD).map((o) => o.label);
      const more =
        options.length > OPTIONS_PER_FIELD ? ` … and ${options.length - OPTIONS_PER_FIELD} more` : "";
      offered.push(`- ${field}: ${labels.join("; ")}${more}`);
    }
    if (offered.length) lines.push("Field options offered:", ...offered);
  }
  return lines.join("\n");
}

export function rowLayer(rows: readonly RowInput[]): string {
  return rows.map((r) => JSON.stringify({ row_id: r.row_id, ...r.values })).join("\n");
}

/** The layers for rows of one company, with the versions of the stored prompts they hold. */
export function buildLayers(
  set: PromptSet,
  ctx: TemplateContext,
  rows: readonly RowInput[],
): { layers: PromptLayer[]; versions: PromptVersions } {
  const versions: PromptVersions = {};
  const layer = (key: LayerKey, content: string): PromptLayer => ({ key, label: LAYER_LABELS[key], content });
  const layers: PromptLayer[] = [layer("system", set.system?.text ?? DEFAULT_SYSTEM_PROMPT)];
  if (set.system) versions.system = { id: set.system.id, version: set.system.version };
  if (set.general) {
    layers.push(layer("general", set.general.text));
    versions.general = { id: set.general.id, version: set.general.version };
  }
  const companyPrompt = ctx.company ? set.companies.get(ctx.company) : undefined;
  if (companyPrompt) {
    layers.push(layer("company", companyPrompt.text));
    versions.company = { id: companyPrompt.id, version: companyPrompt.version };
  }
  const fields = new Set(rows.flatMap((r) => Object.keys(r.values)));
  layers.push(layer("template", templateLayer(ctx, fields)));
  layers.push(layer("row", rowLayer(rows)));
  return { layers, versions };
}

const SECTION_TITLES: Record<Exclude<LayerKey, "system">, string> = {
  general: "General instructions",
  company: "Instructions for this company",
  template: "Context",
  row: "Rows to check (one JSON object per line)",
};

/** System message = the system layer + the answer's shape; user message = the other layers, titled. */
export function layersToMessages(layers: readonly PromptLayer[]): ChatMessage[] {
  const byKey = new Map(layers.map((l) => [l.key, l.content]));
  const user = LAYER_KEYS.filter((k) => k !== "system" && byKey.has(k) && byKey.get(k)!.trim() !== "").map(
    (k) => `## ${SECTION_TITLES[k as Exclude<LayerKey, "system">]}\n${byKey.get(k)}`,
  );
  return [
    { role: "system", content: `${byKey.get("system") ?? DEFAULT_SYSTEM_PROMPT}\n\n${ANSWER_INSTRUCTIONS}` },
    { role: "user", content: user.join("\n\n") },
  ];
}

/** What every call of one company's rows shares: assembled once per run, not once per call. */
interface FixedPart {
  /** The layers before the row layer. */
  layers: PromptLayer[];
  versions: PromptVersions;
  /** The system message, ready. */
  system: string;
  /** The user message up to the rows' section title (with its trailing newline). */
  userPrefix: string;
  /**
   * The cache key's text up to a row's values: `JSON.stringify({ model, layers, values })` is this
   * + the values' JSON + "}" (the same key as before this was precomputed).
   */
  keyPrefix: string;
}

/**
 * Builds the layers and messages of one company's calls in a run. The layers that are the same
 * for every row (system, general, company, template) and the messages they make are built once
 * per set of option fields the rows hold (the template layer lists only the options of fields a
 * row has), so a call costs only its rows' JSON.
 */
export class LayerBuilder {
  private readonly fixed = new Map<number, FixedPart>();

  constructor(
    private readonly set: PromptSet,
    private readonly ctx: TemplateContext,
    private readonly model: string,
  ) {}

  private fixedFor(rows: readonly RowInput[]): FixedPart {
    let mask = 0;
    OPTION_FIELDS.forEach(([, field], i) => {
      if (rows.some((r) => field in r.values)) mask |= 1 << i;
    });
    let part = this.fixed.get(mask);
    if (!part) {
      const fields = new Set(OPTION_FIELDS.filter((_, i) => mask & (1 << i)).map(([, f]) => f));
      const { layers, versions } = buildLayers(this.set, this.ctx, []);
      const template = layers.find((l) => l.key === "template")!;
      template.content = templateLayer(this.ctx, fields);
      const fixedLayers = layers.filter((l) => l.key !== "row");
      const [system, user] = layersToMessages([...fixedLayers, { key: "row", label: "", content: "\u0000" }]);
      const userPrefix = user!.content.slice(0, user!.content.indexOf("\u0000"));
      const keyJson = JSON.stringify({
        model: this.model,
        layers: fixedLayers.map((l) => [l.key, l.content]),
        values: null,
      });
      part = {
        layers: fixedLayers,
        versions,
        system: system!.content,
        userPrefix,
        keyPrefix: keyJson.slice(0, -"null}".length),
      };
      this.fixed.set(mask, part);
    }
    return part;
  }

  /** The cache key's text of one row (hash it): the fixed layers, the model and the row's values. */
  keyText(row: RowInput): string {
    return `${this.fixedFor([row]).keyPrefix}${JSON.stringify(row.values)}}`;
  }

  /** The layers, versions and messages of one call over `rows`. */
  build(rows: readonly RowInput[]): {
    layers: PromptLayer[];
    versions: PromptVersions;
    messages: ChatMessage[];
  } {
    const part = this.fixedFor(rows);
    const content = rowLayer(rows);
    const layers = [...part.layers, { key: "row" as const, label: LAYER_LABELS.row, content }];
    const messages: ChatMessage[] = [
      { role: "system", content: part.system },
      // Never blank: every row's line holds its row_id.
      { role: "user", content: `${part.userPrefix}${content}` },
    ];
    return { layers, versions: part.versions, messages };
  }
}
