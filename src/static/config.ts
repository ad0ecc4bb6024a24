import { int } from "../config/config.js";
import type { Db } from "../store/db.js";
import type { Kernel } from "../kernel/kernel.js";

/** The static area's settings (src/static/README.md). */
export interface StaticConfig {
  /** sites are served at <slug>.<APPS_DOMAIN> by the edge on EDGE_PORT (the site's `url`) */
  appsDomain: string;
  edgePort: number;
  /** STATIC_MAX_ARCHIVE_MB (100): an upload, and the files it unpacks to, at most this many bytes */
  maxBytes: number;
  /** STATIC_MAX_FILES (20000): files per deployment */
  maxFiles: number;
  /** STATIC_KEEP_DEPLOYMENTS (20): finalized deployments kept per site for rollback (the live one always) */
  keepDeployments: number;
  /** STATIC_ABANDONED_HOURS (24): a deployment never uploaded (or uploaded, never finalized: 7×) is deleted after this */
  abandonedHours: number;
}

export function staticConfig(env: Record<string, string | undefined>): StaticConfig {
  return {
    appsDomain: (env.APPS_DOMAIN || `apps.${env.BASE_DOMAIN || "localhost"}`).toLowerCase().replace(/\.$/, ""),
    edgePort: int(env, "EDGE_PORT", 8081, 0, 65535),
    // a file is one bytea value in the store (at most 1 GB)
    maxBytes: int(env, "STATIC_MAX_ARCHIVE_MB", 100, 1, 1000) * 1024 * 1024,
    maxFiles: int(env, "STATIC_MAX_FILES", 20_000, 1, 1_000_000),
    keepDeployments: int(env, "STATIC_KEEP_DEPLOYMENTS", 20, 1, 1000),
    abandonedHours: int(env, "STATIC_ABANDONED_HOURS", 24, 1, 24 * 365),
  };
}

/** What the area's services are built with. */
export interface StaticDeps {
  db: Db;
  kernel: Kernel;
  config: StaticConfig;
  /** where uploads are spooled and unpacked while they are checked (DATA_DIR/static-uploads) */
  workDir: string;
}
