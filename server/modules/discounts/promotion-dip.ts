// The dip after a promotion (docs/metrics.md §16.2): do the shop's past promotions pull sales forward,
// so that the weeks after one sell less than usual? Measured per category from the last 52 weeks of
// order lines of the products module elasticity found discounted weeks for, with module elasticity's
// own definition of a discounted week (§15.1), and stored in category_promotion_dips.
//
// It depends only on the history up to D0, but costs seconds on a large catalogue (10–19 s at 50k
// products on a loaded machine), more than the Full Reset has room for: it runs in the background
// right after each Full Update or Full Reset has committed (refreshPromotionDips), once per calculation
// (marked with the elasticity's calculation timestamp in calculate_status, 'promotion_dips'), and no
// simulation waits for it: until it is done they use the previous calculation's dips. `measurePromotionDips` takes any SQL runner: module elasticity can call
// it with its own connection after its fit.
import {
  DIP_MAX_WEEKS,
  DIP_MIN_PROMOTIONS,
  DIP_THRESHOLD,
  type PromotionDip,
} from "../../../shared/discounts.ts";
import type { Database } from "../../db/database.ts";
import {
  ELASTICITY_WEEKS,
  HOME_CATEGORY_MIN_PRODUCTS,
  LEVEL_STEP,
  REGULAR_PRICE_WEEKS,
} from "../../jobs/planning/elasticity.ts";

export { DIP_MAX_WEEKS, DIP_MIN_PROMOTIONS, DIP_THRESHOLD };

/** How far below the expected units (in standard errors) a week after must be. */
export const DIP_SIGMAS = 3;

/** The weeks before a promotion its product's regular rate is taken from (a local level: trends move it). */
export const DIP_BASELINE_WEEKS = 8;

/** What the measurement needs of a connection: statements with $n parameters and their rows. */
export interface SqlRunner {
  query<T>(sql: string, params?: unknown[]): Promise<T[]>;
  exec(sql: string, params?: unknown[]): Promise<void>;
}

/** The category figures of §16.2 from its promotions' sums: weeks n and dip share (0, 0: no dip). */
export function dipOf(
  promotions: number,
  expected: readonly number[],
  after: readonly number[],
  squares: readonly number[],
): { dip: number; weeks: number } {
  if (promotions < DIP_MIN_PROMOTIONS) return { dip: 0, weeks: 0 };
  let weeks = 0;
  while (
    weeks < Math.min(DIP_MAX_WEEKS, after.length) &&
    expected[weeks]! > 0 &&
    after[weeks]! <= (1 - DIP_THRESHOLD) * expected[weeks]! &&
    // and beyond chance: DIP_SIGMAS standard errors below the expected units, the error from the
    // promotions' own spread (√ Σ (units − expected)² over them)
    after[weeks]! <= expected[weeks]! - DIP_SIGMAS * Math.sqrt(squares[weeks]!)
  )
    weeks++;
  if (weeks === 0) return { dip: 0, weeks: 0 };
  const sum = (xs: readonly number[]) => xs.slice(0, weeks).reduce((a, b) => a + b, 0);
  return { dip: Math.round((1 - sum(after) / sum(expected)) * 10000) / 10000, weeks };
}

/**
 * Measures every category's dip as of `asOf` (the calculation's moment, D0 its UTC day) and replaces
 * category_promotion_dips. Returns the number of categories with at least one promotion.
 */
export async function measurePromotionDips(run: SqlRunner, asOf: Date): Promise<number> {
  const d0 = asOf.toISOString().slice(0, 10);
  const from = new Date(Date.parse(`${d0}T00:00:00Z`) - (ELASTICITY_WEEKS * 7 - 1) * 86_400_000);
  const level = (ratio: string) => `LEAST(1, round(${ratio} / ${LEVEL_STEP}) * ${LEVEL_STEP})`;
  // Per promoted product and week k with sales (k = 0 … 51 back from D0): units, and whether the
  // week is discounted (its level below 1, with §15.1's regular price). Its seasonal reference, as
  // §15.1's: its home category's weekly units (sales_daily) without its own, as an index with mean 1
  // over the 52 weeks (every product's when it has no home category; 1 when the others sold nothing),
  // × its share of the week in stock (§15.1's days in stock ÷ 7: a week sold out after a promotion is
  // lost sales, not pull-forward). Then per week from its first week with a sale in the 52 to D0 (weeks without a sale count 0):
  // its promotions (runs of consecutive discounted weeks), the qualifying ones (the DIP_MAX_WEEKS
  // weeks after it inside the 52 weeks and none of them discounted), per promotion its regular rate
  // before it (units ÷ Σ index over the DIP_BASELINE_WEEKS weeks before its first week, leaving out
  // weeks discounted or after another promotion: a local level, so a product's trend does not read
  // as a dip) and per week w after it, its units and the expected units (rate × that week's index).
  const rows = await run.query<{
    category_id: number;
    promotions: number;
    expected: number[];
    after: number[];
    squares: number[];
  }>(
    `WITH RECURSIVE promoted AS MATERIALIZED (
       SELECT p.pid, COALESCE(p.regular_price, p.price)::float8 AS regular
       FROM product_elasticities e JOIN products p ON p.pid = e.pid
       WHERE e.discounted_weeks > 0
     ),
     w AS MATERIALIZED (
       SELECT l.pid, (($1::date - (l.order_date AT TIME ZONE 'UTC')::date) / 7)::int AS k,
         SUM(l.quantity)::float8 AS u, (SUM(l.price * l.quantity) / SUM(l.quantity))::float8 AS p
       FROM order_lines l
       WHERE l.pid IN (SELECT pid FROM promoted)
         AND l.status = 'completed' AND l.quantity > 0 AND l.price > 0
         AND l.order_date >= $2::timestamptz AND l.order_date <= $3::timestamptz
       GROUP BY 1, 2
     ),
     r AS MATERIALIZED (
       SELECT w.pid, w.k, w.u,
         ${level(`w.p / LEAST(
           max(w.p) OVER (PARTITION BY w.pid ORDER BY w.k RANGE BETWEEN CURRENT ROW AND ${REGULAR_PRICE_WEEKS} FOLLOWING),
           GREATEST(max(w.p) OVER (PARTITION BY w.pid ORDER BY w.k RANGE BETWEEN ${REGULAR_PRICE_WEEKS} PRECEDING AND CURRENT ROW),
             CASE WHEN w.k < ${REGULAR_PRICE_WEEKS} THEN pr.regular END))`)} < 1 AS disc
       FROM w JOIN promoted pr ON pr.pid = w.pid
     ),
     home AS (
       SELECT DISTINCT ON (pc.pid) pc.pid, pc.category_id
       FROM product_categories pc
       JOIN (SELECT category_id, count(*) AS n FROM product_categories GROUP BY 1 HAVING count(*) >= $4) s
         ON s.category_id = pc.category_id
       WHERE pc.pid IN (SELECT pid FROM promoted)
       ORDER BY pc.pid, s.n, pc.category_id
     ),
     hw AS MATERIALIZED (
       SELECT dim, key, (($1::date - day) / 7)::int AS k, SUM(units)::float8 AS u
       FROM sales_daily
       WHERE (dim = 'total' OR (dim = 'category' AND key IN (SELECT category_id FROM home)))
         AND day BETWEEN $1::date - ${ELASTICITY_WEEKS * 7 - 1} AND $1::date
       GROUP BY 1, 2, 3
     ),
     t AS MATERIALIZED (
       SELECT o.pid, o.kmax, CASE WHEN h.pid IS NULL THEN 'total' ELSE 'category' END AS dim,
         COALESCE(h.category_id, 0) AS key,
         (SELECT SUM(hw.u) FROM hw WHERE hw.dim = CASE WHEN h.pid IS NULL THEN 'total' ELSE 'category' END
            AND hw.key = COALESCE(h.category_id, 0)) - o.units AS others
       FROM (SELECT pid, max(k) AS kmax, SUM(u) AS units FROM r GROUP BY pid) o
       LEFT JOIN home h ON h.pid = o.pid
     ),
     oos AS MATERIALIZED (
       SELECT h.pid, wk.k,
         SUM(LEAST(h.valid_to, $1::date - 7 * wk.k) - GREATEST(h.valid_from, $1::date - 7 * wk.k - 6) + 1
           - CASE WHEN h.sold_first_day > 0 AND h.valid_from >= $1::date - 7 * wk.k - 6 THEN 1 ELSE 0 END)::int AS days
       FROM product_stock_history h,
         LATERAL generate_series(GREATEST(($1::date - h.valid_to) / 7, 0),
           LEAST(($1::date - h.valid_from) / 7, ${ELASTICITY_WEEKS - 1})) AS wk(k)
       WHERE h.stock <= 0 AND h.valid_to >= $1::date - ${ELASTICITY_WEEKS * 7 - 1}
         AND h.pid IN (SELECT pid FROM promoted)
       GROUP BY 1, 2
     ),
     g AS MATERIALIZED (
       SELECT t.pid, gs.k, COALESCE(r.u, 0) AS u, COALESCE(r.disc, false) AS disc,
         CASE WHEN t.others > 0
           THEN GREATEST(COALESCE(hw.u, 0) - COALESCE(r.u, 0), 0) * ${ELASTICITY_WEEKS} / t.others ELSE 1 END
         * GREATEST(7 - COALESCE(oos.days, 0), CASE WHEN r.u > 0 THEN 1 ELSE 0 END) / 7.0 AS s
       FROM t
       CROSS JOIN LATERAL generate_series(0, t.kmax) AS gs(k)
       LEFT JOIN r ON r.pid = t.pid AND r.k = gs.k
       LEFT JOIN hw ON hw.dim = t.dim AND hw.key = t.key AND hw.k = gs.k
       LEFT JOIN oos ON oos.pid = t.pid AND oos.k = gs.k
     ),
     ep AS MATERIALIZED (
       SELECT pid, min(k) AS k_last, max(k) AS k_first FROM (
         SELECT pid, k, k - row_number() OVER (PARTITION BY pid ORDER BY k) AS grp FROM r WHERE disc
       ) x GROUP BY pid, grp
     ),
     blocked AS (
       SELECT DISTINCT ep.pid, b.k FROM ep, generate_series(GREATEST(ep.k_last - ${DIP_MAX_WEEKS}, 0), ep.k_last - 1) AS b(k)
     ),
     rate AS (
       SELECT ep.pid, ep.k_last, SUM(g.u) / NULLIF(SUM(g.s), 0) AS rate
       FROM ep
       JOIN g ON g.pid = ep.pid AND g.k BETWEEN ep.k_first + 1 AND ep.k_first + ${DIP_BASELINE_WEEKS}
       LEFT JOIN blocked b ON b.pid = g.pid AND b.k = g.k
       WHERE NOT g.disc AND b.pid IS NULL
       GROUP BY ep.pid, ep.k_last
     ),
     qualified AS (
       SELECT ep.pid,
         ${Array.from({ length: DIP_MAX_WEEKS }, (_, i) => `SUM(g.u) FILTER (WHERE g.k = ep.k_last - ${i + 1}) AS a${i + 1}, SUM(rate.rate * g.s) FILTER (WHERE g.k = ep.k_last - ${i + 1}) AS e${i + 1}`).join(",\n         ")}
       FROM ep
       JOIN rate ON rate.pid = ep.pid AND rate.k_last = ep.k_last
       JOIN g ON g.pid = ep.pid AND g.k BETWEEN ep.k_last - ${DIP_MAX_WEEKS} AND ep.k_last - 1
       WHERE ep.k_last >= ${DIP_MAX_WEEKS} AND rate.rate IS NOT NULL
       GROUP BY ep.pid, ep.k_last
       HAVING NOT bool_or(g.disc)
     ),
     up(category_id, ancestor_id) AS (
       SELECT id, id FROM categories
       UNION
       SELECT up.category_id, c.parent_id FROM up JOIN categories c ON c.id = up.ancestor_id
       WHERE c.parent_id IS NOT NULL
     ),
     members AS (
       SELECT DISTINCT up.ancestor_id AS category_id, pc.pid
       FROM product_categories pc JOIN up ON up.category_id = pc.category_id
       WHERE pc.pid IN (SELECT pid FROM qualified)
     )
     SELECT m.category_id, count(*)::int AS promotions,
       ARRAY[${Array.from({ length: DIP_MAX_WEEKS }, (_, i) => `SUM(q.e${i + 1})`).join(", ")}]::float8[] AS expected,
       ARRAY[${Array.from({ length: DIP_MAX_WEEKS }, (_, i) => `SUM(q.a${i + 1})`).join(", ")}]::float8[] AS after,
       ARRAY[${Array.from({ length: DIP_MAX_WEEKS }, (_, i) => `SUM((q.a${i + 1} - q.e${i + 1}) ^ 2)`).join(", ")}]::float8[] AS squares
     FROM members m JOIN qualified q ON q.pid = m.pid
     GROUP BY m.category_id`,
    [d0, from.toISOString(), asOf.toISOString(), HOME_CATEGORY_MIN_PRODUCTS],
  );
  const figures = rows.map((r) => {
    const after = r.after.map(Number);
    const expected = r.expected.map(Number);
    return { ...r, after, expected, ...dipOf(r.promotions, expected, after, r.squares.map(Number)) };
  });
  await run.exec("DELETE FROM category_promotion_dips");
  if (figures.length > 0)
    await run.exec(
      `INSERT INTO category_promotion_dips (category_id, promotions, expected_units, after_units, dip, weeks)
       SELECT c, n, (SELECT array_agg(x ORDER BY i) FROM jsonb_array_elements_text(t.e) WITH ORDINALITY AS y(x, i))::float8[],
         (SELECT array_agg(x ORDER BY i) FROM jsonb_array_elements_text(t.a) WITH ORDINALITY AS y(x, i))::float8[], d, w
       FROM jsonb_to_recordset($1::jsonb) AS t(c int, n int, e jsonb, a jsonb, d float8, w int)`,
      [
        JSON.stringify(
          figures.map((f) => ({
            c: f.category_id,
            n: f.promotions,
            e: f.expected,
            a: f.after,
            d: f.dip,
            w: f.weeks,
          })),
        ),
      ],
    );
  return figures.length;
}

const MARK = "promotion_dips";
/** The measurement's advisory lock (two keys; purchasing takes 715001 with a vendor id). */
const DIP_LOCK = [715002, 0] as const;

const measuring = new WeakMap<Database, Promise<void>>();
/** The backend running a measurement (PostgreSQL), so a run about to swap its tables can stop it. */
const measuringPid = new WeakMap<Database, { pid: number; since: string }>();
/** After a failed measurement: when the next nudge may try again, and the wait after that one. */
const backOff = new WeakMap<Database, { until: number; waitMs: number }>();
/** The first wait after a failed measurement; it doubles after each further failure, up to the cap. */
export const DIP_RETRY_MS = 30_000;
const DIP_RETRY_MAX_MS = 15 * 60_000;

/** The databases whose measurement abortPromotionDips is stopping. */
const stopping = new WeakSet<Database>();

/**
 * A measurement stopped by abortPromotionDips (PostgreSQL's query_canceled while it was stopping
 * it): not a failure. A query_canceled from anything else (a statement_timeout, an operator's
 * pg_cancel_backend) is a failure like any other.
 */
function wasCancelled(db: Database, err: unknown): boolean {
  const e = err as { code?: string; meta?: { code?: string }; message?: string };
  return (
    stopping.has(db) &&
    (e?.code === "57014" ||
      e?.meta?.code === "57014" ||
      /canceling statement due to user request/.test(String(e?.message ?? "")))
  );
}

/**
 * Starts ensurePromotionDips in the background (at most one at a time per database) and returns at
 * once: a run's completion starts it (services.ts, afterImport, with `force`) and every simulation
 * nudges it, but no request waits for it. Until it is done the simulation and the promotion layer
 * read the dips of the previous measurement (none on a new database). After a measurement failed,
 * nudges leave it alone for DIP_RETRY_MS, doubling after each further failure (up to 15 minutes), so
 * a measurement that keeps failing does not cost every simulation seconds of database time; a run's
 * completion (`force`) always tries. Answers the measurement, for tests and shutdown.
 */
export function refreshPromotionDips(
  db: Database,
  onError?: (err: unknown) => void,
  opts: { force?: boolean } = {},
): Promise<void> {
  const running = measuring.get(db);
  if (running) return running;
  const failed = backOff.get(db);
  if (failed && !opts.force && Date.now() < failed.until) return Promise.resolve();
  const started = ensurePromotionDips(db)
    .then(() => {
      backOff.delete(db);
    })
    .catch((err) => {
      if (wasCancelled(db, err)) return;
      const waitMs = failed ? Math.min(failed.waitMs * 2, DIP_RETRY_MAX_MS) : DIP_RETRY_MS;
      backOff.set(db, { until: Date.now() + waitMs, waitMs });
      onError?.(err);
    })
    .finally(() => {
      measuring.delete(db);
      measuringPid.delete(db);
      stopping.delete(db);
    });
  measuring.set(db, started);
  return started;
}

/**
 * Stops a measurement in progress (PostgreSQL: cancels its statement; it is rolled back and not
 * counted as a failure) and waits until it has let go. A run calls it before it takes the exclusive
 * locks of its swap: the measurement reads order lines and calculation tables for seconds, and a
 * swap waiting for it would hold the run, and the readers queued behind the swap's lock, that long.
 * The run's completion measures again for the new calculation.
 */
export async function abortPromotionDips(db: Database): Promise<void> {
  const running = measuring.get(db);
  // On embedded PGlite a measurement cannot hold anything the swap needs: the run's transaction
  // holds the one connection, so the measurement is queued behind it (waiting for it here would
  // wait forever).
  if (!running || db.kind !== "postgres") return;
  let settled = false;
  void running.finally(() => {
    settled = true;
  });
  stopping.add(db);
  // The cancel is sent again every 100 ms until the measurement lets go: it may not have reached its
  // transaction yet (no backend known), or be between two statements when a cancel arrives.
  for (let i = 0; !settled && i < 200; i++) {
    const backend = measuringPid.get(db);
    // Only while that backend is still in the measurement's transaction (its connection goes back
    // to the pool afterwards and may be serving someone else).
    if (backend)
      await db.prisma
        .$queryRawUnsafe(
          "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE pid = $1::int AND xact_start = $2::timestamptz",
          backend.pid,
          backend.since,
        )
        .catch(() => undefined);
    await Promise.race([running, new Promise((r) => setTimeout(r, 100))]);
  }
  await running;
}

/** The measurement running in the background, if any (closeServices waits for it). */
export function promotionDipsSettled(db: Database): Promise<void> {
  return measuring.get(db) ?? Promise.resolve();
}

/**
 * Makes sure category_promotion_dips is measured for the latest calculation (module elasticity's
 * timestamp in calculate_status): otherwise measures it once, under a transaction-level advisory
 * lock, so concurrent simulations wait for one measurement instead of each running it.
 */
export async function ensurePromotionDips(db: Database): Promise<void> {
  const stale = async (q: <T>(sql: string, ...p: unknown[]) => Promise<T[]>) => {
    const [row] = await q<{ stale: boolean; as_of: Date | null; calculated: Date }>(
      `SELECT e.last_calculation_timestamp IS DISTINCT FROM d.last_calculation_timestamp AS stale,
         e.last_calculation_timestamp AS calculated,
         (SELECT calculated_at FROM product_metrics LIMIT 1) AS as_of
       FROM (SELECT last_calculation_timestamp FROM calculate_status WHERE module_name = 'elasticity') e
       LEFT JOIN calculate_status d ON d.module_name = '${MARK}'`,
    );
    return row?.stale && row.as_of ? { asOf: row.as_of, calculated: row.calculated } : null;
  };
  if (!(await stale((sql, ...p) => db.prisma.$queryRawUnsafe(sql, ...p)))) return;
  await db.prisma.$transaction(
    async (tx) => {
      const q = <T>(sql: string, ...p: unknown[]) => tx.$queryRawUnsafe<T[]>(sql, ...p);
      // Its own lock (the two-key form, a key space apart from the data operations' one-key lock):
      // measuring must never keep a run from starting.
      const [backend] = await q<{ pid: number; since: string }>(
        // As text: the transaction's start to the microsecond (a Date would keep milliseconds).
        "SELECT pg_backend_pid() AS pid, now()::text AS since",
      );
      if (backend) measuringPid.set(db, { pid: Number(backend.pid), since: backend.since });
      await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(${DIP_LOCK[0]}, ${DIP_LOCK[1]})`);
      const due = await stale(q);
      if (!due) return;
      await tx.$executeRawUnsafe("SET LOCAL work_mem = '64MB'");
      await measurePromotionDips(
        {
          query: (sql, params = []) => q(sql, ...params),
          exec: async (sql, params = []) => {
            await tx.$executeRawUnsafe(sql, ...params);
          },
        },
        new Date(due.asOf),
      );
      // Marked with the calculation it measured (a run may have committed meanwhile: its own
      // calculation is then still due).
      await tx.$executeRawUnsafe(
        `INSERT INTO calculate_status (module_name, last_calculation_timestamp) VALUES ('${MARK}', $1)
         ON CONFLICT (module_name) DO UPDATE SET last_calculation_timestamp = EXCLUDED.last_calculation_timestamp`,
        due.calculated,
      );
    },
    { maxWait: 60_000, timeout: 120_000 },
  );
}

/** A product's dip from its linked categories (§16.2), or null. */
export type DipResolver = (
  categories: readonly number[],
) => { share: number; weeks: number; promotions: number; category: string } | null;

/**
 * Reads the categories and their measured dips (two small tables) and returns the rule of §16.2: the
 * deepest category among the linked ones and their ancestors with at least DIP_MIN_PROMOTIONS
 * promotions (ties: more promotions, then the lower id) gives the product its dip, or none.
 */
export async function loadDipResolver(db: Database): Promise<DipResolver> {
  const rows = await db.prisma.$queryRawUnsafe<
    {
      id: number;
      parent_id: number | null;
      level: number;
      name: string;
      promotions: number | null;
      dip: number | null;
      weeks: number | null;
    }[]
  >(
    `SELECT c.id, c.parent_id, c.level, c.name, d.promotions, d.dip, d.weeks
     FROM categories c LEFT JOIN category_promotion_dips d ON d.category_id = c.id`,
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const memo = new Map<string, ReturnType<DipResolver>>();
  return (categories) => {
    const key = categories.join(",");
    const known = memo.get(key);
    if (known !== undefined) return known;
    let best: (typeof rows)[number] | null = null;
    const seen = new Set<number>();
    for (const id of categories) {
      let c = byId.get(id);
      while (c && !seen.has(c.id)) {
        seen.add(c.id);
        if (
          (c.promotions ?? 0) >= DIP_MIN_PROMOTIONS &&
          (!best ||
            c.level > best.level ||
            (c.level === best.level &&
              (c.promotions! > best.promotions! || (c.promotions === best.promotions && c.id < best.id))))
        )
          best = c;
        c = c.parent_id === null ? undefined : byId.get(c.parent_id);
      }
    }
    const out =
      best && (best.weeks ?? 0) > 0
        ? { share: best.dip!, weeks: best.weeks!, promotions: best.promotions!, category: best.name }
        : null;
    memo.set(key, out);
    return out;
  };
}

export type { PromotionDip };
