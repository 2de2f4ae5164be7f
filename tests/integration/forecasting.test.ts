// The Forecasting page's service through its REST paths and tRPC, over a Full Reset of the worked
// fixture (tests/fixtures/source-planning, as of 2026-06-30, a Tuesday). Calendar weeks: the as-of
// week starts Monday 2026-06-29, the forecast weeks are the 13 Mondays 2026-07-06 … 2026-09-28, and
// r = 2026-07-06 − 2026-07-01 = 5 days, so calendar week j = (2·w_j + 5·w_{j+1}) ÷ 7 of the engine's
// weeks w (week 13 repeated). The expected figures are worked out here from the stored engine weeks.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type {
  AccuracyPage,
  ExceptionsPage,
  ForecastGridPage,
  ForecastProductDetail,
  OverrideResult,
} from "../../shared/forecasting.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { testBackend } from "../helpers/db.ts";
import { type PipelineHarness, pipeline } from "../helpers/pipeline.ts";

const WEEKS = Array.from({ length: 13 }, (_, i) =>
  new Date(Date.parse("2026-07-06T00:00:00Z") + 7 * i * 86_400_000).toISOString().slice(0, 10),
);
const cal = (w: number[]) => w.map((_, j) => (2 * w[j]! + 5 * w[Math.min(j + 1, 12)]!) / 7);
const close = (a: number, b: number, eps = 0.011): void => {
  expect(Math.abs(a - b)).toBeLessThanOrEqual(eps);
};

describe(`forecasting API (${testBackend})`, () => {
  let t: TestApp;
  let p: PipelineHarness;
  let admin: string;
  let viewer: string;

  const call = async (method: "GET" | "POST" | "DELETE", url: string, token = admin, payload?: unknown) => {
    const res = await t.app.inject({
      method,
      url,
      payload: payload as object,
      headers: { authorization: `Bearer ${token}` },
    });
    return { status: res.statusCode, body: res.body ? res.json() : undefined };
  };
  const q = <T>(sql: string, ...params: unknown[]) => t.tdb.db.prisma.$queryRawUnsafe<T[]>(sql, ...params);
  const count = async (sql: string) => (await q<{ n: number }>(sql))[0]?.n ?? -1;
  const weekly = async (pid: number) =>
    (
      await q<{ weekly: number[] }>("SELECT weekly FROM product_forecasts WHERE pid = $1", pid)
    )[0]!.weekly.map(Number);
  const plan = async (pid: number) =>
    (
      await q<{ f_h: number; reorder_qty: number; h: number }>(
        "SELECT forecast_horizon_units::float8 AS f_h, reorder_qty, horizon_days::float8 AS h FROM product_metrics WHERE pid = $1",
        pid,
      )
    )[0]!;

  beforeAll(async () => {
    t = await startTestApp();
    p = await pipeline(t.tdb.db, () => path.resolve("tests/fixtures/source-planning"));
    expect(await p.run("reset")).toMatchObject({ status: "complete" });
    admin = (await t.login("admin")).token;
    await t.createUser("viewer", ["access:forecasting"]);
    viewer = (await t.login("viewer")).token;
  }, 120_000);
  afterAll(async () => {
    await p?.close();
    await t?.close();
  });

  it("lists products over calendar weeks: history, system, final, paging and filters", async () => {
    const { status, body } = await call("GET", "/api/forecasting/products?pageSize=10", viewer);
    expect(status).toBe(200);
    const page = body as ForecastGridPage;
    const n = await count("SELECT count(*)::int AS n FROM product_forecasts");
    expect(page.total).toBe(n);
    expect(page.weeks.forecast).toEqual(WEEKS);
    expect(page.weeks.history[11]).toBe("2026-06-22");
    expect(page.weeks.as_of).toBe("2026-06-30");
    // Sorted by forecast value (units × cost), highest first.
    const values = page.items.map((r) => r.forecast_value);
    expect(values).toEqual([...values].sort((a, b) => b - a));
    const row = page.items.find((r) => r.id === 1010)!;
    const expected = cal(await weekly(1010));
    for (const [j, s] of row.system.entries()) close(s, expected[j]!);
    expect(row.final).toEqual(row.system);
    expect(row.override.every((o) => o === null)).toBe(true);
    // History: 1010's completed lines in the week of 2026-06-22, counted by hand from the CSV.
    const lines = fs
      .readFileSync("tests/fixtures/source-planning/order_lines.csv", "utf8")
      .trim()
      .split("\n")
      .slice(1)
      .map((l) => l.split(","));
    const sold = lines
      .filter((l) => l[2] === "1010" && l[7] === "completed" && l[3]! >= "2026-06-22" && l[3]! < "2026-06-29")
      .reduce((a, l) => a + Number(l[4]), 0);
    expect(row.history[11]).toBe(sold);

    const vendor = (await call("GET", "/api/forecasting/products?vendorId=10", viewer))
      .body as ForecastGridPage;
    expect(vendor.items.length).toBeGreaterThan(0);
    expect(vendor.items.every((r) => r.vendor === "Northwind Paper")).toBe(true);
    const cat = (await call("GET", "/api/forecasting/products?categoryId=10", viewer))
      .body as ForecastGridPage;
    const m = await count(
      "SELECT count(DISTINCT pc.pid)::int AS n FROM product_categories pc JOIN product_forecasts f ON f.pid = pc.pid WHERE pc.category_id IN (10, 100)",
    );
    expect(cat.total).toBe(m);
    // Categories rolled up the tree: Paper (10) holds its own products and Cardstock's (100).
    const cats = await call("GET", "/api/forecasting/products?level=category&pageSize=50", viewer);
    expect(cats.status, JSON.stringify(cats.body)).toBe(200);
    const paper = (cats.body as ForecastGridPage).items.find((r) => r.id === 10)!;
    expect(paper.title).toBe("Paper");
    expect(paper.products).toBe(m);
    const memberRows = (await call("GET", "/api/forecasting/products?categoryId=10&pageSize=50", viewer))
      .body as ForecastGridPage;
    for (const [j, s] of paper.system.entries())
      close(
        s,
        memberRows.items.reduce((a, r) => a + r.system[j]!, 0),
        0.05,
      );
    // Its history weeks are its products' (stored with each forecast), week by week.
    for (const [j, h] of paper.history.entries())
      expect(h).toBe(memberRows.items.reduce((a, r) => a + r.history[j]!, 0));
    expect(paper.history.some((h) => h > 0)).toBe(true);
    const byVendor = await call("GET", "/api/forecasting/products?level=vendor&search=north", viewer);
    expect(byVendor.status, JSON.stringify(byVendor.body)).toBe(200);
    expect((byVendor.body as ForecastGridPage).items.map((r) => r.title)).toEqual(["Northwind Paper"]);
    const bad = await call("GET", "/api/forecasting/products?sort=nonsense", viewer);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/sort/);
    // Sorted by error (backtest WAPE), highest first, blanks last; MASE beside it (§12.7: 1003's
    // WAPE 0.2794, MASE 13.690702 ÷ 14 = 0.9779; 1006's WAPE 1.4303, MASE 0.7152).
    const byError = (await call("GET", "/api/forecasting/products?sort=error&pageSize=50", viewer))
      .body as ForecastGridPage;
    const errors = byError.items.map((r) => r.wape);
    const firstBlank = errors.indexOf(null);
    if (firstBlank >= 0) expect(errors.slice(firstBlank).every((e) => e === null)).toBe(true);
    const known = errors.filter((e): e is number => e !== null);
    expect(known).toEqual([...known].sort((a, b) => b - a));
    const e1006 = byError.items.find((r) => r.id === 1006)!;
    close(e1006.wape!, 1.4303, 0.0001);
    close(e1006.mase!, 193.094158 / 270, 0.0001);
    close(byError.items.find((r) => r.id === 1003)!.mase!, 13.690702 / 14, 0.0001);
    const big = (await call("GET", "/api/forecasting/products?bigError=true", viewer))
      .body as ForecastGridPage;
    expect(big.items.map((r) => r.id)).toContain(1006);
    expect(big.items.every((r) => (r.wape ?? 0) > 0.5)).toBe(true);
    // The XYZ filter reads product_metrics' stored class once the dashboards' calculation stores it;
    // before, it is refused by name.
    const [xyzCol] = await t.tdb.db.prisma.$queryRawUnsafe<{ name: string }[]>(
      "SELECT column_name AS name FROM information_schema.columns WHERE table_name = 'product_metrics' AND column_name IN ('xyz_class', 'xyz')",
    );
    const xyz = await call("GET", "/api/forecasting/products?xyz=X", viewer);
    if (xyzCol) {
      expect(xyz.status, JSON.stringify(xyz.body)).toBe(200);
      expect((xyz.body as ForecastGridPage).total).toBe(
        await count(
          `SELECT count(*)::int AS n FROM product_forecasts f JOIN product_metrics m ON m.pid = f.pid WHERE m.${xyzCol.name} = 'X'`,
        ),
      );
    } else {
      expect(xyz.status).toBe(400);
      expect(xyz.body.message).toMatch(/xyz: XYZ classes are not calculated yet/);
    }
  });

  it("a category override of +20 % spreads to its products, moves their reorder figures, and is removed whole", async () => {
    const groupsBefore = await count("SELECT count(*)::int AS n FROM forecast_override_groups");
    const before = await plan(1010);
    const w = cal(await weekly(1010));
    const denied = await call("POST", "/api/forecasting/overrides", viewer, {
      scope: { category_id: 10 },
      weeks: [{ week_start: WEEKS[0], pct: 20 }],
      reason: "Back to school",
    });
    expect(denied.status).toBe(403);

    const res = await call("POST", "/api/forecasting/overrides", admin, {
      scope: { category_id: 10 },
      weeks: [
        { week_start: WEEKS[0], pct: 20 },
        { week_start: WEEKS[1], pct: 20 },
      ],
      reason: "Back to school",
      expires_on: "2026-12-31",
    });
    expect(res.status).toBe(201);
    const made = res.body as OverrideResult;
    expect(made.id).toEqual(expect.any(Number));
    const mine = made.products.find((x) => x.pid === 1010)!;
    close(mine.weeks[0]!.final, w[0]! * 1.2);
    close(mine.weeks[1]!.final, w[1]! * 1.2);

    // Planning at once: F(H) gains 0.2 × week j × (days of week j inside H) ÷ 7; week 1 starts 5
    // days after D0 + 1, week 2 twelve.
    const after = await plan(1010);
    const overlap = (s: number) => Math.min(Math.max(after.h - s, 0), 7) / 7;
    close(after.f_h, before.f_h + 0.2 * w[0]! * overlap(5) + 0.2 * w[1]! * overlap(12), 0.02);
    expect(after.f_h).toBeGreaterThan(before.f_h);

    const grid = (await call("GET", "/api/forecasting/products?categoryId=10&hasOverride=true", viewer))
      .body as ForecastGridPage;
    expect(grid.items.map((r) => r.id)).toContain(1010);
    const row = grid.items.find((r) => r.id === 1010)!;
    close(row.override[0]!, w[0]! * 1.2);
    expect(row.override[2]).toBeNull();
    // The grid's stored figures moved with the override (they sort and filter the grid).
    close(
      row.forecast_units,
      row.final.reduce((a, b) => a + b, 0),
      0.05,
    );
    const stored = async () =>
      (
        await t.tdb.db.prisma.$queryRawUnsafe<
          { system_units: number; final_units: number; final_value: number; has_override: boolean }[]
        >(
          "SELECT system_units, final_units, final_value, has_override FROM product_forecasts WHERE pid = 1010",
        )
      )[0]!;
    const s1 = await stored();
    expect(s1.has_override).toBe(true);
    close(s1.final_units, s1.system_units + 0.2 * (w[0]! + w[1]!), 0.01);
    close(s1.final_value, row.forecast_value, 0.05);

    const detail = (await call("GET", "/api/forecasting/products/1010", viewer))
      .body as ForecastProductDetail;
    expect(detail.overrides.map((o) => o.reason)).toEqual(["Back to school"]);
    expect(detail.history).toHaveLength(104);
    close(detail.forecast[0]!.final, w[0]! * 1.2);

    const del = await call("DELETE", `/api/forecasting/overrides/${made.id}`);
    expect(del.status).toBe(200);
    close((await plan(1010)).f_h, before.f_h);
    const s2 = await stored();
    expect(s2.has_override).toBe(false);
    close(s2.final_units, s2.system_units, 1e-9);
    const none = (await call("GET", "/api/forecasting/products?categoryId=10&hasOverride=true", viewer))
      .body as ForecastGridPage;
    expect(none.items.map((r) => r.id)).not.toContain(1010);
    expect((await call("DELETE", `/api/forecasting/overrides/${made.id}`)).status).toBe(404);
    const groupsAfter = await count("SELECT count(*)::int AS n FROM forecast_override_groups");
    expect(groupsAfter).toBe(groupsBefore);
  });

  it("units on a brand are spread by share of the forecast; a product override raises its reorder quantity", async () => {
    const res = await call("POST", "/api/forecasting/overrides", admin, {
      scope: { brand_id: 1 },
      weeks: [{ week_start: WEEKS[2], units: 100 }],
      reason: "Promotion",
    });
    expect(res.status).toBe(201);
    const made = res.body as OverrideResult;
    const total = made.products.reduce((a, x) => a + (x.weeks[0]!.units ?? 0), 0);
    close(total, 100, 0.05);
    const sys = made.products.map((x) => x.weeks[0]!.system);
    const sum = sys.reduce((a, b) => a + b, 0);
    if (sum > 0)
      for (const [i, x] of made.products.entries()) close(x.weeks[0]!.units!, (100 * sys[i]!) / sum, 0.01);
    await call("DELETE", `/api/forecasting/overrides/${made.id}`);

    const before = await plan(1010);
    const big = await call("POST", "/api/forecasting/overrides", admin, {
      scope: { pid: 1010 },
      weeks: [{ week_start: WEEKS[0], units: 5000 }],
      reason: "Store opening",
    });
    expect(big.status).toBe(201);
    expect((await plan(1010)).reorder_qty).toBeGreaterThan(before.reorder_qty);
    // Overrides survive a Full Reset, and the planning of that run applies them.
    expect(await p.run("reset")).toMatchObject({ status: "complete" });
    expect((await plan(1010)).reorder_qty).toBeGreaterThan(before.reorder_qty);
    await call("DELETE", `/api/forecasting/overrides/${(big.body as OverrideResult).id}`);
    expect((await plan(1010)).reorder_qty).toBe(before.reorder_qty);
  });

  it("an override shows in the grid at once even when the last run's timestamp is ahead of the clock", async () => {
    // Clock skew: the last calculation was stamped an hour ahead of this server's clock.
    const saved = await q<{ module_name: string; t: Date }>(
      "SELECT module_name, last_calculation_timestamp AS t FROM calculate_status",
    );
    await t.tdb.db.prisma.$executeRawUnsafe(
      "UPDATE calculate_status SET last_calculation_timestamp = last_calculation_timestamp + interval '1 hour'",
    );
    const url = "/api/forecasting/products?search=1010";
    const row = async () => (await call("GET", url)).body.items.find((r: { id: number }) => r.id === 1010);
    const before = await row();
    expect(before.override.every((o: number | null) => o === null)).toBe(true);
    const made = await call("POST", "/api/forecasting/overrides", admin, {
      scope: { pid: 1010 },
      weeks: [{ week_start: WEEKS[0], units: 4321 }],
      reason: "Skew",
    });
    expect(made.status).toBe(201);
    // The page kept before the override is not served again: the version moved.
    expect((await row()).override[0]).toBe(4321);
    await call("DELETE", `/api/forecasting/overrides/${(made.body as OverrideResult).id}`);
    expect((await row()).override[0]).toBeNull();
    for (const s of saved)
      await t.tdb.db.prisma.$executeRawUnsafe(
        "UPDATE calculate_status SET last_calculation_timestamp = $2 WHERE module_name = $1",
        s.module_name,
        s.t,
      );
  });

  it("refuses bad overrides with a 400 naming what is wrong, and saves nothing", async () => {
    const before = await count("SELECT count(*)::int AS n FROM forecast_override_groups");
    const cases: [unknown, RegExp][] = [
      [
        { scope: { pid: 1010 }, weeks: [{ week_start: "2026-06-29", units: 5 }], reason: "x" },
        /weeks\.0\.week_start: 2026-06-29 is in the past/,
      ],
      [
        { scope: { pid: 1010 }, weeks: [{ week_start: "2026-10-05", units: 5 }], reason: "x" },
        /weeks\.0\.week_start: .*beyond the 13-week horizon/,
      ],
      [
        { scope: { pid: 1010 }, weeks: [{ week_start: "2026-07-07", units: 5 }], reason: "x" },
        /not a Monday/,
      ],
      [{ scope: { pid: 1010 }, weeks: [{ week_start: WEEKS[0], units: -1 }], reason: "x" }, /weeks\.0/],
      [{ scope: { pid: 1010 }, weeks: [{ week_start: WEEKS[0], pct: -150 }], reason: "x" }, /weeks\.0/],
      [{ scope: { pid: 1010 }, weeks: [{ week_start: WEEKS[0], units: 5 }] }, /reason: a reason is required/],
      [
        { scope: { pid: 1010 }, weeks: [{ week_start: WEEKS[0], units: 5 }], reason: "  " },
        /reason: a reason is required/,
      ],
      [
        { scope: { category_id: 999 }, weeks: [{ week_start: WEEKS[0], units: 5 }], reason: "x" },
        /scope\.category_id: category 999 not found/,
      ],
      [{ scope: { shelf: 3 }, weeks: [{ week_start: WEEKS[0], units: 5 }], reason: "x" }, /scope/],
      [
        {
          scope: { pid: 1010 },
          weeks: [
            { week_start: WEEKS[0], units: 5 },
            { week_start: WEEKS[40 % 13], units: -2 },
          ],
          reason: "x",
        },
        /weeks\.1/,
      ],
    ];
    for (const [payload, message] of cases) {
      const res = await call("POST", "/api/forecasting/overrides", admin, payload);
      expect(res.status, JSON.stringify(payload)).toBe(400);
      expect(res.body.message).toMatch(message);
    }
    const after = await count("SELECT count(*)::int AS n FROM forecast_override_groups");
    expect(after).toBe(before);
  });

  it("a bulk override of many rows: units and % apply to each product, hold at each one's last 4 weeks' average", async () => {
    const lines = fs
      .readFileSync("tests/fixtures/source-planning/order_lines.csv", "utf8")
      .trim()
      .split("\n")
      .slice(1)
      .map((l) => l.split(","));
    // The last 4 complete weeks before D0's week (2026-06-29): 2026-06-01 … 2026-06-28.
    const lastFour = (pid: number) =>
      lines
        .filter(
          (l) =>
            l[2] === String(pid) && l[7] === "completed" && l[3]! >= "2026-06-01" && l[3]! < "2026-06-29",
        )
        .reduce((a, l) => a + Number(l[4]), 0) / 4;
    const w1001 = cal(await weekly(1001));
    const before = await plan(1010);
    const res = await call("POST", "/api/forecasting/overrides", admin, {
      scope: { pids: [1010, 1001, 1010] },
      weeks: [
        { week_start: WEEKS[3], units: 5 },
        { week_start: WEEKS[4], pct: -50 },
        { week_start: WEEKS[5], hold: "last_4_weeks" },
      ],
      reason: "Range review",
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const made = res.body as OverrideResult;
    expect(made.products.map((p) => p.pid)).toEqual([1001, 1010]);
    for (const p of made.products) {
      expect(p.weeks[0]!.final).toBe(5); // not spread: each product 5 units
      close(p.weeks[1]!.final, p.weeks[1]!.system * 0.5);
      close(p.weeks[2]!.final, lastFour(p.pid), 0.005);
    }
    close(made.products[0]!.weeks[1]!.final, w1001[4]! * 0.5);
    expect((await plan(1010)).f_h).not.toBe(before.f_h);
    const list = (await call("GET", "/trpc/forecasting.overrides?input=%7B%22json%22%3A%7B%7D%7D", viewer))
      .body as {
      result: {
        data: { json: { items: { id: number; scope_kind: string; scope_name: string; products: number }[] } };
      };
    };
    const group = list.result.data.json.items.find((g) => g.id === made.id)!;
    expect(group).toMatchObject({ scope_kind: "products", scope_name: "2 products", products: 2 });

    // Refused whole, naming the field: an unknown product, none at all, a bad week.
    const bad = async (scope: unknown, message: RegExp) => {
      const r = await call("POST", "/api/forecasting/overrides", admin, {
        scope,
        weeks: [{ week_start: WEEKS[3], units: 5 }],
        reason: "x",
      });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.message).toMatch(message);
    };
    const groups = await count("SELECT count(*)::int AS n FROM forecast_override_groups");
    await bad({ pids: [1001, 999999] }, /^scope\.pids: product 999999 not found$/);
    await bad({ pids: [] }, /^scope\.pids: at least one product is required$/);
    const weekBad = await call("POST", "/api/forecasting/overrides", admin, {
      scope: { pids: [1001] },
      weeks: [{ week_start: WEEKS[3], hold: "forever" }],
      reason: "x",
    });
    expect(weekBad.status).toBe(400);
    expect(await count("SELECT count(*)::int AS n FROM forecast_override_groups")).toBe(groups);

    expect((await call("DELETE", `/api/forecasting/overrides/${made.id}`)).status).toBe(200);
    close((await plan(1010)).f_h, before.f_h);
  });

  it("stores one snapshot per product per week, kept across runs, and measures accuracy at the lead-time lag", async () => {
    const products = await count("SELECT count(*)::int AS n FROM product_forecasts");
    const snap = () =>
      q<{ n: number }>(
        "SELECT count(*)::int AS n FROM forecast_snapshots WHERE snapshot_week = '2026-06-29'",
      );
    expect((await snap())[0]!.n).toBe(products);
    expect(await p.run("update")).toMatchObject({ status: "complete" });
    expect((await snap())[0]!.n).toBe(products);

    // A snapshot from an earlier week, set by hand: system 10 and final 12 every week.
    const { lead } = (
      await q<{ lead: number }>("SELECT lead_time_days::float8 AS lead FROM product_metrics WHERE pid = 1010")
    )[0]!;
    const lag = Math.min(13, Math.max(1, Math.ceil(lead / 7)));
    const target = "2026-06-15";
    const snapWeek = new Date(Date.parse(`${target}T00:00:00Z`) - 7 * lag * 86_400_000)
      .toISOString()
      .slice(0, 10);
    await t.tdb.db.prisma.$executeRawUnsafe(
      `INSERT INTO forecast_snapshots (snapshot_week, pid, system, final, method)
       VALUES ($1::date, 1010, array_fill(10::real, ARRAY[13]), array_fill(12::real, ARRAY[13]), 'standard')`,
      snapWeek,
    );
    expect(await p.run("reset")).toMatchObject({ status: "complete" });
    const lines = fs
      .readFileSync("tests/fixtures/source-planning/order_lines.csv", "utf8")
      .trim()
      .split("\n")
      .slice(1)
      .map((l) => l.split(","));
    const soldIn = (from: string) => {
      const to = new Date(Date.parse(`${from}T00:00:00Z`) + 7 * 86_400_000).toISOString().slice(0, 10);
      return lines
        .filter((l) => l[2] === "1010" && l[7] === "completed" && l[3]! >= from && l[3]! < to)
        .reduce((a, l) => a + Number(l[4]), 0);
    };
    const A = soldIn(target);
    const naive = soldIn(
      new Date(Date.parse(`${snapWeek}T00:00:00Z`) - 7 * 86_400_000).toISOString().slice(0, 10),
    );
    expect(A).toBeGreaterThan(0);
    const res = await call("GET", "/api/forecasting/accuracy?group=product", viewer);
    expect(res.status).toBe(200);
    const acc = res.body as AccuracyPage;
    const row = acc.items.find((r) => r.key === "1010")!;
    expect(row.weeks).toBe(1);
    close(row.wape!, Math.abs(A - 10) / A, 1e-6);
    close(row.bias!, (10 - A) / A, 1e-6);
    close(row.final_wape!, Math.abs(A - 12) / A, 1e-6);
    close(row.fva!, (Math.abs(A - 10) - Math.abs(A - 12)) / A, 1e-6);
    if (A !== naive) close(row.mase!, Math.abs(A - 10) / Math.abs(A - naive), 1e-6);
    expect(acc.trend).toEqual([
      { week_start: target, wape: row.wape, bias: row.bias, final_wape: row.final_wape },
    ]);
    expect((await call("GET", "/api/forecasting/accuracy?group=nonsense", viewer)).status).toBe(400);
  });
  it("lists the exceptions: error × value, bias beyond ±20 %, stock-outs, new products on a profile, sudden changes", async () => {
    const get = async (kind: string) => {
      const res = await call("GET", `/api/forecasting/exceptions?kind=${kind}&pageSize=200`, viewer);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body as ExceptionsPage;
    };
    // A sudden change: last week's snapshot (2026-06-22) said three times 1010's forecast now; the
    // next calculation stores the change, final units of the 12 shared weeks ÷ the snapshot's − 1.
    const [{ units12 } = { units12: 0 }] = await q<{ units12: number }>(
      `SELECT final_units - (weekly[13] * 2 + weekly[13] * 5) / 7.0 AS units12 FROM product_forecasts WHERE pid = 1010`,
    );
    await t.tdb.db.prisma.$executeRawUnsafe(
      `INSERT INTO forecast_snapshots (snapshot_week, pid, system, final, method)
       VALUES ('2026-06-22', 1010, $1::real[], $1::real[], 'standard')
       ON CONFLICT (snapshot_week, pid) DO UPDATE SET system = EXCLUDED.system, final = EXCLUDED.final`,
      Array(13).fill((3 * units12) / 12),
    );
    expect(await p.run("update")).toMatchObject({ status: "complete" });
    // Demand hidden by stock-outs: 1003's 10 days out of stock (§12.5) are under the 14 that list a
    // product; 1009 is set to 30 here, as a calculation would store it.
    await t.tdb.db.prisma.$executeRawUnsafe(
      "UPDATE product_metrics SET out_of_stock_days_90 = 30 WHERE pid = 1009",
    );

    const errors = await get("error_value");
    const risk = errors.items.map((r) => r.error_value!);
    expect(risk).toEqual([...risk].sort((a, b) => b - a));
    const e1006 = errors.items.find((r) => r.pid === 1006)!;
    close(e1006.error_value!, 1.4303 * e1006.forecast_value, 0.05);
    expect(e1006.reason).toMatch(/^Backtest error 143 % of \$[\d,]+ forecast: \$[\d,]+ at risk$/);
    // Constant series backtest exactly (WAPE 0): nothing at risk, not listed.
    expect(errors.items.map((r) => r.pid)).not.toContain(1001);
    // A page past the last is empty and still says how many there are.
    const page2 = (
      await call("GET", "/api/forecasting/exceptions?kind=error_value&page=2&pageSize=10", viewer)
    ).body as ExceptionsPage;
    expect(page2.items).toEqual([]);
    expect(page2.total).toBe(errors.total);
    expect(errors.total).toBe(errors.items.length);

    const bias = await get("bias");
    expect(bias.items.every((r) => Math.abs(r.bias!) > 0.2)).toBe(true);
    expect(bias.items.map((r) => r.pid)).not.toContain(1006); // bias −0.102
    expect(bias.total).toBe(
      await count("SELECT count(*)::int AS n FROM product_forecasts WHERE abs(bias) > 0.2"),
    );

    const stock = await get("stockouts");
    expect(stock.items.map((r) => r.pid)).toEqual([1009]);
    expect(stock.items[0]!.reason).toBe("Out of stock 30 of the last 90 days: sales understate demand");

    const fresh = await get("new_profile");
    expect(fresh.items.map((r) => r.pid)).toEqual([1004]);

    const sudden = await get("sudden_change");
    const row = sudden.items.find((r) => r.pid === 1010)!;
    close(row.change!, 1 / 3 - 1, 0.001);
    expect(row.reason).toBe("Forecast -66.7 % against last week's snapshot");
    expect(sudden.counts).toEqual({
      error_value: errors.total,
      bias: bias.total,
      stockouts: 1,
      new_profile: 1,
      sudden_change: sudden.total,
    });
    expect((await call("GET", "/api/forecasting/exceptions?kind=nonsense", viewer)).status).toBe(400);
  });
});
