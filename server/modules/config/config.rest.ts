import type { FastifyInstance } from "fastify";
import {
  GlobalSettingsUpdateSchema,
  ProductPidSchema,
  ProductSettingInputSchema,
  SettingsPageQuerySchema,
  VendorNameSchema,
  VendorSettingInputSchema,
} from "../../../shared/settings.ts";
import { parseBody } from "../../http/validate.ts";
import type { AppServices } from "../../services.ts";
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

/**
 * Legacy REST of spec section 7 "Forecasting configuration", at /config/* and /api/config/*.
 * Vendor names travel URL-encoded in the path ("Vendor, B" → /config/vendors/Vendor%2C%20B).
 */
export async function configRestRoutes(app: FastifyInstance, services: AppServices) {
  const { db } = services;
  const global = { config: { auth: "settings:global" as const } };
  const products = { config: { auth: "settings:products" as const } };
  const vendors = { config: { auth: "settings:vendors" as const } };
  for (const prefix of ["", "/api"]) {
    const base = `${prefix}/config`;
    app.get(`${base}/global`, global, () => listGlobalSettings(db));
    app.put(`${base}/global`, global, (req) =>
      updateGlobalSettings(db, parseBody(GlobalSettingsUpdateSchema, req.body)),
    );

    app.get(`${base}/products`, products, (req) =>
      listProductSettings(db, parseBody(SettingsPageQuerySchema, req.query)),
    );
    app.put(`${base}/products/:pid`, products, (req) =>
      updateProductSetting(
        db,
        parseBody(ProductPidSchema, req.params).pid,
        parseBody(ProductSettingInputSchema, req.body),
      ),
    );
    app.post(`${base}/products/:pid/reset`, products, (req) =>
      resetProductSetting(db, parseBody(ProductPidSchema, req.params).pid),
    );

    app.get(`${base}/vendors`, vendors, (req) =>
      listVendorSettings(db, parseBody(SettingsPageQuerySchema, req.query)),
    );
    app.put(`${base}/vendors/:vendor`, vendors, (req) =>
      updateVendorSetting(
        db,
        parseBody(VendorNameSchema, req.params).vendor,
        parseBody(VendorSettingInputSchema, req.body),
      ),
    );
    app.post(`${base}/vendors/:vendor/reset`, vendors, (req) =>
      resetVendorSetting(db, parseBody(VendorNameSchema, req.params).vendor),
    );
  }
}
