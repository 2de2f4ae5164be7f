-- CreateTable
CREATE TABLE "chat_import_state" (
    "collection" TEXT NOT NULL,
    "documents" INTEGER NOT NULL,
    "index" BYTEA NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "chat_import_state_pkey" PRIMARY KEY ("collection")
);

-- The index is ~16 bytes of hash and version a document, which does not compress: stored as is.
ALTER TABLE "chat_import_state" ALTER COLUMN "index" SET STORAGE EXTERNAL;
