// Realistic, deterministic demo data in the CSV source format of docs/data-format.md.
//
// One seeded simulation, day by day, over a purchasing lead-in (LEAD_IN_DAYS before the first order date)
// and `years` of order history up to `today` (exclusive):
//   1. receivings due that day arrive (stock in),
//   2. customer orders are drawn (seasonality × weekday × growth × per-product popularity/trend/promotions);
//      a completed or returned line needs the stock (otherwise the sale is lost), a completed line takes it out,
//   3. vendors whose review day it is get a purchase order for the products below their reorder point.
// Rows are streamed to the files as they are produced (constant memory; per-product state lives in typed
// arrays), so 100k products / 10M order lines fit in a few hundred MB. Same options (incl. `today`) and seed →
// byte-identical files: one PRNG stream for the simulation, one per product for its static attributes, no
// Math.random, no locale/time-zone dependent formatting, no iteration over unordered collections.
//
// Relations the importer / planning engine can rely on:
//   - stock_quantity = Σ receivings.qty − Σ order_lines.quantity where status = 'completed' (per pid; returned
//     lines were shipped and came back, cancelled lines were never shipped — neither changes stock).
//   - Stock never went negative on any day (receivings count at the start of their day).
//   - A PO is `received` when every line got all it will get (a few lines are short-shipped and closed with
//     received < ordered), `partial` when some but not all planned receivings happened before today, `ordered`
//     when none did, `draft` (last few days only) and `cancelled` have no receivings.
//   - POs and receivings start LEAD_IN_DAYS before the first order date (that is how opening stock was built).
//     Products created before that have a first_received before any receiving in the data; for newer products
//     first_received is the date of their first receiving (empty while nothing has arrived yet).
//   - Order lines are in time order; order_number groups 1–6 lines with one timestamp; a line's price is the
//     product's price that day (regular price, a price rise, promotions, Black Friday, clearance after
//     discontinuation) and discount is a line amount (coupons, bulk).
//   - Discontinued products are not replenishable; some stopped selling with stock left, others sell through.

import { once } from "node:events";
import { createWriteStream, type WriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { PRODUCT_CSV_COLUMNS } from "../../shared/data-format.ts";

export interface DemoDataOptions {
  out: string;
  products: number;
  years: number;
  seed?: number;
  orderLines?: number;
  poLines?: number;
  today?: Date;
  onProgress?: (msg: string) => void;
}

export interface DemoDataResult {
  /** Data rows (without the header) per file name. */
  files: Record<string, number>;
  ms: number;
}

/** The files of docs/data-format.md with their columns, in the documented order. */
export const DEMO_FILES = {
  "brands.csv": ["brand_id", "name"],
  "vendors.csv": ["vendor_id", "name", "email", "phone", "lead_time_days"],
  "categories.csv": ["category_id", "parent_id", "name", "type", "level"],
  "tax_categories.csv": ["code", "label"],
  "sizes.csv": ["code", "label"],
  "shipping_restrictions.csv": ["code", "label"],
  "products.csv": [...PRODUCT_CSV_COLUMNS],
  "product_categories.csv": ["pid", "category_id"],
  "order_lines.csv": [
    "line_id",
    "order_number",
    "pid",
    "order_date",
    "quantity",
    "price",
    "discount",
    "status",
  ],
  "purchase_orders.csv": ["po_id", "vendor_id", "status", "date_ordered", "date_expected"],
  "po_lines.csv": ["po_line_id", "po_id", "pid", "ordered_qty", "cost_each"],
  "receivings.csv": ["receiving_id", "po_line_id", "received_date", "qty", "cost_each"],
} as const satisfies Record<string, readonly string[]>;

export type DemoFileName = keyof typeof DEMO_FILES;

/** Days of purchasing simulated before the first order date, so opening stock comes from real receivings. */
export const LEAD_IN_DAYS = 120;

const DAY_MS = 86_400_000;
const NEVER = 0x3fffffff;

// ---------------------------------------------------------------------------------------------------------
// PRNG

/** sfc32: small, fast, good-quality 32-bit PRNG; `next()` is uniform in [0, 1). */
class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  private spare = Number.NaN;

  constructor(seed: number, stream = 0) {
    this.a = 0x9e3779b9;
    this.b = hash32(seed, 0x243f6a88);
    this.c = hash32(stream, 0xb7e15162);
    this.d = 1;
    for (let i = 0; i < 12; i++) this.next();
  }

  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  /** Integer in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  range(lo: number, hi: number): number {
    return lo + this.next() * (hi - lo);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** Standard normal (Box–Muller, caching the second value). */
  gauss(): number {
    if (!Number.isNaN(this.spare)) {
      const s = this.spare;
      this.spare = Number.NaN;
      return s;
    }
    let u = this.next();
    while (u < 1e-12) u = this.next();
    const v = this.next();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }

  poisson(mean: number): number {
    if (mean <= 0) return 0;
    if (mean > 40) return Math.max(0, Math.round(mean + Math.sqrt(mean) * this.gauss()));
    const l = Math.exp(-mean);
    let k = 0;
    let p = this.next();
    while (p > l) {
      k++;
      p *= this.next();
    }
    return k;
  }

  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      const t = items[i]!;
      items[i] = items[j]!;
      items[j] = t;
    }
    return items;
  }
}

function hash32(a: number, b: number): number {
  let h = Math.imul((a | 0) ^ 0x85ebca6b, 0xcc9e2d51) ^ Math.imul(b | 0, 0x1b873593);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

// ---------------------------------------------------------------------------------------------------------
// Formatting (locale- and time-zone-independent)

const PAD2: string[] = Array.from({ length: 100 }, (_, i) => (i < 10 ? `0${i}` : `${i}`));

function money(cents: number): string {
  const c = Math.round(cents);
  const r = c % 100;
  return `${(c - r) / 100}.${PAD2[r]!}`;
}

function dec2(x: number): string {
  return money(Math.round(x * 100));
}

function isoDate(epochDay: number): string {
  return new Date(epochDay * DAY_MS).toISOString().slice(0, 10);
}

function timeOfDay(sec: number): string {
  const h = Math.floor(sec / 3600);
  const m = Math.floor((sec % 3600) / 60);
  return `${PAD2[h]!}:${PAD2[m]!}:${PAD2[sec % 60]!}`;
}

const NEEDS_QUOTES = /[",\r\n]/;

function csv(s: string): string {
  return NEEDS_QUOTES.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

// ---------------------------------------------------------------------------------------------------------
// Buffered, backpressure-aware CSV writer

const FLUSH_AT = 1 << 20;

class CsvWriter {
  rows = 0;
  private buf = "";
  private readonly stream: WriteStream;

  constructor(file: string, header: readonly string[]) {
    this.stream = createWriteStream(file, { encoding: "utf8" });
    this.buf = `${header.join(",")}\n`;
  }

  /** `line` must already be CSV-escaped and end with "\n". */
  add(line: string): void {
    this.buf += line;
    this.rows++;
  }

  async maybeFlush(): Promise<void> {
    if (this.buf.length >= FLUSH_AT) await this.flush();
  }

  async flush(): Promise<void> {
    if (!this.buf) return;
    const ok = this.stream.write(this.buf);
    this.buf = "";
    if (!ok) await once(this.stream, "drain");
  }

  async close(): Promise<void> {
    await this.flush();
    await new Promise<void>((resolve, reject) => {
      this.stream.once("error", reject);
      this.stream.end(() => resolve());
    });
  }
}

// ---------------------------------------------------------------------------------------------------------
// Catalogue data

interface Kind {
  top: string;
  sub: string;
  name: string;
  price: readonly [number, number];
  weight: number;
  dims: readonly [number, number, number];
  cases: readonly number[];
  hts: string;
  ship: string;
  tax: string;
  /** Seasonal profile: 0 general, 1 Christmas, 2 spring, 3 Halloween. */
  season: number;
  variant: "color" | "design" | "none";
  pop: number;
}

type KindRow = [
  name: string,
  lo: number,
  hi: number,
  weightOz: number,
  dims: [number, number, number],
  cases: number[],
  hts: string,
  variant: "color" | "design" | "none",
  extra?: { ship?: string; tax?: string; season?: number; pop?: number },
];

const CATALOGUE: Record<string, Record<string, KindRow[]>> = {
  Paper: {
    Cardstock: [
      [
        "12x12 Cardstock",
        0.59,
        1.29,
        0.4,
        [12.5, 12.5, 0.05],
        [25, 50],
        "4802.56.2000",
        "color",
        { pop: 1.6 },
      ],
      ["8.5x11 Cardstock Pack", 6.99, 14.99, 24, [11, 8.5, 0.8], [6, 12], "4802.56.2000", "color"],
      ["Glitter Cardstock", 0.99, 1.99, 0.5, [12.5, 12.5, 0.05], [10, 25], "4811.90.9090", "color"],
    ],
    "Patterned Paper": [
      [
        "12x12 Patterned Paper",
        0.79,
        1.49,
        0.4,
        [12.5, 12.5, 0.05],
        [25],
        "4811.90.9090",
        "design",
        { pop: 1.4 },
      ],
      ["6x6 Paper Pad", 7.99, 16.99, 12, [6.5, 6.5, 0.8], [6, 12], "4820.90.0000", "design"],
      ["Vellum Sheets", 4.99, 9.99, 6, [12.5, 12.5, 0.3], [6], "4806.30.0000", "design", { pop: 0.6 }],
    ],
    "Specialty Paper": [
      ["Watercolor Paper Pad", 9.99, 29.99, 20, [12, 9, 0.6], [6], "4802.55.1000", "none"],
      ["Kraft Paper Roll", 12.99, 24.99, 40, [30, 4, 4], [4], "4804.39.4051", "none", { pop: 0.5 }],
    ],
  },
  Stamping: {
    Stamps: [
      ["Clear Stamp Set", 9.99, 24.99, 3, [6.5, 4.5, 0.2], [6, 12], "3926.90.9990", "design", { pop: 1.3 }],
      ["Cling Rubber Stamp", 6.99, 14.99, 2, [5, 5, 0.4], [6], "4016.99.6050", "design"],
    ],
    Ink: [
      ["Dye Ink Pad", 5.99, 9.99, 3, [3.5, 3.5, 0.9], [6, 12], "3215.19.0000", "color", { pop: 1.3 }],
      ["Pigment Ink Pad", 6.99, 11.99, 3, [3.5, 3.5, 0.9], [6, 12], "3215.19.0000", "color"],
      ["Ink Refill", 4.49, 7.99, 1, [1.5, 1.5, 3], [6, 12], "3215.19.0000", "color", { pop: 0.8 }],
    ],
    Embossing: [
      ["Embossing Powder", 5.99, 9.99, 1.5, [2, 2, 3], [6, 12], "3212.90.0050", "color"],
      ["Embossing Folder", 7.99, 15.99, 4, [6, 6, 0.3], [6], "3926.90.9990", "design"],
      ["Heat Tool", 24.99, 44.99, 16, [9, 4, 3], [4], "8516.31.0000", "none", { pop: 0.5 }],
    ],
  },
  "Die Cutting": {
    Dies: [
      ["Thin Cut Die Set", 12.99, 34.99, 2, [7, 5, 0.2], [6], "8203.20.8000", "design", { pop: 1.3 }],
      ["Hot Foil Plate", 9.99, 19.99, 2, [6, 6, 0.2], [6], "8203.20.8000", "design", { pop: 0.6 }],
    ],
    Machines: [
      [
        "Die Cutting Machine",
        89.99,
        199.99,
        160,
        [18, 12, 8],
        [1, 2],
        "8441.10.0000",
        "none",
        { ship: "3", pop: 0.3 },
      ],
      ["Cutting Plates", 9.99, 19.99, 20, [9, 6.5, 0.5], [6], "3926.90.9990", "none", { pop: 0.7 }],
    ],
    Stencils: [["Layering Stencil Set", 8.99, 16.99, 2, [6, 6, 0.1], [6, 12], "3926.90.9990", "design"]],
  },
  Embellishments: {
    Stickers: [
      ["Sticker Sheet", 2.49, 4.99, 0.5, [6, 4, 0.05], [12, 24], "4911.91.4040", "design", { pop: 1.4 }],
      ["Puffy Stickers", 3.99, 6.99, 0.8, [6, 4, 0.2], [12], "4911.91.4040", "design"],
    ],
    "Tape & Ribbon": [
      ["Washi Tape", 2.99, 5.99, 0.8, [2, 2, 0.6], [12, 24], "4823.90.8600", "design", { pop: 1.3 }],
      ['Satin Ribbon 3/8"', 2.99, 6.99, 2, [3, 3, 1], [12], "5806.32.2000", "color"],
    ],
    Accents: [
      ["Enamel Dots", 3.99, 6.99, 1, [4, 3, 0.2], [12], "3926.40.0000", "color"],
      ["Sequin Mix", 3.49, 5.99, 1, [4, 3, 0.5], [12], "3926.40.0000", "color"],
      ["Buttons Pack", 3.99, 6.99, 2, [4, 3, 0.5], [12], "9606.22.0000", "color", { pop: 0.7 }],
      ["Chipboard Shapes", 4.99, 8.99, 3, [6, 6, 0.2], [12], "4823.90.8600", "design"],
    ],
  },
  "Adhesives & Tools": {
    Adhesives: [
      ["Tape Runner", 6.99, 12.99, 3, [5, 3, 1.5], [12], "3506.91.5000", "none", { pop: 1.5 }],
      ["Foam Squares", 3.99, 6.99, 1, [4, 3, 0.5], [12, 24], "3919.90.5060", "none", { pop: 1.2 }],
      ["Liquid Glue 2 oz", 3.49, 6.99, 3, [2, 2, 5], [12], "3506.10.5000", "none"],
      ["Glue Sticks 3-Pack", 2.99, 4.99, 2, [4, 3, 1], [24], "3506.10.5000", "none"],
    ],
    "Cutting Tools": [
      ["Precision Scissors", 8.99, 19.99, 3, [7, 3, 0.5], [6, 12], "8213.00.9000", "color"],
      ['Paper Trimmer 12"', 24.99, 49.99, 40, [16, 6, 2], [4], "8441.10.0000", "none", { pop: 0.5 }],
      ["Craft Knife", 4.99, 9.99, 1, [6, 1, 0.5], [12], "8211.93.0060", "none", { ship: "4" }],
      ["Border Punch", 12.99, 22.99, 8, [7, 3, 2], [6], "8203.20.8000", "design", { pop: 0.6 }],
    ],
  },
  "Paint & Color": {
    Paint: [
      ["Acrylic Paint 2 oz", 1.99, 4.99, 3, [2, 2, 3], [12, 24], "3210.00.0000", "color", { pop: 1.5 }],
      ["Watercolor Set", 14.99, 39.99, 8, [7, 4, 1], [6], "3213.10.0000", "none"],
      ["Spray Ink", 6.99, 9.99, 3, [2, 2, 5], [6, 12], "3215.19.0000", "color", { ship: "2" }],
      ["Alcohol Ink", 5.99, 8.99, 1, [1.5, 1.5, 3], [6, 12], "3215.19.0000", "color", { ship: "1" }],
    ],
    "Markers & Pens": [
      ["Alcohol Marker Set", 19.99, 79.99, 10, [7, 5, 1], [6], "9608.20.0000", "none", { ship: "1" }],
      ["Gel Pen", 1.49, 2.99, 0.5, [6, 0.5, 0.5], [12, 24], "9608.10.0000", "color", { pop: 1.2 }],
      ["Brush Pen", 2.99, 4.99, 0.5, [6, 0.5, 0.5], [12, 24], "9608.20.0000", "color"],
    ],
    "Brushes & Mediums": [
      ["Paint Brush Set", 6.99, 18.99, 3, [10, 3, 1], [6], "9603.30.6000", "none"],
      ["Gesso 8 oz", 7.99, 13.99, 10, [3, 3, 4], [6], "3214.10.0020", "none"],
      ["Modeling Paste", 9.99, 15.99, 10, [3, 3, 4], [6], "3214.10.0020", "none", { pop: 0.6 }],
    ],
  },
  "Fiber & Sewing": {
    Yarn: [
      [
        "Acrylic Yarn Skein",
        3.99,
        7.99,
        7,
        [7, 4, 4],
        [6, 12],
        "5509.31.0000",
        "color",
        { tax: "2", pop: 1.3 },
      ],
      ["Merino Yarn Skein", 9.99, 19.99, 3.5, [6, 3, 3], [6], "5107.10.6000", "color", { tax: "2" }],
    ],
    Fabric: [
      ["Fabric Fat Quarter", 2.99, 5.49, 2, [9, 6, 0.3], [10, 20], "5208.52.4000", "design", { tax: "2" }],
      [
        "Quilting Fabric by the Yard",
        9.99,
        13.99,
        6,
        [12, 8, 1],
        [5],
        "5208.52.4000",
        "design",
        { tax: "2" },
      ],
    ],
    "Thread & Floss": [
      ["Embroidery Floss", 0.39, 0.79, 0.3, [3, 1, 0.5], [24, 48], "5204.11.0000", "color", { tax: "2" }],
      ["Sewing Thread Spool", 2.49, 4.49, 1, [2, 2, 2], [12], "5401.10.0000", "color", { tax: "2" }],
    ],
  },
  "Storage & Albums": {
    Albums: [
      ["12x12 Scrapbook Album", 19.99, 39.99, 48, [13, 13, 3], [4], "4820.50.0000", "color"],
      [
        "Page Protectors 10-Pack",
        5.99,
        9.99,
        8,
        [12.5, 12.5, 0.3],
        [12],
        "3926.10.0000",
        "none",
        { pop: 0.8 },
      ],
    ],
    Storage: [
      ["Stamp Storage Box", 9.99, 24.99, 12, [8, 6, 4], [6], "3923.10.9000", "none", { pop: 0.6 }],
      ["Craft Tote", 24.99, 59.99, 40, [16, 12, 10], [2], "4202.92.9100", "color", { pop: 0.4 }],
    ],
    Books: [["Technique Book", 14.99, 29.99, 16, [10, 8, 0.6], [10], "4901.99.0093", "none", { tax: "3" }]],
  },
  "Holiday & Seasonal": {
    Christmas: [
      ["Ornament Kit", 7.99, 19.99, 6, [8, 6, 2], [6, 12], "9505.10.2500", "design", { season: 1, pop: 1.2 }],
      [
        "Christmas Paper Pad",
        7.99,
        16.99,
        12,
        [6.5, 6.5, 0.8],
        [6, 12],
        "4820.90.0000",
        "design",
        { season: 1 },
      ],
      ["Holiday Stamp Set", 12.99, 24.99, 3, [6.5, 4.5, 0.2], [6], "3926.90.9990", "design", { season: 1 }],
      ["Advent Calendar Kit", 19.99, 39.99, 24, [12, 10, 2], [4], "9505.10.5000", "none", { season: 1 }],
      ["Gift Tag Set", 3.99, 6.99, 1, [4, 3, 0.3], [12], "4821.10.4000", "design", { season: 1 }],
    ],
    Halloween: [
      [
        "Halloween Paper Pad",
        7.99,
        14.99,
        12,
        [6.5, 6.5, 0.8],
        [6, 12],
        "4820.90.0000",
        "design",
        { season: 3 },
      ],
      ["Halloween Die Set", 12.99, 24.99, 2, [7, 5, 0.2], [6], "8203.20.8000", "design", { season: 3 }],
      ["Spooky Stickers", 2.49, 4.99, 0.5, [6, 4, 0.05], [12, 24], "4911.91.4040", "design", { season: 3 }],
    ],
    "Spring & Easter": [
      ["Easter Egg Dye Kit", 3.99, 7.99, 6, [6, 4, 2], [12], "3204.90.0000", "none", { season: 2 }],
      [
        "Spring Floral Stickers",
        2.49,
        4.99,
        0.5,
        [6, 4, 0.05],
        [12, 24],
        "4911.91.4040",
        "design",
        { season: 2 },
      ],
      [
        "Garden Stepping Stone Kit",
        14.99,
        24.99,
        80,
        [12, 12, 4],
        [4],
        "3824.50.0010",
        "none",
        { season: 2 },
      ],
    ],
  },
};

const KINDS: Kind[] = [];
const TOPS: string[] = Object.keys(CATALOGUE);
for (const top of TOPS) {
  for (const [sub, rows] of Object.entries(CATALOGUE[top]!)) {
    for (const [name, lo, hi, weight, dims, cases, hts, variant, extra] of rows) {
      KINDS.push({
        top,
        sub,
        name,
        price: [lo, hi],
        weight,
        dims,
        cases,
        hts,
        variant,
        ship: extra?.ship ?? "0",
        tax: extra?.tax ?? "1",
        season: extra?.season ?? 0,
        pop: extra?.pop ?? 1,
      });
    }
  }
}

/** A word list written as "a|b|c" over several lines. */
function words(text: string): string[] {
  return text
    .split(/[|\n]/)
    .map((w) => w.trim())
    .filter(Boolean);
}

const COLORS = words(`
  Ocean Blue|Rose Gold|Kraft|Snow White|Jet Black|Sage Green|Blush Pink|Mustard|Teal|Coral|Lavender
  Navy|Cherry Red|Mint|Charcoal|Sky Blue|Tangerine|Plum|Lemon|Olive|Turquoise|Burgundy|Peach|Slate
  Ivory|Forest Green|Sunflower|Lilac|Cocoa|Aqua|Silver|Gold|Copper|Berry|Denim|Pistachio|Terracotta
  Dusty Rose|Midnight|Cream
`);

const DESIGNS = words(`
  Winter Wonderland|Botanical Garden|Woodland Friends|Geometric|Polka Dot|Vintage Floral
  Travel Journal|Birthday Bash|Sweet Baby|Coastal Breeze|Farmhouse|Sunny Days|Autumn Harvest
  Starry Night|Happy Mail|Wild Meadow|Little Dreamer|Boho Chic|Tropical|Celebrate|Thank You|Love Notes
  Adventure Awaits|Cottage Rose|Rainbow Brights|Snowflakes|Gingham|Watercolor Wash|Retro Kitchen
  Garden Party
`);

const BLURBS = words(`
  acid-free and archival safe|a customer favourite|made for everyday crafting
  great for card making, scrapbooking and journaling|non-toxic, AP certified
  pairs with the rest of the line|ideal for classrooms and workshops
`);

const BRAND_A = words(`
  Paper|Crafty|Maple|Willow|Bright|Little|Happy|Golden|Silver|Blue|Studio|Ink|Lucky|Sunny|Wild|Cozy
  Velvet|Honey|Copper|Misty|Cedar|Clover|Story|Pebble|Fern|Poppy|Amber|Harbor|Meadow|Tinker|Button
  Magpie
`);

const BRAND_B = words(`
  Fox|Lane|House|Works|Co|Studio|Crafts|Press|Stamps|Lab|Nest|Bird|Garden|Owl|Mill|Loft|Kit|Trail|Moon
  Row|Hollow|Bloom|Design|Paperie|Supply|Box|Sparrow|Brook
`);

const LINE_A = words(`
  Vintage|Modern|Classic|Essentials|Signature|Heritage|Simple|Pastel|Bold|Artisan|Studio|Everyday
  Premium|Kids|Nordic|Wildflower
`);

const LINE_B = words(`
  Meadow|Basics|Collection|Series|Pro|Line|Edit|Mini|Select|Club
`);

const VENDOR_A = words(`
  Northwind|Lakeside|Pioneer|Summit|Riverbend|Atlas|Keystone|Harbor|Evergreen|Prairie|Redwood|Granite
  Bluebird|Heartland|Coastal|Orchard|Silverline|Crescent|Liberty|Falcon|Meridian|Cardinal|Sterling
  Horizon
`);

const VENDOR_B = words(`
  Craft Supply|Paper Goods|Distributors|Trading|Wholesale|Imports|Art Materials|Hobby|Creative
`);

const VENDOR_C = ["Co.", "Inc.", "LLC", "Ltd.", "Group", "Corp."];
const SURNAMES = [
  "Harper",
  "Lowe",
  "Whitfield",
  "Okafor",
  "Nakamura",
  "Delgado",
  "Brandt",
  "Moreau",
  "Quinn",
];

const TAX_CATEGORIES: [string, string][] = [
  ["0", "Not Specifically Set"],
  ["1", "General merchandise"],
  ["2", "Textiles & fabric"],
  ["3", "Books & printed matter"],
  ["4", "Art supplies, educational"],
];

const SIZES: [string, string][] = [
  ["XS", "Extra small (envelope)"],
  ["S", "Small (padded mailer)"],
  ["M", "Medium box"],
  ["L", "Large box"],
  ["XL", "Oversize, freight"],
];

const SHIPPING_RESTRICTIONS: [string, string][] = [
  ["0", "None"],
  ["1", "Ground only, no air (flammable)"],
  ["2", "No air shipping (aerosol)"],
  ["3", "Oversize surcharge"],
  ["4", 'Sharp item, "no international"'],
];

// Themes (type 11), techniques (12), merchandising (13), warehouse (20), buying groups (21): 3 levels each.
const OTHER_TREES: [type: number, tree: Record<string, Record<string, string[]>>][] = [
  [
    11,
    {
      Holidays: {
        Christmas: ["Ornaments", "Gift Wrap", "Advent"],
        Halloween: ["Spooky", "Costume Crafts"],
        Easter: ["Egg Decorating", "Spring Baskets"],
      },
      Occasions: {
        Birthday: ["Kids Birthday", "Milestones"],
        Wedding: ["Invitations", "Guest Books"],
        Baby: ["Baby Shower", "Baby Album"],
      },
      Seasons: { "Spring & Summer": ["Garden", "Beach"], "Autumn & Winter": ["Harvest", "Cozy Winter"] },
    },
  ],
  [
    12,
    {
      "Paper Crafting": {
        "Card Making": ["Shaker Cards", "Slimline Cards", "Pop-up Cards"],
        Scrapbooking: ["Layouts", "Mini Albums", "Junk Journals"],
      },
      "Mixed Media": {
        "Art Journaling": ["Backgrounds", "Collage"],
        Painting: ["Acrylic Pouring", "Watercolor"],
      },
      "Fiber Arts": { Knitting: ["Beginner Knits", "Socks"], Stitching: ["Embroidery", "Quilting"] },
    },
  ],
  [
    13,
    {
      Featured: { "Staff Picks": ["Paper", "Tools"], Bestsellers: ["Top 100", "Gift Ideas"] },
      Deals: { Sale: ["Clearance", "Bundle Deals"], Exclusives: ["Online Only", "Limited Edition"] },
    },
  ],
  [
    20,
    {
      "Zone A": { "Aisle 01": ["Bay 01", "Bay 02", "Bay 03"], "Aisle 02": ["Bay 01", "Bay 02", "Bay 03"] },
      "Zone B": { "Aisle 03": ["Bay 01", "Bay 02", "Bay 03"], "Aisle 04": ["Bay 01", "Bay 02", "Bay 03"] },
      "Zone C (bulk)": { "Aisle 05": ["Pallet 1", "Pallet 2"], "Aisle 06": ["Pallet 1", "Pallet 2"] },
    },
  ],
  [
    21,
    {
      "Buying: Paper & Stamping": { Domestic: ["Core", "Seasonal"], Import: ["Core", "Seasonal"] },
      "Buying: Tools & Color": { Domestic: ["Core", "Seasonal"], Import: ["Core", "Seasonal"] },
    },
  ],
];

// ---------------------------------------------------------------------------------------------------------
// Demand shape

/** Circular bump around day-of-year `center` with width `w` days. */
function bump(doy: number, center: number, w: number): number {
  let d = Math.abs(doy - center);
  if (d > 182.5) d = 365 - d;
  return Math.exp(-0.5 * (d / w) ** 2);
}

/** Relative seasonal demand per profile (before normalising the yearly mean to 1). */
function seasonRaw(profile: number, doy: number): number {
  switch (profile) {
    case 1: // Christmas items
      return 0.12 + 3.2 * bump(doy, 340, 18) + 0.7 * bump(doy, 312, 16);
    case 2: // spring / Easter
      return 0.35 + 1.8 * bump(doy, 98, 28) + 0.3 * bump(doy, 150, 20);
    case 3: // Halloween
      return 0.25 + 2.6 * bump(doy, 288, 14);
    default: // general: Christmas peak, summer dip, spring bump, back to school
      return (
        1 +
        0.65 * bump(doy, 338, 24) -
        0.24 * bump(doy, 196, 38) +
        0.2 * bump(doy, 85, 18) +
        0.1 * bump(doy, 250, 12)
      );
  }
}
const PROFILES = 4;

/** Weekday multipliers (0 = Sunday), mean 1. */
const WEEKDAY = [0.86, 1.12, 1.09, 1.05, 1.0, 0.94, 0.8].map(
  (x, _, a) => (x * a.length) / a.reduce((s, y) => s + y),
);

/** Order time-of-day weights per UTC hour (US customers: busiest 14–23 UTC). */
const HOUR_W = [5, 4, 3, 2, 1.5, 1, 0.8, 0.8, 1, 1.5, 2.5, 4, 6, 8, 9.5, 10, 10, 9.5, 9, 9, 8.5, 8, 7, 6];
const HOUR_CUM = (() => {
  const total = HOUR_W.reduce((s, x) => s + x, 0);
  let acc = 0;
  return HOUR_W.map((x) => {
    acc += x / total;
    return acc;
  });
})();

/** Lines per order 1..6. */
const ORDER_SIZE_CUM = [0.38, 0.63, 0.79, 0.89, 0.95, 1];

// ---------------------------------------------------------------------------------------------------------
// Entities

interface Vendor {
  id: number;
  name: string;
  email: string;
  phone: string;
  quoted: number | null;
  leadMean: number;
  leadCv: number;
  cycle: number;
  safety: number;
  partialRate: number;
  shortRate: number;
  cancelRate: number;
  distributor: boolean;
}

interface Brand {
  id: number;
  name: string;
  prefix: string;
  vendor: number;
  lines: string[];
  focus: number[];
  factor: number;
}

interface ProductSpec {
  pid: number;
  createdDay: number;
  createdSec: number;
  kind: number;
  brand: number;
  vendor: number;
  line: string;
  title: string;
  sku: string;
  barcode: string;
  description: string;
  regCents: number;
  oldRegCents: number;
  incDay: number;
  costCents: number;
  costMissing: boolean;
  sale1: [number, number, number];
  sale2: [number, number, number];
  bf: boolean;
  moq: number;
  caseQty: number;
  hts: string;
  weight: number | null;
  dims: [number, number, number] | null;
  tax: string;
  size: string;
  ship: string;
  imageUrl: string;
  discDay: number;
  delistDay: number;
  sellThrough: boolean;
  onlyOnce: boolean;
  baseW: number;
  growth: number;
  slow: boolean;
  oldFirstReceived: number;
  categories: number[];
  hiddenIfDelisted: boolean;
  hiddenIfNew: boolean;
}

// ---------------------------------------------------------------------------------------------------------

function validate(o: DemoDataOptions): void {
  const int = (name: string, v: number | undefined, min: number, max: number) => {
    if (v === undefined) return;
    if (!Number.isInteger(v) || v < min || v > max)
      throw new RangeError(`${name} must be an integer between ${min} and ${max}, got ${v}`);
  };
  int("products", o.products, 1, 1_000_000);
  int("years", o.years, 1, 20);
  int("seed", o.seed, -2147483648, 4294967295);
  int("orderLines", o.orderLines, 0, 200_000_000);
  int("poLines", o.poLines, 0, 50_000_000);
  if (!o.out) throw new RangeError("out is required");
  if (o.today && Number.isNaN(o.today.getTime())) throw new RangeError("today is not a valid date");
}

export async function generateDemoData(opts: DemoDataOptions): Promise<DemoDataResult> {
  validate(opts);
  const t0 = performance.now();
  const progress = opts.onProgress ?? (() => {});
  const seed = (opts.seed ?? 42) >>> 0;
  const N = opts.products;
  const years = opts.years;
  const targetLines = opts.orderLines ?? Math.round(N * years * 60);
  const targetPoLines = opts.poLines ?? Math.round(N * years * 3);

  const nowMs = (opts.today ?? new Date()).getTime();
  const todayEpoch = Math.floor(nowMs / DAY_MS);
  const startDate = new Date(todayEpoch * DAY_MS);
  startDate.setUTCFullYear(startDate.getUTCFullYear() - years);
  const startEpoch = Math.floor(startDate.getTime() / DAY_MS);
  const nDays = todayEpoch - startEpoch; // order days 0..nDays-1, "today" = nDays
  const W = LEAD_IN_DAYS;
  const epochOf = (d: number) => startEpoch + d;

  // Per-day calendar for d in [-W, nDays].
  const span = nDays + W + 1;
  const dateStr: string[] = new Array(span);
  const doyOf = new Int16Array(span);
  const dowOf = new Uint8Array(span);
  const bfDay = new Uint8Array(span);
  for (let k = 0; k < span; k++) {
    const e = epochOf(k - W);
    const dt = new Date(e * DAY_MS);
    dateStr[k] = dt.toISOString().slice(0, 10);
    doyOf[k] = Math.min(364, Math.floor((e * DAY_MS - Date.UTC(dt.getUTCFullYear(), 0, 1)) / DAY_MS));
    dowOf[k] = dt.getUTCDay();
    // Black Friday (day after the 4th Thursday of November) through Cyber Monday.
    if (dt.getUTCMonth() === 10 || (dt.getUTCMonth() === 11 && dt.getUTCDate() <= 3)) {
      const nov1 = new Date(Date.UTC(dt.getUTCFullYear(), 10, 1)).getUTCDay();
      const thanksgiving = 1 + ((4 - nov1 + 7) % 7) + 21;
      const bf = Date.UTC(dt.getUTCFullYear(), 10, thanksgiving + 1) / DAY_MS;
      if (e >= bf && e <= bf + 3) bfDay[k] = 1;
    }
  }
  const dayStr = (d: number) => dateStr[d + W]!;

  const seasonNorm = new Float64Array(PROFILES);
  for (let g = 0; g < PROFILES; g++) {
    let s = 0;
    for (let doy = 0; doy < 365; doy++) s += seasonRaw(g, doy);
    seasonNorm[g] = 365 / s;
  }
  const season = Array.from({ length: PROFILES }, (_, g) => {
    const a = new Float64Array(span);
    for (let k = 0; k < span; k++) a[k] = seasonRaw(g, doyOf[k]!) * seasonNorm[g]!;
    return a;
  });
  // Cyclic prefix sums of the (normalised) seasonal curve by day of year, for averages over a window.
  const seasonPrefix = Array.from({ length: PROFILES }, (_, g) => {
    const a = new Float64Array(366);
    for (let doy = 0; doy < 365; doy++) a[doy + 1] = a[doy]! + seasonRaw(g, doy) * seasonNorm[g]!;
    return a;
  });
  /** Mean seasonal factor of profile g over `len` days starting `offset` days after calendar index k. */
  const seasonAvg = (g: number, k: number, offset: number, len: number): number => {
    const pre = seasonPrefix[g]!;
    let from = (doyOf[k]! + offset) % 365;
    let left = Math.max(1, Math.round(len));
    let sum = 0;
    const full = Math.floor(left / 365);
    sum += full * pre[365]!;
    left -= full * 365;
    while (left > 0) {
      const n = Math.min(left, 365 - from);
      sum += pre[from + n]! - pre[from]!;
      left -= n;
      from = 0;
    }
    return sum / Math.max(1, Math.round(len));
  };
  const midDay = nDays / 2;
  const growthOf = (d: number) => Math.exp((0.07 * (d - midDay)) / 365);

  const rng = new Rng(seed, 1);

  // --- vendors & brands -------------------------------------------------------------------------------
  const nVendors = Math.max(
    1,
    Math.min(Math.ceil(N / 4), Math.round(Math.min(200, Math.max(50, 50 + 75 * Math.log10(N / 1000))))),
  );
  const nBrands = Math.max(
    nVendors,
    Math.min(Math.ceil(N / 2), Math.round(Math.min(450, Math.max(150, 200 + 100 * Math.log10(N / 1000))))),
  );

  const vendorNames = new Set<string>();
  const vendors: Vendor[] = [];
  for (let v = 0; v < nVendors; v++) {
    let name = "";
    for (let attempt = 0; !name || vendorNames.has(name); attempt++) {
      if (attempt > 20) name = `${rng.pick(VENDOR_A)} ${rng.pick(VENDOR_B)} ${v + 1}`;
      else if (rng.chance(0.1)) name = `${rng.pick(SURNAMES)}, ${rng.pick(SURNAMES)} & Sons`;
      else name = `${rng.pick(VENDOR_A)} ${rng.pick(VENDOR_B)} ${rng.pick(VENDOR_C)}`;
    }
    vendorNames.add(name);
    const slug = name
      .toLowerCase()
      .replace(/[^a-z]+/g, "")
      .slice(0, 18);
    const overseas = rng.chance(0.25);
    const quotedRaw = overseas ? rng.pick([35, 42, 45, 60]) : rng.pick([5, 7, 7, 10, 10, 14, 14, 21, 28]);
    const r = rng.next();
    const tier = r < 0.4 ? 0 : r < 0.8 ? 1 : 2; // reliable / normal / unreliable
    vendors.push({
      id: 101 + v,
      name,
      email: rng.chance(0.9) ? `orders@${slug}.example.com` : "",
      phone: rng.chance(0.85)
        ? `+1-${rng.int(201, 989)}-555-${String(rng.int(100, 199)).padStart(4, "0")}`
        : "",
      quoted: rng.chance(0.04) ? null : quotedRaw,
      leadMean:
        quotedRaw *
        (tier === 0 ? rng.range(0.9, 1.05) : tier === 1 ? rng.range(1, 1.15) : rng.range(1.1, 1.45)),
      leadCv: tier === 0 ? rng.range(0.05, 0.12) : tier === 1 ? rng.range(0.12, 0.25) : rng.range(0.3, 0.5),
      cycle: rng.pick([7, 7, 14, 14, 14, 21, 28]),
      safety: rng.int(5, 20),
      partialRate:
        tier === 0 ? rng.range(0.03, 0.08) : tier === 1 ? rng.range(0.08, 0.18) : rng.range(0.2, 0.35),
      shortRate: tier === 2 ? rng.range(0.03, 0.06) : rng.range(0.005, 0.02),
      cancelRate: rng.range(0.01, 0.04),
      distributor: rng.chance(0.1),
    });
  }
  const distributors = vendors.map((_, i) => i).filter((i) => vendors[i]!.distributor);
  if (distributors.length === 0) distributors.push(0);

  const brandCombos: string[] = [];
  for (const a of BRAND_A) for (const b of BRAND_B) if (a !== b) brandCombos.push(`${a} ${b}`);
  rng.shuffle(brandCombos);
  const vendorOrder = rng.shuffle(vendors.map((_, i) => i));
  const brands: Brand[] = [];
  for (let b = 0; b < nBrands; b++) {
    const name =
      b < brandCombos.length ? brandCombos[b]! : `${rng.pick(BRAND_A)} ${rng.pick(BRAND_B)} ${b + 1}`;
    const [first = "X", second = "X"] = name.split(" ");
    const prefix = (first.slice(0, 2) + second.slice(0, 1)).toUpperCase();
    const lines: string[] = [];
    const nLines = rng.int(2, 8);
    for (let k = 0; k < nLines; k++) lines.push(`${rng.pick(LINE_A)} ${rng.pick(LINE_B)}`);
    const focus = [rng.int(0, TOPS.length - 1)];
    if (rng.chance(0.5)) focus.push(rng.int(0, TOPS.length - 1));
    brands.push({
      id: 1 + b,
      name,
      prefix,
      vendor: b < nVendors ? vendorOrder[b]! : rng.int(0, nVendors - 1),
      lines,
      focus,
      factor: Math.exp(0.5 * rng.gauss()),
    });
  }
  const brandCum = new Float64Array(nBrands);
  {
    let acc = 0;
    for (let b = 0; b < nBrands; b++) {
      acc += 1 / (b + 1) ** 0.8;
      brandCum[b] = acc;
    }
  }

  // --- categories --------------------------------------------------------------------------------------
  const categoryRows: string[] = [];
  let nextCat = 1;
  const addCat = (parent: number | null, name: string, type: number, level: number) => {
    const id = nextCat++;
    categoryRows.push(`${id},${parent ?? ""},${csv(name)},${type},${level}\n`);
    return id;
  };
  const kindCat = new Int32Array(KINDS.length);
  const kindsByTop: number[][] = TOPS.map(() => []);
  for (let t = 0; t < TOPS.length; t++) {
    const top = TOPS[t]!;
    const topId = addCat(null, top, 10, 1);
    for (const sub of Object.keys(CATALOGUE[top]!)) {
      const subId = addCat(topId, sub, 10, 2);
      KINDS.forEach((k, ki) => {
        if (k.top === top && k.sub === sub) {
          kindCat[ki] = addCat(subId, k.name, 10, 3);
          kindsByTop[t]!.push(ki);
        }
      });
    }
  }
  const leavesByType = new Map<number, number[]>();
  const christmasLeaves: number[] = [];
  const halloweenLeaves: number[] = [];
  const easterLeaves: number[] = [];
  for (const [type, tree] of OTHER_TREES) {
    const leaves: number[] = [];
    for (const [top, subs] of Object.entries(tree)) {
      const topId = addCat(null, top, type, 1);
      for (const [sub, names] of Object.entries(subs)) {
        const subId = addCat(topId, sub, type, 2);
        if (rng.chance(0.1)) leaves.push(subId); // a few products sit on a level-2 category
        for (const n of names) {
          const id = addCat(subId, n, type, 3);
          leaves.push(id);
          if (type === 11 && sub === "Christmas") christmasLeaves.push(id);
          if (type === 11 && sub === "Halloween") halloweenLeaves.push(id);
          if (type === 11 && sub === "Easter") easterLeaves.push(id);
        }
      }
    }
    leavesByType.set(type, leaves);
  }
  const themeLeaves = leavesByType.get(11)!;
  const techniqueLeaves = leavesByType.get(12)!;
  const merchLeaves = leavesByType.get(13)!;
  const warehouseLeaves = leavesByType.get(20)!;
  const buyingLeaves = leavesByType.get(21)!;

  // --- products: creation days → pid order ---------------------------------------------------------------
  const createdDay = new Int32Array(N);
  {
    const oldest = -Math.round(365 * 6);
    const latestEstablished = -W - 60;
    for (let i = 0; i < N; i++) {
      const r = rng.next();
      if (r < 0.72) createdDay[i] = rng.int(oldest, latestEstablished);
      else if (r < 0.96) createdDay[i] = rng.int(-W, nDays - 1);
      else createdDay[i] = rng.int(Math.max(-W, nDays - 90), nDays - 1);
    }
    createdDay.sort();
  }
  const pidArr = new Int32Array(N);
  {
    let pid = 10_000;
    for (let i = 0; i < N; i++) {
      pid += 1 + (rng.chance(0.08) ? rng.int(1, 5) : 0);
      pidArr[i] = pid;
    }
  }

  const discChoice = (r: Rng, cd: number): { discDay: number; delistDay: number; sellThrough: boolean } => {
    const none = { discDay: NEVER, delistDay: NEVER, sellThrough: false };
    const earliest = Math.max(Math.round(nDays * 0.15), cd + 150);
    const latest = nDays - 10;
    if (earliest >= latest || !r.chance(0.08)) return none;
    const discDay = r.int(earliest, latest);
    const sellThrough = r.chance(0.5);
    return { discDay, delistDay: sellThrough ? NEVER : discDay, sellThrough };
  };

  const describeProduct = (i: number): ProductSpec => {
    const r = new Rng(seed, 1_000_003 + i);
    const pid = pidArr[i]!;
    const cd = createdDay[i]!;
    const u = r.next();
    let brand = 0;
    {
      const x = u * brandCum[nBrands - 1]!;
      let lo = 0;
      let hi = nBrands - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (brandCum[mid]! > x) hi = mid;
        else lo = mid + 1;
      }
      brand = lo;
    }
    const br = brands[brand]!;
    const pool = r.chance(0.75) ? kindsByTop[r.pick(br.focus)]! : null;
    let kind: number;
    {
      const list = pool ?? KINDS.map((_, k) => k);
      let total = 0;
      for (const k of list) total += KINDS[k]!.pop;
      let x = r.next() * total;
      kind = list[list.length - 1]!;
      for (const k of list) {
        x -= KINDS[k]!.pop;
        if (x < 0) {
          kind = k;
          break;
        }
      }
    }
    const k = KINDS[kind]!;
    const vendor = r.chance(0.88) ? br.vendor : distributors[r.int(0, distributors.length - 1)]!;
    const line = r.chance(0.95) ? r.pick(br.lines) : "";
    const variant =
      k.variant === "color"
        ? r.pick(COLORS)
        : k.variant === "design"
          ? r.pick(DESIGNS)
          : r.chance(0.3)
            ? `${r.pick([3, 6, 12, 24])} Piece`
            : "";
    const title = `${br.name}${line ? ` ${line}` : ""} ${k.name}${variant ? ` - ${variant}` : ""}`;
    const sku = `${br.prefix}-${String(pid).padStart(6, "0")}${r.chance(0.3) ? `-${r.int(1, 9)}` : ""}`;
    let barcode = "";
    if (r.chance(0.95)) {
      const body = `0${String(7000 + br.id * 7).padStart(5, "0")}${String(pid % 1_000_000).padStart(6, "0")}`;
      let sum = 0;
      for (let d = 0; d < 12; d++) sum += (body.charCodeAt(d) - 48) * (d % 2 === 0 ? 1 : 3);
      barcode = body + String((10 - (sum % 10)) % 10);
    }
    const [l, w, h] = k.dims;
    let description = `${k.name} by ${br.name}${line ? ` (${line})` : ""}. Size ${l}" x ${w}" x ${h}", ${r.pick(BLURBS)}.`;
    if (r.chance(0.01)) description += "\nCare: store flat, away from direct sunlight.";
    if (r.chance(0.02)) description = "";

    // Price (cents): .99/.49/.79/.29 endings, a price rise for some products during the history.
    const dollars = Math.exp(r.range(Math.log(k.price[0]), Math.log(k.price[1])));
    const regCents =
      dollars < 1.5
        ? Math.max(19, Math.round(dollars * 10) * 10 + 9)
        : Math.floor(dollars) * 100 + r.pick([99, 99, 49, 79, 29]);
    const incDay = r.chance(0.4) ? r.int(0, nDays - 1) : -NEVER;
    const inc = r.range(0.03, 0.1);
    const oldRegCents = Math.max(9, Math.round(regCents / (1 + inc) / 10) * 10 + 9);
    const costCents = Math.round(regCents * r.range(0.35, 0.65));
    const costMissing = r.chance(0.005);
    const sale1: [number, number, number] = [NEVER, NEVER, 0];
    const sale2: [number, number, number] = [NEVER, NEVER, 0];
    if (r.chance(0.35)) {
      const s = r.int(0, Math.max(0, nDays - 30));
      sale1[0] = s;
      sale1[1] = s + r.int(7, 28);
      sale1[2] = r.pick([0.1, 0.15, 0.2, 0.25, 0.3]);
    }
    if (r.chance(0.08)) {
      const s = r.int(Math.max(0, nDays - 45), nDays - 1);
      sale2[0] = s;
      sale2[1] = nDays + r.int(7, 40);
      sale2[2] = r.pick([0.1, 0.15, 0.2, 0.25]);
    }
    const caseQty = r.pick(k.cases);
    const moq = r.chance(0.15) ? caseQty : 1;
    const hasDims = r.chance(0.98);
    const jitter = () => r.range(0.9, 1.1);
    const weight = hasDims ? Math.max(0.05, k.weight * jitter()) : null;
    const dims: [number, number, number] | null = hasDims ? [l, w, h] : null;
    const maxDim = Math.max(l, w, h);
    const size =
      k.weight >= 100 || maxDim >= 18
        ? "XL"
        : maxDim >= 12.5 || k.weight >= 32
          ? "L"
          : maxDim >= 8 || k.weight >= 12
            ? "M"
            : h <= 0.3 && k.weight <= 2
              ? "XS"
              : "S";
    const tax = r.chance(0.04) ? "0" : k.tax === "1" && r.chance(0.2) ? "4" : k.tax;
    const { discDay, delistDay, sellThrough } = discChoice(r, cd);
    const onlyOnce = discDay === NEVER && r.chance(0.02);

    // Popularity: Pareto body × brand × kind; slow movers get lumpy quantities.
    const pareto = Math.min(400, r.next() ** (-1 / 1.0));
    const baseW = pareto * br.factor * k.pop * (dollars > 40 ? 0.5 : 1);
    let growth = r.gauss() * 0.12;
    const tr = r.next();
    if (tr < 0.18) growth = r.range(0.25, 0.9);
    else if (tr < 0.36) growth = -r.range(0.2, 0.7);
    if (discDay !== NEVER) growth = -r.range(0.4, 1.0);

    const categories = [kindCat[kind]!];
    const extra = (id: number) => {
      if (categories.length < 3 && !categories.includes(id)) categories.push(id);
    };
    if (k.season === 1) extra(r.pick(christmasLeaves));
    if (k.season === 2) extra(r.pick(easterLeaves));
    if (k.season === 3) extra(r.pick(halloweenLeaves));
    if (r.chance(0.3)) extra(r.pick(themeLeaves));
    if (r.chance(0.25)) extra(r.pick(techniqueLeaves));
    if (r.chance(0.1)) extra(r.pick(merchLeaves));
    if (r.chance(0.5)) extra(r.pick(warehouseLeaves));
    if (r.chance(0.15)) extra(r.pick(buyingLeaves));

    return {
      pid,
      createdDay: cd,
      createdSec: r.int(8 * 3600, 18 * 3600),
      kind,
      brand,
      vendor,
      line,
      title,
      sku: r.chance(0.98) ? sku : "",
      barcode,
      description,
      regCents,
      oldRegCents,
      incDay,
      costCents,
      costMissing,
      sale1,
      sale2,
      bf: r.chance(0.35),
      moq,
      caseQty,
      hts: r.chance(0.95) ? k.hts : "",
      weight,
      dims,
      tax,
      size: r.chance(0.97) ? size : "",
      ship: k.ship,
      imageUrl: r.chance(0.97) ? `https://cdn.example.com/products/${pid}.jpg` : "",
      discDay,
      delistDay,
      sellThrough,
      onlyOnce,
      baseW,
      growth,
      slow: pareto < 1.9,
      oldFirstReceived: cd + r.int(10, 45),
      categories,
      hiddenIfDelisted: r.chance(0.7),
      hiddenIfNew: r.chance(0.4),
    };
  };

  // Numeric per-product state for the simulation.
  const profileOf = new Uint8Array(N);
  const vendorOf = new Int32Array(N);
  const baseW = new Float64Array(N);
  const growth = new Float64Array(N);
  const regC = new Int32Array(N);
  const oldRegC = new Int32Array(N);
  const incDay = new Int32Array(N);
  const costC = new Int32Array(N);
  const s1 = new Int32Array(N * 2);
  const s2 = new Int32Array(N * 2);
  const s1p = new Float32Array(N);
  const s2p = new Float32Array(N);
  const bfP = new Uint8Array(N);
  const moqOf = new Int32Array(N);
  const caseOf = new Int32Array(N);
  const discDay = new Int32Array(N);
  const delistDay = new Int32Array(N);
  const sellThrough = new Uint8Array(N);
  const onlyOnce = new Uint8Array(N);
  const slow = new Uint8Array(N);
  const newProduct = new Uint8Array(N);
  for (let i = 0; i < N; i++) {
    const p = describeProduct(i);
    profileOf[i] = KINDS[p.kind]!.season;
    vendorOf[i] = p.vendor;
    baseW[i] = p.baseW;
    growth[i] = p.growth;
    regC[i] = p.regCents;
    oldRegC[i] = p.oldRegCents;
    incDay[i] = p.incDay;
    costC[i] = p.costCents;
    s1[2 * i] = p.sale1[0];
    s1[2 * i + 1] = p.sale1[1];
    s1p[i] = p.sale1[2];
    s2[2 * i] = p.sale2[0];
    s2[2 * i + 1] = p.sale2[1];
    s2p[i] = p.sale2[2];
    bfP[i] = p.bf ? 1 : 0;
    moqOf[i] = p.moq;
    caseOf[i] = p.caseQty;
    discDay[i] = p.discDay;
    delistDay[i] = p.delistDay;
    sellThrough[i] = p.sellThrough ? 1 : 0;
    onlyOnce[i] = p.onlyOnce ? 1 : 0;
    slow[i] = p.slow ? 1 : 0;
    newProduct[i] = p.createdDay > -W - 60 ? 1 : 0;
  }
  /** Expected units per order line (matches sampleQty below). */
  const meanQty = (i: number) => (slow[i] ? 2.9 : 1.9);

  const regAt = (i: number, d: number) => (d < incDay[i]! ? oldRegC[i]! : regC[i]!);
  const costAt = (i: number, d: number) => (d < incDay[i]! ? Math.round(costC[i]! / 1.06) : costC[i]!);
  const promoPct = (i: number, d: number) => {
    let pct = 0;
    if (d >= s1[2 * i]! && d < s1[2 * i + 1]!) pct = s1p[i]!;
    if (d >= s2[2 * i]! && d < s2[2 * i + 1]! && s2p[i]! > pct) pct = s2p[i]!;
    if (sellThrough[i] && d >= discDay[i]! && pct < 0.3) pct = 0.3;
    if (d >= 0 && d < nDays && bfP[i] && bfDay[d + W] && pct < 0.15) pct = 0.15;
    return pct;
  };
  const priceAt = (i: number, d: number) => {
    const reg = regAt(i, d);
    const pct = promoPct(i, d);
    if (pct === 0) return reg;
    return Math.max(9, Math.floor((reg * (1 - pct)) / 10) * 10 + 9);
  };

  /** Demand weight of product i on day d, assuming it is in stock (0 before creation / after delisting). */
  const weightAt = (i: number, d: number): number => {
    const cd = createdDay[i]!;
    if (d < cd || d >= delistDay[i]!) return 0;
    let w = baseW[i]! * Math.exp((growth[i]! * (d - midDay)) / 365);
    if (newProduct[i]) w *= 1 + 1.2 * Math.exp(-(d - cd) / 60);
    const dd = discDay[i]!;
    if (dd !== NEVER) {
      if (d >= dd)
        w *= 1.3; // clearance
      else if (dd - d < 180) w *= Math.max(0.25, (dd - d) / 180);
    }
    const pct = promoPct(i, d);
    if (pct > 0) w *= 1 + 2 * pct;
    return w;
  };

  // Products per seasonal profile, and per vendor (CSR, in pid order).
  const groupIdx: Int32Array[] = [];
  const groupCum: Float64Array[] = [];
  const groupTotal = new Float64Array(PROFILES);
  for (let g = 0; g < PROFILES; g++) {
    let n = 0;
    for (let i = 0; i < N; i++) if (profileOf[i] === g) n++;
    const idx = new Int32Array(n);
    n = 0;
    for (let i = 0; i < N; i++) if (profileOf[i] === g) idx[n++] = i;
    groupIdx.push(idx);
    groupCum.push(new Float64Array(n));
  }
  const vStart = new Int32Array(nVendors + 1);
  for (let i = 0; i < N; i++) vStart[vendorOf[i]! + 1]!++;
  for (let v = 0; v < nVendors; v++) vStart[v + 1]! += vStart[v]!;
  const vProducts = new Int32Array(N);
  {
    const fill = vStart.slice(0, nVendors);
    for (let i = 0; i < N; i++) vProducts[fill[vendorOf[i]!]!++] = i;
  }

  // Calibrate lines per unit weight so the expected number of order lines matches the target.
  // Per product: expected lines (in units of lineScale) and days on sale, for the PO calibration below.
  const expRaw = new Float64Array(N);
  const sellDays = new Float64Array(N);
  let lineScale: number;
  {
    let expected = 0;
    const sf = new Float64Array(PROFILES);
    for (let d0 = 0; d0 < nDays; d0 += 7) {
      const d1 = Math.min(nDays, d0 + 7);
      sf.fill(0);
      for (let d = d0; d < d1; d++) {
        const k = d + W;
        const f = WEEKDAY[dowOf[k]!]! * growthOf(d) * (bfDay[k] ? 1.6 : 1);
        for (let g = 0; g < PROFILES; g++) sf[g]! += season[g]![k]! * f;
      }
      const mid = Math.min(nDays - 1, d0 + 3);
      for (let i = 0; i < N; i++) {
        const estFirst = newProduct[i] ? Math.max(createdDay[i]!, -W) + 35 : -W;
        if (mid < estFirst) continue;
        if (sellThrough[i] && mid > discDay[i]! + 45) continue;
        const w = weightAt(i, mid);
        if (w <= 0) continue;
        const e = w * sf[profileOf[i]!]!;
        expRaw[i]! += e;
        sellDays[i]! += d1 - d0;
        expected += e;
      }
    }
    lineScale = expected > 0 ? targetLines / expected : 0;
  }

  // --- simulation state ---------------------------------------------------------------------------------
  const stock = new Int32Array(N);
  const onOrder = new Int32Array(N);
  const firstRecv = new Int32Array(N).fill(NEVER);
  const orderedOnce = new Uint8Array(N);
  const potW = new Float64Array(N);
  const nextReview = new Int32Array(nVendors);
  for (let v = 0; v < nVendors; v++) nextReview[v] = -W + rng.int(0, Math.min(6, vendors[v]!.cycle - 1));
  // Pending receipts per day: flat [poLineId, productIndex, qty, costCents, shortfall].
  const pending: (number[] | undefined)[] = new Array(span);
  // Days of demand a reorder covers: the lead-in gives every product one opening PO line, the rest of the
  // PO-line budget is spread over the history; a gentle controller keeps the pace on target.
  const baseCover = (() => {
    const linesFor = (cover: number) => {
      let total = 0;
      for (let i = 0; i < N; i++) {
        const from = Math.max(createdDay[i]!, -W);
        const to = Math.min(nDays, discDay[i]!, delistDay[i]!);
        if (from >= to) continue;
        total += 1; // the opening order
        const rate = sellDays[i]! > 0 ? (expRaw[i]! * lineScale * meanQty(i)) / sellDays[i]! : 0;
        if (onlyOnce[i] || rate <= 0) continue;
        const v = vendors[vendorOf[i]!]!;
        const c = caseOf[i]!;
        const qty = Math.ceil(Math.max(moqOf[i]!, rate * cover, 1) / c) * c;
        // demand starts when the opening order has arrived (and not before the first order date)
        const consumeFrom = Math.max(0, from + (v.quoted ?? 21) + v.cycle / 2);
        total += Math.max(0, (to - consumeFrom) / (qty / rate + v.cycle / 2) - 0.5);
      }
      // Empirically the simulation orders ~20% less often than this estimate (lost sales, cancelled and
      // returned lines, forecast noise); the controller in the day loop corrects the rest.
      return total * 0.78;
    };
    let lo = 3;
    let hi = 3000;
    for (let it = 0; it < 40; it++) {
      const mid = Math.sqrt(lo * hi);
      if (linesFor(mid) > targetPoLines) lo = mid;
      else hi = mid;
    }
    return hi;
  })();
  let coverDays = baseCover;
  let linesAtStart = -1;

  await mkdir(opts.out, { recursive: true });
  const writers = {} as Record<DemoFileName, CsvWriter>;
  for (const [name, header] of Object.entries(DEMO_FILES) as [DemoFileName, readonly string[]][])
    writers[name] = new CsvWriter(path.join(opts.out, name), header);
  const flushAll = async () => {
    for (const w of Object.values(writers)) await w.maybeFlush();
  };

  // Static tables.
  for (const b of brands) writers["brands.csv"].add(`${b.id},${csv(b.name)}\n`);
  for (const v of vendors)
    writers["vendors.csv"].add(`${v.id},${csv(v.name)},${v.email},${v.phone},${v.quoted ?? ""}\n`);
  for (const row of categoryRows) writers["categories.csv"].add(row);
  for (const [c, l] of TAX_CATEGORIES) writers["tax_categories.csv"].add(`${csv(c)},${csv(l)}\n`);
  for (const [c, l] of SIZES) writers["sizes.csv"].add(`${csv(c)},${csv(l)}\n`);
  for (const [c, l] of SHIPPING_RESTRICTIONS)
    writers["shipping_restrictions.csv"].add(`${csv(c)},${csv(l)}\n`);
  progress(
    `${N} products, ${nBrands} brands, ${nVendors} vendors, ${nextCat - 1} categories; ${isoDate(startEpoch)} .. ${isoDate(todayEpoch - 1)}`,
  );

  const W_ORDERS = writers["order_lines.csv"];
  const W_PO = writers["purchase_orders.csv"];
  const W_POL = writers["po_lines.csv"];
  const W_REC = writers["receivings.csv"];

  let lineId = 0;
  let orderNo = 100_000;
  let poId = 1000;
  let poLineId = 0;
  let recvId = 0;
  let attempted = 0;
  let accepted = 0;
  let corr = 1;

  const rebuild = (d: number) => {
    for (let i = 0; i < N; i++) {
      if (sellThrough[i] && d >= discDay[i]! && stock[i] === 0 && onOrder[i] === 0 && firstRecv[i]! <= d)
        delistDay[i] = Math.min(delistDay[i]!, d); // sold out after discontinuation: gone for good
      potW[i] = weightAt(i, d);
    }
    for (let g = 0; g < PROFILES; g++) {
      const idx = groupIdx[g]!;
      const cum = groupCum[g]!;
      let acc = 0;
      for (let j = 0; j < idx.length; j++) {
        const i = idx[j]!;
        if (firstRecv[i]! <= d) acc += potW[i]!;
        cum[j] = acc;
      }
      groupTotal[g] = acc;
    }
  };

  const pickProduct = (g: number): number => {
    const cum = groupCum[g]!;
    const x = rng.next() * groupTotal[g]!;
    let lo = 0;
    let hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid]! > x) hi = mid;
      else lo = mid + 1;
    }
    return groupIdx[g]![lo]!;
  };

  const sampleQty = (i: number): number => {
    const r = rng.next();
    if (slow[i]) {
      if (r < 0.45) return 1;
      if (r < 0.65) return 2;
      if (r < 0.75) return 3;
      if (r < 0.9) return rng.int(4, 6);
      const c = caseOf[i]!;
      return c >= 6 && c <= 24 ? c : rng.pick([6, 10, 12]);
    }
    if (r < 0.62) return 1;
    if (r < 0.84) return 2;
    if (r < 0.93) return 3;
    if (r < 0.96) return 4;
    if (r < 0.98) return rng.int(5, 6);
    return rng.int(10, 24);
  };

  const sampleLead = (v: Vendor): number => {
    const sigma = Math.sqrt(Math.log(1 + v.leadCv * v.leadCv));
    const mu = Math.log(v.leadMean) - (sigma * sigma) / 2;
    return Math.max(
      1,
      Math.min(Math.round(v.leadMean * 2.5), Math.round(Math.exp(mu + sigma * rng.gauss()))),
    );
  };

  const weekdayShift = (d: number) => {
    const dow = ((((epochOf(d) + 4) % 7) + 7) % 7) as number; // 1970-01-01 was a Thursday
    return dow === 6 ? d + 2 : dow === 0 ? d + 1 : d;
  };

  const schedule = (day: number, plId: number, i: number, qty: number, cost: number, shortfall: number) => {
    if (day >= nDays) return; // arrives today or later: not in the data
    const k = day + W;
    let bucket = pending[k];
    if (!bucket) {
      bucket = [];
      pending[k] = bucket;
    }
    bucket.push(plId, i, qty, cost, shortfall);
  };

  const reviewVendor = (v: number, d: number) => {
    const vend = vendors[v]!;
    const quoted = vend.quoted ?? 21;
    const k = d + W;
    const lines: number[] = [];
    for (let j = vStart[v]!; j < vStart[v + 1]!; j++) {
      const i = vProducts[j]!;
      if (createdDay[i]! > d || d >= discDay[i]! || d >= delistDay[i]!) continue;
      if (onlyOnce[i] && orderedOnce[i]) continue;
      const pw = potW[i]!;
      if (pw <= 0) continue;
      // The buyer's forecast: today's demand level, shaped by the season of the window it is for.
      const rate = pw * lineScale * corr * growthOf(d) * meanQty(i) * rng.range(0.8, 1.25);
      const g = profileOf[i]!;
      const ropDays = quoted + vend.cycle + vend.safety;
      const rop = Math.max(slow[i] ? 1 : 2, rate * ropDays * seasonAvg(g, k, 0, ropDays));
      const pos = stock[i]! + onOrder[i]!;
      if (pos >= rop) continue;
      const cover = rate * coverDays * seasonAvg(g, k, ropDays, coverDays);
      let qty = Math.max(moqOf[i]!, Math.ceil(rop + cover - pos));
      const c = caseOf[i]!;
      if (c > 1) qty = Math.ceil(qty / c) * c;
      lines.push(i, qty);
    }
    if (lines.length === 0) return;
    const id = ++poId;
    let status: string;
    const recent = d >= nDays - 4;
    if (recent && rng.chance(0.35)) status = "draft";
    else if (rng.chance(vend.cancelRate)) status = "cancelled";
    else status = "";
    const poLead = sampleLead(vend);
    let anyDone = false;
    let allDone = true;
    for (let x = 0; x < lines.length; x += 2) {
      const i = lines[x]!;
      const qty = lines[x + 1]!;
      const plId = ++poLineId;
      const cost = costAt(i, d);
      W_POL.add(`${plId},${id},${pidArr[i]!},${qty},${money(cost)}\n`);
      if (status) continue;
      orderedOnce[i] = 1;
      onOrder[i]! += qty;
      let total = qty;
      let shortfall = 0;
      if (rng.chance(vend.shortRate)) {
        total = Math.max(1, Math.round(qty * rng.range(0.5, 0.95)));
        shortfall = qty - total;
      }
      let day = weekdayShift(d + poLead + (rng.chance(0.05) ? rng.int(3, 15) : 0));
      const parts = total >= 2 && rng.chance(vend.partialRate) ? (total >= 3 && rng.chance(0.3) ? 3 : 2) : 1;
      let left = total;
      for (let p = 0; p < parts; p++) {
        const last = p === parts - 1;
        const q = last
          ? left
          : Math.max(1, Math.min(left - (parts - 1 - p), Math.round(left * rng.range(0.4, 0.8))));
        left -= q;
        schedule(day, plId, i, q, cost, last ? shortfall : 0);
        if (day < nDays) anyDone = true;
        else allDone = false;
        day = weekdayShift(day + rng.int(5, 25));
      }
    }
    if (!status) status = allDone ? "received" : anyDone ? "partial" : "ordered";
    const expected = vend.quoted === null ? "" : isoDate(epochOf(d + vend.quoted));
    W_PO.add(`${id},${vend.id},${status},${dayStr(d)},${expected}\n`);
  };

  // Order-line scratch space (one order at a time).
  const oPid = new Int32Array(6);
  const oQty = new Int32Array(6);
  const oStatus: string[] = new Array(6).fill("");
  const oPrice = new Int32Array(6);
  const oDisc = new Int32Array(6);
  const groupMean = new Float64Array(PROFILES);
  const times: number[] = [];
  let lastMonth = "";

  for (let d = -W; d < nDays; d++) {
    const k = d + W;
    if ((d + W) % 7 === 0) rebuild(d);

    // 1. receivings
    const bucket = pending[k];
    if (bucket) {
      const ds = dayStr(d);
      for (let x = 0; x < bucket.length; x += 5) {
        const plId = bucket[x]!;
        const i = bucket[x + 1]!;
        const q = bucket[x + 2]!;
        W_REC.add(`${++recvId},${plId},${ds},${q},${money(bucket[x + 3]!)}\n`);
        stock[i]! += q;
        onOrder[i]! -= q + bucket[x + 4]!;
        if (firstRecv[i]! === NEVER) firstRecv[i] = d; // sellable from the next weekly rebuild
      }
      pending[k] = undefined;
    }

    // 2. orders
    if (d >= 0) {
      const month = dayStr(d).slice(0, 7);
      if (month !== lastMonth) {
        lastMonth = month;
        progress(`simulating ${month}: ${lineId} order lines, ${poLineId} PO lines so far`);
      }
      const dayFactor = lineScale * corr * growthOf(d) * WEEKDAY[dowOf[k]!]! * (bfDay[k] ? 1.6 : 1);
      let total = 0;
      for (let g = 0; g < PROFILES; g++) {
        groupMean[g] = season[g]![k]! * groupTotal[g]! * dayFactor;
        total += groupMean[g]!;
      }
      const nLines = rng.poisson(total);
      if (nLines > 0 && total > 0) {
        times.length = 0;
        let planned = 0;
        const sizes: number[] = [];
        while (planned < nLines) {
          const r = rng.next();
          let s = 1;
          while (s < 6 && r >= ORDER_SIZE_CUM[s - 1]!) s++;
          s = Math.min(s, nLines - planned);
          sizes.push(s);
          planned += s;
          const hr = rng.next();
          let h = 0;
          while (h < 23 && hr >= HOUR_CUM[h]!) h++;
          times.push(h * 3600 + rng.int(0, 3599));
        }
        times.sort((a, b) => a - b);
        const ds = dayStr(d);
        for (let o = 0; o < sizes.length; o++) {
          const size = sizes[o]!;
          const cancelledOrder = rng.chance(0.025);
          const coupon = rng.chance(0.07) ? rng.pick([0.1, 0.15, 0.2]) : 0;
          let n = 0;
          for (let s = 0; s < size; s++) {
            let x = rng.next() * total;
            let g = 0;
            while (g < PROFILES - 1 && x >= groupMean[g]!) {
              x -= groupMean[g]!;
              g++;
            }
            if (groupTotal[g]! <= 0) continue;
            let i = pickProduct(g);
            for (let t = 0; t < 3; t++) {
              let dup = false;
              for (let y = 0; y < n; y++) if (oPid[y] === i) dup = true;
              if (!dup) break;
              i = pickProduct(g);
            }
            let dup = false;
            for (let y = 0; y < n; y++) if (oPid[y] === i) dup = true;
            if (dup) continue;
            attempted++;
            const q = sampleQty(i);
            const r = rng.next();
            const status = cancelledOrder || r < 0.005 ? "cancelled" : r < 0.02 ? "returned" : "completed";
            if (status !== "cancelled" && stock[i]! < q) continue; // out of stock: lost sale
            if (status === "completed") stock[i]! -= q;
            accepted++;
            const unit = priceAt(i, d);
            let disc = 0;
            if (coupon > 0) disc = Math.round(unit * q * coupon);
            else if (q >= 10 && rng.chance(0.5)) disc = Math.round(unit * q * 0.1);
            oPid[n] = i;
            oQty[n] = q;
            oStatus[n] = status;
            oPrice[n] = unit;
            oDisc[n] = disc;
            n++;
          }
          if (n === 0) continue;
          const on = `SO${++orderNo}`;
          const ts = `${ds}T${timeOfDay(times[o]!)}Z`;
          for (let y = 0; y < n; y++) {
            W_ORDERS.add(
              `${++lineId},${on},${pidArr[oPid[y]!]!},${ts},${oQty[y]!},${money(oPrice[y]!)},${money(oDisc[y]!)},${oStatus[y]!}\n`,
            );
          }
        }
      }
      if (attempted > 1000) corr = Math.min(1.6, Math.max(1, attempted / Math.max(1, accepted)));
    }

    // 3. purchasing (end of day)
    if (d === 0) linesAtStart = poLineId;
    if (d >= nDays / 4) {
      const expectedSoFar = linesAtStart + (targetPoLines - linesAtStart) * ((d + 1) / nDays);
      const ratio = poLineId / Math.max(1, expectedSoFar);
      if (ratio > 1.03) coverDays = Math.min(baseCover * 1.5, coverDays * 1.003);
      else if (ratio < 0.97) coverDays = Math.max(baseCover * 0.7, coverDays * 0.997);
    }
    for (let v = 0; v < nVendors; v++) {
      if (nextReview[v] !== d) continue;
      reviewVendor(v, d);
      nextReview[v] = d + Math.max(3, vendors[v]!.cycle + rng.int(-2, 2));
    }

    await flushAll();
  }
  progress(
    `cover ${baseCover.toFixed(0)}→${coverDays.toFixed(0)} days; simulated: ${lineId} order lines, ${poLineId} PO lines, ${recvId} receivings`,
  );

  // --- products (static attributes + simulated stock / first receipt) --------------------------------
  const WP = writers["products.csv"];
  const WPC = writers["product_categories.csv"];
  for (let i = 0; i < N; i++) {
    const p = describeProduct(i);
    const fr = firstRecv[i]!;
    const isNew = p.createdDay > -W - 60;
    const firstReceived = isNew
      ? fr === NEVER
        ? ""
        : dayStr(fr)
      : isoDate(epochOf(Math.min(p.oldFirstReceived, -W)));
    const discontinued = p.discDay !== NEVER;
    const delisted = discontinued && delistDay[i]! <= nDays;
    const visible = !(delisted && p.hiddenIfDelisted) && !(isNew && fr === NEVER && p.hiddenIfNew);
    const price = priceAt(i, nDays);
    const reg = regAt(i, nDays);
    const cols = [
      p.pid,
      csv(p.title),
      csv(p.sku),
      p.barcode,
      brands[p.brand]!.id,
      vendors[p.vendor]!.id,
      csv(p.line),
      csv(p.description),
      money(price),
      money(reg),
      p.costMissing ? "" : money(p.costCents),
      stock[i]!,
      p.moq,
      p.caseQty,
      p.hts,
      p.weight === null ? "" : dec2(p.weight),
      p.dims ? dec2(p.dims[0]) : "",
      p.dims ? dec2(p.dims[1]) : "",
      p.dims ? dec2(p.dims[2]) : "",
      p.tax,
      p.size,
      p.ship,
      visible ? "true" : "false",
      discontinued || onlyOnce[i] ? "false" : "true",
      discontinued ? "true" : "false",
      `${isoDate(epochOf(p.createdDay))}T${timeOfDay(p.createdSec)}Z`,
      firstReceived,
      p.imageUrl,
    ];
    WP.add(`${cols.join(",")}\n`);
    for (const c of p.categories) WPC.add(`${p.pid},${c}\n`);
    if ((i & 4095) === 4095) await flushAll();
  }

  const files: Record<string, number> = {};
  for (const [name, w] of Object.entries(writers) as [DemoFileName, CsvWriter][]) {
    await w.close();
    files[name] = w.rows;
  }
  return { files, ms: Math.round(performance.now() - t0) };
}
