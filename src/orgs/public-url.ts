import type { Config } from "../config/config.js";
import { ConfigError } from "../config/config.js";

/**
 * Where links to this platform point: PUBLIC_URL (e.g. https://console.example.com), else https://<BASE_DOMAIN>,
 * else (BASE_DOMAIN localhost) http://localhost:<PORT>. No trailing slash.
 */
export function publicBaseUrl(env: Record<string, string | undefined>, config: Pick<Config, "baseDomain" | "port">) {
  const raw = env.PUBLIC_URL;
  if (raw) {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw new ConfigError("PUBLIC_URL", "is not a valid URL");
    }
    if (u.protocol !== "https:" && u.protocol !== "http:") throw new ConfigError("PUBLIC_URL", "must be http(s)://");
    return `${u.origin}${u.pathname}`.replace(/\/+$/, "");
  }
  if (config.baseDomain === "localhost") return `http://localhost:${config.port}`;
  return `https://${config.baseDomain}`;
}
