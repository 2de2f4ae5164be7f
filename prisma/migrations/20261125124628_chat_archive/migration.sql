-- AlterTable
CREATE SEQUENCE chat_users_id_seq;
ALTER TABLE "chat_users" ADD COLUMN     "avatar_id" TEXT,
ADD COLUMN     "avatar_version" TEXT,
ADD COLUMN     "updated_at" TIMESTAMPTZ(3),
ALTER COLUMN "id" SET DEFAULT nextval('chat_users_id_seq');
ALTER SEQUENCE chat_users_id_seq OWNED BY "chat_users"."id";
-- Chat users created before ids were assigned here keep theirs; new ones continue after them.
SELECT setval('chat_users_id_seq', COALESCE((SELECT max("id") FROM "chat_users"), 0) + 1, false);

-- CreateTable
CREATE TABLE "chat_rooms" (
    "id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "name" TEXT,
    "fname" TEXT,
    "topic" TEXT,
    "msgs" INTEGER NOT NULL DEFAULT 0,
    "message_count" INTEGER NOT NULL DEFAULT 0,
    "uids" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "usernames" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "last_message_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3),
    "prid" TEXT,
    "archived" BOOLEAN NOT NULL DEFAULT false,
    "updated_at" TIMESTAMPTZ(3),

    CONSTRAINT "chat_rooms_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "chat_subscriptions" (
    "id" TEXT NOT NULL,
    "rid" TEXT NOT NULL,
    "user_mongo_id" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(3),

    CONSTRAINT "chat_subscriptions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "chat_room_members" (
    "user_mongo_id" TEXT NOT NULL,
    "rid" TEXT NOT NULL,

    CONSTRAINT "chat_room_members_pkey" PRIMARY KEY ("user_mongo_id","rid")
);

-- CreateTable
CREATE TABLE "chat_messages" (
    "id" TEXT NOT NULL,
    "rid" TEXT NOT NULL,
    "ts" TIMESTAMPTZ(3) NOT NULL,
    "user_mongo_id" TEXT,
    "username" TEXT,
    "user_name" TEXT,
    "msg" TEXT NOT NULL DEFAULT '',
    "t" TEXT,
    "tmid" TEXT,
    "tshow" BOOLEAN NOT NULL DEFAULT false,
    "tcount" INTEGER,
    "tlm" TIMESTAMPTZ(3),
    "drid" TEXT,
    "edited_at" TIMESTAMPTZ(3),
    "edited_by" TEXT,
    "reactions" JSONB,
    "attachments" JSONB,
    "files" JSONB,
    "file_ids" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "mentions" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "updated_at" TIMESTAMPTZ(3),
    "search" tsvector,

    CONSTRAINT "chat_messages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "chat_files" (
    "id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "filename" TEXT,
    "content_type" TEXT,
    "length" BIGINT NOT NULL DEFAULT 0,
    "upload_date" TIMESTAMPTZ(3),
    "version" TEXT,
    "rid" TEXT,
    "user_mongo_id" TEXT,
    "data" BYTEA,
    "thumbnail" BYTEA,

    CONSTRAINT "chat_files_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "chat_audit_log" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "rid" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "chat_audit_log_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "chat_rooms_last_message_at_idx" ON "chat_rooms"("last_message_at");

-- CreateIndex
CREATE INDEX "chat_subscriptions_user_mongo_id_idx" ON "chat_subscriptions"("user_mongo_id");

-- CreateIndex
CREATE INDEX "chat_room_members_rid_idx" ON "chat_room_members"("rid");

-- CreateIndex
CREATE INDEX "chat_messages_rid_ts_id_idx" ON "chat_messages"("rid", "ts", "id");

-- CreateIndex
CREATE INDEX "chat_messages_tmid_ts_idx" ON "chat_messages"("tmid", "ts");

-- CreateIndex
CREATE INDEX "chat_messages_ts_id_idx" ON "chat_messages"("ts", "id");

-- CreateIndex
CREATE INDEX "chat_messages_user_mongo_id_ts_idx" ON "chat_messages"("user_mongo_id", "ts");

-- CreateIndex
CREATE INDEX "chat_messages_search_idx" ON "chat_messages" USING GIN ("search");

-- CreateIndex
CREATE INDEX "chat_files_kind_user_mongo_id_idx" ON "chat_files"("kind", "user_mongo_id");

-- CreateIndex
CREATE INDEX "chat_audit_log_at_idx" ON "chat_audit_log"("at");
