/**
 * Debian's nginx as the reference of bench/edge.ts, configured by the benchmark itself in a temporary directory:
 * one server proxying to an upstream over keep-alive connections (the forwarding headers the edge sets, so both
 * do the same work), one serving a directory. Runs in the foreground (`daemon off`) under the benchmark's
 * Child, so it is stopped with the rest.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Child, freePort } from "./processes.js";

export const NGINX = process.env.BENCH_NGINX ?? "/usr/sbin/nginx";

export function nginxInstalled(): boolean {
  return spawnSync(NGINX, ["-v"], { stdio: "ignore" }).status === 0;
}

export interface Nginx {
  child: Child;
  /** the server proxying to the upstream */
  proxyUrl: string;
  /** the server serving `root` */
  staticUrl: string;
  version: string;
}

/** The head every benchmark nginx shares: foreground, pid, logs and temp paths under dir, access logging off. */
export function nginxHead(dir: string): string {
  const t = (name: string) => path.join(dir, name);
  return `daemon off;
master_process on;
worker_processes auto;
pid ${t("nginx.pid")};
error_log ${t("error.log")} warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${t("body")};
  proxy_temp_path ${t("proxy")};
  fastcgi_temp_path ${t("fastcgi")};
  uwsgi_temp_path ${t("uwsgi")};
  scgi_temp_path ${t("scgi")};
`;
}

/** The configuration: everything nginx writes goes under dir; access logging off (the edge keeps none either). */
export function nginxConf(dir: string, upstream: string, proxyPort: number, staticPort: number, root: string): string {
  return `${nginxHead(dir)}  types { text/html html; text/css css; application/javascript js; }
  default_type application/octet-stream;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  keepalive_timeout 65;
  keepalive_requests 1000000;
  upstream pod {
    server ${upstream};
    keepalive 256;
    keepalive_timeout 4s;
  }
  server {
    listen 127.0.0.1:${proxyPort};
    location / {
      proxy_pass http://pod;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host $http_host;
      proxy_set_header X-Forwarded-Port $server_port;
    }
  }
  server {
    listen 127.0.0.1:${staticPort};
    root ${root};
    index index.html;
  }
}
`;
}

/** Writes the configuration under dir and starts nginx; resolves once both servers answer. */
export async function startNginx(dir: string, upstream: string, root: string): Promise<Nginx> {
  mkdirSync(dir, { recursive: true });
  // workers run as nobody when the benchmark runs as root: they read root and write their temp paths
  chmodSync(dir, 0o777);
  const [proxyPort, staticPort] = [await freePort(), await freePort()];
  const conf = path.join(dir, "nginx.conf");
  writeFileSync(conf, nginxConf(dir, upstream, proxyPort, staticPort, root));
  const check = spawnSync(NGINX, ["-t", "-q", "-p", dir, "-c", conf, "-e", path.join(dir, "error.log")], {
    encoding: "utf8",
  });
  if (check.status !== 0) throw new Error(`nginx -t refused the configuration:\n${check.stderr}`);
  const version = (spawnSync(NGINX, ["-v"], { encoding: "utf8" }).stderr ?? "").trim().replace(/^nginx version: /, "");
  const child = new Child(
    "nginx",
    spawn(NGINX, ["-p", dir, "-c", conf, "-e", path.join(dir, "error.log")], { stdio: ["ignore", "pipe", "pipe"] }),
  );
  const proxyUrl = `http://127.0.0.1:${proxyPort}`;
  const staticUrl = `http://127.0.0.1:${staticPort}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (!child.running) throw new Error(`nginx exited during start-up:\n${child.output()}`);
    const up = await Promise.all(
      [proxyUrl, staticUrl].map((u) =>
        fetch(u, { signal: AbortSignal.timeout(1000) }).then(
          (r) => (r.body?.cancel(), true),
          () => false,
        ),
      ),
    );
    if (up.every(Boolean)) return { child, proxyUrl, staticUrl, version };
    if (Date.now() > deadline) {
      await child.stop();
      throw new Error(`nginx did not answer within 15 s:\n${child.output()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
