import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_FILES, generateDemoData, LEAD_IN_DAYS } from "../../scripts/lib/demo-data.ts";

type Row = Record<string, string>;

const TODAY = new Date("2026-03-01T00:00:00Z");
const OPTS = { products: 300, years: 2, seed: 7, today: TODAY } as const;

let root: string;
let dirA: string;
const tables: Record<string, Row[]> = {};
const files: Record<string, string> = {};

function read(dir: string, file: string): string {
  return fs.readFileSync(path.join(dir, file), "utf8");
}

function sha256(dir: string, file: string): string {
  return createHash("sha256")
    .update(fs.readFileSync(path.join(dir, file)))
    .digest("hex");
}

function keys(file: string, col: string): Set<string> {
  return new Set(tables[file]!.map((r) => r[col]!));
}

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "demo-data-"));
  dirA = path.join(root, "a");
  const result = await generateDemoData({ ...OPTS, out: dirA });
  for (const file of Object.keys(DEMO_FILES)) {
    files[file] = read(dirA, file);
    tables[file] = parse(files[file], { columns: true, skip_empty_lines: true }) as Row[];
    expect(result.files[file]).toBe(tables[file]!.length);
  }
});

afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

describe("demo data generator", () => {
  it("writes every documented file with exactly the documented header", () => {
    expect(Object.keys(DEMO_FILES)).toHaveLength(12);
    for (const [file, columns] of Object.entries(DEMO_FILES)) {
      const firstLine = files[file]!.slice(0, files[file]!.indexOf("\n"));
      expect(firstLine, file).toBe(columns.join(","));
      expect(tables[file]!.length, file).toBeGreaterThan(0);
    }
    expect(tables["products.csv"]).toHaveLength(300);
    expect(tables["tax_categories.csv"]).toContainEqual({ code: "0", label: "Not Specifically Set" });
    expect(tables["shipping_restrictions.csv"]).toContainEqual({ code: "0", label: "None" });
  });

  it("is deterministic for a seed and differs for another seed", async () => {
    const dirB = path.join(root, "b");
    const dirC = path.join(root, "c");
    await generateDemoData({ ...OPTS, out: dirB });
    await generateDemoData({ ...OPTS, seed: 8, out: dirC });
    for (const file of Object.keys(DEMO_FILES)) expect(sha256(dirB, file), file).toBe(sha256(dirA, file));
    for (const file of ["products.csv", "order_lines.csv", "po_lines.csv", "receivings.csv"])
      expect(sha256(dirC, file), file).not.toBe(sha256(dirA, file));
  });

  it("uses the documented value formats", () => {
    const date = /^\d{4}-\d{2}-\d{2}$/;
    const ts = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
    const money = /^\d+\.\d{2}$/;
    const int = /^-?\d+$/;
    const bool = /^(true|false)$/;
    const bad: string[] = [];
    const check = (file: string, row: Row, col: string, re: RegExp, optional = false) => {
      const v = row[col]!;
      if (!(optional && v === "") && !re.test(v)) bad.push(`${file} ${col}: ${JSON.stringify(v)}`);
    };
    const decimal = /^\d+\.\d{1,2}$/;
    for (const p of tables["products.csv"]!) {
      for (const c of ["pid", "stock_quantity", "moq", "case_qty", "brand_id", "vendor_id"])
        check("products", p, c, int, c.endsWith("_id"));
      for (const c of ["price", "regular_price"]) check("products", p, c, money);
      check("products", p, "cost_price", money, true);
      for (const c of ["weight", "length", "width", "height"]) check("products", p, c, decimal, true);
      check("products", p, "created_at", ts);
      check("products", p, "first_received", date, true);
      for (const c of ["visible", "replenishable", "discontinued"]) check("products", p, c, bool);
      check("products", p, "barcode", /^\d{13}$/, true);
      if (Number(p.regular_price) < Number(p.price)) bad.push(`products ${p.pid}: price > regular_price`);
      const ratio = Number(p.cost_price) / Number(p.regular_price);
      if (p.cost_price && !(ratio > 0.3 && ratio < 0.7)) bad.push(`products ${p.pid}: cost/price ${ratio}`);
    }
    for (const l of tables["order_lines.csv"]!) {
      check("order_lines", l, "order_date", ts);
      check("order_lines", l, "price", money);
      check("order_lines", l, "discount", money);
      check("order_lines", l, "quantity", /^[1-9]\d*$/);
      check("order_lines", l, "status", /^(completed|cancelled|returned)$/);
      if (!(l.order_date! >= "2024-03-01" && l.order_date! < "2026-03-01"))
        bad.push(`order date ${l.order_date}`);
    }
    for (const po of tables["purchase_orders.csv"]!) {
      check("purchase_orders", po, "date_ordered", date);
      check("purchase_orders", po, "date_expected", date, true);
      check("purchase_orders", po, "status", /^(draft|ordered|partial|received|cancelled)$/);
      if (po.date_expected && po.date_expected <= po.date_ordered!) bad.push(`PO ${po.po_id} expected date`);
    }
    for (const l of tables["po_lines.csv"]!) {
      check("po_lines", l, "ordered_qty", /^[1-9]\d*$/);
      check("po_lines", l, "cost_each", money);
    }
    for (const r of tables["receivings.csv"]!) {
      check("receivings", r, "received_date", date);
      check("receivings", r, "qty", /^[1-9]\d*$/);
      check("receivings", r, "cost_each", money, true);
      if (r.received_date! >= "2026-03-01") bad.push(`receiving ${r.receiving_id} in the future`);
    }
    expect(bad.slice(0, 20)).toEqual([]);
    // Quoting: some values need it (commas, quotes, a newline), and they survive the round trip.
    expect(tables["products.csv"]!.some((p) => p.description!.includes('"'))).toBe(true);
    expect(tables["shipping_restrictions.csv"]!.some((r) => r.label!.includes(","))).toBe(true);
  });

  it("keeps keys unique and every reference valid", () => {
    const unique = (file: string, cols: string[]) => {
      const seen = new Set(tables[file]!.map((r) => cols.map((c) => r[c]).join("|")));
      expect(seen.size, file).toBe(tables[file]!.length);
    };
    unique("brands.csv", ["brand_id"]);
    unique("vendors.csv", ["vendor_id"]);
    unique("vendors.csv", ["name"]);
    unique("categories.csv", ["category_id"]);
    unique("tax_categories.csv", ["code"]);
    unique("sizes.csv", ["code"]);
    unique("shipping_restrictions.csv", ["code"]);
    unique("products.csv", ["pid"]);
    unique("product_categories.csv", ["pid", "category_id"]);
    unique("order_lines.csv", ["line_id"]);
    unique("purchase_orders.csv", ["po_id"]);
    unique("po_lines.csv", ["po_line_id"]);
    unique("receivings.csv", ["receiving_id"]);

    const brands = keys("brands.csv", "brand_id");
    const vendors = keys("vendors.csv", "vendor_id");
    const categories = keys("categories.csv", "category_id");
    const pids = keys("products.csv", "pid");
    const poIds = keys("purchase_orders.csv", "po_id");
    const poLineIds = keys("po_lines.csv", "po_line_id");
    const tax = keys("tax_categories.csv", "code");
    const sizes = keys("sizes.csv", "code");
    const ship = keys("shipping_restrictions.csv", "code");
    for (const c of tables["categories.csv"]!) {
      if (c.parent_id) expect(categories.has(c.parent_id)).toBe(true);
      expect(c.level).toBe(
        c.parent_id
          ? String(Number(tables["categories.csv"]!.find((x) => x.category_id === c.parent_id)!.level) + 1)
          : "1",
      );
    }
    const types = new Set(tables["categories.csv"]!.map((c) => c.type));
    for (const t of ["10", "11", "12", "13", "20", "21"]) expect(types.has(t)).toBe(true);
    expect(new Set(tables["categories.csv"]!.map((c) => c.level))).toEqual(new Set(["1", "2", "3"]));
    for (const p of tables["products.csv"]!) {
      if (p.brand_id) expect(brands.has(p.brand_id)).toBe(true);
      if (p.vendor_id) expect(vendors.has(p.vendor_id)).toBe(true);
      if (p.tax_code) expect(tax.has(p.tax_code)).toBe(true);
      if (p.size_cat) expect(sizes.has(p.size_cat)).toBe(true);
      if (p.shipping_restrictions) expect(ship.has(p.shipping_restrictions)).toBe(true);
    }
    const perProduct = new Map<string, number>();
    for (const pc of tables["product_categories.csv"]!) {
      expect(pids.has(pc.pid!)).toBe(true);
      expect(categories.has(pc.category_id!)).toBe(true);
      perProduct.set(pc.pid!, (perProduct.get(pc.pid!) ?? 0) + 1);
    }
    expect(perProduct.size).toBe(pids.size);
    for (const n of perProduct.values()) expect(n).toBeLessThanOrEqual(3);
    for (const l of tables["order_lines.csv"]!) expect(pids.has(l.pid!)).toBe(true);
    for (const po of tables["purchase_orders.csv"]!) expect(vendors.has(po.vendor_id!)).toBe(true);
    for (const l of tables["po_lines.csv"]!) {
      expect(poIds.has(l.po_id!)).toBe(true);
      expect(pids.has(l.pid!)).toBe(true);
    }
    for (const r of tables["receivings.csv"]!) expect(poLineIds.has(r.po_line_id!)).toBe(true);
  });

  it("has a Christmas peak and a summer dip", () => {
    const units = new Map<string, number>();
    for (const l of tables["order_lines.csv"]!) {
      if (l.status !== "completed") continue;
      const month = l.order_date!.slice(0, 7);
      units.set(month, (units.get(month) ?? 0) + Number(l.quantity));
    }
    expect(units.get("2025-12")!).toBeGreaterThan(units.get("2025-07")! * 1.5);
    expect(units.get("2024-12")!).toBeGreaterThan(units.get("2024-07")! * 1.5);
    expect(units.get("2025-04")!).toBeGreaterThan(units.get("2025-07")!);
  });

  it("groups lines into orders and has cancelled and returned lines", () => {
    const lines = tables["order_lines.csv"]!;
    const byOrder = new Map<string, number>();
    for (const l of lines) byOrder.set(l.order_number!, (byOrder.get(l.order_number!) ?? 0) + 1);
    expect(Math.max(...byOrder.values())).toBeGreaterThanOrEqual(4);
    expect(Math.max(...byOrder.values())).toBeLessThanOrEqual(6);
    expect(lines.length / byOrder.size).toBeGreaterThan(1.5);
    const share = (status: string) => lines.filter((l) => l.status === status).length / lines.length;
    expect(share("cancelled")).toBeGreaterThan(0.015);
    expect(share("cancelled")).toBeLessThan(0.05);
    expect(share("returned")).toBeGreaterThan(0.005);
    expect(share("returned")).toBeLessThan(0.03);
    expect(lines.some((l) => l.discount !== "0.00")).toBe(true);
  });

  it("has partial receipts and PO statuses consistent with the receivings", () => {
    const received = new Map<string, { qty: number; n: number }>();
    for (const r of tables["receivings.csv"]!) {
      const cur = received.get(r.po_line_id!) ?? { qty: 0, n: 0 };
      received.set(r.po_line_id!, { qty: cur.qty + Number(r.qty), n: cur.n + 1 });
    }
    const linesByPo = new Map<string, Row[]>();
    for (const l of tables["po_lines.csv"]!) linesByPo.set(l.po_id!, [...(linesByPo.get(l.po_id!) ?? []), l]);
    const statuses = new Set<string>();
    let multi = 0;
    let short = 0;
    for (const po of tables["purchase_orders.csv"]!) {
      statuses.add(po.status!);
      const lines = linesByPo.get(po.po_id!) ?? [];
      expect(lines.length, `PO ${po.po_id} has lines`).toBeGreaterThan(0);
      const got = lines.map((l) => received.get(l.po_line_id!) ?? { qty: 0, n: 0 });
      for (const [i, g] of got.entries()) {
        expect(g.qty).toBeLessThanOrEqual(Number(lines[i]!.ordered_qty));
        if (g.n >= 2) multi++;
        if (po.status === "received" && g.qty < Number(lines[i]!.ordered_qty)) short++;
      }
      const any = got.some((g) => g.n > 0);
      if (po.status === "cancelled" || po.status === "draft" || po.status === "ordered")
        expect(any).toBe(false);
      if (po.status === "received") expect(got.every((g) => g.n > 0)).toBe(true);
      if (po.status === "partial") expect(any).toBe(true);
      // Open POs are the recent ones (a late overseas shipment can take a few months).
      if (po.status === "ordered" || po.status === "partial")
        expect(po.date_ordered! >= "2025-07-01", `PO ${po.po_id}`).toBe(true);
    }
    for (const s of ["received", "cancelled", "ordered"]) expect(statuses.has(s), s).toBe(true);
    expect(multi).toBeGreaterThan(0);
    expect(short).toBeGreaterThan(0);
    // Receipts lag the order by the vendor's (varying) lead time; the lead-in starts before the order history.
    const first = tables["purchase_orders.csv"]!.map((p) => p.date_ordered!).sort()[0]!;
    expect(first < "2024-03-01").toBe(true);
    expect(Date.parse("2024-03-01") - Date.parse(first)).toBeLessThanOrEqual(LEAD_IN_DAYS * 86_400_000);
  });

  it("simulates stock: never negative, and stock_quantity = receivings − completed sales", () => {
    const pidOfLine = new Map(tables["po_lines.csv"]!.map((l) => [l.po_line_id!, l.pid!]));
    const events = new Map<string, [string, number][]>();
    const add = (pid: string, day: string, qty: number) => {
      const list = events.get(pid) ?? [];
      list.push([day, qty]);
      events.set(pid, list);
    };
    for (const r of tables["receivings.csv"]!)
      add(pidOfLine.get(r.po_line_id!)!, `${r.received_date}A`, Number(r.qty));
    for (const l of tables["order_lines.csv"]!)
      if (l.status === "completed") add(l.pid!, `${l.order_date!.slice(0, 10)}B`, -Number(l.quantity));
    let zeroDays = 0;
    for (const p of tables["products.csv"]!) {
      const list = (events.get(p.pid!) ?? []).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      let stock = 0;
      let min = 0;
      let day = "";
      for (const [d, q] of list) {
        if (d.slice(0, 10) !== day) {
          min = Math.min(min, stock); // end of the previous day
          day = d.slice(0, 10);
        }
        stock += q;
      }
      min = Math.min(min, stock);
      expect(min, `pid ${p.pid}`).toBeGreaterThanOrEqual(0);
      expect(Number(p.stock_quantity), `pid ${p.pid}`).toBe(stock);
      if (stock === 0) zeroDays++;
    }
    expect(zeroDays).toBeGreaterThan(0); // some products are out of stock today
  });

  it("has a long tail, discontinued items and new launches", () => {
    const products = tables["products.csv"]!;
    const discontinued = products.filter((p) => p.discontinued === "true");
    expect(discontinued.length).toBeGreaterThan(5);
    expect(discontinued.some((p) => Number(p.stock_quantity) > 0)).toBe(true);
    for (const p of discontinued) expect(p.replenishable).toBe("false");
    const recent = products.filter((p) => p.created_at! >= "2025-12-01");
    expect(recent.length).toBeGreaterThan(3);
    expect(products.some((p) => p.first_received === "")).toBe(true);
    expect(products.some((p) => Number(p.price) < Number(p.regular_price))).toBe(true);

    const revenue = new Map<string, number>();
    for (const l of tables["order_lines.csv"]!) {
      if (l.status !== "completed") continue;
      revenue.set(
        l.pid!,
        (revenue.get(l.pid!) ?? 0) + Number(l.quantity) * Number(l.price) - Number(l.discount),
      );
    }
    const sorted = products.map((p) => revenue.get(p.pid!) ?? 0).sort((a, b) => b - a);
    const total = sorted.reduce((s, x) => s + x, 0);
    const top = sorted.slice(0, products.length / 5).reduce((s, x) => s + x, 0);
    expect(top / total).toBeGreaterThan(0.65);
    // Slow movers are intermittent: most of their days have no sale.
    const days = new Map<string, Set<string>>();
    for (const l of tables["order_lines.csv"]!) {
      const s = days.get(l.pid!) ?? new Set<string>();
      s.add(l.order_date!.slice(0, 10));
      days.set(l.pid!, s);
    }
    const counts = products.map((p) => days.get(p.pid!)?.size ?? 0).sort((a, b) => a - b);
    expect(counts[Math.floor(counts.length / 2)]!).toBeLessThan(365);
  });
});
