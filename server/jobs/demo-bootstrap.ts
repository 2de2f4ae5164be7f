import fs from "node:fs";
import path from "node:path";
import { generateDemoData } from "../../scripts/lib/demo-data.ts";
import type { AppServices } from "../services.ts";

type Log = { info(msg: string): void; warn(msg: string): void };

/**
 * First start on an empty database: write a small demo data set (about 2k products, 2 years) into
 * SOURCE_DIR unless files are already there, and run a Full Reset, so a new user sees real numbers.
 * Runs after the server listens; the Data Management screen shows its progress. DEMO_DATA=0 turns it off.
 */
export async function bootstrapDemoData(services: AppServices, log: Log): Promise<void> {
  const { db, config, dataOps } = services;
  if (!config.demoData) return;
  const [products, runs] = await Promise.all([db.prisma.product.count(), db.prisma.dataRun.count()]);
  if (products > 0 || runs > 0) return;
  if (!fs.existsSync(path.join(config.sourceDir, "products.csv"))) {
    log.info(`Writing demo data (2,000 products, 2 years) into ${config.sourceDir}…`);
    const { ms } = await generateDemoData({ out: config.sourceDir, products: 2000, years: 2 });
    log.info(`Demo data written in ${(ms / 1000).toFixed(1)} s`);
  }
  const { run_id } = await dataOps.start("reset", null);
  log.info(`Full reset ${run_id} started to import the data in ${config.sourceDir}`);
}
