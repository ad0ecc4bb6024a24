import { existsSync } from "node:fs";
import path from "node:path";
import { ConfigError, int, url } from "../config/config.js";

type Env = Record<string, string | undefined>;

/** The registry area's settings (README: src/registry/README.md). */
export interface RegistryConfig {
  /** the docker-registry binary (Debian package docker-registry) */
  bin: string;
  /** loopback port of the registry; 0: a free port chosen at start */
  port: number;
  /** the token endpoint clients are sent to; null: the area's own loopback endpoint */
  tokenRealm: string | null;
  /** lifetime of credentials from POST /v1/registry/credentials */
  credentialTtlSeconds: number;
  /** lifetime of the pull-only credentials the runtime gets for one deployment */
  pullTtlSeconds: number;
  /** APPS_ALLOW_LOCAL_IMAGES=1: `localhost/...` images (the host's local store) may be deployed */
  allowLocalImages: boolean;
}

/** A bare command name is looked up on PATH, as a shell would. */
function resolveBin(bin: string): string {
  if (bin.includes("/")) return path.resolve(bin);
  for (const dir of (process.env.PATH ?? "").split(":").filter(Boolean)) {
    const full = path.join(dir, bin);
    if (existsSync(full)) return full;
  }
  return bin;
}

export function registryConfig(env: Env): RegistryConfig {
  const allowLocal = env.APPS_ALLOW_LOCAL_IMAGES ?? "0";
  if (allowLocal !== "0" && allowLocal !== "1" && allowLocal !== "")
    throw new ConfigError("APPS_ALLOW_LOCAL_IMAGES", `must be 0 or 1, got "${allowLocal}"`);
  return {
    bin: resolveBin(env.REGISTRY_BIN || "docker-registry"),
    port: int(env, "REGISTRY_PORT", 5000, 0, 65535),
    tokenRealm: url(env, "REGISTRY_TOKEN_REALM", ["http:", "https:"]),
    credentialTtlSeconds: int(env, "REGISTRY_CREDENTIALS_TTL_SECONDS", 3600, 60, 7 * 86_400),
    pullTtlSeconds: int(env, "REGISTRY_PULL_TTL_SECONDS", 900, 60, 86_400),
    allowLocalImages: allowLocal === "1",
  };
}
