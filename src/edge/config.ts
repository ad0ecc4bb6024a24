import { ConfigError, int, url } from "../config/config.js";

/** The edge's settings (README "Edge"); every one has a default, so `npm start` runs an edge with none set. */
export interface EdgeConfig {
  /** EDGE_PORT (8081; 0 = a free port, read back from the area state) */
  port: number;
  /**
   * EDGE_TLS_PORT: the HTTPS listener (8443; 0 = a free port, the default when EDGE_PORT is 0; null = off);
   * certificates from kernel.use("certificates") by SNI, a self-signed fallback otherwise (src/certificates/README.md)
   */
  tlsPort: number | null;
  /** EDGE_HOST (127.0.0.1): the address the listener binds */
  host: string;
  /** APPS_DOMAIN (apps.<BASE_DOMAIN>): <slug>.<APPS_DOMAIN> is an app; the apps area reads the same variable */
  appsDomain: string;
  /** EDGE_ROUTE_TTL_MS (5000): how long a resolved route is trusted without a NOTIFY */
  routeTtlMs: number;
  /** EDGE_NEGATIVE_TTL_MS (2000): how long an unknown host stays unknown without a NOTIFY */
  negativeTtlMs: number;
  /** EDGE_UPSTREAM_TIMEOUT_MS (120000): an upstream silent this long is a 502 */
  upstreamTimeoutMs: number;
  /** EDGE_REQUEST_TIMEOUT_MS (300000): a client must have sent its whole request within this */
  requestTimeoutMs: number;
  /** EDGE_DRAIN_MS (10000): at shutdown, in-flight requests get this long before connections are cut */
  drainMs: number;
  /** EDGE_LOGIN_URL: where a visitor without a session is sent for owner-only apps (302 with ?next=); unset: 401 page */
  loginUrl: string | null;
  /** EDGE_STATIC_CACHE_MB (128): static sites' file contents kept in memory per edge process, in bytes */
  staticCacheBytes: number;
  /** EDGE_STATS_FLUSH_MS (10000): statistics are added to the store this often; a crash loses at most this much */
  statsFlushMs: number;
  /** EDGE_STATS_KEEP_DAYS (400): statistics older than this are pruned daily */
  statsKeepDays: number;
  /**
   * EDGE_METRICS (on|off, default on): the per-minute request series of pods, groups and sites (src/metrics). Off,
   * the edge keeps only its daily statistics (no minute rows, no per-request minute count): for an operator who
   * does not want the series, and for bench:events' on-against-off throughput.
   */
  minuteMetrics: boolean;
  /** EDGE_WAKE_TIMEOUT_MS (60000): a request to an idle-stopped app waits this long for its start, then 503 */
  wakeTimeoutMs: number;
  /**
   * EDGE_DATA_PLANE: "nginx" puts nginx with the Lua module on EDGE_PORT in front of the Node edge, which then
   * listens on loopback only (the default: about half the Node edge's CPU per answer, README); "node" keeps the Node
   * edge alone. Without nginx or its Lua module the Node edge serves alone whatever this says, and logs why with the
   * install command, so a fresh clone still serves (README "The nginx data plane").
   */
  dataPlane: "nginx" | "node";
}

type Env = Record<string, string | undefined>;

function onOff(env: Env, name: string): boolean {
  const v = (env[name] ?? "on").toLowerCase();
  if (v !== "on" && v !== "off") throw new ConfigError(name, `must be on or off, got "${env[name]}"`);
  return v === "on";
}

const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

export function edgeConfig(env: Env): EdgeConfig {
  const appsDomain = (env.APPS_DOMAIN || `apps.${env.BASE_DOMAIN || "localhost"}`).toLowerCase().replace(/\.$/, "");
  if (!DOMAIN.test(appsDomain)) throw new ConfigError("APPS_DOMAIN", `is not a domain name: "${appsDomain}"`);
  const host = env.EDGE_HOST || "127.0.0.1";
  if (!/^[\w.:-]{1,253}$/.test(host)) throw new ConfigError("EDGE_HOST", `is not an address: "${host}"`);
  const login = url(env, "EDGE_LOGIN_URL", ["http:", "https:"]);
  const loginUrl = login && new URL(login).toString();
  const port = int(env, "EDGE_PORT", 8081, 0, 65535);
  const dataPlane = env.EDGE_DATA_PLANE || "nginx";
  if (dataPlane !== "nginx" && dataPlane !== "node")
    throw new ConfigError("EDGE_DATA_PLANE", `must be nginx or node, got "${dataPlane}"`);
  return {
    port,
    // several processes on one machine with EDGE_PORT=0 (tests) must not fight over 8443 either
    tlsPort: env.EDGE_TLS_PORT === "off" ? null : int(env, "EDGE_TLS_PORT", port === 0 ? 0 : 8443, 0, 65535),
    host,
    appsDomain,
    routeTtlMs: int(env, "EDGE_ROUTE_TTL_MS", 5000, 0, 600_000),
    negativeTtlMs: int(env, "EDGE_NEGATIVE_TTL_MS", 2000, 0, 600_000),
    upstreamTimeoutMs: int(env, "EDGE_UPSTREAM_TIMEOUT_MS", 120_000, 100, 3_600_000),
    requestTimeoutMs: int(env, "EDGE_REQUEST_TIMEOUT_MS", 300_000, 0, 3_600_000),
    drainMs: int(env, "EDGE_DRAIN_MS", 10_000, 0, 600_000),
    loginUrl,
    staticCacheBytes: int(env, "EDGE_STATIC_CACHE_MB", 128, 1, 65536) * 1024 * 1024,
    statsFlushMs: int(env, "EDGE_STATS_FLUSH_MS", 10_000, 10, 3_600_000),
    statsKeepDays: int(env, "EDGE_STATS_KEEP_DAYS", 400, 90, 36_500),
    minuteMetrics: onOff(env, "EDGE_METRICS"),
    wakeTimeoutMs: int(env, "EDGE_WAKE_TIMEOUT_MS", 60_000, 100, 600_000),
    dataPlane,
  };
}

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** hostName's answers by Host header as sent: a handful of distinct values carry nearly every request */
const hostNames = new Map<string, string | null>();
const HOST_NAMES = 4096;

/** The host name a request asks for: lower case, without port and trailing dot; null when it is not a name. */
export function hostName(header: string | undefined): string | null {
  if (!header) return null;
  let name = hostNames.get(header);
  if (name === undefined) {
    name = parseHostName(header);
    if (hostNames.size >= HOST_NAMES) hostNames.clear();
    hostNames.set(header, name);
  }
  return name;
}

function parseHostName(header: string): string | null {
  let host = header.trim().toLowerCase();
  const colon = host.lastIndexOf(":");
  if (colon >= 0) {
    if (!/^\d{1,5}$/.test(host.slice(colon + 1))) return null; // IPv6 literals and junk name no app
    host = host.slice(0, colon);
  }
  if (host.endsWith(".")) host = host.slice(0, -1);
  return DOMAIN.test(host) ? host : null;
}

/** The app label of a host under the apps domain (`<label>.<APPS_DOMAIN>`, one label only), or null. */
export function appLabel(host: string, appsDomain: string): string | null {
  const suffix = `.${appsDomain}`;
  if (!host.endsWith(suffix)) return null;
  const label = host.slice(0, -suffix.length);
  return LABEL.test(label) ? label : null;
}
