// Image files in an S3-compatible bucket (AWS S3, MinIO, Ceph RGW, Cloudflare R2, …), chosen by
// IMAGE_S3_BUCKET. Same keys as the disk store (`originals/ab/<sha256>`, `thumbnails/ab/<sha256>.webp`,
// after IMAGE_S3_PREFIX), path-style URLs (`<endpoint>/<bucket>/<key>`) so any endpoint works
// without per-bucket DNS, requests signed with SigV4 by `aws4fetch` over the built-in fetch.
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { AwsClient } from "aws4fetch";
import { type ImageStorage, type ImageVariant, storageKey } from "./image-storage.ts";

export interface S3StorageOptions {
  /** `https://s3.eu-central-1.amazonaws.com`, `http://minio:9000`, `https://<account>.r2.cloudflarestorage.com` */
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Prepended to every key; empty or ending with "/". */
  prefix: string;
  /** How long to wait for an answer's headers before giving up (the body of a GET may take longer). */
  timeoutMs?: number;
}

export class S3ImageStorage implements ImageStorage {
  private readonly client: AwsClient;
  private readonly base: string;
  private readonly timeoutMs: number;

  constructor(readonly options: S3StorageOptions) {
    this.client = new AwsClient({
      accessKeyId: options.accessKeyId,
      secretAccessKey: options.secretAccessKey,
      service: "s3",
      region: options.region,
      // 5xx and 429 are retried (with jittered backoff) this many times; network errors are not.
      retries: 2,
    });
    this.base = `${options.endpoint.replace(/\/+$/, "")}/${encodeURIComponent(options.bucket)}/`;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** The object key of a variant: the prefix plus the disk store's relative path. */
  key(hash: string, variant: ImageVariant): string {
    return `${this.options.prefix}${storageKey(hash, variant)}`;
  }

  private async request(
    method: string,
    key: string,
    init: { body?: Buffer; headers?: Record<string, string> } = {},
  ) {
    const url = this.base + key.split("/").map(encodeURIComponent).join("/");
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new Error(`S3 ${method} ${key}: no answer within ${this.timeoutMs} ms`)),
      this.timeoutMs,
    );
    try {
      return await this.client.fetch(url, {
        method,
        headers: init.headers,
        // Buffers from multipart and sharp sit on plain ArrayBuffers; no copy needed.
        body: init.body as Uint8Array<ArrayBuffer> | undefined,
        signal: controller.signal,
      });
    } finally {
      clearTimeout(timer);
    }
  }

  /** An error naming the request and S3's own code and message (from its XML error body). */
  private static async failure(method: string, key: string, res: Response): Promise<Error> {
    const text = method === "HEAD" ? "" : await res.text().catch(() => "");
    const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1];
    const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1];
    const detail = [code, message].filter(Boolean).join(": ");
    return new Error(`S3 ${method} ${key} answered ${res.status}${detail ? ` (${detail})` : ""}`);
  }

  /**
   * Content-addressed, so an object already there under the same key with the same size is the
   * same bytes: nothing is sent again. Otherwise a PUT, whose payload hash S3 checks.
   */
  async put(hash: string, variant: ImageVariant, data: Buffer): Promise<void> {
    const key = this.key(hash, variant);
    const head = await this.request("HEAD", key);
    if (head.ok && Number(head.headers.get("content-length")) === data.length) return;
    if (!head.ok && head.status !== 404) throw await S3ImageStorage.failure("HEAD", key, head);
    const res = await this.request("PUT", key, {
      body: data,
      headers: {
        "Content-Type": variant === "original" ? "application/octet-stream" : "image/webp",
        "X-Amz-Content-Sha256": createHash("sha256").update(data).digest("hex"),
      },
    });
    if (!res.ok) throw await S3ImageStorage.failure("PUT", key, res);
    await res.body?.cancel();
  }

  /** Streams the object's body (not buffered); null when the bucket has no such object. */
  async open(hash: string, variant: ImageVariant): Promise<{ stream: Readable; size: number } | null> {
    const key = this.key(hash, variant);
    const res = await this.request("GET", key);
    if (res.status === 404) {
      await res.body?.cancel();
      return null;
    }
    if (!res.ok || !res.body) throw await S3ImageStorage.failure("GET", key, res);
    const size = Number(res.headers.get("content-length"));
    if (!Number.isSafeInteger(size) || size < 0) {
      await res.body.cancel();
      throw new Error(`S3 GET ${key} answered without a Content-Length`);
    }
    return { stream: Readable.fromWeb(res.body as NodeReadableStream<Uint8Array>), size };
  }

  /** Deletes both variants; S3 answers 204 for a key that is not there, some servers 404: both fine. */
  async remove(hash: string): Promise<void> {
    await Promise.all(
      (["original", "thumbnail"] as const).map(async (variant) => {
        const key = this.key(hash, variant);
        const res = await this.request("DELETE", key);
        if (!res.ok && res.status !== 404) throw await S3ImageStorage.failure("DELETE", key, res);
        await res.body?.cancel();
      }),
    );
  }
}
