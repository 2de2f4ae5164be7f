import { openDatabase } from "../server/db/database.ts";
import { dipOf } from "../server/modules/discounts/promotion-dip.ts";
const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL!, poolSize: 2 });
const rows = await db.prisma.$queryRawUnsafe<any[]>("SELECT d.*, c.name FROM category_promotion_dips d JOIN categories c ON c.id = d.category_id");
let n = 0;
for (const r of rows) { const d = dipOf(r.promotions, r.expected_units.map(Number), r.after_units.map(Number)); if (d.weeks > 0) { n++; console.log(r.name, r.promotions, d, r.expected_units.map((x: number) => Math.round(x)), r.after_units); } }
console.log("dips", n, "of", rows.length);
await db.close();
