// A purchase order for the vendor: CSV (one row per line) and a PDF made with pdfkit, carrying the
// shop's name and address (SHOP_NAME, SHOP_ADDRESS), the vendor, the lines and the totals.
import PDFDocument from "pdfkit";
import type { PoDetail } from "../../../shared/purchasing.ts";

const csvCell = (v: unknown) => {
  if (v === null || v === undefined) return "";
  const s = String(v);
  // A cell a spreadsheet would run as a formula is prefixed with a quote.
  const safe = /^[=+\-@\t\r]/.test(s) && !/^-?\d/.test(s) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
};

export function purchaseOrderCsv(po: PoDetail): string {
  const head = [
    "po_number",
    "vendor",
    "po_line_id",
    "pid",
    "sku",
    "title",
    "ordered_qty",
    "received_qty",
    "cost_each",
    "value",
  ];
  const lines = po.lines.map((l) =>
    [
      po.number,
      po.vendor.name,
      l.po_line_id,
      l.pid,
      l.sku,
      l.title,
      l.ordered_qty,
      l.received_qty,
      l.cost_each.toFixed(4),
      l.value.toFixed(2),
    ]
      .map(csvCell)
      .join(","),
  );
  return `${[head.join(","), ...lines].join("\r\n")}\r\n`;
}

export interface ShopInfo {
  name: string;
  address: string;
}

const money = (n: number) =>
  n.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });

export function purchaseOrderPdf(po: PoDetail, shop: ShopInfo): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({
      size: "A4",
      margin: 48,
      info: {
        Title: `Purchase order ${po.number}`,
        Subject: `Purchase order ${po.number} from ${shop.name} to ${po.vendor.name}`,
        Author: shop.name,
      },
    });
    const chunks: Buffer[] = [];
    doc.on("data", (c: Buffer) => chunks.push(c));
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);

    doc.fontSize(18).text(shop.name, { continued: false });
    doc.fontSize(9).fillColor("#444").text(shop.address);
    doc.moveDown();
    doc.fillColor("#000").fontSize(16).text(`Purchase order ${po.number}`);
    doc.fontSize(10);
    doc.text(`Status: ${po.status}`);
    if (po.date_ordered) doc.text(`Ordered: ${po.date_ordered}`);
    if (po.date_expected) doc.text(`Expected: ${po.date_expected}`);
    doc.moveDown();
    doc.fontSize(11).text("Vendor", { underline: true });
    doc.fontSize(10).text(po.vendor.name);
    if (po.vendor.email) doc.text(po.vendor.email);
    if (po.vendor.phone) doc.text(po.vendor.phone);
    doc.moveDown();

    const cols = [
      { label: "SKU", x: 48, w: 80 },
      { label: "Product", x: 130, w: 215 },
      { label: "Qty", x: 350, w: 50, right: true },
      { label: "Cost each", x: 405, w: 65, right: true },
      { label: "Value", x: 475, w: 72, right: true },
    ];
    const row = (cells: string[], bold = false) => {
      const y = doc.y;
      doc.font(bold ? "Helvetica-Bold" : "Helvetica");
      let h = 0;
      cells.forEach((c, i) => {
        const col = cols[i]!;
        doc.text(c, col.x, y, { width: col.w, align: col.right ? "right" : "left" });
        h = Math.max(h, doc.y - y);
      });
      doc.x = 48;
      doc.y = y + h + 3;
      if (doc.y > doc.page.height - 80) doc.addPage();
    };
    doc.fontSize(9);
    row(
      cols.map((c) => c.label),
      true,
    );
    for (const l of po.lines)
      row([
        l.sku ?? String(l.pid),
        l.title ?? `Product ${l.pid}`,
        String(l.ordered_qty),
        money(l.cost_each),
        money(l.value),
      ]);
    doc.moveDown();
    doc.font("Helvetica-Bold").fontSize(10);
    doc.text(`Lines: ${po.lines.length}   Units: ${po.units}   Total: ${money(po.value)}`, 48, doc.y, {
      align: "right",
      width: 499,
    });
    if (po.notes) {
      doc.moveDown().font("Helvetica").fontSize(9).text(`Notes: ${po.notes}`, 48);
    }
    doc.end();
  });
}
