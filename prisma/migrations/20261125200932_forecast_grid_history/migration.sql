-- AlterTable
ALTER TABLE "product_forecasts" ADD COLUMN     "history" DOUBLE PRECISION[] DEFAULT ARRAY[]::DOUBLE PRECISION[];
