import { isIP } from "node:net";
import { ConfigError, httpUrl, int } from "../config/config.js";

/** The custom domains area's settings (README.md here); every one has a default. */
export interface DomainsConfig {
  /** APPS_DOMAIN (apps.<BASE_DOMAIN>), as the apps area and the edge read it: a domain CNAMEs to <slug>.<APPS_DOMAIN> */
  appsDomain: string;
  /** BASE_DOMAIN: the platform's own names, never a custom domain */
  baseDomain: string;
  /** DNS_SERVERS: comma list of `ip` or `ip:port` the verification asks; empty: the system's resolvers */
  dnsServers: string[];
  /** DNS_TIMEOUT_MS (3000): one DNS question gets this long before it counts as unanswered */
  dnsTimeoutMs: number;
  /** CLOUDFLARE_API_BASE (https://api.cloudflare.com/client/v4): the Cloudflare API that cf-autosetup calls */
  cloudflareApiBase: string;
  /** CLOUDFLARE_TIMEOUT_MS (15000): one Cloudflare API call gets this long */
  cloudflareTimeoutMs: number;
}

type Env = Record<string, string | undefined>;

/** `1.2.3.4`, `1.2.3.4:5353`, `::1`, `[::1]:5353`: what node's Resolver.setServers takes */
function dnsServer(entry: string): boolean {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(entry);
  if (bracketed) return isIP(bracketed[1]) === 6 && (!bracketed[2] || Number(bracketed[2]) <= 65535);
  if (isIP(entry)) return true;
  const m = /^([\d.]+):(\d{1,5})$/.exec(entry);
  return !!m && isIP(m[1]) === 4 && Number(m[2]) >= 1 && Number(m[2]) <= 65535;
}

export function domainsConfig(env: Env): DomainsConfig {
  const baseDomain = (env.BASE_DOMAIN || "localhost").toLowerCase().replace(/\.$/, "");
  const appsDomain = (env.APPS_DOMAIN || `apps.${baseDomain}`).toLowerCase().replace(/\.$/, "");
  const dnsServers = (env.DNS_SERVERS ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const s of dnsServers)
    if (!dnsServer(s)) throw new ConfigError("DNS_SERVERS", `must list IP addresses (ip or ip:port), got "${s}"`);
  const base = httpUrl(env, "CLOUDFLARE_API_BASE") ?? "https://api.cloudflare.com/client/v4";
  return {
    appsDomain,
    baseDomain,
    dnsServers,
    dnsTimeoutMs: int(env, "DNS_TIMEOUT_MS", 3000, 100, 60_000),
    cloudflareApiBase: base,
    cloudflareTimeoutMs: int(env, "CLOUDFLARE_TIMEOUT_MS", 15_000, 100, 120_000),
  };
}
