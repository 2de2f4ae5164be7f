import fs from "node:fs";
import path from "node:path";
import { parse } from "csv-parse/sync";
import { generateChatDemo } from "../../scripts/lib/chat-demo.ts";
import { generateDemoData } from "../../scripts/lib/demo-data.ts";
import { AppError } from "../errors.ts";
import type { AppServices } from "../services.ts";

type Log = { info(msg: string): void; warn(msg: string): void };

/** Writes the demo files into `dir` (the 2,000-product set; tests pass a smaller writer). */
export type DemoWriter = (dir: string, log: Log) => Promise<void>;

const writeDemoSet: DemoWriter = async (dir, log) => {
  log.info(`Writing demo data (2,000 products, 2 years) into ${dir}…`);
  const { ms } = await generateDemoData({ out: dir, products: 2000, years: 2 });
  log.info(`Demo data written in ${(ms / 1000).toFixed(1)} s`);
};

class AlreadyImported extends Error {}

/**
 * First start on an empty database: write a small demo data set (about 2k products, 2 years) into
 * SOURCE_DIR unless files are already there, and run a Full Reset, so a new user sees real numbers.
 * Then the demo chat archive (20k messages over the same two years, in CHAT_SOURCE_DIR) is written
 * and imported the same way. Runs after the server listens; the Data Management screen shows the
 * progress. DEMO_DATA=0 turns it off.
 * Several instances may start at once on one database (and one shared data folder): only the one
 * that wins the run lock writes the files and imports them; the others leave it to that one.
 */
async function alreadyImported({ db }: AppServices): Promise<boolean> {
  const [products, runs] = await Promise.all([db.prisma.product.count(), db.prisma.dataRun.count()]);
  return products > 0 || runs > 0;
}

/**
 * Before the server listens: on a first start (demo data on, nothing imported) the Full Reset that
 * bootstrapDemoData will start is queued, so /csv/status reports it active from the first request
 * and a Full Update started meanwhile gets 409, as it will while the reset runs.
 */
export async function queueFirstImport(services: AppServices): Promise<void> {
  if (services.config.demoData && !(await alreadyImported(services))) services.dataOps.queue("reset");
}

export async function bootstrapDemoData(
  services: AppServices,
  log: Log,
  write: DemoWriter = writeDemoSet,
): Promise<void> {
  const { config, dataOps } = services;
  if (!config.demoData) return;
  const imported = () => alreadyImported(services);
  if (await imported()) {
    dataOps.unqueue();
    return;
  }
  try {
    const { run_id } = await dataOps.start("reset", null, {
      queued: true,
      // Under the run lock: another instance may have imported while this one waited.
      async prepare() {
        if (await imported()) throw new AlreadyImported();
        if (!fs.existsSync(path.join(config.sourceDir, "products.csv"))) await write(config.sourceDir, log);
      },
    });
    log.info(`Full reset ${run_id} started to import the data in ${config.sourceDir}`);
  } catch (err) {
    // Another instance holds the lock (it writes and imports) or already did.
    dataOps.unqueue();
    if (err instanceof AlreadyImported || (err instanceof AppError && err.kind === "CONFLICT")) return;
    throw err;
  }
  // Only the instance that started the reset gets here: it writes and imports the demo chat too.
  await bootstrapDemoChat(services, log);
}

/** The demo chat archive: written (unless files are there) while the reset runs, imported after it. */
export async function bootstrapDemoChat(services: AppServices, log: Log): Promise<void> {
  const { db, config, dataOps } = services;
  if ((await db.prisma.chatRoom.count()) > 0) return;
  const dir = config.chatSourceDir;
  if (!fs.existsSync(path.join(dir, "rocketchat_message.json"))) {
    const started = Date.now();
    const result = await generateChatDemo({
      out: dir,
      messages: 20_000,
      years: 2,
      vendors: demoVendors(config.sourceDir),
    });
    log.info(
      `Demo chat archive (${result.messages.toLocaleString("en-US")} messages, ${result.rooms} rooms) written in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  }
  // One data operation at a time: the chat import follows the reset.
  await dataOps.idle();
  const { run_id } = await dataOps.start("chat", null);
  log.info(`Chat import ${run_id} started to import the archive in ${dir}`);
}

/** The demo data's vendor names, for the vendor contacts of the demo chat. */
function demoVendors(sourceDir: string): string[] {
  try {
    const rows = parse(fs.readFileSync(path.join(sourceDir, "vendors.csv")), { columns: true }) as {
      name?: string;
    }[];
    return rows.flatMap((r) => (r.name ? [r.name] : [])).slice(0, 6);
  } catch {
    return [];
  }
}
