/**
 * bench:buckets' third reference: Debian's nginx storing objects with WebDAV PUT and serving them with sendfile,
 * from one directory, no authentication. It answers what the fastest common HTTP server on this machine reaches
 * beside plain files for the same requests, so the gateway's "× files" figures can be read against it. Its PUT
 * does not fsync (nginx cannot), so it is faster than a durable write would be.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Child, freePort } from "./processes.js";
import { NGINX, nginxHead, nginxInstalled } from "./nginx.js";

export interface NginxObjects {
  port: number;
  stop: () => Promise<void>;
}

/** Starts nginx over `dir` (objects under dir/objects); null when nginx is not installed. */
export async function startNginxObjects(dir: string): Promise<NginxObjects | null> {
  if (!nginxInstalled()) return null;
  const objects = path.join(dir, "objects");
  mkdirSync(objects, { recursive: true });
  // workers run as nobody when the benchmark runs as root: they write the objects and their temp files
  for (const d of [dir, objects]) chmodSync(d, 0o777);
  const port = await freePort();
  const t = (name: string) => path.join(dir, name);
  const conf = t("nginx.conf");
  writeFileSync(
    conf,
    `${nginxHead(dir)}  default_type application/octet-stream;
  sendfile on;
  tcp_nodelay on;
  keepalive_requests 1000000;
  client_max_body_size 0;
  server {
    listen 127.0.0.1:${port};
    root ${objects};
    location / { dav_methods PUT; create_full_put_path on; dav_access user:rw group:rw all:r; }
  }
}
`,
  );
  const args = ["-p", dir, "-c", conf, "-e", t("error.log")];
  const check = spawnSync(NGINX, ["-t", "-q", ...args], { encoding: "utf8" });
  if (check.status !== 0) throw new Error(`nginx -t refused the configuration:\n${check.stderr}`);
  const child = new Child("nginx", spawn(NGINX, args, { stdio: ["ignore", "pipe", "pipe"] }));
  for (let i = 0; ; i++) {
    if (!child.running) throw new Error(`nginx exited during start-up:\n${child.output()}`);
    const up = await fetch(`http://127.0.0.1:${port}/`).then(
      (r) => (r.body?.cancel(), true),
      () => false,
    );
    if (up) return { port, stop: async () => void (await child.stop()) };
    if (i > 150) throw new Error(`nginx did not answer within 15 s:\n${child.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
