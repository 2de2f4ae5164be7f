// Purchasing end to end over REST, on a real database: the workspace's suggestions and cover,
// drafts from suggestions (idempotent, an empty selection refused), editing a draft (re-rounded to
// MOQ and case, another vendor's product refused), the lifecycle (ordered → partial → closed short,
// cancel), receipts (over-receipt, foreign lines, future dates), planning right after each action
// (a product goes from "reorder" to covered when its PO is ordered; a receipt is on hand until the
// next run), an echoed PO counted once after a Full Update, imported POs read-only, permissions,
// two users acting on one PO at once, the list's filters and the CSV/PDF exports.
//
// The catalogue: every product sells 2 units a day for 120 days before D0 (2026-06-30), vendor 10
// quotes 14 days, so d = 2, L = 14, days of stock 30: ROP = 28, F(H) = 2 × 44 = 88.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PoDetail, PoListPage, ReplenishmentPage } from "../../shared/purchasing.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { writeSource } from "../helpers/csv-source.ts";
import { testBackend } from "../helpers/db.ts";
import { type PipelineHarness, pipeline } from "../helpers/pipeline.ts";

const D0 = "2026-06-30";
const addDays = (day: string, n: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

const PRODUCT_HEADER =
  "pid,title,sku,brand_id,vendor_id,price,cost_price,stock_quantity,moq,case_qty,created_at";
const PRODUCTS = [
  // pid, vendor, stock, moq, case
  [1, 10, 28, 24, 12], // reorder: on hand 28 = ROP, stock-out on D0 + 14 (not critical)
  [2, 10, 10, 1, 1], // critical
  [3, 11, 20, 1, 1], // critical, covered by imported PO 900
  [4, 11, 500, 1, 1], // healthy / overstocked: no suggestion
  [5, 10, 12, 1, 6], // critical
] as const;

function source(extraPos: string[] = [], extraLines: string[] = []): string {
  const orders: string[] = ["line_id,order_number,pid,order_date,quantity,price,discount,status"];
  let id = 1;
  for (const [pid] of PRODUCTS)
    for (let day = 1; day <= 120; day++)
      orders.push(`${id++},SO-${id},${pid},${addDays(D0, -day)}T10:00:00Z,2,5.00,0,completed`);
  return writeSource({
    "products.csv": [
      PRODUCT_HEADER,
      ...PRODUCTS.map(
        ([pid, vendor, stock, moq, cs]) =>
          `${pid},Product ${pid},SKU-${pid},1,${vendor},5.00,2.50,${stock},${moq},${cs},2025-01-01T00:00:00Z`,
      ),
    ],
    "product_categories.csv": ["pid,category_id", "1,101", "4,101", "1,200"],
    "order_lines.csv": orders,
    "purchase_orders.csv": [
      "po_id,vendor_id,status,date_ordered,date_expected,reference",
      "900,11,ordered,2026-06-20,2026-07-10,",
      "902,11,ordered,2026-05-20,2026-06-15,",
      ...extraPos,
    ],
    "po_lines.csv": [
      "po_line_id,po_id,pid,ordered_qty,cost_each",
      "9000,900,3,12,2.50",
      "9020,902,4,6,2.50",
      ...extraLines,
    ],
    "receivings.csv": ["receiving_id,po_line_id,received_date,qty,cost_each"],
  });
}

describe(`purchasing (${testBackend})`, () => {
  let t: TestApp;
  let harness: PipelineHarness;
  let dir = source();
  let admin: string;
  let viewer: string;
  let buyer: string;

  const call = async (token: string, method: "GET" | "POST" | "PUT", url: string, body?: unknown) => {
    const res = await t.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { payload: body as object }),
    });
    return {
      status: res.statusCode,
      body: res.body,
      json: () => res.json(),
      headers: res.headers,
      raw: res.rawPayload,
    };
  };
  const metrics = async (pid: number) => {
    const [r] = await t.tdb.db.prisma.$queryRawUnsafe<
      { status: string; on_hand: number; on_order: number; reorder_qty: number }[]
    >("SELECT status, on_hand, on_order, reorder_qty FROM product_metrics WHERE pid = $1", pid);
    return r!;
  };

  beforeAll(async () => {
    t = await startTestApp({ env: { SHOP_NAME: "Paper Corner", SHOP_ADDRESS: "1 High Street;Springfield" } });
    harness = await pipeline(t.tdb.db, () => dir);
    const last = await harness.run("reset");
    expect(last.status, JSON.stringify(last)).toBe("complete");
    admin = (await t.login("admin")).token;
    await t.createUser("viewer", ["access:purchase_orders"]);
    viewer = (await t.login("viewer")).token;
    await t.createUser("buyer", ["access:purchase_orders", "create:purchase_orders"]);
    buyer = (await t.login("buyer")).token;
  }, 120_000);

  afterAll(async () => {
    await harness?.close();
    await t?.close();
  });

  it("the workspace lists the products to order by vendor, with why and cover", async () => {
    expect((await metrics(1)).status).toBe("reorder");
    const res = await call(admin, "GET", "/api/replenishment");
    expect(res.status, res.body).toBe(200);
    const page = res.json() as ReplenishmentPage;
    expect(page.as_of).toBe(D0);
    expect(page.vendors.map((v) => v.vendor_id).sort()).toEqual([10, 11]);
    const pids = page.items.map((l) => l.pid).sort();
    expect(pids).toEqual([1, 2, 3, 5]);
    const one = page.items.find((l) => l.pid === 1)!;
    expect(one.suggested_qty % 12).toBe(0);
    expect(one.why).toMatch(new RegExp(`^need [\\d.]+ → MOQ 24 → case 12 → ${one.suggested_qty}$`));
    expect(page.items.find((l) => l.pid === 3)!.covered_by).toBe("900");
    const v11 = page.vendors.find((v) => v.vendor_id === 11)!;
    expect(v11.open_lines).toBe(0);
    // Its one line is on open PO 900: nothing to order now, though the suggestion has a value.
    expect(v11).toMatchObject({ open_units: 0, open_value: 0 });
    expect(v11.order_value).toBeGreaterThan(0);
    // The vendor with something to order comes first.
    expect(page.vendors[0]!.vendor_id).toBe(10);
    const v10 = page.vendors[0]!;
    const v10Lines = page.items.filter((l) => l.vendor_id === 10 && !l.covered_by);
    expect(v10.open_value).toBeCloseTo(
      v10Lines.reduce((s, l) => s + l.line_value, 0),
      2,
    );
    // Filters
    const filtered = (
      await call(admin, "GET", "/api/replenishment?vendor_id=10&status=reorder")
    ).json() as ReplenishmentPage;
    expect(filtered.items.map((l) => l.pid)).toEqual([1]);
    expect((await call(admin, "GET", "/api/replenishment?abc=Z")).status).toBe(400);
    // Brand and category: the choices are those of the products to order under the other filters.
    const facets = await call(viewer, "GET", "/api/replenishment/facets?vendor_id=10");
    expect(facets.status, facets.body).toBe(200);
    expect(facets.json()).toEqual({
      brands: [{ id: 1, label: "Paper Co", lines: 3 }],
      // Only product categories (type 10–13): the internal group 200 is not offered.
      categories: [{ id: 101, label: "Paper › Cardstock", lines: 1 }],
    });
    const byBrand = (await call(admin, "GET", "/api/replenishment?brand_id=1")).json() as ReplenishmentPage;
    expect(byBrand.total).toBe(4);
    expect(
      ((await call(admin, "GET", "/api/replenishment?brand_id=2")).json() as ReplenishmentPage).total,
    ).toBe(0);
    const byCategory = (
      await call(admin, "GET", "/api/replenishment?category_id=101")
    ).json() as ReplenishmentPage;
    expect(byCategory.items.map((l) => l.pid)).toEqual([1]);
  });

  it("vendor terms are kept and tell whether the order reaches them", async () => {
    const res = await call(buyer, "PUT", "/api/vendors/10/terms", {
      min_order_value: 100000,
      min_order_qty: 10,
    });
    expect(res.status, res.body).toBe(200);
    expect(res.json()).toMatchObject({ vendor_id: 10, min_order_value: 100000, min_order_qty: 10 });
    expect((await call(viewer, "PUT", "/api/vendors/10/terms", { min_order_qty: 1 })).status).toBe(403);
    expect((await call(buyer, "PUT", "/api/vendors/999/terms", { min_order_qty: 1 })).status).toBe(404);
    expect((await call(buyer, "PUT", "/api/vendors/10/terms", { min_order_qty: -1 })).status).toBe(400);
    const v10 = ((await call(admin, "GET", "/api/replenishment")).json() as ReplenishmentPage).vendors.find(
      (v) => v.vendor_id === 10,
    )!;
    expect(v10.reaches_min_value).toBe(false);
    expect(v10.reaches_min_qty).toBe(true);
    expect(v10.reaches_free_freight).toBeNull();
    await call(buyer, "PUT", "/api/vendors/10/terms", { min_order_value: null });
  });

  it("top up to the vendor minimum: previewed without saving, then the fewest-cover lines get whole cases", async () => {
    type Preview = {
      vendor_id: number;
      units: number;
      value: number;
      lines: { pid: number; qty: number; top_up: number }[];
    }[];
    const trpc = async <T>(path: string, input: unknown, token = buyer) => {
      const res = await t.app.inject({
        url: `/trpc/${path}?input=${encodeURIComponent(JSON.stringify({ json: input }))}`,
        headers: { authorization: `Bearer ${token}` },
      });
      return { status: res.statusCode, data: res.json().result?.data?.json as T };
    };
    const countPos = async () =>
      ((await call(admin, "GET", "/api/purchase-orders")).json() as PoListPage).total;
    const before = await countPos();
    const plain = (await trpc<Preview>("purchasing.previewDrafts", { vendor_ids: [10] })).data;
    expect(plain).toHaveLength(1);
    const base = plain[0]!;
    expect(base.lines.every((l) => l.top_up === 0)).toBe(true);
    const baseQty = new Map(base.lines.map((l) => [l.pid, l.qty]));
    // Cover (on hand 28, 10, 12 at 2 a day): product 2 has the fewest days, then 5 (case 6), then 1.
    expect(base.lines.map((l) => l.pid)).toEqual([2, 5, 1]);
    // A line of the selected vendor unticked is left out of its draft.
    const without5 = (
      await trpc<Preview>("purchasing.previewDrafts", { vendor_ids: [10], exclude_pids: [5] })
    ).data[0]!;
    expect(without5.lines.map((l) => l.pid)).toEqual([2, 1]);

    // Minimum quantity 3 units above the suggestion: one unit (product 2's case) is not enough,
    // product 5's case of 6 is added next, and then the order reaches it.
    await call(buyer, "PUT", "/api/vendors/10/terms", { min_order_qty: base.units + 3 });
    const topped = (await trpc<Preview>("purchasing.previewDrafts", { vendor_ids: [10], top_up: true }))
      .data[0]!;
    expect(topped.lines.map((l) => [l.pid, l.top_up])).toEqual([
      [2, 1],
      [5, 6],
      [1, 0],
    ]);
    for (const l of topped.lines) expect(l.qty).toBe(baseQty.get(l.pid)! + l.top_up);
    expect(topped.units).toBe(base.units + 7);
    expect(topped.units).toBeGreaterThanOrEqual(base.units + 3);
    // A preview saves nothing; a viewer may not preview.
    expect(await countPos()).toBe(before);
    expect((await trpc("purchasing.previewDrafts", { vendor_ids: [10] }, viewer)).status).toBe(403);

    // The minimum order value, through REST: 10.00 above the suggestion at 2.50 a unit = 4 units.
    await call(buyer, "PUT", "/api/vendors/10/terms", {
      min_order_qty: null,
      min_order_value: base.value + 10,
    });
    const res = await call(buyer, "POST", "/api/purchase-orders/from-suggestions", {
      vendor_ids: [10],
      top_up: true,
    });
    expect(res.status, res.body).toBe(201);
    const made = (res.json() as { created: { number: string; units: number; value: number }[] }).created;
    expect(made).toHaveLength(1);
    expect(made[0]!.units).toBe(base.units + 7);
    expect(made[0]!.value).toBeGreaterThanOrEqual(base.value + 10);
    const po = (await call(admin, "GET", `/api/purchase-orders/${made[0]!.number}`)).json() as PoDetail;
    expect(Object.fromEntries(po.lines.map((l) => [l.pid, l.ordered_qty]))).toEqual({
      1: baseQty.get(1),
      2: baseQty.get(2)! + 1,
      5: baseQty.get(5)! + 6,
    });
    expect(po.history[0]).toMatchObject({
      action: "created",
      details: {
        top_up: [
          { pid: 2, added: 1 },
          { pid: 5, added: 6 },
        ],
      },
    });
    // Cancelling needs update:purchase_orders, which the buyer lacks; the admin cancels it.
    const cancelled = await call(buyer, "POST", `/api/purchase-orders/${made[0]!.number}/cancel`, {
      reason: "top-up test",
    });
    expect(cancelled.status).toBe(403);
    expect(
      (await call(admin, "POST", `/api/purchase-orders/${made[0]!.number}/cancel`, { reason: "test" }))
        .status,
    ).toBe(200);
    await call(buyer, "PUT", "/api/vendors/10/terms", { min_order_value: null, min_order_qty: 10 });
  });

  let draft = "";

  it("creates one draft per vendor from suggestions, once", async () => {
    const empty = await call(buyer, "POST", "/api/purchase-orders/from-suggestions", {});
    expect(empty.status).toBe(400);
    expect(empty.body).toContain("vendor_ids");
    expect(
      (await call(viewer, "POST", "/api/purchase-orders/from-suggestions", { vendor_ids: [10] })).status,
    ).toBe(403);

    const res = await call(buyer, "POST", "/api/purchase-orders/from-suggestions", { vendor_ids: [10, 11] });
    expect(res.status, res.body).toBe(201);
    const out = res.json() as {
      created: { number: string; vendor_id: number; lines: number }[];
      covered: unknown[];
    };
    expect(out.created).toHaveLength(1);
    expect(out.created[0]).toMatchObject({ vendor_id: 10, lines: 3 });
    expect(out.created[0]!.number).toMatch(/^A\d+$/);
    expect(out.covered).toEqual([{ pid: 3, number: "900" }]);
    draft = out.created[0]!.number;

    const again = (
      await call(buyer, "POST", "/api/purchase-orders/from-suggestions", { vendor_ids: [10, 11] })
    ).json() as {
      created: unknown[];
      covered: { pid: number; number: string }[];
    };
    expect(again.created).toEqual([]);
    expect(
      again.covered
        .filter((c) => c.number === draft)
        .map((c) => c.pid)
        .sort(),
    ).toEqual([1, 2, 5]);
    // Drafts do not count as on order, but the workspace shows the products covered.
    expect((await metrics(1)).on_order).toBe(0);
    const ws = (await call(admin, "GET", "/api/replenishment?vendor_id=10")).json() as ReplenishmentPage;
    expect(ws.items.every((l) => l.covered_by === draft)).toBe(true);
  });

  it("edits a draft: quantities re-rounded to MOQ and case, other vendors' products refused", async () => {
    const po = (await call(admin, "GET", `/api/purchase-orders/${draft}`)).json() as PoDetail;
    expect(po.status).toBe("draft");
    expect(po.history[0]).toMatchObject({ user: "buyer", action: "created" });
    const lines = po.lines.map((l) => ({ pid: l.pid, qty: l.pid === 1 ? 50 : l.ordered_qty }));
    const res = await call(buyer, "PUT", `/api/purchase-orders/${draft}`, {
      lines,
      notes: "Deliver to back door",
    });
    expect(res.status, res.body).toBe(200);
    const out = res.json() as {
      po: PoDetail;
      rounded: { pid: number; qty: number; rounding: string | null }[];
    };
    expect(out.rounded.find((r) => r.pid === 1)).toMatchObject({
      qty: 60,
      rounding: "50 → MOQ 24 → case 12 → 60",
    });
    expect(out.po.lines.find((l) => l.pid === 1)!.ordered_qty).toBe(60);
    expect(out.po.notes).toBe("Deliver to back door");

    const foreign = await call(buyer, "PUT", `/api/purchase-orders/${draft}`, {
      lines: [...lines, { pid: 4, qty: 1 }],
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body).toContain("product 4");
    const zero = await call(buyer, "PUT", `/api/purchase-orders/${draft}`, { lines: [{ pid: 1, qty: 0 }] });
    expect(zero.status).toBe(400);
    const after = (await call(admin, "GET", `/api/purchase-orders/${draft}`)).json() as PoDetail;
    expect(after.lines).toHaveLength(3);
    expect((await call(viewer, "PUT", `/api/purchase-orders/${draft}`, { notes: "x" })).status).toBe(403);

    // An expected date before today (a draft's order date) or not a calendar day: 400, named.
    const past = await call(buyer, "PUT", `/api/purchase-orders/${draft}`, { date_expected: "2020-01-01" });
    expect(past.status).toBe(400);
    expect(past.body).toContain("2020-01-01 is before today");
    const feb30 = await call(buyer, "PUT", `/api/purchase-orders/${draft}`, { date_expected: "2026-02-30" });
    expect(feb30.status).toBe(400);
    expect(feb30.body).toContain("must be a real date");
    // One set earlier that has passed meanwhile keeps the PO from being ordered with it.
    await t.tdb.db.prisma.$executeRawUnsafe(
      "UPDATE app_purchase_orders SET date_expected = DATE '2020-01-01' WHERE number = $1",
      draft,
    );
    const stale = await call(buyer, "POST", `/api/purchase-orders/${draft}/order`);
    expect(stale.status).toBe(400);
    expect(stale.body).toContain("The expected date 2020-01-01 is before today");
    await t.tdb.db.prisma.$executeRawUnsafe(
      "UPDATE app_purchase_orders SET date_expected = NULL WHERE number = $1",
      draft,
    );
    expect(((await call(admin, "GET", `/api/purchase-orders/${draft}`)).json() as PoDetail).status).toBe(
      "draft",
    );
  });

  it("marking ordered puts the quantities on order and the product leaves 'reorder' at once", async () => {
    expect((await metrics(1)).status).toBe("reorder");
    expect((await call(viewer, "POST", `/api/purchase-orders/${draft}/order`)).status).toBe(403);
    const res = await call(buyer, "POST", `/api/purchase-orders/${draft}/order`);
    expect(res.status, res.body).toBe(200);
    const po = res.json() as PoDetail;
    expect(po.status).toBe("ordered");
    expect(po.date_ordered).toBe(new Date().toISOString().slice(0, 10));
    expect(po.date_expected).toBe(addDays(po.date_ordered!, 14));
    const m = await metrics(1);
    expect(m.on_order).toBe(60);
    expect(m.status).not.toBe("reorder");
    expect(m.reorder_qty).toBeLessThan(60);

    const twice = await call(buyer, "POST", `/api/purchase-orders/${draft}/order`);
    expect(twice.status).toBe(409);
    expect(twice.body).toContain("ordered");
    expect(twice.body).toContain("mark as ordered");
  });

  it("receipts: foreign lines, future dates and over-receipts refused; partial then on hand until the next run", async () => {
    const po = (await call(admin, "GET", `/api/purchase-orders/${draft}`)).json() as PoDetail;
    const line1 = po.lines.find((l) => l.pid === 1)!;
    const url = `/api/purchase-orders/${draft}/receipts`;
    expect(
      (await call(buyer, "POST", url, { lines: [{ po_line_id: line1.po_line_id, qty: 1 }] })).status,
    ).toBe(403);
    const foreign = await call(admin, "POST", url, { lines: [{ po_line_id: 9000, qty: 1 }] });
    expect(foreign.status).toBe(400);
    expect(foreign.body).toContain("po_line_id 9000");
    const future = await call(admin, "POST", url, {
      received_date: addDays(new Date().toISOString().slice(0, 10), 1),
      lines: [{ po_line_id: line1.po_line_id, qty: 1 }],
    });
    expect(future.status).toBe(400);
    expect(future.body).toContain("received_date");
    const over = await call(admin, "POST", url, { lines: [{ po_line_id: line1.po_line_id, qty: 61 }] });
    expect(over.status).toBe(409);
    expect(over.body).toContain("confirm_over_receipt");
    expect(
      (await call(admin, "POST", url, { lines: [{ po_line_id: line1.po_line_id, qty: -2 }] })).status,
    ).toBe(400);
    expect((await metrics(1)).on_hand).toBe(28);

    const res = await call(admin, "POST", url, { lines: [{ po_line_id: line1.po_line_id, qty: 24 }] });
    expect(res.status, res.body).toBe(200);
    const after = res.json() as PoDetail;
    expect(after.status).toBe("partial");
    expect(after.lines.find((l) => l.pid === 1)).toMatchObject({ received_qty: 24, open_qty: 36 });
    const m = await metrics(1);
    expect(m.on_hand).toBe(52);
    expect(m.on_order).toBe(36);

    // The product's explanation counts the PO and the receipt made here as the figures do, with no
    // "changed since it ran" note.
    const ex = await call(admin, "GET", "/api/products/1/metrics/explain");
    expect(ex.status, ex.body).toBe(200);
    const figures = (ex.json() as { figures: { key: string; substituted: string; note?: string | null }[] })
      .figures;
    const onOrder = figures.find((f) => f.key === "on_order")!;
    expect(onOrder.substituted).toBe("max(60 − 24, 0) = 36");
    expect(onOrder.note ?? null).toBeNull();
    const onHand = figures.find((f) => f.key === "on_hand")!;
    expect(onHand.substituted).toBe("max(28, 0) + 24 = 52");
    expect(onHand.note ?? null).toBeNull();
  });

  it("close short needs a reason; the open rest no longer counts; a closed PO cannot be cancelled", async () => {
    const url = `/api/purchase-orders/${draft}/close`;
    const blank = await call(admin, "POST", url, { reason: "  " });
    expect(blank.status).toBe(400);
    expect(blank.body).toContain("reason");
    const res = await call(admin, "POST", url, { reason: "Vendor out of stock" });
    expect(res.status, res.body).toBe(200);
    expect((res.json() as PoDetail).status).toBe("closed");
    const m = await metrics(1);
    expect(m.on_order).toBe(0);
    expect(m.on_hand).toBe(52);
    const cancel = await call(admin, "POST", `/api/purchase-orders/${draft}/cancel`, { reason: "x" });
    expect(cancel.status).toBe(409);
    expect(cancel.body).toContain("closed");
    const history = ((await call(admin, "GET", `/api/purchase-orders/${draft}`)).json() as PoDetail).history;
    expect(history.map((h) => h.action)).toEqual(["created", "edited", "ordered", "received", "closed"]);
  });

  it("imported POs are read-only, unknown numbers 404", async () => {
    expect((await call(admin, "GET", "/api/purchase-orders/A99999")).status).toBe(404);
    expect((await call(admin, "GET", "/api/purchase-orders/12345")).status).toBe(404);
    const detail = (await call(admin, "GET", "/api/purchase-orders/900")).json() as PoDetail;
    expect(detail).toMatchObject({ number: "900", source: "imported", status: "ordered" });
    expect(detail.lines[0]).toMatchObject({
      po_line_id: 9000,
      pid: 3,
      ordered_qty: 12,
      received_qty: 0,
      cost_each: 2.5,
    });
    for (const [method, url, body] of [
      ["PUT", "/api/purchase-orders/900", { notes: "x" }],
      ["POST", "/api/purchase-orders/900/order", undefined],
      ["POST", "/api/purchase-orders/900/receipts", { lines: [{ po_line_id: 9000, qty: 1 }] }],
      ["POST", "/api/purchase-orders/900/cancel", { reason: "x" }],
    ] as const) {
      const res = await call(admin, method, url, body);
      expect(res.status, `${method} ${url}`).toBe(409);
      expect(res.body).toContain("imported");
    }
  });

  it("two users cancelling one PO at once: exactly one succeeds", async () => {
    const made = (
      await call(admin, "POST", "/api/purchase-orders/from-suggestions", { pids: [2] })
    ).json() as {
      created: { number: string }[];
    };
    const number = made.created[0]!.number;
    const both = await Promise.all([
      call(admin, "POST", `/api/purchase-orders/${number}/cancel`, { reason: "one" }),
      call(admin, "POST", `/api/purchase-orders/${number}/cancel`, { reason: "two" }),
    ]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
    const po = (await call(admin, "GET", `/api/purchase-orders/${number}`)).json() as PoDetail;
    expect(po.history.filter((h) => h.action === "cancelled")).toHaveLength(1);
    // A stale version is refused too.
    const made2 = (
      await call(admin, "POST", "/api/purchase-orders/from-suggestions", { pids: [2] })
    ).json() as {
      created: { number: string }[];
    };
    const n2 = made2.created[0]!.number;
    const stale = await call(admin, "PUT", `/api/purchase-orders/${n2}`, { version: 99, notes: "x" });
    expect(stale.status).toBe(409);
  });

  it("an ordered PO: update:purchase_orders moves its expected date and notes (lines stay); a receiver records an over-receipt once confirmed, never dated before the order", async () => {
    await t.createUser("updater", ["access:purchase_orders", "update:purchase_orders"]);
    await t.createUser("receiver", ["access:purchase_orders", "receive:purchase_orders"]);
    const updater = (await t.login("updater")).token;
    const receiver = (await t.login("receiver")).token;
    // The draft for product 2 the previous test left open.
    const open = (
      await call(admin, "GET", "/api/purchase-orders?status=draft&vendor_id=10")
    ).json() as PoListPage;
    const number = open.items[0]!.number;
    const url = `/api/purchase-orders/${number}`;
    expect((await call(updater, "POST", `${url}/order`)).status).toBe(403);
    expect((await call(buyer, "POST", `${url}/order`)).status).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    const later = addDays(today, 30);

    expect((await call(buyer, "PUT", url, { date_expected: later })).status).toBe(403);
    const moved = await call(updater, "PUT", url, {
      date_expected: later,
      notes: "Vendor said end of month",
    });
    expect(moved.status, moved.body).toBe(200);
    expect((moved.json() as { po: PoDetail }).po).toMatchObject({
      date_expected: later,
      notes: "Vendor said end of month",
    });
    const po = (await call(admin, "GET", url)).json() as PoDetail;
    const lines = await call(updater, "PUT", url, { lines: [{ pid: 2, qty: 5 }] });
    expect(lines.status).toBe(409);
    expect(lines.body).toContain("only a draft's lines change");
    expect(po.history.at(-1)).toMatchObject({ user: "updater" });

    // Receiving: only with receive:purchase_orders; more than is open needs the confirmation.
    const line = po.lines[0]!;
    const receipt = {
      received_date: today,
      lines: [{ po_line_id: line.po_line_id, qty: line.ordered_qty + 3 }],
    };
    // Back-dated, but not to before the PO was ordered (today).
    const early = await call(receiver, "POST", `${url}/receipts`, {
      ...receipt,
      received_date: addDays(today, -2),
      confirm_over_receipt: true,
    });
    expect(early.status).toBe(400);
    expect(early.body).toContain("received_date");
    expect((await call(updater, "POST", `${url}/receipts`, receipt)).status).toBe(403);
    expect((await call(receiver, "POST", `${url}/receipts`, receipt)).status).toBe(409);
    const before = await metrics(2);
    const ok = await call(receiver, "POST", `${url}/receipts`, { ...receipt, confirm_over_receipt: true });
    expect(ok.status, ok.body).toBe(200);
    const received = ok.json() as PoDetail;
    expect(received.status).toBe("received");
    expect(received.lines[0]).toMatchObject({ received_qty: line.ordered_qty + 3, open_qty: 0 });
    expect(received.receipts.at(-1)).toMatchObject({
      received_date: receipt.received_date,
      qty: line.ordered_qty + 3,
    });
    // On hand grows by what came in; nothing of it is on order any more.
    const after = await metrics(2);
    expect(after.on_hand).toBe(before.on_hand + line.ordered_qty + 3);
    expect(after.on_order).toBe(before.on_order - line.ordered_qty);
  });

  it("the list: both kinds, filters, search, paging", async () => {
    const all = (
      await call(viewer, "GET", "/api/purchase-orders?pageSize=2&sort=number&dir=asc")
    ).json() as PoListPage;
    expect(all.total).toBe(6); // with the cancelled top-up draft and the received one
    expect(all.items).toHaveLength(2);
    const overdue = (await call(viewer, "GET", "/api/purchase-orders?overdue=true")).json() as PoListPage;
    expect(overdue.items.map((i) => i.number)).toEqual(["902"]);
    expect(overdue.items[0]!.overdue).toBe(true);
    const closed = (await call(viewer, "GET", "/api/purchase-orders?status=closed")).json() as PoListPage;
    expect(closed.items.map((i) => i.number)).toEqual([draft]);
    expect(closed.items[0]).toMatchObject({ lines: 3, received_units: 24, source: "app" });
    const vendor = (await call(viewer, "GET", "/api/purchase-orders?vendor_id=11")).json() as PoListPage;
    expect(vendor.items.map((i) => i.number).sort()).toEqual(["900", "902"]);
    const byProduct = (await call(viewer, "GET", "/api/purchase-orders?q=SKU-3")).json() as PoListPage;
    expect(byProduct.items.map((i) => i.number)).toEqual(["900"]);
    const byNumber = (await call(viewer, "GET", `/api/purchase-orders?q=${draft}`)).json() as PoListPage;
    expect(byNumber.items.map((i) => i.number)).toEqual([draft]);
    // A search without letters (a part of a number) finds POs by number and by product SKU alike;
    // a search with letters ignores case.
    const numbers = async (q: string) =>
      (
        (await call(viewer, "GET", `/api/purchase-orders?q=${encodeURIComponent(q)}`)).json() as PoListPage
      ).items
        .map((i) => i.number)
        .sort();
    expect(await numbers("90")).toEqual(["900", "902"]);
    expect(await numbers("-3")).toEqual(["900"]);
    expect(await numbers("sku-3")).toEqual(["900"]);
    expect((await call(viewer, "GET", "/api/purchase-orders?status=lost")).status).toBe(400);
  });

  it("the dashboard's purchase-order tiles equal the totals of the lists they open; /small counts POs due or overdue", async () => {
    const dash = await call(admin, "GET", "/api/dashboard");
    expect(dash.status, dash.body).toBe(200);
    const tiles = (
      dash.json() as {
        purchase_orders: { key: string; count: number; href: string; search: Record<string, string> }[];
      }
    ).purchase_orders;
    expect(tiles.map((t) => t.key)).toEqual([
      "po_overdue",
      "po_due_week",
      "po_open_value",
      "po_late_for_stockout",
    ]);
    for (const tile of tiles) {
      const list = (
        await call(admin, "GET", `/api/purchase-orders?${new URLSearchParams(tile.search)}`)
      ).json() as PoListPage;
      expect(tile.count, tile.key).toBe(list.total);
      expect(tile.href).toBe(`/purchase-orders?${new URLSearchParams(tile.search)}`);
    }
    expect(tiles.find((t) => t.key === "po_overdue")!.count).toBe(1);
    const small = (await call(admin, "GET", "/api/small")).json() as { pos_due_or_overdue: number };
    const due = (await call(admin, "GET", "/api/purchase-orders?due=true")).json() as PoListPage;
    expect(small.pos_due_or_overdue).toBe(due.total);
    expect(due.items.map((i) => i.number)).toContain("902");
    // Without access:purchase_orders the dashboard carries no purchase-order tiles.
    await t.createUser("manager", ["access:dashboard"]);
    const manager = (await t.login("manager")).token;
    expect(
      ((await call(manager, "GET", "/api/dashboard")).json() as { purchase_orders: unknown }).purchase_orders,
    ).toBeNull();
  });

  it("exports the PO as CSV and as a real PDF with the shop and the vendor", async () => {
    const csv = await call(viewer, "GET", `/api/purchase-orders/${draft}/export.csv`);
    expect(csv.status).toBe(200);
    expect(csv.headers["content-type"]).toContain("text/csv");
    expect(csv.body.split("\r\n")[0]).toBe(
      "po_number,vendor,po_line_id,pid,sku,title,ordered_qty,received_qty,cost_each,value",
    );
    expect(csv.body).toContain(`${draft},Vendor A,`);
    const pdf = await call(viewer, "GET", `/api/purchase-orders/${draft}/export.pdf`);
    expect(pdf.status).toBe(200);
    expect(pdf.headers["content-type"]).toBe("application/pdf");
    const bytes = pdf.raw.toString("latin1");
    expect(bytes.startsWith("%PDF-")).toBe(true);
    expect(bytes).toContain("Vendor A");
    expect(bytes).toContain("Paper Corner");
  });

  it("an echoed PO is counted once; receipts recorded here leave on hand after the next run", async () => {
    // A new ordered app PO for product 2, then the shop system echoes it as PO 901.
    const made = (
      await call(admin, "POST", "/api/purchase-orders/from-suggestions", { pids: [5] })
    ).json() as {
      created: { number: string }[];
    };
    const number = made.created[0]!.number;
    const ordered = (await call(admin, "POST", `/api/purchase-orders/${number}/order`)).json() as PoDetail;
    const qty = ordered.lines[0]!.ordered_qty;
    expect((await metrics(5)).on_order).toBe(qty);

    dir = source(
      [`901,10,ordered,${ordered.date_ordered},${ordered.date_expected},${number}`],
      [`9010,901,5,${qty},2.50`],
    );
    const last = await harness.run("update");
    expect(last.status, JSON.stringify(last)).toBe("complete");
    expect((await metrics(5)).on_order).toBe(qty);
    const po = (await call(admin, "GET", `/api/purchase-orders/${number}`)).json() as PoDetail;
    expect(po.superseded_by).toBe("901");
    const imported = (await call(admin, "GET", "/api/purchase-orders/901")).json() as PoDetail;
    expect(imported.reference).toBe(number);
    // Product 1's receipt (24) was recorded before this run: the source's stock now includes it.
    expect((await metrics(1)).on_hand).toBe(28);
    // The app tables survive a Full Reset.
    expect((await harness.run("reset")).status).toBe("complete");
    expect((await call(admin, "GET", `/api/purchase-orders/${draft}`)).status).toBe(200);
    expect((await metrics(5)).on_order).toBe(qty);
  }, 120_000);
});
