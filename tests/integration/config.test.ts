// Forecasting configuration through the app (spec sections 3, 5 and 7 "Forecasting configuration"):
// the legacy REST shapes at /config/* and /api/config/*, the server's validation, the tRPC router,
// the seeded global settings, and which level of the parameters wins for a product.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../server/config.ts";
import { listGlobalSettings, seedGlobalSettings } from "../../server/modules/config/config.service.ts";
import {
  loadGlobalSettingValues,
  resolvePlanningParameters,
} from "../../server/modules/config/planning-parameters.ts";
import { prepareDatabase } from "../../server/startup.ts";
import { GLOBAL_SETTINGS } from "../../shared/settings.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createTestDatabase, testBackend } from "../helpers/db.ts";

const REQUIRED_KEYS = [
  "abc_calculation_basis",
  "abc_a_threshold",
  "abc_b_threshold",
  // XYZ classes: the coefficient-of-variation thresholds.
  "xyz_x_threshold",
  "xyz_y_threshold",
  "default_forecast_method",
  // The Forecasting page's choice of method by backtest.
  "auto_forecast_method",
  "default_lead_time_days",
  "default_days_of_stock",
  "default_safety_stock_days",
  "default_service_level",
  "lead_time_source",
  "low_stock_days",
  "overstock_days",
  // The run's as-of day, the freshness warning and which category types are product categories.
  "calculation_as_of",
  "stale_data_days",
  "product_category_types",
  // The Discount Simulator's default elasticity, cannibalisation and price endings.
  "default_price_elasticity",
  "cannibalisation_share",
  "price_ending",
];

async function seedCatalogue(t: TestApp) {
  const { prisma } = t.tdb.db;
  await prisma.vendor.createMany({
    data: [
      { id: 10, name: "Vendor A", leadTimeDays: 14 },
      { id: 11, name: "Vendor, B", leadTimeDays: 21 },
      { id: 12, name: "Slash/Vendor & Co", leadTimeDays: null },
      { id: 13, name: "100% Vendor_X", leadTimeDays: 0 },
    ],
  });
  const product = (pid: number, title: string, vendorId: number | null) => ({
    pid,
    title,
    vendorId,
    price: "1.00",
    stockQuantity: 0,
    createdAt: new Date("2025-01-01T00:00:00Z"),
  });
  await prisma.product.createMany({
    data: [
      product(1001, "Cardstock 12x12 - Blue", 10),
      product(1002, "Ink Pad Black", 11),
      product(1003, "Discontinued Glue", 12),
      product(1004, "Loose Sticker 100%_off", null),
      product(1005, "Washi Tape", 13),
      ...Array.from({ length: 115 }, (_, i) => product(2001 + i, `Widget ${i + 1}`, 10)),
    ],
  });
}

describe(`forecasting configuration (${testBackend})`, () => {
  let t: TestApp;
  let admin: Record<string, string>;
  let planner: Record<string, string>;

  beforeAll(async () => {
    t = await startTestApp();
    await seedCatalogue(t);
    admin = { authorization: `Bearer ${(await t.login("admin")).token}` };
    await t.createUser("planner", ["access:settings", "settings:products", "settings:vendors"]);
    planner = { authorization: `Bearer ${(await t.login("planner")).token}` };
  });
  afterAll(() => t.close());

  const call = (method: string, url: string, payload?: unknown, headers = admin) =>
    t.app.inject({
      method: method as "GET",
      url,
      headers,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

  describe("global settings", () => {
    it("seeds every key with its default and description, and never overwrites a changed value", async () => {
      const { prisma } = t.tdb.db;
      expect(await prisma.globalSetting.count()).toBe(0);
      await seedGlobalSettings(t.tdb.db);
      const rows = await prisma.globalSetting.findMany();
      expect(rows.map((r) => r.settingKey).sort()).toEqual([...REQUIRED_KEYS].sort());
      for (const r of rows) expect(r.description, r.settingKey).toBeTruthy();
      expect(rows.find((r) => r.settingKey === "default_service_level")?.settingValue).toBe("0.95");

      await prisma.globalSetting.update({
        where: { settingKey: "default_lead_time_days" },
        data: { settingValue: "9", description: "stale text" },
      });
      await prisma.globalSetting.delete({ where: { settingKey: "overstock_days" } });
      await seedGlobalSettings(t.tdb.db);
      const again = await prisma.globalSetting.findMany();
      expect(again).toHaveLength(REQUIRED_KEYS.length);
      const lead = again.find((r) => r.settingKey === "default_lead_time_days")!;
      expect(lead.settingValue).toBe("9");
      expect(lead.description).toBe(
        GLOBAL_SETTINGS.find((d) => d.key === "default_lead_time_days")!.description,
      );
      expect(again.find((r) => r.settingKey === "overstock_days")?.settingValue).toBe("180");
      await prisma.globalSetting.update({
        where: { settingKey: "default_lead_time_days" },
        data: { settingValue: "14" },
      });
    });

    it("keys containing 'threshold' are 0–1 shares, or (XYZ) numbers with their own range; defaults pass their own validation", () => {
      for (const d of GLOBAL_SETTINGS) {
        const xyz = d.key.startsWith("xyz_");
        expect(d.key.includes("threshold"), d.key).toBe(d.kind === "share" || xyz);
        if (xyz) expect([d.kind, d.range], d.key).toEqual(["number", { min: 0, max: 10 }]);
      }
      const abc = GLOBAL_SETTINGS.find((d) => d.key === "abc_calculation_basis")!;
      expect(abc.options).toEqual([
        { value: "revenue_30d", label: "Revenue (30 days)" },
        { value: "sales_30d", label: "Sales Quantity (30 days)" },
        { value: "lifetime_revenue", label: "Lifetime Revenue" },
      ]);
      expect(
        GLOBAL_SETTINGS.find((d) => d.key === "default_forecast_method")!.options!.map((o) => o.value),
      ).toEqual(["standard", "seasonal"]);
    });

    it("GET /config/global and /api/config/global answer the list of settings", async () => {
      for (const url of ["/config/global", "/api/config/global"]) {
        const res = await call("GET", url);
        expect(res.statusCode, url).toBe(200);
        const list = res.json() as { setting_key: string; setting_value: string; description: string }[];
        expect(list.map((s) => s.setting_key)).toEqual(REQUIRED_KEYS);
        expect(list[0]).toEqual({
          setting_key: "abc_calculation_basis",
          setting_value: "revenue_30d",
          description: expect.any(String),
        });
        for (const s of list) expect(typeof s.setting_value).toBe("string");
      }
    });

    it("PUT /config/global saves the whole list and answers it", async () => {
      const list = (await call("GET", "/config/global")).json() as {
        setting_key: string;
        setting_value: string;
      }[];
      const changed = list.map((s) =>
        s.setting_key === "abc_a_threshold"
          ? { ...s, setting_value: "0.7" }
          : s.setting_key === "default_lead_time_days"
            ? { ...s, setting_value: 21 }
            : s.setting_key === "abc_calculation_basis"
              ? { ...s, setting_value: "sales_30d" }
              : s,
      );
      const res = await call("PUT", "/config/global", changed);
      expect(res.statusCode).toBe(200);
      const saved = res.json() as { setting_key: string; setting_value: string }[];
      expect(saved.find((s) => s.setting_key === "abc_a_threshold")?.setting_value).toBe("0.7");
      expect(saved.find((s) => s.setting_key === "default_lead_time_days")?.setting_value).toBe("21");
      const values = await loadGlobalSettingValues(t.tdb.db);
      expect(values).toMatchObject({
        abc_a_threshold: 0.7,
        default_lead_time_days: 21,
        abc_calculation_basis: "sales_30d",
      });
      // A subset is fine too (also under /api).
      const partial = await call("PUT", "/api/config/global", [
        { setting_key: "default_lead_time_days", setting_value: "14" },
      ]);
      expect(partial.statusCode).toBe(200);
      expect((await loadGlobalSettingValues(t.tdb.db)).default_lead_time_days).toBe(14);
    });

    it.each([
      [
        [{ setting_key: "abc_a_threshold", setting_value: "1.2" }],
        "abc_a_threshold: must be a number from 0 to 1",
      ],
      [
        [{ setting_key: "abc_b_threshold", setting_value: "-0.1" }],
        "abc_b_threshold: must be a number from 0 to 1",
      ],
      [
        [{ setting_key: "abc_b_threshold", setting_value: "0.5" }],
        "abc_b_threshold: A threshold must not exceed B threshold",
      ],
      [
        [
          { setting_key: "abc_a_threshold", setting_value: "0.9" },
          { setting_key: "abc_b_threshold", setting_value: "0.85" },
        ],
        "abc_a_threshold: A threshold must not exceed B threshold",
      ],
      [
        [{ setting_key: "default_days_of_stock", setting_value: "-1" }],
        "default_days_of_stock: must be a whole number of days from 1 to 3650",
      ],
      [
        [{ setting_key: "default_days_of_stock", setting_value: "" }],
        "default_days_of_stock: must be a whole number of days from 1 to 3650",
      ],
      // Values that fit no column of the calculations: each setting has a range.
      [
        [{ setting_key: "default_lead_time_days", setting_value: 2147483648 }],
        "default_lead_time_days: must be a whole number of days from 1 to 3650",
      ],
      [
        [{ setting_key: "default_lead_time_days", setting_value: "0" }],
        "default_lead_time_days: must be a whole number of days from 1 to 3650",
      ],
      [
        [{ setting_key: "default_safety_stock_days", setting_value: "1e308" }],
        "default_safety_stock_days: must be a whole number of days from 0 to 3650",
      ],
      [
        [{ setting_key: "overstock_days", setting_value: 3651 }],
        "overstock_days: must be a whole number of days from 0 to 3650",
      ],
      [
        [{ setting_key: "abc_b_threshold", setting_value: "1.5" }],
        "abc_b_threshold: must be a number from 0 to 1",
      ],
      [
        [{ setting_key: "default_service_level", setting_value: "1" }],
        "default_service_level: must be a number between 0 and 1 (not 0 or 1), e.g. 0.95",
      ],
      [
        [{ setting_key: "default_forecast_method", setting_value: "magic" }],
        "default_forecast_method: must be one of standard, seasonal",
      ],
      [
        [{ setting_key: "abc_calculation_basis", setting_value: "profit" }],
        "abc_calculation_basis: must be one of revenue_30d, sales_30d, lifetime_revenue",
      ],
      [[{ setting_key: "no_such_key", setting_value: "1" }], 'no_such_key: unknown setting "no_such_key"'],
      [
        [{ setting_key: "product_category_types", setting_value: "10, zone" }],
        "product_category_types: must be whole numbers separated by commas, e.g. 10,11,12,13",
      ],
      [
        [{ setting_key: "calculation_as_of", setting_value: "yesterday" }],
        "calculation_as_of: must be one of today, latest_data",
      ],
      [
        [{ setting_key: "stale_data_days", setting_value: "1.5" }],
        "stale_data_days: must be a whole number of days from 0 to 3650",
      ],
      [
        [{ setting_key: "low_stock_days", setting_value: "500" }],
        "low_stock_days: Low stock days must be below overstock days",
      ],
      [{ not: "a list" }, expect.stringContaining("body: expected an array, received an object")],
    ])("PUT /config/global refuses %j with 400 naming the field", async (body, message) => {
      const before = await t.tdb.db.prisma.globalSetting.findMany({ orderBy: { settingKey: "asc" } });
      const res = await call("PUT", "/config/global", body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: message, message });
      // Nothing was written.
      expect(await t.tdb.db.prisma.globalSetting.findMany({ orderBy: { settingKey: "asc" } })).toEqual(
        before,
      );
    });

    it("product_category_types is stored as sorted whole numbers without repeats", async () => {
      const res = await call("PUT", "/config/global", [
        { setting_key: "product_category_types", setting_value: " 13,10, 11,10 " },
      ]);
      expect(res.statusCode).toBe(200);
      const list = res.json() as { setting_key: string; setting_value: string }[];
      expect(list.find((s) => s.setting_key === "product_category_types")?.setting_value).toBe("10,11,13");
      await call("PUT", "/config/global", [
        { setting_key: "product_category_types", setting_value: "10,11,12,13" },
      ]);
    });

    it("tRPC config.global / config.updateGlobal, with the field in the error data", async () => {
      const ok = await t.app.inject({
        method: "POST",
        url: "/trpc/config.updateGlobal",
        headers: admin,
        payload: { json: { settings: [{ setting_key: "overstock_days", setting_value: 200 }] } },
      });
      expect(ok.statusCode).toBe(200);
      expect(
        ok.json().result.data.json.find((s: { setting_key: string }) => s.setting_key === "overstock_days"),
      ).toMatchObject({
        setting_value: "200",
      });
      const bad = await t.app.inject({
        method: "POST",
        url: "/trpc/config.updateGlobal",
        headers: admin,
        payload: { json: { settings: [{ setting_key: "abc_a_threshold", setting_value: 0.99 }] } },
      });
      expect(bad.statusCode).toBe(400);
      const err = bad.json().error.json;
      expect(err.message).toBe("abc_a_threshold: A threshold must not exceed B threshold");
      expect(err.data).toMatchObject({ code: "BAD_REQUEST", httpStatus: 400, field: "abc_a_threshold" });
      const list = await t.app.inject({ url: "/trpc/config.global", headers: admin });
      expect(list.json().result.data.json).toEqual(await listGlobalSettings(t.tdb.db));
    });

    it("settings:global is needed for global settings (a product/vendor planner gets 403)", async () => {
      expect((await call("GET", "/config/global", undefined, planner)).statusCode).toBe(403);
      expect((await call("PUT", "/config/global", [], planner)).statusCode).toBe(403);
      expect((await t.app.inject({ url: "/config/global" })).statusCode).toBe(401);
    });
  });

  describe("product settings", () => {
    type Item = Record<string, unknown> & { pid: number };
    const list = async (query: string, url = "/config/products") => {
      const res = await call("GET", `${url}${query}`, undefined, planner);
      expect(res.statusCode, query).toBe(200);
      return res.json() as { items: Item[]; total: number };
    };

    it("GET /config/products pages 50 at a time with items and total", async () => {
      const first = await list("?page=1&pageSize=50");
      expect(first.total).toBe(120);
      expect(first.items).toHaveLength(50);
      expect(first.items[0]).toEqual({
        pid: 1001,
        product_name: "Cardstock 12x12 - Blue",
        lead_time_days: null,
        days_of_stock: null,
        safety_stock: 0,
        forecast_method: null,
        exclude_from_forecast: false,
        vendor: "Vendor A",
        has_override: false,
        inherited: {
          lead_time_days: 14,
          lead_time_source: "vendor_quoted",
          days_of_stock: 30,
          days_of_stock_source: "global",
          forecast_method: "standard",
        },
      });
      const third = await list("?page=3&pageSize=50");
      expect(third.items.map((i) => i.pid)).toEqual(Array.from({ length: 20 }, (_, i) => 2096 + i));
      expect((await list("?page=9")).items).toEqual([]);
      // Defaults: page 1, 50 a page; also under /api.
      const plain = await list("", "/api/config/products");
      expect(plain.items).toHaveLength(50);
      expect(plain.total).toBe(120);
    });

    it("answers an import of the products at once (no kept list of pids from before it)", async () => {
      const before = await list("?page=3&pageSize=50");
      // An import commits: the products and their sync timestamp in one transaction.
      const importing = (sql: string) =>
        t.tdb.db.prisma.$transaction(async (tx) => {
          await tx.$executeRawUnsafe(sql);
          await tx.$executeRawUnsafe(
            `INSERT INTO sync_status (table_name, last_sync_timestamp) VALUES ('products', now())
             ON CONFLICT (table_name) DO UPDATE SET last_sync_timestamp =
               GREATEST(now(), sync_status.last_sync_timestamp + interval '1 second')`,
          );
        });
      await importing(
        `INSERT INTO products (pid, title, price, stock_quantity, created_at) VALUES (1000, 'Imported First', 1, 0, now())`,
      );
      try {
        const after = await list("?page=3&pageSize=50");
        expect(after.total).toBe(before.total + 1);
        expect(after.items.map((i) => i.pid)).toEqual([
          before.items[0]!.pid - 1,
          ...before.items.map((i) => i.pid),
        ]);
        expect((await list("?page=1&pageSize=50")).items[0]).toMatchObject({
          pid: 1000,
          product_name: "Imported First",
        });
      } finally {
        await importing("DELETE FROM products WHERE pid = 1000");
      }
      expect(await list("?page=3&pageSize=50")).toEqual(before);
    });

    it("searches by id (prefix) or by name (any case, wildcards literal)", async () => {
      // 100x by id, and "Widget 100" by name.
      expect((await list("?search=100")).items.map((i) => i.pid)).toEqual([
        1001, 1002, 1003, 1004, 1005, 2100,
      ]);
      expect((await list("?search=ink%20PAD")).items.map((i) => i.pid)).toEqual([1002]);
      const widgets = await list("?search=widget&pageSize=10&page=2");
      expect(widgets.total).toBe(115);
      expect(widgets.items.map((i) => i.pid)).toEqual(Array.from({ length: 10 }, (_, i) => 2011 + i));
      expect((await list(`?search=${encodeURIComponent("100%_")}`)).items.map((i) => i.pid)).toEqual([1004]);
      expect((await list("?search=nothing-like-this")).total).toBe(0);
    });

    it("rejects a bad page query with 400", async () => {
      for (const q of ["?page=0", "?pageSize=0", "?page=abc", "?pageSize=100000"]) {
        const res = await call("GET", `/config/products${q}`, undefined, planner);
        expect(res.statusCode, q).toBe(400);
        expect(res.json().error).toMatch(/^(page|pageSize): /);
      }
    });

    it("PUT /config/products/{pid} stores the override and answers the row", async () => {
      const body = {
        lead_time_days: 9,
        days_of_stock: 45,
        safety_stock: 12,
        forecast_method: "seasonal",
        exclude_from_forecast: true,
      };
      const res = await call("PUT", "/config/products/1002", body, planner);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        pid: 1002,
        product_name: "Ink Pad Black",
        ...body,
        has_override: true,
      });
      const stored = await t.tdb.db.prisma.productSetting.findUnique({ where: { pid: 1002 } });
      expect(stored).toMatchObject({
        leadTimeDays: 9,
        daysOfStock: 45,
        safetyStock: 12,
        forecastMethod: "seasonal",
        excludeFromForecast: true,
      });
      // Blank (null) fields mean "use the default".
      const blank = await call(
        "PUT",
        "/api/config/products/1002",
        {
          lead_time_days: null,
          days_of_stock: null,
          safety_stock: 0,
          forecast_method: null,
          exclude_from_forecast: false,
        },
        planner,
      );
      expect(blank.json()).toMatchObject({
        lead_time_days: null,
        days_of_stock: null,
        forecast_method: null,
      });
    });

    it.each([
      [{ lead_time_days: 0 }, "lead_time_days: must be a whole number, 1 or more, or blank"],
      [{ lead_time_days: 1.5 }, "lead_time_days: must be a whole number, 1 or more, or blank"],
      [{ days_of_stock: -3 }, "days_of_stock: must be a whole number, 1 or more, or blank"],
      [{ days_of_stock: "ten" }, "days_of_stock: must be a whole number, 1 or more, or blank"],
      [{ safety_stock: -1 }, "safety_stock: must be a whole number, 0 or more"],
      [{ safety_stock: 2.5 }, "safety_stock: must be a whole number, 0 or more"],
      [{ forecast_method: "magic" }, "forecast_method: must be standard, seasonal or null"],
      [{ exclude_from_forecast: "yes" }, "exclude_from_forecast: must be true or false"],
    ])("PUT /config/products/{pid} refuses %j with 400 naming the field", async (body, message) => {
      const res = await call("PUT", "/config/products/1001", body, planner);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: message, message });
    });

    it("unknown pid → 404 for save and reset; a non-numeric pid → 400", async () => {
      const save = await call("PUT", "/config/products/999999", { lead_time_days: 3 }, planner);
      expect(save.statusCode).toBe(404);
      expect(save.json()).toEqual({ error: "Product 999999 not found", message: "Product 999999 not found" });
      expect((await call("POST", "/config/products/999999/reset", undefined, planner)).statusCode).toBe(404);
      expect((await call("PUT", "/config/products/abc", {}, planner)).statusCode).toBe(400);
    });

    it("POST /config/products/{pid}/reset removes the override", async () => {
      await call("PUT", "/config/products/1003", { lead_time_days: 5, safety_stock: 3 }, planner);
      const res = await call("POST", "/config/products/1003/reset", undefined, planner);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        pid: 1003,
        lead_time_days: null,
        safety_stock: 0,
        has_override: false,
        inherited: { lead_time_days: 14, lead_time_source: "global" },
      });
      expect(await t.tdb.db.prisma.productSetting.findUnique({ where: { pid: 1003 } })).toBeNull();
      const again = await call("POST", "/api/config/products/1003/reset", undefined, planner);
      expect(again.statusCode).toBe(200);
    });

    it("tRPC config.products / updateProduct / resetProduct", async () => {
      const page = await t.app.inject({
        url: `/trpc/config.products?input=${encodeURIComponent(JSON.stringify({ json: { page: 2, pageSize: 50, search: "" } }))}`,
        headers: planner,
      });
      expect(page.json().result.data.json).toMatchObject({ total: 120 });
      expect(page.json().result.data.json.items[0].pid).toBe(2046);
      const update = await t.app.inject({
        method: "POST",
        url: "/trpc/config.updateProduct",
        headers: planner,
        payload: { json: { pid: 1001, settings: { lead_time_days: 0 } } },
      });
      expect(update.statusCode).toBe(400);
      expect(update.json().error.json.data.field).toBe("settings.lead_time_days");
      const missing = await t.app.inject({
        method: "POST",
        url: "/trpc/config.resetProduct",
        headers: planner,
        payload: { json: { pid: 4242 } },
      });
      expect(missing.statusCode).toBe(404);
    });
  });

  describe("vendor settings", () => {
    const list = async (query: string, url = "/config/vendors") => {
      const res = await call("GET", `${url}${query}`, undefined, planner);
      expect(res.statusCode, query).toBe(200);
      return res.json() as { items: Record<string, unknown>[]; total: number; defaults: unknown };
    };

    it("GET /config/vendors answers items and total, sorted by name, searchable", async () => {
      const all = await list("?page=1&pageSize=50");
      expect(all.total).toBe(4);
      expect(all.items.map((v) => v.vendor)).toEqual([
        "100% Vendor_X",
        "Slash/Vendor & Co",
        "Vendor A",
        "Vendor, B",
      ]);
      expect(all.items[2]).toEqual({
        vendor: "Vendor A",
        default_lead_time_days: null,
        default_days_of_stock: null,
        quoted_lead_time_days: 14,
        product_count: 116,
        has_override: false,
      });
      expect(all.defaults).toEqual({ lead_time_days: 14, days_of_stock: 30 });
      expect((await list("?search=vendor,")).items.map((v) => v.vendor)).toEqual(["Vendor, B"]);
      expect(
        (await list(`?search=${encodeURIComponent("100%")}`, "/api/config/vendors")).items.map(
          (v) => v.vendor,
        ),
      ).toEqual(["100% Vendor_X"]);
      const paged = await list("?page=2&pageSize=3");
      expect(paged).toMatchObject({ total: 4, items: [{ vendor: "Vendor, B" }] });
    });

    it("PUT and reset with URL-encoded vendor names (comma, slash, ampersand)", async () => {
      for (const name of ["Vendor, B", "Slash/Vendor & Co"]) {
        const path = `/config/vendors/${encodeURIComponent(name)}`;
        const res = await call(
          "PUT",
          path,
          { default_lead_time_days: 30, default_days_of_stock: 60 },
          planner,
        );
        expect(res.statusCode, name).toBe(200);
        expect(res.json()).toMatchObject({
          vendor: name,
          default_lead_time_days: 30,
          default_days_of_stock: 60,
          has_override: true,
        });
        expect(await t.tdb.db.prisma.vendorSetting.findUnique({ where: { vendor: name } })).toMatchObject({
          defaultLeadTimeDays: 30,
          defaultDaysOfStock: 60,
        });
        const reset = await call("POST", `/api${path}/reset`, undefined, planner);
        expect(reset.statusCode).toBe(200);
        expect(reset.json()).toMatchObject({
          vendor: name,
          default_lead_time_days: null,
          has_override: false,
        });
        expect(await t.tdb.db.prisma.vendorSetting.findUnique({ where: { vendor: name } })).toBeNull();
      }
    });

    it("validates like the form (integers ≥ 1 or blank) and answers 404 for an unknown vendor", async () => {
      const bad = await call("PUT", "/config/vendors/Vendor%20A", { default_days_of_stock: 0 }, planner);
      expect(bad.statusCode).toBe(400);
      expect(bad.json().error).toBe("default_days_of_stock: must be a whole number, 1 or more, or blank");
      const blank = await call(
        "PUT",
        "/config/vendors/Vendor%20A",
        { default_lead_time_days: null },
        planner,
      );
      expect(blank.statusCode).toBe(200);
      const unknown = await call(
        "PUT",
        "/config/vendors/Nobody%20Inc",
        { default_lead_time_days: 3 },
        planner,
      );
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json().error).toBe('Vendor "Nobody Inc" not found');
      expect((await call("POST", "/config/vendors/Nobody%20Inc/reset", undefined, planner)).statusCode).toBe(
        404,
      );
    });

    it("tRPC config.vendors / updateVendor / resetVendor take the plain name", async () => {
      const res = await t.app.inject({
        method: "POST",
        url: "/trpc/config.updateVendor",
        headers: planner,
        payload: {
          json: { vendor: "Vendor, B", settings: { default_lead_time_days: 8, default_days_of_stock: null } },
        },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().result.data.json).toMatchObject({ vendor: "Vendor, B", default_lead_time_days: 8 });
      const reset = await t.app.inject({
        method: "POST",
        url: "/trpc/config.resetVendor",
        headers: planner,
        payload: { json: { vendor: "Vendor, B" } },
      });
      expect(reset.json().result.data.json).toMatchObject({ default_lead_time_days: null });
    });
  });

  describe("effective planning parameters", () => {
    it("each level wins where it should: product → vendor setting → vendor quote → global", async () => {
      const { prisma } = t.tdb.db;
      await prisma.productSetting.deleteMany();
      await prisma.vendorSetting.deleteMany();
      await seedGlobalSettings(t.tdb.db);
      await call("PUT", "/config/global", [
        { setting_key: "default_lead_time_days", setting_value: "20" },
        { setting_key: "default_days_of_stock", setting_value: "40" },
        { setting_key: "default_forecast_method", setting_value: "seasonal" },
        { setting_key: "default_safety_stock_days", setting_value: "5" },
        { setting_key: "default_service_level", setting_value: "0.9" },
      ]);
      // 1001 (Vendor A, quotes 14): a product override on lead time and method only.
      await call(
        "PUT",
        "/config/products/1001",
        { lead_time_days: 3, safety_stock: 7, forecast_method: "standard" },
        planner,
      );
      // Vendor, B (quotes 21): vendor settings for both.
      await call(
        "PUT",
        `/config/vendors/${encodeURIComponent("Vendor, B")}`,
        {
          default_lead_time_days: 25,
          default_days_of_stock: 50,
        },
        planner,
      );
      // 1005's vendor quotes 0 days (no quote); 1004 has no vendor; 1003's vendor quotes nothing.
      await call("PUT", "/config/products/1004", { exclude_from_forecast: true }, planner);

      const params = await resolvePlanningParameters(t.tdb.db, [1001, 1002, 1003, 1004, 1005, 424242]);
      const by = new Map(params.map((p) => [p.pid, p]));
      expect(params.map((p) => p.pid)).toEqual([1001, 1002, 1003, 1004, 1005]);

      expect(by.get(1001)).toEqual({
        pid: 1001,
        vendor: "Vendor A",
        lead_time_days: 3,
        days_of_stock: 40,
        safety_stock: 7,
        safety_stock_days: 5,
        service_level: 0.9,
        forecast_method: "standard",
        excluded: false,
        sources: {
          lead_time_days: "product",
          days_of_stock: "global",
          safety_stock: "product",
          forecast_method: "product",
          excluded: "product",
        },
        inherited: {
          lead_time_days: 14,
          lead_time_source: "vendor_quoted",
          days_of_stock: 40,
          days_of_stock_source: "global",
          forecast_method: "seasonal",
        },
      });
      expect(by.get(1002)).toMatchObject({
        vendor: "Vendor, B",
        lead_time_days: 25,
        days_of_stock: 50,
        safety_stock: 0,
        forecast_method: "seasonal",
        excluded: false,
        sources: {
          lead_time_days: "vendor",
          days_of_stock: "vendor",
          safety_stock: "global",
          forecast_method: "global",
          excluded: "global",
        },
      });
      expect(by.get(1003)).toMatchObject({
        lead_time_days: 20,
        days_of_stock: 40,
        sources: { lead_time_days: "global", days_of_stock: "global" },
      });
      expect(by.get(1004)).toMatchObject({
        vendor: null,
        lead_time_days: 20,
        excluded: true,
        sources: { lead_time_days: "global", excluded: "product" },
      });
      expect(by.get(1005)).toMatchObject({ lead_time_days: 20, sources: { lead_time_days: "global" } });

      // A product override beats a vendor setting.
      await call("PUT", "/config/products/1002", { days_of_stock: 11 }, planner);
      const [p1002] = await resolvePlanningParameters(t.tdb.db, [1002]);
      expect(p1002).toMatchObject({
        lead_time_days: 25,
        days_of_stock: 11,
        sources: { lead_time_days: "vendor", days_of_stock: "product" },
        inherited: { days_of_stock: 50, days_of_stock_source: "vendor" },
      });

      // Every product at once, and through a pipeline connection (SqlConnection) as well.
      const all = await resolvePlanningParameters(t.tdb.db);
      expect(all).toHaveLength(120);
      expect(all.filter((p) => p.sources.lead_time_days === "vendor_quoted")).toHaveLength(115);
      const conn = await t.tdb.db.connect();
      try {
        expect(await resolvePlanningParameters(conn, [1001, 1002])).toEqual([by.get(1001), p1002]);
      } finally {
        await conn.release();
      }
      expect(await resolvePlanningParameters(t.tdb.db, [])).toEqual([]);
    });

    it("falls back to the catalogue defaults when settings_global is empty", async () => {
      await t.tdb.db.prisma.globalSetting.deleteMany();
      const [p] = await resolvePlanningParameters(t.tdb.db, [1003]);
      expect(p).toMatchObject({
        lead_time_days: 14,
        days_of_stock: 30,
        safety_stock_days: 7,
        service_level: 0.95,
        forecast_method: "standard",
      });
      await seedGlobalSettings(t.tdb.db);
    });
  });

  it("counts the settings tables under Config Tables", async () => {
    const res = await call("GET", "/csv/status/table-counts");
    const names = (res.json().config as { table_name: string }[]).map((c) => c.table_name);
    expect(names).toEqual(
      expect.arrayContaining(["settings_global", "settings_product", "settings_vendor", "chat_users"]),
    );
  });
});

describe(`server start (${testBackend})`, () => {
  it("seeds the global settings on a new database, and keeps changed values on the next start", async () => {
    const tdb = await createTestDatabase({ migrated: false });
    try {
      const log = { info: () => {}, warn: () => {} };
      const config = loadConfig({ ADMIN_PASSWORD: "secret123" });
      await prepareDatabase(tdb.db, config, log);
      const seeded = await tdb.db.prisma.globalSetting.findMany();
      expect(seeded.map((s) => s.settingKey).sort()).toEqual([...REQUIRED_KEYS].sort());
      await tdb.db.prisma.globalSetting.update({
        where: { settingKey: "abc_b_threshold" },
        data: { settingValue: "0.9" },
      });
      await prepareDatabase(tdb.db, config, log);
      const again = await tdb.db.prisma.globalSetting.findUniqueOrThrow({
        where: { settingKey: "abc_b_threshold" },
      });
      expect(again.settingValue).toBe("0.9");
    } finally {
      await tdb.drop();
    }
  });
});
