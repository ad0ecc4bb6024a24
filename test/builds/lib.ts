/**
 * Helpers for the builds tests: source archives (tar.gz) made in memory, hostile ones written by hand,
 * uploading to a build's upload URL, and waiting for a build's status.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { gzipSync } from "node:zlib";
import { call, type TestApp, type TestAppOptions } from "../helpers/app.js";
import { createAppsTestApp } from "../apps/lib.js";

export const BUSYBOX = process.env.BUSYBOX_STATIC ?? "/bin/busybox";

/** A platform whose build runner polls quickly; pods and the registry as in the apps tests. */
export function createBuildsTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  return createAppsTestApp({ ...opts, env: { BUILD_POLL_MS: "200", ...opts.env } });
}

export interface RawEntry {
  name: string;
  content?: Buffer | string;
  /** 0 file, 2 symlink, 1 hard link, 5 directory, 3 char device */
  type?: "0" | "1" | "2" | "3" | "5";
  linkname?: string;
  mode?: number;
}

function header(e: RawEntry, size: number): Buffer {
  const h = Buffer.alloc(512);
  const put = (text: string, at: number, len: number) => h.write(text.slice(0, len), at, len, "utf8");
  const octal = (n: number, len: number) => n.toString(8).padStart(len - 1, "0") + "\0";
  put(e.name, 0, 100);
  put(octal(e.mode ?? (e.type === "5" ? 0o755 : 0o644), 8), 100, 8);
  put(octal(0, 8), 108, 8);
  put(octal(0, 8), 116, 8);
  put(octal(size, 12), 124, 12);
  put(octal(Math.floor(Date.now() / 1000), 12), 136, 12);
  h.fill(" ", 148, 156);
  put(e.type ?? "0", 156, 1);
  put(e.linkname ?? "", 157, 100);
  put("ustar\0", 257, 6);
  put("00", 263, 2);
  let sum = 0;
  for (const b of h) sum += b;
  put(sum.toString(8).padStart(6, "0") + "\0 ", 148, 8);
  return h;
}

/** A tar.gz written entry by entry, names exactly as given (so `../x` and `/etc/x` stay what they are). */
export function rawTarGz(entries: RawEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const body = e.type === "0" || e.type === undefined ? Buffer.from(e.content ?? "") : Buffer.alloc(0);
    parts.push(header(e, body.length), body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(parts));
}

/** A build context: files by path (mode 0644, or as given). */
export function contextTarGz(files: Record<string, string | Buffer | { content: Buffer | string; mode: number }>) {
  const entries: RawEntry[] = [];
  const dirs = new Set<string>();
  for (const [name, f] of Object.entries(files)) {
    const parts = name.split("/");
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join("/") + "/";
      if (!dirs.has(dir)) entries.push({ name: dir, type: "5" });
      dirs.add(dir);
    }
    if (typeof f === "string" || Buffer.isBuffer(f)) entries.push({ name, content: f });
    else entries.push({ name, content: f.content, mode: f.mode });
  }
  return rawTarGz(entries);
}

/** Busybox's static binary and a Dockerfile around it (FROM scratch: nothing is downloaded). */
export async function busyboxContext(dockerfile: string, extra: Record<string, string> = {}) {
  return contextTarGz({
    Dockerfile: dockerfile,
    busybox: { content: await readFile(BUSYBOX), mode: 0o755 },
    ...extra,
  });
}

/** PUT to an upload URL through the app (only its path and query are used). */
export function upload(t: TestApp, uploadUrl: string, body: Buffer) {
  const u = new URL(uploadUrl);
  return t.app.inject({
    method: "PUT",
    url: u.pathname + u.search,
    payload: body,
    headers: { "content-type": "application/gzip" },
  });
}

export async function createBuild(t: TestApp, token: string, body: Record<string, unknown> = {}) {
  const res = await call(t.app, { method: "POST", url: "/v1/builds", token, body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

/** Creates a build, uploads the archive and starts it; returns the created build. */
export async function startBuild(t: TestApp, token: string, archive: Buffer, body: Record<string, unknown> = {}) {
  const build = await createBuild(t, token, body);
  const up = await upload(t, build.upload_url, archive);
  assert.equal(up.statusCode, 200, up.body);
  const started = await call(t.app, { method: "POST", url: `/v1/builds/${build.id}/start`, token });
  assert.equal(started.statusCode, 202, started.body);
  return build;
}

/** Polls GET /v1/builds/{id} until `until` holds (bounded). */
export async function waitBuild(t: TestApp, token: string, id: string, until: (b: any) => boolean, ms = 120_000) {
  const deadline = Date.now() + ms;
  let last: any;
  while (Date.now() < deadline) {
    const res = await call(t.app, { url: `/v1/builds/${id}`, token });
    last = res.json();
    if (res.statusCode === 200 && until(last)) return last;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.fail(`build ${id} did not reach the expected state; last: ${JSON.stringify(last)?.slice(0, 4000)}`);
}

export const ended = (b: any) => ["succeeded", "failed", "cancelled"].includes(b.status);

/** Process ids whose command line mentions `text` (the build's working directory). */
export async function processesMentioning(text: string): Promise<number[]> {
  const { readdir } = await import("node:fs/promises");
  const pids: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const cmd = await readFile(`/proc/${name}/cmdline`, "utf8").catch(() => "");
    if (cmd.includes(text)) pids.push(Number(name));
  }
  return pids;
}
