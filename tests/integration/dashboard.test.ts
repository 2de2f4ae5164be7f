// The Dashboard's stored series and API over the small fixture with a few more lines, calculated by a
// real Full Reset as of 2026-06-30 12:00: the daily sales series worked out by hand, the KPIs and their
// periods, every tile's count equal to the total of the Products list it opens, the Products list's
// new filters, who sees what, and the /small device links (create, use, scope, revoke).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type {
  CreatedDevice,
  DashboardSummary,
  Kpi,
  SmallDevice,
  SmallSummary,
} from "../../shared/dashboard.ts";
import type { ProductMetricsListInput, ProductMetricsPage } from "../../shared/metrics.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { writeSource } from "../helpers/csv-source.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { type PipelineHarness, pipeline } from "../helpers/pipeline.ts";

const ORDER_LINES = [
  "line_id,order_number,pid,order_date,quantity,price,discount,status",
  "1,SO-1,1001,2026-06-29T10:00:00Z,3,1.50,0.00,completed",
  "2,SO-1,1002,2026-06-29T10:00:00Z,1,5.00,0.50,completed",
  "3,SO-2,1001,2026-06-10T10:00:00Z,2,1.50,,completed",
  "4,SO-3,1001,2026-05-01T10:00:00Z,5,1.40,0,completed",
  "5,SO-4,1001,2025-12-01T10:00:00Z,10,1.50,1.00,completed",
  "6,SO-5,1001,2026-06-28T10:00:00Z,4,1.50,0,cancelled",
  "7,SO-6,1002,2026-06-20T10:00:00Z,2,5.00,0,returned",
  "8,SO-7,1003,2024-07-01T10:00:00Z,1,3.00,0,completed",
  // The same day a year (52 weeks) before D0, and a day of the 7 days before the last 7.
  "9,SO-8,1001,2025-07-01T10:00:00Z,6,1.50,0,completed",
  "10,SO-9,1002,2026-06-18T10:00:00Z,2,5.00,1.00,completed",
  // After the as-of moment (12:00 on D0): not in any figure.
  "11,SO-10,1001,2026-06-30T18:00:00Z,50,1.50,0,completed",
  // Postage on SO-1 (a fee, not merchandise): in total takings and orders only.
  "12,SO-1,1004,2026-06-29T10:00:00Z,1,4.00,0,completed",
];

/** The small fixture's products with their kind, and a postage "product". */
const PRODUCTS = [
  "pid,title,sku,barcode,brand_id,vendor_id,line,description,price,regular_price,cost_price,stock_quantity,moq,case_qty,harmonized_tariff_code,weight,length,width,height,tax_code,size_cat,shipping_restrictions,visible,replenishable,discontinued,created_at,first_received,image_url,kind",
  '1001,Cardstock 12x12 - Blue,CS-1,0123456789012,1,10,Basics,"Heavy, 80lb ""cover"" stock",1.50,2.00,0.60,100,1,25,4802.56,0.5,12,12,0.1,1,S,0,true,true,false,2025-01-01T00:00:00Z,2025-01-05,,',
  "1002,Ink Pad Black,IP-1,,2,11,Inks,,5.00,,2.00,0,,6,,,,,,,,,,,,2025-02-01T00:00:00Z,,,merchandise",
  "1003,Discontinued Glue,GL-1,,1,10,,,3.00,3.00,1.00,5,1,1,,,,,,0,,1,false,false,true,2024-06-01T00:00:00Z,2024-06-10,https://img.example/gl-1.jpg,",
  "1004,Postage,POST,,1,10,,,4.00,,,0,,,,,,,,,,,,,,2024-01-01T00:00:00Z,,,fee",
];

describe("Dashboard: stored series, KPIs, tiles and device links", () => {
  let tdb: TestDatabase;
  let t: TestApp;
  let p: PipelineHarness;
  let admin: string;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    t = await startTestApp({ tdb });
    admin = (await t.login("admin")).token;
    await t.createUser("viewer", ["access:dashboard"]);
    await t.createUser("usermgr", ["settings:user_management"]);
    const dir = writeSource({ "order_lines.csv": ORDER_LINES, "products.csv": PRODUCTS });
    p = await pipeline(tdb.db, () => dir);
  }, 60_000);
  afterAll(async () => {
    await p?.close();
    await t?.close();
  });

  const get = (url: string, token?: string) =>
    t.app.inject({ url, headers: token ? { authorization: `Bearer ${token}` } : {} });
  async function trpc<T>(procedure: string, input: unknown, token = admin): Promise<T> {
    const res = await get(
      `/trpc/${procedure}?input=${encodeURIComponent(JSON.stringify({ json: input }))}`,
      token,
    );
    if (res.statusCode !== 200) throw new Error(`${procedure}: ${res.statusCode} ${res.body}`);
    return res.json().result.data.json as T;
  }
  const products = (input: ProductMetricsListInput) => trpc<ProductMetricsPage>("metrics.products", input);

  it("says there is no data before any calculation", async () => {
    const res = await get("/api/dashboard", admin);
    expect(res.statusCode).toBe(200);
    const body = res.json() as DashboardSummary;
    expect(body.has_data).toBe(false);
    expect(body.tiles).toEqual([]);
    expect(body.data.as_of_day).toBeNull();
    expect(body.data_management_href).toBe("/settings?tab=data");
    const small = (await get("/api/small", admin)).json() as SmallSummary;
    expect(small.has_data).toBe(false);
  });

  describe("after a Full Reset", () => {
    beforeAll(async () => {
      const end = await p.run("reset");
      expect(end.status, JSON.stringify(end)).toBe("complete");
    }, 60_000);

    it("stores the daily sales in total and per brand and vendor", async () => {
      const rows = await tdb.db.prisma.$queryRawUnsafe<Record<string, unknown>[]>(
        `SELECT dim, key, to_char(day, 'YYYY-MM-DD') AS day, units, revenue::float8 AS revenue, takings::float8 AS takings,
           costed_revenue::float8 AS costed_revenue, cogs::float8 AS cogs, orders, returned_units, returned_value::float8 AS returned_value
         FROM sales_daily ORDER BY dim, key, day`,
      );
      const of = (dim: string, key: number) =>
        rows.filter((r) => r.dim === dim && r.key === key).map(({ dim: _d, key: _k, ...r }) => r);
      const day = (
        d: string,
        units: number,
        revenue: number,
        cogs: number,
        orders = 0,
        ret = [0, 0],
        takings = revenue,
      ) => ({
        day: d,
        units,
        revenue,
        takings,
        costed_revenue: revenue,
        cogs,
        orders,
        returned_units: ret[0],
        returned_value: ret[1],
      });
      // 2024-07-01 is the first day of the 731 (D0 − 730 = 2024-06-30 … ); the 18:00 line on D0 is after asOf.
      expect(of("total", 0)).toEqual([
        day("2024-07-01", 1, 3, 1, 1),
        day("2025-07-01", 6, 9, 3.6, 1),
        day("2025-12-01", 10, 14, 6, 1),
        day("2026-05-01", 5, 7, 3, 1),
        day("2026-06-10", 2, 3, 1.2, 1),
        day("2026-06-18", 2, 9, 4, 1),
        day("2026-06-20", 0, 0, 0, 0, [2, 10]),
        // SO-1's three lines: one order; its postage counts in takings only.
        day("2026-06-29", 4, 9, 3.8, 1, [0, 0], 13),
      ]);
      expect(of("vendor", 11)).toEqual([
        day("2026-06-18", 2, 9, 4),
        day("2026-06-20", 0, 0, 0, 0, [2, 10]),
        day("2026-06-29", 1, 4.5, 2),
      ]);
      expect(of("brand", 2)).toEqual(of("vendor", 11));
    });

    it("stores the weekly stock value at cost from the reconstructed stock", async () => {
      const rows = await tdb.db.prisma.$queryRawUnsafe<
        { week_end: string; value_cost: number; units: number }[]
      >(
        `SELECT to_char(week_end, 'YYYY-MM-DD') AS week_end, value_cost::float8 AS value_cost, units
         FROM stock_value_weekly WHERE dim = 'total' ORDER BY week_end DESC LIMIT 2`,
      );
      // D0: 100 × 0.60 + 0 × 2.00 + 5 × 1.00. A week before: 1001 had the 3 sold on 06-29 too
      // (103 × 0.60) and 1002 the 1 (× 2.00).
      expect(rows).toEqual([
        { week_end: "2026-06-30", value_cost: 65, units: 105 },
        { week_end: "2026-06-23", value_cost: 68.8, units: 109 },
      ]);
    });

    it("answers the KPIs of the last 7 and 30 days against the period before and last year", async () => {
      const res = await get("/api/dashboard", admin);
      expect(res.statusCode).toBe(200);
      const body = res.json() as DashboardSummary;
      expect(body.has_data).toBe(true);
      expect(body.data.as_of_day).toBe("2026-06-30");
      // The fixture's data is months older than today: the Products page's warning, here too.
      expect(body.data.stale).toBe(true);
      expect(body.data.warning).toMatch(/^The newest sale in the data is from 2026-06-/);
      expect(body.data.last_run_failed).toBeNull();
      const [week, month] = body.kpis;
      expect(week).toMatchObject({
        days: 7,
        current: { from: "2026-06-24", to: "2026-06-30" },
        previous: { from: "2026-06-17", to: "2026-06-23" },
        last_year: { from: "2025-06-25", to: "2025-07-01" },
      });
      const fig = (figures: Kpi[], key: string) => {
        const k = figures.find((f) => f.key === key)!;
        return [k.current, k.previous, k.last_year];
      };
      expect(fig(week!.figures, "revenue")).toEqual([9, 9, 9]);
      expect(fig(week!.figures, "units")).toEqual([4, 2, 6]);
      expect(fig(week!.figures, "gross_margin")).toEqual([5.2, 5, 5.4]);
      expect(fig(week!.figures, "gross_margin_pct").map((v) => Number(v?.toFixed(4)))).toEqual([
        0.5778, 0.5556, 0.6,
      ]);
      expect(fig(week!.figures, "takings")).toEqual([13, 9, 9]);
      expect(fig(week!.figures, "avg_order_value")).toEqual([13, 9, 9]);
      expect(month).toMatchObject({ days: 30, current: { from: "2026-06-01", to: "2026-06-30" } });
      expect(fig(month!.figures, "revenue")).toEqual([21, 0, 9]);
      expect(fig(month!.figures, "units")).toEqual([8, 0, 6]);
      expect(fig(month!.figures, "takings")).toEqual([25, 0, 9]);
      expect(fig(month!.figures, "avg_order_value")).toEqual([8.33, null, 9]);
      // Stock at each period's end: D0, D0 − 7 (a week end) and D0 − 364.
      expect(fig(week!.figures, "stock_value").slice(0, 2)).toEqual([65, 68.8]);
      for (const k of month!.figures) expect(k.how.length).toBeGreaterThan(10);
    });

    it("counts every tile with the very filter of the list it opens", async () => {
      const body = (await get("/api/dashboard", admin)).json() as DashboardSummary;
      expect(body.tiles.map((x) => x.key)).toEqual([
        "order_now",
        "stockout_before_arrival",
        "a_out_of_stock",
        "overstock",
        "new_without_sales",
      ]);
      let nonZero = 0;
      for (const tile of body.tiles) {
        const list = await products({ ...tile.filter, pageSize: 10 });
        expect(tile.count, tile.key).toBe(list.total);
        expect(
          list.rows.some((r) => r.pid === 1004),
          tile.key,
        ).toBe(false);
        expect(tile.href).toBe(`/products?${new URLSearchParams(tile.search).toString()}`);
        if (tile.count > 0) nonZero++;
      }
      expect(nonZero).toBeGreaterThan(0);
    });

    it("filters the Products list by several statuses, a category subtree, stock and sales age", async () => {
      const all = await products({ pageSize: 10 });
      const statuses = [...new Set(all.rows.map((r) => r.status))].filter(Boolean) as string[];
      const two = await products({ status: statuses.slice(0, 2).join(","), pageSize: 10 });
      expect(two.total).toBe(all.rows.filter((r) => statuses.slice(0, 2).includes(r.status!)).length);
      expect((await products({ category: 100, pageSize: 10 })).rows.map((r) => r.pid).sort()).toEqual([
        1001, 1002,
      ]);
      expect((await products({ category: 101, pageSize: 10 })).rows.map((r) => r.pid)).toEqual([1001]);
      expect((await products({ category: 100, pageSize: 10 })).category_name).toBe("Paper");
      expect((await products({ outOfStock: true, pageSize: 10 })).rows.map((r) => r.pid)).toEqual([1002]);
      // 1003 last sold 2024-07-01; 1001 and 1002 on 2026-06-29.
      expect((await products({ noSalesDays: 2, pageSize: 10 })).rows.map((r) => r.pid)).toEqual([1003]);
      expect((await products({ noSalesDays: 1, pageSize: 10 })).total).toBe(3);
      const bad = await get(
        `/trpc/metrics.products?input=${encodeURIComponent(JSON.stringify({ json: { status: "critical,nope" } }))}`,
        admin,
      );
      expect(bad.statusCode).toBe(400);
      expect(bad.json().error.json.message).toContain('unknown status "nope"');
    });

    it("shows a user with only access:dashboard the figures without links they may not open", async () => {
      const { token } = await t.login("viewer");
      const res = await get("/api/dashboard", token);
      expect(res.statusCode).toBe(200);
      const body = res.json() as DashboardSummary;
      expect(body.tiles.length).toBe(5);
      expect(body.tiles.every((x) => x.href === null)).toBe(true);
      expect(body.data_management_href).toBeNull();
      expect((await get("/trpc/metrics.products", token)).statusCode).toBe(403);
      const mgr = (await t.login("usermgr")).token;
      expect((await get("/api/dashboard", mgr)).statusCode).toBe(403);
      expect((await get("/api/small", mgr)).statusCode).toBe(403);
      expect((await get("/api/dashboard")).statusCode).toBe(401);
    });

    it("device links: created once, open only GET /api/small, last use shown, revoked at once", async () => {
      const mgr = (await t.login("usermgr")).token;
      const viewer = (await t.login("viewer")).token;
      const forbidden = await t.app.inject({
        method: "POST",
        url: "/api/small/devices",
        headers: { authorization: `Bearer ${viewer}` },
        payload: { name: "Shop wall" },
      });
      expect(forbidden.statusCode).toBe(403);
      const empty = await t.app.inject({
        method: "POST",
        url: "/api/small/devices",
        headers: { authorization: `Bearer ${mgr}` },
        payload: { name: "  " },
      });
      expect(empty.statusCode).toBe(400);
      expect(empty.json().message).toContain("name");
      const created = await t.app.inject({
        method: "POST",
        url: "/api/small/devices",
        headers: { authorization: `Bearer ${mgr}` },
        payload: { name: "Shop wall" },
      });
      expect(created.statusCode).toBe(201);
      const device = created.json() as CreatedDevice;
      expect(device.link).toBe(`/small#token=${device.token}`);
      expect(device.last_used_at).toBeNull();
      // Only the hash is stored.
      const stored = await tdb.db.prisma.$queryRawUnsafe<{ token_hash: string }[]>(
        "SELECT token_hash FROM small_devices",
      );
      expect(stored.map((s) => s.token_hash)).not.toContain(device.token);

      const small = await get("/api/small", device.token);
      expect(small.statusCode).toBe(200);
      const figures = small.json() as SmallSummary;
      expect(figures.has_data).toBe(true);
      expect(figures.today).toEqual({ day: "2026-06-30", revenue: 0, units: 0, last_year_revenue: 9 });
      expect(figures.week).toMatchObject({ from: "2026-06-24", revenue: 9, units: 4, last_year_revenue: 9 });
      expect(figures.stock_value).toBe(65);
      expect(figures.top_sellers[0]).toMatchObject({ pid: 1001, units: 3 });

      // Nothing else opens for it: REST routes and tRPC procedures alike.
      for (const url of [
        "/api/dashboard",
        "/api/small/devices",
        "/auth-inv/me",
        "/trpc/dashboard.small",
        "/trpc/dashboard.summary",
        "/trpc/metrics.products",
        "/csv/status",
      ]) {
        expect((await get(url, device.token)).statusCode, url).toBe(401);
      }
      const list = (await get("/api/small/devices", mgr)).json() as SmallDevice[];
      expect(list).toHaveLength(1);
      expect(list[0]).toMatchObject({ id: device.id, name: "Shop wall", created_by: "usermgr" });
      expect(list[0]!.last_used_at).not.toBeNull();
      expect(JSON.stringify(list)).not.toContain(device.token);

      const revoked = await t.app.inject({
        method: "DELETE",
        url: `/api/small/devices/${device.id}`,
        headers: { authorization: `Bearer ${mgr}` },
      });
      expect(revoked.statusCode).toBe(204);
      expect((await get("/api/small", device.token)).statusCode).toBe(401);
      const again = await t.app.inject({
        method: "DELETE",
        url: `/api/small/devices/${device.id}`,
        headers: { authorization: `Bearer ${mgr}` },
      });
      expect(again.statusCode).toBe(404);
    });
  });
});
