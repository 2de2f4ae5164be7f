-- AlterTable
ALTER TABLE "chat_messages" ADD COLUMN     "has_file" BOOLEAN NOT NULL DEFAULT false;
UPDATE "chat_messages" SET "has_file" = true WHERE cardinality("file_ids") > 0;

-- CreateIndex
CREATE INDEX "chat_messages_has_file_ts_idx" ON "chat_messages"("has_file", "ts");
