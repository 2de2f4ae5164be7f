-- DropIndex
DROP INDEX "order_lines_pid_order_date_idx";

-- CreateIndex
CREATE INDEX "order_lines_pid_idx" ON "order_lines"("pid");
