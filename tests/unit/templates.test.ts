// The template form's payload and mapping (spec sections 3 "Mapping a product to a template",
// 4 "Template form", 5 "Template form") and the array-literal parser the server accepts them with.
import { describe, expect, it } from "vitest";
import {
  copyOfTemplate,
  emptyTemplateForm,
  productToForm,
  templateCategoriesOf,
  toTemplatePayload,
} from "../../client/features/templates/model.ts";
import {
  type ProductSearchResult,
  parseArrayLiteral,
  TemplateInputSchema,
  toArrayLiteral,
} from "../../shared/templates.ts";

describe("array literals", () => {
  it("parse plain, quoted, escaped and empty literals; refuse malformed ones", () => {
    expect(parseArrayLiteral("{a,b}")).toEqual(["a", "b"]);
    expect(parseArrayLiteral('{"100","101"}')).toEqual(["100", "101"]);
    expect(parseArrayLiteral('{"a b","c\\"d",e}')).toEqual(["a b", 'c"d', "e"]);
    expect(parseArrayLiteral("{}")).toEqual([]);
    expect(parseArrayLiteral(" { } ")).toEqual([]);
    for (const bad of ["{a,b", "a,b", '{"a}', "{a,,b}", "{a}{b}"])
      expect(parseArrayLiteral(bad), bad).toBeNull();
  });
  it("round-trip through toArrayLiteral", () => {
    const items = ["plain", "with space", 'quote"', "back\\slash"];
    expect(parseArrayLiteral(toArrayLiteral(items, true))).toEqual(items);
    expect(toArrayLiteral([], true)).toBe("{}");
    expect(toArrayLiteral(["0"], false)).toBe("{0}");
  });
});

describe("template form payload", () => {
  it("omits empties, sends numbers as numbers and lists as literals", () => {
    const payload = toTemplatePayload({
      ...emptyTemplateForm(),
      company: "1",
      product_type: " Ephemera ",
      supplier: "10",
      msrp: "2.50",
      case_qty: "",
      categories: ["100", "101"],
    });
    expect(payload).toEqual({
      company: "1",
      product_type: "Ephemera",
      supplier: 10,
      msrp: 2.5,
      tax_cat: 0,
      categories: '{"100","101"}',
      ship_restrictions: "{0}",
    });
    // The server's schema reads exactly that.
    expect(TemplateInputSchema.parse(payload)).toMatchObject({
      categories: ["100", "101"],
      ship_restrictions: ["0"],
    });
  });

  it("maps a product by the spec's rules and the separately loaded categories", () => {
    const product = {
      pid: 1,
      title: "T",
      brand: "Paper Co",
      brand_id: 1,
      line: null,
      price: 1.5,
      total_sold: 3,
      first_received: null,
      date_last_sold: null,
      supplier: 10,
      regular_price: 2,
      cost_price: 0.6,
      moq: 6,
      case_qty: 25,
      harmonized_tariff_code: "4802.56",
      description: "D",
      weight: 0.5,
      length: 12,
      width: 12,
      height: null,
      tax_code: "1",
      size_cat: "S",
      shipping_restrictions: "1",
      categories: ["999"],
    } satisfies ProductSearchResult;
    expect(productToForm(product, ["100"])).toEqual({
      company: "1",
      product_type: "",
      supplier: "10",
      msrp: "2",
      cost_each: "0.6",
      qty_per_unit: "6",
      case_qty: "25",
      hts_code: "4802.56",
      description: "D",
      weight: "0.5",
      length: "12",
      width: "12",
      height: "",
      tax_cat: "1",
      size_cat: "S",
      categories: ["100"],
      ship_restrictions: "1",
    });
  });

  it("a copy clears the product type and keeps the rest", () => {
    const now = new Date();
    const copy = copyOfTemplate({
      id: 5,
      company: "2",
      product_type: "Ink",
      supplier: null,
      msrp: 3,
      cost_each: null,
      qty_per_unit: null,
      case_qty: null,
      hts_code: null,
      description: null,
      weight: null,
      length: null,
      width: null,
      height: null,
      tax_cat: 0,
      size_cat: null,
      categories: ["100"],
      ship_restrictions: ["0"],
      created_at: now,
      updated_at: now,
    });
    expect(copy).toMatchObject({ company: "2", product_type: "", msrp: "3", categories: ["100"] });
    expect(copy).not.toHaveProperty("id");
    expect(copy).not.toHaveProperty("created_at");
  });
});

describe("Create Template from Product: only template categories", () => {
  const entries = [
    { value: "100", type: 10 },
    { value: "101", type: 11 },
    { value: "900", type: 20 },
    { value: "197", type: 21 },
  ];
  it("keeps the types the form offers and counts the rest for a quiet note", () => {
    expect(templateCategoriesOf(entries)).toEqual({
      values: ["100", "101"],
      leftOut: 2,
      note: "2 categories of this product are not template categories and were left out",
    });
    expect(templateCategoriesOf(entries.slice(0, 3)).note).toBe(
      "1 category of this product is not a template category and was left out",
    );
    expect(templateCategoriesOf(entries.slice(0, 2))).toEqual({
      values: ["100", "101"],
      leftOut: 0,
      note: null,
    });
  });
  it("leaves out a template-type category the form's list does not have", () => {
    expect(templateCategoriesOf(entries, [{ value: "100" }, { value: "900" }]).values).toEqual(["100"]);
  });
});
