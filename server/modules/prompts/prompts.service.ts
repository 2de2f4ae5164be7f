// AI validation prompts: at most one general and one system prompt, and one prompt per company
// (spec sections 4 "Prompts", 5 "Prompt form"). The screen shows these rules; the server enforces them.
import type { AiPrompt, PromptData, PromptType, PromptVersions } from "../../../shared/prompts.ts";
import type { Database } from "../../db/database.ts";
import type { Prisma } from "../../db/generated/client.ts";
import { badRequest, conflict, notFound } from "../../errors.ts";
import { assertCompanyExists, isUniqueViolation } from "../templates/templates.service.ts";

type PromptRow = Awaited<ReturnType<Database["prisma"]["aiPrompt"]["findFirstOrThrow"]>>;

function toPrompt(r: PromptRow): AiPrompt {
  return {
    id: r.id,
    prompt_text: r.promptText,
    prompt_type: r.promptType as PromptType,
    company: r.company,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
}

/** Type descending, then company ascending (spec section 5 "Prompt form": the default sort). */
export async function listPrompts(db: Database): Promise<AiPrompt[]> {
  const rows = await db.prisma.aiPrompt.findMany({
    orderBy: [{ promptType: "desc" }, { company: { sort: "asc", nulls: "first" } }, { id: "asc" }],
  });
  return rows.map(toPrompt);
}

type Tx = Prisma.TransactionClient;

/** Prompt writes take one lock, so two "first general prompt" requests cannot both pass the check. */
function withPromptLock<T>(db: Database, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.prisma.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtext('ai_prompts'))::text`;
    return fn(tx);
  });
}

async function checkRules(db: Tx, input: PromptData, previous?: PromptRow): Promise<string | null> {
  const company = input.company ?? null;
  if (input.prompt_type === "company_specific") {
    if (!company) throw badRequest("Company is required for company-specific prompts", "company");
    if (company !== previous?.company) await assertCompanyExists(db, company);
    const clash = await db.aiPrompt.findFirst({
      where: { company, NOT: previous ? { id: previous.id } : {} },
      select: { id: true },
    });
    if (clash) throw conflict(`A prompt for company ${company} already exists`);
    return company;
  }
  if (company) throw badRequest("Company must be empty unless the type is company_specific", "company");
  const clash = await db.aiPrompt.findFirst({
    where: { promptType: input.prompt_type, NOT: previous ? { id: previous.id } : {} },
    select: { id: true },
  });
  if (clash) throw conflict(`A ${input.prompt_type} prompt already exists; only one is allowed`);
  return null;
}

/** Each text a prompt takes is kept, so a model call can name (and show) the version it used. */
async function recordVersion(tx: Tx, row: PromptRow): Promise<void> {
  await tx.aiPromptVersion.create({
    data: {
      promptId: row.id,
      version: row.version,
      promptType: row.promptType,
      company: row.company,
      promptText: row.promptText,
    },
  });
}

function uniqueMessage(input: PromptData): string {
  return input.prompt_type === "company_specific"
    ? `A prompt for company ${input.company} already exists`
    : `A ${input.prompt_type} prompt already exists; only one is allowed`;
}

export async function createPrompt(db: Database, input: PromptData): Promise<AiPrompt> {
  try {
    return await withPromptLock(db, async (tx) => {
      const company = await checkRules(tx, input);
      const row = await tx.aiPrompt.create({
        data: { promptText: input.prompt_text, promptType: input.prompt_type, company },
      });
      await recordVersion(tx, row);
      return toPrompt(row);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(uniqueMessage(input));
    throw err;
  }
}

export async function updatePrompt(db: Database, id: number, input: PromptData): Promise<AiPrompt> {
  try {
    return await withPromptLock(db, async (tx) => {
      const previous = await tx.aiPrompt.findUnique({ where: { id } });
      if (!previous) throw notFound(`Prompt ${id} not found`);
      const company = await checkRules(tx, input, previous);
      const changed =
        previous.promptText !== input.prompt_text ||
        previous.promptType !== input.prompt_type ||
        previous.company !== company;
      const row = await tx.aiPrompt.update({
        where: { id },
        data: {
          promptText: input.prompt_text,
          promptType: input.prompt_type,
          company,
          ...(changed ? { version: { increment: 1 } } : {}),
        },
      });
      if (changed) await recordVersion(tx, row);
      return toPrompt(row);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(uniqueMessage(input));
    throw err;
  }
}

export async function deletePrompt(db: Database, id: number): Promise<{ success: true; id: number }> {
  const { count } = await db.prisma.aiPrompt.deleteMany({ where: { id } });
  if (count === 0) throw notFound(`Prompt ${id} not found`);
  return { success: true, id };
}

/**
 * A prompt's version history, newest first: every text it has had (a model call names the version
 * it used). A deleted prompt's versions stay (the calls that used them still show them).
 */
export async function listPromptVersions(db: Database, id: number): Promise<PromptVersions> {
  const [prompt, versions] = await Promise.all([
    db.prisma.aiPrompt.findUnique({ where: { id }, select: { version: true } }),
    db.prisma.aiPromptVersion.findMany({ where: { promptId: id }, orderBy: { version: "desc" } }),
  ]);
  if (!prompt && versions.length === 0) throw notFound(`Prompt ${id} not found`);
  return {
    prompt_id: id,
    current_version: prompt?.version ?? null,
    versions: versions.map((v) => ({
      version: v.version,
      created_at: v.createdAt,
      prompt_type: v.promptType as PromptType,
      company: v.company,
      prompt_text: v.promptText,
    })),
  };
}
