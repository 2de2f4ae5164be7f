-- CreateTable
CREATE TABLE "settings_global" (
    "setting_key" TEXT NOT NULL,
    "setting_value" TEXT NOT NULL,
    "description" TEXT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "settings_global_pkey" PRIMARY KEY ("setting_key")
);

-- CreateTable
CREATE TABLE "settings_product" (
    "pid" INTEGER NOT NULL,
    "lead_time_days" INTEGER,
    "days_of_stock" INTEGER,
    "safety_stock" INTEGER NOT NULL DEFAULT 0,
    "forecast_method" TEXT,
    "exclude_from_forecast" BOOLEAN NOT NULL DEFAULT false,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "settings_product_pkey" PRIMARY KEY ("pid")
);

-- CreateTable
CREATE TABLE "settings_vendor" (
    "vendor" TEXT NOT NULL,
    "default_lead_time_days" INTEGER,
    "default_days_of_stock" INTEGER,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "settings_vendor_pkey" PRIMARY KEY ("vendor")
);

-- CreateTable
CREATE TABLE "chat_users" (
    "id" INTEGER NOT NULL,
    "mongo_id" TEXT NOT NULL,
    "name" TEXT,
    "username" TEXT NOT NULL,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "avatar" BYTEA,
    "avatar_type" TEXT,

    CONSTRAINT "chat_users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "templates" (
    "id" SERIAL NOT NULL,
    "company" TEXT NOT NULL,
    "product_type" TEXT NOT NULL,
    "supplier" INTEGER,
    "msrp" DECIMAL(12,2),
    "cost_each" DECIMAL(12,2),
    "qty_per_unit" INTEGER,
    "case_qty" INTEGER,
    "hts_code" TEXT,
    "description" TEXT,
    "weight" DECIMAL(10,2),
    "length" DECIMAL(10,2),
    "width" DECIMAL(10,2),
    "height" DECIMAL(10,2),
    "tax_cat" INTEGER NOT NULL DEFAULT 0,
    "size_cat" TEXT,
    "categories" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "ship_restrictions" TEXT[] DEFAULT ARRAY['0']::TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "templates_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ai_prompts" (
    "id" SERIAL NOT NULL,
    "prompt_text" TEXT NOT NULL,
    "prompt_type" TEXT NOT NULL,
    "company" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ai_prompts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "reusable_images" (
    "id" SERIAL NOT NULL,
    "name" TEXT NOT NULL,
    "is_global" BOOLEAN NOT NULL DEFAULT false,
    "company" TEXT,
    "filename" TEXT NOT NULL,
    "mime_type" TEXT NOT NULL,
    "file_size" INTEGER NOT NULL,
    "content_hash" TEXT NOT NULL,
    "width" INTEGER,
    "height" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "reusable_images_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "chat_users_mongo_id_key" ON "chat_users"("mongo_id");

-- CreateIndex
CREATE UNIQUE INDEX "templates_company_product_type_key" ON "templates"("company", "product_type");

-- CreateIndex
CREATE UNIQUE INDEX "ai_prompts_company_key" ON "ai_prompts"("company");

-- CreateIndex
CREATE INDEX "ai_prompts_prompt_type_idx" ON "ai_prompts"("prompt_type");

-- CreateIndex
CREATE INDEX "reusable_images_content_hash_idx" ON "reusable_images"("content_hash");

-- CreateIndex
CREATE INDEX "reusable_images_company_idx" ON "reusable_images"("company");
