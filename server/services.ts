import type { AppConfig } from "./config.ts";
import type { Database } from "./db/database.ts";
import { DataOps } from "./jobs/data-ops.ts";
import { createProgressBus, type ProgressBus } from "./jobs/progress-bus.ts";
import { CsvFolderSource } from "./jobs/source.ts";
import { AiValidation } from "./modules/aiValidation/aiValidation.service.ts";
import { LoginLimiter } from "./modules/auth/auth.service.ts";
import { SessionWatch } from "./modules/auth/session-watch.ts";
import { CHAT_STEP_COUNT, runChatImport } from "./modules/chat/import/chat-import.ts";
import {
  abortPromotionDips,
  promotionDipsSettled,
  refreshPromotionDips,
} from "./modules/discounts/promotion-dip.ts";
import { matchCreatedProducts } from "./modules/productImport/submit.ts";
import {
  cancelPageWarmUp,
  pageWarmUpSettled,
  warmPageCaches,
  warmPageCachesOnce,
} from "./modules/warm-pages.ts";
import { DiskImageStorage, type ImageStorage } from "./storage/image-storage.ts";
import { S3ImageStorage } from "./storage/s3-image-storage.ts";

/** Long-lived things every procedure and route may use; built once per app. */
export interface AppServices {
  db: Database;
  config: AppConfig;
  loginLimiter: LoginLimiter;
  bus: ProgressBus;
  dataOps: DataOps;
  /** Reusable image files (disk under IMAGE_DIR, or the IMAGE_S3_BUCKET bucket when set). */
  images: ImageStorage;
  /** Closes open requests (progress streams) of sessions that were revoked or whose user left. */
  sessions: SessionWatch;
  /** The language model step of new products' validation, and its call log. */
  ai: AiValidation;
}

type Log = { info(msg: string): void; error(obj: unknown, msg: string): void };

export async function createServices(db: Database, config: AppConfig, log?: Log): Promise<AppServices> {
  const warmError = (err: unknown, page: string) => log?.error(err, `warming the ${page} page failed`);
  const bus = await createProgressBus(db.url);
  // The newest run this instance completed and warmed the pages of: its own progress events reach
  // it over the bus too, and under load some arrive after the run has ended; a late "running" one
  // must not stop the warm-up its completion started.
  let warmedRun = 0;
  const dataOps = new DataOps({
    db,
    bus,
    source: () => new CsvFolderSource(config.sourceDir),
    stepDelayMs: config.pipelineStepDelayMs,
    sourceTimeZone: config.sourceTimeZone,
    log,
    afterImport: async (runId) => {
      warmedRun = Math.max(warmedRun, runId);
      await matchCreatedProducts(db);
      // The dip after past promotions (docs/metrics.md §16.2): seconds on a large catalogue, so in
      // the background, after the run is complete.
      void refreshPromotionDips(db, (err) => log?.error(err, "measuring the promotion dips failed"), {
        force: true,
      });
      // The pages that keep figures per calculation, computed now rather than on their first
      // request (server/modules/warm-pages.ts): in the background, never delaying the run's end.
      // Not on the embedded database: its one connection would queue users' statements behind
      // the warm-up's (and its data sets are small).
      if (db.kind === "postgres") void warmPageCaches(db, warmError);
    },
    // The measurement reads order lines and calculation tables for seconds: a run about to swap
    // them stops it (it is measured again for the run's own calculation, above).
    // A new run supersedes the warm-up of the previous calculation: it stops, so the run has the
    // machine (the run's completion warms its own calculation's pages).
    onRunStart: () => cancelPageWarmUp(db),
    beforeSwap: async () => {
      cancelPageWarmUp(db);
      await abortPromotionDips(db);
    },
    chat: {
      stepCount: CHAT_STEP_COUNT,
      run: (ctx) => runChatImport({ ...ctx, dir: config.chatSourceDir }),
    },
  });
  // Every other instance on the database keeps its own pages: it warms them when the run's
  // completion arrives on the progress bus (the instance that ran it has started already, and is
  // left alone), and a run starting on any instance stops its warm-up before the next page.
  if (db.kind === "postgres")
    bus.onProgress((event) => {
      if (event.type === "chat") return;
      if (event.status === "complete") void warmPageCachesOnce(db, warmError);
      else if (event.status === "running" && event.run_id > warmedRun) cancelPageWarmUp(db);
    });
  return {
    db,
    config,
    loginLimiter: new LoginLimiter(config.loginLimits),
    bus,
    dataOps,
    images: config.imageS3 ? new S3ImageStorage(config.imageS3) : new DiskImageStorage(config.imageDir),
    sessions: new SessionWatch(db),
    ai: new AiValidation(db, config, {
      bus,
      log: (err) => log?.error(err, "AI validation: a call record was not stored"),
    }),
  };
}

export async function closeServices(services: AppServices): Promise<void> {
  services.sessions.close();
  await services.ai.close();
  await services.dataOps.close();
  await promotionDipsSettled(services.db);
  cancelPageWarmUp(services.db);
  await pageWarmUpSettled(services.db);
  await services.bus.close();
}
