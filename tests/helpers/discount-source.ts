// Hand-made sources for the price elasticity fit and the Discount Simulator (docs/metrics.md §15).
// asOf = 2026-06-30T12:00Z (FIXTURE_AS_OF), D0 = 2026-06-30; week k is D0−7k−6 … D0−7k and each
// week's units are sold in one line in its middle (D0 − 7k − 3). Stock is ample (no day out of
// stock) unless a product says otherwise.
import { writeSource } from "./csv-source.ts";

const DAY = 86_400_000;
const D0 = Date.parse("2026-06-30T00:00:00Z");
export const dayOf = (offset: number) => new Date(D0 + offset * DAY).toISOString().slice(0, 10);

export interface SourceProduct {
  pid: number;
  title: string;
  price: number;
  regularPrice?: number;
  cost: number;
  stock: number;
  categories: number[];
  brand?: number;
  vendor?: number;
  /** [units, price, line discount (default 0)] per week k = 0 … 51 (index k); units 0 → no line. */
  weeks: [number, number, number?][];
}

/** 52 weeks at `units` per week and `price`, with `promo` weeks at `promoUnits` and `promoPrice`. */
export function weeksWith(
  units: number,
  price: number,
  promo: { weeks: number[]; units: number; price: number }[] = [],
): [number, number][] {
  const out: [number, number][] = Array.from({ length: 52 }, () => [units, price]);
  for (const p of promo) for (const k of p.weeks) out[k] = [p.units, p.price];
  return out;
}

export const CATEGORIES = [
  "category_id,parent_id,name,type,level",
  "300,,Gifts,10,1",
  "301,300,Cards,11,2",
  "302,300,Wrap,11,2",
  "303,,Paper,10,1",
];

/** An open purchase order line: `qty` of `pid` expected on `expected`. */
export interface OpenPo {
  pid: number;
  qty: number;
  expected: string;
}

/**
 * Writes the source. `d0` moves every date (the weeks, the POs' order day) to count back from that
 * day instead of 2026-06-30 (a test whose promotions must start today or later calculates as of today).
 */
export function discountSource(products: SourceProduct[], pos: OpenPo[] = [], d0?: string): string {
  const base = d0 ? Date.parse(`${d0}T00:00:00Z`) : D0;
  const dayOf = (offset: number) => new Date(base + offset * DAY).toISOString().slice(0, 10);
  const lines = ["line_id,order_number,pid,order_date,quantity,price,discount,status"];
  let id = 0;
  for (const p of products) {
    p.weeks.forEach(([units, price, discount], k) => {
      if (units <= 0) return;
      id++;
      lines.push(
        `${id},SO-${id},${p.pid},${dayOf(-7 * k - 3)}T10:00:00Z,${units},${price.toFixed(2)},${(discount ?? 0).toFixed(2)},completed`,
      );
    });
  }
  return writeSource({
    "categories.csv": CATEGORIES,
    "products.csv": [
      "pid,title,sku,barcode,brand_id,vendor_id,line,description,price,regular_price,cost_price,stock_quantity,moq,case_qty,harmonized_tariff_code,weight,length,width,height,tax_code,size_cat,shipping_restrictions,visible,replenishable,discontinued,created_at,first_received,image_url",
      ...products.map(
        (p) =>
          `${p.pid},${p.title},SKU-${p.pid},,${p.brand ?? 1},${p.vendor ?? 10},,,${p.price.toFixed(2)},${(p.regularPrice ?? p.price).toFixed(2)},${p.cost.toFixed(2)},${p.stock},1,1,,,,,,1,S,0,true,true,false,2024-01-01T00:00:00Z,2024-01-05,`,
      ),
    ],
    "product_categories.csv": [
      "pid,category_id",
      ...products.flatMap((p) => p.categories.map((c) => `${p.pid},${c}`)),
    ],
    "order_lines.csv": lines,
    "purchase_orders.csv": [
      "po_id,vendor_id,status,date_ordered,date_expected",
      ...pos.map((po, i) => `${900 + i},10,ordered,${dayOf(-5)},${po.expected}`),
    ],
    "po_lines.csv": [
      "po_line_id,po_id,pid,ordered_qty,cost_each",
      ...pos.map((po, i) => `${9000 + i},${900 + i},${po.pid},${po.qty},1.00`),
    ],
    "receivings.csv": ["receiving_id,po_line_id,received_date,qty,cost_each"],
  });
}

/** Product 1 of docs/metrics.md §15.6: 100 a week at 10.00, 140 a week at 8.00 in weeks 10–11 and 30–31. */
export const HAND_WORKED: SourceProduct = {
  pid: 1,
  title: "Promo Card",
  price: 10,
  cost: 5,
  stock: 100_000,
  categories: [301],
  weeks: weeksWith(100, 10, [
    { weeks: [10, 11], units: 140, price: 8 },
    { weeks: [30, 31], units: 140, price: 8 },
  ]),
};

/** Product 2: 100 a week at 5.00, never discounted; a flat seasonal reference for product 1. */
export const FLAT: SourceProduct = {
  pid: 2,
  title: "Plain Wrap",
  price: 5,
  cost: 2,
  stock: 100_000,
  categories: [302],
  weeks: weeksWith(100, 5),
};
