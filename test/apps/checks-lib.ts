/**
 * Issue 29's tests: pods of the busybox httpd test image whose command writes its own web root first, so one
 * image plays every version (a readiness path answering 200 or 500, a slow page, a crash after some seconds).
 */
import http from "node:http";
import { call, signup, type TestApp } from "../helpers/app.js";
import { testImage } from "../helpers/images.js";
import type { Edge } from "../../src/edge/module.js";
import { createAppsTestApp } from "./lib.js";

export interface Version {
  /** the body of GET / */
  body: string;
  /** status of GET /cgi-bin/health (200 or 500) */
  health?: number;
  /** seconds GET /cgi-bin/slow takes */
  slowSeconds?: number;
  /** the whole container exits with code 3 this many seconds after it started */
  crashAfter?: number;
  /** GET /alive answers 200 only this many seconds after start, then 404 */
  aliveFor?: number;
}

const cgi = (name: string, lines: string[]) =>
  `printf '${["#!/bin/sh", ...lines].join("\\n")}\\n' > /w/cgi-bin/${name} && chmod +x /w/cgi-bin/${name}`;

/** The command that makes the image serve `v`. */
export function command(v: Version): string[] {
  const steps = [
    "mkdir -p /w/cgi-bin",
    `echo ${v.body} > /w/index.html`,
    "echo ok > /w/alive",
    // CGI headers end in CRLF (busybox passes them on as they are; node's parser wants CRLF)
    cgi("health", [`printf "Status: ${v.health ?? 200} X\\\\r\\\\n\\\\r\\\\nhealth\\\\n"`]),
    cgi("slow", [
      `sleep ${v.slowSeconds ?? 3}`,
      `printf "Content-Type: text/plain\\\\r\\\\n\\\\r\\\\nslow-${v.body}\\\\n"`,
    ]),
  ];
  if (v.aliveFor) steps.push(`(sleep ${v.aliveFor}; rm /w/alive) &`);
  const serve = v.crashAfter
    ? `/bin/busybox httpd -p 8080 -h /w; sleep ${v.crashAfter}; exit 3`
    : "exec /bin/busybox httpd -f -p 8080 -h /w";
  return ["/bin/busybox", "sh", "-c", [...steps, serve].join("; ").replace("&;", "&")];
}

export async function setup(domain: string) {
  const image = await testImage("TEST_IMAGE_HTTPD_V1");
  const t = await createAppsTestApp({ env: { APPS_DOMAIN: domain } });
  const user = await signup(t.app);
  const edgePort = t.platform.state<Edge>("edge").port!;
  return { t, user, image, edgePort };
}

export async function teardown(t: TestApp, token: string) {
  for (const p of (await call(t.app, { url: "/v1/pods", token })).json())
    await call(t.app, { method: "DELETE", url: `/v1/pods/${p.id}`, token });
  await new Promise((r) => setTimeout(r, 1500));
  await t.close();
}

/** GET through the edge with the Host of the pod's url. */
export function viaEdge(
  edgePort: number,
  url: string,
  path = "/",
  agent?: http.Agent,
): Promise<{ status: number; body: string }> {
  const host = new URL(url).hostname;
  return new Promise((resolve, reject) => {
    const req = http.get({ host: "127.0.0.1", port: edgePort, path, headers: { host }, agent }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, body }));
      res.on("error", reject);
    });
    req.setTimeout(15_000, () => req.destroy(new Error("timed out")));
    req.on("error", reject);
  });
}

/** Waits (bounded) until the edge answers 200 for the pod. */
export async function edgeReady(edgePort: number, url: string): Promise<void> {
  const until = Date.now() + 5000;
  while ((await viaEdge(edgePort, url).catch(() => ({ status: 0 }))).status !== 200 && Date.now() < until)
    await new Promise((r) => setTimeout(r, 50));
}

/**
 * Steady load through the edge: `workers` loops until `stop()` (or `limit` requests in all); every answer that
 * is not a 200 from one of the known bodies counts as lost.
 */
export function load(edgePort: number, url: string, limit = 20_000, workers = 4) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: workers });
  const seen: Record<string, number> = {};
  const lost: string[] = [];
  let total = 0;
  let stopped = false;
  const loop = async () => {
    while (!stopped && total < limit) {
      total++;
      try {
        const r = await viaEdge(edgePort, url, "/", agent);
        if (r.status === 200) seen[r.body.trim()] = (seen[r.body.trim()] ?? 0) + 1;
        else lost.push(`${r.status} ${r.body.slice(0, 60)}`);
      } catch (err) {
        lost.push((err as Error).message);
      }
    }
  };
  const done = Promise.all(Array.from({ length: workers }, loop));
  return {
    seen,
    lost,
    get total() {
      return total;
    },
    async stop() {
      stopped = true;
      await done;
      agent.destroy();
    },
  };
}
