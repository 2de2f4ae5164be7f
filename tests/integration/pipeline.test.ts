import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IMPORTED_TABLES } from "../../server/jobs/tables.ts";
import { createTestDatabase, type TestDatabase, testBackend } from "../helpers/db.ts";
import { copyFixture, editFile, FIXTURE_DIR, type PipelineHarness, pipeline } from "../helpers/pipeline.ts";

const num = (v: unknown) => Number(v);

describe(`data pipeline on the hand-made fixture (${testBackend})`, () => {
  let tdb: TestDatabase;
  let p: PipelineHarness;
  let dir = FIXTURE_DIR;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    p = await pipeline(tdb.db, () => dir);
  });
  afterAll(async () => {
    await p.close();
    await tdb.drop();
  });

  async function snapshot() {
    const { prisma } = tdb.db;
    return {
      products: await prisma.product.findMany({ orderBy: { pid: "asc" } }),
      orders: await prisma.orderLine.count(),
      metrics: await prisma.productMetrics.findMany({
        orderBy: { pid: "asc" },
        omit: { calculatedAt: true },
      }),
    };
  }

  it("Full Reset imports every row value by value", async () => {
    const final = await p.run("reset");
    expect(final).toMatchObject({
      status: "complete",
      operation: "Full reset complete",
      type: "reset",
      error: null,
    });
    const { prisma } = tdb.db;

    expect(await prisma.vendor.findMany({ orderBy: { id: "asc" } })).toEqual([
      { id: 10, name: "Vendor A", email: null, phone: null, leadTimeDays: 14 },
      { id: 11, name: "Vendor, B", email: "b@example.com", phone: "555-0100", leadTimeDays: 21 },
    ]);
    expect(await prisma.category.findMany({ orderBy: { id: "asc" } })).toEqual([
      { id: 100, parentId: null, name: "Paper", type: 10, level: 1 },
      { id: 101, parentId: 100, name: "Cardstock", type: 11, level: 2 },
      { id: 200, parentId: null, name: "Internal", type: 20, level: 1 },
    ]);
    const [p1001, p1002, p1003] = await prisma.product.findMany({ orderBy: { pid: "asc" } });
    expect(p1001).toMatchObject({
      pid: 1001,
      title: "Cardstock 12x12 - Blue",
      sku: "CS-1",
      barcode: "0123456789012",
      brandId: 1,
      vendorId: 10,
      line: "Basics",
      description: 'Heavy, 80lb "cover" stock',
      stockQuantity: 100,
      moq: 1,
      caseQty: 25,
      harmonizedTariffCode: "4802.56",
      taxCode: "1",
      sizeCat: "S",
      shippingRestrictions: "0",
      visible: true,
      replenishable: true,
      discontinued: false,
      createdAt: new Date("2025-01-01T00:00:00Z"),
      firstReceived: new Date("2025-01-05T00:00:00Z"),
      imageUrl: null,
    });
    expect([num(p1001!.price), num(p1001!.regularPrice), num(p1001!.costPrice), num(p1001!.weight)]).toEqual([
      1.5, 2, 0.6, 0.5,
    ]);
    // Empty fields take the documented defaults.
    expect(p1002).toMatchObject({
      moq: 1,
      caseQty: 6,
      taxCode: "0",
      shippingRestrictions: "0",
      visible: true,
      replenishable: true,
      discontinued: false,
      regularPrice: null,
      sizeCat: null,
      firstReceived: null,
    });
    expect(p1003).toMatchObject({
      visible: false,
      replenishable: false,
      discontinued: true,
      shippingRestrictions: "1",
    });
    expect(await prisma.productCategory.count()).toBe(3);
    const line2 = await prisma.orderLine.findUniqueOrThrow({ where: { id: 2 } });
    expect([
      line2.orderNumber,
      line2.pid,
      line2.quantity,
      num(line2.price),
      num(line2.discount),
      line2.status,
    ]).toEqual(["SO-1", 1002, 1, 5, 0.5, "completed"]);
    expect(num((await prisma.orderLine.findUniqueOrThrow({ where: { id: 3 } })).discount)).toBe(0);
    expect(await prisma.purchaseOrder.count()).toBe(4);
    expect(await prisma.receiving.count()).toBe(2);
  });

  it("calculates per-product sales and stock figures", async () => {
    const m = await tdb.db.prisma.productMetrics.findMany({ orderBy: { pid: "asc" } });
    const row = (pid: number) => {
      const r = m.find((x) => x.pid === pid)!;
      return {
        onHand: r.onHand,
        onOrder: r.onOrder,
        stockValueCost: num(r.stockValueCost),
        stockValueRetail: num(r.stockValueRetail),
        units: [r.units7d, r.units30d, r.units90d, r.units365d],
        revenue: [num(r.revenue7d), num(r.revenue30d), num(r.revenue90d), num(r.revenue365d)],
        totalSold: r.totalSold,
        lifetimeRevenue: num(r.lifetimeRevenue),
        firstSold: r.firstSold?.toISOString().slice(0, 10),
        dateLastSold: r.dateLastSold?.toISOString().slice(0, 10),
      };
    };
    expect(row(1001)).toEqual({
      onHand: 100,
      onOrder: 30, // PO 503 is open; 500 is received, 502 cancelled
      stockValueCost: 60,
      stockValueRetail: 150,
      units: [3, 5, 10, 20], // the cancelled line is not a sale
      revenue: [4.5, 7.5, 14.5, 28.5],
      totalSold: 20,
      lifetimeRevenue: 28.5,
      firstSold: "2025-12-01",
      dateLastSold: "2026-06-29",
    });
    expect(row(1002)).toMatchObject({
      onHand: 0,
      onOrder: 14,
      units: [1, 1, 1, 1],
      revenue: [4.5, 4.5, 4.5, 4.5],
      totalSold: 1,
    });
    expect(row(1003)).toMatchObject({
      onOrder: 5,
      units: [0, 0, 0, 0],
      totalSold: 1,
      lifetimeRevenue: 3,
      dateLastSold: "2024-07-01",
    });
  });

  it("records history with steps, per-table details and timings, and sync/calculation times", async () => {
    const { prisma } = tdb.db;
    const imp = await prisma.importHistory.findFirstOrThrow({ orderBy: { id: "desc" } });
    expect(imp).toMatchObject({
      status: "completed",
      recordsAdded: 38,
      recordsUpdated: 0,
      recordsDeleted: 0,
      totalProcessed: 38,
    });
    const info = imp.additionalInfo as {
      type: string;
      completed_steps: { name: string; duration: number; rowsAffected: number; status: string }[];
      details: { tables: Record<string, { added: number }>; beside?: { modules_s: Record<string, number> } };
      step_timings: Record<string, number>;
    };
    expect(info.type).toBe("reset");
    // On PostgreSQL the forecast ran on the second connection, beside the other modules.
    if (testBackend === "postgres") expect(info.details.beside?.modules_s.forecast).toBeGreaterThan(0);
    else expect(info.details.beside).toBeUndefined();
    expect(info.completed_steps.map((s) => s.name)).toContain("Load products.csv");
    expect(info.completed_steps.find((s) => s.name === "Load order_lines.csv")).toMatchObject({
      rowsAffected: 8,
      status: "completed",
    });
    expect(info.details.tables.products).toEqual({ added: 3, updated: 0, deleted: 0, skipped: 0, total: 3 });
    // (jsonb keeps object keys in its own order)
    expect(Object.keys(info.step_timings).sort()).toEqual(info.completed_steps.map((s) => s.name).sort());
    const calc = await prisma.calculateHistory.findFirstOrThrow({ orderBy: { id: "desc" } });
    expect(calc).toMatchObject({
      status: "completed",
      processedProducts: 3,
      totalProducts: 3,
      totalOrders: 8,
      totalPurchaseOrders: 4,
    });
    expect(
      (calc.additionalInfo as { completed_steps: { name: string }[] }).completed_steps.map((s) => s.name),
    ).toEqual([
      "Calculate product_metrics",
      "Calculate stock_history",
      "Calculate xyz",
      "Calculate lead_times",
      "Calculate elasticity",
      "Calculate forecast",
      "Calculate planning",
      "Calculate aggregates",
      "Calculate forecast_snapshots",
      "Calculate stock_series",
      "Calculate analytics_figures",
      // A Full Reset on PostgreSQL runs sales_series and product_search on its second connection:
      // the run's own indexes are built while they run, before the run waits for them.
      ...(testBackend === "postgres"
        ? ["Index metrics tables", "Calculate sales_series", "Calculate product_search"]
        : ["Calculate sales_series", "Calculate product_search", "Index metrics tables"]),
    ]);
    expect((await prisma.syncStatus.findMany()).map((s) => s.tableName).sort()).toContain("order_lines");
    expect(
      (await prisma.calculateStatus.findMany({ orderBy: { moduleName: "asc" } })).map((s) => s.moduleName),
    ).toEqual([
      "aggregates",
      "analytics_figures",
      "elasticity",
      "forecast",
      "forecast_snapshots",
      "lead_times",
      "planning",
      "product_metrics",
      "product_search",
      "sales_series",
      "stock_history",
      "stock_series",
      "xyz",
    ]);
  });

  it("Full Update of unchanged data changes nothing, twice", async () => {
    const before = await snapshot();
    for (let i = 0; i < 2; i++) {
      expect((await p.run("update")).operation).toBe("Full update complete");
      const imp = await tdb.db.prisma.importHistory.findFirstOrThrow({ orderBy: { id: "desc" } });
      expect(imp).toMatchObject({
        recordsAdded: 0,
        recordsUpdated: 0,
        recordsDeleted: 0,
        recordsSkipped: 38,
      });
    }
    expect(await snapshot()).toEqual(before);
  });

  it("Full Update adds, updates and deletes what changed in the files", async () => {
    dir = copyFixture();
    editFile(dir, "products.csv", (t) =>
      t
        .replace("1002,Ink Pad Black,IP-1,,2,11,Inks,,5.00", "1002,Ink Pad Black,IP-1,,2,11,Inks,,5.25")
        .replace(/\n1003,[^\n]*/, "")
        .concat("1004,New Washi Tape,WT-1,,2,11,,,2.00,,0.80,12,,,,,,,,,,,,,,2026-06-01T00:00:00Z,,\n"),
    );
    editFile(dir, "order_lines.csv", (t) => t.replace(/\n8,[^\n]*/, ""));
    editFile(dir, "po_lines.csv", (t) => t.replace(/\n5004,[^\n]*/, ""));
    await p.run("update");
    const imp = await tdb.db.prisma.importHistory.findFirstOrThrow({ orderBy: { id: "desc" } });
    const details = (imp.additionalInfo as { details: { tables: Record<string, unknown> } }).details.tables;
    expect(details.products).toEqual({ added: 1, updated: 1, deleted: 1, skipped: 1, total: 3 });
    expect(details.order_lines).toEqual({ added: 0, updated: 0, deleted: 1, skipped: 7, total: 7 });
    expect(imp).toMatchObject({ recordsAdded: 1, recordsUpdated: 1, recordsDeleted: 3 });
    const pids = (await tdb.db.prisma.product.findMany({ select: { pid: true } })).map((r) => r.pid).sort();
    expect(pids).toEqual([1001, 1002, 1004]);
    expect(num((await tdb.db.prisma.product.findUniqueOrThrow({ where: { pid: 1002 } })).price)).toBe(5.25);
    expect((await tdb.db.prisma.productMetrics.findMany()).map((m) => m.pid).sort()).toEqual([
      1001, 1002, 1004,
    ]);
  });

  describe("a bad file fails the run, names file, line and column, and changes nothing", () => {
    // Twenty more order lines, which make order_lines.csv the largest file: a Full Reset on
    // PostgreSQL then loads it beside the run.
    const MORE_LINES = Array.from(
      { length: 20 },
      (_, i) => `${100 + i},SO-${100 + i},1001,2026-01-02T10:00:00Z,1,1.50,,completed\n`,
    ).join("");
    const cases: [string, string, (t: string) => string, string][] = [
      [
        "a bad number",
        "products.csv",
        (t) =>
          t.replace("1002,Ink Pad Black,IP-1,,2,11,Inks,,5.00", '1002,Ink Pad Black,IP-1,,2,11,Inks,,"12,5"'),
        'products.csv line 3, column price: "12,5" is not a decimal number',
      ],
      [
        "a bad date",
        "order_lines.csv",
        (t) => t.replace("2026-06-10T10:00:00Z", "2026-13-45"),
        'order_lines.csv line 4, column order_date: "2026-13-45" is not a timestamp (YYYY-MM-DD HH:MM:SS, with or without T, Z or an offset)',
      ],
      [
        "a missing required value",
        "order_lines.csv",
        (t) => t.replace("3,SO-2,1001,", "3,SO-2,,"),
        "order_lines.csv line 4, column pid: a value is required",
      ],
      [
        // (The largest file of the fixture: a Full Reset loads it beside the run on PostgreSQL and
        // finds the duplicate only when it builds the key, inside the run's transaction.)
        "a duplicate product",
        "products.csv",
        (t) => t.replace("1003,Discontinued Glue", "1002,Discontinued Glue"),
        // (Product 1003 is gone with it: two order lines and a PO line name it.)
        "products.csv line 4, column pid: duplicate key 1002 (already on an earlier line) (and 2 more problems in the source data: see the run's findings)",
      ],
      [
        "a duplicate key",
        "brands.csv",
        (t) => `${t}1,Duplicate\n`,
        "brands.csv line 4, column brand_id: duplicate key 1 (already on an earlier line)",
      ],
      [
        "an unknown reference after a field that spans two lines",
        "products.csv",
        (t) =>
          t
            .replace('"Heavy, 80lb', '"Heavy,\n80lb')
            .replace("1003,Discontinued Glue,GL-1,,1,", "1003,Discontinued Glue,GL-1,,99,"),
        "products.csv line 5, column brand_id: 99 does not match any brand_id in brands.csv",
      ],
      [
        "a bad number after a field that spans two lines",
        "products.csv",
        (t) => t.replace('"Heavy, 80lb', '"Heavy,\n80lb').replace("Inks,,5.00", "Inks,,five"),
        'products.csv line 4, column price: "five" is not a decimal number',
      ],
      [
        "a duplicate vendor name",
        "vendors.csv",
        (t) => t.replace('"Vendor, B"', "Vendor A"),
        "vendors.csv line 3, column name: duplicate value Vendor A (already on an earlier line)",
      ],
      [
        "an unknown reference",
        "order_lines.csv",
        (t) => t.replace("8,SO-7,1003,", "8,SO-7,9999,"),
        "order_lines.csv line 9, column pid: 9999 does not match any pid in products.csv",
      ],
      [
        "a missing column",
        "po_lines.csv",
        (t) => t.replace("po_line_id,po_id,pid,ordered_qty,cost_each", "po_line_id,po_id,pid,qty,cost_each"),
        "po_lines.csv line 1: missing required column ordered_qty",
      ],
      [
        "an unknown status",
        "order_lines.csv",
        (t) => t.replace("returned", "refunded"),
        'order_lines.csv line 8, column status: "refunded" is not one of completed, cancelled, returned',
      ],
      [
        // Made the largest file, so a Full Reset on PostgreSQL loads it beside the run and checks
        // its values there, while the calculations already run.
        "an unknown status in a large file",
        "order_lines.csv",
        (t) => t.replace("returned", "refunded") + MORE_LINES,
        'order_lines.csv line 8, column status: "refunded" is not one of completed, cancelled, returned',
      ],
      [
        // Beside the run on PostgreSQL, where the run's pass over the order lines answers the
        // reference check: the unknown pid is on a cancelled line, which no calculation sums.
        "an unknown reference on a cancelled line in a large file",
        "order_lines.csv",
        (t) => t.replace("6,SO-5,1001,", "6,SO-5,9999,") + MORE_LINES,
        "order_lines.csv line 7, column pid: 9999 does not match any pid in products.csv",
      ],
      [
        // …and on a line dated after the day the run calculates as of.
        "an unknown reference on a future line in a large file",
        "order_lines.csv",
        (t) => t + MORE_LINES + "200,SO-200,9999,2099-01-02T10:00:00Z,1,1.50,,completed\n",
        "order_lines.csv line 30, column pid: 9999 does not match any pid in products.csv",
      ],
    ];
    for (const [label, file, edit, message] of cases) {
      it(label, async () => {
        const before = await snapshot();
        dir = copyFixture();
        editFile(dir, file, edit);
        const final = await p.run("update");
        expect(final).toMatchObject({ status: "error", operation: "Full update failed", error: message });
        const imp = await tdb.db.prisma.importHistory.findFirstOrThrow({ orderBy: { id: "desc" } });
        expect(imp).toMatchObject({ status: "failed", errorMessage: message });
        expect(await snapshot()).toEqual(before);
      });
    }
    // A Full Reset builds new tables and swaps them in; bad data sends it through staging, which
    // names the problem exactly as a Full Update does.
    for (const [label, file, edit, message] of cases) {
      it(`${label} (Full Reset)`, async () => {
        const before = await snapshot();
        dir = copyFixture();
        editFile(dir, file, edit);
        const final = await p.run("reset");
        expect(final).toMatchObject({ status: "error", operation: "Full reset failed", error: message });
        expect(await snapshot()).toEqual(before);
        const [left] = await tdb.db.prisma.$queryRawUnsafe<{ n: number }[]>(
          "SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = 'import_swap'",
        );
        expect(left!.n).toBe(0);
      });
    }
  });

  it("Full Reset swaps in tables with exactly the migrations' indexes, constraints and columns", async () => {
    const { prisma } = tdb.db;
    // On PostgreSQL the forecast module runs on the second connection into new tables of its own,
    // swapped in like the imported ones.
    const besideTables = testBackend === "postgres" ? ["product_forecasts", "product_forecast_accuracy"] : [];
    const tables = [...IMPORTED_TABLES.map((d) => d.table), ...besideTables];
    const shape = async () => ({
      indexes: await prisma.$queryRawUnsafe(
        `SELECT schemaname, tablename, indexname, indexdef, tablespace FROM pg_indexes
         WHERE tablename = ANY($1::text[]) ORDER BY tablename, indexname`,
        tables,
      ),
      constraints: await prisma.$queryRawUnsafe(
        `SELECT c.conrelid::regclass::text AS table, c.conname::text, c.contype::text, pg_get_constraintdef(c.oid) AS def
         FROM pg_constraint c WHERE c.conrelid = ANY (SELECT x::regclass FROM unnest($1::text[]) x)
         ORDER BY 1, 2`,
        tables,
      ),
      columns: await prisma.$queryRawUnsafe(
        `SELECT table_schema, table_name, column_name, ordinal_position, data_type, numeric_precision,
                numeric_scale, datetime_precision, is_nullable, column_default, collation_name
         FROM information_schema.columns WHERE table_name = ANY($1::text[]) ORDER BY table_name, ordinal_position`,
        tables,
      ),
      options: await prisma.$queryRawUnsafe(
        `SELECT relname::text, reloptions::text, relkind::text, relpersistence::text FROM pg_class
         WHERE oid = ANY (SELECT x::regclass FROM unnest($1::text[]) x) ORDER BY relname`,
        tables,
      ),
    });
    const oids = () =>
      prisma.$queryRawUnsafe<{ oid: number }[]>(
        "SELECT x::regclass::oid::int AS oid FROM unnest($1::text[]) x",
        tables,
      );
    // The calculation phase drops the metrics tables' plain indexes and builds them again.
    const metricsIndexes = () =>
      prisma.$queryRawUnsafe(
        `SELECT tablename, indexname, indexdef FROM pg_indexes
         WHERE tablename IN ('product_metrics', 'product_search_keys') ORDER BY tablename, indexname`,
      );
    dir = FIXTURE_DIR;
    const before = await shape();
    const oidsBefore = await oids();
    const metricsBefore = await metricsIndexes();
    expect((metricsBefore as unknown[]).length).toBeGreaterThan(5);
    expect((before.indexes as unknown[]).length).toBeGreaterThan(tables.length);
    expect((await p.run("reset")).status).toBe("complete");
    // (On PostgreSQL the tables replaced are dropped after the run: until then the catalog lists them.)
    await p.ops.settled();
    // New tables were swapped in (not the same tables refilled)…
    for (const [i, o] of (await oids()).entries()) expect(o.oid).not.toBe(oidsBefore[i]!.oid);
    // …and they look exactly like the ones the migrations made.
    expect(await shape()).toEqual(before);
    expect(await metricsIndexes()).toEqual(metricsBefore);
    const [left] = await prisma.$queryRawUnsafe<{ n: number }[]>(
      "SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = 'import_swap'",
    );
    expect(left!.n).toBe(0);
    // The tables replaced are gone.
    const [old] = await prisma.$queryRawUnsafe<{ n: number; schemas: number }[]>(
      `SELECT (SELECT count(*)::int FROM pg_class WHERE oid = ANY ($1::oid[])) AS n,
         (SELECT count(*)::int FROM pg_namespace WHERE nspname = 'import_retired') AS schemas`,
      oidsBefore.map((o) => o.oid),
    );
    expect(old).toEqual({ n: 0, schemas: 0 });
  });

  it("a Full Reset fails and changes nothing when a view depends on a table it replaces", async () => {
    const { prisma } = tdb.db;
    dir = FIXTURE_DIR;
    await prisma.$executeRawUnsafe(
      "CREATE VIEW metrics_view AS SELECT pid, units_30d FROM product_metrics WHERE units_30d > 0",
    );
    try {
      const before = await prisma.$queryRawUnsafe<unknown[]>("SELECT * FROM metrics_view ORDER BY pid");
      expect(before.length).toBeGreaterThan(0);
      const end = await p.run("reset");
      expect(end.status).toBe("error");
      expect(end.error).toMatch(/depend/);
      await p.ops.settled();
      // The view still reads the live table, which kept its figures.
      expect(await prisma.$queryRawUnsafe<unknown[]>("SELECT * FROM metrics_view ORDER BY pid")).toEqual(
        before,
      );
    } finally {
      await prisma.$executeRawUnsafe("DROP VIEW IF EXISTS metrics_view");
    }
  });
});

describe(`cancel and concurrency (${testBackend})`, () => {
  let tdb: TestDatabase;
  let p: PipelineHarness;
  beforeAll(async () => {
    tdb = await createTestDatabase();
    const warm = await pipeline(tdb.db, () => FIXTURE_DIR);
    await warm.run("reset");
    await warm.close();
    p = await pipeline(tdb.db, () => FIXTURE_DIR, { stepDelayMs: 300 });
  });
  afterAll(async () => {
    await p.close();
    await tdb.drop();
  });

  it("cancel mid-run stops at the next step and leaves the previous data intact", async () => {
    const dir = copyFixture();
    editFile(dir, "brands.csv", (t) => t.replace("Paper Co", "Renamed Co"));
    const q = await pipeline(tdb.db, () => dir, { stepDelayMs: 300 });
    try {
      const { run_id } = await q.ops.start("update", null);
      // Wait until the run is inside its steps, then cancel.
      while (!q.events.some((e) => e.run_id === run_id && e.step === "Load vendors.csv")) {
        await new Promise((r) => setTimeout(r, 10));
      }
      await q.ops.cancel("update");
      await q.ops.idle();
      const final = await q.final(run_id);
      expect(final).toMatchObject({
        status: "cancelled",
        operation: "Full update cancelled",
        error: "Cancelled by user",
      });
      const run = await tdb.db.prisma.dataRun.findUniqueOrThrow({ where: { id: run_id } });
      expect(run.status).toBe("cancelled");
      const imp = await tdb.db.prisma.importHistory.findFirstOrThrow({ where: { runId: run_id } });
      expect(imp.status).toBe("cancelled");
      const names = (imp.additionalInfo as { completed_steps: { name: string }[] }).completed_steps.map(
        (s) => s.name,
      );
      expect(names).not.toContain("Update brands");
      expect((await tdb.db.prisma.brand.findUniqueOrThrow({ where: { id: 1 } })).name).toBe("Paper Co");
    } finally {
      await q.close();
    }
  });

  it("cancel during the apply rolls the whole transaction back", async () => {
    const dir = copyFixture();
    editFile(dir, "brands.csv", (t) => t.replace("Paper Co", "Renamed Co"));
    const q = await pipeline(tdb.db, () => dir, { stepDelayMs: 300 });
    try {
      const { run_id } = await q.ops.start("update", null);
      while (!q.events.some((e) => e.run_id === run_id && e.step === "Update vendors")) {
        await new Promise((r) => setTimeout(r, 10));
      }
      // "Update brands" has committed nothing yet: it is inside the run's transaction.
      await q.ops.cancel();
      await q.ops.idle();
      expect(await q.final(run_id)).toMatchObject({ status: "cancelled" });
      expect((await tdb.db.prisma.brand.findUniqueOrThrow({ where: { id: 1 } })).name).toBe("Paper Co");
    } finally {
      await q.close();
    }
  });

  // (At "Calculate forecast" a Full Reset on PostgreSQL waits for the module on the second connection.)
  for (const at of ["Load vendors.csv", "Calculate product_metrics", "Calculate forecast"]) {
    it(`cancel of a Full Reset (at "${at}") leaves the previous data and no new tables`, async () => {
      const dir = copyFixture();
      editFile(dir, "brands.csv", (t) => t.replace("Paper Co", "Renamed Co"));
      const q = await pipeline(tdb.db, () => dir, { stepDelayMs: 300 });
      try {
        const { run_id } = await q.ops.start("reset", null);
        while (!q.events.some((e) => e.run_id === run_id && e.step === at)) {
          await new Promise((r) => setTimeout(r, 10));
        }
        const asked = Date.now();
        await q.ops.cancel("reset");
        await q.ops.idle();
        expect(Date.now() - asked).toBeLessThan(5_000);
        expect(await q.final(run_id)).toMatchObject({
          status: "cancelled",
          operation: "Full reset cancelled",
        });
        expect((await tdb.db.prisma.brand.findUniqueOrThrow({ where: { id: 1 } })).name).toBe("Paper Co");
        expect(await tdb.db.prisma.orderLine.count()).toBe(8);
        const [left] = await tdb.db.prisma.$queryRawUnsafe<{ n: number }[]>(
          "SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = 'import_swap'",
        );
        expect(left!.n).toBe(0);
      } finally {
        await q.close();
      }
    });
  }

  // Every module of a run reads the settings as they were when it began (a Full Reset: its start; a
  // Full Update: its calculations' start), so a save in between cannot leave the forecast and the
  // plan of one product disagreeing. The save applies from the next run.
  for (const [type, at] of [
    ["reset", "Load vendors.csv"],
    ["update", "Calculate product_metrics"],
  ] as const) {
    it(`a setting saved during a Full ${type === "reset" ? "Reset" : "Update"} (at "${at}") applies from the next run`, async () => {
      const { prisma } = tdb.db;
      const planOf = async () => {
        const m = await prisma.productMetrics.findUniqueOrThrow({ where: { pid: 1001 } });
        const forecastRows = await prisma.$queryRawUnsafe<{ n: number }[]>(
          "SELECT count(*)::int AS n FROM product_forecasts WHERE pid = 1001",
        );
        return { status: m.status, method: m.forecastMethod, forecastRows: forecastRows[0]!.n };
      };
      const before = await planOf();
      expect(before.status).not.toBe("excluded");
      // It has a forecast (standard or seasonal: auto_forecast_method picks by backtest).
      expect(["standard", "seasonal"]).toContain(before.method);
      expect(before.forecastRows).toBeGreaterThan(0);
      const fast = await pipeline(tdb.db, () => FIXTURE_DIR);
      try {
        const { run_id } = await p.ops.start(type, null);
        while (!p.events.some((e) => e.run_id === run_id && e.step === at)) {
          await new Promise((r) => setTimeout(r, 10));
        }
        // Not awaited first: on embedded PGlite the save waits for the run's transaction.
        const saved = prisma.productSetting.create({ data: { pid: 1001, excludeFromForecast: true } });
        await p.ops.idle();
        await saved;
        const run = await prisma.dataRun.findUniqueOrThrow({ where: { id: run_id } });
        expect(run.status).toBe("completed");
        expect(await planOf()).toEqual(before);

        expect((await fast.run("update")).status).toBe("complete");
        expect(await planOf()).toEqual({ status: "excluded", method: null, forecastRows: 0 });
      } finally {
        await prisma.productSetting.deleteMany({ where: { pid: 1001 } });
        await fast.run("update");
        await fast.close();
      }
    });
  }

  it("a second start while one runs answers CONFLICT", async () => {
    const first = await p.ops.start("update", null);
    await expect(p.ops.start("reset", null)).rejects.toMatchObject({ kind: "CONFLICT" });
    await expect(p.ops.start("update", null)).rejects.toThrow(/already running/);
    expect(await p.ops.status()).toMatchObject({
      active: true,
      progress: { run_id: first.run_id, type: "update" },
    });
    await p.ops.cancel();
    await p.ops.idle();
    expect((await p.ops.status()).active).toBe(false);
  });

  it("cancel with nothing running answers CONFLICT", async () => {
    await expect(p.ops.cancel("reset")).rejects.toMatchObject({
      kind: "CONFLICT",
      message: "No full reset is running",
    });
  });
});

describe(`recovery after a crash (${testBackend})`, () => {
  it("marks a run left 'running' by a stopped server as failed, with a final event", async () => {
    const tdb = await createTestDatabase();
    try {
      const { prisma } = tdb.db;
      const run = await prisma.dataRun.create({
        data: {
          type: "update",
          status: "running",
          lastEvent: { run_id: 0, status: "running", type: "update" },
        },
      });
      await prisma.importHistory.create({
        data: { runId: run.id, startTime: new Date(), status: "running" },
      });
      const p = await pipeline(tdb.db, () => FIXTURE_DIR);
      try {
        expect(await prisma.dataRun.findUniqueOrThrow({ where: { id: run.id } })).toMatchObject({
          status: "failed",
          error: "Interrupted: the server stopped during the run",
        });
        expect((await prisma.importHistory.findFirstOrThrow({ where: { runId: run.id } })).status).toBe(
          "failed",
        );
        expect(p.ops.latestEvent("update")).toMatchObject({
          run_id: run.id,
          status: "error",
          operation: "Full update failed",
        });
        expect((await p.ops.status()).active).toBe(false);
        // A run whose instance died later (its lock went with it) stops showing as running.
        const orphan = await prisma.dataRun.create({ data: { type: "reset", status: "running" } });
        expect((await p.ops.status()).active).toBe(false);
        expect((await prisma.dataRun.findUniqueOrThrow({ where: { id: orphan.id } })).status).toBe("failed");
      } finally {
        await p.close();
      }
    } finally {
      await tdb.drop();
    }
  });
});

describe.runIf(testBackend === "postgres")("the data-operations lock is per database", () => {
  it("a run holding the lock in another database does not keep this one's orphan alive", async () => {
    const { default: pg } = await import("pg");
    const other = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await other.connect();
    const tdb = await createTestDatabase();
    try {
      await other.query("SELECT pg_advisory_lock(72707370)");
      const p = await pipeline(tdb.db, () => FIXTURE_DIR);
      try {
        const orphan = await tdb.db.prisma.dataRun.create({ data: { type: "update", status: "running" } });
        expect((await p.ops.status()).active).toBe(false);
        expect((await tdb.db.prisma.dataRun.findUniqueOrThrow({ where: { id: orphan.id } })).status).toBe(
          "failed",
        );
      } finally {
        await p.close();
      }
    } finally {
      await other.end();
      await tdb.drop();
    }
  });
});
