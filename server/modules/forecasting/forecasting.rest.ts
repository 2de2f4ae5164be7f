import type { FastifyInstance } from "fastify";
import {
  accuracyInput,
  exceptionsInput,
  forecastListInput,
  forecastPidInput,
  overrideIdInput,
} from "../../../shared/forecasting.ts";
import { parseBody } from "../../http/validate.ts";
import type { AppServices } from "../../services.ts";
import {
  createOverride,
  deleteOverride,
  forecastAccuracy,
  forecastExceptions,
  forecastProduct,
  listForecastRows,
} from "./forecasting.service.ts";

/** REST for scripts over the Forecasting page's service (docs/api.md "Forecasting"). */
export async function forecastingRestRoutes(app: FastifyInstance, { db }: AppServices) {
  const read = { config: { auth: "access:forecasting" as const } };
  const write = { config: { auth: "update:forecasts" as const } };
  app.get("/api/forecasting/products", read, (req) =>
    listForecastRows(db, parseBody(forecastListInput, req.query, "query")),
  );
  app.get("/api/forecasting/products/:pid", read, (req) =>
    forecastProduct(db, parseBody(forecastPidInput, req.params, "path").pid),
  );
  app.post("/api/forecasting/overrides", write, async (req, reply) => {
    const created = await createOverride(db, req.user!, req.body);
    return reply.status(201).send(created);
  });
  app.delete("/api/forecasting/overrides/:id", write, (req) =>
    deleteOverride(db, parseBody(overrideIdInput, req.params, "path").id),
  );
  app.get("/api/forecasting/accuracy", read, (req) =>
    forecastAccuracy(db, parseBody(accuracyInput, req.query, "query")),
  );
  app.get("/api/forecasting/exceptions", read, (req) =>
    forecastExceptions(db, parseBody(exceptionsInput, req.query, "query")),
  );
}
