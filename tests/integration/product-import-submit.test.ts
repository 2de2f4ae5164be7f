// Create Products, from checked rows to the shop system: images (files, a ZIP matched by SKU and
// barcode, hostile ZIPs), the library, the dry run, the submit (one transaction, pids from
// 2,000,000,000), the export ZIP read back by the pipeline's own Full Reset, the created products
// surviving it and being marked "now in the shop system", EXPORT_DIR, and the error report.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse } from "csv-parse/sync";
import { unzipSync, zipSync } from "fflate";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DryRunSummary, ImportRow, ProductImport } from "../../shared/product-import.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { testBackend } from "../helpers/db.ts";
import { copyFixture } from "../helpers/pipeline.ts";

const CSV = [
  "SKU,Title,UPC,Price,Cost,Category,Notes",
  'NEW-1,Glitter Paper,036000291452,2.50,1.00,Cardstock,"Sparkly, 12x12"',
  "NEW-2,Foil Paper,4006381333931,3.00,1.20,Paper,",
  "NEW-3,Bad Barcode,036000291453,3.00,1.20,Paper,",
  'NEW-4,=HYPERLINK("http://x"),,+1,,Paper,',
].join("\n");

describe(`product import: images, submit and export (${testBackend})`, () => {
  let t: TestApp;
  let h: Record<string, string>;
  let sourceDir: string;
  let exportDir: string;
  let imageDir: string;
  let imp: ProductImport;
  let png: Buffer;
  let jpeg: Buffer;

  beforeAll(async () => {
    sourceDir = copyFixture();
    exportDir = fs.mkdtempSync(path.join(os.tmpdir(), "bo-export-"));
    imageDir = fs.mkdtempSync(path.join(os.tmpdir(), "bo-images-"));
    t = await startTestApp({
      env: { SOURCE_DIR: sourceDir, EXPORT_DIR: exportDir, IMAGE_DIR: imageDir, IMAGE_MAX_BYTES: "300000" },
    });
    await t.app.services.dataOps.start("reset", null);
    await t.app.services.dataOps.idle();
    await t.createUser("creator", ["access:import", "create:products"]);
    h = { authorization: `Bearer ${(await t.login("creator")).token}` };
    const base = sharp({ create: { width: 300, height: 200, channels: 3, background: "#cc3366" } });
    png = await base.clone().png().toBuffer();
    jpeg = await base.clone().jpeg().toBuffer();
    const fd = new FormData();
    fd.append("company", "1");
    fd.append("file", new Blob([CSV]), "list.csv");
    const res = await fetch(`${t.url}/api/product-imports`, { method: "POST", headers: h, body: fd });
    expect(res.status).toBe(201);
    imp = await res.json();
  });
  afterAll(async () => {
    await t.close();
    for (const d of [sourceDir, exportDir, imageDir]) fs.rmSync(d, { recursive: true, force: true });
  });

  async function json<T>(res: Response, status = 200): Promise<T> {
    const body = await res.text();
    expect(res.status, body).toBe(status);
    return JSON.parse(body) as T;
  }
  const rows = async () =>
    (
      await json<{ items: ImportRow[] }>(
        await fetch(`${t.url}/api/product-imports/${imp.id}/rows`, { headers: h }),
      )
    ).items;

  async function postImages(files: { name: string; data: Buffer }[], fields: Record<string, string> = {}) {
    const fd = new FormData();
    for (const [k, v] of Object.entries(fields)) fd.append(k, v);
    for (const f of files) fd.append("file", new Blob([new Uint8Array(f.data)]), f.name);
    return fetch(`${t.url}/api/product-imports/${imp.id}/images`, { method: "POST", headers: h, body: fd });
  }

  it("a ZIP's images are matched to rows by SKU or barcode; the unmatched and the refused are reported", async () => {
    const zip = Buffer.from(
      zipSync({
        "pics/NEW-1.png": new Uint8Array(png),
        "pics/4006381333931.jpg": new Uint8Array(jpeg),
        "pics/NEW-1_2.jpg": new Uint8Array(jpeg),
        "pics/UNKNOWN.png": new Uint8Array(png),
        "../../etc/evil.png": new Uint8Array(png),
        "pics/notes.txt": new Uint8Array(Buffer.from("hello")),
        "pics/NEW-2.png": new Uint8Array(Buffer.from("not an image at all")),
        // 50 MB of zeros squeezed into a few kB: declared larger than the image limit, never unpacked.
        "pics/bomb.png": [new Uint8Array(50 * 1024 * 1024), { level: 9 }],
      }),
    );
    expect(zip.length).toBeLessThan(200_000);
    const result = await json<{
      matched: { filename: string; row_id: number }[];
      unmatched: string[];
      refused: { filename: string; reason: string }[];
    }>(await postImages([{ name: "images.zip", data: zip }]));
    expect(result.matched.map((m) => [m.filename, m.row_id]).sort()).toEqual(
      [
        ["pics/4006381333931.jpg", 2],
        ["pics/NEW-1.png", 1],
        ["pics/NEW-1_2.jpg", 1],
      ].sort(),
    );
    expect(result.unmatched).toEqual(["pics/UNKNOWN.png"]);
    const refused = Object.fromEntries(result.refused.map((r) => [r.filename, r.reason]));
    expect(refused["../../etc/evil.png"]).toContain("Unsafe file name");
    expect(refused["pics/bomb.png"]).toContain("Larger than the");
    expect(refused["pics/notes.txt"]).toContain("Not an image file");
    expect(refused["pics/NEW-2.png"]).toContain("Unsupported image type");
    const [one, two] = await rows();
    expect(one!.images.map((i) => i.filename)).toEqual(["NEW-1.png", "NEW-1_2.jpg"]);
    expect(two!.images).toHaveLength(1);
    const thumb = await fetch(`${t.url}${one!.images[0]!.thumbnail_url}`, { headers: h });
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get("content-type")).toBe("image/webp");

    const notZip = await postImages([{ name: "x.zip", data: Buffer.from("PK\u0003\u0004garbage") }]);
    expect(notZip.status).toBe(400);
    expect((await notZip.json()).message).toContain("ZIP file is damaged");
  });

  it("an image from the library is attached through the row's images", async () => {
    const admin = { authorization: `Bearer ${(await t.login("admin")).token}` };
    const fd = new FormData();
    fd.append("name", "Brand banner");
    fd.append("is_global", "true");
    fd.append("image", new Blob([new Uint8Array(png)], { type: "image/png" }), "banner.png");
    const lib = await json<{ id: number }>(
      await fetch(`${t.url}/api/reusable-images/upload`, { method: "POST", headers: admin, body: fd }),
      201,
    );
    const res = await json<{ row: ImportRow }>(
      await fetch(`${t.url}/api/product-imports/${imp.id}/rows/2`, {
        method: "PATCH",
        headers: { ...h, "content-type": "application/json" },
        body: JSON.stringify({
          images: [
            { source: "library", id: lib.id },
            ...(await rows())[1]!.images.map((i) => ({ source: i.source, id: i.id })),
          ],
        }),
      }),
    );
    expect(res.row.images.map((i) => i.source)).toEqual(["library", "upload"]);
    expect(res.row.images[0]!.url).toMatch(/^\/api\/reusable-images\/files\/[0-9a-f]{64}\.png$/);
    const missing = await fetch(`${t.url}/api/product-imports/${imp.id}/rows/2`, {
      method: "PATCH",
      headers: { ...h, "content-type": "application/json" },
      body: JSON.stringify({ images: [{ source: "library", id: 99999 }] }),
    });
    expect(missing.status).toBe(400);
  });

  it("the error report is the file with row_id and errors, formulas made harmless", async () => {
    const res = await fetch(`${t.url}/api/product-imports/${imp.id}/errors.csv`, { headers: h });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-disposition")).toContain("attachment");
    const text = (await res.text()).replace(/^\uFEFF/, "");
    const records = parse(text, { columns: true }) as Record<string, string>[];
    expect(Object.keys(records[0]!)).toEqual([
      "SKU",
      "Title",
      "UPC",
      "Price",
      "Cost",
      "Category",
      "Notes",
      "row_id",
      "errors",
    ]);
    expect(records.map((r) => r.row_id)).toEqual(["1", "2", "3", "4"]);
    expect(records[0]!.errors).toBe("");
    expect(records[2]!.errors).toContain('Barcode: Barcode "036000291453" has a wrong check digit');
    expect(records[3]!.Title).toBe('\'=HYPERLINK("http://x")');
    expect(records[3]!.Price).toBe("'+1");
  });

  it("the dry run says what would be created and writes nothing to the catalogue", async () => {
    const summary = await json<DryRunSummary>(
      await fetch(`${t.url}/api/product-imports/${imp.id}/dry-run`, { method: "POST", headers: h }),
    );
    expect(summary).toMatchObject({ would_create: 2, blocked: 2, with_images: 2 });
    const reasons = summary.blocked_by.map((b) => `${b.field}: ${b.message}`);
    expect(reasons).toContain('Barcode: Barcode "…" has a wrong check digit: it is not a valid UPC');
    expect(reasons).toContain('Price: Price "…" is not a number');
    expect(await t.tdb.db.prisma.createdProduct.count()).toBe(0);
  });

  it("a submit creates the valid rows as products with pids from 2,000,000,000, in one go, and writes EXPORT_DIR", async () => {
    const { import: done, summary } = await json<{ import: ProductImport; summary: DryRunSummary }>(
      await fetch(`${t.url}/api/product-imports/${imp.id}/submit`, { method: "POST", headers: h }),
    );
    expect(done.status).toBe("exported");
    expect(done.counts.created).toBe(2);
    expect(summary).toMatchObject({ would_create: 2, first_pid: 2_000_000_000, last_pid: 2_000_000_001 });
    const created = await t.tdb.db.prisma.createdProduct.findMany({ orderBy: { pid: "asc" } });
    expect(created.map((c) => [c.pid, c.sku, c.stockQuantity, c.kind, c.brandId])).toEqual([
      [2_000_000_000, "NEW-1", 0, "merchandise", 1],
      [2_000_000_001, "NEW-2", 0, "merchandise", 1],
    ]);
    expect(created[0]!.categories).toEqual([101]);
    // Each created row shows its pid in the grid.
    const createdRows = (await rows()).filter((r) => r.created_pid !== null);
    expect(createdRows.map((r) => [r.values.sku, r.created_pid])).toEqual([
      ["NEW-1", 2_000_000_000],
      ["NEW-2", 2_000_000_001],
    ]);
    // The page's progress bar reads how far the submit got: it ended with both products.
    const progress = await t.app.inject({
      url: `/trpc/productImport.progress?input=${encodeURIComponent(JSON.stringify({ json: { id: imp.id } }))}`,
      headers: h,
    });
    expect(progress.statusCode).toBe(200);
    expect(progress.json().result.data.json).toMatchObject({
      step: "submit",
      phase: "done",
      done: 2,
      total: 2,
    });
    expect(fs.readdirSync(path.join(exportDir, `import-${imp.id}`)).sort()).toEqual([
      "images",
      "product_categories.csv",
      "products.csv",
    ]);
    // Submitted: no second submit, no more edits.
    const again = await fetch(`${t.url}/api/product-imports/${imp.id}/submit`, {
      method: "POST",
      headers: h,
    });
    expect(again.status).toBe(409);
    const edit = await fetch(`${t.url}/api/product-imports/${imp.id}/rows/3`, {
      method: "PATCH",
      headers: { ...h, "content-type": "application/json" },
      body: JSON.stringify({ values: { barcode: "" } }),
    });
    expect(edit.status).toBe(409);
  });

  it("the rows a submit left go on in a new draft import, with their edits, and are submitted once fixed", async () => {
    const cont = await fetch(`${t.url}/api/product-imports/${imp.id}/continue`, {
      method: "POST",
      headers: h,
    });
    const next = await json<ProductImport>(cont, 201);
    expect(next.status).toBe("checked");
    expect(next.id).not.toBe(imp.id);
    expect(next.filename).toContain(`(rows left from import ${imp.id})`);
    expect(next.counts.rows).toBe(2);
    const left = await json<{ items: ImportRow[] }>(
      await fetch(`${t.url}/api/product-imports/${next.id}/rows`, { headers: h }),
    );
    expect(left.items.map((r) => r.row_id)).toEqual([3, 4]);
    expect(left.items.every((r) => r.findings.some((f) => f.severity === "error"))).toBe(true);
    // Once only.
    const twice = await fetch(`${t.url}/api/product-imports/${imp.id}/continue`, {
      method: "POST",
      headers: h,
    });
    expect(twice.status).toBe(409);
    expect(await twice.text()).toContain(`already in import ${next.id}`);
    // Fixed (row 3's barcode cleared) and the other deleted: the fixed one is created.
    const fix = await fetch(`${t.url}/api/product-imports/${next.id}/rows/3`, {
      method: "PATCH",
      headers: { ...h, "content-type": "application/json" },
      body: JSON.stringify({ values: { barcode: "" } }),
    });
    expect(fix.status, await fix.clone().text()).toBe(200);
    const del = await fetch(`${t.url}/api/product-imports/${next.id}/rows/bulk`, {
      method: "POST",
      headers: { ...h, "content-type": "application/json" },
      body: JSON.stringify({ action: "delete_rows", row_ids: [4] }),
    });
    expect(del.status, await del.clone().text()).toBe(200);
    const { import: done } = await json<{ import: ProductImport; summary: DryRunSummary }>(
      await fetch(`${t.url}/api/product-imports/${next.id}/submit`, { method: "POST", headers: h }),
    );
    expect(done.counts.created).toBe(1);
    // Nothing is left of the first import now; an import not submitted has nothing to continue.
    const draftOnly = await fetch(`${t.url}/api/product-imports/${next.id}/continue`, {
      method: "POST",
      headers: h,
    });
    expect(draftOnly.status).toBe(409);
    await t.tdb.db.prisma.createdProduct.deleteMany({ where: { importId: next.id } });
  });

  it("a submit with nothing valid is refused and writes nothing", async () => {
    const fd = new FormData();
    fd.append("file", new Blob(["SKU,Title,Price\nNEW-1,Again,1.00\n"]), "again.csv");
    fd.append("company", "1");
    const second = await json<ProductImport>(
      await fetch(`${t.url}/api/product-imports`, { method: "POST", headers: h, body: fd }),
      201,
    );
    const rowsOf = await json<{ items: ImportRow[] }>(
      await fetch(`${t.url}/api/product-imports/${second.id}/rows`, { headers: h }),
    );
    expect(rowsOf.items[0]!.findings.map((f) => f.message)).toEqual([
      `SKU "NEW-1" was already created by import #${imp.id} (pid 2000000000)`,
    ]);
    const res = await fetch(`${t.url}/api/product-imports/${second.id}/submit`, {
      method: "POST",
      headers: h,
    });
    expect(res.status).toBe(409);
    expect((await res.json()).message).toContain("Nothing to submit");
    expect(await t.tdb.db.prisma.createdProduct.count()).toBe(2);
    expect((await t.tdb.db.prisma.productImport.findUniqueOrThrow({ where: { id: second.id } })).status).toBe(
      "draft",
    );
  });

  it("the export ZIP is read by the pipeline's own Full Reset; created products survive it and are marked as in the shop system", async () => {
    const res = await fetch(`${t.url}/api/product-imports/${imp.id}/export.zip`, { headers: h });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/zip");
    const files = unzipSync(new Uint8Array(await res.arrayBuffer()));
    expect(Object.keys(files).sort()).toEqual([
      "images/2000000000-1.png",
      "images/2000000000-2.jpg",
      "images/2000000001-1.png",
      "images/2000000001-2.jpg",
      "product_categories.csv",
      "products.csv",
    ]);
    const productsCsv = Buffer.from(files["products.csv"]!).toString("utf8");
    const products = parse(productsCsv, { columns: true }) as Record<string, string>[];
    expect(products[0]).toMatchObject({
      pid: "2000000000",
      title: "Glitter Paper",
      sku: "NEW-1",
      barcode: "036000291452",
      brand_id: "1",
      price: "2.50",
      cost_price: "1.00",
      stock_quantity: "0",
      image_url: "images/2000000000-1.png",
    });
    expect(Buffer.from(files["product_categories.csv"]!).toString("utf8")).toBe(
      "pid,category_id\n2000000000,101\n2000000001,100\n",
    );
    expect(fs.readFileSync(path.join(exportDir, `import-${imp.id}`, "products.csv"), "utf8")).toBe(
      productsCsv,
    );

    // The shop system loads the export: its next source export carries the new products.
    const merge = (file: string, extra: string) => {
      const target = path.join(sourceDir, file);
      const [header, ...lines] = extra.trim().split("\n");
      const existingHeader = fs.readFileSync(target, "utf8").split("\n")[0]!.trim();
      expect(header!.trim()).toBe(existingHeader);
      fs.appendFileSync(target, `${lines.join("\n")}\n`);
    };
    merge("products.csv", productsCsv);
    merge("product_categories.csv", Buffer.from(files["product_categories.csv"]!).toString("utf8"));
    await t.app.services.dataOps.start("reset", null);
    await t.app.services.dataOps.idle();
    const history = await t.tdb.db.prisma.importHistory.findFirstOrThrow({ orderBy: { id: "desc" } });
    expect(history.status, history.errorMessage ?? "").toBe("completed");
    expect(await t.tdb.db.prisma.product.count({ where: { pid: { gte: 2_000_000_000 } } })).toBe(2);
    // Still there, now matched.
    const created = await json<{ pid: number; shop_pid: number | null }[]>(
      await fetch(`${t.url}/api/product-imports/${imp.id}/created`, { headers: h }),
    );
    expect(created.map((c) => [c.pid, c.shop_pid])).toEqual([
      [2_000_000_000, 2_000_000_000],
      [2_000_000_001, 2_000_000_001],
    ]);
  });
});
