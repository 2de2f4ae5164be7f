-- AlterTable
ALTER TABLE "product_metrics" ADD COLUMN     "xyz_class" CHAR(1),
ADD COLUMN     "xyz_cv" DECIMAL(12,4),
ADD COLUMN     "xyz_weeks" INTEGER NOT NULL DEFAULT 0;

-- CreateIndex
CREATE INDEX "product_metrics_xyz_class_idx" ON "product_metrics"("xyz_class");
