/**
 * The `s3` storage backend, for operators who outgrow one disk: blobs are objects `<prefix><id>` in one bucket of
 * an external S3-compatible service, reached with the operator's credentials (S3_UPSTREAM_*). The gateway still
 * authenticates the platform's own keys and keeps the metadata; only bytes go upstream. Requests are signed with
 * @smithy/signature-v4 (the AWS SDK's signer); a PUT is one request, complete or absent upstream, so an
 * interrupted upload leaves nothing there either.
 */
import http from "node:http";
import https from "node:https";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { SignatureV4 } from "@smithy/signature-v4";
import { XMLParser } from "fast-xml-parser";
import type { UpstreamConfig } from "../config.js";
import { sha256Constructor } from "../gateway/sigv4.js";
import { isBlobId, type BlobStore } from "./types.js";

interface UpstreamRequest {
  method: string;
  key?: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: AsyncIterable<Buffer>;
}

const listParser = new XMLParser({ parseTagValue: false, isArray: (name) => name === "Contents" });
const escapeKey = (key: string) =>
  key
    .split("/")
    .map((s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`))
    .join("/");

export class S3BlobStore implements BlobStore {
  readonly kind = "s3" as const;
  private readonly url: URL;
  private readonly signer: SignatureV4;
  private readonly agent: http.Agent;

  constructor(private readonly cfg: UpstreamConfig) {
    this.url = new URL(cfg.endpoint);
    this.signer = new SignatureV4({
      service: "s3",
      region: cfg.region,
      credentials: { accessKeyId: cfg.accessKeyId, secretAccessKey: cfg.secretAccessKey },
      sha256: sha256Constructor,
      uriEscapePath: false,
    });
    const Agent = this.url.protocol === "https:" ? https.Agent : http.Agent;
    this.agent = new Agent({ keepAlive: true, maxSockets: 64 });
  }

  private async send(r: UpstreamRequest): Promise<http.IncomingMessage> {
    const port = this.url.port ? Number(this.url.port) : undefined;
    const path = `/${this.cfg.bucket}${r.key !== undefined ? `/${escapeKey(r.key)}` : ""}`;
    const signed = await this.signer.sign({
      method: r.method,
      protocol: this.url.protocol,
      hostname: this.url.hostname,
      port,
      path,
      query: r.query ?? {},
      headers: { host: this.url.host, "x-amz-content-sha256": "UNSIGNED-PAYLOAD", ...r.headers },
    });
    const qs = new URLSearchParams(r.query ?? {}).toString().replace(/\+/g, "%20");
    const lib = this.url.protocol === "https:" ? https : http;
    return new Promise((resolve, reject) => {
      const req = lib.request(
        {
          method: r.method,
          hostname: this.url.hostname,
          port,
          path: qs ? `${path}?${qs}` : path,
          headers: signed.headers,
          agent: this.agent,
        },
        resolve,
      );
      req.on("error", reject);
      if (r.body) pipeline(Readable.from(r.body), req).catch((err) => req.destroy(err));
      else req.end();
    });
  }

  private async expect(res: http.IncomingMessage, ok: number[], what: string): Promise<void> {
    if (ok.includes(res.statusCode ?? 0)) return;
    let text = "";
    for await (const c of res) text += String(c);
    throw new Error(`upstream S3 ${what} answered ${res.statusCode}: ${text.slice(0, 300)}`);
  }

  private key(id: string): string {
    if (!isBlobId(id)) throw new Error(`not a blob id: ${id}`);
    return `${this.cfg.prefix}${id}`;
  }

  async write(
    id: string,
    body: AsyncIterable<Buffer>,
    opts: { size: number | null; beforePublish?: () => unknown },
  ): Promise<number> {
    if (opts.size === null) throw new Error("the s3 backend needs the size of a blob before writing it");
    let size = 0;
    const counted = (async function* () {
      for await (const c of body) {
        size += c.length;
        yield c;
      }
    })();
    const res = await this.send({
      method: "PUT",
      key: this.key(id),
      headers: { "content-length": String(opts.size), "content-type": "application/octet-stream" },
      body: counted,
    });
    await this.expect(res, [200], "PUT");
    res.resume();
    try {
      if (size !== opts.size) throw new Error(`blob ${id}: ${size} bytes arrived, ${opts.size} announced`);
      await opts.beforePublish?.();
    } catch (err) {
      await this.remove([id]).catch(() => {});
      throw err;
    }
    return size;
  }

  async read(id: string, range?: { start: number; end: number }): Promise<Readable> {
    const res = await this.send({
      method: "GET",
      key: this.key(id),
      headers: range ? { range: `bytes=${range.start}-${range.end}` } : {},
    });
    await this.expect(res, [200, 206], "GET");
    return res;
  }

  async copy(from: string, to: string): Promise<void> {
    const res = await this.send({
      method: "PUT",
      key: this.key(to),
      headers: { "x-amz-copy-source": `/${this.cfg.bucket}/${escapeKey(this.key(from))}` },
    });
    await this.expect(res, [200], "CopyObject");
    res.resume();
  }

  async remove(ids: string[]): Promise<void> {
    for (const id of ids) {
      const res = await this.send({ method: "DELETE", key: this.key(id) });
      await this.expect(res, [200, 204, 404], "DELETE");
      res.resume();
    }
  }

  async *list(): AsyncIterable<{ id: string; modified: Date }> {
    let token: string | undefined;
    do {
      const query: Record<string, string> = { "list-type": "2", prefix: this.cfg.prefix };
      if (token) query["continuation-token"] = token;
      const res = await this.send({ method: "GET", query });
      await this.expect(res, [200], "ListObjectsV2");
      let text = "";
      for await (const c of res) text += String(c);
      const doc = listParser.parse(text).ListBucketResult ?? {};
      for (const o of (doc.Contents ?? []) as { Key: string; LastModified: string }[]) {
        const id = o.Key.slice(this.cfg.prefix.length);
        if (isBlobId(id)) yield { id, modified: new Date(o.LastModified) };
      }
      token = doc.IsTruncated === "true" ? doc.NextContinuationToken : undefined;
    } while (token);
  }

  async clearTemp(): Promise<number> {
    return 0; // nothing is staged locally
  }
}
