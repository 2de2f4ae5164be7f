// Create Products, from upload to checked rows, over real multipart: file detection (delimiter,
// encoding, XLSX sheets), refusals, column mapping (synonyms, saved mappings), template fill, every
// rule, cell edits that re-check, bulk edits, and who sees which import.
import ExcelJS from "exceljs";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ImportRow, ProductImport } from "../../shared/product-import.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { testBackend } from "../helpers/db.ts";
import { FIXTURE_DIR } from "../helpers/pipeline.ts";

/** A supplier's price list: semicolons, Windows-1252 (the é and the €), and typical problems. */
const SUPPLIER_CSV = [
  "Item #;Product Name;UPC;Retail;Wholesale;MSRP;Weight;Category;Description",
  "PP-100;Papier Crème 12x12;036000291452;1.50;0.60;2.00;0.5;Cardstock;Heavy stock",
  "PP-101;Vellum Sheet;036000291453;2.00;0.80;3.00;0.4;Paper;", // bad check digit
  "PP-100;Duplicate Sku;;1.00;0.50;;;Paper;", // duplicate SKU in the file
  "PP-103;No Price;;;0.50;;;Paper;", // missing price
  "CS-1;Already In Catalogue;;1.00;;;;Paper;", // SKU already in the catalogue
  "PP-105;Below Cost;;0.40;0.60;0.30;-2;Nonsense;<p>Nice <b>paper</b></p>", // warnings, bad weight, unknown category
  "PP-106;Script;;1.234;;;;Paper;<script>alert(1)</script>", // 3 decimals, script refused
].join("\r\n");

function win1252(text: string): Buffer {
  const map: Record<string, number> = { é: 0xe9, "€": 0x80, è: 0xe8 };
  return Buffer.from([...text].map((c) => map[c] ?? c.charCodeAt(0)));
}

describe(`product import: upload and checks (${testBackend})`, () => {
  let t: TestApp;
  let h: Record<string, string>;
  let viewer: Record<string, string>;
  let other: Record<string, string>;
  let manager: Record<string, string>;

  beforeAll(async () => {
    t = await startTestApp({ env: { SOURCE_DIR: FIXTURE_DIR } });
    await t.app.services.dataOps.start("reset", null);
    await t.app.services.dataOps.idle();
    await t.createUser("creator", ["access:import", "create:products"]);
    await t.createUser("viewer", ["access:import"]);
    await t.createUser("other", ["access:import", "create:products"]);
    await t.createUser("manager", ["access:import", "settings:templates"]);
    h = { authorization: `Bearer ${(await t.login("creator")).token}` };
    viewer = { authorization: `Bearer ${(await t.login("viewer")).token}` };
    other = { authorization: `Bearer ${(await t.login("other")).token}` };
    manager = { authorization: `Bearer ${(await t.login("manager")).token}` };
  });
  afterAll(() => t.close());

  async function upload(
    data: Buffer | string,
    name: string,
    fields: Record<string, string> = {},
    headers = h,
  ): Promise<Response> {
    const fd = new FormData();
    for (const [k, v] of Object.entries(fields)) fd.append(k, v);
    fd.append("file", new Blob([new Uint8Array(Buffer.from(data))]), name);
    return fetch(`${t.url}/api/product-imports`, { method: "POST", headers, body: fd });
  }

  async function json<T>(res: Response, status = 200): Promise<T> {
    const body = await res.text();
    expect(res.status, body).toBe(status);
    return JSON.parse(body) as T;
  }

  async function rows(id: number, query = "pageSize=100"): Promise<{ items: ImportRow[]; total: number }> {
    return json(await fetch(`${t.url}/api/product-imports/${id}/rows?${query}`, { headers: h }));
  }

  const messages = (r: ImportRow, field?: string) =>
    r.findings.filter((f) => !field || f.field === field).map((f) => `${f.severity}: ${f.message}`);

  let imp: ProductImport;

  it("detects delimiter and encoding, maps columns by name and synonym, and checks every row", async () => {
    imp = await json<ProductImport>(
      await upload(win1252(SUPPLIER_CSV), "price-list.csv", { company: "1" }),
      201,
    );
    expect(imp).toMatchObject({
      status: "draft",
      file_type: "csv",
      encoding: "windows-1252",
      delimiter: ";",
      company: "1",
      columns: [
        "Item #",
        "Product Name",
        "UPC",
        "Retail",
        "Wholesale",
        "MSRP",
        "Weight",
        "Category",
        "Description",
      ],
      counts: { rows: 7 },
    });
    // The file is kept as it came, byte for byte (Windows-1252 here).
    const kept = await fetch(`${t.url}/api/product-imports/${imp.id}/file`, { headers: h });
    expect(kept.status).toBe(200);
    expect(Buffer.from(await kept.arrayBuffer()).equals(win1252(SUPPLIER_CSV))).toBe(true);
    expect(imp.mapping).toEqual({
      "Item #": "sku",
      "Product Name": "title",
      UPC: "barcode",
      Retail: "price",
      Wholesale: "cost_each",
      MSRP: "msrp",
      Weight: "weight",
      Category: "categories",
      Description: "description",
    });
    expect(imp.mapping_source).toMatchObject({ UPC: "synonym", MSRP: "exact", Wholesale: "synonym" });

    const { items, total } = await rows(imp.id);
    expect(total).toBe(7);
    const [ok, badBarcode, dup, noPrice, inCatalogue, belowCost, script] = items as [
      ImportRow,
      ImportRow,
      ImportRow,
      ImportRow,
      ImportRow,
      ImportRow,
      ImportRow,
    ];
    // The file was Windows-1252: the accent survives.
    expect(ok.values.title).toBe("Papier Crème 12x12");
    expect(ok.values.company).toBe("1");
    expect(ok.from_template).toEqual(["company"]);
    // "Cardstock" (a category given by name) and the first SKU's duplicate
    expect(messages(ok)).toEqual(['error: SKU "PP-100" is also on row 3 of this file']);
    expect(messages(badBarcode, "barcode")).toEqual([
      'error: Barcode "036000291453" has a wrong check digit: it is not a valid UPC',
    ]);
    expect(messages(dup, "sku")).toEqual(['error: SKU "PP-100" is also on row 1 of this file']);
    expect(messages(noPrice)).toEqual(["error: Price is required"]);
    expect(messages(inCatalogue)).toEqual(['error: SKU "CS-1" already exists in the catalogue (pid 1001)']);
    expect(messages(belowCost)).toEqual([
      "warning: HTML tags in the description will be stripped (plain text is kept)",
      "warning: Price 0.40 is below the cost 0.60",
      "warning: MSRP 0.30 is below the price 0.40",
      "error: Weight (oz) must be more than 0",
      'error: Unknown category: "Nonsense"',
    ]);
    expect(messages(script).sort()).toEqual([
      "error: Description contains a script, an embedded object or an event handler: it is refused, remove it",
      "error: Price has more than 2 decimals",
    ]);
    expect(script.findings.find((f) => f.field === "price")).toMatchObject({
      value: "1.234",
      source: "rules",
    });

    const only = await rows(imp.id, "errors_only=true");
    expect(only.total).toBe(7);
  });

  it("a cell edit re-checks its row and the rows that shared its SKU", async () => {
    const res = await fetch(`${t.url}/api/product-imports/${imp.id}/rows/3`, {
      method: "PATCH",
      headers: { ...h, "content-type": "application/json" },
      body: JSON.stringify({ values: { sku: "PP-102" } }),
    });
    const body = await json<{ row: ImportRow; affected: ImportRow[]; counts: { error_rows: number } }>(res);
    expect(body.row.values.sku).toBe("PP-102");
    expect(body.row.edited).toEqual(["sku"]);
    expect(messages(body.row)).toEqual([]);
    // Row 1 no longer has a duplicate either.
    expect(messages(body.affected.find((r) => r.row_id === 1)!)).toEqual([]);
    expect(body.counts.error_rows).toBe(5);

    const fix = await json<{ row: ImportRow }>(
      await fetch(`${t.url}/api/product-imports/${imp.id}/rows/2`, {
        method: "PATCH",
        headers: { ...h, "content-type": "application/json" },
        body: JSON.stringify({ values: { barcode: "036000291452" } }),
      }),
    );
    // Now the same barcode as row 1.
    expect(messages(fix.row)).toEqual(["error: Barcode 036000291452 is also on row 1 of this file"]);
    const fixed = await json<{ row: ImportRow }>(
      await fetch(`${t.url}/api/product-imports/${imp.id}/rows/2`, {
        method: "PATCH",
        headers: { ...h, "content-type": "application/json" },
        body: JSON.stringify({ values: { barcode: "0 36000 29145 2" } }),
      }),
    );
    expect(messages(fixed.row)).toEqual(["error: Barcode 036000291452 is also on row 1 of this file"]);
    const valid = await json<{ row: ImportRow }>(
      await fetch(`${t.url}/api/product-imports/${imp.id}/rows/2`, {
        method: "PATCH",
        headers: { ...h, "content-type": "application/json" },
        body: JSON.stringify({ values: { barcode: "4006381333931" } }),
      }),
    );
    expect(messages(valid.row)).toEqual([]);
  });

  it("fill down, find and replace, and delete rows re-check what they change", async () => {
    const bulk = (edit: object) =>
      fetch(`${t.url}/api/product-imports/${imp.id}/rows/bulk`, {
        method: "POST",
        headers: { ...h, "content-type": "application/json" },
        body: JSON.stringify(edit),
      });
    const replaced = await json<{ changed: number }>(
      await bulk({ action: "replace", field: "categories", find: "nonsense", replace: "Paper" }),
    );
    expect(replaced.changed).toBe(1);
    const six = (await rows(imp.id)).items.find((r) => r.row_id === 6)!;
    expect(messages(six).some((m) => m.includes("category"))).toBe(false);

    const filled = await json<{ changed: number }>(
      await bulk({ action: "fill_down", field: "price", row_id: 3 }),
    );
    expect(filled.changed).toBe(4);
    const four = (await rows(imp.id)).items.find((r) => r.row_id === 4)!;
    expect(four.values.price).toBe("1.00");
    expect(messages(four)).toEqual([]);

    const deleted = await json<{ changed: number; counts: { rows: number } }>(
      await bulk({ action: "delete_rows", row_ids: [5] }),
    );
    expect(deleted).toMatchObject({ changed: 1, counts: { rows: 6 } });
    expect((await rows(imp.id)).items.map((r) => r.row_id)).toEqual([1, 2, 3, 4, 6, 7]);
    // Pages count live rows only: page 3 of 2 starts after the deleted row 5.
    const page = async (query: string) => {
      const r = await rows(imp.id, query);
      return { ids: r.items.map((i) => i.row_id), total: r.total };
    };
    expect(await page("page=2&pageSize=2")).toEqual({ ids: [3, 4], total: 6 });
    expect(await page("page=3&pageSize=2")).toEqual({ ids: [6, 7], total: 6 });
    expect(await page("page=2&pageSize=4")).toEqual({ ids: [6, 7], total: 6 });
    expect(await page("page=4&pageSize=2")).toEqual({ ids: [], total: 6 });
    // The stored totals follow the edits: the filter's total is the import's rows with errors.
    const counts = (
      await json<ProductImport>(await fetch(`${t.url}/api/product-imports/${imp.id}`, { headers: h }))
    ).counts;
    const errors = await rows(imp.id, "errors_only=true&pageSize=100");
    expect(errors.total).toBe(counts.error_rows);
    expect(errors.items.length).toBe(counts.error_rows);
    expect(errors.items.every((r) => r.error_count > 0)).toBe(true);
    expect(counts.rows).toBe(6);
  });

  it("a settings change that alters many rows re-writes them all (the bulk path), and only those", async () => {
    // 700 rows: more than one UPDATE of a JSON list takes, so they go through COPY into a temp table.
    const lines = ["SKU,Title,Price,Note"];
    for (let i = 1; i <= 700; i++)
      lines.push(`BULK-${i},Bulk item ${i},${i % 100 === 0 ? "" : "2.50"},n${i}`);
    const big = await json<ProductImport>(await upload(lines.join("\n"), "bulk.csv", { company: "1" }), 201);
    expect(big.counts).toMatchObject({ rows: 700, error_rows: 7 });
    const first = (await rows(big.id, "page=7&pageSize=100")).items;
    expect(first.map((r) => r.row_id)).toEqual(Array.from({ length: 100 }, (_, i) => 601 + i));
    expect(first[0]!.values.description).toBe(null);

    // "Note" becomes the description: every row's values change, and the counts stay right.
    const updated = await json<ProductImport>(
      await fetch(`${t.url}/api/product-imports/${big.id}`, {
        method: "PUT",
        headers: { ...h, "content-type": "application/json" },
        body: JSON.stringify({ mapping: { Note: "description" } }),
      }),
    );
    expect(updated.counts).toMatchObject({ rows: 700, error_rows: 7, warning_rows: 0 });
    const after = await rows(big.id, "page=7&pageSize=100");
    expect(after.total).toBe(700);
    expect(after.items.map((r) => r.values.description)).toEqual(
      Array.from({ length: 100 }, (_, i) => `n${601 + i}`),
    );
    expect(after.items.find((r) => r.row_id === 700)!.findings.map((f) => f.field)).toEqual(["price"]);

    // The same settings again change nothing: no row is written (their tuples stay where they were).
    const where = await t.tdb.db.prisma.$queryRawUnsafe<{ ctid: string }[]>(
      `SELECT ctid::text FROM product_import_rows WHERE import_id = $1 ORDER BY row_id`,
      big.id,
    );
    await json<ProductImport>(
      await fetch(`${t.url}/api/product-imports/${big.id}`, {
        method: "PUT",
        headers: { ...h, "content-type": "application/json" },
        body: JSON.stringify({ mapping: { Note: "description" } }),
      }),
    );
    const again = await t.tdb.db.prisma.$queryRawUnsafe<{ ctid: string }[]>(
      `SELECT ctid::text FROM product_import_rows WHERE import_id = $1 ORDER BY row_id`,
      big.id,
    );
    expect(again).toEqual(where);
  });

  it("a template fills what the file leaves empty, and a confirmed mapping is offered for the next file", async () => {
    const tpl = await json<{ id: number }>(
      await fetch(`${t.url}/api/templates`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${(await t.login("admin")).token}`,
          "content-type": "application/json",
        },
        body: JSON.stringify({
          company: "1",
          product_type: "Paper",
          supplier: 10,
          msrp: 9.99,
          case_qty: 25,
          tax_cat: 1,
          size_cat: "S",
          categories: ["100"],
          description: "From the template",
        }),
      }),
      201,
    );
    const csv = "Name,Code,Price,Notes\nCard A,TPL-1,3.00,\nCard B,TPL-2,4.00,keep\n";
    const up = await json<ProductImport>(
      await upload(csv, "tpl.csv", { company: "1", product_type: "paper" }),
      201,
    );
    expect(up.template_id).toBe(tpl.id);
    expect(up.mapping).toEqual({ Name: "title", Code: null, Price: "price", Notes: null });
    // The user maps Code → sku and Notes → description.
    const updated = await json<ProductImport>(
      await fetch(`${t.url}/api/product-imports/${up.id}`, {
        method: "PUT",
        headers: { ...h, "content-type": "application/json" },
        body: JSON.stringify({ mapping: { Code: "sku", Notes: "description" } }),
      }),
    );
    expect(updated.status).toBe("checked");
    expect(updated.mapping_source).toMatchObject({ Code: "user", Notes: "user", Name: "synonym" });
    const { items } = await rows(up.id);
    expect(items[0]!.values).toMatchObject({
      sku: "TPL-1",
      msrp: "9.99",
      case_qty: "25",
      supplier: "10",
      tax_cat: "1",
      size_cat: "S",
      categories: "100",
      description: "From the template",
    });
    expect(items[0]!.from_template.sort()).toEqual(
      [
        "case_qty",
        "categories",
        "company",
        "description",
        "msrp",
        "ship_restrictions",
        "size_cat",
        "supplier",
        "tax_cat",
      ].sort(),
    );
    // The file's own value wins.
    expect(items[1]!.values.description).toBe("keep");
    expect(items[1]!.from_template).not.toContain("description");
    expect(items.every((r) => r.error_count === 0)).toBe(true);

    // Same headers, next file: the saved mapping.
    const again = await json<ProductImport>(
      await upload("Name,Code,Price,Notes\nCard C,TPL-3,5.00,\n", "tpl2.csv", {
        company: "1",
        product_type: "Paper",
      }),
      201,
    );
    expect(again.mapping).toEqual({ Name: "title", Code: "sku", Price: "price", Notes: "description" });
    expect(again.mapping_source).toMatchObject({ Code: "saved" });

    // A mapping that gives one field to two columns is refused, naming both.
    const twice = await fetch(`${t.url}/api/product-imports/${up.id}`, {
      method: "PUT",
      headers: { ...h, "content-type": "application/json" },
      body: JSON.stringify({ mapping: { Notes: "title" } }),
    });
    expect(twice.status).toBe(400);
    expect((await twice.json()).message).toContain('"Name" and "Notes" are both mapped to title');
  });

  it("the error report shows a grid edit in its cell, beside the errors it causes", async () => {
    const up = await json<ProductImport>(
      await upload("SKU,Title,Price\nE-1,Pen,1.00\n", "edit.csv", { company: "1" }),
      201,
    );
    const edit = await fetch(`${t.url}/api/product-imports/${up.id}/rows/1`, {
      method: "PATCH",
      headers: { ...h, "content-type": "application/json" },
      body: JSON.stringify({ values: { price: "ten" } }),
    });
    expect(edit.status).toBe(200);
    const report = await fetch(`${t.url}/api/product-imports/${up.id}/errors.csv`, { headers: h });
    const lines = (await report.text())
      .replace(/^\uFEFF/, "")
      .trim()
      .split("\r\n");
    // Not the file's 1.00 next to an error about "ten".
    expect(lines[1]).toMatch(/^E-1,Pen,ten,1,"Price: Price ""ten"" /);
  });

  it("the corrected error report replaces only the rows that failed, and adds lines without a row_id", async () => {
    const csv = "SKU,Title,Price\nR-1,Good,1.00\nR-2,=Bad,\nR-3,Also bad,abc\n";
    const up = await json<ProductImport>(await upload(csv, "re.csv", { company: "1" }), 201);
    expect(up.counts).toMatchObject({ rows: 3, error_rows: 2 });
    const report = await fetch(`${t.url}/api/product-imports/${up.id}/errors.csv`, { headers: h });
    const text = (await report.text()).replace(/^\uFEFF/, "");
    const lines = text.trim().split("\r\n");
    expect(lines[0]).toBe("SKU,Title,Price,row_id,errors");
    expect(lines[2]).toBe("R-2,'=Bad,,2,Price: Price is required");
    // The supplier fixes row 2, changes row 1 (which had no error), leaves row 3 and adds a line.
    const fixed = [
      lines[0],
      "R-1,Changed,1.00,1,",
      "R-2,'=Bad,2.00,2,Price: Price is required",
      lines[3],
      "R-4,New,4.00,,",
    ].join("\r\n");
    const fd = new FormData();
    fd.append("file", new Blob([fixed]), "re-fixed.csv");
    const res = await json<{ replaced: number; added: number; ignored: number; import: ProductImport }>(
      await fetch(`${t.url}/api/product-imports/${up.id}/reupload`, { method: "POST", headers: h, body: fd }),
    );
    expect(res).toMatchObject({
      replaced: 2,
      added: 1,
      ignored: 1,
      import: { counts: { rows: 4, error_rows: 1 } },
    });
    const { items } = await rows(up.id);
    expect(items.map((r) => [r.row_id, r.values.title, r.values.price, r.error_count])).toEqual([
      [1, "Good", "1.00", 0],
      [2, "=Bad", "2.00", 0],
      [3, "Also bad", "abc", 1],
      [4, "New", "4.00", 0],
    ]);
    const noRowId = new FormData();
    noRowId.append("file", new Blob(["SKU,Title,Price\nX,Y,1\n"]), "plain.csv");
    const refused = await fetch(`${t.url}/api/product-imports/${up.id}/reupload`, {
      method: "POST",
      headers: h,
      body: noRowId,
    });
    expect(refused.status).toBe(400);
    expect((await refused.json()).message).toContain("no row_id column");
  });

  it("reads an XLSX workbook's chosen sheet", async () => {
    const wb = new ExcelJS.Workbook();
    wb.addWorksheet("Cover").addRow(["Price list 2026"]);
    const ws = wb.addWorksheet("Products");
    ws.addRow(["SKU", "Title", "Price", "Barcode", "Brand"]);
    ws.addRow(["X-1", "Sheet Item", 4.5, "4006381333931", "Ink Works"]);
    ws.addRow([
      "X-2",
      { richText: [{ text: "Rich " }, { text: "Text" }] },
      { formula: "2+2", result: 4 },
      "",
      "ink works",
    ]);
    const data = Buffer.from(await wb.xlsx.writeBuffer());
    const first = await upload(data, "list.xlsx");
    expect(first.status).toBe(400);
    expect((await first.json()).message).toContain("no data rows");
    const up = await json<ProductImport>(await upload(data, "list.xlsx", { sheet: "Products" }), 201);
    expect(up).toMatchObject({
      file_type: "xlsx",
      sheet: "Products",
      sheets: ["Cover", "Products"],
      counts: { rows: 2 },
    });
    const { items } = await rows(up.id);
    expect(items[0]!.values).toMatchObject({
      sku: "X-1",
      title: "Sheet Item",
      price: "4.5",
      company: "Ink Works",
    });
    expect(items[1]!.values).toMatchObject({ title: "Rich Text", price: "4", company: "ink works" });
    expect(items.every((r) => r.error_count === 0)).toBe(true);
    const missing = await upload(data, "list.xlsx", { sheet: "Nope" });
    expect(missing.status).toBe(400);
    expect((await missing.json()).message).toContain('no sheet named "Nope"');
  });

  it("refuses what is not a spreadsheet, clearly, and writes nothing", async () => {
    const before = await t.tdb.db.prisma.productImport.count();
    const cases: [Buffer | string, string, number, string][] = [
      [
        Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0, 0, 0]),
        "old.xls",
        415,
        "Save the sheet as .xlsx and upload it again",
      ],
      [
        await sharp({ create: { width: 4, height: 4, channels: 3, background: "#fff" } })
          .png()
          .toBuffer(),
        "list.csv",
        415,
        "not a CSV or XLSX",
      ],
      ["", "empty.csv", 400, "The file is empty"],
      ["\r\n\r\n", "blank.csv", 400, "The file is empty"],
      ["12.50,0123456789012,3\n1,2,3\n", "noheader.csv", 400, "no header row"],
      [Buffer.from("PK\u0003\u0004not really a zip"), "fake.xlsx", 415, "not a CSV or XLSX"],
      // Text at heart, no sheet: a PDF made of text, a Word document.
      [
        "%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer\n%%EOF\n",
        "list.pdf",
        415,
        "not a CSV or XLSX",
      ],
      [
        Buffer.from("PK\u0003\u0004....[Content_Types].xml....word/document.xml...."),
        "letter.docx",
        415,
        "not a CSV or XLSX",
      ],
    ];
    for (const [data, name, status, message] of cases) {
      const res = await upload(data, name);
      const body = await res.json();
      expect(res.status, name).toBe(status);
      expect(body.message, name).toContain(message);
    }
    const none = await fetch(`${t.url}/api/product-imports`, {
      method: "POST",
      headers: h,
      body: new FormData(),
    });
    expect(none.status).toBe(400);
    expect((await none.json()).message).toContain("Choose a CSV or XLSX file");
    const unknownCompany = await upload("SKU,Title,Price\nA,B,1\n", "a.csv", { company: "999" });
    expect(unknownCompany.status).toBe(400);
    expect((await unknownCompany.json()).message).toContain('Unknown company "999"');
    expect(await t.tdb.db.prisma.productImport.count()).toBe(before);
  });

  it("refuses more than 50,000 rows and more than 20 MB with 413", async () => {
    const many = `SKU,Title,Price\n${"A,B,1\n".repeat(50_001)}`;
    const res = await upload(many, "many.csv");
    expect(res.status).toBe(413);
    expect((await res.json()).message).toContain("more than 50,000 rows");
    const big = Buffer.alloc(20 * 1024 * 1024 + 10, 0x41);
    const tooBig = await upload(big, "big.csv");
    expect(tooBig.status).toBe(413);
    expect((await tooBig.json()).message).toContain("larger than the 20 MB limit");
  });

  it("permissions: viewing needs access:import, changing needs create:products; users see their own imports", async () => {
    const denied = await upload("SKU,Title,Price\nA,B,1\n", "a.csv", {}, viewer);
    expect(denied.status).toBe(403);
    // The viewer sees no import of the creator's; the manager sees them all.
    const mine = await json<{ total: number }>(await fetch(`${t.url}/api/product-imports`, { headers: h }));
    const theirs = await json<{ total: number }>(
      await fetch(`${t.url}/api/product-imports`, { headers: other }),
    );
    const all = await json<{ total: number; items: { owner: { username: string } }[] }>(
      await fetch(`${t.url}/api/product-imports?pageSize=200`, { headers: manager }),
    );
    expect(mine.total).toBeGreaterThan(0);
    expect(theirs.total).toBe(0);
    expect(all.total).toBe(mine.total);
    expect(all.items[0]!.owner.username).toBe("creator");
    expect((await fetch(`${t.url}/api/product-imports/${imp.id}`, { headers: other })).status).toBe(404);
    expect((await fetch(`${t.url}/api/product-imports/${imp.id}/rows`, { headers: other })).status).toBe(404);
    expect((await fetch(`${t.url}/api/product-imports/${imp.id}`, { headers: manager })).status).toBe(200);
    const patch = await fetch(`${t.url}/api/product-imports/${imp.id}/rows/1`, {
      method: "PATCH",
      headers: { ...manager, "content-type": "application/json" },
      body: JSON.stringify({ values: { title: "x" } }),
    });
    expect(patch.status).toBe(403);
    const badField = await fetch(`${t.url}/api/product-imports/${imp.id}/rows/1`, {
      method: "PATCH",
      headers: { ...h, "content-type": "application/json" },
      body: JSON.stringify({ values: { nope: "x" } }),
    });
    expect(badField.status).toBe(400);
    expect(
      (
        await fetch(`${t.url}/api/product-imports/${imp.id}/rows/999`, {
          method: "PATCH",
          headers: { ...h, "content-type": "application/json" },
          body: JSON.stringify({ values: { title: "x" } }),
        })
      ).status,
    ).toBe(404);
  });
});
