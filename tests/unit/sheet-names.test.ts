import ExcelJS from "exceljs";
import { strToU8, zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import {
  looksLikeZip,
  parseWorkbookSheets,
  readSheetNames,
} from "../../client/features/productImport/sheet-names.ts";

const WORKBOOK_XML = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">
  <bookViews><workbookView activeTab="0"/></bookViews>
  <sheets>
    <sheet name="Paper &amp; Card" sheetId="1" r:id="rId1"/>
    <sheet name='Supplier&apos;s "Notes"' sheetId="2" state="hidden" r:id="rId2"/>
    <!-- <sheet name="Commented out" sheetId="9" r:id="rId9"/> -->
    <sheet sheetId="3" r:id="rId3" name="Tom's &lt;2&gt; &#233;t&#xE9;"></sheet>
  </sheets>
</workbook>`;

function zipWith(files: Record<string, string>): Uint8Array {
  return zipSync(Object.fromEntries(Object.entries(files).map(([name, text]) => [name, strToU8(text)])));
}

describe("readSheetNames", () => {
  it("lists a workbook's sheets in order, with hidden ones marked and entities decoded", () => {
    const bytes = zipWith({
      "[Content_Types].xml": "<Types/>",
      "xl/workbook.xml": WORKBOOK_XML,
      "xl/worksheets/sheet1.xml": "<worksheet/>",
    });
    expect(looksLikeZip(bytes)).toBe(true);
    expect(readSheetNames(bytes)).toEqual([
      { name: "Paper & Card", hidden: false },
      { name: `Supplier's "Notes"`, hidden: true },
      { name: "Tom's <2> été", hidden: false },
    ]);
  });

  it("reads veryHidden as hidden and a namespace prefix on the elements", () => {
    expect(
      parseWorkbookSheets(
        `<x:workbook xmlns:x="urn:x"><x:sheets><x:sheet name="A" sheetId="1"/><x:sheet state='veryHidden' name="B&#x26;C" sheetId="2"/><x:sheet name="D" state="visible"/></x:sheets></x:workbook>`,
      ),
    ).toEqual([
      { name: "A", hidden: false },
      { name: "B&C", hidden: true },
      { name: "D", hidden: false },
    ]);
  });

  it("reads a workbook written by exceljs", async () => {
    const workbook = new ExcelJS.Workbook();
    workbook.addWorksheet("Notes").addRow(["Note"]);
    const products = workbook.addWorksheet("Products & Prices");
    products.addRow(["SKU", "Title"]);
    products.addRow(["MM-1", "Pen"]);
    workbook.addWorksheet("Old", { state: "hidden" });
    const bytes = new Uint8Array(await workbook.xlsx.writeBuffer());
    expect(readSheetNames(bytes)).toEqual([
      { name: "Notes", hidden: false },
      { name: "Products & Prices", hidden: false },
      { name: "Old", hidden: true },
    ]);
  });

  it("answers null for bytes that are not a readable XLSX", () => {
    const csv = strToU8("SKU,Title\nMM-1,Pen\n");
    expect(looksLikeZip(csv)).toBe(false);
    expect(readSheetNames(csv)).toBeNull();
    expect(readSheetNames(new Uint8Array())).toBeNull();
    // A ZIP without a workbook (a .docx, say), and a ZIP cut short.
    const docx = zipWith({ "word/document.xml": "<w:document/>" });
    expect(readSheetNames(docx)).toBeNull();
    const full = zipWith({ "xl/workbook.xml": WORKBOOK_XML });
    const cut = full.slice(0, full.length - 30);
    expect(looksLikeZip(cut)).toBe(true);
    expect(readSheetNames(cut)).toBeNull();
    // A workbook that lists no sheet
    expect(readSheetNames(zipWith({ "xl/workbook.xml": "<workbook><sheets/></workbook>" }))).toBeNull();
  });
});
