/** The edge benchmark's set-up: the pod's program, the static page, and small HTTP helpers (bench/edge.ts). */
import { execFile } from "node:child_process";
import http from "node:http";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { create as tarCreate } from "tar";

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The pod: a node hello server on 8080, keep-alive (the same answer for every request). */
export const HELLO = `
const http = require("node:http");
const body = Buffer.from("hello from a pod\\n");
const server = http.createServer((req, res) => {
  res.writeHead(200, { "content-type": "text/plain", "content-length": body.length });
  res.end(body);
});
server.keepAliveTimeout = 5000;
server.listen(8080);
process.on("SIGTERM", () => { server.close(); server.closeIdleConnections(); setTimeout(() => process.exit(0), 300).unref(); });
`;
export const POD_IMAGE = "localhost/platform-bench/node-hello:1";

/** The static page: BENCH_STATIC_BYTES of HTML, the same bytes for the edge and nginx. */
export function page(bytes: number): string {
  const head = "<!doctype html>\n<html><head><meta charset=utf-8><title>bench</title></head><body>\n";
  const tail = "</body></html>\n";
  let body = "";
  for (let i = 0; body.length < bytes - head.length - tail.length; i++) body += `<p>paragraph ${i} of the page</p>\n`;
  return head + body.slice(0, Math.max(0, bytes - head.length - tail.length)) + tail;
}

export async function api(base: string, method: string, url: string, token?: string, body?: unknown) {
  const res = await fetch(base + url, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let json: any = text;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { status: res.status, json };
}
export async function expect(
  base: string,
  method: string,
  url: string,
  status: number,
  token?: string,
  body?: unknown,
) {
  const r = await api(base, method, url, token, body);
  if (r.status !== status)
    throw new Error(`${method} ${url}: expected ${status}, got ${r.status}: ${JSON.stringify(r.json)}`);
  return r.json;
}
export async function until<T>(what: string, ms: number, fn: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms: ${what}`);
    await sleep(100);
  }
}
/** GET base + path with a Host header (node's fetch would send its own): status and body. */
export function get(base: string, host: string, p = "/"): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(base + p, { headers: { host }, agent: false, timeout: 5000 }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, body }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
  });
}
export const containersOf = async (podId: string) =>
  JSON.parse(
    (await run("podman", ["ps", "-a", "--filter", `label=platform.pod=${podId}`, "--format", "json"])).stdout || "[]",
  ) as { Id: string }[];

/** Static site through /v1/static (the edge's static half); null when the platform has none yet. */
export async function deployStatic(base: string, token: string, dir: string, html: string): Promise<string | null> {
  const slug = `bench-site-${process.pid}`;
  const made = await api(base, "POST", "/v1/static", token, { name: "bench-site", slug });
  if (made.status === 404) return null;
  if (made.status !== 201 && made.status !== 200)
    throw new Error(`POST /v1/static: ${made.status} ${JSON.stringify(made.json)}`);
  const site = made.json.slug ?? slug;
  const src = path.join(dir, "site");
  mkdirSync(src);
  writeFileSync(path.join(src, "index.html"), html);
  const archive = path.join(dir, "site.tar.gz");
  await tarCreate({ gzip: true, file: archive, cwd: src, portable: true }, ["index.html"]);
  const made2 = await api(base, "POST", `/v1/static/${site}/deployments`, token, {});
  if (made2.status < 200 || made2.status > 299)
    throw new Error(`POST /v1/static/${site}/deployments: ${made2.status} ${JSON.stringify(made2.json)}`);
  const dep = made2.json;
  const put = await fetch(new URL(dep.upload_url, base), {
    method: "PUT",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/gzip" },
    body: readFileSync(archive),
  });
  if (put.status < 200 || put.status > 299) throw new Error(`PUT upload_url: ${put.status} ${await put.text()}`);
  const fin = await api(base, "POST", `/v1/static/${site}/deployments/${dep.id}/finalize`, token);
  if (fin.status < 200 || fin.status > 299) throw new Error(`finalize: ${fin.status} ${JSON.stringify(fin.json)}`);
  return site;
}
