/**
 * Static sites test helpers: archives built in the test (node-tar from a folder, and raw tar and zip writers that
 * can hold what no tool would write: `..`, absolute paths, links, devices), a test app with its edge on a free
 * port, deploys through the API, and requests to the edge with any Host header.
 */
import http from "node:http";
import zlib from "node:zlib";
import { mkdtemp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import assert from "node:assert/strict";
import * as tar from "tar";
import { call, createTestApp, type TestApp, type TestAppOptions } from "../helpers/app.js";
import { edgeArea, type Edge } from "../../src/edge/module.js";

export const APPS_DOMAIN = "apps.static.test";

export interface StaticApp {
  t: TestApp;
  edge: Edge;
  port: number;
  close: () => Promise<void>;
}

/** A test app whose edge listens on a free port (before it starts, `beforeEdge` may wrap the kernel's files). */
export async function staticApp(opts: TestAppOptions = {}, beforeEdge?: (t: TestApp) => void): Promise<StaticApp> {
  const t = await createTestApp({ ...opts, env: { APPS_DOMAIN, ...opts.env } });
  beforeEdge?.(t);
  const edge = t.platform.state<Edge>("edge");
  await edgeArea.start!(t.platform, edge);
  return { t, edge, port: edge.port!, close: () => t.close() };
}

/** One ustar entry: type "0" file, "5" folder, "2" symlink, "1" hard link, "3"/"4" devices, "6" fifo. */
export function tarEntry(name: string, body: string | Buffer = "", type = "0", linkname = ""): Buffer {
  const data = Buffer.from(body);
  const h = Buffer.alloc(512);
  h.write(name, 0, 100, "utf8");
  h.write("0000644\0", 100);
  h.write("0000000\0", 108);
  h.write("0000000\0", 116);
  h.write(`${data.length.toString(8).padStart(11, "0")}\0`, 124);
  h.write("14000000000\0", 136);
  h.write("        ", 148);
  h.write(type, 156);
  h.write(linkname, 157, 100, "utf8");
  h.write("ustar\0", 257);
  h.write("00", 263);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
  const pad = Buffer.alloc((512 - (data.length % 512)) % 512);
  return Buffer.concat([h, data, pad]);
}

export function tarArchive(entries: Buffer[]): Buffer {
  return Buffer.concat([...entries, Buffer.alloc(1024)]);
}

export interface ZipFile {
  name: string;
  body?: string | Buffer;
  /** unix mode with its type bits (0o100644 file, 0o120777 symlink, 0o020644 device) */
  mode?: number;
  store?: boolean;
}

/** A zip archive (deflated unless `store`), made by a "unix" zip so the mode's type bits count. */
export function zipArchive(files: ZipFile[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const f of files) {
    const data = Buffer.from(f.body ?? "");
    const packed = f.store ? data : zlib.deflateRawSync(data);
    const name = Buffer.from(f.name);
    const crc = zlib.crc32(data);
    const method = f.store ? 0 : 8;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(0, 10);
    local.writeUInt16LE(0x21, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((f.mode ?? (f.name.endsWith("/") ? 0o040755 : 0o100644)) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, packed);
    centrals.push(central, name);
    offset += local.length + name.length + packed.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

/** A tar.gz made by node-tar from a folder holding `files` (paths under `dist/` stay there). */
export async function tarGz(files: Record<string, string | Buffer>, top = "."): Promise<Buffer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "static-test-"));
  try {
    for (const [name, body] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
      await writeFile(path.join(dir, name), body);
    }
    const out = path.join(dir, "..", `${path.basename(dir)}.tgz`);
    await tar.c({ gzip: true, cwd: dir, file: out }, [top]);
    const bytes = await readFile(out);
    await rm(out, { force: true });
    return bytes;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function createSite(t: TestApp, token: string, body: Record<string, unknown>) {
  const res = await call(t.app, { method: "POST", url: "/v1/static", token, body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

/** PUT an archive to a deployment's files (the raw body). */
export function upload(t: TestApp, token: string, site: string, id: string, body: Buffer, type: string) {
  return t.app.inject({
    method: "PUT",
    url: `/v1/static/${site}/deployments/${id}/files`,
    headers: { authorization: `Bearer ${token}`, "content-type": type },
    payload: body,
  });
}

/** Creates a deployment, uploads the archive and finalizes it; returns the finalized deployment. */
export async function deploy(t: TestApp, token: string, site: string, archive: Buffer, type = "application/gzip") {
  const created = await call(t.app, { method: "POST", url: `/v1/static/${site}/deployments`, token });
  assert.equal(created.statusCode, 201, created.body);
  const up = await upload(t, token, site, created.json().id, archive, type);
  assert.equal(up.statusCode, 200, up.body);
  const fin = await call(t.app, {
    method: "POST",
    url: `/v1/static/${site}/deployments/${created.json().id}/finalize`,
    token,
  });
  assert.equal(fin.statusCode, 200, fin.body);
  return fin.json();
}

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  text: string;
}

/** A request to the edge for <label>.<APPS_DOMAIN>; the body as bytes (compressed answers stay compressed). */
export function get(
  port: number,
  label: string,
  urlPath = "/",
  opts: { method?: string; headers?: http.OutgoingHttpHeaders } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        port,
        host: "127.0.0.1",
        method: opts.method ?? "GET",
        path: urlPath,
        headers: { host: `${label}.${APPS_DOMAIN}`, ...opts.headers },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode!, headers: res.headers, body, text: body.toString() });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end();
  });
}
