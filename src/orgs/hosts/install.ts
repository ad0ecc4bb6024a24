import { readFile } from "node:fs/promises";
import { httpUrl, int, type Config } from "../../config/config.js";
import { publicBaseUrl } from "../public.js";

/** Settings of external hosts; the liveness ones are the hosts area's own (HOST_HEARTBEAT_SECONDS, HOST_MISSED_BEATS). */
export interface OrgHostsConfig {
  heartbeatSeconds: number;
  missedBeats: number;
  /** ORG_HOST_BOOTSTRAP_TTL_SECONDS: how long a bootstrap token works (24 h) */
  bootstrapTtlSeconds: number;
  /** AGENT_PLATFORM_URL: where agents reach this control plane over HTTPS (default PUBLIC_URL) */
  platformUrl: string;
  /** AGENT_DOWNLOAD_URL: the platform tarball the install script unpacks (unset: the script needs AGENT_SOURCE_DIR) */
  downloadUrl: string | null;
}

export function orgHostsConfig(env: Record<string, string | undefined>, config: Config): OrgHostsConfig {
  return {
    heartbeatSeconds: int(env, "HOST_HEARTBEAT_SECONDS", 5, 1, 300),
    missedBeats: int(env, "HOST_MISSED_BEATS", 3, 1, 100),
    bootstrapTtlSeconds: int(env, "ORG_HOST_BOOTSTRAP_TTL_SECONDS", 24 * 3600, 60, 30 * 24 * 3600),
    platformUrl: httpUrl(env, "AGENT_PLATFORM_URL") ?? publicBaseUrl(env, config),
    downloadUrl: httpUrl(env, "AGENT_DOWNLOAD_URL"),
  };
}

const quote = (v: string) => `'${v.replace(/'/g, `'\\''`)}'`;

/**
 * install.shell: one command for root on a Debian machine. It fetches the install script from this control plane
 * (GET /v1/agent/install.sh, the file src/agent/install.sh) and runs it with the platform's address, the bootstrap
 * token and the download address in its environment; the script installs podman and runc, unpacks the platform and
 * starts the agent (a systemd unit), which registers with the token. Variables already set in the caller's
 * environment (AGENT_SOURCE_DIR, AGENT_STATE_DIR, ...) pass through to the script.
 */
export function installShell(cfg: OrgHostsConfig, host: { name: string }, token: string): string {
  const vars: [string, string][] = [
    ["PLATFORM_URL", cfg.platformUrl],
    ["AGENT_BOOTSTRAP_TOKEN", token],
    ["AGENT_HOST_NAME", host.name],
  ];
  if (cfg.downloadUrl) vars.push(["AGENT_DOWNLOAD_URL", cfg.downloadUrl]);
  const env = vars.map(([k, v]) => `${k}=${quote(v)}`).join(" ");
  return `curl -fsSL ${quote(`${cfg.platformUrl}/v1/agent/install.sh`)} | env ${env} sh`;
}

let script: Promise<string> | null = null;
/** The install script (src/agent/install.sh), read once. */
export function installScript(): Promise<string> {
  script ??= readFile(new URL("../../agent/install.sh", import.meta.url), "utf8");
  return script;
}
