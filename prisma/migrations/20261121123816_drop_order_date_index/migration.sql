-- DropIndex
DROP INDEX "order_lines_order_date_idx";
