-- AlterTable
ALTER TABLE "ai_prompts" ADD COLUMN     "version" INTEGER NOT NULL DEFAULT 1;

-- CreateTable
CREATE TABLE "ai_prompt_versions" (
    "id" SERIAL NOT NULL,
    "prompt_id" INTEGER NOT NULL,
    "version" INTEGER NOT NULL,
    "prompt_type" TEXT NOT NULL,
    "company" TEXT,
    "prompt_text" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ai_prompt_versions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ai_validation_calls" (
    "id" SERIAL NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "kind" TEXT NOT NULL,
    "batch_id" INTEGER,
    "import_id" INTEGER,
    "row_ids" INTEGER[] DEFAULT ARRAY[]::INTEGER[],
    "replay_of" INTEGER,
    "company" TEXT,
    "product_type" TEXT,
    "template_id" INTEGER,
    "prompt_versions" JSONB NOT NULL DEFAULT '{}',
    "base_url" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "mode" TEXT,
    "status" TEXT NOT NULL,
    "latency_ms" INTEGER NOT NULL DEFAULT 0,
    "tokens_in" INTEGER NOT NULL DEFAULT 0,
    "tokens_out" INTEGER NOT NULL DEFAULT 0,
    "cost" DECIMAL(14,6) NOT NULL DEFAULT 0,
    "fields_checked" INTEGER NOT NULL DEFAULT 0,
    "issues_found" INTEGER NOT NULL DEFAULT 0,
    "layers" JSONB NOT NULL DEFAULT '[]',
    "request" JSONB NOT NULL DEFAULT '{}',
    "response_raw" TEXT,
    "verdicts" JSONB,
    "error" TEXT,
    "attempts" JSONB NOT NULL DEFAULT '[]',
    "timings" JSONB NOT NULL DEFAULT '{}',
    "created_by" INTEGER,
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "ai_validation_calls_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ai_validation_cache" (
    "key" TEXT NOT NULL,
    "verdict" JSONB NOT NULL,
    "call_id" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ai_validation_cache_pkey" PRIMARY KEY ("key")
);

-- CreateTable
CREATE TABLE "ai_validation_batches" (
    "id" SERIAL NOT NULL,
    "import_id" INTEGER,
    "status" TEXT NOT NULL,
    "total_rows" INTEGER NOT NULL,
    "done_rows" INTEGER NOT NULL DEFAULT 0,
    "failed_rows" INTEGER NOT NULL DEFAULT 0,
    "cached_rows" INTEGER NOT NULL DEFAULT 0,
    "tokens_in" INTEGER NOT NULL DEFAULT 0,
    "tokens_out" INTEGER NOT NULL DEFAULT 0,
    "cost" DECIMAL(14,6) NOT NULL DEFAULT 0,
    "model" TEXT NOT NULL,
    "started_by" INTEGER,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    "error" TEXT,

    CONSTRAINT "ai_validation_batches_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "ai_prompt_versions_prompt_id_version_key" ON "ai_prompt_versions"("prompt_id", "version");

-- CreateIndex
CREATE INDEX "ai_validation_calls_created_at_idx" ON "ai_validation_calls"("created_at");

-- CreateIndex
CREATE INDEX "ai_validation_calls_import_id_created_at_idx" ON "ai_validation_calls"("import_id", "created_at");

-- CreateIndex
CREATE INDEX "ai_validation_calls_batch_id_idx" ON "ai_validation_calls"("batch_id");

-- CreateIndex
CREATE INDEX "ai_validation_cache_created_at_idx" ON "ai_validation_cache"("created_at");

-- CreateIndex
CREATE INDEX "ai_validation_batches_import_id_started_at_idx" ON "ai_validation_batches"("import_id", "started_at");

-- Prompts that exist already start their history at version 1.
INSERT INTO "ai_prompt_versions" ("prompt_id", "version", "prompt_type", "company", "prompt_text", "created_at")
SELECT "id", 1, "prompt_type", "company", "prompt_text", "updated_at" FROM "ai_prompts";
