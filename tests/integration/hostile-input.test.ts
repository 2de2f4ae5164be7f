// Hostile input, table-driven: every request below gets a clear 4xx with the { error, message } body
// (tRPC: its error shape) naming what is wrong, and writes nothing. The rows come from probing the
// app as an attacker would: NUL characters anywhere, numbers beyond their column, malformed bodies,
// odd methods, long inputs, hostile files, foreign origins, missing permissions.
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { testBackend } from "../helpers/db.ts";
import { FIXTURE_DIR } from "../helpers/pipeline.ts";

const NUL = "\u0000";
const NUL_TEXT = "must not contain a NUL character (\\u0000)";
const INT_RANGE = "must be a whole number from 1 to 2147483647";

function crc32(buf: Buffer): number {
  let c = ~0;
  for (const b of buf) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  return ~c >>> 0;
}
function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}
/** A small PNG that claims 60,000 × 60,000 pixels (3.6 gigapixels): a decompression bomb. */
function pngBomb(): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(60_000, 0);
  ihdr.writeUInt32BE(60_000, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // greyscale
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", zlib.deflateSync(Buffer.alloc(4 * 1024 * 1024))),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}

interface Case {
  label: string;
  method: string;
  url: string;
  /** An object is sent as JSON; a string or FormData as is. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Sign in as: "admin" (default, session cookie + this server's Origin), "none", or "nobody" (no permissions). */
  as?: "admin" | "none" | "nobody";
  status: number;
  /** The exact message, or a pattern for it. */
  message: string | RegExp;
  /** Extra checks after the answer. */
  check?: (res: Response) => Promise<void> | void;
}

function multipart(fields: Record<string, string>, file?: { name: string; data: Buffer; type?: string }) {
  const fd = new FormData();
  for (const [k, v] of Object.entries(fields)) fd.append(k, v);
  if (file)
    fd.append("image", new Blob([new Uint8Array(file.data)], { type: file.type ?? "image/png" }), file.name);
  return fd;
}

describe(`hostile input (${testBackend})`, () => {
  let t: TestApp;
  let imageDir: string;
  let session: { cookie: string; origin: string };
  let nobody: string;
  let png: Buffer;
  beforeAll(async () => {
    imageDir = fs.mkdtempSync(path.join(os.tmpdir(), "bo-hostile-"));
    t = await startTestApp({ env: { SOURCE_DIR: FIXTURE_DIR, IMAGE_DIR: imageDir } });
    await t.app.services.dataOps.start("reset", null);
    await t.app.services.dataOps.idle();
    session = { cookie: (await t.login("admin")).cookie, origin: t.url };
    await t.createUser("nobody", []);
    nobody = (await t.login("nobody")).token;
    png = await sharp({ create: { width: 20, height: 20, channels: 3, background: "#888" } })
      .png()
      .toBuffer();
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(imageDir, { recursive: true, force: true });
  });

  /** Every table a request here could write to, as text: compared before and after each case. */
  async function written(): Promise<string> {
    const p = t.tdb.db.prisma;
    const [templates, prompts, users, images, settings, products, vendors, runs, sessions] =
      await Promise.all([
        p.importTemplate.findMany({ orderBy: { id: "asc" } }),
        p.aiPrompt.findMany({ orderBy: { id: "asc" } }),
        p.user.findMany({ orderBy: { id: "asc" }, include: { permissions: true } }),
        p.reusableImage.findMany({ orderBy: { id: "asc" } }),
        p.globalSetting.findMany({ orderBy: { settingKey: "asc" } }),
        p.productSetting.findMany({ orderBy: { pid: "asc" } }),
        p.vendorSetting.findMany({ orderBy: { vendor: "asc" } }),
        p.dataRun.count(),
        p.session.count(),
      ]);
    const files = fs.readdirSync(imageDir, { recursive: true }).length;
    return JSON.stringify({
      templates,
      prompts,
      users,
      images,
      settings,
      products,
      vendors,
      runs,
      sessions,
      files,
    });
  }

  const trpcBody = (json: unknown) => ({ json });
  const long = (n: number) => "x".repeat(n);

  const cases: Case[] = [
    // NUL characters, wherever text comes in.
    {
      label: "NUL in the login username, before any session",
      method: "POST",
      url: "/auth-inv/login",
      as: "none",
      body: { username: `ad${NUL}min`, password: "x" },
      status: 400,
      message: `username: ${NUL_TEXT}`,
    },
    {
      label: "NUL in the tRPC login",
      method: "POST",
      url: "/trpc/auth.login",
      as: "none",
      body: trpcBody({ username: `a${NUL}`, password: "x" }),
      status: 400,
      message: `username: ${NUL_TEXT}`,
    },
    {
      label: "NUL in a tRPC query's input",
      method: "GET",
      url: `/trpc/config.products?input=${encodeURIComponent(JSON.stringify(trpcBody({ search: NUL })))}`,
      status: 400,
      message: `search: ${NUL_TEXT}`,
    },
    {
      label: "NUL in a tRPC mutation's nested input",
      method: "POST",
      url: "/trpc/config.updateGlobal",
      body: trpcBody({ settings: [{ setting_key: "low_stock_days", setting_value: `1${NUL}` }] }),
      status: 400,
      message: `settings.0.setting_value: ${NUL_TEXT}`,
    },
    {
      label: "NUL in a query parameter",
      method: "GET",
      url: "/config/products?search=a%00b",
      status: 400,
      message: `search: ${NUL_TEXT}`,
    },
    {
      label: "NUL in a query parameter's name",
      method: "GET",
      url: "/api/import/search-products?q%00=a",
      status: 400,
      message: `q\\u0000: ${NUL_TEXT}`,
    },
    {
      label: "NUL in the product search text",
      method: "GET",
      url: "/api/import/search-products?q=%00",
      status: 400,
      message: `q: ${NUL_TEXT}`,
    },
    {
      label: "NUL in a path parameter",
      method: "PUT",
      url: "/config/vendors/Ven%00dor",
      body: { default_lead_time_days: 5 },
      status: 400,
      message: `vendor: ${NUL_TEXT}`,
    },
    {
      label: "NUL in an avatar id",
      method: "GET",
      url: "/chat-api/avatar/ab%00c",
      status: 400,
      message: `mongo_id: ${NUL_TEXT}`,
    },
    {
      label: "NUL in a template field",
      method: "POST",
      url: "/api/templates",
      body: { company: "1", product_type: `Shirt${NUL}` },
      status: 400,
      message: `product_type: ${NUL_TEXT}`,
    },
    {
      label: "NUL in a prompt",
      method: "POST",
      url: "/api/ai-prompts",
      body: { prompt_text: `hi${NUL}`, prompt_type: "general" },
      status: 400,
      message: `prompt_text: ${NUL_TEXT}`,
    },
    {
      label: "NUL in a new user's name",
      method: "POST",
      url: "/auth-inv/users",
      body: { username: `new${NUL}user`, password: "secret1" },
      status: 400,
      message: `username: ${NUL_TEXT}`,
    },
    {
      label: "NUL in a JSON key",
      method: "PUT",
      url: "/config/products/1",
      body: { [`lead${NUL}`]: 1 },
      status: 400,
      message: `lead\\u0000: ${NUL_TEXT}`,
    },
    {
      label: "NUL in a global setting's key",
      method: "PUT",
      url: "/config/global",
      body: [{ setting_key: `low_stock_days${NUL}`, setting_value: "10" }],
      status: 400,
      message: `0.setting_key: ${NUL_TEXT}`,
    },
    {
      label: "NUL in an image's new name",
      method: "PUT",
      url: "/api/reusable-images/1",
      body: { name: `x${NUL}`, is_global: true },
      status: 400,
      message: `name: ${NUL_TEXT}`,
    },
    {
      label: "NUL in a multipart field",
      method: "POST",
      url: "/api/reusable-images/upload",
      body: "form:nul-field",
      status: 400,
      message: `name: ${NUL_TEXT}`,
    },
    {
      label: "NUL in a multipart file name",
      method: "POST",
      url: "/api/reusable-images/upload",
      body: "form:nul-filename",
      status: 400,
      message: `image: file name: ${NUL_TEXT}`,
    },

    // Integers beyond their column (integer: −2147483648 … 2147483647).
    {
      label: "a permission id beyond integer",
      method: "POST",
      url: "/auth-inv/users",
      body: { username: "bigperm", password: "secret1", permissions: [2147483648] },
      status: 400,
      message:
        "permissions.0: must be a permission id (a whole number from 1 to 2147483647) or a permission code",
    },
    {
      label: "rocket_chat_user_id beyond integer",
      method: "POST",
      url: "/auth-inv/users",
      body: { username: "bigchat", password: "secret1", rocket_chat_user_id: 2147483648 },
      status: 400,
      message: `rocket_chat_user_id: ${INT_RANGE}`,
    },
    ...(["supplier", "case_qty", "tax_cat"] as const).map(
      (field): Case => ({
        label: `template ${field} beyond integer`,
        method: "POST",
        url: "/api/templates",
        body: { company: "1", product_type: "Big", [field]: 2147483648 },
        status: 400,
        message: `${field}: must be a whole number from 0 to 2147483647`,
      }),
    ),
    {
      label: "company= beyond integer",
      method: "GET",
      url: "/api/import/search-products?q=a&company=99999999999",
      status: 400,
      message: "company: must be a company id (a whole number from 0 to 2147483647)",
    },
    {
      label: "a pid beyond integer in a URL",
      method: "GET",
      url: "/api/products/2147483648/metrics/explain",
      status: 400,
      message: `pid: ${INT_RANGE}`,
    },
    {
      label: "a pid beyond integer in a settings URL",
      method: "PUT",
      url: "/config/products/99999999999",
      body: {},
      status: 400,
      message: `pid: ${INT_RANGE}`,
    },
    {
      label: "a user id beyond integer",
      method: "GET",
      url: "/auth-inv/users/2147483648",
      status: 400,
      message: `id: ${INT_RANGE}`,
    },

    // Decimals beyond their column's precision.
    {
      label: "msrp 1e20 (numeric(12,2))",
      method: "POST",
      url: "/api/templates",
      body: { company: "1", product_type: "Dear", msrp: 1e20 },
      status: 400,
      message: "msrp: must be a number from 0 to 9999999999.99",
    },
    {
      label: "weight 1e300 (numeric(10,2))",
      method: "POST",
      url: "/api/templates",
      body: { company: "1", product_type: "Heavy", weight: 1e300 },
      status: 400,
      message: "weight: must be a number from 0 to 99999999.99",
    },
    {
      label: "a number JSON cannot hold (1e400 parses to Infinity)",
      method: "POST",
      url: "/api/templates",
      body: '{"company":"1","product_type":"Inf","cost_each":1e400}',
      headers: { "content-type": "application/json" },
      status: 400,
      message: "cost_each: must be a finite number",
    },
    {
      label: "a global setting beyond its range",
      method: "PUT",
      url: "/config/global",
      body: [{ setting_key: "default_lead_time_days", setting_value: 2147483648 }],
      status: 400,
      message: "default_lead_time_days: must be a whole number of days from 1 to 3650",
    },

    // Malformed multipart.
    {
      label: "multipart without a boundary",
      method: "POST",
      url: "/api/reusable-images/upload",
      body: '--x\r\nContent-Disposition: form-data; name="name"\r\n\r\nx\r\n--x--\r\n',
      headers: { "content-type": "multipart/form-data" },
      status: 400,
      message: "multipart: boundary not found",
    },
    {
      label: "multipart with the wrong boundary",
      method: "POST",
      url: "/api/reusable-images/upload",
      body: '--x\r\nContent-Disposition: form-data; name="name"\r\n\r\nx\r\n--x--\r\n',
      headers: { "content-type": "multipart/form-data; boundary=other" },
      status: 400,
      message: "multipart: unexpected end of multipart data",
    },
    {
      label: "a truncated multipart body",
      method: "POST",
      url: "/api/reusable-images/upload",
      body: '--x\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n\u0089PNG',
      headers: { "content-type": "multipart/form-data; boundary=x" },
      status: 400,
      // busboy notices the end in the part or in the form, depending on how the bytes arrive.
      message:
        /^multipart: (part terminated early due to unexpected end of multipart data|unexpected end of (form|multipart data))$/,
    },

    // Methods and malformed tRPC bodies.
    {
      label: "TRACE on /trpc",
      method: "TRACE",
      url: "/trpc/auth.me",
      status: 405,
      message: "Method TRACE is not allowed here; use GET or POST",
      check: (res) => expect(res.headers.get("allow")).toBe("GET, POST"),
    },
    {
      label: "a malformed body to a tRPC mutation without input starts nothing",
      method: "POST",
      url: "/trpc/dataOps.startFullUpdate",
      body: "{",
      headers: { "content-type": "application/json" },
      status: 400,
      message: /^the request body is not valid JSON \(/,
    },
    {
      label: "a malformed batch with auth.logout does not log out",
      method: "POST",
      url: "/trpc/auth.me,auth.logout?batch=1",
      body: '{"0":{"json":null},"1":',
      headers: { "content-type": "application/json" },
      status: 400,
      message: /^the request body is not valid JSON \(/,
      check: async () => {
        const me = await fetch(`${t.url}/auth-inv/me`, { headers: { cookie: session.cookie } });
        expect(me.status).toBe(200);
      },
    },
    {
      label: "malformed tRPC input in the query string",
      method: "GET",
      url: "/trpc/config.products?input=%7B",
      status: 400,
      message: /^input: is not valid JSON \(/,
    },

    // Messages that say what is wrong.
    {
      label: "an image name over 200 characters",
      method: "PUT",
      url: "/api/reusable-images/1",
      body: { name: long(201), is_global: true },
      status: 400,
      message: "name: at most 200 characters",
    },
    {
      label: "a product type over 200 characters",
      method: "POST",
      url: "/api/templates",
      body: { company: "1", product_type: long(201) },
      status: 400,
      message: "product_type: at most 200 characters",
    },
    {
      label: "an id of 0",
      method: "PUT",
      url: "/api/templates/0",
      body: { company: "1", product_type: "X" },
      status: 400,
      message: `id: ${INT_RANGE}`,
    },
    {
      label: "an id of −1",
      method: "DELETE",
      url: "/api/ai-prompts/-1",
      status: 400,
      message: `id: ${INT_RANGE}`,
    },
    {
      label: "a body of the wrong type",
      method: "POST",
      url: "/api/templates",
      body: '"text"',
      headers: { "content-type": "application/json" },
      status: 400,
      message: "body: expected an object, received text",
    },
    {
      label: "a URL too long for the router",
      method: "GET",
      url: `/trpc/${long(6000)}`,
      status: 414,
      message: "The request URL is too long",
    },
    {
      label: "a long unknown vendor is echoed at most 200 characters",
      method: "PUT",
      url: `/config/vendors/${long(450)}`,
      body: { default_lead_time_days: 5 },
      status: 404,
      message: `Vendor "${long(200)}…" not found`,
    },
    {
      label: "a long unknown path is echoed at most 200 characters",
      method: "GET",
      url: `/api/${long(1000)}`,
      status: 404,
      message: `Not found: GET /api/${long(195)}…`,
    },

    // Hostile files (refused already; kept so they stay refused).
    {
      label: "HTML named .png",
      method: "POST",
      url: "/api/reusable-images/upload",
      body: "form:html",
      status: 415,
      message: /^Unsupported image type.*must be a JPEG, PNG, GIF or WebP image$/,
    },
    {
      label: "SVG named .png",
      method: "POST",
      url: "/api/reusable-images/upload",
      body: "form:svg",
      status: 415,
      message: /^Unsupported image type/,
    },
    {
      label: "a decompression bomb (a PNG claiming 3.6 gigapixels)",
      method: "POST",
      url: "/api/reusable-images/upload",
      body: "form:bomb",
      status: 400,
      message: "image: The PNG image is damaged or cannot be read",
    },
    {
      label: "a 30 MB file",
      method: "POST",
      url: "/api/reusable-images/upload",
      body: "form:30mb",
      status: 413,
      message: "The image is larger than the 10 MB limit",
    },
    {
      label: "path traversal in an image file name",
      method: "GET",
      url: "/api/reusable-images/files/..%2F..%2F..%2Fetc%2Fpasswd",
      status: 404,
      message: "Image not found",
    },

    // Origins of cookie writes.
    {
      label: "a cookie write from a foreign origin",
      method: "POST",
      url: "/api/ai-prompts",
      body: { prompt_text: "x", prompt_type: "general" },
      headers: { origin: "https://evil.example" },
      status: 403,
      message: "Cross-site request refused: the Origin header does not match this server",
    },
    {
      label: "a cookie write from origin null",
      method: "POST",
      url: "/api/ai-prompts",
      body: { prompt_text: "x", prompt_type: "general" },
      headers: { origin: "null" },
      status: 403,
      message: "Cross-site request refused: the Origin header does not match this server",
    },
    {
      label: "a cookie write from this host over another scheme",
      method: "POST",
      url: "/api/ai-prompts",
      body: { prompt_text: "x", prompt_type: "general" },
      headers: { origin: "https://HOST" },
      status: 403,
      message: "Cross-site request refused: the Origin header does not match this server",
    },

    // Authorization (every procedure and route: tests/integration/permissions.test.ts).
    {
      label: "no session",
      method: "GET",
      url: "/auth-inv/users",
      as: "none",
      status: 401,
      message: "Authentication required",
    },
    {
      label: "a session without the permission",
      method: "POST",
      url: "/csv/full-reset",
      as: "nobody",
      status: 403,
      message: "You don't have permission to do this",
    },
  ];

  async function bodyFor(c: Case): Promise<{ body?: BodyInit; headers: Record<string, string> }> {
    const headers: Record<string, string> = {};
    if (typeof c.body === "string" && c.body.startsWith("form:")) {
      const kind = c.body.slice(5);
      const forms: Record<string, () => FormData> = {
        "nul-field": () => multipart({ name: `x${NUL}y`, is_global: "true" }, { name: "a.png", data: png }),
        "nul-filename": () => multipart({ name: "x", is_global: "true" }, { name: `a${NUL}.png`, data: png }),
        html: () =>
          multipart(
            { name: "x", is_global: "true" },
            { name: "x.png", data: Buffer.from("<!doctype html><p>hi") },
          ),
        svg: () =>
          multipart(
            { name: "x", is_global: "true" },
            {
              name: "x.png",
              type: "image/svg+xml",
              data: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'),
            },
          ),
        bomb: () => multipart({ name: "x", is_global: "true" }, { name: "bomb.png", data: pngBomb() }),
        "30mb": () =>
          multipart(
            { name: "x", is_global: "true" },
            { name: "big.png", data: Buffer.concat([png, Buffer.alloc(30 * 1024 * 1024)]) },
          ),
      };
      return { body: forms[kind]!(), headers };
    }
    if (c.body === undefined) return { headers };
    if (typeof c.body === "string") return { body: c.body, headers };
    headers["content-type"] = "application/json";
    return { body: JSON.stringify(c.body), headers };
  }

  it.each(cases.map((c) => [c.label, c] as const))("%s", async (_label, c) => {
    const before = await written();
    const { body, headers } = await bodyFor(c);
    const auth: Record<string, string> =
      c.as === "none"
        ? {}
        : c.as === "nobody"
          ? { authorization: `Bearer ${nobody}` }
          : { cookie: session.cookie, origin: session.origin };
    const host = new URL(t.url).host;
    const extra = Object.fromEntries(
      Object.entries(c.headers ?? {}).map(([k, v]) => [k, v.replace("HOST", host)]),
    );
    let res: Response;
    if (c.method === "TRACE") {
      // fetch refuses TRACE: a plain HTTP request.
      res = await new Promise<Response>((resolve, reject) => {
        const req = http.request(`${t.url}${c.url}`, { method: "TRACE", headers: auth }, (r) => {
          let data = "";
          r.on("data", (d) => {
            data += d;
          });
          r.on("end", () =>
            resolve(
              new Response(data, { status: r.statusCode, headers: { allow: String(r.headers.allow ?? "") } }),
            ),
          );
        });
        req.on("error", reject);
        req.end();
      });
    } else {
      res = await fetch(`${t.url}${c.url}`, {
        method: c.method,
        headers: { ...auth, ...headers, ...extra },
        body,
      });
    }
    const text = await res.text();
    expect(res.status, text.slice(0, 300)).toBe(c.status);
    const json = JSON.parse(text);
    // REST: { error, message } with the same text; tRPC: its error shape carries the message.
    const message = json.error?.json?.message ?? json.message;
    if (!c.url.startsWith("/trpc/") || json.error?.json === undefined) expect(json.error).toBe(json.message);
    if (typeof c.message === "string") expect(message).toBe(c.message);
    else expect(message).toMatch(c.message);
    await c.check?.(res);
    expect(await written(), "nothing was written").toBe(before);
  });
});
