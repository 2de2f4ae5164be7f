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
import { permissionProcedure, router } from "../../trpc/trpc.ts";
import {
  cancelPurchaseOrder,
  closePurchaseOrder,
  createFromSuggestions,
  getPurchaseOrder,
  listPurchaseOrders,
  listReplenishment,
  markOrdered,
  previewDrafts,
  recordReceipt,
  replenishmentFacets,
  updatePurchaseOrder,
  updateVendorTerms,
} from "./purchasing.service.ts";

const see = permissionProcedure("access:purchase_orders");
const create = permissionProcedure("create:purchase_orders");
const update = permissionProcedure("update:purchase_orders");
const receive = permissionProcedure("receive:purchase_orders");
const numberInput = z.object({ number: poNumberSchema });

export const purchasingRouter = router({
  replenishment: see.input(replenishmentInput).query(({ ctx, input }) => listReplenishment(ctx.db, input)),
  replenishmentFacets: see
    .input(replenishmentInput)
    .query(({ ctx, input }) => replenishmentFacets(ctx.db, input)),
  previewDrafts: create.input(fromSuggestionsInput).query(({ ctx, input }) => previewDrafts(ctx.db, input)),
  createFromSuggestions: create
    .input(fromSuggestionsInput)
    .mutation(({ ctx, input }) => createFromSuggestions(ctx.db, ctx.user!, input)),
  updateVendorTerms: create
    .input(vendorTermsInput.extend({ vendor_id: idSchema }))
    .mutation(({ ctx, input }) => {
      const { vendor_id, ...terms } = input;
      return updateVendorTerms(ctx.db, ctx.user!, vendor_id, terms);
    }),
  list: see.input(poListInput).query(({ ctx, input }) => listPurchaseOrders(ctx.db, input)),
  get: see.input(numberInput).query(({ ctx, input }) => getPurchaseOrder(ctx.db, input.number)),
  // A draft needs create:purchase_orders, an ordered PO update:purchase_orders (checked by status).
  update: permissionProcedure(["create:purchase_orders", "update:purchase_orders"])
    .input(poUpdateInput.extend({ number: poNumberSchema }))
    .mutation(({ ctx, input }) => {
      const { number, ...rest } = input;
      return updatePurchaseOrder(ctx.db, ctx.user!, number, rest);
    }),
  order: create.input(numberInput).mutation(({ ctx, input }) => markOrdered(ctx.db, ctx.user!, input.number)),
  receive: receive.input(receiptInput.extend({ number: poNumberSchema })).mutation(({ ctx, input }) => {
    const { number, ...rest } = input;
    return recordReceipt(ctx.db, ctx.user!, number, rest);
  }),
  close: update
    .input(reasonInput.extend({ number: poNumberSchema }))
    .mutation(({ ctx, input }) => closePurchaseOrder(ctx.db, ctx.user!, input.number, input)),
  cancel: update
    .input(reasonInput.extend({ number: poNumberSchema }))
    .mutation(({ ctx, input }) => cancelPurchaseOrder(ctx.db, ctx.user!, input.number, input)),
});
