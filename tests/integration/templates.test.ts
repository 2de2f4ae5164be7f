// Import templates, field options and product search (spec sections 3, 5, 7 "Import templates",
// 9 "Templates"): the tRPC router and the legacy REST at its exact paths, on real imported data.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { testBackend } from "../helpers/db.ts";
import { FIXTURE_DIR } from "../helpers/pipeline.ts";

const SAME_ORIGIN = { host: "backoffice.test", origin: "http://backoffice.test" };

describe(`import templates (${testBackend})`, () => {
  let t: TestApp;
  let editor: Record<string, string>;
  let importer: Record<string, string>;
  let prompter: Record<string, string>;

  beforeAll(async () => {
    t = await startTestApp({ env: { SOURCE_DIR: FIXTURE_DIR } });
    await t.app.services.dataOps.start("reset", null);
    await t.app.services.dataOps.idle();
    await t.createUser("editor", ["settings:templates"]);
    await t.createUser("importer", ["access:import"]);
    await t.createUser("prompter", ["settings:prompt_management"]);
    // The screens' calls: the session cookie, from the app's own origin (spec section 6).
    const session = async (name: string) => ({ cookie: (await t.login(name)).cookie, ...SAME_ORIGIN });
    editor = await session("editor");
    importer = await session("importer");
    prompter = await session("prompter");
  });
  afterAll(() => t.close());

  const call = (method: "GET" | "POST" | "PUT" | "DELETE", url: string, headers = editor, payload?: object) =>
    t.app.inject({ method, url, headers, payload });

  describe("field options", () => {
    it("are built from brands, vendors, categories, restrictions, tax categories and sizes", async () => {
      const res = await call("GET", "/api/import/field-options");
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.companies).toEqual([
        { value: "2", label: "Ink Works" },
        { value: "1", label: "Paper Co" },
      ]);
      expect(body.suppliers).toEqual([
        { value: "10", label: "Vendor A" },
        { value: "11", label: "Vendor, B" },
      ]);
      expect(body.categories).toEqual([
        { value: "101", label: "Cardstock", type: 11, level: 2 },
        { value: "200", label: "Internal", type: 20, level: 1 },
        { value: "100", label: "Paper", type: 10, level: 1 },
      ]);
      expect(body.shippingRestrictions).toEqual([
        { value: "0", label: "None" },
        { value: "1", label: "Hazmat" },
      ]);
      expect(body.taxCategories).toEqual([
        { value: "0", label: "Not Specifically Set" },
        { value: "1", label: "Taxable" },
      ]);
      expect(body.sizes).toEqual([
        { value: "L", label: "Large" },
        { value: "S", label: "Small" },
      ]);
    });

    it("add tax category '0' as 'Not Specifically Set' when the source has none", async () => {
      await t.tdb.db.prisma.taxCategory.delete({ where: { code: "0" } });
      try {
        const body = (await call("GET", "/api/import/field-options")).json();
        expect(body.taxCategories[0]).toEqual({ value: "0", label: "Not Specifically Set" });
      } finally {
        await t.tdb.db.prisma.taxCategory.create({ data: { code: "0", label: "Not Specifically Set" } });
      }
    });

    it("serve the prompt and import screens too, but not a user without any of those permissions", async () => {
      expect((await call("GET", "/api/import/field-options", prompter)).statusCode).toBe(200);
      expect((await call("GET", "/api/import/field-options", importer)).statusCode).toBe(200);
      expect((await call("GET", "/api/templates", prompter)).statusCode).toBe(403);
      expect((await call("POST", "/api/templates", importer, { company: "1" })).statusCode).toBe(403);
    });
  });

  describe("templates", () => {
    let firstId = 0;

    it("create accepts the form's payload: array literals, numbers as text, defaults for the rest", async () => {
      const res = await call("POST", "/api/templates", editor, {
        company: "1",
        product_type: "12x12 Paper",
        supplier: 10,
        msrp: "2.50",
        cost_each: 1.1,
        qty_per_unit: "12",
        case_qty: 24,
        hts_code: "4802.56",
        weight: "0.55",
        length: 12,
        width: 12,
        height: "0.1",
        size_cat: "S",
        categories: '{"100","101"}',
        description: "  Heavy stock  ",
      });
      expect(res.statusCode).toBe(201);
      const body = res.json();
      firstId = body.id;
      expect(body).toEqual({
        id: expect.any(Number),
        company: "1",
        product_type: "12x12 Paper",
        supplier: 10,
        msrp: 2.5,
        cost_each: 1.1,
        qty_per_unit: 12,
        case_qty: 24,
        hts_code: "4802.56",
        description: "Heavy stock",
        weight: 0.55,
        length: 12,
        width: 12,
        height: 0.1,
        tax_cat: 0,
        size_cat: "S",
        categories: ["100", "101"],
        ship_restrictions: ["0"],
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
    });

    it("accepts JSON arrays, real arrays and {} for the lists", async () => {
      const a = await call("POST", "/api/templates", editor, {
        company: "2",
        product_type: "Ink",
        categories: '["100"]',
        ship_restrictions: "{1}",
        tax_cat: "1",
      });
      expect(a.statusCode).toBe(201);
      expect(a.json()).toMatchObject({ categories: ["100"], ship_restrictions: ["1"], tax_cat: 1 });
      const b = await call("POST", "/api/templates", editor, {
        company: 2,
        product_type: "Stamps",
        categories: "{}",
        ship_restrictions: ["0"],
      });
      expect(b.statusCode).toBe(201);
      expect(b.json()).toMatchObject({ company: "2", categories: [], ship_restrictions: ["0"] });
    });

    it("lists every template", async () => {
      const res = await call("GET", "/api/templates", importer);
      expect(res.statusCode).toBe(200);
      expect(res.json().map((x: { product_type: string }) => x.product_type)).toEqual([
        "12x12 Paper",
        "Ink",
        "Stamps",
      ]);
    });

    it("refuses a duplicate company + product type with 409 and a clear message", async () => {
      const res = await call("POST", "/api/templates", editor, { company: "1", product_type: "12x12 Paper" });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toEqual({
        error: 'A template for company 1 and product type "12x12 Paper" already exists',
        message: 'A template for company 1 and product type "12x12 Paper" already exists',
      });
      const viaTrpc = await t.app.inject({
        method: "POST",
        url: "/trpc/templates.create",
        headers: { ...editor, "content-type": "application/json" },
        payload: JSON.stringify({ json: { company: "1", product_type: "12x12 Paper" } }),
      });
      expect(viaTrpc.statusCode).toBe(409);
      expect(viaTrpc.json().error.json.data.code).toBe("CONFLICT");
    });

    it("refuses malformed numbers and lists, and missing company or product type, with 400", async () => {
      const cases: [object, RegExp][] = [
        [{ company: "1", product_type: "X", msrp: "12,5" }, /^msrp: must be a number/],
        [
          { company: "1", product_type: "X", supplier: "ten" },
          /^supplier: must be a whole number from 0 to 2147483647$/,
        ],
        [{ company: "1", product_type: "X", case_qty: 1.5 }, /^case_qty: must be a whole number/],
        [{ company: "1", product_type: "X", categories: "{a,b" }, /^categories: must be a list/],
        [{ company: "1", product_type: "X", categories: "[1," }, /^categories: is not a valid JSON array/],
        [{ product_type: "X" }, /^company: Company is required/],
        [{ company: "1", product_type: "  " }, /^product_type: Product Type is required/],
        [{ company: "999", product_type: "X" }, /^company: Unknown company "999"/],
        [{ company: "1", product_type: "X", supplier: 999 }, /^supplier: Unknown supplier 999/],
        [{ company: "1", product_type: "X", ship_restrictions: "{0,1}" }, /Only one shipping restriction/],
      ];
      for (const [payload, message] of cases) {
        const res = await call("POST", "/api/templates", editor, payload);
        expect(res.statusCode, JSON.stringify(payload)).toBe(400);
        expect(res.json().message).toMatch(message);
        expect(res.json().error).toBe(res.json().message);
      }
      expect((await call("GET", "/api/templates")).json()).toHaveLength(3);
    });

    it("update replaces the template; a clash is 409, an unknown id 404", async () => {
      const res = await call("PUT", `/api/templates/${firstId}`, editor, {
        company: "1",
        product_type: "12x12 Paper",
        msrp: 3,
        categories: '{"100"}',
        ship_restrictions: "{1}",
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        id: firstId,
        msrp: 3,
        cost_each: null,
        supplier: null,
        categories: ["100"],
        ship_restrictions: ["1"],
      });
      expect(new Date(res.json().updated_at).getTime()).toBeGreaterThanOrEqual(
        new Date(res.json().created_at).getTime(),
      );
      const clash = await call("PUT", `/api/templates/${firstId}`, editor, {
        company: "2",
        product_type: "Ink",
      });
      expect(clash.statusCode).toBe(409);
      expect(
        (await call("PUT", "/api/templates/99999", editor, { company: "1", product_type: "Z" })).statusCode,
      ).toBe(404);
      expect(
        (await call("PUT", "/api/templates/abc", editor, { company: "1", product_type: "Z" })).statusCode,
      ).toBe(400);
    });

    it("delete removes it; a second delete is 404", async () => {
      const created = (
        await call("POST", "/api/templates", editor, { company: "2", product_type: "Temp" })
      ).json();
      const res = await call("DELETE", `/api/templates/${created.id}`);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ success: true, id: created.id });
      expect((await call("DELETE", `/api/templates/${created.id}`)).statusCode).toBe(404);
    });
  });

  describe("product search", () => {
    type Hit = { pid: number; title: string } & Record<string, unknown>;
    const search = async (query: string, headers = editor) => {
      const res = await call("GET", `/api/import/search-products?${query}`, headers);
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as Hit[];
    };

    it("finds by title, SKU, barcode and pid, with every field of spec section 3", async () => {
      const [hit] = await search("q=cardstock");
      expect(hit).toEqual({
        pid: 1001,
        title: "Cardstock 12x12 - Blue",
        brand: "Paper Co",
        brand_id: 1,
        line: "Basics",
        price: 1.5,
        total_sold: expect.any(Number),
        first_received: "2025-01-05",
        date_last_sold: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
        supplier: 10,
        regular_price: 2,
        cost_price: 0.6,
        moq: 1,
        case_qty: 25,
        harmonized_tariff_code: "4802.56",
        description: 'Heavy, 80lb "cover" stock',
        weight: 0.5,
        length: 12,
        width: 12,
        height: 0.1,
        tax_code: "1",
        size_cat: "S",
        shipping_restrictions: "0",
        categories: ["100", "101"],
      });
      expect(hit!.total_sold).toBeGreaterThan(0);
      expect((await search("q=cs-1")).map((h) => h.pid)).toEqual([1001]);
      expect((await search("q=0123456789012")).map((h) => h.pid)).toEqual([1001]);
      expect((await search("q=1002")).map((h) => h.pid)).toEqual([1002]);
      const ink = (await search("q=ink"))[0]!;
      expect(ink).toMatchObject({ pid: 1002, total_sold: expect.any(Number), first_received: null });
    });

    it("ranks exact and prefix matches first", async () => {
      // 'gl' starts the title of 1003 and the SKU GL-1; 'l' only appears inside other titles.
      expect((await search("q=gl"))[0]!.pid).toBe(1003);
      expect((await search("q=GL-1")).map((h) => h.pid)).toEqual([1003]);
    });

    it("'*' means any product, narrowed by company and date filters", async () => {
      expect((await search("q=*")).map((h) => h.pid).sort()).toEqual([1001, 1002, 1003]);
      expect((await search("q=*&company=2")).map((h) => h.pid)).toEqual([1002]);
      expect((await search("q=*&company=all")).length).toBe(3);
      expect((await search("q=*&dateRange=none")).length).toBe(3);
      // Products received in the fixture are older than a year, so a recent range finds none.
      expect(await search("q=*&dateRange=1week")).toEqual([]);
      await t.tdb.db.prisma.product.update({ where: { pid: 1003 }, data: { firstReceived: new Date() } });
      expect((await search("q=*&dateRange=1month")).map((h) => h.pid)).toEqual([1003]);
      expect((await search("q=glue&dateRange=1year&company=1")).map((h) => h.pid)).toEqual([1003]);
    });

    it("treats LIKE wildcards literally and refuses bad filters with 400", async () => {
      expect(await search("q=%25")).toEqual([]);
      expect(await search("q=_")).toEqual([]);
      expect((await call("GET", "/api/import/search-products?q=*&dateRange=2weeks")).statusCode).toBe(400);
      expect((await call("GET", "/api/import/search-products?q=*&company=abc")).statusCode).toBe(400);
    });

    it("is open to the import page and closed to others", async () => {
      expect((await search("q=ink", importer)).length).toBe(1);
      expect((await call("GET", "/api/import/search-products?q=ink", prompter)).statusCode).toBe(403);
    });

    it("product-categories answers the product's categories as entries with a value", async () => {
      const res = await call("GET", "/api/import/product-categories/1001");
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual([
        { value: "100", label: "Paper", type: 10, level: 1 },
        { value: "101", label: "Cardstock", type: 11, level: 2 },
      ]);
      expect((await call("GET", "/api/import/product-categories/1003")).json()).toEqual([]);
      expect((await call("GET", "/api/import/product-categories/424242")).statusCode).toBe(404);
      expect((await call("GET", "/api/import/product-categories/abc")).statusCode).toBe(400);
    });

    it("the tRPC procedures answer the same", async () => {
      const res = await t.app.inject({
        url: `/trpc/templates.searchProducts?input=${encodeURIComponent(JSON.stringify({ json: { q: "cardstock" } }))}`,
        headers: editor,
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().result.data.json[0].pid).toBe(1001);
    });
  });
});
