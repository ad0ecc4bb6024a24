/**
 * The candidate data planes of issue 32, each configured by bench:edge the way the platform would drive it, so
 * their cost per answer can be set beside the edge and bare nginx in one run:
 *
 *  - nginx + Lua (`libnginx-mod-http-lua`): routes in a shared dict filled over a local admin location (as
 *    ingress-nginx fills its backends), the route looked up per request in `access_by_lua` and the peer set in
 *    `balancer_by_lua`, upstream keep-alive; static files from a `root`;
 *  - HAProxy 2.6: the Host header looked up in a map file (changed at run time over the stats socket with
 *    `set map`; servers added with `add server`), one backend per app with keep-alive reuse; it serves no files;
 *  - Caddy 2.6: its JSON config loaded through its admin API, a host-matched `reverse_proxy` and a `file_server`.
 *
 * Each is skipped with a line saying so when its Debian package is missing (apt-get install haproxy caddy
 * libnginx-mod-http-lua). Runs in the foreground under the benchmark's Child, stopped with the rest.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Child, freePort } from "./processes.js";
import { NGINX } from "./nginx.js";
import { get } from "./edge-setup.js";

export interface Candidate {
  name: string;
  version: string;
  child: Child;
  proxyUrl: string;
  /** null: this proxy serves no files (HAProxy) */
  staticUrl: string | null;
}

const LUA_MODULES = ["/usr/lib/nginx/modules/ndk_http_module.so", "/usr/lib/nginx/modules/ngx_http_lua_module.so"];
const installed = (cmd: string, args: string[]) => spawnSync(cmd, args, { stdio: "ignore" }).status === 0;

/** The candidates installed here, or the reason each is not. */
export function candidates(): { name: string; missing: string | null }[] {
  return [
    { name: "nginx+lua", missing: LUA_MODULES.every(existsSync) ? null : "apt-get install libnginx-mod-http-lua" },
    { name: "haproxy", missing: installed("haproxy", ["-v"]) ? null : "apt-get install haproxy" },
    { name: "caddy", missing: installed("caddy", ["version"]) ? null : "apt-get install caddy" },
  ];
}

async function answering(child: Child, urls: string[], host: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (!child.running) throw new Error(`${child.name} exited during start-up:\n${child.output()}`);
    // node's fetch sends its own Host header: the route's host needs http.get
    const up = await Promise.all(
      urls.map((u) =>
        get(u, host).then(
          (r) => r.status === 200,
          () => false,
        ),
      ),
    );
    if (up.every(Boolean)) return;
    if (Date.now() > deadline) throw new Error(`${child.name} did not answer within 15 s:\n${child.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const FORWARDED = `X-Forwarded-For $remote_addr; X-Forwarded-Proto $scheme; X-Forwarded-Host $http_host; X-Forwarded-Port $server_port`;

function nginxLuaConf(dir: string, ports: { proxy: number; stat: number; admin: number }, root: string): string {
  const t = (name: string) => path.join(dir, name);
  const headers = FORWARDED.split("; ")
    .map((h) => `      proxy_set_header ${h};`)
    .join("\n");
  return `daemon off;
master_process on;
worker_processes auto;
pid ${t("nginx.pid")};
error_log ${t("error.log")} warn;
${LUA_MODULES.map((m) => `load_module ${m};`).join("\n")}
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${t("body")};
  proxy_temp_path ${t("proxy")};
  fastcgi_temp_path ${t("fastcgi")};
  uwsgi_temp_path ${t("uwsgi")};
  scgi_temp_path ${t("scgi")};
  types { text/html html; }
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  lua_shared_dict routes 16m;
  upstream app {
    server 0.0.0.1; # never used: the balancer picks the peer
    balancer_by_lua_block {
      local balancer = require "ngx.balancer"
      local ok, err = balancer.set_current_peer(ngx.ctx.peer_host, ngx.ctx.peer_port)
      if not ok then ngx.log(ngx.ERR, err) return ngx.exit(502) end
    }
    keepalive 256;
  }
  server {
    listen 127.0.0.1:${ports.admin};
    location = /routes {
      content_by_lua_block {
        local args = ngx.req.get_uri_args()
        ngx.shared.routes:set(args.host, args.upstream)
        ngx.say("ok")
      }
    }
  }
  server {
    listen 127.0.0.1:${ports.proxy};
    location / {
      access_by_lua_block {
        local upstream = ngx.shared.routes:get(ngx.var.http_host)
        if not upstream then return ngx.exit(404) end
        local host, port = upstream:match("^(.+):(%d+)$")
        ngx.ctx.peer_host = host
        ngx.ctx.peer_port = tonumber(port)
      }
      proxy_pass http://app;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
${headers}
    }
  }
  server {
    listen 127.0.0.1:${ports.stat};
    root ${root};
    index index.html;
  }
}
`;
}

async function startNginxLua(dir: string, upstream: string, host: string, root: string): Promise<Candidate> {
  const ports = { proxy: await freePort(), stat: await freePort(), admin: await freePort() };
  const conf = path.join(dir, "nginx.conf");
  writeFileSync(conf, nginxLuaConf(dir, ports, root));
  const child = new Child(
    "nginx+lua",
    spawn(NGINX, ["-p", dir, "-c", conf, "-e", path.join(dir, "error.log")], { stdio: ["ignore", "pipe", "pipe"] }),
  );
  const admin = `http://127.0.0.1:${ports.admin}/routes?host=${encodeURIComponent(host)}&upstream=${upstream}`;
  // the route is pushed once nginx listens, as the platform would push it on a change
  for (let i = 0; ; i++) {
    const pushed = await fetch(admin).then(
      (r) => r.ok,
      () => false,
    );
    if (pushed) break;
    if (i > 150 || !child.running) throw new Error(`nginx+lua did not take its route:\n${child.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const proxyUrl = `http://127.0.0.1:${ports.proxy}`;
  const staticUrl = `http://127.0.0.1:${ports.stat}`;
  await answering(child, [proxyUrl, staticUrl], host);
  const version = (spawnSync(NGINX, ["-v"], { encoding: "utf8" }).stderr ?? "").trim().replace(/^nginx version: /, "");
  return { name: "nginx+lua", version: `${version} + lua`, child, proxyUrl, staticUrl };
}

async function startHaproxy(dir: string, upstream: string, host: string): Promise<Candidate> {
  const port = await freePort();
  writeFileSync(path.join(dir, "hosts.map"), `${host} app1\n`);
  const conf = path.join(dir, "haproxy.cfg");
  writeFileSync(
    conf,
    `global
  nbthread 2
  stats socket ${path.join(dir, "admin.sock")} mode 600 level admin
defaults
  mode http
  timeout connect 5s
  timeout client 30s
  timeout server 30s
  option http-keep-alive
frontend edge
  bind 127.0.0.1:${port}
  option forwardfor
  http-request set-header X-Forwarded-Proto http
  http-request set-header X-Forwarded-Host %[req.hdr(host)]
  http-request set-header X-Forwarded-Port %[dst_port]
  use_backend %[req.hdr(host),lower,map(${path.join(dir, "hosts.map")})]
  default_backend unknown
backend unknown
  http-request return status 404
backend app1
  http-reuse always
  server s1 ${upstream}
`,
  );
  const child = new Child("haproxy", spawn("haproxy", ["-db", "-f", conf], { stdio: ["ignore", "pipe", "pipe"] }));
  const proxyUrl = `http://127.0.0.1:${port}`;
  await answering(child, [proxyUrl], host);
  const version = (spawnSync("haproxy", ["-v"], { encoding: "utf8" }).stdout ?? "").split("\n")[0].split(" ")[2];
  return { name: "haproxy", version, child, proxyUrl, staticUrl: null };
}

async function startCaddy(dir: string, upstream: string, host: string, root: string): Promise<Candidate> {
  const [proxy, stat, admin] = [await freePort(), await freePort(), await freePort()];
  const server = (listen: number, routes: unknown[]) => ({
    listen: [`127.0.0.1:${listen}`],
    automatic_https: { disable: true },
    routes,
  });
  const config = {
    admin: { listen: `127.0.0.1:${admin}` },
    logging: { logs: { default: { level: "ERROR" } } },
    apps: {
      http: {
        servers: {
          proxy: server(proxy, [
            { match: [{ host: [host] }], handle: [{ handler: "reverse_proxy", upstreams: [{ dial: upstream }] }] },
          ]),
          static: server(stat, [{ handle: [{ handler: "file_server", root }] }]),
        },
      },
    },
  };
  const conf = path.join(dir, "caddy.json");
  writeFileSync(conf, JSON.stringify(config));
  const child = new Child(
    "caddy",
    spawn("caddy", ["run", "--config", conf], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir },
    }),
  );
  const proxyUrl = `http://127.0.0.1:${proxy}`;
  const staticUrl = `http://127.0.0.1:${stat}`;
  await answering(child, [proxyUrl, staticUrl], host);
  const version = (spawnSync("caddy", ["version"], { encoding: "utf8" }).stdout ?? "").split(" ")[0].trim();
  return { name: "caddy", version, child, proxyUrl, staticUrl };
}

/** Starts one candidate proxying `host` to `upstream` and serving `root`. */
export async function startCandidate(
  name: string,
  dir: string,
  upstream: string,
  host: string,
  root: string,
): Promise<Candidate> {
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o777); // nginx's workers run as nobody when the benchmark runs as root
  if (name === "nginx+lua") return startNginxLua(dir, upstream, host, root);
  if (name === "haproxy") return startHaproxy(dir, upstream, host);
  return startCaddy(dir, upstream, host, root);
}
