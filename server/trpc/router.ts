import { aiValidationRouter } from "../modules/aiValidation/aiValidation.router.ts";
import { analyticsRouter } from "../modules/analytics/analytics.router.ts";
import { authRouter } from "../modules/auth/auth.router.ts";
import { chatRouter } from "../modules/chat/chat.router.ts";
import { configRouter } from "../modules/config/config.router.ts";
import { dashboardRouter } from "../modules/dashboard/dashboard.router.ts";
import { dataOpsRouter } from "../modules/dataOps/dataOps.router.ts";
import { discountsRouter } from "../modules/discounts/discounts.router.ts";
import { forecastingRouter } from "../modules/forecasting/forecasting.router.ts";
import { imagesRouter } from "../modules/images/images.router.ts";
import { metricsRouter } from "../modules/metrics/metrics.router.ts";
import { productImportRouter } from "../modules/productImport/productImport.router.ts";
import { promptsRouter } from "../modules/prompts/prompts.router.ts";
import { purchasingRouter } from "../modules/purchasing/purchasing.router.ts";
import { templatesRouter } from "../modules/templates/templates.router.ts";
import { usersRouter } from "../modules/users/users.router.ts";
import { router } from "./trpc.ts";

export const appRouter = router({
  auth: authRouter,
  users: usersRouter,
  dataOps: dataOpsRouter,
  config: configRouter,
  chat: chatRouter,
  templates: templatesRouter,
  prompts: promptsRouter,
  images: imagesRouter,
  metrics: metricsRouter,
  discounts: discountsRouter,
  dashboard: dashboardRouter,
  analytics: analyticsRouter,
  forecasting: forecastingRouter,
  purchasing: purchasingRouter,
  productImport: productImportRouter,
  aiValidation: aiValidationRouter,
});

export type AppRouter = typeof appRouter;
