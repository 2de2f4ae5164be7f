-- AlterTable
ALTER TABLE "data_runs" ADD COLUMN     "as_of" TIMESTAMPTZ(3),
ADD COLUMN     "as_of_day" DATE,
ADD COLUMN     "calculation_as_of" TEXT,
ADD COLUMN     "newest_data_day" DATE;

-- AlterTable
ALTER TABLE "products" ADD COLUMN     "kind" TEXT NOT NULL DEFAULT 'merchandise';
