import { openDatabase } from "../server/db/database.ts";
import { simulateDiscount } from "../server/modules/discounts/discounts.service.ts";
import { addDays } from "../shared/discounts.ts";
const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL!, poolSize: 4 });
const q = (s: string, ...p: unknown[]) => db.prisma.$queryRawUnsafe<any[]>(s, ...p);
const [fc] = await q("SELECT to_char(week_start, 'YYYY-MM-DD') AS first FROM product_forecasts LIMIT 1");
const first = fc.first;
const scenario = { scope: { category_id: 116 }, discount_pct: 25, starts_on: addDays(first, 7), ends_on: addDays(first, 20) };
(globalThis as any).__prof = {};
const xs: number[] = [];
for (let i = 0; i < Number(process.env.N ?? 15); i++) { const t0 = performance.now(); await simulateDiscount(db, scenario); xs.push(performance.now() - t0); }
xs.sort((a, b) => a - b);
console.log("simulate", xs.map((x) => Math.round(x)).join(" "));
const pr = (globalThis as any).__prof;
for (const k of Object.keys(pr)) { const v = pr[k].sort((a: number, b: number) => a - b); console.log(k, v.map((x: number) => Math.round(x)).join(" ")); }
await db.close();
