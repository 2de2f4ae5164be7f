-- DropIndex
DROP INDEX "order_lines_order_number_idx";
