import { z } from "zod";
import {
  GlobalSettingsUpdateSchema,
  ProductPidSchema,
  ProductSettingInputSchema,
  SETTINGS_PAGE_SIZE,
  SettingsPageQuerySchema,
  VendorNameSchema,
  VendorSettingInputSchema,
} from "../../../shared/settings.ts";
import { permissionProcedure, router } from "../../trpc/trpc.ts";
import {
  listGlobalSettings,
  listProductSettings,
  listVendorSettings,
  resetProductSetting,
  resetVendorSetting,
  updateGlobalSettings,
  updateProductSetting,
  updateVendorSetting,
} from "./config.service.ts";

const globalProcedure = permissionProcedure("settings:global");
const productProcedure = permissionProcedure("settings:products");
const vendorProcedure = permissionProcedure("settings:vendors");
const PageInput = SettingsPageQuerySchema.default({ page: 1, pageSize: SETTINGS_PAGE_SIZE });

export const configRouter = router({
  global: globalProcedure.query(({ ctx }) => listGlobalSettings(ctx.db)),
  updateGlobal: globalProcedure
    .input(z.object({ settings: GlobalSettingsUpdateSchema }))
    .mutation(({ ctx, input }) => updateGlobalSettings(ctx.db, input.settings)),

  products: productProcedure.input(PageInput).query(({ ctx, input }) => listProductSettings(ctx.db, input)),
  updateProduct: productProcedure
    .input(ProductPidSchema.extend({ settings: ProductSettingInputSchema }))
    .mutation(({ ctx, input }) => updateProductSetting(ctx.db, input.pid, input.settings)),
  resetProduct: productProcedure
    .input(ProductPidSchema)
    .mutation(({ ctx, input }) => resetProductSetting(ctx.db, input.pid)),

  vendors: vendorProcedure.input(PageInput).query(({ ctx, input }) => listVendorSettings(ctx.db, input)),
  updateVendor: vendorProcedure
    .input(VendorNameSchema.extend({ settings: VendorSettingInputSchema }))
    .mutation(({ ctx, input }) => updateVendorSetting(ctx.db, input.vendor, input.settings)),
  resetVendor: vendorProcedure
    .input(VendorNameSchema)
    .mutation(({ ctx, input }) => resetVendorSetting(ctx.db, input.vendor)),
});
