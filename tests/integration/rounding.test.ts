// Rounding overshoot (issue 13 point 5, docs/metrics.md §5 "Rounding"): reorder point, safety stock,
// overstock and reorder quantity are computed from exact values and rounded only at the end. A
// property test runs the very SQL expressions module planning uses (planning.ts) over random inputs
// on the real database and checks each result against exact rational arithmetic (BigInt fractions).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SqlConnection } from "../../server/db/database.ts";
import {
  daysSafetyStockSql,
  overstockSql,
  reorderPointSql,
  reorderQtySql,
  statisticalSafetyStockSql,
} from "../../server/jobs/planning/planning.ts";
import { createTestDatabase, type TestDatabase, testBackend } from "../helpers/db.ts";

/** ⌈a ÷ b⌉ for b > 0, exactly. */
function ceilDiv(a: bigint, b: bigint): bigint {
  return a >= 0n ? (a + b - 1n) / b : -(-a / b);
}
const max = (a: bigint, b: bigint) => (a > b ? a : b);

/** Smallest k ≥ 0 with k² × q ≥ p (p, q > 0): ⌈√(p ÷ q)⌉ exactly. */
function ceilSqrt(p: bigint, q: bigint): bigint {
  if (p <= 0n) return 0n;
  let k = BigInt(Math.max(0, Math.floor(Math.sqrt(Number(p) / Number(q))) - 2));
  while (k * k * q < p) k++;
  return k;
}

/** A small seeded generator (mulberry32), so a failure can be replayed. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
}

interface Case {
  /** d = u ÷ n: units sold over in-stock days */
  u: number;
  n: number;
  /** Σx² of the daily units (for σd²) */
  sxx: number;
  /** L = t ÷ k: lead-time samples' total days over their count; v: Σ(days − mean)² × k ... as V = σL² × (k − 1) × k² */
  t: number;
  k: number;
  /** σL² = vNum ÷ vDen exactly */
  vNum: number;
  vDen: number;
  ss: number;
  onHand: number;
  stock: number;
  overDays: number;
  ssDays: number;
  daysOfStock: number;
  moq: number;
  caseQty: number;
  /** z × 10⁶ */
  z6: number;
}

function cases(count: number, seed: number): Case[] {
  const r = rng(seed);
  const out: Case[] = [
    // The issue's own example: d = 101 ÷ 7 = 14.428571…, L = 7 → d × L = 101 exactly (not 102).
    {
      u: 101,
      n: 7,
      sxx: 1500,
      t: 21,
      k: 3,
      vNum: 0,
      vDen: 1,
      ss: 0,
      onHand: 500,
      stock: 0,
      overDays: 7,
      ssDays: 7,
      daysOfStock: 0,
      moq: 1,
      caseQty: 1,
      z6: 1644854,
    },
  ];
  for (let i = 0; i < count; i++) {
    const n = r(1, 90);
    // Whole results are the interesting ones: often make u a multiple of n's factors.
    const u = r(0, 3) === 0 ? n * r(0, 60) : r(0, 4000);
    const k = r(3, 12);
    const t = r(0, 2) === 0 ? k * r(1, 60) : r(k, k * 60);
    out.push({
      u,
      n,
      sxx: u * r(1, 40),
      t,
      k,
      vNum: r(0, 3) === 0 ? 0 : r(1, 5000),
      vDen: r(1, 200),
      ss: r(0, 400),
      onHand: r(0, 3000),
      stock: r(0, 3000),
      overDays: r(1, 365),
      ssDays: r(0, 30),
      daysOfStock: r(0, 60),
      moq: r(1, 50),
      caseQty: r(1, 24),
      z6: r(0, 3) === 0 ? 2_000_000 : r(500_000, 3_500_000),
    });
  }
  return out;
}

/** The figures by exact rational arithmetic. */
function exact(c: Case) {
  const [u, n, t, k, ss] = [BigInt(c.u), BigInt(c.n), BigInt(c.t), BigInt(c.k), BigInt(c.ss)];
  // d = u/n, L = t/k
  const rop = ceilDiv(u * t + ss * n * k, n * k);
  const ssDays = max(0n, ceilDiv(BigInt(c.ssDays) * u, n));
  const over = max(0n, BigInt(c.onHand) - ceilDiv(ss * n + u * BigInt(c.overDays), n));
  // need = d × (L + days of stock) + SS − stock = u (t + dos k) / (n k) + ss − stock
  const needNum = u * (t + BigInt(c.daysOfStock) * k) + (ss - BigInt(c.stock)) * n * k;
  const needDen = n * k;
  const reorder =
    needNum <= 0n
      ? 0n
      : ceilDiv(max(ceilDiv(needNum, needDen), BigInt(c.moq)), BigInt(c.caseQty)) * BigInt(c.caseQty);
  // σd² = (sxx − u²/n)/(n − 1) = (n sxx − u²) / (n (n − 1)); X = L σd² + d² σL²
  let statistical = 0n;
  if (c.n >= 2) {
    const varNum = max(0n, n * BigInt(c.sxx) - u * u);
    const varDen = n * (n - 1n);
    const vNum = BigInt(c.vNum);
    const vDen = BigInt(c.vDen);
    // X = t varNum / (k varDen) + u² vNum / (n² vDen)
    const xNum = t * varNum * n * n * vDen + u * u * vNum * k * varDen;
    const xDen = k * varDen * n * n * vDen;
    // (z × X)... z = z6 / 10⁶: z² X = z6² xNum / (10¹² xDen)
    const z6 = BigInt(c.z6);
    statistical = ceilSqrt(z6 * z6 * xNum, 10n ** 12n * xDen);
  }
  return { rop, ssDays, over, reorder, statistical };
}

describe(`rounding only at the end (${testBackend})`, () => {
  let tdb: TestDatabase;
  let conn: SqlConnection;
  beforeAll(async () => {
    tdb = await createTestDatabase({ migrated: false });
    conn = await tdb.db.connect();
  });
  afterAll(async () => {
    await conn.release();
    await tdb.drop();
  });

  it("⌈7 × 14.4286⌉ is not 102: d × L of 101 units over 7 days and a 7-day lead time gives ROP 101", async () => {
    const [row] = await conn.query<{ rop: number; rounded: number }>(
      `SELECT ${reorderPointSql("(101::numeric / 7)", "(21::numeric / 3)", "0")}::int AS rop,
              ceil(round(101::numeric / 7, 4) * 7)::int AS rounded`,
    );
    expect(row).toEqual({ rop: 101, rounded: 102 });
  });

  it("over 3,000 random inputs every figure equals exact rational arithmetic", async () => {
    const all = cases(3000, 20261125);
    const col = (f: (c: Case) => number) => all.map(f);
    const rows = await conn.query<{
      i: number;
      rop: string;
      ss_days: string;
      over: string;
      reorder: string;
      statistical: string;
    }>(
      `WITH c AS (
         SELECT * FROM unnest($1::int[], $2::int[], $3::int[], $4::int[], $5::int[], $6::int[], $7::int[],
           $8::int[], $9::int[], $10::int[], $11::int[], $12::int[], $13::int[], $14::int[], $15::int[],
           $16::int[], $17::int[])
           AS t(i, u, n, sxx, t, k, vnum, vden, ss, on_hand, stock, over_days, ss_days, dos, moq, case_qty, z6)
       ),
       -- As the modules compute them: d̄ = Σx ÷ n, σd² = (Σx² − Σx²/n)/(n − 1), L = avg (Σ ÷ k),
       -- σL = stddev_samp (a square root), z a decimal.
       x AS (
         SELECT c.*, u::numeric / n AS d, t::numeric / k AS lt,
           CASE WHEN n >= 2 THEN GREATEST((sxx::numeric - u::numeric * u / n) / (n - 1), 0) ELSE 0 END AS var_d,
           sqrt(vnum::numeric / vden) AS slt,
           (z6::numeric / 1000000) AS z
         FROM c
       )
       SELECT i,
         ${reorderPointSql("d", "lt", "ss")} AS rop,
         ${daysSafetyStockSql("ss_days", "d")} AS ss_days,
         ${overstockSql("on_hand", "ss", "d", "over_days")} AS over,
         CASE WHEN d * (lt + dos) + ss - stock <= 0 THEN 0
              ELSE ${reorderQtySql("d * (lt + dos) + ss - stock", "moq", "case_qty")} END AS reorder,
         CASE WHEN n >= 2 THEN ${statisticalSafetyStockSql("z", "lt", "var_d", "d", "slt")} ELSE 0 END AS statistical
       FROM x ORDER BY i`,
      [
        col((_) => 0).map((_, i) => i),
        col((c) => c.u),
        col((c) => c.n),
        col((c) => c.sxx),
        col((c) => c.t),
        col((c) => c.k),
        col((c) => c.vNum),
        col((c) => c.vDen),
        col((c) => c.ss),
        col((c) => c.onHand),
        col((c) => c.stock),
        col((c) => c.overDays),
        col((c) => c.ssDays),
        col((c) => c.daysOfStock),
        col((c) => c.moq),
        col((c) => c.caseQty),
        col((c) => c.z6),
      ],
    );
    expect(rows).toHaveLength(all.length);
    const wrong: string[] = [];
    for (const r of rows) {
      const c = all[r.i]!;
      const e = exact(c);
      const got = {
        rop: BigInt(r.rop),
        ssDays: BigInt(r.ss_days),
        over: BigInt(r.over),
        reorder: BigInt(r.reorder),
        statistical: BigInt(r.statistical),
      };
      for (const key of Object.keys(e) as (keyof typeof e)[])
        if (got[key] !== e[key]) wrong.push(`${key} ${JSON.stringify(c)}: SQL ${got[key]}, exact ${e[key]}`);
    }
    expect(wrong.slice(0, 5)).toEqual([]);
    // The inputs did reach whole results, where a rounded d̄ would overshoot.
    const whole = all.filter((c) => (c.u * c.t) % (c.n * c.k) === 0 && (c.u * 10_000) % c.n !== 0).length;
    expect(whole).toBeGreaterThan(20);
  });
});
