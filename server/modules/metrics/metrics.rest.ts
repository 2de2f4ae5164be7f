import type { FastifyInstance } from "fastify";
import { metricsPidInput } from "../../../shared/metrics.ts";
import { parseBody } from "../../http/validate.ts";
import type { AppServices } from "../../services.ts";
import { explainProductMetrics } from "./metrics.service.ts";

/** REST for scripts: one product's planning figures explained (same service as metrics.explain). */
export async function metricsRestRoutes(app: FastifyInstance, services: AppServices) {
  const { db } = services;
  const products = { config: { auth: "access:products" as const } };
  app.get("/api/products/:pid/metrics/explain", products, (req) =>
    explainProductMetrics(db, parseBody(metricsPidInput, req.params).pid),
  );
}
