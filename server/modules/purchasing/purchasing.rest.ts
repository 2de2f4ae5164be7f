import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { idSchema } from "../../../shared/input.ts";
import {
  fromSuggestionsInput,
  poListInput,
  poNumberSchema,
  poUpdateInput,
  reasonInput,
  receiptInput,
  replenishmentInput,
  vendorTermsInput,
} from "../../../shared/purchasing.ts";
import { parseBody } from "../../http/validate.ts";
import type { AppServices } from "../../services.ts";
import { purchaseOrderCsv, purchaseOrderPdf } from "./purchasing.export.ts";
import {
  cancelPurchaseOrder,
  closePurchaseOrder,
  createFromSuggestions,
  getPurchaseOrder,
  listPurchaseOrders,
  listReplenishment,
  markOrdered,
  recordReceipt,
  replenishmentFacets,
  updatePurchaseOrder,
  updateVendorTerms,
} from "./purchasing.service.ts";

const numberParams = z.object({ number: poNumberSchema });
const vendorParams = z.object({ vendor_id: idSchema });

/** REST for scripts over the purchasing service (docs/api.md "Purchasing"). */
export async function purchasingRestRoutes(app: FastifyInstance, services: AppServices) {
  const { db, config } = services;
  const see = { config: { auth: "access:purchase_orders" as const } };
  const create = { config: { auth: "create:purchase_orders" as const } };
  const update = { config: { auth: "update:purchase_orders" as const } };
  const receive = { config: { auth: "receive:purchase_orders" as const } };
  const edit = { config: { auth: ["create:purchase_orders", "update:purchase_orders"] as const } };
  const num = (params: unknown) => parseBody(numberParams, params, "path").number;

  app.get("/api/replenishment", see, (req) =>
    listReplenishment(db, parseBody(replenishmentInput, req.query, "query")),
  );
  app.get("/api/replenishment/facets", see, (req) =>
    replenishmentFacets(db, parseBody(replenishmentInput, req.query, "query")),
  );
  app.get("/api/purchase-orders", see, (req) =>
    listPurchaseOrders(db, parseBody(poListInput, req.query, "query")),
  );
  app.get("/api/purchase-orders/:number", see, (req) => getPurchaseOrder(db, num(req.params)));
  app.post("/api/purchase-orders/from-suggestions", create, async (req, reply) => {
    const result = await createFromSuggestions(db, req.user!, parseBody(fromSuggestionsInput, req.body));
    return reply.code(201).send(result);
  });
  app.put("/api/purchase-orders/:number", edit, (req) =>
    updatePurchaseOrder(db, req.user!, num(req.params), parseBody(poUpdateInput, req.body)),
  );
  app.post("/api/purchase-orders/:number/order", create, (req) =>
    markOrdered(db, req.user!, num(req.params)),
  );
  app.post("/api/purchase-orders/:number/receipts", receive, (req) =>
    recordReceipt(db, req.user!, num(req.params), parseBody(receiptInput, req.body)),
  );
  app.post("/api/purchase-orders/:number/close", update, (req) =>
    closePurchaseOrder(db, req.user!, num(req.params), parseBody(reasonInput, req.body)),
  );
  app.post("/api/purchase-orders/:number/cancel", update, (req) =>
    cancelPurchaseOrder(db, req.user!, num(req.params), parseBody(reasonInput, req.body)),
  );
  app.get("/api/purchase-orders/:number/export.csv", see, async (req, reply) => {
    const po = await getPurchaseOrder(db, num(req.params));
    return reply
      .type("text/csv; charset=utf-8")
      .header("Content-Disposition", `attachment; filename="PO-${po.number}.csv"`)
      .send(purchaseOrderCsv(po));
  });
  app.get("/api/purchase-orders/:number/export.pdf", see, async (req, reply) => {
    const po = await getPurchaseOrder(db, num(req.params));
    const pdf = await purchaseOrderPdf(po, config.shop);
    return reply
      .type("application/pdf")
      .header("Content-Disposition", `attachment; filename="PO-${po.number}.pdf"`)
      .send(pdf);
  });
  app.put("/api/vendors/:vendor_id/terms", create, (req) =>
    updateVendorTerms(
      db,
      req.user!,
      parseBody(vendorParams, req.params, "path").vendor_id,
      parseBody(vendorTermsInput, req.body),
    ),
  );
}
