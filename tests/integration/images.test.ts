// The reusable image library (spec sections 3, 5 "Reusable image form", 7 "Reusable images"):
// multipart upload checked by its bytes, content-hash storage, served files, and a hostile-upload
// set that must leave nothing behind (no row, no file).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { testBackend } from "../helpers/db.ts";
import { FIXTURE_DIR } from "../helpers/pipeline.ts";

const MAX_BYTES = 200_000;

function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name);
}

describe(`reusable images (${testBackend})`, () => {
  let t: TestApp;
  let imageDir: string;
  let h: Record<string, string>;
  let png: Buffer;
  let jpeg: Buffer;
  let gif: Buffer;
  let webp: Buffer;

  beforeAll(async () => {
    imageDir = fs.mkdtempSync(path.join(os.tmpdir(), "bo-images-"));
    t = await startTestApp({
      env: { SOURCE_DIR: FIXTURE_DIR, IMAGE_DIR: imageDir, IMAGE_MAX_BYTES: String(MAX_BYTES) },
    });
    await t.app.services.dataOps.start("reset", null);
    await t.app.services.dataOps.idle();
    await t.createUser("librarian", ["settings:library_management"]);
    await t.createUser("importer", ["access:import"]);
    await t.createUser("templater", ["settings:templates"]);
    h = { cookie: (await t.login("librarian")).cookie, origin: t.url };
    const base = sharp({ create: { width: 400, height: 300, channels: 4, background: "#3366cc" } });
    png = await base.clone().png().toBuffer();
    jpeg = await base.clone().jpeg().toBuffer();
    gif = await base.clone().gif().toBuffer();
    webp = await base.clone().webp().toBuffer();
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(imageDir, { recursive: true, force: true });
  });

  function form(fields: Record<string, string>, files: { name: string; data: Buffer; type?: string }[] = []) {
    const fd = new FormData();
    for (const [k, v] of Object.entries(fields)) fd.append(k, v);
    for (const f of files)
      fd.append("image", new Blob([new Uint8Array(f.data)], { type: f.type ?? "image/png" }), f.name);
    return fd;
  }
  const upload = (body: FormData | string, headers: Record<string, string> = h) =>
    fetch(`${t.url}/api/reusable-images/upload`, { method: "POST", headers, body });
  const json = (method: string, url: string, body?: object, headers: Record<string, string> = h) =>
    fetch(`${t.url}${url}`, {
      method,
      headers: { ...headers, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  const rowCount = () => t.tdb.db.prisma.reusableImage.count();

  describe("hostile uploads: a clear 4xx and nothing stored", () => {
    const cases: [string, () => FormData | string, number, RegExp][] = [
      [
        "HTML named .png",
        () =>
          form({ name: "x", is_global: "true" }, [
            { name: "x.png", data: Buffer.from("<!doctype html><p>hi") },
          ]),
        415,
        /must be a JPEG, PNG, GIF or WebP image/,
      ],
      [
        "SVG with a script",
        () =>
          form({ name: "x", is_global: "true" }, [
            {
              name: "x.png",
              type: "image/svg+xml",
              data: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
            },
          ]),
        415,
        /Unsupported image type/,
      ],
      [
        "a PDF",
        () =>
          form({ name: "x", is_global: "true" }, [
            { name: "x.jpg", data: Buffer.from("%PDF-1.4\n%âãÏÓ\n1 0 obj") },
          ]),
        415,
        /Unsupported image type \(application\/pdf\)/,
      ],
      [
        "zero bytes",
        () => form({ name: "x", is_global: "true" }, [{ name: "x.png", data: Buffer.alloc(0) }]),
        400,
        /empty/,
      ],
      [
        "a damaged PNG",
        () =>
          form({ name: "x", is_global: "true" }, [
            { name: "x.png", data: Buffer.concat([png.subarray(0, 40), Buffer.alloc(200, 7)]) },
          ]),
        400,
        /damaged or cannot be read/,
      ],
      [
        "over the size limit",
        () =>
          form({ name: "x", is_global: "true" }, [
            { name: "big.png", data: Buffer.concat([png, Buffer.alloc(MAX_BYTES, 1)]) },
          ]),
        413,
        /larger than the 0\.2 MB limit/,
      ],
      [
        "two files",
        () =>
          form({ name: "x", is_global: "true" }, [
            { name: "a.png", data: png },
            { name: "b.png", data: png },
          ]),
        400,
        /Only one image file/,
      ],
      ["no file", () => form({ name: "x", is_global: "true" }), 400, /Image file is required/],
      [
        "no name",
        () => form({ is_global: "true" }, [{ name: "a.png", data: png }]),
        400,
        /^name: Image name is required/,
      ],
      [
        "not global and no company",
        () => form({ name: "x", is_global: "false" }, [{ name: "a.png", data: png }]),
        400,
        /^company: Company is required when the image is not global/,
      ],
      [
        "an unknown company",
        () => form({ name: "x", is_global: "false", company: "999" }, [{ name: "a.png", data: png }]),
        400,
        /^company: Unknown company/,
      ],
      ["not multipart", () => JSON.stringify({ name: "x", is_global: true }), 415, /multipart\/form-data/],
    ];
    for (const [label, body, status, message] of cases) {
      it(label, async () => {
        const res = await upload(
          body(),
          typeof body() === "string" ? { ...h, "content-type": "application/json" } : h,
        );
        const text = await res.json();
        expect(res.status, JSON.stringify(text)).toBe(status);
        expect(text.message).toMatch(message);
        expect(text.error).toBe(text.message);
        expect(await rowCount()).toBe(0);
        expect(filesUnder(imageDir)).toEqual([]);
      });
    }
  });

  describe("the library", () => {
    const created: Record<string, { id: number; image_url: string; thumbnail_url: string }> = {};

    it("uploads each accepted type, sniffing the real type from the bytes", async () => {
      for (const [name, data, mime] of [
        ["Logo PNG", png, "image/png"],
        ["Banner JPEG", jpeg, "image/jpeg"],
        ["Anim GIF", gif, "image/gif"],
        // A WebP whose name says .png: the bytes decide.
        ["Photo WebP", webp, "image/webp"],
      ] as const) {
        const res = await upload(
          form({ name, is_global: "false", company: "1" }, [{ name: `dir/${name}.png`, data }]),
        );
        expect(res.status).toBe(201);
        const body = await res.json();
        expect(body).toEqual({
          id: expect.any(Number),
          name,
          is_global: false,
          company: "1",
          file_size: data.length,
          filename: `${name}.png`,
          mime_type: mime,
          width: 400,
          height: 300,
          image_url: expect.stringMatching(
            /^\/api\/reusable-images\/files\/[0-9a-f]{64}\.(png|jpg|gif|webp)$/,
          ),
          thumbnail_url: expect.stringMatching(/^\/api\/reusable-images\/thumbnails\/[0-9a-f]{64}\.webp$/),
          created_at: expect.any(String),
          updated_at: expect.any(String),
        });
        created[name] = body;
      }
    });

    it("a global upload drops any company", async () => {
      const res = await upload(
        form({ name: "Shared", is_global: "true", company: "2" }, [{ name: "s.png", data: png }]),
      );
      expect(res.status).toBe(201);
      const body = await res.json();
      expect(body).toMatchObject({ is_global: true, company: null });
      // Same bytes as "Logo PNG": one stored file, two records.
      expect(body.image_url).toBe(created["Logo PNG"]!.image_url);
      created.Shared = body;
    });

    it("lists newest first", async () => {
      const res = await json("GET", "/api/reusable-images");
      expect(res.status).toBe(200);
      expect((await res.json()).map((i: { name: string }) => i.name)).toEqual([
        "Shared",
        "Photo WebP",
        "Anim GIF",
        "Banner JPEG",
        "Logo PNG",
      ]);
    });

    it("serves the file with its type, nosniff and long cache headers, and a WebP thumbnail", async () => {
      const res = await fetch(`${t.url}${created["Banner JPEG"]!.image_url}`, { headers: h });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("image/jpeg");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("cache-control")).toBe("private, max-age=31536000, immutable");
      expect(Buffer.from(await res.arrayBuffer()).equals(jpeg)).toBe(true);
      const etag = res.headers.get("etag")!;
      const again = await fetch(`${t.url}${created["Banner JPEG"]!.image_url}`, {
        headers: { ...h, "if-none-match": etag },
      });
      expect(again.status).toBe(304);

      const thumb = await fetch(`${t.url}${created["Banner JPEG"]!.thumbnail_url}`, { headers: h });
      expect(thumb.headers.get("content-type")).toBe("image/webp");
      const meta = await sharp(Buffer.from(await thumb.arrayBuffer())).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(["webp", 160, 120]);
    });

    it("files need a session with image access; unknown hashes are 404", async () => {
      const url = `${t.url}${created["Banner JPEG"]!.image_url}`;
      expect((await fetch(url)).status).toBe(401);
      const importer = { cookie: (await t.login("importer")).cookie };
      expect((await fetch(url, { headers: importer })).status).toBe(200);
      const templater = { cookie: (await t.login("templater")).cookie };
      expect((await fetch(url, { headers: templater })).status).toBe(403);
      expect(
        (await fetch(`${t.url}/api/reusable-images/files/${"0".repeat(64)}.png`, { headers: h })).status,
      ).toBe(404);
      expect(
        (await fetch(`${t.url}/api/reusable-images/files/..%2F..%2Fetc%2Fpasswd`, { headers: h })).status,
      ).toBe(404);
    });

    it("update changes name and scope: global clears the company; non-global needs one", async () => {
      const id = created["Anim GIF"]!.id;
      const res = await json("PUT", `/api/reusable-images/${id}`, {
        name: "Animated",
        is_global: true,
        company: "1",
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ id, name: "Animated", is_global: true, company: null });
      const bad = await json("PUT", `/api/reusable-images/${id}`, {
        name: "Animated",
        is_global: false,
        company: null,
      });
      expect(bad.status).toBe(400);
      expect((await bad.json()).message).toBe("company: Company is required when the image is not global");
      const noName = await json("PUT", `/api/reusable-images/${id}`, { name: "", is_global: true });
      expect(noName.status).toBe(400);
      expect((await json("PUT", "/api/reusable-images/99999", { name: "x", is_global: true })).status).toBe(
        404,
      );
    });

    it("delete keeps a file another record uses and removes it with the last one", async () => {
      const hashOf = (url: string) => url.split("/").pop()!.split(".")[0]!;
      const shared = hashOf(created.Shared!.image_url);
      const res = await json("DELETE", `/api/reusable-images/${created.Shared!.id}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ success: true, id: created.Shared!.id });
      expect(filesUnder(imageDir)).toContain(shared);
      await json("DELETE", `/api/reusable-images/${created["Logo PNG"]!.id}`);
      expect(filesUnder(imageDir)).not.toContain(shared);
      expect(filesUnder(imageDir)).not.toContain(`${shared}.webp`);
      expect((await fetch(`${t.url}${created.Shared!.image_url}`, { headers: h })).status).toBe(404);
      expect((await json("DELETE", `/api/reusable-images/${created.Shared!.id}`)).status).toBe(404);
    });

    it("needs settings:library_management to change the library", async () => {
      const templater = { cookie: (await t.login("templater")).cookie, origin: t.url };
      expect((await json("GET", "/api/reusable-images", undefined, templater)).status).toBe(403);
      expect(
        (await upload(form({ name: "x", is_global: "true" }, [{ name: "a.png", data: png }]), templater))
          .status,
      ).toBe(403);
      const importer = { cookie: (await t.login("importer")).cookie, origin: t.url };
      expect((await json("GET", "/api/reusable-images", undefined, importer)).status).toBe(200);
      expect(
        (await json("DELETE", `/api/reusable-images/${created["Banner JPEG"]!.id}`, undefined, importer))
          .status,
      ).toBe(403);
    });

    it("the tRPC router lists, updates and deletes", async () => {
      const trpc = (p: string, input: object) =>
        t.app.inject({
          method: "POST",
          url: `/trpc/${p}`,
          headers: {
            cookie: h.cookie!,
            host: new URL(t.url).host,
            origin: t.url,
            "content-type": "application/json",
          },
          payload: JSON.stringify({ json: input }),
        });
      const id = created["Photo WebP"]!.id;
      const res = await trpc("images.update", { id, name: "Renamed", is_global: false, company: "2" });
      expect(res.statusCode).toBe(200);
      expect(res.json().result.data.json).toMatchObject({ name: "Renamed", company: "2" });
      const bad = await trpc("images.update", { id, name: "Renamed", is_global: false });
      expect(bad.statusCode).toBe(400);
      expect((await trpc("images.delete", { id })).statusCode).toBe(200);
    });
  });
});
