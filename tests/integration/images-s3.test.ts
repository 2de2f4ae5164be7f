// The reusable image library on an S3-compatible bucket (IMAGE_S3_*): the app talks SigV4-signed
// path-style HTTP to a real S3 emulator (s3rver, on a free port with a temp directory) and the
// bucket is inspected through the S3 API itself. Same contract as the disk store: content-hash keys, shared objects for identical
// bytes, objects gone with the last record, nothing stored for a refused or failed upload.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { AwsClient } from "aws4fetch";
import S3rver from "s3rver";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../server/config.ts";
import { S3ImageStorage } from "../../server/storage/s3-image-storage.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { testBackend } from "../helpers/db.ts";

const BUCKET = "bo-images";
const PREFIX = "tenant-a/images";
// s3rver's built-in account.
const KEY_ID = "S3RVER";
const SECRET = "S3RVER";

describe("IMAGE_S3_* configuration", () => {
  const complete = {
    IMAGE_S3_BUCKET: BUCKET,
    IMAGE_S3_ENDPOINT: "http://minio:9000/",
    IMAGE_S3_ACCESS_KEY_ID: KEY_ID,
    IMAGE_S3_SECRET_ACCESS_KEY: SECRET,
  };
  const error = (env: Record<string, string>) => {
    try {
      loadConfig(env);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as Error).message;
    }
    throw new Error("no config error");
  };

  it("a bucket selects the S3 store; region defaults to us-east-1; the prefix is normalised", () => {
    expect(loadConfig({}).imageS3).toBeNull();
    expect(loadConfig({ IMAGE_S3_BUCKET: "", IMAGE_S3_ENDPOINT: " " }).imageS3).toBeNull();
    expect(loadConfig(complete).imageS3).toEqual({
      endpoint: "http://minio:9000/",
      bucket: BUCKET,
      region: "us-east-1",
      accessKeyId: KEY_ID,
      secretAccessKey: SECRET,
      prefix: "",
    });
    const withPrefix = loadConfig({ ...complete, IMAGE_S3_REGION: "auto", IMAGE_S3_PREFIX: "/a/b/" }).imageS3;
    expect(withPrefix).toMatchObject({ region: "auto", prefix: "a/b/" });
  });

  it("a bucket without endpoint or credentials is a config error naming each variable", () => {
    const message = error({ IMAGE_S3_BUCKET: BUCKET });
    expect(message).toContain("IMAGE_S3_ENDPOINT: required when IMAGE_S3_BUCKET is set");
    expect(message).toContain("IMAGE_S3_ACCESS_KEY_ID: required when IMAGE_S3_BUCKET is set");
    expect(message).toContain("IMAGE_S3_SECRET_ACCESS_KEY: required when IMAGE_S3_BUCKET is set");
    expect(error({ ...complete, IMAGE_S3_SECRET_ACCESS_KEY: "" })).toBe(
      "Invalid configuration:\n  IMAGE_S3_SECRET_ACCESS_KEY: required when IMAGE_S3_BUCKET is set",
    );
  });

  it("S3 settings without a bucket, a bad endpoint, bucket or prefix are refused", () => {
    expect(error({ IMAGE_S3_ENDPOINT: "http://minio:9000" })).toContain(
      "IMAGE_S3_BUCKET: required when IMAGE_S3_ENDPOINT is set",
    );
    expect(error({ ...complete, IMAGE_S3_ENDPOINT: "minio:9000" })).toContain(
      "IMAGE_S3_ENDPOINT: must be an http:// or https:// URL",
    );
    expect(error({ ...complete, IMAGE_S3_BUCKET: "a/b" })).toContain(
      "IMAGE_S3_BUCKET: must be a bucket name",
    );
    expect(error({ ...complete, IMAGE_S3_PREFIX: "a/../b" })).toContain("IMAGE_S3_PREFIX: must not contain");
  });
});

describe(`reusable images in an S3 bucket (${testBackend})`, () => {
  let s3: S3rver;
  let s3Dir: string;
  let endpoint: string;
  let t: TestApp;
  let h: Record<string, string>;
  let png: Buffer;
  let jpeg: Buffer;
  const admin = new AwsClient({
    accessKeyId: KEY_ID,
    secretAccessKey: SECRET,
    service: "s3",
    region: "us-east-1",
  });

  /** Every object in the bucket, by key, through the S3 API (ListObjectsV2). */
  async function objects(): Promise<Map<string, { etag: string; lastModified: string; size: number }>> {
    const res = await admin.fetch(`${endpoint}/${BUCKET}?list-type=2`);
    expect(res.status).toBe(200);
    const xml = await res.text();
    const found = new Map<string, { etag: string; lastModified: string; size: number }>();
    for (const [, c] of xml.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)) {
      const tag = (name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(c!)![1]!;
      found.set(tag("Key"), {
        etag: tag("ETag"),
        lastModified: tag("LastModified"),
        size: Number(tag("Size")),
      });
    }
    return found;
  }
  const getObject = async (key: string) => {
    const res = await admin.fetch(`${endpoint}/${BUCKET}/${key}`);
    return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
  };
  const keysOf = (hash: string) => [
    `${PREFIX}/originals/${hash.slice(0, 2)}/${hash}`,
    `${PREFIX}/thumbnails/${hash.slice(0, 2)}/${hash}.webp`,
  ];
  const hashOf = (url: string) => url.split("/").pop()!.split(".")[0]!;

  function s3Env(overrides: Record<string, string> = {}) {
    return {
      IMAGE_S3_BUCKET: BUCKET,
      IMAGE_S3_ENDPOINT: endpoint,
      IMAGE_S3_ACCESS_KEY_ID: KEY_ID,
      IMAGE_S3_SECRET_ACCESS_KEY: SECRET,
      IMAGE_S3_PREFIX: PREFIX,
      // Nothing may land on disk: point the disk store somewhere that must stay absent.
      IMAGE_DIR: path.join(s3Dir, "must-not-exist"),
      IMAGE_MAX_BYTES: "200000",
      ...overrides,
    };
  }
  function form(fields: Record<string, string>, file?: { name: string; data: Buffer }) {
    const fd = new FormData();
    for (const [k, v] of Object.entries(fields)) fd.append(k, v);
    if (file) fd.append("image", new Blob([new Uint8Array(file.data)], { type: "image/png" }), file.name);
    return fd;
  }
  const upload = (app: TestApp, headers: Record<string, string>, body: FormData) =>
    fetch(`${app.url}/api/reusable-images/upload`, { method: "POST", headers, body });
  const del = (id: number) => fetch(`${t.url}/api/reusable-images/${id}`, { method: "DELETE", headers: h });

  beforeAll(async () => {
    s3Dir = fs.mkdtempSync(path.join(os.tmpdir(), "bo-s3rver-"));
    s3 = new S3rver({
      address: "127.0.0.1",
      port: 0,
      silent: true,
      directory: path.join(s3Dir, "buckets"),
      configureBuckets: [{ name: BUCKET }],
    });
    const { port } = await s3.run();
    endpoint = `http://127.0.0.1:${port}`;
    t = await startTestApp({ env: s3Env() });
    await t.createUser("librarian", ["settings:library_management"]);
    h = { cookie: (await t.login("librarian")).cookie, origin: t.url };
    const base = sharp({ create: { width: 400, height: 300, channels: 3, background: "#cc6633" } });
    png = await base.clone().png().toBuffer();
    jpeg = await base.clone().jpeg().toBuffer();
  });
  afterAll(async () => {
    await t?.close();
    await s3?.close();
    fs.rmSync(s3Dir, { recursive: true, force: true });
  });

  const created: Record<string, { id: number; image_url: string; thumbnail_url: string }> = {};

  it("the app runs on the S3 store", () => {
    expect(t.app.services.images).toBeInstanceOf(S3ImageStorage);
  });

  it("a refused upload stores nothing", async () => {
    const html = await upload(
      t,
      h,
      form({ name: "x", is_global: "true" }, { name: "x.png", data: Buffer.from("<!doctype html><p>hi") }),
    );
    expect(html.status).toBe(415);
    const big = await upload(
      t,
      h,
      form(
        { name: "x", is_global: "true" },
        { name: "big.png", data: Buffer.concat([png, Buffer.alloc(200_000)]) },
      ),
    );
    expect(big.status).toBe(413);
    expect(await t.tdb.db.prisma.reusableImage.count()).toBe(0);
    expect([...(await objects()).keys()]).toEqual([]);
  });

  it("an upload stores the original and a WebP thumbnail under the content-hash keys", async () => {
    for (const [name, data] of [
      ["Logo", png],
      ["Photo", jpeg],
    ] as const) {
      const res = await upload(t, h, form({ name, is_global: "true" }, { name: `${name}.png`, data }));
      expect(res.status).toBe(201);
      created[name] = await res.json();
    }
    const hash = hashOf(created.Logo!.image_url);
    const [originalKey, thumbnailKey] = keysOf(hash);
    const stored = await objects();
    expect([...stored.keys()].sort()).toEqual(
      [...keysOf(hash), ...keysOf(hashOf(created.Photo!.image_url))].sort(),
    );
    const original = await getObject(originalKey!);
    expect(original.body.equals(png)).toBe(true);
    const thumbnail = await getObject(thumbnailKey!);
    expect((await sharp(thumbnail.body).metadata()).format).toBe("webp");
    expect(fs.existsSync(path.join(s3Dir, "must-not-exist"))).toBe(false);
  });

  it("image_url and thumbnail_url answer the bytes with the right type and headers", async () => {
    const res = await fetch(`${t.url}${created.Photo!.image_url}`, { headers: h });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/jpeg");
    expect(res.headers.get("content-length")).toBe(String(jpeg.length));
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("cache-control")).toBe("private, max-age=31536000, immutable");
    expect(Buffer.from(await res.arrayBuffer()).equals(jpeg)).toBe(true);
    const cached = await fetch(`${t.url}${created.Photo!.image_url}`, {
      headers: { ...h, "if-none-match": res.headers.get("etag")! },
    });
    expect(cached.status).toBe(304);

    const thumb = await fetch(`${t.url}${created.Photo!.thumbnail_url}`, { headers: h });
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get("content-type")).toBe("image/webp");
    const meta = await sharp(Buffer.from(await thumb.arrayBuffer())).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(["webp", 160, 120]);
    expect(
      (await fetch(`${t.url}/api/reusable-images/files/${"0".repeat(64)}.png`, { headers: h })).status,
    ).toBe(404);
  });

  it("open streams the object body with its size; a missing object is null", async () => {
    const hash = hashOf(created.Logo!.image_url);
    const file = await t.app.services.images.open(hash, "original");
    expect(file).not.toBeNull();
    expect(file!.stream).toBeInstanceOf(Readable);
    expect(file!.size).toBe(png.length);
    const chunks: Buffer[] = [];
    for await (const chunk of file!.stream) chunks.push(Buffer.from(chunk));
    expect(Buffer.concat(chunks).equals(png)).toBe(true);
    expect(await t.app.services.images.open("f".repeat(64), "thumbnail")).toBeNull();
  });

  it("a duplicate upload shares the objects (not written again)", async () => {
    const before = await objects();
    const res = await upload(
      t,
      h,
      form({ name: "Logo again", is_global: "true" }, { name: "again.png", data: png }),
    );
    expect(res.status).toBe(201);
    created.Again = await res.json();
    expect(created.Again!.image_url).toBe(created.Logo!.image_url);
    expect(await objects()).toEqual(before);
  });

  it("deleting a record keeps shared objects; deleting the last one removes both", async () => {
    const keys = keysOf(hashOf(created.Logo!.image_url));
    expect((await del(created.Again!.id)).status).toBe(200);
    expect([...(await objects()).keys()]).toEqual(expect.arrayContaining(keys));
    expect((await del(created.Logo!.id)).status).toBe(200);
    const left = [...(await objects()).keys()];
    for (const key of keys) expect(left).not.toContain(key);
    expect(left).toEqual(keysOf(hashOf(created.Photo!.image_url)));
    expect((await fetch(`${t.url}${created.Logo!.image_url}`, { headers: h })).status).toBe(404);
    // Removing objects that are already gone is not an error.
    await t.app.services.images.remove(hashOf(created.Logo!.image_url));
  });

  // s3rver checks the access key id but, unlike S3/MinIO/R2, does not verify SigV4 signatures, so
  // an unknown key (not a wrong secret) is what makes it refuse.
  it("a bucket that refuses the write (unknown access key) fails the upload and keeps no record", async () => {
    const other = await startTestApp({ env: s3Env({ IMAGE_S3_ACCESS_KEY_ID: "NO-SUCH-KEY" }) });
    try {
      const cookie = (await other.login("admin")).cookie;
      const gif = await sharp({ create: { width: 20, height: 20, channels: 3, background: "#00ff00" } })
        .gif()
        .toBuffer();
      const before = await objects();
      const res = await upload(
        other,
        { cookie, origin: other.url },
        form({ name: "Denied", is_global: "true" }, { name: "d.gif", data: gif }),
      );
      expect(res.status).toBe(500);
      // The S3 error is logged, not shown.
      expect((await res.json()).message).toBe("Internal server error");
      expect(await other.tdb.db.prisma.reusableImage.count()).toBe(0);
      expect(await objects()).toEqual(before);
      await expect(
        other.app.services.images.open(hashOf(created.Photo!.image_url), "original"),
      ).rejects.toThrow(/^S3 GET tenant-a\/images\/originals\/.* answered 403 \(InvalidAccessKeyId: /);
    } finally {
      await other.close();
    }
  });
});
