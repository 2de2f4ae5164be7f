import type { FastifyInstance, FastifyReply } from "fastify";
import { analyticsExportInput, overviewExportInput } from "../../../shared/analytics.ts";
import { hasPermission, type PageKey } from "../../../shared/permissions.ts";
import { AppError, unauthorized } from "../../errors.ts";
import { parseBody } from "../../http/validate.ts";
import type { AppServices } from "../../services.ts";
import { toCsv } from "../productImport/submit.ts";
import { analyticsTable } from "./analytics.service.ts";
import { overviewCsv } from "./overview.service.ts";

function sendCsv(reply: FastifyReply, filename: string, rows: (string | number)[][]) {
  return reply
    .header("Content-Type", "text/csv; charset=utf-8")
    .header("Content-Disposition", `attachment; filename="${filename.replace(/[^\w.-]+/g, "_")}"`)
    .header("X-Content-Type-Options", "nosniff")
    .header("Cache-Control", "no-store")
    .send(toCsv(rows));
}

/**
 * CSV downloads of the Overview's and Analytics' tables (docs/api.md "Reports"): they need
 * export:reports, and the page's own permission as well (the route checks both).
 */
export async function analyticsRestRoutes(app: FastifyInstance, services: AppServices) {
  const { db } = services;
  const needPage = (
    req: { user: { is_admin: boolean; permissions: readonly string[] } | null },
    page: PageKey,
  ) => {
    if (!req.user) throw unauthorized();
    if (!hasPermission(req.user, `access:${page}`))
      throw new AppError("FORBIDDEN", `You don't have permission to do this (needs access:${page})`);
    return req.user;
  };
  app.get("/api/overview/export", { config: { auth: "export:reports" } }, async (req, reply) => {
    const user = needPage(req, "overview");
    const input = parseBody(overviewExportInput, req.query, "query");
    const { filename, rows } = await overviewCsv(db, user, input);
    return sendCsv(reply, filename, rows);
  });
  app.get("/api/analytics/export", { config: { auth: "export:reports" } }, async (req, reply) => {
    const user = needPage(req, "analytics");
    const input = parseBody(analyticsExportInput, req.query, "query");
    const table = await analyticsTable(db, user, input.chart, input);
    if (!table.columns.length) throw new AppError("CONFLICT", "No data yet: run a full update or reset");
    return sendCsv(reply, `analytics-${input.chart}.csv`, [
      table.columns,
      ...table.rows.map((r) =>
        r.map((v) => (v === null ? "" : typeof v === "number" ? Number(v.toFixed(4)) : v)),
      ),
    ]);
  });
}
