import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

/** Debian's nginx and the Lua module (`apt-get install nginx-light libnginx-mod-http-lua`) */
export interface NginxInstall {
  binary: string;
  modules: string[];
  version: string;
}

const MODULE_DIR = "/usr/lib/nginx/modules";
const MODULES = ["ndk_http_module.so", "ngx_http_lua_module.so"];

/**
 * The nginx this host can run as the edge's data plane, or why not (the Node edge serves then, and says so).
 * NGINX_BINARY overrides /usr/sbin/nginx; the Lua module must be Debian's dynamic one (or NGINX_MODULES_DIR's).
 */
export function detectNginx(env: Record<string, string | undefined>): NginxInstall | { missing: string } {
  const binary = env.NGINX_BINARY || "/usr/sbin/nginx";
  const run = existsSync(binary) ? spawnSync(binary, ["-v"], { encoding: "utf8" }) : null;
  if (!run || run.status !== 0) return { missing: `nginx is not installed (${binary})` };
  const dir = env.NGINX_MODULES_DIR || MODULE_DIR;
  const modules = MODULES.map((m) => `${dir}/${m}`);
  const absent = modules.filter((m) => !existsSync(m));
  if (absent.length) return { missing: `the nginx Lua module is not installed (${absent.join(", ")})` };
  const version = (run.stderr ?? "").trim().replace(/^nginx version: /, "");
  return { binary, modules, version };
}

export const NGINX_INSTALL_HINT = "apt-get install nginx-light libnginx-mod-http-lua";
